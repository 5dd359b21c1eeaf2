import PorticoAskEngine

extension Recognizer {
    /// Names with numbers in them ("City 42", "Windows 10") that are whole values come first,
    /// before the numbers are read as numbers.
    mutating func readNamesWithNumbers() {
        for length in stride(from: 4, through: 2, by: -1) {
            var i = 0
            while i + length <= t.count {
                defer { i += 1 }
                let span = t[i..<(i + length)]
                guard span.allSatisfy({ !$0.used && !$0.quoted }), span.first?.capitalized == true, span.contains(where: { $0.number != nil }) else {
                    continue
                }
                let entries = values.whole(ValueIndex.words(span.map(\.text).joined(separator: " ")))
                if !entries.isEmpty { take(i, length, .value(entries, phrase: span.map(\.text).joined(separator: " "), partial: false)) }
            }
        }
    }

    /// "a grade A", "in section B": a capital letter after a text column that holds it is its value,
    /// never the article.
    mutating func readCapitalLettersOfAColumn() {
        for i in t.indices.dropFirst() where !t[i].used && !t[i].quoted && (1...2).contains(t[i].text.count) && t[i].text.allSatisfy(\.isUppercase) {
            if let entries = valueOfATextColumnNamedBefore(i) { take(i, 1, .value(entries, phrase: t[i].text, partial: false)) }
        }
    }

    /// The terms' phrases come before anything else: the app's own words mean what it says
    /// they mean ("total sales" is a term, not a sum of a column named sales).
    mutating func readTermPhrases() {
        for phrase in schema.phrases {
            let n = phrase.words.count
            var i = 0
            while i + n <= t.count {
                defer { i += 1 }
                let matches = (0..<n).allSatisfy { k in
                    !t[i + k].used && !t[i + k].quoted && (t[i + k].lower == phrase.words[k] || Lexicon.forms(t[i + k].lower).contains(phrase.words[k]))
                }
                guard matches else { continue }
                switch phrase.meaning {
                case .column(let c): take(i, n, .columns([c]))
                case .filter(let f):
                    for k in i..<(i + n) { t[k].used = true }
                    filtersAt.append((f, i))
                }
            }
        }
    }

    /// "staff members", "faculty member": the rows of a table of people (named by a first and a last
    /// name) are its members; "team members" or "the members of the club" are not teams or clubs.
    mutating func readMembersOfPeople() {
        // name) are its members; "team members" or "the members of the club" are not teams or clubs.
        for k in t.indices.dropFirst() where ["member", "members"].contains(t[k].lower) && !t[k].used && !t[k - 1].used {
            if case .table(let people)? = schemaItem([t[k - 1].lower]), schema.tables[people].labels.count == 2,
                !schema.tables.contains(where: { $0.words.contains { Lexicon.forms(t[k].lower).contains($0) } })
            {
                t[k].used = true
            }
        }
    }

    /// "the number of rooms" for room_count, "the number of hosts" for num_hosts: a column that
    /// counts, named as a count.
    mutating func readCountingColumns() {
        for i in t.indices.dropLast(2) where t[i].lower == "number" && t[i + 1].lower == "of" && !t[i].used && !t[i + 2].used && !t[i + 2].quoted {
            // Not "the number of hosts" when hosts are a table's rows, nor "the number of affected regions",
            // nor under a grouping ("the number of matches in each season" counts matches).
            if t.contains(where: { ["each", "per", "every"].contains($0.lower) }) { continue }
            if case .table? = schemaItem([t[i + 2].lower]) { continue }
            if i + 3 < t.count, !t[i + 3].used, !Lexicon.stopWords.contains(t[i + 3].lower), t[i + 3].number == nil { continue }
            let counted = Lexicon.forms(t[i + 2].lower)
            let columns = schema.columnList.indices.filter { c in
                let words = schema.columnList[c].withoutTable ?? schema.columnList[c].words
                guard schema.columnList[c].kind == .number, !schema.columnList[c].isKey, words.count >= 2 else { return false }
                return (["count", "counts"].contains(words[words.count - 1]) && counted.contains(words[words.count - 2]))
                    || (["num", "no", "number"].contains(words[0]) && counted.contains(words[words.count - 1]))
            }
            // Of a table the question names, when it names one.
            let named = tablesNamed(by: t)
            let own = named.isEmpty ? columns : columns.filter { named.contains(schema.columnList[$0].table) }
            if !own.isEmpty { take(i, 3, .columns(own)) }
        }
    }
    /// Values written as names (capitalized or quoted) and schema names, longest first.
    mutating func readValuesAndNames() {
        var typoLookups = Interpreter.maxTypoLookups
        // The columns one word names, looked up once a word (a capitalized phrase asks for the word before it).
        var namedAt: [Int: Set<Int>] = [:]
        func columnsNamedAt(_ b: Int) -> Set<Int> {
            if let known = namedAt[b] { return known }
            var found = Set<Int>()
            switch schemaItem([t[b].lower]) {
            case .columns(let cs)?: found = Set(cs)
            case .table(let named)?: found = Set(schema.tables[named].columns)
            default: break
            }
            namedAt[b] = found
            return found
        }
        for length in stride(from: 4, through: 1, by: -1) {
            var i = 0
            while i + length <= t.count {
                defer { i += 1 }
                let span = t[i..<(i + length)]
                guard span.allSatisfy({ !$0.used && !$0.quoted && $0.number == nil }) else { continue }
                guard let first = span.first, let last = span.last, !Lexicon.stopWords.contains(first.lower), !Lexicon.stopWords.contains(last.lower)
                else { continue }
                let words = span.map(\.lower)
                let named = span.allSatisfy { $0.capitalized || Lexicon.stopWords.contains($0.lower) } && span.contains { $0.capitalized }
                // The column named just before the phrase ("the appellation Sonoma County").
                var b = i - 1
                while b >= 0, ["the", "a", "an"].contains(t[b].lower) { b -= 1 }
                let columnsNamed = b >= 0 ? columnsNamedAt(b) : []
                if named,
                    let item = valueItem(words, text: span.map(\.text).joined(separator: " "), named: true, typos: &typoLookups, columnsNamed: columnsNamed)
                {
                    take(i, length, item)
                    continue
                }
                if length == 1, saysWhereAValueIs(at: i) {
                    t[i].used = true
                    continue
                }
                if let item = schemaItem(words) {
                    if length == 1, words[0].hasSuffix("ed") || Lexicon.irregularParticiples.contains(words[0]), case .columns(let cs) = item,
                        cs.allSatisfy({ schema.column($0).kind == .date || schema.column($0).isYear })
                    {
                        take(i, 1, .dateVerb(cs))
                    } else {
                        take(i, length, item)
                    }
                    continue
                }
                if let item = valueItem(words, text: span.map(\.text).joined(separator: " "), named: named, typos: &typoLookups, columnsNamed: columnsNamed) {
                    // "the star rating of each hotel", where 'star' is a star_rating_description: words of
                    // the column's own name, not its value.
                    // ("good and bad customers", where Customers is a table, are of its rows).
                    if !named, case .value(let entries, _, _) = item, i + length < t.count, case let next = Lexicon.forms(t[i + length].lower),
                        schemaItem([t[i + length].lower]).map({ if case .table = $0 { false } else { true } }) ?? true,
                        entries.allSatisfy({ e in
                            let name = schema.column(e.column).words
                            return words.allSatisfy(name.contains) && name.contains(where: next.contains)
                        })
                    {
                        continue
                    }
                    take(i, length, item)
                }
            }
        }
    }

    /// "campuses that are located in the county of Los Angeles", "stores situated at the harbour": a
    /// participle after "are" and before a preposition of place, which names a column only as the noun
    /// made from it (Location), says where the value after it is; the value, or the column named after
    /// it, says so itself, so it is no column to show. Not at the end ("Where is the store located
    /// in?"), where it asks for that column.
    func saysWhereAValueIs(at i: Int) -> Bool {
        let w = t[i].lower
        guard w.hasSuffix("ed"), i > 0, ["are", "is", "was", "were", "be", "been"].contains(t[i - 1].lower), i + 2 < t.count,
            ["in", "at", "on", "near", "within", "inside"].contains(t[i + 1].lower), t[i + 2].lower.contains(where: \.isLetter) || t[i + 2].quoted,
            t[i + 2].number == nil, case .columns? = schemaItem([w])
        else { return false }
        return !schema.columnList.contains { $0.words.contains(w) } && !schema.tables.contains { $0.words.contains(w) }
    }

    /// "Which employee was hired first?", "the album released last": "first" or "last" after a
    /// verb of a date, ending its phrase, is its earliest or latest.
    mutating func readFirstOrLastOfADate() {
        for i in t.indices.dropFirst() where !t[i].used && ["first", "last"].contains(t[i].lower) {
            let dated = items.contains { at, item in
                if case .dateVerb = item { at == i - 1 } else { false }
            }
            guard dated, i + 1 == t.count || t[i].beforeComma || Lexicon.stopWords.contains(t[i + 1].lower) else { continue }
            take(i, 1, .superlative(descending: t[i].lower == "last", word: t[i].lower == "first" ? "earliest" : "latest"))
        }
    }

    /// "more than one competition", "the most records": a word after a number or a count that
    /// ends the name of one table (farm_competition, pilot_record) counts its rows.
    mutating func readCountedTables() {
        for i in t.indices where !t[i].used && !t[i].quoted && t[i].number == nil {
            guard countedAt(i), let table = endingOneTable(i) else { continue }
            take(i, 1, .table(table))
        }
    }

    /// "the amenities of a dorm" for Dorm_amenity, "tourist attractions" for Tourist_Attractions: a
    /// word left over that ends the name of one table of things (not one that only links others).
    mutating func readWordsEndingATable() {
        for i in t.indices where !t[i].used && !t[i].quoted && t[i].number == nil && !Lexicon.stopWords.contains(t[i].lower) {
            let ending = tablesEnding(i).filter { !schema.linksOnly($0) }
            if ending.count == 1 {
                take(i, 1, .table(ending[0]))
                continue
            }
            // "the users" for user_profiles, "the members" for Member_of_club: a plural left over whose
            // singular starts the name of one table of things, when none ends with it (not a verb such
            // as "play" for Plays_Games).
            let starting = schema.tables.indices.filter { table in
                guard schema.tables[table].words.count > 1, let first = schema.tables[table].words.first, !schema.linksOnly(table) else { return false }
                // The word itself when the name's first word is no verb ("the user" for user_profiles), and
                // no modifier of a table named after it ("available services").
                if t[i].lower == first {
                    let modifies = i + 1 < t.count && schemaItem([t[i + 1].lower]).map { if case .table = $0 { true } else { false } } == true
                    let determined = i > 0 && ["the", "a", "an", "all", "each", "every"].contains(t[i - 1].lower)
                    return !first.hasSuffix("s") && !modifies && determined
                }
                return t[i].lower.hasSuffix("s") && Lexicon.forms(t[i].lower).dropFirst().contains(first)
            }
            if ending.isEmpty, starting.count == 1 { take(i, 1, .table(starting[0])) }
        }
    }

    /// Keys named after a table ("Competition_ID", "Event_ID") read after a number: the table's rows
    /// ("how many allergies" may count the values of a key).
    mutating func readCountedKeysAsTables() {
        for j in items.indices {
            guard case .columns(let cs) = items[j].1, cs.allSatisfy({ schema.column($0).isKey }), !t[items[j].0].quoted,
                !items.contains(where: { $0.0 == items[j].0 + 1 }) && (items[j].0 + 1 >= t.count || !t[items[j].0 + 1].used),
                case .number? = items.filter({ $0.0 < items[j].0 }).max(by: { $0.0 < $1.0 })?.1, let table = endingOneTable(items[j].0)
            else { continue }
            items[j].1 = .table(table)
        }
    }

    /// Money words left over stand for the measure of a sale.
    mutating func readMoneyWords() {
        for i in t.indices where !t[i].used && Lexicon.moneyWords.contains(t[i].lower) { take(i, 1, .money) }
    }

    /// "tracks never sold", "customers who have not bought anything": a verb of trade after a
    /// negation names the rows of the sales that would hold the rows named before it, the one
    /// table nearest them that points at them and keeps an amount (a price and a quantity, or a
    /// total); read as that table, the negation reads "none of them".
    mutating func readTradeAfterNegation() {
        for (at, item) in items where item == .negation {
            var j = at + 1
            while j < t.count, !t[j].used, ["been", "be", "ever", "yet", "once"].contains(t[j].lower) { j += 1 }
            guard j < t.count, !t[j].used, Lexicon.tradeVerbs.contains(t[j].lower),
                let rows = items.filter({ $0.0 < at }).compactMap({ if case .table(let table) = $0.1 { table } else { nil } }).last,
                let sales = salesTable(of: rows)
            else { continue }
            take(j, 1, .table(sales))
            // "never bought anything": of the sales, any.
            if j + 1 < t.count, !t[j + 1].used, ["anything", "any"].contains(t[j + 1].lower), j + 2 == t.count || !t[j + 2].lower.allSatisfy(\.isLetter) {
                t[j + 1].used = true
            }
        }
    }

    /// The one table nearest `rows` whose rows point at them, directly or through one table, and
    /// keep an amount; `nil` when none or two at the same distance.
    func salesTable(of rows: Int) -> Int? {
        let amounts = schema.tables.indices.filter { $0 != rows && interpreter.amount(of: $0) != nil }
        for hops in 1...2 {
            let near = amounts.filter { t in
                hops == 1
                    ? schema.edges.contains { $0.from == t && $0.to == rows }
                    : schema.edges.contains { e in e.from == t && schema.edges.contains { $0.from == e.to && $0.to == rows } }
            }
            if near.count == 1 { return near[0] }
            if near.count > 1 { return nil }
        }
        return nil
    }

    /// "campuses opened in 1958", "churches founded before 1850": a verb of beginning that names
    /// nothing, before a year, is of the one year or date column of the tables the question named
    /// (of any table when it names none); a birth or death date is no beginning of a place.
    mutating func readBeginningVerbs() {
        for i in t.indices.dropLast(2) where !t[i].used && Lexicon.beginningVerbs.contains(t[i].lower) {
            guard ["in", "before", "after", "since", "between"].contains(t[i + 1].lower),
                items.contains(where: { at, item in
                    guard (i + 1...i + 4).contains(at) else { return false }
                    switch item {
                    case .year: return true
                    case .number(let n, nil): return (1000...2100).contains(n)
                    default: return false
                    }
                })
            else { continue }
            let named = Set(items.compactMap { if case .table(let table) = $0.1 { table } else { nil } })
            let dated = schema.columnList.indices.filter { c in
                let column = schema.column(c)
                return (named.isEmpty || named.contains(column.table)) && (column.mayBeYear || column.kind == .date)
                    && !column.words.contains(where: { ["birth", "born", "death", "died", "dob"].contains($0) })
            }
            if dated.count == 1 { take(i, 1, .dateVerb(dated)) }
        }
    }

    /// "When was the document stored?", "When did the school open?": the date the verb
    /// names is shown, else the one date or year column of the tables the question names.
    mutating func readWhen() {
        if let w = t.indices.first(where: { t[$0].lower == "when" && !t[$0].used }), w == 0 || t[w].text.first?.isUppercase == true {
            let named = Set(items.compactMap { if case .table(let table) = $0.1 { table } else { nil } })
            let schema = self.schema
            let dates = { (cs: [Int]) in cs.allSatisfy { schema.column($0).isYear || schema.column($0).kind == .date } }
            let verbs = items.indices.filter { if case .dateVerb = items[$0].1 { true } else { false } }
            if verbs.count == 1, let d = verbs.first, case .dateVerb(let cs) = items[d].1 {
                items.remove(at: d)
                take(w, 1, .columns(cs))
            } else if items.contains(where: { if case .columns(let cs) = $0.1 { dates(cs) } else { false } }) {
                // "when is the hire date", "When did she become a customer" (date_became_customer): said already.
                t[w].used = true
            } else if !named.isEmpty, !items.contains(where: { if case .columns = $0.1 { true } else { false } }) {
                let dated = schema.columnList.indices.filter { c in
                    named.contains(schema.column(c).table) && (schema.column(c).isYear || schema.column(c).kind == .date)
                }
                if dated.count == 1 { take(w, 1, .columns(dated)) }
            }
        }
    }

    /// A filter names its table when the question does not ("how many VIPs").
    mutating func nameFilteredTables() {
        for (f, at) in filtersAt {
            let table = schema.filters[f].table
            if !items.contains(where: { $0.1 == .table(table) }) { items.append((at, .table(table))) }
        }
    }

    /// "students who registered for course 301", "the flight with number 99": a whole number right
    /// after a table named in the singular, at the end of its phrase, is the table's numeric key.
    mutating func readNumericKeys() {
        for (j, (at, item)) in items.enumerated() {
            guard case .number(let n, nil) = item, n == n.rounded(), n >= 0, !t[at].quoted,
                at + 1 == t.count || t[at].beforeComma || ["and", "or", "in", "for", "of", "with", "that", "who", "which"].contains(t[at + 1].lower),
                let (before, previous) = items.filter({ $0.0 < at }).max(by: { $0.0 < $1.0 }), case .table(let table) = previous,
                case let between = t[(before + 1)..<at].map(\.lower), between.allSatisfy(["with", "number", "#"].contains),
                !between.contains("with") || between.count > 1, items.filter({ $0.0 == at }).count == 1,
                // One of them, named in the singular ("teams 7" says nothing of a key).
                case let noun = t[at - 1 - between.count].lower, !noun.hasSuffix("s") || noun.hasSuffix("ss"),
                let key = schema.tables[table].primaryKey, schema.column(key).kind == .number,
                // Not when another column numbers the rows ("room 111" of a room_number beside room_id).
                !schema.tables[table].columns.contains(where: { c in
                    c != key && schema.column(c).words.contains { ["number", "no", "num", "nbr"].contains($0) }
                })
            else { continue }
            items.remove(at: j)
            for k in (before + 1)..<at { t[k].used = true }
            items += [(at, .columns([key])), (at, item)]
            break
        }
    }

    /// "rooms with a king bed", where King is a bedType: the word after the value is its column's,
    /// not another column it also names (beds).
    mutating func dropColumnsNamedAfterAValue() {
        let (read, t, schema) = (items, t, schema)
        items.removeAll { at, item in
            // A column of numbers only ("the total number of king beds" is their sum).
            guard case .columns(let cs) = item, at > 0, !t[at].quoted, cs.allSatisfy({ schema.column($0).kind == .number }),
                let value = read.first(where: { $0.0 == at - 1 }), case .value(let entries, _, false) = value.1,
                !entries.contains(where: { cs.contains($0.column) }),
                !read.contains(where: { a, i in
                    guard a < at else { return false }
                    if case .function = i { return true }
                    return i == .count || i == .average
                })
            else { return false }
            let forms = Lexicon.forms(t[at].lower)
            return entries.allSatisfy { e in schema.column(e.column).words.contains(where: forms.contains) }
        }
    }

    // MARK: - Tables named by a word

    /// The tables of more than one word whose name ends with the word at `i` (not a type, kind,
    /// category, code or status of something).
    func tablesEnding(_ i: Int) -> [Int] {
        schema.tables.indices.filter { table in
            guard schema.tables[table].words.count > 1, let last = schema.tables[table].words.last,
                !Lexicon.forms(last).contains(where: ["type", "kind", "category", "code", "status"].contains)
            else { return false }
            return Lexicon.matches(question: t[i].lower, schema: last)
        }
    }
    func endingOneTable(_ i: Int) -> Int? {
        let ending = tablesEnding(i)
        return ending.count == 1 ? ending[0] : nil
    }
    func countedAt(_ i: Int) -> Bool {
        items.filter({ $0.0 < i }).max(by: { $0.0 < $1.0 })?.1.isCountedBefore ?? false
    }
}

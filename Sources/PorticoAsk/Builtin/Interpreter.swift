/// Reads a question against a schema and its values and builds the query it asks for, with how
/// sure it is; or says what it did not understand. Rules are about kinds of questions (counts,
/// sums, groupings, rankings, filters, joins), never about one database's names.
struct Interpreter {
    let schema: SchemaModel
    let values: ValueIndex
    /// Columns the asker chose when asked back: a word or value that names several columns means these.
    var chosen: Set<Int> = []

    struct Understood: Sendable {
        var plan: QueryPlan
        var confidence: Double
        var title: String
        /// The question's parts as read, for `risks(of:items:joined:)`.
        var items: [Item] = []
        /// Whether the question changed the one before it ("and in 2024?"), whose parts still count.
        var followsUp = false
        /// The question's words, lowercased, for the risks that turn on one ("total").
        var words: Set<String> = []
        /// Words the reading gave no part, lowercased ("type" in "each type of product").
        var unread: Set<String> = []
        /// Whether a word of the question was read as the schema's word one letter away ("deparment").
        var respelt = false
        /// Whether a word of the question was read as the schema's word the lexicon links it to.
        var linked = false
    }

    struct NotUnderstood: Error, Sendable {
        let message: String
    }

    typealias Item = QuestionReader.Item

    /// Bounds on the work one question can cause: its words are matched against every column
    /// name, and a misspelt name against every value.
    static let maxWords = 60
    static let maxTypoLookups = 4

    /// Below this, the engine refuses rather than guess.
    static let threshold = 0.6

    /// "the locations shared by more than two wrestlers", "the industry shared by the most companies":
    /// values held by a number of rows, said as "with"; not "shared by cities above 1500 and cities
    /// under 500", values common to two groups, which is not read.
    static func sharedByACount(at i: Int, of tokens: [QuestionReader.Token]) -> Bool {
        guard Lexicon.sharedWords.contains(tokens[i].lower), i + 2 < tokens.count, tokens[i + 1].lower == "by" else { return false }
        let j = tokens[i + 2].lower == "the" ? i + 3 : i + 2
        guard j < tokens.count else { return false }
        let next = tokens[j]
        return next.number != nil || Lexicon.numberWords[next.lower] != nil
            || ["more", "fewer", "less", "most", "greatest", "largest", "highest", "fewest", "least"].contains(next.lower)
            || next.lower == "at" && j + 1 < tokens.count && ["least", "most"].contains(tokens[j + 1].lower)
    }

    /// "papers written by …", "phones produced by …": a verb in the passive, its doer named after
    /// "by", says only that the two are linked, which the schema's keys or the value found say
    /// better. Not a verb that negates ("unaffected by").
    /// Not a verb that groups or orders ("categorized by department", "ranked by salary"), nor a
    /// word that only ends like a participle ("then", "Sweden"), nor one whose "by" names a column
    /// alone ("paid by department": a grouping).
    func isPassiveVerb(at i: Int, of tokens: [QuestionReader.Token]) -> Bool {
        let t = tokens[i]
        guard i + 1 < tokens.count, tokens[i + 1].lower == "by", !t.quoted, !t.capitalized, t.number == nil, !t.lower.hasPrefix("un"),
            !Lexicon.sharedWords.contains(t.lower), !Lexicon.groupingParticiples.contains(t.lower), !Lexicon.notParticiples.contains(t.lower)
        else { return false }
        guard t.lower.hasSuffix("ed") || t.lower.hasSuffix("en") || Lexicon.irregularParticiples.contains(t.lower) else { return false }
        // The doer: a table's rows or a name, not a column to group by.
        let j = Self.pastArticles(from: i + 2, in: tokens)
        guard j < tokens.count else { return false }
        // "used by grade 4": a column with its value is a doer too.
        let valued = j + 1 < tokens.count && (tokens[j + 1].number != nil || tokens[j + 1].capitalized || tokens[j + 1].quoted)
        if case .columns? = schemaItem([tokens[j].lower]), !tokens[j].capitalized, !tokens[j].quoted, !valued { return false }
        return true
    }

    /// `text` with each whole word `word` (a run of letters equal to it) replaced by `new`.
    static func replacingWord(_ word: String, with new: String, in text: String) -> String {
        var out = ""
        var run = ""
        for character in text + " " {
            if character.isLetter {
                run.append(character)
                continue
            }
            out += run == word ? new : run
            run = ""
            out.append(character)
        }
        return String(out.dropLast())
    }

    /// "drivers who once had a lap time under 93000", "the dates when the temperature was above 85":
    /// "once" (not "more than once") and "when" after a word of time say nothing the rest does not.
    static func addsNothing(at i: Int, of tokens: [QuestionReader.Token]) -> Bool {
        let before = i > 0 ? tokens[i - 1].lower : ""
        switch tokens[i].lower {
        case "once": return !["than", "least", "most"].contains(before)
        case "when": return ["date", "dates", "day", "days", "year", "years", "month", "months", "time", "times"].contains(before)
        default: return false
        }
    }

    /// "the snatch score" of Snatch, "the enrollment size" of Enrollment, "the phone numbers" of
    /// customer_phone: a word for a measure just after a column's name says nothing more.
    func namesItsColumnAgain(at i: Int, of tokens: [QuestionReader.Token]) -> Bool {
        let numeric = ["score", "scores", "size", "sizes", "value", "values", "amount", "amounts", "figure", "figures", "level", "levels"]
        let word = tokens[i].lower
        guard i > 0, numeric.contains(word) || ["number", "numbers"].contains(word) else { return false }
        for n in 1...min(3, i) {
            // Not after a function ("the average total score" of Total is no measure of it).
            guard tokens[i - n].used, !tokens[i - n].quoted, tokens[i - n].number == nil,
                !Lexicon.functionWords.contains(tokens[i - n].lower)
            else { return false }
            guard case .columns(let cs)? = schemaItem(tokens[(i - n)..<i].map(\.lower)) else { continue }
            return cs.allSatisfy { c in
                let column = schema.column(c)
                return !column.isKey && (numeric.contains(word) ? column.kind == .number : column.kind == .text && !column.words.contains("number"))
            }
        }
        return false
    }

    /// The age columns of the tables the question names ("students 18 years old"): never another
    /// table's ("departments 100 years old" is no head's age).
    func agesOfNamedTables(_ tokens: [QuestionReader.Token]) -> [Int] {
        tablesNamed(by: tokens).sorted().compactMap(ageColumn(in:))
    }

    /// The tables single words of the question name.
    func tablesNamed(by tokens: [QuestionReader.Token]) -> Set<Int> {
        Set(tokens.compactMap { token -> Int? in if case .table(let t)? = schemaItem([token.lower]) { t } else { nil } })
    }

    /// The first position from `j` past "the", "a" and "an".
    static func pastArticles(from j: Int, in tokens: [QuestionReader.Token]) -> Int {
        var j = j
        while j < tokens.count, ["the", "a", "an"].contains(tokens[j].lower) { j += 1 }
        return j
    }

    /// Whether the linking verb at `i` has what it links to: something read after it ("played for
    /// teams"), a preposition ("the elections they participated in") or a name just before it ("the
    /// college that Charles attends"); "pupils who play" has none.
    static func linksSomething(at i: Int, of tokens: [QuestionReader.Token]) -> Bool {
        // Its object soon after it, a preposition, or a name before it.
        let object = tokens[(i + 1)..<min(tokens.count, i + 4)].contains { $0.used && !Lexicon.stopWords.contains($0.lower) }
        let preposition = i + 1 < tokens.count && ["in", "at", "for", "on", "to", "with"].contains(tokens[i + 1].lower)
        let name = i > 0 && tokens[i - 1].used && (tokens[i - 1].capitalized || tokens[i - 1].quoted)
        return object || preposition || name
    }

    func interpret(_ question: String, previous: QueryPlan? = nil, respelling: Bool = true) throws(NotUnderstood) -> Understood {
        var reader = QuestionReader(question)
        guard reader.tokens.count <= Self.maxWords else {
            throw NotUnderstood(message: "the built-in engine reads questions of at most \(Self.maxWords) words; ask a shorter one")
        }
        if reader.isForeign {
            throw NotUnderstood(message: "the built-in engine reads questions in English only; ask in English or configure an LLM with `portico llm add`")
        }
        if let write = reader.tokens.first(where: { Lexicon.writeVerbs.contains($0.lower) && !$0.quoted }) {
            throw NotUnderstood(message: "'\(write.text)' asks to change data; questions only read it, and nothing was run")
        }
        var items = try correspondingAsEach(
            differentAsEach(
                listedThenEach(
                    countRestated(
                        mostCommonAsCount(
                            superlativesListedWithFunctions(keyThenItsColumn(tablesListedAsKeysOfTheirOwner(mostOfAKeyAsRows(try recognize(&reader))))))
                    ))))
        // What the asker chose narrows a word or a value that names several columns to the one meant.
        if !chosen.isEmpty {
            items = items.map { item in
                switch item {
                case .columns(let cs) where cs.count > 1 && cs.contains(where: chosen.contains):
                    return .columns(cs.filter(chosen.contains))
                case .value(let entries, let phrase, let partial) where entries.contains(where: { chosen.contains($0.column) }):
                    return .value(entries.filter { chosen.contains($0.column) }, phrase: phrase, partial: partial)
                default:
                    return item
                }
            }
        }
        // Words of the column a value was found in say nothing more ("a First class seat", seat_class = 'First').
        let valueColumnWords = Set(
            items.flatMap { item -> [String] in
                switch item {
                case .value(let entries, _, _): return entries.flatMap { schema.column($0.column).words }
                // "products in the category 'Spices'": a quoted value's column too.
                case .text(let text): return values.whole(ValueIndex.words(text)).flatMap { schema.column($0.column).words }
                default: return []
                }
            })
        let tokens = reader.tokens
        let unknownAt = tokens.indices.filter { i in
            let t = tokens[i]
            // "US" is a name written in capitals, not the word "us" (a first word is only shouted: "IN which year").
            let acronym = i > 0 && t.text.count >= 2 && t.text.allSatisfy(\.isUppercase)
            // "the names and types of the dorms": a kind listed among the columns asked for is one of them.
            let listed =
                ["type", "types", "kind", "kinds"].contains(t.lower)
                && (i > 1 && tokens[i - 1].lower == "and" && tokens[i - 2].used || i > 0 && tokens[i - 1].beforeComma && tokens[i - 1].used)
                && (i + 1 == tokens.count || t.beforeComma || ["of", "for"].contains(tokens[i + 1].lower))
            if !t.used && listed { return true }
            return !t.used && (!Lexicon.stopWords.contains(t.lower) || acronym) && !Lexicon.softWords.contains(t.lower)
                && !Lexicon.forms(t.lower).contains(where: valueColumnWords.contains) && !isPassiveVerb(at: i, of: tokens)
                && !(Lexicon.linkingVerbs.contains(t.lower) && Self.linksSomething(at: i, of: tokens)) && !Self.addsNothing(at: i, of: tokens)
                && !Self.sharedByACount(at: i, of: tokens) && !namesItsColumnAgain(at: i, of: tokens)
        }
        let unknown = unknownAt.map { tokens[$0] }
        if !unknown.isEmpty {
            // "the deparment names": a word one letter off a word of the schema's names, when every
            // word not understood is one, is read as that word.
            let quoted = tokens.filter(\.quoted).map(\.lower)
            let respelt =
                respelling && !unknown.contains(where: { word in quoted.contains { $0.contains(word.lower) } })
                ? schemaWords(respelling: unknown.map(\.lower)) : nil
            if let respelt {
                var text = question
                for (token, word) in zip(unknown, respelt) { text = Self.replacingWord(token.text, with: word, in: text) }
                var understood = try interpret(text, previous: previous, respelling: false)
                understood.respelt = true
                return understood
            }
            // Words the schema does not use, read as the schema's words the English lexicon links them to.
            let linking = unknownAt.map { i in
                LinkedWord(word: tokens[i].lower, next: i + 1 < tokens.count ? tokens[i + 1].lower : nil)
            }
            if respelling, !unknown.contains(where: \.quoted), let linked = schemaWords(linking: linking, in: tokens.map(\.lower)) {
                var text = question
                for (token, word) in zip(unknown, linked) { text = Self.replacingWord(token.text, with: word, in: text) }
                if var understood = try? interpret(text, previous: previous, respelling: false) {
                    understood.linked = true
                    return understood
                }
            }
            let words = unknown.map { "'\($0.text)'" }.joined(separator: ", ")
            throw NotUnderstood(
                message: "the built-in engine did not understand \(words): name a table or column of the datasource (datasource_describe lists them), "
                    + "rephrase, or configure an LLM with `portico llm add`")
        }
        var understood: Understood
        if let previous, isFollowUp(items, reader) {
            understood = try followUp(previous, items)
            understood.followsUp = true
        } else {
            understood = try assemble(items)
            // "all the information about the department Marketing", "all the data from the products":
            // every column of the rows listed.
            let plan = understood.plan
            let tokens = reader.tokens
            let everything = tokens.indices.contains { i in
                guard !tokens[i].used else { return false }
                if ["information", "info", "details"].contains(tokens[i].lower) { return true }
                // "all the data from the products", not "all the data analysts".
                let ends = i + 1 == tokens.count || ["from", "of", "about", "for", "on", "in"].contains(tokens[i + 1].lower)
                return tokens[i].lower == "data" && ends
                    && (i >= 1 && tokens[i - 1].lower == "all" || i >= 2 && tokens[i - 2].lower == "all" && tokens[i - 1].lower == "the")
            }
            if everything, plan.measures.isEmpty,
                plan.grouping == nil, !plan.countGroups
            {
                understood.plan.shown = schema.tables[plan.root].columns
                understood.plan.distinct = false
            }
            // "Show all majors": one attribute listed (not what names a row, nor a row's own text)
            // is the set of its values.
            if plan.measures.isEmpty, plan.grouping == nil, !plan.countGroups, plan.limit == nil, plan.order.isEmpty, plan.shown.count == 1,
                plan.conditions.isEmpty, let c = plan.shown.first, schema.column(c).kind == .text, !schema.column(c).isKey,
                !schema.tables[schema.column(c).table].labels.contains(c), !schema.column(c).isFreeText
            {
                understood.plan.distinct = true
            }
        }
        // "films by each studio" with nothing to compute per studio: rows listed under a grouping
        // would show one arbitrary row of each group.
        if case .column(let g)? = understood.plan.grouping, understood.plan.measures.isEmpty, !understood.plan.countGroups,
            understood.plan.shown.contains(where: { $0 != g })
        {
            throw NotUnderstood(
                message:
                    "the built-in engine could not tell what to give for each \(schema.column(g).words.joined(separator: " ")); name a count, a total or an average"
            )
        }
        // "Where is the history department?": a place is asked for; an answer without one is no answer.
        if reader.tokens.contains(where: { $0.text == "Where" && !$0.capitalized }) {
            let plan = understood.plan
            let places = plan.shown + (plan.grouping.map { g in if case .column(let c) = g { [c] } else { [] } } ?? [])
            guard places.contains(where: { c in schema.column(c).words.contains(where: Lexicon.placeWords.contains) }) else {
                throw NotUnderstood(message: "the built-in engine could not tell which column says where; name it (datasource_describe lists them)")
            }
        }
        // "locations with both shops opened after 2012 and shops opened before 2008": two groups of rows
        // meeting in one value, not one row meeting both conditions; the engine would read the latter.
        if reader.tokens.contains(where: { $0.lower == "both" }) {
            let onRows = understood.plan.conditions.filter { condition in
                switch condition {
                case .compare(.column(let c), _, _), .oneOf(let c, _), .like(let c, _), .notLike(let c, _): schema.column(c).table == understood.plan.root
                default: false
                }
            }
            if onRows.count >= 2 {
                throw NotUnderstood(message: "the built-in engine does not read 'both … and …' over the same rows; ask for each group in a question of its own")
            }
        }
        // "How much is the track X?": an amount is asked for; a name is no answer.
        let lowered = reader.tokens.map(\.lower)
        if zip(lowered, lowered.dropFirst()).contains(where: { $0 == "how" && $1 == "much" }) {
            let plan = understood.plan
            guard !plan.measures.isEmpty || plan.shown.contains(where: { schema.column($0).kind == .number && !schema.column($0).isKey }) else {
                throw NotUnderstood(message: "the built-in engine could not tell which amount 'how much' asks for; name the column")
            }
        }
        // The terms' filters hold whatever else the question asks.
        for f in reader.namedFilters where !understood.plan.conditions.contains(.named(f)) { understood.plan.conditions.append(.named(f)) }
        understood.items = items
        understood.words = Set(reader.tokens.map(\.lower))
        understood.unread = Set(reader.tokens.filter { !$0.used && !$0.quoted }.map(\.lower))
        return understood
    }

    /// "the chip model and screen mode of the phone", where chip_model and screen_mode are tables
    /// and the phone's keys to them are named the same: tables listed right before the table they
    /// are of are its columns.
    func tablesListedAsKeysOfTheirOwner(_ items: [Item]) -> [Item] {
        var items = items
        for k in items.indices {
            guard case .table(let owner) = items[k], k >= 2 else { continue }
            var listed: [(Int, Int)] = []
            var j = k - 1
            while j >= 0, case .table(let t) = items[j] {
                let key = schema.tables[owner].columns.first { c in
                    schema.column(c).references == t && schema.column(c).words == schema.tables[t].words
                }
                guard let key else { break }
                listed.append((j, key))
                j -= 1
            }
            // Two or more, as a list: one table before another is as likely what the other is of.
            guard listed.count >= 2 else { continue }
            for (at, key) in listed { items[at] = .columns([key]) }
        }
        return items
    }

    /// "the winning aircraft name": a key to another table named right before a word that names a
    /// column of that table (and others) is that table's column, reached through the key.
    func keyThenItsColumn(_ items: [Item]) -> [Item] {
        var items = items
        func target(_ k: Int) -> Int? {
            guard case .columns(let keys) = items[k] else { return nil }
            let targets = Set(keys.compactMap { schema.column($0).references })
            return targets.count == 1 ? targets.first : nil
        }
        /// A name asked of a table with no name column: what names its rows ("the winning aircraft name").
        let tablesNamed = Set(items.compactMap { if case .table(let t) = $0 { t } else { nil } })
        /// `keys` of a table the question names that also owns one of the names: the name is that table's, beside
        /// its key ("the name and aircraft id of each pilot"), not the name of what the key points at.
        func siblings(_ cs: [Int], _ keys: [Int]) -> Bool {
            keys.contains { key in
                let owner = schema.column(key).table
                return tablesNamed.contains(owner) && cs.contains { schema.column($0).table == owner }
            }
        }
        func names(_ cs: [Int], of target: Int) -> [Int]? {
            guard cs.allSatisfy({ schema.column($0).words == ["name"] }), !cs.contains(where: { schema.column($0).table == target }),
                !schema.tables[target].labels.isEmpty
            else { return nil }
            return schema.tables[target].labels
        }
        for k in items.indices.dropLast() {
            if let target = target(k), case .columns(let cs) = items[k + 1] {
                let own = cs.filter { schema.column($0).table == target }
                if !own.isEmpty, own.count < cs.count {
                    items[k + 1] = .columns(own)
                } else if case .columns(let keys) = items[k], !siblings(cs, keys), let labels = names(cs, of: target) {
                    items[k + 1] = .columns(labels)
                }
            } else if case .columns(let cs) = items[k], let target = target(k + 1), case .columns(let keys) = items[k + 1], !siblings(cs, keys),
                let labels = names(cs, of: target)
            {
                // "the name of the winning aircraft".
                items[k] = .columns(labels)
            }
        }
        return items
    }

    /// "the highest, lowest and average GPA", "the highest and lowest salary": a highest and a lowest
    /// listed together (with functions or not) are the maximum and the minimum, not a ranking; "the
    /// highest average salary" stays a ranking of averages.
    func superlativesListedWithFunctions(_ items: [Item]) -> [Item] {
        let extremes = ["highest", "lowest", "largest", "smallest", "greatest", "maximum", "minimum"]
        func listed(_ item: Item) -> Bool {
            switch item {
            case .function, .average: true
            case .superlative(_, let word): extremes.contains(word)
            default: false
            }
        }
        var items = items
        var k = 0
        while k < items.count {
            guard listed(items[k]) else {
                k += 1
                continue
            }
            var end = k
            while end + 1 < items.count {
                if listed(items[end + 1]) {
                    end += 1
                } else if end + 3 < items.count, listed(items[end + 2]), case .columns(let cs) = items[end + 1], items[end + 3] == .columns(cs) {
                    // "the highest cost, lowest cost and average cost": the column said after each is said once.
                    items.remove(at: end + 1)
                } else {
                    break
                }
            }
            let directions = Set(items[k...end].compactMap { item -> Bool? in if case .superlative(let d, _) = item { d } else { nil } })
            if directions.count == 2 {
                for j in k...end { if case .superlative(let d, _) = items[j] { items[j] = .function(d ? .max : .min) } }
            }
            k = end + 1
        }
        return items
    }

    /// "the 3 most common cloud covers in zip code 94107", "the most common status across cities":
    /// read as "which 3 cloud covers have the most weather rows", "which status has the most cities",
    /// counting the rows of the table named right after it, else of the column's own table.
    func mostCommonAsCount(_ items: [Item]) -> [Item] {
        guard
            var i = items.firstIndex(of: .superlative(descending: true, word: "common"))
                ?? items.firstIndex(of: .superlative(descending: false, word: "common")),
            case .superlative(let descending, _) = items[i]
        else { return items }
        var items = items
        // "the most common apartment type code", "the type of document that is most common", "which
        // team city is most common": a column named with its table is the column of that table.
        func ofTable(_ c: Int, _ t: Int) -> [Int]? {
            guard c >= 0, t >= 0, t < items.count, c < items.count, case .columns(let cs) = items[c], case .table(let table) = items[t] else { return nil }
            let own = cs.filter { schema.column($0).table == table }
            return own.isEmpty ? nil : own
        }
        if let own = ofTable(i + 2, i + 1) {
            items.replaceSubrange((i + 1)...(i + 2), with: [.columns(own)])
        } else if i + 1 == items.count, let own = ofTable(i - 2, i - 1) ?? ofTable(i - 1, i - 2) {
            items.replaceSubrange((i - 2)...(i - 1), with: [.columns(own)])
            i -= 1
        }
        let columnAfter = i + 1 < items.count && { if case .columns = items[i + 1] { true } else { false } }()
        if !columnAfter, i > 0, case .columns = items[i - 1] {
            // "Which allergy type is most common (among students)?": the column named before it.
            items.swapAt(i - 1, i)
            i -= 1
        }
        guard i + 1 < items.count, case .columns(var cs) = items[i + 1], let column = pickColumn(cs, near: []) else { return items }
        var counted = schema.column(column).table
        var end = i + 1
        if i + 2 < items.count, case .table(let t) = items[i + 2] {
            counted = t
            end = i + 2
        } else if schema.column(column).isPrimary {
            // A key holds each value once: "the most common allergy" is the one most rows that point at it name.
            let pointing = schema.edges.filter { $0.to == counted && $0.toColumn == column }
            guard pointing.count == 1 else { return items }
            cs = [pointing[0].fromColumn]
            counted = pointing[0].from
        }
        var start = i
        var top: [Item] = []
        if i > 0, case .number(let n, nil) = items[i - 1], n == n.rounded(), n > 0, n < 100 {
            top = [.top(Int(n))]
            start = i - 1
        }
        let which: [Item] = items[..<start].contains(.which) ? [] : [.which]
        let reading: [Item] = which + [.columns(cs), .superlative(descending: descending, word: descending ? "most" : "least")] + top + [.table(counted)]
        return Array(items[..<start]) + reading + Array(items[(end + 1)...])
    }

    /// "the hometowns of gymnasts and the corresponding number of gymnasts": read as "the number of
    /// gymnasts for each hometown of gymnasts". The words before it from its first column on are
    /// what is grouped by; the count and the table right after it, what is counted.
    /// "the different statuses and the number of cities with each", "the average amount for
    /// different types": with a count or a function and no other grouping, the different values of a
    /// column are its groups. Not "how many different cities" (a count of distinct values).
    /// "the account with the most transactions", where "transactions" named transaction_id: the
    /// rows whose key it is are counted.
    func mostOfAKeyAsRows(_ items: [Item]) -> [Item] {
        var items = items
        for k in items.indices.dropLast() {
            guard case .superlative(_, let word) = items[k], ["most", "fewest", "least"].contains(word), case .columns(let cs) = items[k + 1] else { continue }
            let keys = cs.filter { schema.column($0).isPrimary }
            if keys.count == 1 { items[k + 1] = .table(schema.column(keys[0]).table) }
        }
        return items
    }

    /// "How many hosts does each nationality have? List the nationality and the count.": a count asked
    /// for per group, then said again where the answer's columns are listed, is one count.
    func countRestated(_ items: [Item]) -> [Item] {
        let counts = items.indices.filter { items[$0] == .count }
        guard counts.count == 2, let g = items.firstIndex(where: \.isGroupMarker), counts[0] < g, g < counts[1] else { return items }
        let second = counts[1]
        // Said again, it ends the question: "… and the count", "… and the number of coaches" (the table
        // counted, named again). Not "ordered by the count", "more than the average number of …", nor
        // "and how many coaches" (another table), nor "and how many of them joined after 2015".
        switch items[second - 1] {
        case .orderBy, .average, .compare, .function: return items
        default: break
        }
        var items = items
        if second + 1 < items.count {
            guard second + 2 == items.count, case .table(let t) = items[second + 1], items[counts[0] + 1] == .table(t) else { return items }
            items.remove(at: second + 1)
        }
        items.remove(at: second)
        return items
    }

    /// "the countries and the number of climbers from each country", "the name of track and the number
    /// of races in each track", "the destinations and the number of flights to each one": what is listed
    /// before the count is the groups, named again after "each" (or referred back to by "each one").
    func listedThenEach(_ items: [Item]) -> [Item] {
        guard let c = items.firstIndex(of: .count), (1...2).contains(c), case .columns(let listed) = items[0],
            let g = items.firstIndex(where: \.isGroupMarker), g > c + 1, !items[..<g].contains(where: \.isGroupMarker)
        else { return items }
        if c == 2 {
            // "the name of track": a column of the table named with it.
            guard case .table(let t) = items[1], listed.contains(where: { schema.column($0).table == t }) else { return items }
        }
        let counted = Array(items[c...])
        guard g + 1 < items.count else { return counted + Array(items[..<c]) }  // "each one"
        switch items[g + 1] {
        case .columns(let grouped) where !Set(grouped).isDisjoint(with: listed):
            // "the payment method codes and the number of orders for each code": the columns both name.
            var counted = counted
            counted[g - c + 1] = .columns(grouped.filter(listed.contains))
            return counted
        // "the name of track … in each track": the listed column names the grouped table's rows.
        case .table(let t) where listed.contains(where: { schema.tables[t].labels.contains($0) }): return counted
        default: return items
        }
    }

    func differentAsEach(_ items: [Item]) -> [Item] {
        guard
            let d = items.indices.dropLast().first(where: { k in
                guard items[k] == .distinct, case .columns = items[k + 1] else { return false }
                return true
            })
        else { return items }
        // "the different locations and the number of performances at each location": the groups are named twice.
        if let g = items.firstIndex(where: \.isGroupMarker) {
            // "What are the different ship flags, and how many ships have each?": the "each" at the end is of
            // the different values named first, the groups.
            if g == items.count - 1, g > d + 1, items[(d + 2)...].contains(where: { $0 == .count || $0 == .average }) {
                var items = items
                items.remove(at: g)
                items[d] = .groupMarker(each: true)
                return items
            }
            guard g > d + 1, g + 1 < items.count, case .columns(let grouped) = items[g + 1], case .columns(let listed) = items[d + 1],
                !Set(grouped).isDisjoint(with: listed)
            else { return items }
            var items = items
            items.remove(at: d)
            return items
        }
        guard
            d == 0 || items[d - 1] != .count,
            // A measure of its own, beside the column ("the different X and the number of Y", "the average
            // Z for different X"): not "total points" (often a column's name), nor "than the average age",
            // nor "the people with the maximum height".
            items.indices.contains(where: { k in
                guard k < d || k == d + 2 || (k == d + 3 && items[d + 2] == .correspondingMarker) else { return false }
                if k > 0, case .compare = items[k - 1] { return false }
                switch items[k] {
                case .count, .average, .function(.avg), .function(.min), .function(.max): return true
                default: return false
                }
            })
        else { return items }
        var items = items
        items[d] = .groupMarker(each: true)
        return items
    }

    func correspondingAsEach(_ items: [Item]) throws(NotUnderstood) -> [Item] {
        guard let g = items.firstIndex(of: .correspondingMarker) else { return items }
        guard let first = items[..<g].firstIndex(where: { if case .columns = $0 { true } else { false } }), g + 1 < items.count,
            items[g + 1] == .count
        else {
            throw NotUnderstood(message: "the built-in engine could not tell what the count corresponds to; ask for the number of each, e.g. 'for each city'")
        }
        var end = g + 1
        if end + 1 < items.count, case .table = items[end + 1] { end += 1 }
        return Array(items[..<first]) + Array(items[(g + 1)...end]) + [.groupMarker(each: true)] + Array(items[first..<g]) + Array(items[(end + 1)...])
    }

    // MARK: - Recognition

    func recognize(_ reader: inout QuestionReader) throws(NotUnderstood) -> [Item] {
        var recognizer = Recognizer(self, tokens: reader.tokens)
        let items = try recognizer.run()
        reader.namedFilters = recognizer.filtersAt.map(\.filter)
        reader.tokens = recognizer.t
        return items
    }

    /// "larger than or equal to", "no less than": a bound that includes its number.
    static let inclusiveComparisons: [([String], QueryPlan.Comparison)] =
        ["more", "greater", "larger", "higher", "bigger"].map { ([$0, "than", "or", "equal", "to"], .greaterOrEqual) }
        + ["less", "fewer", "smaller", "lower"].map { ([$0, "than", "or", "equal", "to"], .lessOrEqual) }
        + [(["no", "less", "than"], .greaterOrEqual), (["no", "fewer", "than"], .greaterOrEqual)]

    /// Words that order a list, and which way.
    static let orderPhrases: [([String], Item)] =
        [
            // "in alphabetical order of theme" orders by the column after it.
            (["sorted", "by", "alphabetical", "order", "of"], .orderBy), (["ordered", "by", "alphabetical", "order", "of"], .orderBy),
            (["sorted", "by", "alphabetical", "order"], .alphabetical), (["ordered", "by", "alphabetical", "order"], .alphabetical),
            (["in", "ascending", "alphabetical", "order", "of"], .orderBy), (["in", "the", "alphabetical", "order", "of"], .orderBy),
            (["in", "alphabetical", "order", "of"], .orderBy), (["in", "ascending", "alphabetical", "order"], .alphabetical),
            (["in", "the", "alphabetical", "order"], .alphabetical), (["in", "an", "alphabetical", "order"], .alphabetical),
            (["by", "alphabetical", "order"], .alphabetical), (["in", "alphabetic", "order"], .alphabetical),
            (["ordered", "by"], .orderBy), (["sorted", "by"], .orderBy), (["order", "by"], .orderBy), (["sort", "by"], .orderBy),
            (["in", "order", "of"], .orderBy), (["in", "the", "order", "of"], .orderBy), (["arranged", "by"], .orderBy), (["ordered", "on"], .orderBy),
            (["sorted", "on"], .orderBy), (["sorted", "using"], .orderBy), (["ordered", "using"], .orderBy),
            (["in", "descending", "order"], .direction(descending: true, ofAge: false)),
            (["in", "ascending", "order"], .direction(descending: false, ofAge: false)),
            (["descending"], .direction(descending: true, ofAge: false)), (["ascending"], .direction(descending: false, ofAge: false)),
            (["desc"], .direction(descending: true, ofAge: false)), (["asc"], .direction(descending: false, ofAge: false)),
            (["in", "decreasing", "order"], .direction(descending: true, ofAge: false)),
            (["in", "increasing", "order"], .direction(descending: false, ofAge: false)),
            (["in", "alphabetical", "order"], .alphabetical), (["alphabetically"], .alphabetical),
        ] + fromToPhrases

    /// "from highest to lowest", "from the greatest to the least", "from youngest to oldest": the
    /// way of an order, from either end to the other.
    static let fromToPhrases: [([String], Item)] = {
        let high = ["highest", "greatest", "largest", "biggest", "most", "maximum", "high", "longest", "latest"]
        let low = ["lowest", "least", "smallest", "fewest", "minimum", "low", "shortest", "earliest"]
        var phrases: [([String], Item)] = []
        for (first, last, descending, ofAge) in high.flatMap({ h in low.map { (h, $0, true, false) } })
            + low.flatMap({ l in high.map { (l, $0, false, false) } }) + [("oldest", "youngest", true, true), ("youngest", "oldest", false, true)]
            // "from oldest to most recent": in time, earliest first.
            + ["newest", "latest", "recent"].flatMap({ [("oldest", $0, false, false), ($0, "oldest", true, false)] })
        {
            let way = Item.direction(descending: descending, ofAge: ofAge)
            // "recent" is said "most recent" or "most recently".
            func said(_ word: String) -> [[String]] { word == "recent" ? [["most", "recent"], ["most", "recently"]] : [[word]] }
            for (a, b) in [([], []), (["the"], ["the"]), (["the"], []), ([], ["the"])] as [([String], [String])] {
                for one in said(first) {
                    for other in said(last) { phrases.append((["from"] + a + one + ["to"] + b + other, way)) }
                }
            }
        }
        return phrases
    }()

    /// Words for what a column measures, and the column-name words that measure it.
    static let concepts: [String: [String]] = [
        "length": Lexicon.durationColumnWords, "duration": Lexicon.durationColumnWords, "long": Lexicon.durationColumnWords,
        "runtime": Lexicon.durationColumnWords, "unit": Lexicon.quantityColumnWords, "units": Lexicon.quantityColumnWords,
        "price": Lexicon.priceColumnWords, "cost": Lexicon.priceColumnWords, "pay": Lexicon.payColumnWords, "salary": Lexicon.payColumnWords,
        "wage": Lexicon.payColumnWords, "size": Lexicon.sizeColumnWords, "quantity": Lexicon.quantityColumnWords,
    ]

    /// Tables or columns that `words` name.
    func schemaItem(_ words: [String]) -> Item? {
        func same(_ q: [String], _ s: [String]) -> Bool {
            q.count == s.count && zip(q, s).allSatisfy { Lexicon.matches(question: $0, schema: $1) }
        }
        if let table = schema.tables.indices.first(where: { same(words, schema.tables[$0].words) || schema.tables[$0].written.map { same(words, $0) } == true })
        {
            return .table(table)
        }
        var columns: [Int] = []
        var wholeNames: [Int] = []
        for (ci, column) in schema.columnList.enumerated() {
            var names = column.words
            if names.count > 1, ["id", "key", "on", "at", "no"].contains(names.last ?? "") { names.removeLast() }
            // "the city" of a student is its city_code, when no table of cities is there to point at.
            if names.count > 1, names.last == "code", !column.isKey { names.removeLast() }
            // "the category" for category_name (`SchemaModel.Column.namesThing`).
            if column.namesThing { names.removeLast() }
            // A yes/no column is named without its verb: "low cost" for is_low_cost.
            if column.kind == .boolean, names.count > 1, ["is", "has", "was", "can", "does"].contains(names[0]) { names.removeFirst() }
            let whole = same(words, column.words) || column.written.map { same(words, $0) } == true
            if whole || same(words, names) || column.withoutUnits.map({ same(words, $0) }) == true {
                columns.append(ci)
                if whole { wholeNames.append(ci) }
            } else if words.count > 1, let own = column.withoutTable, same(words, own) {
                // "first name" for customer_first_name of Customers.
                columns.append(ci)
            } else if let initialed = column.initialed, same(words, initialed) {
                columns.append(ci)
            }
        }
        // "first name" for Firstname: the words run together.
        if columns.isEmpty, words.count == 2 {
            let joined = Lexicon.forms(words.joined())
            columns = schema.columnList.indices.filter { schema.columnList[$0].words.count == 1 && joined.contains(schema.columnList[$0].words[0]) }
        }
        // "flight number" for flno, "room number" for room_no: a table's word and "number", and its
        // column whose name is the word (or its start) with no, num or nbr.
        if columns.isEmpty, words.count == 2, Lexicon.forms(words[1]).contains("number") {
            for t in schema.tables.indices {
                guard let word = schema.tables[t].words.last, Lexicon.matches(question: words[0], schema: word) else { continue }
                columns += schema.tables[t].columns.filter { c in
                    let name = String(schema.columnList[c].name.lowercased().filter { $0 != "_" })
                    return ["no", "num", "nbr"].contains { suffix in
                        guard name.hasSuffix(suffix) else { return false }
                        let start = String(name.dropLast(suffix.count))
                        return start.count >= 2 && (word.hasPrefix(start) || Lexicon.abbreviates(start, word))
                    }
                }
            }
        }
        // "first name" for forename, "last name" for surname.
        if columns.isEmpty, let others = Lexicon.namesOtherwise[words.map { Lexicon.forms($0).contains("name") ? "name" : $0 }] {
            columns = schema.columnList.indices.filter { c in others.contains { same($0, schema.columnList[c].withoutTable ?? schema.columnList[c].words) } }
        }
        // "the claimed amount" for Amount_Claimed: two words the other way round.
        if columns.isEmpty, words.count == 2, words[0].hasSuffix("ed") {
            columns = schema.columnList.indices.filter { same(words.reversed(), schema.columnList[$0].withoutTable ?? schema.columnList[$0].words) }
        }
        // "the latest logon date" for date_of_latest_logon: all of a column's words, in another order.
        if columns.isEmpty, (2...4).contains(words.count), Set(words).count == words.count {
            columns = schema.columnList.indices.filter { c in
                let names = (schema.columnList[c].withoutTable ?? schema.columnList[c].words).filter { $0 != "of" }
                return names.count == words.count && Set(names).count == names.count
                    && words.allSatisfy { w in names.contains { Lexicon.matches(question: w, schema: $0) } }
                    && names.allSatisfy { n in words.contains { Lexicon.matches(question: $0, schema: n) } }
            }
        }
        // "the public schools" of a table with a School and a School_ID: the column named whole, not
        // the key its word also starts, in its table or in one pointing at it.
        let wholeTables = Set(wholeNames.map { schema.columnList[$0].table })
        if !wholeNames.isEmpty, wholeNames.count < columns.count,
            columns.allSatisfy({ c in
                let table = schema.columnList[c].table
                return wholeNames.contains(c)
                    || schema.columnList[c].isKey
                        && (wholeTables.contains(table) || schema.edges.contains { $0.from == table && wholeTables.contains($0.to) })
            }),
            wholeNames.allSatisfy({ !schema.columnList[$0].isKey })
        {
            columns = wholeNames
        }
        // "the invoice with the most transactions" of Financial_Transactions, not its transaction_id: a
        // plural that ends one table's name and names only id columns, that table's among them, is its rows.
        if words.count == 1, words[0].hasSuffix("s"), !words[0].hasSuffix("ss"), !words[0].hasSuffix("us"), !columns.isEmpty,
            columns.allSatisfy({ schema.columnList[$0].words.count == 2 && schema.columnList[$0].words.last == "id" }),
            case let owners = schema.tables.indices.filter({ t in
                let name = schema.tables[t].words
                return name.count > 1 && Lexicon.matches(question: words[0], schema: name[name.count - 1])
            }),
            owners.count == 1, columns.contains(where: { schema.columnList[$0].table == owners[0] })
        {
            return .table(owners[0])
        }
        // "the staff" of a table staff_member whose key is staff_no, "the items" of stock_item keyed
        // by item_no: the key of a table (and keys to it) named by the start or the end of the
        // table's own name is the table. Not a key that is itself the value ("allergy" of
        // Allergy_Type keyed by its allergy).
        if let first = columns.first, case let column = schema.column(first), column.words.count > words.count,
            case let t = column.references ?? column.table, let key = schema.tables[t].primaryKey,
            columns.allSatisfy({ $0 == key || schema.column($0).references == t }), case let table = schema.tables[t].words,
            words.count < table.count, same(words, Array(table.prefix(words.count))) || same(words, Array(table.suffix(words.count)))
        {
            return .table(t)
        }
        if !columns.isEmpty { return .columns(columns) }
        // A column named by its last words: "country" for BillingCountry, "price" for UnitPrice.
        if words.count == 1 {
            let partial = schema.columnList.indices.filter { ci in
                let column = schema.columnList[ci]
                let names = column.initialed ?? column.words
                // "the dates of the notes" for date_of_notes: a date named by its first word.
                if names.count > 1, names[0] == "date", column.kind == .date, Lexicon.forms(words[0]).contains("date") { return true }
                // A verb does not name a count of what was done: "play" is not Hours_Played.
                let last = names.last ?? ""
                if last.hasSuffix("ed"), !words[0].hasSuffix("ed"), !Lexicon.forms(words[0]).contains(last) { return false }
                return names.count > 1 && Lexicon.matches(question: words[0], schema: last)
            }
            // Primary keys last: "the id of orders" is order_id when the orders are what is asked
            // about, a key to another table otherwise.
            // But "the ids of the order items" is their own key, order_item_id, not their order_id.
            let primaryFirst = Lexicon.forms(words[0]).contains("id")
            let ordered =
                partial.filter { schema.columnList[$0].isPrimary == primaryFirst } + partial.filter { schema.columnList[$0].isPrimary != primaryFirst }
            if !ordered.isEmpty { return .columns(ordered) }
            // "the ids of aircraft" for aid, eid: each table's own key, when no column is named id.
            if Lexicon.forms(words[0]).contains("id") {
                let keys = schema.columnList.indices.filter { schema.columnList[$0].isPrimary }
                if !keys.isEmpty { return .columns(keys) }
            }
            // A verb of a date or year column: "hired" for hire_date, "founded" for founded_year, "stored"
            // for date_stored, "joined" for date_joined_staff.
            let dated = schema.columnList.indices.filter { ci in
                let c = schema.columnList[ci]
                let dateWords = ["date", "year", "on", "at", "time", "yr"]
                guard c.kind == .date || c.isYear else { return false }
                if c.words.count == 2, dateWords.contains(c.words[1]) { return Lexicon.matches(question: words[0], schema: c.words[0]) }
                guard (2...3).contains(c.words.count), c.words[0] == "date", words[0].count > 3 else { return false }
                return Lexicon.matches(question: words[0], schema: c.words[1])
            }
            if !dated.isEmpty { return .columns(dated) }
            // A word for a kind of measure: "length" for a duration column, "units" for a quantity.
            // "rooms" for room_count: a column that counts them.
            let counts = countColumns(of: words[0])
            if !counts.isEmpty { return .columns(counts) }
            if let lexicon = Self.concepts[words[0]] {
                let found = schema.columnList.indices.filter { ci in
                    let c = schema.columnList[ci]
                    // Exact words: "units" means a quantity, not a unit price.
                    if lexicon == Lexicon.durationColumnWords { return c.kind == .number && !c.isKey && c.words.contains(where: Lexicon.isDuration) }
                    return c.kind == .number && !c.isKey && c.words.contains { lexicon.contains($0) }
                }
                if !found.isEmpty { return .columns(found) }
            }
        }
        return nil
    }

    /// Whether these words name a table or column (never taken for a misspelt value).
    func schemaWords(_ words: [String]) -> Bool { schemaItem(words) != nil }

    /// `typos` counts down the lookups of misspelt names a question may make (each reads every value).
    func valueItem(_ words: [String], text: String, named: Bool, typos: inout Int, columnsNamed: Set<Int> = []) -> Item? {
        let valueWords = ValueIndex.words(text)
        guard !valueWords.isEmpty else { return nil }
        let whole = values.whole(valueWords)
        if !whole.isEmpty {
            // A lower-case single word is a value only in a column of few distinct values ("rock", "jazz").
            var kept = named || valueWords.count > 1 ? whole : whole.filter { (values.distinct[$0.column] ?? 0) <= 300 }
            // "in Sonoma County", where Sonoma is a county: the value of the column named after it,
            // even when "Sonoma County" is also a value of another column.
            if valueWords.count >= 2, let last = words.last, case .columns(let named)? = schemaItem([last]) {
                let shorter = values.whole(Array(valueWords.dropLast())).filter { named.contains($0.column) }
                // Unless the column that holds the whole phrase is named right before it ("the appellation Sonoma County").
                if !shorter.isEmpty, !kept.contains(where: { columnsNamed.contains($0.column) }) { kept = shorter }
            }
            if !kept.isEmpty { return .value(kept, phrase: text, partial: false) }
        }
        if named, valueWords.count >= 2 || (valueWords.first?.count ?? 0) >= 5 {
            let inside = values.containing(valueWords)
            if !inside.isEmpty { return .value(inside, phrase: text, partial: true) }
        }
        // A name written with a typo: taken only when every close value is the same one.
        if named, typos > 0, !schemaWords(valueWords) {
            typos -= 1
            let close = values.near(valueWords)
            if let first = close.first, close.allSatisfy({ $0.value == first.value }) { return .value(close, phrase: text, partial: false) }
        }
        return nil
    }

    // MARK: - Assembly

    func isFollowUp(_ items: [Item], _ reader: QuestionReader) -> Bool {
        let first = reader.tokens.first?.lower ?? ""
        let opensAsFollowUp =
            ["and", "only", "but", "now", "instead", "also", "then", "by", "per"].contains(first)
            || reader.tokens.contains { ["instead", "rather"].contains($0.lower) }
            || reader.tokens.prefix(2).map(\.lower) == ["what", "about"] || reader.tokens.prefix(2).map(\.lower) == ["how", "about"]
        let hasSubject = items.contains { if case .table = $0 { return true } else { return false } } && items.contains { $0 == .count }
        return opensAsFollowUp || (!hasSubject && !items.contains { if case .table = $0 { return true } else { return false } })
    }

    /// The previous question's plan with this question's changes: a filter, a grouping, a limit.
    func followUp(_ previous: QueryPlan, _ items: [Item]) throws(NotUnderstood) -> Understood {
        var plan = previous
        var changed = false
        var k = 0
        while k < items.count {
            defer { k += 1 }
            switch items[k] {
            case .year(let year):
                guard let date = dateColumn(for: plan.root, plan: plan) else { continue }
                plan.conditions.removeAll { isDateCondition($0, date) }
                plan.conditions += yearRange(date, year)
                changed = true
            case .month(let month, let year):
                guard let date = dateColumn(for: plan.root, plan: plan), !schema.column(date).isYear, let year = year ?? previousYear(plan, date) else {
                    continue
                }
                plan.conditions.removeAll { isDateCondition($0, date) }
                plan.conditions += monthRange(date, year, month)
                changed = true
            case .value(let entries, _, let partial):
                let entry = preferred(entries, near: [plan.root] + tablesOf(plan))
                plan.conditions.removeAll {
                    if case .oneOf(let c, _) = $0 { return c == entry.column }
                    if case .like(let c, _) = $0 { return c == entry.column }
                    if case .notLike(let c, _) = $0 { return c == entry.column }
                    return false
                }
                plan.conditions.append(partial ? .like(entry.column, "%" + entry.value + "%") : .oneOf(entry.column, [entry.value]))
                changed = true
            case .groupMarker:
                if k + 1 < items.count, let grouping = groupingFor(items[k + 1], root: plan.root) {
                    if case .entity(let t)? = plan.grouping, case .entity(let u) = grouping, plan.root == t { plan.root = u }
                    plan.grouping = grouping
                    plan.shown = []
                    changed = true
                    k += 1
                }
            case .top(let n):
                plan.limit = n
                if plan.order.isEmpty, let m = plan.measures.first { plan.order = [(m, descending: true)] }
                changed = true
            case .superlative(let descending, _):
                if let m = plan.measures.first { plan.order = [(m, descending: descending)] }
                if plan.limit == nil { plan.limit = 1 }
                changed = true
            case .number(let n, nil) where n == n.rounded() && n > 0:
                plan.limit = Int(n)
                if plan.order.isEmpty, let m = plan.measures.first { plan.order = [(m, descending: true)] }
                changed = true
            default: continue
            }
        }
        guard changed else { throw NotUnderstood(message: "the built-in engine could not tell what to change in the previous question; ask it whole") }
        // How sure: read by BuiltinEngine from the risks of the whole chain's parts and plan.
        return Understood(plan: plan, confidence: 1, title: "")
    }

    func previousYear(_ plan: QueryPlan, _ date: Int) -> Int? {
        for c in plan.conditions {
            if case .compare(.column(date), .greaterOrEqual, .text(let from)) = c, let y = Int(from.prefix(4)) { return y }
        }
        return nil
    }

    func isDateCondition(_ c: QueryPlan.Condition, _ date: Int) -> Bool {
        switch c {
        case .compare(.column(date), _, _), .compare(.bucket(date, _), _, _): return true
        // "after 1961 or before 1959": either of two times is a time too.
        case .any(let cs), .all(let cs): return !cs.isEmpty && cs.allSatisfy { isDateCondition($0, date) }
        default: return false
        }
    }

    func tablesOf(_ plan: QueryPlan) -> [Int] {
        var out: [Int] = []
        if case .entity(let t)? = plan.grouping { out.append(t) }
        for m in plan.measures {
            if case .aggregate(_, .column(let c)) = m { out.append(schema.column(c).table) }
            if case .aggregate(_, .product(let c, _)) = m { out.append(schema.column(c).table) }
        }
        return out
    }

    func groupingFor(_ item: Item, root: Int) -> QueryPlan.Grouping? {
        switch item {
        case .table(let t): return .entity(t)
        case .columns(let cs): return pickColumn(cs, near: [root]).map { .column($0) }
        case .bucket(let b): return dateColumn(for: root, plan: nil).map { .bucket($0, b == .month ? .yearMonth : b) }
        default: return nil
        }
    }

    func yearRange(_ date: Int, _ year: Int) -> [QueryPlan.Condition] {
        if schema.column(date).isYear { return [.compare(.column(date), .equal, .number(Double(year)))] }
        return [.compare(.column(date), .greaterOrEqual, .text("\(year)-01-01")), .compare(.column(date), .less, .text("\(year + 1)-01-01"))]
    }

    func monthRange(_ date: Int, _ year: Int, _ month: Int) -> [QueryPlan.Condition] {
        let next = month == 12 ? (year + 1, 1) : (year, month + 1)
        func day(_ y: Int, _ m: Int) -> String { "\(y)-" + (m < 10 ? "0" : "") + "\(m)-01" }
        return [.compare(.column(date), .greaterOrEqual, .text(day(year, month))), .compare(.column(date), .less, .text(day(next.0, next.1)))]
    }
}

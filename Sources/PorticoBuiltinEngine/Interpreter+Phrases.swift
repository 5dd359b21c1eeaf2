import PorticoAskEngine

/// The question's tokens and the parts read from them so far, each part with the token it starts
/// at: what the readings of phrases that span several parts work on, after (or between) the passes
/// of `Interpreter.recognize`.
struct Recognition {
    var tokens: [QuestionReader.Token]
    var items: [(Int, Interpreter.Item)]

    /// Reads tokens `i..<i+n` as `item`.
    mutating func take(_ i: Int, _ n: Int, _ item: Interpreter.Item) {
        for k in i..<(i + n) { tokens[k].used = true }
        items.append((i, item))
    }

    /// Reads the part `item` found at `at` as `new` instead.
    mutating func replace(_ item: Interpreter.Item, at: Int, with new: Interpreter.Item) {
        if let i = items.firstIndex(where: { $0.0 == at && $0.1 == item }) { items[i].1 = new }
    }

    /// The parts in the order of the question.
    var ordered: [(Int, Interpreter.Item)] { items.sorted { $0.0 < $1.0 } }

    /// The positions of the tokens between two positions that no part has read.
    func unread(after low: Int, before high: Int) -> [Int] {
        low + 1 < high ? ((low + 1)..<high).filter { !tokens[$0].used } : []
    }
}

extension Interpreter {
    /// "the names of models" for Model_name: a word naming several columns, "of", and a word that
    /// is no table's name, read as the one column the two words name the other way round.
    func readColumnOfItsOwner(_ r: inout Recognition) {
        let t = r.tokens
        for i in t.indices.dropLast(2) where t[i + 1].lower == "of" {
            var j = i + 2
            while j < t.count - 1, ["the", "all"].contains(t[j].lower) { j += 1 }
            guard j < t.count, (i...j).allSatisfy({ !r.tokens[$0].used && !t[$0].quoted && t[$0].number == nil }),
                !Lexicon.stopWords.contains(t[j].lower)
            else { continue }
            // "the names of models that …", not "the names of model years".
            if j + 1 < t.count, !r.tokens[j + 1].used, schemaWords([t[j].lower, t[j + 1].lower]) { continue }
            // "the numbers of all flights" for flno: a word that names nothing alone, of a table.
            let alone = schemaItem([t[i].lower])
            let several = alone.map { if case .columns(let cs) = $0 { cs.count > 1 } else { false } } ?? false
            let ofATable = alone == nil && schemaItem([t[j].lower]).map { if case .table = $0 { true } else { false } } == true
            guard several || ofATable,
                several ? schemaItem([t[j].lower]).map({ if case .table = $0 { false } else { true } }) ?? true : true,
                case .columns(let cs)? = schemaItem([t[j].lower, t[i].lower]), cs.count == 1
            else { continue }
            r.take(i, j - i + 1, .columns(cs))
        }
    }

    /// "the room count" for room_count, "weeks on top" for Weeks_on_Top, "the max temperature" for
    /// max_temperature_f: two to four words that name a column whole, one of them a word that is
    /// grammar elsewhere (`Lexicon.grammarInNames`), read as the column before the grammar is,
    /// when the other words name nothing by themselves.
    func readColumnsNamedWithGrammar(_ r: inout Recognition) {
        for length in stride(from: 4, through: 2, by: -1) {
            for i in r.tokens.indices.dropLast(length - 1) {
                let span = i..<(i + length)
                guard span.allSatisfy({ !r.tokens[$0].used && !r.tokens[$0].quoted && r.tokens[$0].number == nil }) else { continue }
                let words = span.map { r.tokens[$0].lower }
                guard words.contains(where: Lexicon.grammarInNames.contains), let first = words.first, let last = words.last,
                    !Lexicon.stopWords.contains(first), !Lexicon.stopWords.contains(last), case .columns(let cs)? = schemaItem(words)
                else { continue }
                // Not when the other words name a column themselves: "the minimum salary" is as likely
                // the least of salary as a min_salary column, "the maximum occupancy" the most of maxOccupancy.
                let rest = words.filter { !Lexicon.grammarInNames.contains($0) }
                if !rest.isEmpty, schemaItem(rest) != nil { continue }
                r.take(i, length, .columns(cs))
            }
        }
    }

    /// "first and last names", "first, middle and last name": columns sharing their last word, the
    /// words before it set apart by commas or "and" (words side by side without either are one name).
    func readNamesSharingTheirLastWord(_ r: inout Recognition) {
        let t = r.tokens
        for i in t.indices where t[i].lower != "and" {
            guard !r.tokens[i].used else { continue }
            for e in stride(from: i + 2, to: min(t.count, i + 6), by: 1) {
                let span = i..<e
                guard span.allSatisfy({ !r.tokens[$0].used && !t[$0].quoted && t[$0].number == nil }), !r.tokens[e].used, t[e - 1].lower != "and"
                else { continue }
                let heads = span.filter { t[$0].lower != "and" }
                guard heads.count >= 2, span.count - heads.count <= 1,
                    heads.dropLast().allSatisfy({ t[$0].beforeComma || t[$0 + 1].lower == "and" })
                else { continue }
                let named = heads.compactMap { h -> [Int]? in
                    if case .columns(let cs)? = schemaItem([t[h].lower, t[e].lower]) { return cs } else { return nil }
                }
                guard named.count == heads.count else { continue }
                for (h, columns) in zip(heads, named) { r.take(h, h == e - 1 ? 2 : 1, .columns(columns)) }
                for k in span where t[k].lower == "and" { r.tokens[k].used = true }
                break
            }
        }
    }

    /// "the transaction type that occurs the fewest times", "codes used less than 5 times": the times
    /// are the rows of the table of the column asked about, counted per value. With a table asked
    /// about they would be the rows of a table of its events, which the question does not name: not read.
    /// So are "twice" and "once" after a comparison ("event names used more than twice").
    func readTimesAsRows(_ r: inout Recognition) {
        for i in r.tokens.indices where !r.tokens[i].used && ["times", "twice", "once"].contains(r.tokens[i].lower) && i > 0 {
            let before = r.tokens[i - 1]
            let word = r.tokens[i].lower
            guard
                word == "times"
                    ? before.number != nil || Lexicon.numberWords[before.lower] != nil || ["most", "fewest", "least", "of"].contains(before.lower)
                    : ["than", "least", "most"].contains(before.lower)
            else { continue }
            let earlier = r.ordered.filter { $0.0 < i }
            guard !earlier.contains(where: { if case .table = $0.1 { true } else { false } }),
                let first = earlier.first(where: { if case .columns = $0.1 { true } else { false } }), case .columns(let cs) = first.1,
                let c = pickColumn(cs, near: []), !schema.column(c).isKey
            else { continue }
            if word != "times" { r.take(i, 1, .number(word == "twice" ? 2 : 1, unit: nil)) }
            r.take(i, 1, .table(schema.column(c).table))
        }
    }

    /// "How many students and instructors are in each department?": two counts, of which the engine
    /// would make one; refused with a way out.
    func refuseTwoCounts(_ r: Recognition) throws(NotUnderstood) {
        let ordered = r.ordered
        for k in ordered.indices.dropFirst().dropLast() where ordered[k - 1].1 == .count {
            guard case .table = ordered[k].1, case .table = ordered[k + 1].1 else { continue }
            let between = r.unread(after: ordered[k].0, before: ordered[k + 1].0).map { r.tokens[$0].lower }
            if between.contains("and"), between.allSatisfy({ ["and", "the", "of"].contains($0) }) {
                throw NotUnderstood(message: "the built-in engine counts one thing at a time; ask how many of each in two questions")
            }
        }
    }

    /// "the rank, company, and market value of every company": a word naming a table, listed among
    /// that table's columns, is its column of the same name (company.Company), not the table.
    func readTablesListedAmongColumns(_ r: inout Recognition) {
        let ordered = r.ordered
        for k in ordered.indices.dropFirst().dropLast() {
            let (at, item) = ordered[k]
            guard at > 0, case .table(let table) = item, case .columns(let before) = ordered[k - 1].1, case .columns(let after) = ordered[k + 1].1,
                r.tokens[at].beforeComma, r.tokens[at - 1].beforeComma || r.tokens[at - 1].lower == "and",
                before.contains(where: { schema.column($0).table == table }), after.contains(where: { schema.column($0).table == table })
            else { continue }
            let own = schema.tables[table].columns.filter { c in
                schema.column(c).words.count == 1 && Lexicon.matches(question: r.tokens[at].lower, schema: schema.column(c).words[0])
            }
            guard own.count == 1 else { continue }
            r.replace(item, at: at, with: .columns(own))
        }
    }

    /// "the average and largest salary", "the minimum, highest and average age": a superlative listed
    /// after a function (an "and" or a comma between them) is the maximum or minimum, not a ranking
    /// ("the average of the highest scores" and "the highest average salary" stay rankings).
    func readSuperlativesListedAfterAFunction(_ r: inout Recognition) {
        let extremes = ["highest", "lowest", "largest", "smallest", "greatest", "biggest"]
        let ordered = r.ordered
        for k in ordered.indices.dropFirst() {
            let (at, item) = ordered[k]
            guard case .superlative(let descending, let word) = item, extremes.contains(word) else { continue }
            let (before, previous) = ordered[k - 1]
            switch previous {
            case .function, .average: break
            default: continue
            }
            let between = r.unread(after: before, before: at)
            guard between.map({ r.tokens[$0].lower }) == ["and"] || between.isEmpty && r.tokens[before].beforeComma else { continue }
            r.replace(item, at: at, with: .function(descending ? .max : .min))
        }
    }

    /// "the names of members and their corresponding parties", "each student and its respective
    /// department": a table listed with "and their" after what is shown is shown too, by what names its rows.
    func showTablesListedAsTheirs(_ r: inout Recognition) {
        let ordered = r.ordered
        for k in ordered.indices.dropFirst() {
            let (at, item) = ordered[k]
            guard case .table(let table) = item, !schema.tables[table].labels.isEmpty else { continue }
            let said = r.unread(after: ordered[k - 1].0, before: at).map { r.tokens[$0].lower }.filter { !["corresponding", "respective"].contains($0) }
            guard said == ["and", "their"] || said == ["and", "its"] else { continue }
            switch ordered[k - 1].1 {
            case .table, .columns: break
            default: continue
            }
            // "customers and their orders' dates": a column of the table follows; it is what is shown.
            if k + 1 < ordered.count, case .columns(let cs) = ordered[k + 1].1, cs.contains(where: { schema.column($0).table == table }) { continue }
            r.replace(item, at: at, with: .columns(schema.tables[table].labels))
        }
    }

    /// "the players and their years played", "all employees with their titles": a table listed with
    /// "and" (or "with their") before one of its own columns is also shown, by what names its rows
    /// (it was only the subject, and its names were dropped).
    /// Not after a count, a function or a superlative, nor after columns ("the authors of
    /// submissions and their colleges": the table owns the columns listed).
    func showTablesListedBesideTheirColumns(_ r: inout Recognition) {
        let ordered = r.ordered
        for (k, (at, item)) in ordered.enumerated() {
            guard case .table(let table) = item, !schema.tables[table].labels.isEmpty, k + 1 < ordered.count else { continue }
            if k > 0 {
                switch ordered[k - 1].1 {
                case .count, .average, .distinct, .function, .superlative, .columns: continue
                default: break
                }
            }
            guard case .columns(let cs) = ordered[k + 1].1,
                cs.contains(where: { schema.column($0).table == table && !schema.tables[table].labels.contains($0) })
            else { continue }
            // The "and" between them, or "with their" ("all employees with their titles": a row's own
            // column listed beside it, not a condition), with nothing else unread.
            let between = r.unread(after: at, before: ordered[k + 1].0)
            let words = between.map { r.tokens[$0].lower }
            guard words.allSatisfy({ ["and", "the", "their", "its", "with"].contains($0) }),
                let and = between.first(where: { r.tokens[$0].lower == "and" })
                    ?? (words.starts(with: ["with", "their"]) || words.starts(with: ["with", "its"]) ? between.first : nil)
            else { continue }
            r.take(and, 1, .columns(schema.tables[table].labels))
        }
    }
}

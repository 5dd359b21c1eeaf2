import PorticoAskEngine

extension Interpreter {
    /// Of several columns a word names, the one in (or nearest to) the tables the question is about.
    func pickColumn(_ columns: [Int], near tables: [Int]) -> Int? {
        guard !columns.isEmpty else { return nil }
        func rank(_ c: Int) -> (Int, Int, Int, Int) {
            let table = schema.column(c).table
            let position = tables.firstIndex(of: table) ?? Int.max
            let distance = tables.compactMap { schema.distance($0, table) }.min() ?? 99
            // Of a table's columns one word names, the one that names its rows ("the names of songs":
            // song_name, not artist_name), or one named after the table.
            let column = schema.column(c)
            let tableWords = schema.tables[table].words.flatMap(Lexicon.forms)
            let own = schema.tables[table].labels.contains(c) || column.words.contains(where: tableWords.contains) ? 0 : 1
            // Whole-name matches were listed before partial ones; keep that order last.
            return (position == Int.max ? 1 : 0, position == Int.max ? distance : position, own, columns.firstIndex(of: c) ?? 0)
        }
        return columns.min { rank($0) < rank($1) }
    }

    /// The numeric columns that hold a count of what a plural word names: "rooms" for room_count,
    /// num_rooms or number_of_rooms ("the number of rooms of each apartment", "more than 2
    /// bedrooms"). Not room_number, which numbers a room.
    func countColumns(of word: String) -> [Int] {
        guard word.count > 3, word.hasSuffix("s"), !Lexicon.stopWords.contains(word) else { return [] }
        return schema.columnList.indices.filter { c in
            let column = schema.column(c)
            guard column.kind == .number || column.numberKeptAsText, !column.isKey else { return false }
            let names = column.withoutTable ?? column.words
            let counted: String?
            switch names.count {
            case 2 where names[1] == "count": counted = names[0]
            case 2 where ["num", "count"].contains(names[0]): counted = names[1]
            case 3 where ["number", "no", "count"].contains(names[0]) && names[1] == "of": counted = names[2]
            default: counted = nil
            }
            return counted.map { Lexicon.matches(question: word, schema: $0) } ?? false
        }
    }

    /// For each of `words`, the one word of the schema's table and column names one letter away from
    /// it (a letter added, dropped, changed, or two swapped: "deparment", "attendnance", "licence"),
    /// both of at least seven letters and the question's word held by no name otherwise; nil unless
    /// every word has one.
    func schemaWords(respelling words: [String]) -> [String]? {
        guard words.allSatisfy({ $0.count >= 7 && $0.allSatisfy(\.isLetter) }) else { return nil }
        let names = Set(schema.tables.flatMap(\.words) + schema.columnList.flatMap(\.words))
        var out: [String] = []
        for word in words {
            let near = names.filter { $0.count >= 7 && Lexicon.oneEditApart(word, $0) }
            guard near.count == 1, let name = near.first, !names.contains(where: { Lexicon.matches(question: word, schema: $0) }) else { return nil }
            out.append(name)
        }
        return out
    }

    func pickNumeric(_ columns: [Int], near tables: [Int]) -> Int? {
        pickColumn(columns.filter { schema.column($0).kind == .number && !schema.column($0).isKey }, near: tables)
    }

    /// Of several columns named beside a number, the numeric one it is compared with: one that is
    /// no key, else a key ("next entry ID greater than 8": a key's numbers are compared when named).
    func pickCompared(_ columns: [Int], near tables: [Int]) -> Int? {
        pickNumeric(columns, near: tables) ?? pickColumn(columns.filter { schema.column($0).kind == .number }, near: tables)
    }

    /// Of several columns, a numeric one, else one of numbers kept as text: what a total or an
    /// average may measure ("the average speed" of a text Speed holding '55', '61.2').
    func pickMeasured(_ columns: [Int], near tables: [Int]) -> Int? {
        pickNumeric(columns, near: tables)
            ?? pickColumn(columns.filter { schema.column($0).numberKeptAsText && !schema.column($0).isKey }, near: tables)
    }

    /// Of several columns, one of numbers kept as text that the database orders as it would the
    /// numbers: all of one width ('31', '43'), so "the oldest host" ranks by a text Age.
    func pickOrderedAsText(_ columns: [Int], near tables: [Int]) -> Int? {
        pickColumn(columns.filter { schema.column($0).orderedAsNumbers && !schema.column($0).isKey }, near: tables)
    }

    func pickText(_ columns: [Int], near tables: [Int]) -> Int? {
        pickColumn(columns.filter { schema.column($0).kind == .text }, near: tables)
    }

    /// Of the columns holding a value, the one named beside the value; of several so named, or
    /// none, the one in the table named just before it, else the nearest.
    func preferred(_ entries: [ValueIndex.Entry], near tables: [Int], mentioned: [Int]? = nil, table: Int? = nil) -> ValueIndex.Entry {
        // Of the columns named, the one in the table named, else the nearest ("a player of gender 'M'",
        // where coaches have a gender too).
        var entries = entries
        if let mentioned, case let hits = entries.filter({ mentioned.contains($0.column) }), !hits.isEmpty {
            if hits.count == 1 { return hits[0] }
            entries = hits
        }
        if let table, let hit = entries.first(where: { schema.column($0.column).table == table }) { return hit }
        let columns = entries.map(\.column)
        let best = pickColumn(columns, near: tables) ?? columns[0]
        return entries.first { $0.column == best } ?? entries[0]
    }

    /// Whether a column holds lists of names ("Jimi Hendrix, Noel Redding"), so a name in it is
    /// matched inside the text rather than as the whole value.
    func isListColumn(_ column: Int, phrase: String) -> Bool {
        values.listColumns.contains(column) && !values.containing(ValueIndex.words(phrase)).filter { $0.column == column }.isEmpty
    }

    /// The date column for a year or month: one the question's verbs name, else the first date
    /// column of the table (a table may have several: a hire date and a birth date).
    func dateColumn(for table: Int, plan: QueryPlan?, hint: [Int] = []) -> Int? {
        if let hinted = hint.first { return hinted }
        let candidates = [table] + (plan.map { [$0.root] + $0.through } ?? [])
        // The nearest table's date, else its whole-number year column ("Hire_Year"), before another table's.
        for t in candidates {
            let dates = schema.tables[t].columns.filter { schema.column($0).kind == .date }
            if let named = dates.first(where: { c in !schema.column(c).words.contains { ["birth", "born", "dob"].contains($0) } }) { return named }
            if let any = dates.first { return any }
            if let year = schema.tables[t].columns.first(where: { schema.column($0).isYear }) { return year }
        }
        return nil
    }

    /// A whole-number column of ages in `table`, for "older", "youngest".
    func ageColumn(in table: Int, ranked: Bool = false) -> Int? {
        schema.tables[table].columns.first { c in
            isMeasurable(c, ranked: ranked) && schema.column(c).words.contains { $0 == "age" || $0 == "ages" }
        }
    }

    /// Whether a column holds numbers an adjective may rank or compare: a number column, or numbers
    /// kept as text ('43'), which comparisons read as numbers (`PlanWriting.number`) but an order
    /// ranks as text, so only when all are of one width ("the oldest host" of a text Age).
    func isMeasurable(_ c: Int, ranked: Bool) -> Bool {
        let column = schema.column(c)
        return !column.isKey && (column.kind == .number || (ranked ? column.orderedAsNumbers : column.numberKeptAsText))
    }

    /// Which way a superlative ranks `column`: "oldest" is the largest age but the earliest date.
    func ranksDescending(_ word: String, _ descending: Bool, column: Int) -> Bool {
        if ["oldest", "youngest", "older", "younger"].contains(word), isMeasurable(column, ranked: false) { return word.hasPrefix("old") }
        // A rank counts down to the best: the highest rank is number 1.
        let rank = schema.column(column)
        if rank.kind == .number, !rank.isKey, ["rank", "ranking"].contains(rank.words.last ?? ""),
            ["highest", "lowest", "best", "worst", "top", "bottom"].contains(word)
        {
            return !descending
        }
        return descending
    }

    /// The column an adjective or unit points at in `table`: "longest" → a duration, "most
    /// expensive" → a price, "highest paid" → a salary, "largest" → a size or amount; `ranked`
    /// when the rows are ranked by it, not compared with a number.
    func adjectiveColumn(_ word: String, in table: Int, ranked: Bool = false) -> Int? {
        let lexicon: [String]
        switch word {
        case "longest", "shortest", "longer", "shorter", "minute", "minutes", "second", "seconds", "hour", "hours", "ms", "millisecond",
            "milliseconds":
            lexicon = Lexicon.durationColumnWords
        case "expensive", "cheapest", "cheaper", "costly", "priced", "pricier":
            lexicon = Lexicon.priceColumnWords
        case "paid":
            lexicon = Lexicon.payColumnWords
        case "dollars":
            // An amount of money ("over $20"): the table's amount, else its price.
            lexicon = Lexicon.moneyColumnWords
        case "tallest", "taller":
            lexicon = ["height", "tall"]
        case "highest", "lowest", "higher", "lower":
            // "the highest mountain", "mountains higher than 5600": of rows ranked or compared by no
            // column named, a height.
            lexicon = ["height", "elevation", "altitude"]
        case "largest", "biggest", "smallest", "larger", "bigger", "smaller", "heaviest", "lightest":
            lexicon = Lexicon.sizeColumnWords + Lexicon.moneyColumnWords
        case "oldest", "youngest", "newest", "latest", "earliest", "recent", "recently", "older", "younger":
            if ["oldest", "youngest", "older", "younger"].contains(word), let age = ageColumn(in: table, ranked: ranked) { return age }
            if ["older", "younger"].contains(word) { return nil }
            let dates = schema.tables[table].columns.filter { schema.column($0).kind == .date }
            if ["oldest", "youngest"].contains(word),
                let birth = dates.first(where: { schema.column($0).words.contains { ["birth", "born", "dob"].contains($0) } })
            {
                return birth
            }
            return dates.first
        default:
            return nil
        }
        let numeric = schema.tables[table].columns.filter { isMeasurable($0, ranked: ranked) }
        if lexicon == Lexicon.durationColumnWords {
            // "the shortest person": of a table that keeps no duration, the height.
            let short = ["shortest", "shorter"].contains(word) ? numeric.first { schema.column($0).words.contains("height") } : nil
            return numeric.first { schema.column($0).words.contains(where: Lexicon.isDuration) } ?? short
        }
        for word in lexicon {
            if let c = numeric.first(where: { schema.column($0).words.contains { Lexicon.matches(question: word, schema: $0) } }) { return c }
        }
        return nil
    }

    /// Converts a number in `unit` to the unit a column's name says ("20 minutes" for a milliseconds column).
    func convert(_ n: Double, unit: String?, to column: Int) -> Double {
        guard let unit else { return n }
        let seconds: Double
        switch unit {
        case "hour", "hours": seconds = n * 3600
        case "minute", "minutes": seconds = n * 60
        case "second", "seconds": seconds = n
        case "ms", "millisecond", "milliseconds": seconds = n / 1000
        case "day", "days": seconds = n * 86400
        default: return n
        }
        let words = schema.column(column).words.joined(separator: " ")
        if words.contains("milli") || words == "ms" { return seconds * 1000 }
        if words.contains("minute") { return seconds / 60 }
        if words.contains("hour") { return seconds / 3600 }
        return seconds
    }

    /// The amount a sale brought in, nearest to `tables`: a total/amount column of a table, or
    /// price × quantity of a line table; never a bare price without a quantity.
    func moneyMeasure(near tables: [Int]) -> QueryPlan.Measure? {
        // Of a table with more than one amount (claimed and paid) the question must say which.
        let candidates = schema.tables.indices.compactMap { t in amount(of: t).map { ($0.measure, t) } }
        guard !candidates.isEmpty else { return nil }
        func distance(_ t: Int) -> Int { tables.compactMap { schema.distance($0, t) }.min() ?? 99 }
        return candidates.min { distance($0.1) < distance($1.1) }?.0
    }

    /// An amount a table keeps: one (price × quantity, or its one amount column), or several.
    enum Amount {
        case sole(QueryPlan.Measure)
        case several

        var measure: QueryPlan.Measure? { if case .sole(let m) = self { m } else { nil } }
    }

    /// What table `t` itself keeps of an amount: price × quantity, else its amount columns;
    /// `nil` when it keeps none.
    func amount(of t: Int) -> Amount? {
        let numeric = schema.tables[t].columns.filter { schema.column($0).kind == .number && !schema.column($0).isKey }
        func named(_ words: [String]) -> [Int] { numeric.filter { c in schema.column(c).words.contains(where: words.contains) } }
        if let price = named(["price", "cost", "rate"]).first, let quantity = named(["quantity", "qty", "units"]).first {
            return .sole(.product(price, quantity))
        }
        let amounts = named(["total", "amount", "revenue", "sales", "subtotal"])
        guard !amounts.isEmpty else { return nil }
        return amounts.count == 1 ? .sole(.column(amounts[0])) : .several
    }
}

import PorticoAskEngine

extension Interpreter {
    /// Builds the plan from what the question's parts mean, in the order they came: one stage
    /// after another over an `Assembly`, each giving some of the parts their role.
    func assemble(_ items: [Item]) throws(NotUnderstood) -> Understood {
        var assembly = Assembly(interpreter: self, items: items)
        assembly.readComparisonsWithAverage()
        assembly.readGrouping()
        assembly.readSubject()
        try assembly.readMeasure()
        try assembly.chooseRoot()
        try assembly.readFilters()
        try assembly.placeColumns()
        let counted = try assembly.putTogether()
        try assembly.shareValues(counted: counted != nil)
        if let counted { return counted }
        return try assembly.readOrderAndFinish()
    }

    /// What the stages of `assemble` share: the question's parts, which of them have a role, and
    /// the plan as it takes shape.
    struct Assembly {
        typealias Item = Interpreter.Item
        typealias Understood = Interpreter.Understood
        typealias NotUnderstood = Interpreter.NotUnderstood

        let interpreter: Interpreter
        let items: [Item]
        var confidence = 1.0
        /// Items already given a role.
        var used = Set<Int>()
        var againstAverage: [(op: QueryPlan.Comparison, columns: [Int]?, word: String, at: Int)] = []
        var orderColumns: [(columns: [Int], at: Int)] = []
        var grouping: QueryPlan.Grouping?
        /// The grouping by a table was asked with "each" or "every" ("the revenue of each
        /// manufacturer"), not "per" or "by" ("requested by entrepreneurs").
        var groupedByEach = false
        /// "by total spending": the ranking measure, not a grouping.
        var rankedBy: Int?
        var groupThrough: [Int] = []
        var subject: Int?
        /// A second value of a column of the root, both asked for: read by `shareValues`.
        var sharedValues: (column: Int, second: QueryPlan.Condition)?
        /// "which country has the most customers": a column answers.
        var subjectColumn: Int?
        var limit: Int?
        var measure: QueryPlan.Expression?
        var counted: Int?
        var averageOfCount = false
        var aggregateFunction: QueryPlan.Function?
        var superlative: (descending: Bool, word: String, at: Int)?
        var functionIndex: Int?
        var moreFunctions: [QueryPlan.Function] = []
        /// Other columns of the measured one's table under a function ("the average latitude and longitude").
        var moreMeasured: [QueryPlan.Expression] = []
        /// The table the question is about, once chosen.
        var root0 = 0
        var plan = QueryPlan(root: 0)
        var related: [Int] = []
        var shown: [Int] = []

        init(interpreter: Interpreter, items: [Item]) {
            self.interpreter = interpreter
            self.items = items
        }

        var schema: SchemaModel { interpreter.schema }
        var values: ValueIndex { interpreter.values }

        func isTable(_ k: Int) -> Int? { if k < items.count, case .table(let t) = items[k] { return t } else { return nil } }
        func isColumns(_ k: Int) -> [Int]? { if k < items.count, case .columns(let cs) = items[k] { return cs } else { return nil } }
        func next(after k: Int, _ accept: (Item) -> Bool) -> Int? { ((k + 1)..<items.count).first { !used.contains($0) && accept(items[$0]) } }
    }
}

extension Interpreter.Assembly {
    /// Parts of a question that change its answer: when one was given no role, the answer would
    /// silently ignore it, so the engine refuses instead.
    func mustBePlaced(_ item: Item) -> Bool {
        switch item {
        case .count, .function, .average, .top, .number, .distinct, .orderBy, .direction, .alphabetical, .compare, .year, .month, .day, .value,
            .text, .negation, .range:
            return true
        default:
            return false
        }
    }

    func describe(_ item: Item) -> String {
        switch item {
        case .count: return "a count"
        case .function(let f): return "'\(["SUM": "total", "MIN": "minimum", "MAX": "maximum", "AVG": "average"][f.rawValue] ?? "a count")'"
        case .average: return "'average'"
        case .top(let n): return "the top \(n)"
        case .number(let n, _): return "the number \(numberText(n))"
        case .distinct: return "'distinct'"
        case .orderBy, .direction, .alphabetical: return "the order asked for"
        case .compare(_, let word): return "'\(word)'"
        case .year(let y): return "the year \(y)"
        case .month: return "the month"
        case .day(let d): return "the day \(d)"
        case .value(_, let phrase, _): return "'\(phrase)'"
        case .text(let t): return "'\(t)'"
        case .negation: return "the negation"
        default: return "a word"
        }
    }

    func numberText(_ n: Double) -> String { n == n.rounded() && abs(n) < 1e15 ? String(Int64(n)) : String(n) }

    var noMoney: String {
        "the built-in engine found no amount to add up (a column such as total, amount or price × quantity); name the column"
    }

    func entityTable(_ g: QueryPlan.Grouping) -> Int? {
        if case .entity(let t) = g { return t }
        return nil
    }

    func firstTable(_ items: [Item], _ used: Set<Int>) -> Int? {
        for (k, item) in items.enumerated() where !used.contains(k) { if case .table(let t) = item { return t } }
        return nil
    }

    func tablesBefore(_ k: Int, _ items: [Item]) -> [Int] {
        items[..<k].reversed().compactMap { if case .table(let t) = $0 { return t } else { return nil } }
    }

    func measureTable(_ m: QueryPlan.Expression?) -> Int? {
        switch m {
        case .aggregate(_, .column(let c))?, .column(let c)?: return schema.column(c).table
        case .aggregate(_, .product(let c, _))?: return schema.column(c).table
        default: return nil
        }
    }

    func isMeasured(_ c: Int, _ m: QueryPlan.Expression) -> Bool {
        switch m {
        case .aggregate(_, .column(let x)), .column(let x): return x == c
        case .aggregate(_, .product(let a, let b)): return a == c || b == c
        default: return false
        }
    }

    func covers(_ g: QueryPlan.Grouping, _ c: Int) -> Bool {
        switch g {
        case .entity(let t): return schema.tables[t].labels.contains(c)
        case .column(let x), .bucket(let x, _): return x == c
        }
    }

    func merge(_ a: QueryPlan.Condition, _ b: QueryPlan.Condition) -> QueryPlan.Condition {
        if case .oneOf(let c1, let v1) = a, case .oneOf(let c2, let v2) = b, c1 == c2 { return .oneOf(c1, v1 + v2) }
        if case .any(let either) = a { return .any(either + [b]) }
        return .any([a, b])
    }

    /// A verb of the question that names a date column ("hired", "admitted"), if any.
    func dateHint(_ items: [Item]) -> [Int] {
        func columnsAt(_ k: Int) -> Bool { if items.indices.contains(k), case .columns = items[k] { true } else { false } }
        return items.indices.flatMap { k -> [Int] in
            // A date listed among the columns asked for ("the theme, date and attendance") is shown, not what a year is of.
            if case .columns(let cs) = items[k], !columnsAt(k - 1), !columnsAt(k + 1) { return cs.filter { schema.column($0).kind == .date } }
            if case .dateVerb(let cs) = items[k] { return cs }
            return []
        }
    }
}

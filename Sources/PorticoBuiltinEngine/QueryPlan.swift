import Foundation
import PorticoAskEngine
import PorticoBase

/// The built-in engine's intermediate form of a question: what is measured, grouped, filtered,
/// ordered and limited, over which tables. Compiled to SQL per dialect; the joins follow the
/// foreign keys from the root table to every table the plan names.
struct QueryPlan: Sendable, Equatable {
    enum Function: String, Sendable {
        case count = "COUNT", sum = "SUM", avg = "AVG", min = "MIN", max = "MAX"
        /// COUNT(DISTINCT …): "how many different cities".
        case countDistinct = "COUNT(DISTINCT"
    }
    enum Bucket: Sendable, Equatable { case year, month, yearMonth }

    /// A value a plan computes.
    indirect enum Expression: Sendable, Equatable {
        case column(Int)
        /// COUNT(*) of the joined rows.
        case countRows
        case aggregate(Function, Measure)
        case bucket(Int, Bucket)

        /// Whether it counts rows or values.
        var isCount: Bool {
            switch self {
            case .countRows, .aggregate(.count, _), .aggregate(.countDistinct, _): true
            default: false
            }
        }
    }

    enum Measure: Sendable, Equatable {
        case column(Int)
        /// price × quantity, a line's amount.
        case product(Int, Int)
    }

    enum Comparison: String, Sendable { case equal = "=", greater = ">", greaterOrEqual = ">=", less = "<", lessOrEqual = "<=", notEqual = "<>" }

    enum Literal: Sendable, Equatable {
        case number(Double)
        case text(String)
    }

    indirect enum Condition: Sendable, Equatable {
        case compare(Expression, Comparison, Literal)
        case oneOf(Int, [String])
        case like(Int, String)
        /// "without the letter M in their first name": no match of the pattern.
        case notLike(Int, String)
        case notNull(Int)
        /// "customers with no company": the column holds nothing (no value, or empty text).
        case isNull(Int)
        /// Rows of the root table with no row in `table` referring to them.
        case none(table: Int)
        /// Rows of the root table that have a row in `table` matching the condition.
        case some(table: Int, Condition)
        /// Rows whose value of the column is also that of a row of the same table matching the
        /// condition: "the colleges that have both midfielders and defenders".
        case shares(Int, Condition)
        case any([Condition])
        case all([Condition])
        /// The column against its average over the whole table: "earn more than the average salary".
        case comparedToAverage(Int, Comparison)
        /// A yes/no column: "low cost airlines" (is_low_cost), "airlines that are not low cost".
        case flag(Int, Bool)
        /// A term's filter (`SchemaModel.filters`): the rows of its table the app's word means.
        case named(Int)
    }

    enum Grouping: Sendable, Equatable {
        /// One row per row of a table: grouped by its key, shown by its labels.
        case entity(Int)
        case column(Int)
        case bucket(Int, Bucket)
    }

    var root: Int
    /// Columns shown as they are (lists).
    var shown: [Int] = []
    var measures: [Expression] = []
    var grouping: Grouping?
    var conditions: [Condition] = []
    var having: [Condition] = []
    var order: [(Expression, descending: Bool)] = []
    var limit: Int?
    /// The average of the grouped measure, over the groups ("average number of tracks per invoice").
    var averageOverGroups = false
    /// How many groups pass the HAVING ("how many playlists contain more than 100 tracks").
    var countGroups = false
    /// Each shown row once ("which cities do customers live in").
    var distinct = false
    /// Tables the answer must pass through even when nothing of theirs is shown.
    var through: [Int] = []
    /// The table whose rows COUNT(*) counts, so a join that repeats them counts each once.
    var counted: Int?
    /// Foreign-key columns the question named, for tables joined by more than one key
    /// (a flight's source and destination airport).
    var via: Set<Int> = []

    static func == (a: QueryPlan, b: QueryPlan) -> Bool {
        a.root == b.root && a.shown == b.shown && a.measures == b.measures && a.grouping == b.grouping && a.conditions == b.conditions
            && a.having == b.having && a.limit == b.limit && a.averageOverGroups == b.averageOverGroups && a.countGroups == b.countGroups
            && a.distinct == b.distinct
            && a.order.map(\.0) == b.order.map(\.0) && a.order.map(\.descending) == b.order.map(\.descending)
    }

    /// The chart that suits what the question asked for.
    var chartHint: String {
        switch grouping {
        case .bucket?: return "line"
        case .entity?, .column?: return measures.isEmpty ? "table" : "bar"
        case nil: return "table"
        }
    }
}

extension QueryPlan {
    /// Whether a condition of its own rows is on column `c` (a value, a comparison, a match).
    func hasCondition(on c: Int) -> Bool {
        conditions.contains {
            switch $0 {
            case .oneOf(let x, _), .like(let x, _), .notLike(let x, _), .notNull(let x), .isNull(let x), .comparedToAverage(let x, _), .flag(let x, _):
                return x == c
            case .compare(.column(let x), _, _): return x == c
            default: return false
            }
        }
    }
}

/// Writes a plan as one SELECT in a dialect.
struct PlanCompiler {
    let schema: SchemaModel
    let dialect: SQLDialect

    /// Why a plan could not be written as SQL.
    struct Unwritable: Error {
        let message: String
        /// The keys the question could go through, when it is that the question named none of them.
        var choices: [Int] = []
    }

    func sql(_ plan: QueryPlan) -> String? { try? compile(plan).get() }

    func compile(_ plan: QueryPlan) -> Result<String, Unwritable> { compileCounting(plan).map(\.sql) }

    /// Two keys or more between the same tables, and the question named none of them.
    static func ambiguity(_ edges: [SchemaModel.Edge], _ schema: SchemaModel) -> Unwritable {
        let names = edges.map { "\(schema.tables[$0.from].name).\(schema.column($0.fromColumn).name)" }
        return Unwritable(
            message: "the question can go through \(names.joined(separator: " or ")); name the one it means (e.g. its column's words), or configure an LLM",
            choices: edges.map(\.fromColumn))
    }

    /// The SQL and how many tables it reads (the root and every table joined).
    func compileCounting(_ plan: QueryPlan) -> Result<(sql: String, tables: Int), Unwritable> {
        var writing = PlanWriting(compiler: self, plan: plan)
        if let failure = writing.join(tablesTouched(by: plan)) ?? writing.refuseMeasuresCountedTwice() { return .failure(failure) }
        return writing.write()
    }

    /// Every table the plan touches: the root, what it names, and the tables of every column it uses.
    func tablesTouched(by plan: QueryPlan) -> Set<Int> {
        var tables = Set(plan.through)
        func note(_ e: QueryPlan.Expression) {
            switch e {
            case .column(let c), .bucket(let c, _): tables.insert(schema.column(c).table)
            case .aggregate(_, .column(let c)): tables.insert(schema.column(c).table)
            case .aggregate(_, .product(let a, let b)):
                tables.insert(schema.column(a).table)
                tables.insert(schema.column(b).table)
            case .countRows: break
            }
        }
        func note(_ c: QueryPlan.Condition) {
            switch c {
            case .compare(let e, _, _): note(e)
            case .oneOf(let col, _), .like(let col, _), .notLike(let col, _), .notNull(let col), .isNull(let col), .comparedToAverage(let col, _),
                .flag(let col, _):
                tables.insert(schema.column(col).table)
            case .none, .some: break
            case .shares(let col, _): tables.insert(schema.column(col).table)
            case .named(let f): tables.insert(schema.filters[f].table)
            case .any(let cs), .all(let cs): cs.forEach(note)
            }
        }
        plan.shown.forEach { tables.insert(schema.column($0).table) }
        plan.measures.forEach(note)
        plan.conditions.forEach(note)
        plan.having.forEach(note)
        plan.order.forEach { note($0.0) }
        switch plan.grouping {
        case .entity(let t)?: tables.insert(t)
        case .column(let c)?, .bucket(let c, _)?: tables.insert(schema.column(c).table)
        case nil: break
        }
        return tables
    }

    /// Text read as a number, in the dialect's words.
    func cast(_ sql: String) -> String {
        switch dialect {
        case .sqlite: "CAST(\(sql) AS REAL)"
        case .postgres: "CAST(\(sql) AS NUMERIC)"
        case .mysql: "CAST(\(sql) AS DECIMAL(38, 10))"
        }
    }

    func q(_ name: String) -> String {
        dialect == .mysql
            ? "`" + name.doubling("`") + "`" : "\"" + name.doubling("\"") + "\""
    }

    func bucket(_ c: Int, _ column: String, _ bucket: QueryPlan.Bucket) -> String {
        if schema.column(c).storedAsText {
            switch bucket {
            case .year: return "substr(\(column), 1, 4)"
            case .month: return "substr(\(column), 6, 2)"
            case .yearMonth: return "substr(\(column), 1, 7)"
            }
        }
        switch (dialect, bucket) {
        case (.sqlite, .year): return "strftime('%Y', \(column))"
        case (.sqlite, .month): return "strftime('%m', \(column))"
        case (.sqlite, .yearMonth): return "strftime('%Y-%m', \(column))"
        case (.postgres, .year): return "to_char(\(column), 'YYYY')"
        case (.postgres, .month): return "to_char(\(column), 'MM')"
        case (.postgres, .yearMonth): return "to_char(\(column), 'YYYY-MM')"
        case (.mysql, .year): return "DATE_FORMAT(\(column), '%Y')"
        case (.mysql, .month): return "DATE_FORMAT(\(column), '%m')"
        case (.mysql, .yearMonth): return "DATE_FORMAT(\(column), '%Y-%m')"
        }
    }
}

extension QueryPlan.Condition {
    /// Whether the condition lets a row hold one of several things: what an "or" in the question
    /// reads as ("Rock or Jazz", "lower than 600 or higher than 900").
    var holdsAnAlternative: Bool {
        switch self {
        case .any: true
        case .oneOf(_, let values): values.count > 1
        case .all(let cs): cs.contains(where: \.holdsAnAlternative)
        case .some(_, let nested): nested.holdsAnAlternative
        default: false
        }
    }
}

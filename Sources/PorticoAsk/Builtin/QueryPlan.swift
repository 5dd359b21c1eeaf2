import Foundation
import PorticoData

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
            case .oneOf(let x, _), .like(let x, _), .notLike(let x, _), .notNull(let x), .comparedToAverage(let x, _), .flag(let x, _): return x == c
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
        let cannotJoin = Unwritable(message: "the built-in engine could not join the tables the question needs; name fewer tables or configure an LLM")
        // Every table the plan touches, joined along the shortest key paths from the root.
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
            case .oneOf(let col, _), .like(let col, _), .notLike(let col, _), .notNull(let col), .comparedToAverage(let col, _), .flag(let col, _):
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
        var alias: [Int: String] = [plan.root: "t0"]
        var joins: [String] = []
        // The join tree: each joined table's parent, and whether it is on the many side of its key.
        var parent: [Int: Int] = [:]
        var fansOut: Set<Int> = []
        for table in tables.sorted() where alias[table] == nil {
            guard let path = schema.path(from: plan.root, to: table) else { return .failure(cannotJoin) }
            var at = plan.root
            for found in path {
                var edge = found
                let next = edge.from == at ? edge.to : edge.from
                defer { at = next }
                if alias[next] != nil { continue }
                // Two keys between the same tables: the question must have named one.
                let parallel = schema.edges.filter { $0.from == edge.from && $0.to == edge.to }
                if parallel.count > 1 {
                    guard let named = parallel.first(where: { plan.via.contains($0.fromColumn) }) else {
                        return .failure(Self.ambiguity(parallel, schema))
                    }
                    edge = named
                }
                let name = "t\(alias.count)"
                alias[next] = name
                parent[next] = at
                if edge.to == at, edge.from == next { fansOut.insert(next) }
                guard let toColumn = edge.toColumn else { return .failure(cannotJoin) }
                let left = "\(alias[edge.from] ?? name).\(q(schema.column(edge.fromColumn).name))"
                let right = "\(alias[edge.to] ?? name).\(q(schema.column(toColumn).name))"
                joins.append("JOIN \(q(schema.tables[next].name)) \(name) ON \(left) = \(right)")
            }
        }
        func col(_ c: Int) -> String {
            let column = schema.column(c)
            if let expression = column.expression { return "(" + expression.render(alias: alias[column.table] ?? "t0") + ")" }
            return "\(alias[column.table] ?? "t0").\(q(column.name))"
        }
        // Whether the joins repeat a table's rows: a one-to-many step off the way from the root to it,
        // or a many-to-one step on that way after a one-to-many one (customers → orders → lines →
        // products meets a product once per line).
        func repeats(_ t: Int) -> Bool {
            var way: [Int] = [t]
            var at = t
            while let up = parent[at] {
                way.append(up)
                at = up
            }
            if fansOut.contains(where: { !way.contains($0) }) { return true }
            var fanned = false
            for table in way.reversed().dropFirst() {  // from the root's child down to t
                if fansOut.contains(table) {
                    fanned = true
                } else if fanned {
                    return true
                }
            }
            return false
        }
        let countedTable = plan.counted ?? (plan.grouping == nil ? plan.root : nil)
        var countAll = "COUNT(*)"
        if let t = countedTable, repeats(t), let key = schema.tables[t].primaryKey { countAll = "COUNT(DISTINCT \(col(key)))" }
        for m in plan.measures {
            guard case .aggregate(let f, let measured) = m, f != .min, f != .max, f != .countDistinct else { continue }
            let t: Int
            switch measured {
            case .column(let c): t = schema.column(c).table
            case .product(let c, _): t = schema.column(c).table
            }
            if repeats(t) {
                return .failure(
                    Unwritable(
                        message: "the joins this question needs would count \(schema.tables[t].name) rows more than once; "
                            + "ask about fewer tables or configure an LLM"))
            }
        }
        // A column of numbers kept as text, as a number: what is totalled or averaged.
        func number(_ c: Int) -> String { schema.column(c).numberKeptAsText ? cast(col(c)) : col(c) }
        func expression(_ e: QueryPlan.Expression) -> String {
            switch e {
            case .column(let c): return col(c)
            case .countRows: return countAll
            case .aggregate(.countDistinct, .column(let c)): return "COUNT(DISTINCT \(col(c)))"
            case .aggregate(let f, .column(let c)): return "\(f.rawValue)(\(number(c)))"
            case .aggregate(let f, .product(let a, let b)): return "\(f.rawValue)(\(number(a)) * \(number(b)))"
            case .bucket(let c, let bucket): return self.bucket(c, col(c), bucket)
            }
        }
        func literal(_ l: QueryPlan.Literal) -> String {
            switch l {
            case .number(let d): return d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(d)
            case .text(let s):
                // MySQL reads a backslash in a string as an escape.
                let escaped = dialect == .mysql ? s.replacingOccurrences(of: "\\", with: "\\\\") : s
                return "'" + escaped.replacingOccurrences(of: "'", with: "''") + "'"
            }
        }
        /// Why a condition could not be written, when it is that the question named no key of two.
        var ambiguity: Unwritable?
        func condition(_ c: QueryPlan.Condition) -> String? {
            switch c {
            case .compare(let e, let op, let l): return "\(expression(e)) \(op.rawValue) \(literal(l))"
            case .oneOf(let c, let values):
                return values.count == 1
                    ? "\(col(c)) = \(literal(.text(values[0])))" : "\(col(c)) IN (\(values.map { literal(.text($0)) }.joined(separator: ", ")))"
            case .like(let c, let pattern): return "\(col(c)) LIKE \(literal(.text(pattern)))"
            case .notLike(let c, let pattern): return "\(col(c)) NOT LIKE \(literal(.text(pattern)))"
            case .notNull(let c): return "\(col(c)) IS NOT NULL"
            case .flag(let c, let yes): return "\(col(c)) = \(yes ? "TRUE" : "FALSE")"
            case .comparedToAverage(let c, let op):
                let column = schema.column(c)
                let averaged = column.expression.map { $0.render(alias: nil) } ?? q(column.name)
                return "\(col(c)) \(op.rawValue) (SELECT AVG(\(averaged)) FROM \(q(schema.tables[column.table].name)))"
            case .named(let f):
                let filter = schema.filters[f]
                return "(" + filter.sql.render(alias: alias[filter.table] ?? "t0") + ")"
            case .none(let table), .some(let table, _):
                guard let edge = schema.edges.first(where: { $0.from == table && $0.to == plan.root }), let key = edge.toColumn else { return nil }
                var inner =
                    "SELECT 1 FROM \(q(schema.tables[table].name)) x WHERE x.\(q(schema.column(edge.fromColumn).name)) = t0.\(q(schema.column(key).name))"
                if case .some(_, let nested) = c {
                    guard let nestedSQL = subCondition(nested, table: table) else { return nil }
                    inner += " AND " + nestedSQL
                    return "EXISTS (\(inner))"
                }
                return "NOT EXISTS (\(inner))"
            case .shares(let c, let nested):
                let table = schema.column(c).table
                guard let nestedSQL = subCondition(nested, table: table) else { return nil }
                return "\(col(c)) IN (SELECT x.\(q(schema.column(c).name)) FROM \(q(schema.tables[table].name)) x WHERE \(nestedSQL))"
            case .any(let cs):
                let parts = cs.compactMap(condition)
                return parts.count == cs.count ? "(" + parts.joined(separator: " OR ") + ")" : nil
            case .all(let cs):
                let parts = cs.compactMap(condition)
                return parts.count == cs.count ? "(" + parts.joined(separator: " AND ") + ")" : nil
            }
        }
        // A condition inside EXISTS, on the subquery's table `x` (and tables it references directly).
        func subCondition(_ c: QueryPlan.Condition, table: Int) -> String? {
            switch c {
            case .oneOf(let column, let values) where schema.column(column).table == table:
                return "x.\(q(schema.column(column).name)) IN (\(values.map { literal(.text($0)) }.joined(separator: ", ")))"
            case .oneOf(let column, let values):
                let target = schema.column(column).table
                // Two keys from the subquery's table to the value's: only the one the question named.
                let edges = schema.edges.filter { $0.from == table && $0.to == target }
                guard let edge = edges.count == 1 ? edges.first : edges.first(where: { plan.via.contains($0.fromColumn) }), let key = edge.toColumn
                else {
                    if edges.count > 1 { ambiguity = Self.ambiguity(edges, schema) }
                    return nil
                }
                return "x.\(q(schema.column(edge.fromColumn).name)) IN (SELECT \(q(schema.column(key).name)) FROM \(q(schema.tables[target].name)) "
                    + "WHERE \(q(schema.column(column).name)) IN (\(values.map { literal(.text($0)) }.joined(separator: ", "))))"
            default: return nil
            }
        }

        var select: [String] = []
        var group: [String] = []
        switch plan.grouping {
        case .entity(let t)?:
            // The key beside the labels: two rows may share a name, and a table with no name column is
            // told apart by its key ("each department" of a table keyed by its code).
            if let key = schema.tables[t].primaryKey, !schema.tables[t].labels.contains(key) { select.append(col(key)) }
            select += schema.tables[t].labels.map(col)
            if let key = schema.tables[t].primaryKey { group.append(col(key)) } else { group += schema.tables[t].labels.map(col) }
        case .column(let c)?:
            select.append(col(c))
            group.append(col(c))
        case .bucket(let c, let b)?:
            let name = b == .year ? "year" : "month"
            select.append("\(bucket(c, col(c), b)) AS \(name)")
            group.append(name)
        case nil: break
        }
        select += plan.shown.map(col)
        for (i, m) in plan.measures.enumerated() { select.append(expression(m) + (plan.measures.count == 1 ? " AS value" : " AS value\(i + 1)")) }
        if select.isEmpty { return .failure(cannotJoin) }
        if plan.countGroups, select.isEmpty || plan.measures.isEmpty { select = group.isEmpty ? select : [group[0]] }
        // A list whose joins repeat its rows ("passengers who booked a first class seat") shows each once.
        let distinct = plan.distinct || plan.measures.isEmpty && group.isEmpty && repeats(plan.root)
        if distinct, !plan.distinct, let key = schema.tables[plan.root].primaryKey, !select.contains(col(key)),
            plan.shown.allSatisfy({ schema.column($0).table == plan.root })
        {
            // Each row once, not each value once: two students named Sarah are two students.
            select.insert(col(key), at: 0)
        }
        if distinct {
            // PostgreSQL orders a DISTINCT list only by what it shows.
            for (e, _) in plan.order where !select.contains(expression(e)) { select.append(expression(e)) }
        }
        var from = " FROM \(q(schema.tables[plan.root].name)) t0" + (joins.isEmpty ? "" : " " + joins.joined(separator: " "))
        var named: [String] = []
        if case .entity(let e)? = plan.grouping, e == plan.root, alias.count == 2, let key = schema.tables[e].primaryKey,
            let child = alias.keys.first(where: { $0 != e }),
            case let edges = schema.edges.filter({ $0.from == child && $0.to == e }), edges.count == 1, edges[0].toColumn == key
        {
            // "the number of students in each department": counted by the department each student
            // names, so a student whose department is missing from its table is still counted, under
            // its code; the department's name beside it when there is one. A student with none is
            // in no department.
            let fk = "t1.\(q(schema.column(edges[0].fromColumn).name))"
            from = " FROM \(q(schema.tables[child].name)) t1 LEFT JOIN \(q(schema.tables[e].name)) t0 ON \(fk) = \(col(key))"
            select = select.map { $0 == col(key) ? "\(fk) AS \(q(schema.column(key).name))" : $0 }
            // Every column of the department shown is grouped by (PostgreSQL asks it of a LEFT JOIN's columns).
            let labels = schema.tables[e].labels
            group = [fk] + (labels + plan.shown.filter { !labels.contains($0) }).filter { $0 != key && schema.column($0).table == e }.map(col)
            named = ["\(fk) IS NOT NULL"]
        }
        var sql = "SELECT " + (distinct ? "DISTINCT " : "") + select.joined(separator: ", ") + from
        let conditions = plan.conditions.compactMap(condition)
        guard conditions.count == plan.conditions.count else { return .failure(ambiguity ?? cannotJoin) }
        let wheres = conditions + named
        if !wheres.isEmpty { sql += " WHERE " + wheres.joined(separator: " AND ") }
        if !group.isEmpty { sql += " GROUP BY " + group.joined(separator: ", ") }
        let havings = plan.having.compactMap(condition)
        if !havings.isEmpty { sql += " HAVING " + havings.joined(separator: " AND ") }
        if !plan.order.isEmpty {
            var keys = plan.order.map { (e, descending) in
                let text = plan.measures.count == 1 && e == plan.measures[0] ? "value" : expression(e)
                return text + (descending ? " DESC" : "")
            }
            // Ties in a stable order: rows on SQLite in the order their table keeps them (its rowid, the
            // order a scan of the one table returns them in), else by their key; groups by their key,
            // and groups ranked by a count, where ties are common, in the direction of the ranking, as
            // SQLite returns them when it groups by sorting ("the customer with the most orders": of
            // two with 3 orders, the one of the larger key). Distinct rows by their key, when shown.
            let root = schema.tables[plan.root]
            let stored = dialect == .sqlite && !distinct ? root.storedOrder.map { "\(alias[plan.root] ?? "t0").\($0.rawValue)" } : nil
            if let tie = group.first ?? stored ?? root.primaryKey.map(col), !plan.averageOverGroups, !plan.countGroups,
                !distinct || select.contains(tie), !keys.contains(tie), !keys.contains(tie + " DESC")
            {
                keys.append(tie + (!group.isEmpty && plan.order[0].1 && plan.order[0].0.isCount ? " DESC" : ""))
            }
            sql += " ORDER BY " + keys.joined(separator: ", ")
        } else if case .bucket(_, let b)? = plan.grouping {
            sql += " ORDER BY " + (b == .year ? "year" : "month")
        }
        if let limit = plan.limit { sql += " LIMIT \(limit)" }
        if plan.averageOverGroups { sql = "SELECT AVG(value) AS average FROM (\(sql)) per_group" }
        if plan.countGroups { sql = "SELECT COUNT(*) AS value FROM (\(sql)) per_group" }
        return .success((sql, alias.count))
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
            ? "`" + name.replacingOccurrences(of: "`", with: "``") + "`" : "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
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

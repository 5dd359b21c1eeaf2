import Foundation
import PorticoAskEngine
import PorticoBase
import PorticoStore

/// One plan being written as SQL, clause by clause: the tables joined along the shortest key
/// paths from the root (each with its alias), then the select list and its grouping, the FROM, the
/// conditions, the order and the limit. `PlanCompiler.compileCounting` runs it.
struct PlanWriting {
    typealias Unwritable = PlanCompiler.Unwritable

    let compiler: PlanCompiler
    let plan: QueryPlan
    /// Each table's alias: the root is t0, the others in the order they are joined.
    var alias: [Int: String]
    var joins: [String] = []
    /// The join tree: each joined table's parent, and whether it is on the many side of its key.
    var parent: [Int: Int] = [:]
    var fansOut: Set<Int> = []
    /// Why a condition could not be written, when it is that the question named no key of two.
    var ambiguity: Unwritable?

    static let cannotJoin = Unwritable(
        message: "the built-in engine could not join the tables the question needs; name fewer tables or configure an LLM")

    init(compiler: PlanCompiler, plan: QueryPlan) {
        self.compiler = compiler
        self.plan = plan
        alias = [plan.root: "t0"]
    }

    var schema: SchemaModel { compiler.schema }
    var dialect: SQLDialect { compiler.dialect }
    func q(_ name: String) -> String { compiler.q(name) }

    // MARK: - Joins

    /// Joins each of `tables` to the root along the shortest key path; why not, when one cannot be.
    mutating func join(_ tables: Set<Int>) -> Unwritable? {
        for table in tables.sorted() where alias[table] == nil {
            guard let path = schema.path(from: plan.root, to: table) else { return Self.cannotJoin }
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
                        return PlanCompiler.ambiguity(parallel, schema)
                    }
                    edge = named
                }
                let name = "t\(alias.count)"
                alias[next] = name
                parent[next] = at
                if edge.to == at, edge.from == next { fansOut.insert(next) }
                guard let toColumn = edge.toColumn else { return Self.cannotJoin }
                let left = "\(alias[edge.from] ?? name).\(q(schema.column(edge.fromColumn).name))"
                let right = "\(alias[edge.to] ?? name).\(q(schema.column(toColumn).name))"
                joins.append("JOIN \(q(schema.tables[next].name)) \(name) ON \(left) = \(right)")
            }
        }
        return nil
    }

    /// Whether the joins repeat a table's rows: a one-to-many step off the way from the root to it,
    /// or a many-to-one step on that way after a one-to-many one (customers → orders → lines →
    /// products meets a product once per line).
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

    /// A sum or an average of a table whose rows the joins repeat would count them more than once.
    func refuseMeasuresCountedTwice() -> Unwritable? {
        for m in plan.measures {
            guard case .aggregate(let f, let measured) = m, f != .min, f != .max, f != .countDistinct else { continue }
            let t: Int
            switch measured {
            case .column(let c): t = schema.column(c).table
            case .product(let c, _): t = schema.column(c).table
            }
            if repeats(t) {
                return Unwritable(
                    message: "the joins this question needs would count \(schema.tables[t].name) rows more than once; "
                        + "ask about fewer tables or configure an LLM")
            }
        }
        return nil
    }

    // MARK: - Expressions and conditions

    func col(_ c: Int) -> String {
        let column = schema.column(c)
        if let expression = column.expression { return "(" + expression.render(alias: alias[column.table] ?? "t0") + ")" }
        return "\(alias[column.table] ?? "t0").\(q(column.name))"
    }

    /// The count of the rows counted: each once, by their key, when the joins repeat them.
    var countAll: String {
        let countedTable = plan.counted ?? (plan.grouping == nil ? plan.root : nil)
        if let t = countedTable, repeats(t), let key = schema.tables[t].primaryKey { return "COUNT(DISTINCT \(col(key)))" }
        return "COUNT(*)"
    }

    /// A column of numbers kept as text, as a number: what is totalled or averaged.
    func number(_ c: Int) -> String { schema.column(c).numberKeptAsText ? compiler.cast(col(c)) : col(c) }

    func expression(_ e: QueryPlan.Expression) -> String {
        switch e {
        case .column(let c): return col(c)
        case .countRows: return countAll
        case .aggregate(.countDistinct, .column(let c)): return "COUNT(DISTINCT \(col(c)))"
        case .aggregate(let f, .column(let c)): return "\(f.rawValue)(\(number(c)))"
        case .aggregate(let f, .product(let a, let b)): return "\(f.rawValue)(\(number(a)) * \(number(b)))"
        case .bucket(let c, let bucket): return compiler.bucket(c, col(c), bucket)
        }
    }

    func literal(_ l: QueryPlan.Literal) -> String {
        switch l {
        case .number(let d): return d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(d)
        case .text(let s):
            // MySQL reads a backslash in a string as an escape.
            return "'" + (dialect == .mysql ? s.doubling("\\", "'") : s.doubling("'")) + "'"
        }
    }

    /// A condition as SQL; `nil` when it cannot be written (`ambiguity` says why, when it is that
    /// the question named no key of two).
    mutating func condition(_ c: QueryPlan.Condition) -> String? {
        switch c {
        case .compare(.column(let c), let op, .number(let n)): return "\(number(c)) \(op.rawValue) \(literal(.number(n)))"
        case .compare(let e, let op, let l): return "\(expression(e)) \(op.rawValue) \(literal(l))"
        case .oneOf(let c, let values):
            return values.count == 1
                ? "\(col(c)) = \(literal(.text(values[0])))" : "\(col(c)) IN (\(values.map { literal(.text($0)) }.joined(separator: ", ")))"
        case .like(let c, let pattern): return "\(col(c)) LIKE \(literal(.text(pattern)))"
        case .notLike(let c, let pattern): return "\(col(c)) NOT LIKE \(literal(.text(pattern)))"
        case .notNull(let c): return "\(col(c)) IS NOT NULL"
        case .isNull(let c): return schema.column(c).kind == .text ? "(\(col(c)) IS NULL OR \(col(c)) = '')" : "\(col(c)) IS NULL"
        case .flag(let c, let yes): return "\(col(c)) = \(yes ? "TRUE" : "FALSE")"
        case .comparedToAverage(let c, let op):
            let column = schema.column(c)
            let averaged = column.expression.map { $0.render(alias: nil) } ?? q(column.name)
            return "\(number(c)) \(op.rawValue) (SELECT AVG(\(averaged)) FROM \(q(schema.tables[column.table].name)))"
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
            let parts = cs.compactMap { condition($0) }
            return parts.count == cs.count ? "(" + parts.joined(separator: " OR ") + ")" : nil
        case .all(let cs):
            let parts = cs.compactMap { condition($0) }
            return parts.count == cs.count ? "(" + parts.joined(separator: " AND ") + ")" : nil
        }
    }

    /// A condition inside EXISTS, on the subquery's table `x` (and tables it references directly).
    mutating func subCondition(_ c: QueryPlan.Condition, table: Int) -> String? {
        switch c {
        case .oneOf(let column, let values) where schema.column(column).table == table:
            return "x.\(q(schema.column(column).name)) IN (\(values.map { literal(.text($0)) }.joined(separator: ", ")))"
        case .oneOf(let column, let values):
            let target = schema.column(column).table
            // Two keys from the subquery's table to the value's: only the one the question named.
            let edges = schema.edges.filter { $0.from == table && $0.to == target }
            guard let edge = edges.count == 1 ? edges.first : edges.first(where: { plan.via.contains($0.fromColumn) }), let key = edge.toColumn
            else {
                if edges.count > 1 { ambiguity = PlanCompiler.ambiguity(edges, schema) }
                return nil
            }
            return "x.\(q(schema.column(edge.fromColumn).name)) IN (SELECT \(q(schema.column(key).name)) FROM \(q(schema.tables[target].name)) "
                + "WHERE \(q(schema.column(column).name)) IN (\(values.map { literal(.text($0)) }.joined(separator: ", "))))"
        default: return nil
        }
    }

    // MARK: - Clauses

    /// The statement, and how many tables it reads.
    mutating func write() -> Result<(sql: String, tables: Int), Unwritable> {
        var (select, group) = selectAndGroup()
        if select.isEmpty { return .failure(Self.cannotJoin) }
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
        let (from, named) = fromEachGroupsRows(select: &select, group: &group)
        var sql = "SELECT " + (distinct ? "DISTINCT " : "") + select.joined(separator: ", ") + from
        let conditions = plan.conditions.compactMap { condition($0) }
        guard conditions.count == plan.conditions.count else { return .failure(ambiguity ?? Self.cannotJoin) }
        let wheres = conditions + named
        if !wheres.isEmpty { sql += " WHERE " + wheres.joined(separator: " AND ") }
        if !group.isEmpty { sql += " GROUP BY " + group.joined(separator: ", ") }
        let havings = plan.having.compactMap { condition($0) }
        if !havings.isEmpty { sql += " HAVING " + havings.joined(separator: " AND ") }
        sql += orderBy(select: select, group: group, distinct: distinct)
        if let limit = plan.limit { sql += " LIMIT \(limit)" }
        if plan.averageOverGroups { sql = "SELECT AVG(value) AS average FROM (\(sql)) per_group" }
        if plan.countGroups { sql = "SELECT COUNT(*) AS value FROM (\(sql)) per_group" }
        return .success((sql, alias.count))
    }

    /// What is shown (the group's key and labels, the columns, the measures) and what it is grouped by.
    func selectAndGroup() -> (select: [String], group: [String]) {
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
            select.append("\(compiler.bucket(c, col(c), b)) AS \(name)")
            group.append(name)
        case nil: break
        }
        select += plan.shown.map(col)
        for (i, m) in plan.measures.enumerated() { select.append(expression(m) + (plan.measures.count == 1 ? " AS value" : " AS value\(i + 1)")) }
        return (select, group)
    }

    /// The FROM clause, and the conditions it adds. "the number of students in each department":
    /// counted by the department each student names, so a student whose department is missing from
    /// its table is still counted, under its code; the department's name beside it when there is
    /// one. A student with none is in no department.
    func fromEachGroupsRows(select: inout [String], group: inout [String]) -> (from: String, conditions: [String]) {
        let from = " FROM \(q(schema.tables[plan.root].name)) t0" + (joins.isEmpty ? "" : " " + joins.joined(separator: " "))
        guard case .entity(let e)? = plan.grouping, e == plan.root, alias.count == 2, let key = schema.tables[e].primaryKey,
            let child = alias.keys.first(where: { $0 != e }),
            case let edges = schema.edges.filter({ $0.from == child && $0.to == e }), edges.count == 1, edges[0].toColumn == key
        else { return (from, []) }
        let fk = "t1.\(q(schema.column(edges[0].fromColumn).name))"
        let keyColumn = col(key)
        select = select.map { $0 == keyColumn ? "\(fk) AS \(q(schema.column(key).name))" : $0 }
        // Every column of the department shown is grouped by (PostgreSQL asks it of a LEFT JOIN's columns).
        let labels = schema.tables[e].labels
        group = [fk] + (labels + plan.shown.filter { !labels.contains($0) }).filter { $0 != key && schema.column($0).table == e }.map(col)
        return (" FROM \(q(schema.tables[child].name)) t1 LEFT JOIN \(q(schema.tables[e].name)) t0 ON \(fk) = \(keyColumn)", ["\(fk) IS NOT NULL"])
    }

    /// The ORDER BY clause, with ties broken in a stable order.
    func orderBy(select: [String], group: [String], distinct: Bool) -> String {
        guard !plan.order.isEmpty else {
            if case .bucket(_, let b)? = plan.grouping { return " ORDER BY " + (b == .year ? "year" : "month") }
            return ""
        }
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
        return " ORDER BY " + keys.joined(separator: ", ")
    }
}

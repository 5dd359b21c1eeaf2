import Foundation
public import PorticoAskEngine
import PorticoBase
public import PorticoStore

/// What `query_metric` asks for: metrics by name, broken down by dimensions, over segments and
/// filters. Names match a definition's name or synonyms, in any case.
public struct MetricQuery: Sendable, Equatable {
    public enum Grain: String, Sendable, CaseIterable { case day, week, month, quarter, year }

    /// A condition on a dimension (in WHERE) or on a metric (in HAVING).
    public struct Filter: Sendable, Equatable {
        public var name: String
        /// `=`, `!=`, `<`, `<=`, `>`, `>=`, `in`, `not in`, `like`, `not like`, `between`, `is null`, `is not null`.
        public var op: String
        public var values: [SQLValue]

        public init(name: String, op: String, values: [SQLValue]) {
            self.name = name
            self.op = op
            self.values = values
        }

        public static let operators = ["=", "!=", "<", "<=", ">", ">=", "in", "not in", "like", "not like", "between", "is null", "is not null"]
    }

    public struct Order: Sendable, Equatable {
        public var name: String
        public var descending: Bool

        public init(name: String, descending: Bool) {
            self.name = name
            self.descending = descending
        }
    }

    public var metrics: [String]
    public var dimensions: [String]
    public var grain: Grain?
    public var segments: [String]
    public var filters: [Filter]
    public var order: [Order]
    public var limit: Int?

    public init(
        metrics: [String], dimensions: [String] = [], grain: Grain? = nil, segments: [String] = [], filters: [Filter] = [], order: [Order] = [],
        limit: Int? = nil
    ) {
        self.metrics = metrics
        self.dimensions = dimensions
        self.grain = grain
        self.segments = segments
        self.filters = filters
        self.order = order
        self.limit = limit
    }
}

/// A metric query compiled: the SQL, and the definitions it used (the metrics asked for and
/// those a derived one is made of, the dimensions, segments and declared relationships).
public struct CompiledMetricQuery: Sendable {
    public let sql: String
    public let metrics: [SemanticDefinition]
    public let dimensions: [SemanticDefinition]
    public let segments: [SemanticDefinition]
    public let relationships: [SemanticDefinition]
}

/// Compiles a `MetricQuery` over a datasource's semantic model and schema to one SELECT,
/// deterministically: the metrics' table is the query's root; every other table a dimension,
/// filter or segment needs is reached from it by the one shortest way along relationships that
/// point from many rows to one (declared ones, or the schema's foreign keys where none is
/// declared between the same two tables), joined LEFT so no row of the root is lost, and never
/// the other way, which would count a root row once per related row.
public struct MetricCompiler: Sendable {
    let model: SemanticModel
    let tables: [SourceTable]
    let dialect: SQLDialect
    public static let maxDerivedDepth = 8
    /// Bytes of SQL one derived metric writes out to at most.
    static let maxDerivedSQL = 20000

    public init(model: SemanticModel, tables: [SourceTable], dialect: SQLDialect) {
        self.model = model
        self.tables = tables
        self.dialect = dialect
    }

    func q(_ name: String) -> String { ValueIndex.quote(name, dialect) }

    func table(_ name: String) throws(DatasourceError) -> SourceTable {
        guard let found = tables.first(where: { $0.name.lowercased() == name.lowercased() }) else {
            throw DatasourceError("the datasource has no table '\(name)' (the definition names it); change the definition or read the schema again")
        }
        return found
    }

    func find(_ kind: SemanticDefinition.Kind, _ name: String) throws(DatasourceError) -> SemanticDefinition {
        if let found = model.find(kind, name) { return found }
        let known = model.all(kind).map(\.name)
        throw DatasourceError(
            "there is no \(kind.rawValue) '\(name)'"
                + (known.isEmpty
                    ? "; semantic_model_get lists the model (this datasource has no \(kind.plural) yet)"
                    : "; the \(kind.plural) are: \(known.joined(separator: ", "))"))
    }

    public func compile(_ query: MetricQuery) throws(DatasourceError) -> CompiledMetricQuery {
        guard !query.metrics.isEmpty else { throw DatasourceError("name at least one metric (semantic_model_get lists them)") }
        guard query.metrics.count + query.dimensions.count <= 50 else { throw DatasourceError("ask for at most 50 metrics and dimensions together") }
        if let limit = query.limit, limit < 1 { throw DatasourceError("limit is at least 1; got \(limit)") }
        let asked = try query.metrics.map { name throws(DatasourceError) in try find(.metric, name) }
        var bases: [SemanticDefinition] = []
        var expressions: [Int64: DerivedExpression] = [:]
        for metric in asked { try expand(metric, into: &bases, expressions: &expressions, path: []) }
        let roots = Set(bases.compactMap { $0.body.table?.lowercased() })
        guard roots.count == 1, let rootName = bases.first?.body.table else {
            let byTable = bases.map { "\($0.name) (\($0.body.table ?? "?"))" }.joined(separator: ", ")
            throw DatasourceError("the metrics asked for are over different tables (\(byTable)); ask for the metrics of each table in a call of its own")
        }
        let root = try table(rootName)
        let dimensions = try query.dimensions.map { name throws(DatasourceError) in try find(.dimension, name) }
        let segments = try query.segments.map { name throws(DatasourceError) in try find(.segment, name) }
        var used = JoinTree(root: root.name)
        let graph = try Graph(model: model, tables: tables, compiler: self)

        // What each part needs joined, and its SQL.
        var select: [String] = []
        var names: [String] = []
        func name(_ text: String) throws(DatasourceError) {
            guard !names.contains(where: { $0.lowercased() == text.lowercased() }) else {
                throw DatasourceError("'\(text)' is asked for twice; name each metric and dimension once")
            }
            names.append(text)
        }
        if query.grain != nil, !dimensions.contains(where: { if case .dimension(_, _, true) = $0.body { true } else { false } }) {
            throw DatasourceError("a grain buckets a time dimension; add one to dimensions (semantic_model_get marks them time: true)")
        }
        var dimensionSQL: [Int64: String] = [:]
        for dimension in dimensions {
            try name(dimension.name)
            let raw = try dimensionExpression(dimension, graph: graph, joins: &used)
            var shown = raw
            if case .dimension(_, _, true) = dimension.body, let grain = query.grain { shown = bucket(raw, grain) }
            dimensionSQL[dimension.id] = shown
            select.append("\(shown) AS \(q(dimension.name))")
        }
        // One filter for every base metric goes in WHERE; different ones go inside each aggregate.
        let filters = try bases.map { metric throws(DatasourceError) -> String? in
            guard case .metric(_, _, let filter?) = metric.body else { return nil }
            return "(" + (try TableSQL(filter, columns: root.columns.map(\.name), dialect: dialect, what: "filter").render(alias: q(root.name))) + ")"
        }
        let shared = Set(filters.map { $0 ?? "" }).count == 1
        var baseSQL: [Int64: String] = [:]
        for (metric, filter) in zip(bases, filters) {
            guard case .metric(_, let sql, _) = metric.body else { continue }
            let aggregate = try AggregateSQL(sql, columns: root.columns.map(\.name), dialect: dialect)
            baseSQL[metric.id] = aggregate.render(qualifier: q(root.name), filter: shared ? nil : filter)
        }
        var metricSQL: [Int64: String] = [:]
        for metric in asked {
            try name(metric.name)
            let sql = try render(metric, bases: baseSQL, expressions: expressions)
            metricSQL[metric.id] = sql
            select.append("\(sql) AS \(q(metric.name))")
        }

        var conditions: [String] = []
        if shared, let filter = filters.first ?? nil { conditions.append(filter) }
        for segment in segments { conditions.append(try segmentCondition(segment, graph: graph, joins: &used)) }
        var having: [String] = []
        for filter in query.filters {
            if let metric = asked.first(where: { $0.isNamed(filter.name) }) ?? model.find(.metric, filter.name) {
                guard let sql = metricSQL[metric.id] else {
                    throw DatasourceError("a filter names the metric '\(metric.name)', which is not asked for; add it to metrics")
                }
                having.append(try condition(sql, filter))
            } else if let dimension = model.find(.dimension, filter.name) {
                conditions.append(try condition(try dimensionExpression(dimension, graph: graph, joins: &used), filter))
            } else {
                throw DatasourceError("a filter names '\(filter.name)', which is neither a dimension nor a metric of this datasource")
            }
        }

        var sql = "SELECT " + select.joined(separator: ", ") + " FROM " + q(root.name)
        for edge in used.edges {
            sql += " LEFT JOIN \(q(edge.to.table)) ON \(q(edge.from.table)).\(q(edge.from.column)) = \(q(edge.to.table)).\(q(edge.to.column))"
        }
        if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
        if !dimensions.isEmpty { sql += " GROUP BY " + dimensions.indices.map { String($0 + 1) }.joined(separator: ", ") }
        if !having.isEmpty { sql += " HAVING " + having.joined(separator: " AND ") }
        var order: [String] = []
        for item in query.order {
            guard
                let shown = names.first(where: { $0.lowercased() == item.name.lowercased() })
                    ?? (asked + dimensions).first(where: { $0.isNamed(item.name) })?.name
            else {
                throw DatasourceError("order names '\(item.name)', which is not among the metrics and dimensions asked for (\(names.joined(separator: ", ")))")
            }
            order.append(q(shown) + (item.descending ? " DESC" : " ASC"))
        }
        if order.isEmpty, !dimensions.isEmpty { order = dimensions.indices.map { String($0 + 1) } }
        if !order.isEmpty { sql += " ORDER BY " + order.joined(separator: ", ") }
        if let limit = query.limit { sql += " LIMIT \(limit)" }
        let relationships = used.edges.compactMap(\.declared)
        return CompiledMetricQuery(
            sql: sql, metrics: asked + bases.filter { b in !asked.contains { $0.id == b.id } }, dimensions: dimensions, segments: segments,
            relationships: relationships)
    }

    /// Collects the plain metrics `metric` is made of, checking a derived one's names and that none leads back to itself.
    func expand(_ metric: SemanticDefinition, into bases: inout [SemanticDefinition], expressions: inout [Int64: DerivedExpression], path: [Int64])
        throws(DatasourceError)
    {
        switch metric.body {
        case .metric:
            if !bases.contains(where: { $0.id == metric.id }) { bases.append(metric) }
        case .derived(let text):
            guard !path.contains(metric.id) else { throw DatasourceError("the derived metric '\(metric.name)' is made of itself, through its parts") }
            guard path.count < Self.maxDerivedDepth else { throw DatasourceError("derived metrics nest at most \(Self.maxDerivedDepth) deep") }
            // Expanded once, however often it is named.
            guard expressions[metric.id] == nil else { return }
            let expression = try DerivedExpression(text)
            expressions[metric.id] = expression
            var named = Set<String>()
            for name in expression.metrics where named.insert(name.lowercased()).inserted {
                try expand(try find(.metric, name), into: &bases, expressions: &expressions, path: path + [metric.id])
            }
        default:
            throw DatasourceError("'\(metric.name)' is not a metric")
        }
    }

    /// A metric's SQL: a plain one's aggregate, a derived one's arithmetic over its parts as floating-point values.
    func render(_ metric: SemanticDefinition, bases: [Int64: String], expressions: [Int64: DerivedExpression]) throws(DatasourceError) -> String {
        if let sql = bases[metric.id] { return sql }
        guard case .derived = metric.body, let expression = expressions[metric.id] else {
            throw DatasourceError("the metric '\(metric.name)' could not be written out")
        }
        let sql = try expression.render { name throws(DatasourceError) in
            let part = try find(.metric, name)
            let sql = try render(part, bases: bases, expressions: expressions)
            if case .derived = part.body { return sql }
            return floating(sql)
        }
        // Parts named many times over many levels would multiply the text: a query is kept to the guard's size.
        guard sql.utf8.count <= Self.maxDerivedSQL else {
            throw DatasourceError("the derived metric '\(metric.name)' writes out to more than \(Self.maxDerivedSQL) bytes of SQL; name its parts fewer times")
        }
        return sql
    }

    func floating(_ sql: String) -> String {
        switch dialect {
        case .sqlite: "CAST(\(sql) AS REAL)"
        case .postgres: "CAST(\(sql) AS DOUBLE PRECISION)"
        case .mysql: "(\(sql)) * 1.0"
        }
    }

    func dimensionExpression(_ dimension: SemanticDefinition, graph: Graph, joins: inout JoinTree) throws(DatasourceError) -> String {
        guard case .dimension(let tableName, let sql, _) = dimension.body else { throw DatasourceError("'\(dimension.name)' is not a dimension") }
        let target = try table(tableName)
        try joins.add(try graph.path(from: joins.root, to: target.name, for: "dimension '\(dimension.name)'"))
        return "(" + (try TableSQL(sql, columns: target.columns.map(\.name), dialect: dialect, what: "dimension").render(alias: q(target.name))) + ")"
    }

    /// A segment's condition as membership of the root's rows (or of the rows it reaches) in the
    /// rows the condition keeps, read in a subquery of its own, where its columns cannot be
    /// confused with a joined table's.
    func segmentCondition(_ segment: SemanticDefinition, graph: Graph, joins: inout JoinTree) throws(DatasourceError) -> String {
        guard case .segment(let tableName, let condition) = segment.body else { throw DatasourceError("'\(segment.name)' is not a segment") }
        let target = try table(tableName)
        let path = try graph.path(from: joins.root, to: target.name, for: "segment '\(segment.name)'")
        let outer: String
        let inner: String
        if let last = path.last {
            try joins.add(Array(path.dropLast()))
            outer = "\(q(last.from.table)).\(q(last.from.column))"
            inner = "\(q(target.name)).\(q(last.to.column))"
        } else {
            let keys = target.columns.filter(\.primaryKey)
            guard keys.count == 1, let key = keys.first else {
                throw DatasourceError("the segment '\(segment.name)' is on \(target.name), which has no primary key of one column to tell its rows by")
            }
            outer = "\(q(target.name)).\(q(key.name))"
            inner = outer
        }
        return "\(outer) IN (SELECT \(inner) FROM \(q(target.name)) WHERE (\(condition)))"
    }

    func condition(_ sql: String, _ filter: MetricQuery.Filter) throws(DatasourceError) -> String {
        let op = filter.op.split(whereSeparator: \.isWhitespace).joined(separator: " ").lowercased()
        let values = try filter.values.map { v throws(DatasourceError) in try SQLLiteral.render(v, dialect: dialect) }
        func one() throws(DatasourceError) -> String {
            guard values.count == 1 else { throw DatasourceError("the filter on '\(filter.name)' with '\(op)' takes one value; got \(values.count)") }
            return values[0]
        }
        switch op {
        case "=", "!=", "<", "<=", ">", ">=": return "\(sql) \(op == "!=" ? "<>" : op) \(try one())"
        case "like", "not like": return "\(sql) \(op.uppercased()) \(try one())"
        case "in", "not in":
            guard !values.isEmpty, values.count <= 1000 else {
                throw DatasourceError("the filter on '\(filter.name)' with '\(op)' takes 1 to 1000 values; got \(values.count)")
            }
            return "\(sql) \(op.uppercased()) (\(values.joined(separator: ", ")))"
        case "between":
            guard values.count == 2 else { throw DatasourceError("the filter on '\(filter.name)' with 'between' takes two values, low and high") }
            return "\(sql) BETWEEN \(values[0]) AND \(values[1])"
        case "is null", "is not null":
            guard values.isEmpty else { throw DatasourceError("the filter on '\(filter.name)' with '\(op)' takes no value") }
            return "\(sql) \(op.uppercased())"
        default:
            throw DatasourceError("a filter's operator is one of \(MetricQuery.Filter.operators.joined(separator: ", ")); got '\(filter.op)'")
        }
    }

    /// A time value bucketed to `grain`, as text that sorts in time order (`2024-03`, `2024-Q1`, a week's Monday).
    func bucket(_ x: String, _ grain: MetricQuery.Grain) -> String {
        switch (dialect, grain) {
        case (.sqlite, .day): "strftime('%Y-%m-%d', \(x))"
        case (.sqlite, .week): "strftime('%Y-%m-%d', \(x), 'weekday 0', '-6 days')"
        case (.sqlite, .month): "strftime('%Y-%m', \(x))"
        case (.sqlite, .quarter): "strftime('%Y', \(x)) || '-Q' || ((CAST(strftime('%m', \(x)) AS INTEGER) + 2) / 3)"
        case (.sqlite, .year): "strftime('%Y', \(x))"
        case (.postgres, .day): "to_char(CAST(\(x) AS timestamp), 'YYYY-MM-DD')"
        case (.postgres, .week): "to_char(date_trunc('week', CAST(\(x) AS timestamp)), 'YYYY-MM-DD')"
        case (.postgres, .month): "to_char(CAST(\(x) AS timestamp), 'YYYY-MM')"
        case (.postgres, .quarter): "to_char(CAST(\(x) AS timestamp), 'YYYY-\"Q\"Q')"
        case (.postgres, .year): "to_char(CAST(\(x) AS timestamp), 'YYYY')"
        case (.mysql, .day): "DATE_FORMAT(\(x), '%Y-%m-%d')"
        case (.mysql, .week): "DATE_FORMAT(DATE_SUB(\(x), INTERVAL WEEKDAY(\(x)) DAY), '%Y-%m-%d')"
        case (.mysql, .month): "DATE_FORMAT(\(x), '%Y-%m')"
        case (.mysql, .quarter): "CONCAT(YEAR(\(x)), '-Q', QUARTER(\(x)))"
        case (.mysql, .year): "DATE_FORMAT(\(x), '%Y')"
        }
    }
}

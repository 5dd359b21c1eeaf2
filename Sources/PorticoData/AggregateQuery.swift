public import PorticoJSON
import PorticoStore

/// Arguments of NocoBase's `query` action: measures, dimensions, orders, filter, having.
public struct AggregateRequest: Sendable {
    public var resource: String
    public var measures: [JSON] = []
    public var dimensions: [JSON] = []
    public var orders: [JSON] = []
    public var filter: JSON?
    public var having: JSON?
    public var limit: Int?
    public var offset: Int?

    public init(resource: String) { self.resource = resource }
}

extension RecordService {
    public static let aggregations = ["sum", "count", "avg", "min", "max"]
    /// Measures, dimensions or orders one query may name.
    public static let maxQueryItems = 20

    /// Groups and aggregates a collection's records; returns `{data: [rows keyed by alias]}`.
    public func query(app: String, _ request: AggregateRequest, access: RecordAccess) async throws -> JSON {
        guard !request.resource.contains(".") else {
            throw DataError.invalid("resource_query works on a collection, not an association resource; filter on the relation instead")
        }
        let catalog = try scoped(try await catalogs.catalog(app: app), by: access, root: request.resource, action: .query)
        let collection = try catalog.collection(request.resource)
        guard !request.measures.isEmpty || !request.dimensions.isEmpty else {
            throw DataError.invalid(
                "resource_query needs at least one measure or dimension, such as measures: [{\"field\": \"\(collection.primaryKey.first?.name ?? "id")\", \"aggregation\": \"count\", \"alias\": \"count\"}]"
            )
        }
        for (name, items) in [("measures", request.measures), ("dimensions", request.dimensions), ("orders", request.orders)]
        where items.count > Self.maxQueryItems {
            throw DataError.invalid("\(name) has \(items.count) entries; at most \(Self.maxQueryItems) per query")
        }
        var builder = AggregateBuilder(collection: collection, catalog: catalog, flavor: flavor)
        let plan = try builder.plan(request)
        var limit = request.limit ?? budget.maxRows
        var notes: [String] = []
        guard limit >= 0 else { throw DataError.invalid("limit must not be negative") }
        if limit > budget.maxRows {
            notes.append("limit was reduced to \(budget.maxRows) rows")
            limit = budget.maxRows
        }
        let offset = request.offset ?? 0
        guard offset >= 0 else { throw DataError.invalid("offset must not be negative") }
        var q = plan.sql
        q.append(" LIMIT ")
        q.append(bind: .int(Int64(limit + 1)))
        q.append(" OFFSET ")
        q.append(bind: .int(Int64(offset)))
        let rows = try await catalog.database.query(q)
        var truncated = rows.count > limit
        if truncated { notes.append("more rows match; raise offset to read further") }
        // Sizes are counted as rows are turned into objects; building stops at the byte budget.
        var data: [JSONObject] = []
        var bytes = 2
        for row in rows.prefix(limit) {
            var object = JSONObject(minimumCapacity: plan.outputs.count)
            var size = 2
            for (index, output) in plan.outputs.enumerated() {
                size += ResultMeter.memberSize(output.alias, row.values[index])
                object[output.alias] = RowMapping.json(row.values[index], type: output.type)
            }
            bytes += size + 1
            if bytes > budget.maxBytes {
                truncated = true
                notes.append("the result was cut to \(data.count) rows to stay under \(budget.maxBytes / 1024) KiB")
                break
            }
            data.append(object)
        }
        var result: JSONObject = ["data": .array(data.map { .object($0) })]
        if truncated || !notes.isEmpty { result["meta"] = ["truncated": .bool(truncated), "notes": JSON(notes)] }
        return .object(result)
    }
}

/// Builds the SQL of one aggregate query.
struct AggregateBuilder {
    let collection: CollectionSchema
    let catalog: Catalog
    let flavor: SQLFlavor
    var joins: [String: (alias: String, sql: SQLFragment, target: CollectionSchema)] = [:]

    init(collection: CollectionSchema, catalog: Catalog, flavor: SQLFlavor) {
        self.collection = collection
        self.catalog = catalog
        self.flavor = flavor
    }

    struct Output {
        var alias: String
        var expression: SQLFragment
        var type: FieldType?
        var aggregated: Bool
        var bindFree: Bool
        var names: [String]
    }

    struct Plan {
        var sql: SQLFragment
        var outputs: [Output]
    }

    mutating func plan(_ request: AggregateRequest) throws(DataError) -> Plan {
        var outputs: [Output] = []
        for (index, item) in request.dimensions.enumerated() {
            outputs.append(try dimension(item, at: "dimensions[\(index)]"))
        }
        let dimensionCount = outputs.count
        for (index, item) in request.measures.enumerated() {
            outputs.append(try measure(item, at: "measures[\(index)]"))
        }
        var aliases = Set<String>()
        for output in outputs where !aliases.insert(output.alias).inserted {
            throw .invalid("alias '\(output.alias)' is used twice; give each measure and dimension its own alias")
        }
        let grouped = outputs.contains(where: \.aggregated)
        var q = SQLFragment("SELECT ")
        q.append(
            joining: outputs.map { output in
                var f = output.expression
                f.append(" AS ")
                f.append(identifier: output.alias)
                return f
            }, separator: ", ")
        q.append(" FROM ")
        q.append(catalog.from(collection, as: RecordService.rootAlias))
        for join in joins.values.sorted(by: { $0.alias < $1.alias }) { q.append(join.sql) }
        let compiler = FilterCompiler(catalog: catalog, flavor: flavor)
        if let condition = try compiler.compile(request.filter, on: collection, alias: RecordService.rootAlias) {
            q.append(" WHERE ")
            q.append(condition)
        }
        if grouped && dimensionCount > 0 {
            q.append(" GROUP BY ")
            q.append((1...dimensionCount).map(String.init).joined(separator: ", "))
        }
        if let having = request.having, !having.isNull {
            guard grouped else { throw .invalid("having needs at least one measure with an aggregation") }
            guard case .object(let object) = having else { throw .invalid("having must be an object keyed by alias, such as {\"count\": {\"$gt\": 1}}") }
            if let condition = try havingCondition(object, outputs: outputs, path: "having") {
                q.append(" HAVING ")
                q.append(condition)
            }
        }
        var orderParts: [SQLFragment] = []
        for (index, item) in request.orders.enumerated() {
            orderParts.append(try order(item, outputs: outputs, grouped: grouped, at: "orders[\(index)]"))
        }
        if !orderParts.isEmpty {
            q.append(" ORDER BY ")
            q.append(joining: orderParts, separator: ", ")
        }
        return Plan(sql: q, outputs: outputs)
    }

    /// Resolves `"Total"`, `"customer.Country"` or `["customer", "Country"]` to a column expression.
    mutating func column(_ value: JSON?, at path: String, allowStar: Bool = false) throws(DataError) -> (SQLFragment, Field?, [String]) {
        var segments: [String]
        switch value {
        case .string(let s)?: segments = s.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        case .array(let items)?: segments = items.compactMap(\.stringValue); guard segments.count == items.count else { fallthrough }
        default: throw .invalid("\(path).field must be a field name such as \"Total\" or a path such as [\"customer\", \"Country\"]")
        }
        if allowStar, segments == ["*"] { return (SQLFragment("*"), nil, ["*"]) }
        guard (1...2).contains(segments.count), !segments.contains(where: \.isEmpty) else {
            throw .invalid("\(path).field: '\(segments.joined(separator: "."))' must be a column or one relation hop, like 'customer.Country'")
        }
        if segments.count == 1 {
            let field = try collection.column(segments[0], purpose: path)
            return (.column(field.name, of: RecordService.rootAlias), field, segments)
        }
        guard let relation = collection.field(segments[0]), relation.type.isRelation else {
            throw .invalid(
                "\(path).field: '\(segments[0])' is not a relation of '\(collection.name)'; its relations are: \(collection.relations.map(\.name).joined(separator: ", "))"
            )
        }
        let target = try catalog.target(of: relation, in: collection)
        let field = try target.column(segments[1], purpose: path)
        let alias = try join(relation, target: target)
        return (.column(field.name, of: alias), field, segments)
    }

    mutating func join(_ relation: Field, target: CollectionSchema) throws(DataError) -> String {
        if let existing = joins[relation.name] { return existing.alias }
        let r = relation.relation!
        let alias = "j\(joins.count + 1)"
        var sql = SQLFragment(" LEFT JOIN ")
        switch relation.type {
        case .belongsTo, .hasMany:
            sql.append(catalog.from(target, as: alias))
            sql.append(" ON ")
            sql.append(column: relation.type == .belongsTo ? r.targetKey : r.foreignKey, of: alias, equals: relation.localKey!, of: RecordService.rootAlias)
        case .belongsToMany:
            guard let through = r.through, let otherKey = r.otherKey else { throw .invalid("relation '\(relation.name)' has no junction") }
            let junction = alias + "x"
            sql.append(table: through, as: junction)
            sql.append(" ON ")
            sql.append(column: r.foreignKey, of: junction, equals: r.sourceKey, of: RecordService.rootAlias)
            sql.append(" LEFT JOIN ")
            sql.append(catalog.from(target, as: alias))
            sql.append(" ON ")
            sql.append(column: r.targetKey, of: alias, equals: otherKey, of: junction)
        default:
            throw .invalid("'\(relation.name)' is not a relation")
        }
        joins[relation.name] = (alias, sql, target)
        return alias
    }

    static func alias(_ item: JSONObject, default name: String, at path: String) throws(DataError) -> String {
        guard let raw = item["alias"] else { return name }
        guard case .string(let alias) = raw, !alias.isEmpty, alias.count <= 64 else {
            throw .invalid("\(path).alias must be a non-empty string of at most 64 characters")
        }
        return alias
    }

    mutating func dimension(_ item: JSON, at path: String) throws(DataError) -> Output {
        guard case .object(let object) = item else { throw .invalid("\(path) must be an object such as {\"field\": \"BillingCountry\"}") }
        let (expression, field, names) = try column(object["field"], at: path)
        let alias = try Self.alias(object, default: names.joined(separator: "."), at: path)
        if let format = object["format"], !format.isNull {
            guard case .string(let text) = format else { throw .invalid("\(path).format must be a string such as \"YYYY-MM\"") }
            guard field?.type.isTemporal == true || field?.type.isTextual == true else {
                throw .invalid("\(path).format applies to date fields; '\(names.joined(separator: "."))' is \(field?.type.rawValue ?? "not a column")")
            }
            return Output(
                alias: alias, expression: try flavor.formatDate(expression, format: text), type: .string, aggregated: false, bindFree: false, names: names)
        }
        return Output(alias: alias, expression: expression, type: field?.type, aggregated: false, bindFree: true, names: names)
    }

    mutating func measure(_ item: JSON, at path: String) throws(DataError) -> Output {
        guard case .object(let object) = item else { throw .invalid("\(path) must be an object such as {\"field\": \"Total\", \"aggregation\": \"sum\"}") }
        let aggregation = object["aggregation"]?.stringValue
        let (expression, field, names) = try column(object["field"], at: path, allowStar: aggregation == "count")
        let alias = try Self.alias(object, default: names.joined(separator: "."), at: path)
        guard let aggregation else {
            if let raw = object["aggregation"], !raw.isNull {
                throw .invalid("\(path).aggregation must be one of \(RecordService.aggregations.joined(separator: ", "))")
            }
            return Output(alias: alias, expression: expression, type: field?.type, aggregated: false, bindFree: true, names: names)
        }
        guard RecordService.aggregations.contains(aggregation) else {
            throw .invalid("\(path).aggregation '\(aggregation)' is not supported; use one of \(RecordService.aggregations.joined(separator: ", "))")
        }
        if ["sum", "avg"].contains(aggregation), let field, !field.type.isNumeric {
            throw .invalid("\(path): \(aggregation) needs a numeric field; '\(names.joined(separator: "."))' is \(field.type.rawValue)")
        }
        let distinct = object["distinct"]?.boolValue ?? false
        var f = SQLFragment("\(aggregation.uppercased())(")
        if distinct { f.append("DISTINCT ") }
        f.append(expression)
        f.append(")")
        let type: FieldType? =
            switch aggregation {
            case "count": .integer
            case "avg": .float
            default: field?.type
            }
        return Output(alias: alias, expression: f, type: type, aggregated: true, bindFree: true, names: names)
    }

    func output(named name: String, in outputs: [Output]) -> (Int, Output)? {
        if let index = outputs.firstIndex(where: { $0.alias == name }) { return (index, outputs[index]) }
        if let index = outputs.firstIndex(where: { $0.names.joined(separator: ".") == name }) { return (index, outputs[index]) }
        return nil
    }

    mutating func order(_ item: JSON, outputs: [Output], grouped: Bool, at path: String) throws(DataError) -> SQLFragment {
        guard case .object(let object) = item else { throw .invalid("\(path) must be an object such as {\"alias\": \"total\", \"order\": \"desc\"}") }
        var direction = " ASC"
        if let raw = object["order"], !raw.isNull {
            switch raw.stringValue?.lowercased() {
            case "asc": direction = " ASC"
            case "desc": direction = " DESC"
            default: throw .invalid("\(path).order must be \"asc\" or \"desc\"")
            }
        }
        var nulls = ""
        if let raw = object["nulls"], !raw.isNull {
            switch raw.stringValue {
            case "first": nulls = flavor.nulls(last: false)
            case "last": nulls = flavor.nulls(last: true)
            case "default": nulls = ""
            default: throw .invalid("\(path).nulls must be \"first\", \"last\" or \"default\"")
            }
        }
        var target: SQLFragment
        let name = object["alias"]?.stringValue ?? object["field"].flatMap { $0.stringValue ?? $0.arrayValue?.compactMap(\.stringValue).joined(separator: ".") }
        if let name, let (index, _) = output(named: name, in: outputs) {
            target = SQLFragment(String(index + 1))
        } else if grouped {
            throw .invalid("\(path): order by one of the selected aliases (\(outputs.map(\.alias).joined(separator: ", "))) in a grouped query")
        } else {
            target = try column(object["field"], at: path).0
        }
        target.append(direction + nulls)
        return target
    }

    func havingCondition(_ object: JSONObject, outputs: [Output], path: String) throws(DataError) -> SQLFragment? {
        var parts: [SQLFragment] = []
        for (key, value) in object {
            if key == "$and" || key == "$or" {
                guard case .array(let items) = value else { throw .invalid("\(path).\(key) must be an array") }
                var subparts: [SQLFragment] = []
                for (index, item) in items.enumerated() {
                    guard case .object(let sub) = item else { throw .invalid("\(path).\(key)[\(index)] must be an object") }
                    if let c = try havingCondition(sub, outputs: outputs, path: "\(path).\(key)[\(index)]") { subparts.append(c) }
                }
                if let combined = SQLFragment.all(subparts, key == "$and" ? "AND" : "OR") { parts.append(combined) }
                continue
            }
            guard let (_, output) = output(named: key, in: outputs) else {
                throw .invalid("\(path): '\(key)' is not a selected alias; having compares aliases: \(outputs.map(\.alias).joined(separator: ", "))")
            }
            guard output.bindFree else { throw .invalid("\(path): '\(key)' is a formatted dimension; compare a measure instead") }
            let conditions: JSONObject
            if case .object(let ops) = value { conditions = ops } else { conditions = ["$eq": value] }
            for (op, operand) in conditions {
                let sqlOp: String
                switch op {
                case "$eq": sqlOp = "="
                case "$ne": sqlOp = "<>"
                case "$gt": sqlOp = ">"
                case "$gte": sqlOp = ">="
                case "$lt": sqlOp = "<"
                case "$lte": sqlOp = "<="
                case "$between", "$in", "$notIn":
                    guard let items = operand.arrayValue, !items.isEmpty, op != "$between" || items.count == 2 else {
                        throw .invalid("\(path).\(key).\(op) needs an array\(op == "$between" ? " of two numbers" : "")")
                    }
                    var f = output.expression
                    if op == "$between" {
                        f.append(" BETWEEN ")
                        f.append(bind: try Self.number(items[0], at: "\(path).\(key).\(op)[0]"))
                        f.append(" AND ")
                        f.append(bind: try Self.number(items[1], at: "\(path).\(key).\(op)[1]"))
                    } else {
                        f.append(op == "$in" ? " IN (" : " NOT IN (")
                        var binds: [SQLFragment] = []
                        for (i, item) in items.enumerated() { binds.append(.bind(try Self.scalar(item, at: "\(path).\(key).\(op)[\(i)]"))) }
                        f.append(joining: binds, separator: ", ")
                        f.append(")")
                    }
                    parts.append(f)
                    continue
                default:
                    throw .invalid("\(path).\(key): having supports $eq, $ne, $gt, $gte, $lt, $lte, $between, $in, $notIn; got '\(op)'")
                }
                var f = output.expression
                f.append(" \(sqlOp) ")
                f.append(bind: try Self.scalar(operand, at: "\(path).\(key).\(op)"))
                parts.append(f)
            }
        }
        return SQLFragment.all(parts)
    }

    static func number(_ value: JSON, at path: String) throws(DataError) -> SQLValue {
        switch value {
        case .int(let i): return .int(i)
        case .double(let d): return .double(d)
        default: throw .invalid("\(path) must be a number")
        }
    }

    static func scalar(_ value: JSON, at path: String) throws(DataError) -> SQLValue {
        switch value {
        case .int(let i): return .int(i)
        case .double(let d): return .double(d)
        case .string(let s): return .text(s)
        case .bool(let b): return .bool(b)
        default: throw .invalid("\(path) must be a number, string or boolean")
        }
    }
}

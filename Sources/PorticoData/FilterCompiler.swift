import Foundation
import PorticoBase
public import PorticoJSON
public import PorticoStore

/// Compiles NocoBase's JSON filter language into a parameterised SQL condition.
///
/// Every field name is resolved against the collection's fields (so no name reaches SQL
/// unchecked), every operator must be one Portico knows, and every value is bound and checked
/// against the field's type. Relation paths such as `artist.Name` become subqueries, so a
/// filter never multiplies rows.
public struct FilterCompiler: Sendable {
    public let catalog: Catalog
    public let flavor: SQLFlavor

    public init(catalog: Catalog, flavor: SQLFlavor) {
        self.catalog = catalog
        self.flavor = flavor
    }

    /// Operators a field condition may use, in every spelling.
    public static var operators: [String] { FilterOperator.names }

    static let maxDepth = 8
    /// Items of one `$and`/`$or` array, or values of one `$includes`-like list.
    public static let maxItems = 100
    /// Values of one `$in`/`$notIn` list (bound, so cheap) .
    public static let maxInValues = 1000
    /// Conditions in one filter, counting every level.
    public static let maxConditions = 500

    /// The condition for `filter` on `collection` (aliased `alias` in the query), or `nil` for an empty filter.
    public func compile(_ filter: JSON?, on collection: CollectionSchema, alias: String) throws(DataError) -> SQLFragment? {
        guard let filter, !filter.isNull else { return nil }
        guard case .object(let object) = filter else {
            throw .invalid("filter must be an object such as {\"Title\": {\"$includes\": \"rock\"}}, got \(filter.typeName)")
        }
        var scope = AliasScope(next: 1)
        return try group(object, collection: collection, alias: alias, path: "filter", depth: 0, scope: &scope)
    }

    struct AliasScope {
        var next: Int
        var conditions = 0

        mutating func count(at path: String) throws(DataError) {
            conditions += 1
            guard conditions <= FilterCompiler.maxConditions else {
                throw .invalid(
                    "\(path): the filter has more than \(FilterCompiler.maxConditions) conditions; split the request or use $in with a list of values")
            }
        }

        mutating func make() -> String {
            defer { next += 1 }
            return "f\(next)"
        }
    }

    /// An object of conditions, ANDed: `$and`/`$or` arrays, field paths, nested relation objects.
    func group(_ object: JSONObject, collection: CollectionSchema, alias: String, path: String, depth: Int, scope: inout AliasScope) throws(DataError)
        -> SQLFragment?
    {
        guard depth <= Self.maxDepth else { throw .invalid("\(path): filter nested deeper than \(Self.maxDepth) levels") }
        let nested = try Self.nest(object, path: path)
        var conditions: [SQLFragment] = []
        for (key, value) in nested {
            switch key {
            case "$and", "$or":
                guard case .array(let items) = value else {
                    throw .invalid("\(path).\(key) must be an array of filter objects, got \(value.typeName)")
                }
                guard items.count <= Self.maxItems else {
                    throw .invalid(
                        "\(path).\(key) has \(items.count) items; at most \(Self.maxItems) are allowed (for many values of one field use $in, which takes up to \(Self.maxInValues))"
                    )
                }
                var parts: [SQLFragment] = []
                for (index, item) in items.enumerated() {
                    guard case .object(let sub) = item else {
                        throw .invalid("\(path).\(key)[\(index)] must be a filter object, got \(item.typeName)")
                    }
                    if let condition = try group(sub, collection: collection, alias: alias, path: "\(path).\(key)[\(index)]", depth: depth + 1, scope: &scope) {
                        parts.append(condition)
                    }
                }
                if let combined = SQLFragment.all(parts, key == "$and" ? "AND" : "OR") { conditions.append(combined) }
            case let op where op.hasPrefix("$"):
                throw .invalid("\(path): operator '\(op)' must follow a field name, as in {\"Name\": {\"\(op)\": ...}}; only $and and $or stand alone")
            default:
                try scope.count(at: "\(path).\(key)")
                conditions.append(try fieldCondition(key, value, collection: collection, alias: alias, path: "\(path).\(key)", depth: depth, scope: &scope))
            }
        }
        return SQLFragment.all(conditions)
    }

    /// Turns dotted keys into nested objects (`{"artist.Name": x}` → `{"artist": {"Name": x}}`),
    /// so conditions on one relation share one subquery.
    static func nest(_ object: JSONObject, path: String) throws(DataError) -> JSONObject {
        var result = JSONObject()
        for (key, value) in object {
            let segments = key.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard !segments.contains(where: \.isEmpty) else { throw .invalid("\(path): '\(key)' is not a valid field path") }
            if segments.count == 1 {
                try merge(&result, key: key, value: value, path: path)
            } else {
                var inner: JSON = value
                for segment in segments.dropFirst().reversed() { inner = .object([segment: inner]) }
                try merge(&result, key: segments[0], value: inner, path: path)
            }
        }
        return result
    }

    static func merge(_ object: inout JSONObject, key: String, value: JSON, path: String) throws(DataError) {
        guard let existing = object[key] else {
            object[key] = value
            return
        }
        guard case .object(var left) = existing, case .object(let right) = value, !key.hasPrefix("$") else {
            throw .invalid("\(path): '\(key)' is given twice; combine the conditions in one object or use $and")
        }
        for (k, v) in right { try merge(&left, key: k, value: v, path: "\(path).\(key)") }
        object[key] = .object(left)
    }

    func fieldCondition(_ name: String, _ value: JSON, collection: CollectionSchema, alias: String, path: String, depth: Int, scope: inout AliasScope)
        throws(DataError) -> SQLFragment
    {
        guard let field = collection.field(name) else {
            throw .invalid(
                "\(path): unknown field '\(name)' of collection '\(collection.name)'; its fields are: \(collection.fields.map(\.name).joined(separator: ", "))")
        }
        if field.isColumn {
            return try columnCondition(field, value, alias: alias, path: path)
        }
        return try relationCondition(field, value, collection: collection, alias: alias, path: path, depth: depth, scope: &scope)
    }

    // MARK: Relations

    func relationCondition(_ field: Field, _ value: JSON, collection: CollectionSchema, alias: String, path: String, depth: Int, scope: inout AliasScope)
        throws(DataError) -> SQLFragment
    {
        let target = try catalog.target(of: field, in: collection)
        guard case .object(let object) = value else {
            throw .invalid(
                "\(path): '\(field.name)' is a \(field.type.rawValue) relation to '\(target.name)'; filter on its fields, as in {\"\(field.name)\": {\"\(target.primaryKey.first?.name ?? "id")\": \(value.serializedString)}}"
            )
        }
        let operatorKeys = object.keys.filter { $0.hasPrefix("$") && $0 != "$and" && $0 != "$or" }
        if !operatorKeys.isEmpty {
            guard operatorKeys.count == object.count, operatorKeys.allSatisfy({ FilterOperator(name: $0)?.appliesToRelations == true }) else {
                let allowed = FilterOperator.allCases.filter(\.appliesToRelations).map(\.rawValue)
                throw .invalid(
                    "\(path): a relation takes only \(allowed.joined(separator: ", ")) directly; other operators go on one of '\(target.name)''s fields"
                )
            }
            var parts: [SQLFragment] = []
            for key in operatorKeys {
                let exists = try relatedRows(field, target: target, alias: alias, condition: nil, scope: &scope)
                let op = FilterOperator(name: key)
                let wantsRows = op == .exists || op == .notEmpty
                let flag = object[key]!
                let positive = flag.boolValue ?? true
                parts.append(wantsRows == positive ? exists : Self.not(exists))
            }
            return SQLFragment.all(parts)!
        }
        let innerAlias = scope.make()
        let inner = try group(object, collection: target, alias: innerAlias, path: path, depth: depth + 1, scope: &scope)
        return try relatedRows(field, target: target, alias: alias, condition: inner, innerAlias: innerAlias, scope: &scope)
    }

    static func not(_ condition: SQLFragment) -> SQLFragment {
        var f = SQLFragment("NOT (")
        f.append(condition)
        f.append(")")
        return f
    }

    /// `EXISTS (SELECT 1 FROM target WHERE <link> AND <condition>)`.
    func relatedRows(_ field: Field, target: CollectionSchema, alias: String, condition: SQLFragment?, innerAlias: String? = nil, scope: inout AliasScope)
        throws(DataError) -> SQLFragment
    {
        let relation = field.relation!
        let t = innerAlias ?? scope.make()
        var f = SQLFragment("EXISTS (SELECT 1 FROM ")
        var link = SQLFragment()
        switch field.type {
        case .belongsTo:
            f.append(catalog.from(target, as: t))
            link.append(column: relation.targetKey, of: t, equals: relation.foreignKey, of: alias)
        case .hasMany:
            f.append(catalog.from(target, as: t))
            link.append(column: relation.foreignKey, of: t, equals: relation.sourceKey, of: alias)
        case .belongsToMany:
            guard let through = relation.through, let otherKey = relation.otherKey else {
                throw .invalid("relation '\(field.name)' has no junction collection")
            }
            let junction = try catalog.junction(through)
            let j = scope.make()
            f.append(table: junction.tableName, as: j)
            f.append(" JOIN ")
            f.append(catalog.from(target, as: t))
            f.append(" ON ")
            f.append(column: relation.targetKey, of: t, equals: otherKey, of: j)
            link.append(column: relation.foreignKey, of: j, equals: relation.sourceKey, of: alias)
        default:
            throw .invalid("'\(field.name)' is not a relation")
        }
        f.append(" WHERE ")
        f.append(link)
        if let condition {
            f.append(" AND (")
            f.append(condition)
            f.append(")")
        }
        f.append(")")
        return f
    }

    // MARK: Columns

    func columnCondition(_ field: Field, _ value: JSON, alias: String, path: String) throws(DataError) -> SQLFragment {
        let column = SQLFragment.column(field.name, of: alias)
        switch value {
        case .object(let operators):
            guard !operators.isEmpty else { throw .invalid("\(path): empty condition; give a value or an operator such as {\"$eq\": ...}") }
            var parts: [SQLFragment] = []
            for (op, operand) in operators {
                parts.append(try apply(op, operand, field: field, column: column, path: path))
            }
            return SQLFragment.all(parts)!
        default:
            return try apply("$eq", value, field: field, column: column, path: path)
        }
    }

    func apply(_ name: String, _ operand: JSON, field: Field, column: SQLFragment, path: String) throws(DataError) -> SQLFragment {
        let where_ = "\(path).\(name)"
        guard let op = FilterOperator(name: name) else {
            throw .invalid(
                "\(where_): unknown operator '\(name)'; supported operators: \(Self.operators.joined(separator: ", ")), and $and/$or between conditions")
        }
        switch op {
        case .eq:
            if operand.isNull { return Self.suffix(column, " IS NULL") }
            if case .array = operand { return try apply("$in", operand, field: field, column: column, path: path) }
            return Self.binary(column, "=", try bindable(operand, field: field, at: where_))
        case .ne:
            if operand.isNull { return Self.suffix(column, " IS NOT NULL") }
            if case .array = operand { return try apply("$notIn", operand, field: field, column: column, path: path) }
            var f = SQLFragment("(")
            f.append(Self.binary(column, "<>", try bindable(operand, field: field, at: where_)))
            f.append(" OR ")
            f.append(column)
            f.append(" IS NULL)")
            return f
        case .in, .notIn:
            let items = operand.arrayValue ?? [operand]
            guard items.count <= Self.maxInValues else { throw .invalid("\(where_): at most \(Self.maxInValues) values, got \(items.count)") }
            if items.isEmpty { return SQLFragment(op == .in ? "1 = 0" : "1 = 1") }
            var list = SQLFragment()
            for (index, item) in items.enumerated() {
                if index > 0 { list.append(", ") }
                list.append(try bindable(item, field: field, at: "\(where_)[\(index)]"))
            }
            var f = column
            f.append(op == .in ? " IN (" : " NOT IN (")
            f.append(list)
            f.append(")")
            if op == .notIn {
                var g = SQLFragment("(")
                g.append(f)
                g.append(" OR ")
                g.append(column)
                g.append(" IS NULL)")
                return g
            }
            return f
        case .gt, .gte, .lt, .lte:
            guard !operand.isNull else { throw .invalid("\(where_) needs a value, got null") }
            let sqlOp = [FilterOperator.gt: ">", .gte: ">=", .lt: "<", .lte: "<="][op]!
            return Self.binary(column, sqlOp, try bindable(operand, field: field, at: where_))
        case .between, .notBetween:
            guard let pair = operand.arrayValue, pair.count == 2 else {
                throw .invalid("\(where_) needs an array of two values [low, high], got \(operand.serializedString.prefix(60))")
            }
            var f = column
            f.append(op == .between ? " BETWEEN " : " NOT BETWEEN ")
            f.append(try bindable(pair[0], field: field, at: "\(where_)[0]"))
            f.append(" AND ")
            f.append(try bindable(pair[1], field: field, at: "\(where_)[1]"))
            return f
        case .includes, .notIncludes, .startsWith, .notStartsWith, .endsWith, .notEndsWith:
            let (position, negated) = op.textMatch!
            if operand.isNull { return Self.suffix(column, negated ? " IS NOT NULL" : " IS NULL") }
            let values = operand.arrayValue ?? [operand]
            guard !values.isEmpty else { throw .invalid("\(where_) needs a string or a non-empty array of strings") }
            guard values.count <= Self.maxItems else { throw .invalid("\(where_): at most \(Self.maxItems) values, got \(values.count)") }
            let text = field.type.isTextual ? column : flavor.asText(column)
            var parts: [SQLFragment] = []
            for (index, item) in values.enumerated() {
                let s: String
                switch item {
                case .string(let string): s = string
                case .int, .double: s = item.serializedString
                default: throw .invalid("\(where_)\(values.count > 1 ? "[\(index)]" : ""): expected a string, got \(item.typeName)")
                }
                let escaped = Self.escapeLike(s)
                let pattern: String
                switch position {
                case .anywhere: pattern = "%\(escaped)%"
                case .start: pattern = "\(escaped)%"
                case .end: pattern = "%\(escaped)"
                }
                parts.append(flavor.like(text, pattern: pattern, negated: negated))
            }
            return SQLFragment.all(parts, negated ? "AND" : "OR")!
        case .like, .notLike:
            guard case .string(let pattern) = operand else { throw .invalid("\(where_) needs a LIKE pattern string, got \(operand.typeName)") }
            return flavor.like(field.type.isTextual ? column : flavor.asText(column), pattern: pattern, negated: op == .notLike)
        case .empty, .notEmpty:
            if field.type.isTextual || field.type == .json {
                var f = SQLFragment("(")
                f.append(column)
                f.append(op == .empty ? " IS NULL OR " : " IS NOT NULL AND ")
                f.append(column)
                f.append(op == .empty ? " = '')" : " <> '')")
                return f
            }
            return Self.suffix(column, op == .empty ? " IS NULL" : " IS NOT NULL")
        case .exists, .notExists:
            let positive = (operand.boolValue ?? true) == (op == .exists)
            return Self.suffix(column, positive ? " IS NOT NULL" : " IS NULL")
        case .isTruly, .isFalsy:
            guard field.type == .boolean else { throw .invalid("\(where_) applies to boolean fields; '\(field.name)' is \(field.type.rawValue)") }
            let wantTrue = (op == .isTruly) == (operand.boolValue ?? true)
            if wantTrue { return Self.binary(column, "=", .bind(.bool(true))) }
            var f = SQLFragment("(")
            f.append(column)
            f.append(" IS NULL OR ")
            f.append(Self.binary(column, "=", .bind(.bool(false))))
            f.append(")")
            return f
        case .dateOn, .dateNotOn, .dateBefore, .dateNotBefore, .dateAfter, .dateNotAfter, .dateBetween:
            guard field.type.isTemporal || field.type.isTextual else {
                throw .invalid("\(where_) applies to date fields; '\(field.name)' is \(field.type.rawValue)")
            }
            let span = try op.dateSpan(operand, at: where_)!
            let dateOnly = field.type == .date
            func compare(_ sqlOp: String, _ v: TemporalValue) -> SQLFragment {
                Self.binary(column, sqlOp, flavor.temporal(v.formatted(dateOnly: dateOnly), type: field.type))
            }
            var parts: [SQLFragment] = []
            if let from = span.from { parts.append(compare(span.outside ? "<" : ">=", from)) }
            if let until = span.until { parts.append(compare(span.outside ? ">=" : "<", until)) }
            return SQLFragment.all(parts, span.outside ? "OR" : "AND")!
        }
    }

    /// Checks a value against the field's type and returns it as a bound fragment.
    func bindable(_ value: JSON, field: Field, at path: String) throws(DataError) -> SQLFragment {
        if field.type.isTemporal {
            guard case .string(let text) = value, let parsed = TemporalValue.parse(text) else {
                throw .invalid(
                    "\(path): '\(field.name)' is a \(field.type.rawValue) field; expected a date string such as \"2024-05-17\", got \(value.serializedString.prefix(40))"
                )
            }
            return flavor.temporal(parsed.formatted(dateOnly: field.type == .date), type: field.type)
        }
        return .bind(try ValueCoercion.coerce(value, to: field, at: path))
    }

    static func binary(_ left: SQLFragment, _ op: String, _ right: SQLFragment) -> SQLFragment {
        var f = left
        f.append(" \(op) ")
        f.append(right)
        return f
    }

    static func suffix(_ left: SQLFragment, _ text: String) -> SQLFragment {
        var f = left
        f.append(text)
        return f
    }

    /// Escapes LIKE wildcards so `$includes: "50%"` matches the text "50%".
    static func escapeLike(_ s: String) -> String {
        var out = ""
        for c in s {
            if c == "%" || c == "_" || c == "\\" { out.append("\\") }
            out.append(c)
        }
        return out
    }
}

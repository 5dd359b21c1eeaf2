import PorticoJSON

/// Turns stored values into the JSON a client sees, by field type.
enum RowMapping {
    static func json(_ value: SQLValue, type: FieldType?) -> JSON {
        switch (value, type) {
        case (.null, _): return .null
        case (.int(let i), .boolean?): return .bool(i != 0)
        case (.bool(let b), _): return .bool(b)
        case (.int(let i), .float?), (.int(let i), .decimal?): return .double(Double(i))
        case (.int(let i), _): return .int(i)
        case (.double(let d), .integer?): return Int64(exactly: d).map { .int($0) } ?? .double(d)
        case (.double(let d), _): return .double(d)
        case (.text(let s), .json?): return (try? JSONParser.parse(s)) ?? .string(s)
        case (.text(let s), .integer?): return Int64(s).map { .int($0) } ?? .string(s)
        case (.text(let s), .float?), (.text(let s), .decimal?): return Double(s).map { .double($0) } ?? .string(s)
        case (.text(let s), .boolean?): return .bool(s == "1" || s == "true" || s == "t")
        case (.text(let s), _): return .string(s)
        }
    }

    /// A record object in field order, for the selected columns.
    static func record(_ row: Row, collection: CollectionSchema, columns: [String]) -> JSONObject {
        var object = JSONObject(minimumCapacity: columns.count)
        for name in columns {
            guard let value = row[name] else { continue }
            object[name] = json(value, type: collection.field(name)?.type)
        }
        return object
    }

    /// JSON for an untyped result column (aggregates, expressions).
    static func plain(_ value: SQLValue) -> JSON {
        json(value, type: nil)
    }
}

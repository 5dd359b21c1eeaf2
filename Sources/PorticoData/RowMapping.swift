public import PorticoJSON

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

    /// Record objects in field order, for the selected columns, from the rows of one query (which
    /// share their column layout, so each column's position and type are looked up once).
    static func records(_ rows: some Collection<Row>, collection: CollectionSchema, columns: [String]) -> [JSONObject] {
        measuredRecords(rows, collection: collection, columns: columns).records
    }

    /// Record objects as `records` makes them, with each one's serialised size, counted as the
    /// record is built. Every record shares one array of keys.
    static func measuredRecords(_ rows: some Collection<Row>, collection: CollectionSchema, columns: [String]) -> (records: [JSONObject], sizes: [Int]) {
        guard let first = rows.first else { return ([], []) }
        let layout: [(name: String, index: Int, type: FieldType?)] = columns.compactMap { name in
            first.columns.firstIndex(of: name).map { (name, $0, collection.field(name)?.type) }
        }
        let keys = ContiguousArray(layout.map { $0.name })
        var records: [JSONObject] = []
        var sizes: [Int] = []
        records.reserveCapacity(rows.count)
        sizes.reserveCapacity(rows.count)
        for row in rows {
            var values = ContiguousArray<JSON>()
            values.reserveCapacity(layout.count)
            var size = 2
            for column in layout {
                let value = row.values[column.index]
                size += ResultMeter.memberSize(column.name, value)
                values.append(json(value, type: column.type))
            }
            records.append(JSONObject(uncheckedUniqueKeys: keys, values: values))
            sizes.append(size)
        }
        return (records, sizes)
    }
}

extension SQLValue {
    /// The value as JSON: integers, numbers, text and null as they are (a non-finite number as its text).
    public var json: JSON {
        switch self {
        case .null: .null
        case .int(let i): .int(i)
        case .double(let d): d.isFinite ? .double(d) : .string(String(d))
        case .bool(let b): .bool(b)
        case .text(let s): .string(s)
        }
    }
}

public import PorticoJSON
public import PorticoStore

/// Turns stored values into the JSON a client sees, by field type.
public enum RowMapping {
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
        guard let first = rows.first else { return [] }
        return RowLayout(first, collection: collection, columns: columns).records(rows)
    }

    /// Record objects as `records` makes them, with each one's serialised size, counted as the
    /// record is built. Every record shares one array of keys.
    static func measuredRecords(_ rows: some Collection<Row>, collection: CollectionSchema, columns: [String]) -> (records: [JSONObject], sizes: [Int]) {
        guard let first = rows.first else { return ([], []) }
        let layout = RowLayout(first, collection: collection, columns: columns)
        return (layout.records(rows), rows.map(layout.size))
    }

    /// Writes what `json(value, type:)` gives, as `JSONWriter.write` would write it: the common
    /// kinds straight from the stored value, the others through `json`.
    static func write(_ value: SQLValue, type: FieldType?, to writer: inout JSONWriter) {
        switch (value, type) {
        case (.null, _): writer.appendLiteral("null")
        case (.int(let i), _) where type != .boolean && type != .float && type != .decimal: writer.writeInteger(i)
        case (.double(let d), _) where type != .integer: writer.writeDouble(d)
        case (.text(let s), _) where type != .json && type != .integer && type != .float && type != .decimal && type != .boolean:
            writer.writeString(s)
        default: writer.write(json(value, type: type))
        }
    }
}

/// Where the selected columns sit in the rows of one query and what type each field has, with
/// their names serialised once: records are made, measured and written from rows without a
/// lookup per value.
struct RowLayout: Sendable {
    struct Column: Sendable {
        let index: Int
        let type: FieldType?
    }

    let columns: [Column]
    /// The record's keys, one array shared by every record made.
    let keys: ContiguousArray<String>
    /// The keys serialised once, for writing records.
    private let members: SerializedKeys
    /// The fixed part of a record's serialised size (braces, names, quotes, colons, commas).
    private let fixedSize: Int

    /// The layout of the rows of the query that `first` came from, for `names` (those the rows
    /// lack are left out).
    init(_ first: Row, collection: CollectionSchema, columns names: [String]) {
        var columns: [Column] = []
        var keys = ContiguousArray<String>()
        columns.reserveCapacity(names.count)
        keys.reserveCapacity(names.count)
        var fixedSize = 2
        for name in names {
            guard let index = first.columns.firstIndex(of: name) else { continue }
            columns.append(Column(index: index, type: collection.fieldType(name)))
            keys.append(name)
            fixedSize += ResultMeter.memberOverhead(name)
        }
        self.columns = columns
        self.keys = keys
        members = SerializedKeys(keys)
        self.fixedSize = fixedSize
    }

    func records(_ rows: some Collection<Row>) -> [JSONObject] {
        var records: [JSONObject] = []
        records.reserveCapacity(rows.count)
        for row in rows {
            var values = ContiguousArray<JSON>()
            values.reserveCapacity(columns.count)
            for column in columns { values.append(RowMapping.json(row.values[column.index], type: column.type)) }
            records.append(JSONObject(uncheckedUniqueKeys: keys, values: values))
        }
        return records
    }

    /// The serialised size of `row`'s record, give or take escapes (as `ResultMeter` counts).
    func size(_ row: Row) -> Int {
        var size = fixedSize
        for column in columns { size += ResultMeter.size(of: row.values[column.index]) }
        return size
    }

    /// Writes `row`'s record: the bytes `JSONWriter.write(.object(record))` writes.
    func write(_ row: Row, to writer: inout JSONWriter) {
        writer.appendLiteral("{")
        members.forEachMember { position, name in
            writer.writeRaw(name)
            let column = columns[position]
            RowMapping.write(row.values[column.index], type: column.type, to: &writer)
        }
        writer.appendLiteral("}")
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

extension RowMapping {
    /// The alias of the row a create's statement inserts, for statements that read it in the same
    /// statement (`WITH written AS (INSERT ... RETURNING *) ...`, on PostgreSQL).
    public static let writtenRow = "written"

    /// SQL (PostgreSQL) for the JSON text of the row `writtenRow` beside the types of its fields,
    /// for a statement that stores the record with the row it inserts, in one statement: the
    /// database writes the row (`row_to_json`) and `record(stored:)` reads it back into the record
    /// `records` makes of the row.
    public static func storedRecord(of collection: CollectionSchema) -> SQLFragment {
        var types = JSONObject()
        for field in collection.columns { types[field.name] = .string(field.type.rawValue) }
        var q = SQLFragment("(CAST(")
        q.append(bind: .text("{\"$types\":" + JSON.object(types).serializedString + ",\"$row\":"))
        // `written.*`: the whole row, even where a column is itself named `written`.
        q.append(" AS TEXT) || CAST(row_to_json(")
        q.append(alias: writtenRow)
        q.append(".*) AS TEXT) || '}')")
        return q
    }

    /// The record a `storedRecord` expression wrote, as `records` makes it of the row; any other
    /// value as it is. PostgreSQL writes a timestamp as `2026-11-25T21:50:13.5`, which is read to
    /// the second as the row's timestamps are.
    public static func record(stored: JSON) -> JSON {
        guard case .object(let row)? = stored["$row"], case .object(let types)? = stored["$types"] else { return stored }
        var record = JSONObject()
        for (name, type) in types {
            guard let value = row[name] else { continue }
            let type = type.stringValue.flatMap(FieldType.init(rawValue:))
            switch value {
            case .null: record[name] = .null
            case .int(let i): record[name] = json(.int(i), type: type)
            case .double(let d): record[name] = json(.double(d), type: type)
            case .bool(let b): record[name] = .bool(b)
            // JSON is in the row as JSON already: a string in it stays a string.
            case _ where type == .json: record[name] = value
            case .string(let s) where type == .datetime:
                record[name] = .string(String(s.prefix(19).map { $0 == "T" ? " " : $0 }))
            case .string(let s): record[name] = json(.text(s), type: type)
            default: record[name] = value
            }
        }
        return .object(record)
    }
}

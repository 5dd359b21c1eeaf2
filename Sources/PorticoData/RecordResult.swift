public import PorticoJSON
import PorticoStore

/// What a list or get returns, `{data, meta}`. The records of a plan without appends (most
/// reads) are kept as the rows they were read from and written from those rows straight to
/// JSON, so the common read builds no value tree for its records; `json` makes the value for
/// the callers that want one, and `write(to:)` writes the same bytes that value would.
public struct RecordResult: Sendable {
    enum Records: Sendable {
        case rows([Row], RowLayout)
        case objects([JSONObject])

        var count: Int {
            switch self {
            case .rows(let rows, _): rows.count
            case .objects(let objects): objects.count
            }
        }

        var objects: [JSONObject] {
            switch self {
            case .rows(let rows, let layout): layout.records(rows)
            case .objects(let objects): objects
            }
        }
    }

    let records: Records
    /// A get's `data` is its record or null; a list's is an array.
    let single: Bool
    let meta: JSONObject?

    public var json: JSON {
        let objects = records.objects
        var result: JSONObject = ["data": single ? objects.first.map { .object($0) } ?? .null : .array(objects.map { .object($0) })]
        if let meta { result["meta"] = .object(meta) }
        return .object(result)
    }

    public func write(to writer: inout JSONWriter) {
        writer.appendLiteral("{\"data\":")
        switch records {
        case .rows(let rows, let layout):
            if single {
                if let row = rows.first { layout.write(row, to: &writer) } else { writer.appendLiteral("null") }
            } else {
                writer.appendLiteral("[")
                for (index, row) in rows.enumerated() {
                    if index > 0 { writer.appendLiteral(",") }
                    layout.write(row, to: &writer)
                }
                writer.appendLiteral("]")
            }
        case .objects(let objects):
            writer.write(single ? objects.first.map { .object($0) } ?? .null : .array(objects.map { .object($0) }))
        }
        if let meta {
            writer.appendLiteral(",\"meta\":")
            writer.write(.object(meta))
        }
        writer.appendLiteral("}")
    }

    /// The compact serialisation: the bytes of `json.serialized`.
    public var serialized: [UInt8] {
        var writer = JSONWriter(capacity: 1024)
        write(to: &writer)
        return writer.bytes
    }
}

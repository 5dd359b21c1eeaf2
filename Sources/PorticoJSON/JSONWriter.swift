/// Serialises `JSON` compactly into UTF-8 bytes.
public struct JSONWriter {
    public private(set) var bytes: [UInt8]

    public init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    public mutating func write(_ value: JSON) {
        switch value {
        case .null: appendLiteral("null")
        case .bool(let b): appendLiteral(b ? "true" : "false")
        case .int(let i): writeInteger(i)
        case .double(let d): writeDouble(d)
        case .string(let s): writeString(s)
        case .array(let array):
            bytes.append(UInt8(ascii: "["))
            var first = true
            for element in array {
                if !first { bytes.append(UInt8(ascii: ",")) }
                first = false
                write(element)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let object):
            bytes.append(UInt8(ascii: "{"))
            var first = true
            for (key, element) in object {
                if !first { bytes.append(UInt8(ascii: ",")) }
                first = false
                writeString(key)
                bytes.append(UInt8(ascii: ":"))
                write(element)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// Appends bytes that are already valid JSON (a value serialised earlier).
    public mutating func writeRaw(_ raw: some Sequence<UInt8>) {
        bytes.append(contentsOf: raw)
    }

    public mutating func appendLiteral(_ literal: StaticString) {
        literal.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    public mutating func writeInteger(_ value: Int64) {
        if value >= 0 && value < 10 {
            bytes.append(UInt8(ascii: "0") + UInt8(value))
            return
        }
        bytes.append(contentsOf: String(value).utf8)
    }

    public mutating func writeDouble(_ value: Double) {
        guard value.isFinite else {
            appendLiteral("null")
            return
        }
        if value == value.rounded(), abs(value) < 1e15 {
            // Whole numbers print without an exponent or a trailing ".0" noise-free: 3.0 -> 3.0
            bytes.append(contentsOf: String(Int64(value)).utf8)
            appendLiteral(".0")
            return
        }
        bytes.append(contentsOf: value.description.utf8)
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    public mutating func writeString(_ string: String) {
        bytes.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { utf8 in
            var runStart = 0
            for i in 0..<utf8.count {
                let byte = utf8[i]
                let escaped: UInt8
                switch byte {
                case UInt8(ascii: "\""): escaped = UInt8(ascii: "\"")
                case UInt8(ascii: "\\"): escaped = UInt8(ascii: "\\")
                case 0x0A: escaped = UInt8(ascii: "n")
                case 0x0D: escaped = UInt8(ascii: "r")
                case 0x09: escaped = UInt8(ascii: "t")
                case 0x00..<0x20: escaped = 0
                default: continue
                }
                if runStart < i { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<i])) }
                runStart = i + 1
                bytes.append(UInt8(ascii: "\\"))
                if escaped != 0 {
                    bytes.append(escaped)
                } else {
                    bytes.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), Self.hex[Int(byte >> 4)], Self.hex[Int(byte & 0xF)]])
                }
            }
            if runStart < utf8.count { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<utf8.count])) }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

extension JSON {
    /// The compact UTF-8 serialisation of this value.
    public var serialized: [UInt8] {
        var writer = JSONWriter()
        writer.write(self)
        return writer.bytes
    }

    /// The compact serialisation as a `String`.
    public var serializedString: String {
        String(decoding: serialized, as: UTF8.self)
    }
}

extension JSON {
    /// Indented JSON for people (two spaces), as Casdoor formats its tool results.
    public var prettyString: String {
        var out = ""
        func write(_ value: JSON, _ indent: String) {
            switch value {
            case .array(let items) where !items.isEmpty:
                out += "[\n"
                for (i, item) in items.enumerated() {
                    out += indent + "  "
                    write(item, indent + "  ")
                    out += i < items.count - 1 ? ",\n" : "\n"
                }
                out += indent + "]"
            case .object(let object) where !object.isEmpty:
                out += "{\n"
                for (i, (key, item)) in object.enumerated() {
                    out += indent + "  " + JSON.string(key).serializedString + ": "
                    write(item, indent + "  ")
                    out += i < object.count - 1 ? ",\n" : "\n"
                }
                out += indent + "}"
            default:
                out += value.serializedString
            }
        }
        write(self, "")
        return out
    }
}

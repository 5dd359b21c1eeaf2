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
        // Digits into a small buffer from the right, then one append: no String in between.
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: 20 digits and a sign
        withUnsafeMutableBytes(of: &digits) { buffer in
            var magnitude = value.magnitude
            var index = buffer.count
            repeat {
                index -= 1
                buffer[index] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 {
                index -= 1
                buffer[index] = UInt8(ascii: "-")
            }
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[index...]))
        }
    }

    public mutating func writeDouble(_ value: Double) {
        guard value.isFinite else {
            appendLiteral("null")
            return
        }
        if value == value.rounded(), abs(value) < 1e15 {
            // Whole numbers keep a ".0", so they read back as numbers with a fraction: 3.0 -> 3.0
            writeInteger(Int64(value))
            appendLiteral(".0")
            return
        }
        var text = value.description
        text.withUTF8 { bytes.append(contentsOf: $0) }
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    public mutating func writeString(_ string: String) {
        bytes.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { writeEscaped($0) }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends UTF-8 text with JSON's escapes. Eight bytes at a time are checked for a quote, a
    /// backslash or a control character; text without one (most values) is copied in one append,
    /// text with some is sized first and written in place.
    private mutating func writeEscaped(_ utf8: UnsafeBufferPointer<UInt8>) {
        guard let base = utf8.baseAddress else { return }
        let count = utf8.count
        var i = 0
        while i + 8 <= count, !Self.mayNeedEscape(UInt64(littleEndian: UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self))) { i += 8 }
        while i < count, !Self.needsEscape(base[i]) { i += 1 }
        guard i < count else {
            bytes.append(contentsOf: utf8)
            return
        }
        var length = count
        for j in i..<count where Self.needsEscape(base[j]) { length += Self.escapedLength(base[j]) - 1 }
        let start = bytes.count
        if bytes.capacity < start + length { bytes.reserveCapacity(max(start + length, bytes.capacity * 2)) }
        bytes.append(contentsOf: repeatElement(0, count: length))
        bytes.withUnsafeMutableBufferPointer { buffer in
            var out = buffer.baseAddress! + start
            out.update(from: base, count: i)
            out += i
            for j in i..<count {
                let byte = base[j]
                guard Self.needsEscape(byte) else {
                    out.pointee = byte
                    out += 1
                    continue
                }
                out[0] = UInt8(ascii: "\\")
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): out[1] = byte
                case 0x0A: out[1] = UInt8(ascii: "n")
                case 0x0D: out[1] = UInt8(ascii: "r")
                case 0x09: out[1] = UInt8(ascii: "t")
                default:
                    out[1] = UInt8(ascii: "u")
                    out[2] = UInt8(ascii: "0")
                    out[3] = UInt8(ascii: "0")
                    out[4] = Self.hex[Int(byte >> 4)]
                    out[5] = Self.hex[Int(byte & 0xF)]
                }
                out += Self.escapedLength(byte)
            }
        }
    }

    @inline(__always)
    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    /// Bytes an escaped byte takes: `\n`-style pairs, `\u00XX` for other control characters.
    @inline(__always)
    private static func escapedLength(_ byte: UInt8) -> Int {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x0A, 0x0D, 0x09: 2
        default: 6
        }
    }

    /// Whether any byte of `word` may be a quote, a backslash or below 0x20 (no false negatives;
    /// a false positive only sends the word through the byte-by-byte path).
    @inline(__always)
    private static func mayNeedEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        func hasZeroByte(_ v: UInt64) -> Bool { (v &- ones) & ~v & highs != 0 }
        let control = (word &- 0x2020_2020_2020_2020) & ~word & highs != 0
        return control || hasZeroByte(word ^ (ones &* 0x22)) || hasZeroByte(word ^ (ones &* 0x5C))
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

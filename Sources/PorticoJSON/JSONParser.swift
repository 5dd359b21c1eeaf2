/// Why a body could not be read as JSON, with the byte offset where reading stopped.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public var reason: String
    public var offset: Int

    public var description: String { "\(reason) at position \(offset)" }
}

/// A strict RFC 8259 parser for untrusted input.
///
/// It refuses duplicate member names (two readers of one body must never disagree on what it
/// says), nesting deeper than `maxDepth`, lone surrogates and trailing bytes, and reports the
/// offset of the first problem so a client can find it.
public struct JSONParser {
    public static let defaultMaxDepth = 64

    public static func parse(_ bytes: some Collection<UInt8>, maxDepth: Int = defaultMaxDepth) throws(JSONParseError) -> JSON {
        let read = { (buffer: UnsafeBufferPointer<UInt8>) -> Result<JSON, JSONParseError> in
            var parser = Reader(buffer: buffer, maxDepth: maxDepth)
            return Result { () throws(JSONParseError) -> JSON in try parser.parseDocument() }
        }
        if let result = bytes.withContiguousStorageIfAvailable(read) {
            return try result.get()
        }
        return try Array(bytes).withUnsafeBufferPointer(read).get()
    }

    public static func parse(_ text: String, maxDepth: Int = defaultMaxDepth) throws(JSONParseError) -> JSON {
        try parse(Array(text.utf8), maxDepth: maxDepth)
    }
}

private struct Reader {
    let buffer: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    var index = 0
    var depth = 0

    init(buffer: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.buffer = buffer
        self.maxDepth = maxDepth
    }

    mutating func parseDocument() throws(JSONParseError) -> JSON {
        skipWhitespace()
        if index == buffer.count { throw fail("empty body: expected a JSON value") }
        let value = try parseValue()
        skipWhitespace()
        if index != buffer.count { throw fail("unexpected \(describe(buffer[index])) after the JSON value") }
        return value
    }

    func fail(_ reason: String) -> JSONParseError {
        JSONParseError(reason: reason, offset: index)
    }

    func describe(_ byte: UInt8) -> String {
        if byte >= 0x20 && byte < 0x7F { return "character '\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x\(String(byte, radix: 16, uppercase: true))"
    }

    mutating func skipWhitespace() {
        while index < buffer.count {
            switch buffer[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    mutating func parseValue() throws(JSONParseError) -> JSON {
        guard index < buffer.count else { throw fail("unexpected end of input: expected a value") }
        switch buffer[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw fail("unexpected \(describe(buffer[index])): expected a value")
        }
    }

    mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let count = literal.utf8CodeUnitCount
        guard index + count <= buffer.count else { throw fail("unexpected end of input in literal") }
        let start = literal.utf8Start
        for offset in 0..<count where buffer[index + offset] != start[offset] {
            index += offset
            throw fail("invalid literal: expected '\(literal)'")
        }
        index += count
    }

    mutating func enter() throws(JSONParseError) {
        depth += 1
        if depth > maxDepth { throw fail("nesting deeper than \(maxDepth) levels") }
    }

    /// Members of an object checked for a duplicate name by a scan; a set takes over past this.
    static let scannedMembers = 16

    mutating func parseObject() throws(JSONParseError) -> JSON {
        try enter()
        index += 1
        skipWhitespace()
        if index < buffer.count && buffer[index] == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return .object(JSONObject())
        }
        // Members are gathered in two arrays and the object built once at the end: building it
        // member by member costs a dictionary update (and its generic lookups) per member.
        // Duplicates are found by a scan while the object is small, by a set past that.
        var keys = ContiguousArray<String>()
        var values = ContiguousArray<JSON>()
        keys.reserveCapacity(8)
        values.reserveCapacity(8)
        var seen: Set<String>? = nil
        while true {
            skipWhitespace()
            guard index < buffer.count else { throw fail("unexpected end of input in object") }
            guard buffer[index] == UInt8(ascii: "\"") else {
                throw fail("unexpected \(describe(buffer[index])): expected a member name in double quotes")
            }
            let keyStart = index
            let key = try parseString()
            skipWhitespace()
            guard index < buffer.count, buffer[index] == UInt8(ascii: ":") else {
                throw fail(index < buffer.count ? "unexpected \(describe(buffer[index])): expected ':'" : "unexpected end of input: expected ':'")
            }
            index += 1
            skipWhitespace()
            let value = try parseValue()
            let duplicate: Bool
            if keys.count < Self.scannedMembers {
                duplicate = keys.contains(key)
            } else {
                if seen == nil { seen = Set(keys) }
                duplicate = !seen!.insert(key).inserted
            }
            if duplicate {
                throw JSONParseError(reason: "duplicate member name \"\(key)\"", offset: keyStart)
            }
            keys.append(key)
            values.append(value)
            skipWhitespace()
            guard index < buffer.count else { throw fail("unexpected end of input in object") }
            switch buffer[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                depth -= 1
                return .object(JSONObject(uncheckedUniqueKeys: keys, values: values))
            default: throw fail("unexpected \(describe(buffer[index])): expected ',' or '}'")
            }
        }
    }

    mutating func parseArray() throws(JSONParseError) -> JSON {
        try enter()
        index += 1
        var array: [JSON] = []
        skipWhitespace()
        if index < buffer.count && buffer[index] == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return .array(array)
        }
        array.reserveCapacity(4)
        while true {
            skipWhitespace()
            array.append(try parseValue())
            skipWhitespace()
            guard index < buffer.count else { throw fail("unexpected end of input in array") }
            switch buffer[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                depth -= 1
                return .array(array)
            default: throw fail("unexpected \(describe(buffer[index])): expected ',' or ']'")
            }
        }
    }

    mutating func parseString() throws(JSONParseError) -> String {
        index += 1  // opening quote
        let start = index
        // Fast path: no escapes, all bytes valid UTF-8 checked by String(validating:).
        while index < buffer.count {
            let byte = buffer[index]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: buffer[start..<index])
                guard let string = Self.string(validating: slice) else {
                    index = start
                    throw fail("string is not valid UTF-8")
                }
                index += 1
                return string
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw fail("unescaped control character in string") }
            index += 1
        }
        guard index < buffer.count else { throw fail("unterminated string") }
        // Slow path with escapes.
        var bytes = [UInt8](UnsafeBufferPointer(rebasing: buffer[start..<index]))
        while index < buffer.count {
            let byte = buffer[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let string = bytes.withUnsafeBufferPointer(Self.string(validating:)) else {
                    index = start
                    throw fail("string is not valid UTF-8")
                }
                return string
            case UInt8(ascii: "\\"):
                index += 1
                guard index < buffer.count else { throw fail("unterminated string") }
                let escape = buffer[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): bytes.append(0x22)
                case UInt8(ascii: "\\"): bytes.append(0x5C)
                case UInt8(ascii: "/"): bytes.append(0x2F)
                case UInt8(ascii: "b"): bytes.append(0x08)
                case UInt8(ascii: "f"): bytes.append(0x0C)
                case UInt8(ascii: "n"): bytes.append(0x0A)
                case UInt8(ascii: "r"): bytes.append(0x0D)
                case UInt8(ascii: "t"): bytes.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try parseHex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard index + 1 < buffer.count, buffer[index] == UInt8(ascii: "\\"), buffer[index + 1] == UInt8(ascii: "u") else {
                            throw fail("lone high surrogate in \\u escape")
                        }
                        index += 2
                        let low = try parseHex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw fail("invalid low surrogate in \\u escape") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        throw fail("lone low surrogate in \\u escape")
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw fail("invalid \\u escape") }
                    bytes.append(contentsOf: UTF8.encode(unicode)!)
                default:
                    index -= 1
                    throw fail("invalid escape \(describe(escape)) in string")
                }
            default:
                if byte < 0x20 { throw fail("unescaped control character in string") }
                bytes.append(byte)
                index += 1
            }
        }
        throw fail("unterminated string")
    }

    /// The string of UTF-8 bytes, or nil when they are not valid UTF-8. ASCII, most of what a
    /// request holds, is recognised eight bytes at a time and needs no further check.
    static func string(validating bytes: UnsafeBufferPointer<UInt8>) -> String? {
        guard let base = bytes.baseAddress else { return "" }
        var i = 0
        while i + 8 <= bytes.count, UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self) & 0x8080_8080_8080_8080 == 0 { i += 8 }
        while i < bytes.count, base[i] < 0x80 { i += 1 }
        if i == bytes.count { return String(decoding: bytes, as: UTF8.self) }
        return String(validating: bytes, as: UTF8.self)
    }

    mutating func parseHex4() throws(JSONParseError) -> UInt32 {
        guard index + 4 <= buffer.count else { throw fail("truncated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = buffer[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw fail("invalid hex digit in \\u escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    mutating func parseNumber() throws(JSONParseError) -> JSON {
        let start = index
        var isInteger = true
        if buffer[index] == UInt8(ascii: "-") { index += 1 }
        guard index < buffer.count, isDigit(buffer[index]) else { throw fail("invalid number: expected a digit") }
        if buffer[index] == UInt8(ascii: "0") {
            index += 1
            if index < buffer.count, isDigit(buffer[index]) { throw fail("invalid number: leading zero") }
        } else {
            while index < buffer.count, isDigit(buffer[index]) { index += 1 }
        }
        if index < buffer.count, buffer[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard index < buffer.count, isDigit(buffer[index]) else { throw fail("invalid number: expected a digit after '.'") }
            while index < buffer.count, isDigit(buffer[index]) { index += 1 }
        }
        if index < buffer.count, buffer[index] == UInt8(ascii: "e") || buffer[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < buffer.count, buffer[index] == UInt8(ascii: "+") || buffer[index] == UInt8(ascii: "-") { index += 1 }
            guard index < buffer.count, isDigit(buffer[index]) else { throw fail("invalid number: expected a digit in the exponent") }
            while index < buffer.count, isDigit(buffer[index]) { index += 1 }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: buffer[start..<index]), as: UTF8.self)
        if isInteger, let value = Int64(text) { return .int(value) }
        guard let value = Double(text), value.isFinite else {
            index = start
            throw fail("number out of range")
        }
        return .double(value)
    }

    @inline(__always) func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }
}

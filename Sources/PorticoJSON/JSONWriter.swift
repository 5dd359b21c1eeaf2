/// Serialises `JSON` compactly into UTF-8 bytes, in a buffer of its own: appending a few bytes
/// is a capacity check and a copy, where `Array.append(contentsOf:)` costs a hundred
/// instructions, and a response is hundreds of small appends.
public struct JSONWriter: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private var count = 0
    private var capacity: Int

    public init(capacity: Int = 256) {
        self.capacity = max(capacity, 16)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    /// What was written so far.
    public var bytes: [UInt8] { [UInt8](UnsafeBufferPointer(start: base, count: count)) }

    /// Bytes written so far.
    public var byteCount: Int { count }

    /// The member names of the objects last written that share one array of keys (the records of
    /// one query do), serialised once. Only good within one call of `write`, while the value tree
    /// it reads keeps every array of keys alive, so that an address names one array.
    private var sharedKeys: (address: UnsafeRawPointer, members: SerializedKeys)?
    /// The keys of the last object written, whose names are serialised only if the next object
    /// shares them: an object met once (arguments, a record got alone) costs no serialisation.
    private var lastKeys: UnsafeRawPointer?

    public mutating func write(_ value: JSON) {
        sharedKeys = nil
        lastKeys = nil
        writeValue(value)
    }

    private mutating func writeValue(_ value: JSON) {
        switch value {
        case .null: appendLiteral("null")
        case .bool(let b): appendLiteral(b ? "true" : "false")
        case .int(let i): writeInteger(i)
        case .double(let d): writeDouble(d)
        case .string(let s): writeString(s)
        case .array(let array):
            append(UInt8(ascii: "["))
            array.withUnsafeBufferPointer { elements in
                for index in elements.indices {
                    if index > 0 { append(UInt8(ascii: ",")) }
                    writeValue(elements[index])
                }
            }
            append(UInt8(ascii: "]"))
        case .object(let object):
            writeObject(object)
        }
    }

    /// Keys and values are read in place from their arrays (iterating the dictionary would copy
    /// each pair out, a retain and a release for each); an object whose keys are the same array
    /// as the last one's reuses their serialisation, made when an object follows the last object
    /// of more than one member with the same keys (the rows of a list).
    private mutating func writeObject(_ object: JSONObject) {
        append(UInt8(ascii: "{"))
        object.values.withUnsafeBufferPointer { values in
            // The keys' own storage, which lives as long as the object (an ordered set's keys
            // always have one).
            let shared = object.keys.withContiguousStorageIfAvailable { keys -> Bool in
                guard keys.count > 1, let address = keys.baseAddress.map(UnsafeRawPointer.init) else { return false }
                if address != sharedKeys?.address {
                    guard address == lastKeys else {
                        lastKeys = address
                        return false
                    }
                    sharedKeys = (address, SerializedKeys(keys))
                }
                // Held apart from the writer: a nested object may replace the shared keys.
                let members = sharedKeys!.members
                members.forEachMember { index, prefix in
                    append(prefix)
                    writeValue(values[index])
                }
                return true
            }
            if shared == true { return }
            for (index, key) in object.keys.enumerated() {
                if index > 0 { append(UInt8(ascii: ",")) }
                writeString(key)
                append(UInt8(ascii: ":"))
                writeValue(values[index])
            }
        }
        append(UInt8(ascii: "}"))
    }

    // MARK: The buffer

    @inline(__always)
    private mutating func reserve(_ extra: Int) {
        if count + extra > capacity { grow(to: count + extra) }
    }

    private mutating func grow(to needed: Int) {
        let newCapacity = max(needed, capacity * 2)
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.update(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    @inline(__always)
    mutating func append(_ buffer: UnsafeBufferPointer<UInt8>) {
        guard let source = buffer.baseAddress, !buffer.isEmpty else { return }
        reserve(buffer.count)
        (base + count).update(from: source, count: buffer.count)
        count += buffer.count
    }

    /// Appends bytes that are already valid JSON (a value serialised earlier).
    public mutating func writeRaw(_ raw: [UInt8]) {
        raw.withUnsafeBufferPointer { append($0) }
    }

    /// Appends bytes that are already valid JSON, or a valid part of it.
    public mutating func writeRaw(_ raw: UnsafeBufferPointer<UInt8>) {
        append(raw)
    }

    /// Writes `bytes` (a digest) as a JSON string of their lowercase hex.
    public mutating func writeHexString(_ bytes: UnsafeRawBufferPointer) {
        reserve(bytes.count * 2 + 2)
        base[count] = UInt8(ascii: "\"")
        var out = base + count + 1
        Self.hexPairs.withUnsafeBufferPointer { pairs in
            let pairs = UnsafeRawPointer(pairs.baseAddress!)
            for byte in bytes {
                UnsafeMutableRawPointer(out).storeBytes(of: pairs.loadUnaligned(fromByteOffset: Int(byte) * 2, as: UInt16.self), as: UInt16.self)
                out += 2
            }
        }
        out.pointee = UInt8(ascii: "\"")
        count = out + 1 - base
    }

    /// "00", "01", ... "ff", one after another.
    private static let hexPairs: [UInt8] = (0..<256).flatMap { byte in [byte >> 4, byte & 0x0F].map { UInt8($0 < 10 ? 48 + $0 : 87 + $0) } }

    /// Appends one ASCII byte (a bracket, a comma) that needs no escape.
    public mutating func appendASCII(_ byte: UInt8) {
        append(byte)
    }

    public mutating func appendLiteral(_ literal: StaticString) {
        literal.withUTF8Buffer { append($0) }
    }

    public mutating func writeInteger(_ value: Int64) {
        if value >= 0 && value < 10 {
            append(UInt8(ascii: "0") + UInt8(value))
            return
        }
        // Digits written from the right into the buffer, two at a time from a table of the
        // hundred pairs: no String in between, and half the divisions.
        reserve(20)
        var magnitude = value.magnitude
        if value < 0 {
            base[count] = UInt8(ascii: "-")
            count += 1
        }
        var digits = 1
        var bound: UInt64 = 10
        while digits < 20, magnitude >= bound {
            digits += 1
            bound = bound &* 10
        }
        var index = count + digits
        count = index
        Self.digitPairs.withUnsafeBufferPointer { pairs in
            while magnitude >= 100 {
                let pair = Int(magnitude % 100) * 2
                magnitude /= 100
                index -= 2
                base[index] = pairs[pair]
                base[index + 1] = pairs[pair + 1]
            }
            if magnitude >= 10 {
                let pair = Int(magnitude) * 2
                base[index - 2] = pairs[pair]
                base[index - 1] = pairs[pair + 1]
            } else {
                base[index - 1] = UInt8(ascii: "0") + UInt8(magnitude)
            }
        }
    }

    /// "00", "01", ... "99", one after another.
    private static let digitPairs: [UInt8] = (0..<100).flatMap { [UInt8(ascii: "0") + UInt8($0 / 10), UInt8(ascii: "0") + UInt8($0 % 10)] }

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
        // Prices and the like: a value that is exactly a whole number of hundredths prints as
        // those digits, the shortest text that reads back as the same double (as `description`).
        if abs(value) < 1e12 {
            let hundredths = (value * 100).rounded()
            if hundredths / 100 == value {
                let magnitude = Int64(abs(hundredths))
                if value < 0 { append(UInt8(ascii: "-")) }
                writeInteger(magnitude / 100)
                append(UInt8(ascii: "."))
                let fraction = magnitude % 100
                append(UInt8(ascii: "0") + UInt8(fraction / 10))
                if fraction % 10 != 0 { append(UInt8(ascii: "0") + UInt8(fraction % 10)) }
                return
            }
        }
        var text = value.description
        text.withUTF8 { append($0) }
    }

    public mutating func writeString(_ string: String) {
        var string = string
        string.withUTF8 { utf8 in
            // Keys and most values are short and need no escape: copied as they are checked,
            // eight bytes at a time and then byte by byte, with their quotes; the first byte
            // that may need an escape hands the rest to `writeEscaped`.
            reserve(utf8.count + 2)
            var out = base + count
            out.pointee = UInt8(ascii: "\"")
            out += 1
            var start = 0
            if let source = utf8.baseAddress {
                while start + 8 <= utf8.count {
                    let word = UnsafeRawPointer(source + start).loadUnaligned(as: UInt64.self)
                    if Self.mayNeedEscape(word) { break }
                    UnsafeMutableRawPointer(out).storeBytes(of: word, as: UInt64.self)
                    out += 8
                    start += 8
                }
            }
            for index in start..<utf8.count {
                let byte = utf8[index]
                if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                    count = out - base
                    writeEscaped(UnsafeBufferPointer(rebasing: utf8[index...]))
                    append(UInt8(ascii: "\""))
                    return
                }
                out.pointee = byte
                out += 1
            }
            out.pointee = UInt8(ascii: "\"")
            count = out + 1 - base
        }
    }

    /// Writes bytes another writer holds (already JSON) as a JSON string. Escaping the bytes of a
    /// serialisation costs a byte scan, where walking the value a second time to escape each
    /// member twice costs a tree walk with its retains; a result that goes out both as structured
    /// content and as its text mirror is serialised once and written twice this way.
    public mutating func writeAsString(_ serialized: borrowing JSONWriter) {
        append(UInt8(ascii: "\""))
        serialized.withBytes { writeEscaped($0) }
        append(UInt8(ascii: "\""))
    }

    /// Appends bytes another writer holds (already JSON).
    public mutating func append(contentsOf other: borrowing JSONWriter) {
        other.withBytes { append($0) }
    }

    /// Calls `body` with the bytes written so far.
    public func withBytes<T>(_ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        try body(UnsafeBufferPointer(start: base, count: count))
    }

    /// Appends UTF-8 text with JSON's escapes, in one pass. Eight bytes at a time are checked for
    /// a quote, a backslash or a control character; the check also says which byte is the first
    /// such, so the bytes before it are copied with the word and only that byte is escaped. Room
    /// for a block's worst case (every byte six) is made once per block, so the loop only copies:
    /// a serialisation written as a string (a quote every few bytes) costs a few instructions a
    /// byte.
    mutating func writeEscaped(_ utf8: UnsafeBufferPointer<UInt8>) {
        guard let source = utf8.baseAddress else { return }
        let total = utf8.count
        var i = 0
        Self.escapes.withUnsafeBufferPointer { escapes in
            @inline(__always)
            func escape(_ byte: UInt8, to out: inout UnsafeMutablePointer<UInt8>) {
                let escape = escapes[Int(byte)]
                if escape == 0 {
                    out.pointee = byte
                    out += 1
                } else if escape != UInt8(ascii: "u") {
                    out[0] = UInt8(ascii: "\\")
                    out[1] = escape
                    out += 2
                } else {
                    out[0] = UInt8(ascii: "\\")
                    out[1] = UInt8(ascii: "u")
                    out[2] = UInt8(ascii: "0")
                    out[3] = UInt8(ascii: "0")
                    out[4] = Self.hexDigit(byte >> 4)
                    out[5] = Self.hexDigit(byte & 0xF)
                    out += 6
                }
            }
            while i < total {
                let blockEnd = min(total, i + 4096)
                reserve((blockEnd - i) * 6)
                var out = base + count
                while i + 8 <= blockEnd {
                    let word = UnsafeRawPointer(source + i).loadUnaligned(as: UInt64.self)
                    // Eight bytes fit in the room made for the rest of the block, so the word is
                    // stored whole and the output moves on by the bytes that need no escape.
                    UnsafeMutableRawPointer(out).storeBytes(of: word, as: UInt64.self)
                    let flags = Self.escapeFlags(UInt64(littleEndian: word))
                    if flags == 0 {
                        out += 8
                        i += 8
                        continue
                    }
                    let plain = flags.trailingZeroBitCount >> 3
                    out += plain
                    i += plain
                    escape(source[i], to: &out)
                    i += 1
                }
                while i < blockEnd {
                    escape(source[i], to: &out)
                    i += 1
                }
                count = out - base
            }
        }
    }

    /// For each byte, the letter that follows its backslash, or 0 for a byte written as it is:
    /// `"` and `\` escape themselves, newline, return and tab have letters, other control
    /// characters are written `\u00XX`.
    private static let escapes: [UInt8] = (0..<256).map { byte in
        switch byte {
        case 0x22, 0x5C: UInt8(byte)
        case 0x0A: UInt8(ascii: "n")
        case 0x0D: UInt8(ascii: "r")
        case 0x09: UInt8(ascii: "t")
        case 0..<0x20: UInt8(ascii: "u")
        default: 0
        }
    }

    @inline(__always)
    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }

    /// Whether any byte of `word` may be a quote, a backslash or below 0x20 (no false negatives;
    /// a false positive only sends the word through the byte-by-byte path).
    @inline(__always)
    private static func mayNeedEscape(_ word: UInt64) -> Bool {
        escapeFlags(word) != 0
    }

    /// The high bit of each byte of `word` (read little-endian) that is a quote, a backslash or
    /// below 0x20, and perhaps of bytes after one: the lowest bit set is always the first such
    /// byte (a borrow only carries upwards), and none is set when there is none.
    @inline(__always)
    private static func escapeFlags(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        func zeroBytes(_ v: UInt64) -> UInt64 { (v &- ones) & ~v & highs }
        let control = (word &- 0x2020_2020_2020_2020) & ~word & highs
        return control | zeroBytes(word ^ (ones &* 0x22)) | zeroBytes(word ^ (ones &* 0x5C))
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

/// The member names of objects that share one list of keys, serialised once: `"name":` for the
/// first and `,"name":` for each other, one after another, so writing such an object is a copy per
/// member and its value.
public struct SerializedKeys: Sendable {
    private let bytes: [UInt8]
    /// Where each member's name ends in `bytes`.
    private let ends: [Int]

    /// From another module a generic initialiser runs unspecialised, through witness tables, at
    /// about ten times the cost: callers with a row's keys call this one.
    public init(_ keys: ContiguousArray<String>) {
        self.init(collection: keys)
    }

    init(_ keys: UnsafeBufferPointer<String>) {
        self.init(collection: keys)
    }

    private init(collection keys: some Collection<String>) {
        var writer = JSONWriter(capacity: keys.count * 16)
        var ends: [Int] = []
        ends.reserveCapacity(keys.count)
        for key in keys {
            if !ends.isEmpty { writer.append(UInt8(ascii: ",")) }
            writer.writeString(key)
            writer.append(UInt8(ascii: ":"))
            ends.append(writer.byteCount)
        }
        bytes = writer.bytes
        self.ends = ends
    }

    /// Calls `body` with each member's position and its serialised name, in order.
    public func forEachMember(_ body: (_ index: Int, _ name: UnsafeBufferPointer<UInt8>) -> Void) {
        bytes.withUnsafeBufferPointer { bytes in
            var start = 0
            for (index, end) in ends.enumerated() {
                body(index, UnsafeBufferPointer(rebasing: bytes[start..<end]))
                start = end
            }
        }
    }
}

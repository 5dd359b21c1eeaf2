extension StringProtocol {
    /// The text without leading and trailing spaces and tabs (cheaper than Foundation's trimming on hot paths).
    public func trimmingSpaces() -> String {
        var s = self[...]
        while let first = s.first, first == " " || first == "\t" { s = s.dropFirst() }
        while let last = s.last, last == " " || last == "\t" { s = s.dropLast() }
        return String(s)
    }
}

/// Lowercase hexadecimal.
public enum Hex {
    static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The hex of raw bytes (a digest's storage), written straight into the string.
    public static func encode(_ bytes: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { out in
            for (index, byte) in bytes.enumerated() {
                out[2 * index] = Self.nibble(byte >> 4)
                out[2 * index + 1] = Self.nibble(byte & 0x0F)
            }
            return bytes.count * 2
        }
    }

    @inline(__always)
    static func nibble(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }
}

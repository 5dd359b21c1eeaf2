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
}

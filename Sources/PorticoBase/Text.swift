extension StringProtocol {
    /// The text without leading and trailing spaces and tabs (cheaper than Foundation's trimming on hot paths).
    public func trimmingSpaces() -> String {
        var s = self[...]
        while let first = s.first, first == " " || first == "\t" { s = s.dropFirst() }
        while let last = s.last, last == " " || last == "\t" { s = s.dropLast() }
        return String(s)
    }

    /// Whether `other` occurs in the text, compared character by character as Swift compares
    /// strings. Text from outside is searched with this, not Foundation's `contains(_:)` or
    /// `range(of:)`: on Linux those trap on some text that is not ASCII (a target of
    /// "e\u{301}\u{0}"), and a trap ends the process. Empty text occurs everywhere, as in SQL's LIKE.
    public func includes(_ other: some StringProtocol) -> Bool {
        firstRange(of: other) != nil
    }

    /// How many times `other` occurs, without overlaps, counting at most `limit`.
    public func occurrences(of other: some StringProtocol, limit: Int = .max) -> Int {
        guard !other.isEmpty else { return 0 }
        var count = 0
        var rest = self[...]
        while count < limit, let found = rest.firstRange(of: other) {
            count += 1
            rest = rest[found.upperBound...]
        }
        return count
    }

    /// The text with each of `marks` doubled, one Unicode scalar at a time: how SQL writes a quote
    /// inside quotes (`'` as `''`, `"` as `""`). Not with `replacing` or Foundation's
    /// `replacingOccurrences`: they compare characters, and a quote followed by a combining accent
    /// is one character with it, left single, which would end the quoted text early.
    public func doubling(_ marks: Unicode.Scalar...) -> String {
        var out = String.UnicodeScalarView()
        for scalar in unicodeScalars {
            out.append(scalar)
            if marks.contains(scalar) { out.append(scalar) }
        }
        return String(out)
    }

    /// The text with each doubled `mark` single again, one Unicode scalar at a time (what
    /// `doubling` wrote, read back).
    public func undoubling(_ mark: Unicode.Scalar) -> String {
        var out = String.UnicodeScalarView()
        var skip = false
        for scalar in unicodeScalars {
            if skip {
                skip = false
                if scalar == mark { continue }
            }
            out.append(scalar)
            if scalar == mark { skip = true }
        }
        return String(out)
    }
}

extension String {
    /// The text with every occurrence of `target` replaced, found as `includes` finds it (Foundation's
    /// `replacingOccurrences(of:with:)` traps on the same text its search does).
    public func replacingEvery(_ target: some StringProtocol, with replacement: some StringProtocol) -> String {
        target.isEmpty ? self : replacing(target, with: replacement)
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

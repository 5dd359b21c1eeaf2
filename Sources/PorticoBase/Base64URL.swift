import Foundation

/// Compares two byte strings without leaking where they differ through timing.
public func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    var difference: UInt8 = 0
    for i in a.indices { difference |= a[i] ^ b[i] }
    return difference == 0
}

/// Unpadded base64url (RFC 4648 §5), as used in tokens and ids, encoded and decoded directly
/// (session ids are read on every request of a session).
public enum Base64URL {
    static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Each byte's 6-bit value, or 0xFF for a byte outside the alphabet.
    static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(index) }
        return table
    }()

    public static func encode(_ bytes: [UInt8]) -> String {
        let length = (bytes.count * 4 + 2) / 3
        return String(unsafeUninitializedCapacity: length) { out in
            var at = 0
            var index = 0
            while index + 3 <= bytes.count {
                let chunk = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
                for shift in [18, 12, 6, 0] as [UInt32] {
                    out[at] = alphabet[Int((chunk >> shift) & 0x3F)]
                    at += 1
                }
                index += 3
            }
            let rest = bytes.count - index
            if rest > 0 {
                let chunk = UInt32(bytes[index]) << 16 | (rest == 2 ? UInt32(bytes[index + 1]) << 8 : 0)
                for shift in ([18, 12, 6] as [UInt32]).prefix(rest + 1) {
                    out[at] = alphabet[Int((chunk >> shift) & 0x3F)]
                    at += 1
                }
            }
            return at
        }
    }

    /// The bytes of unpadded base64url text, or nil when it is not that (a wrong character, a
    /// length no encoding has, or stray bits in the last character).
    public static func decode(_ text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8 { utf8 -> [UInt8]? in
            guard utf8.count % 4 != 1 else { return nil }
            var out: [UInt8] = []
            out.reserveCapacity(utf8.count * 3 / 4)
            var buffer: UInt32 = 0
            var bits = 0
            for byte in utf8 {
                let value = values[Int(byte)]
                guard value != 0xFF else { return nil }
                buffer = buffer << 6 | UInt32(value)
                bits += 6
                if bits >= 8 {
                    bits -= 8
                    out.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
                    buffer &= (1 << UInt32(bits)) - 1
                }
            }
            // Leftover bits must be zero, as a canonical encoder leaves them.
            guard buffer == 0 else { return nil }
            return out
        }
    }
}

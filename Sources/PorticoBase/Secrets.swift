import Crypto
import Foundation

/// Random secrets and their digests.
public enum Secrets {
    public static let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".utf8)

    /// A random string of `length` characters from [A-Za-z0-9] (about 5.95 bits each).
    public static func random(_ length: Int, alphabet: [UInt8] = Secrets.alphabet) -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = [UInt8]()
        bytes.reserveCapacity(length)
        for _ in 0..<length { bytes.append(alphabet[Int.random(in: 0..<alphabet.count, using: &generator)]) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `count` random bytes, eight from each draw of the system's generator (each draw is a
    /// system call: a session id's 16 bytes took 16 of them, byte by byte).
    public static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        var bytes = [UInt8](repeating: 0, count: count)
        var at = 0
        while at < count {
            var word = generator.next()
            for _ in 0..<min(8, count - at) {
                bytes[at] = UInt8(truncatingIfNeeded: word)
                word >>= 8
                at += 1
            }
        }
        return bytes
    }

    /// Hex SHA-256, for high-entropy secrets (API keys, client secrets) where a slow hash adds nothing.
    public static func sha256Hex(_ text: String) -> String {
        var text = text
        return text.withUTF8 { SHA256.hash(data: UnsafeRawBufferPointer($0)) }.withUnsafeBytes { Hex.encode($0) }
    }

    /// Compares two strings without revealing where they first differ.
    public static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        var a = a, b = b
        return a.withUTF8 { x in
            b.withUTF8 { y in
                guard x.count == y.count else { return false }
                var difference: UInt8 = 0
                for i in 0..<x.count { difference |= x[i] ^ y[i] }
                return difference == 0
            }
        }
    }
}

import Foundation

/// Matches an address against allow-list entries: exact IPv4/IPv6 addresses or CIDR ranges.
public enum IPAllowlist {
    /// Whether `address` is allowed; an empty list allows every address.
    public static func allows(_ address: String?, entries: [String]) -> Bool {
        guard !entries.isEmpty else { return true }
        guard let address, let ip = parse(address) else { return false }
        for entry in entries {
            let parts = entry.split(separator: "/", maxSplits: 1)
            guard let network = parse(String(parts[0])), network.count == ip.count else { continue }
            let bits = parts.count == 2 ? Int(parts[1]) ?? -1 : network.count * 8
            guard bits >= 0, bits <= network.count * 8 else { continue }
            if prefixMatches(ip, network, bits: bits) { return true }
        }
        return false
    }

    /// Whether `text` is an IPv4 or IPv6 address.
    public static func isAddress(_ text: String) -> Bool { parse(text) != nil }

    /// Whether every entry is a valid address or CIDR range; returns the first bad one.
    public static func invalidEntry(in entries: [String]) -> String? {
        entries.first { entry in
            let parts = entry.split(separator: "/", maxSplits: 1)
            guard let network = parse(String(parts[0])) else { return true }
            if parts.count == 2 { guard let bits = Int(parts[1]), bits >= 0, bits <= network.count * 8 else { return true } }
            return false
        }
    }

    static func prefixMatches(_ a: [UInt8], _ b: [UInt8], bits: Int) -> Bool {
        var remaining = bits
        for i in a.indices {
            if remaining <= 0 { return true }
            let mask: UInt8 = remaining >= 8 ? 0xFF : UInt8(truncatingIfNeeded: 0xFF << (8 - remaining))
            if a[i] & mask != b[i] & mask { return false }
            remaining -= 8
        }
        return true
    }

    /// IPv4 as 4 bytes, IPv6 as 16 (IPv4-mapped IPv6 reads as IPv4).
    static func parse(_ text: String) -> [UInt8]? {
        var s = text
        if s.hasPrefix("[") && s.hasSuffix("]") { s = String(s.dropFirst().dropLast()) }
        if s.hasPrefix("::ffff:"), s.contains(".") { s = String(s.dropFirst(7)) }
        if s.contains(".") && !s.contains(":") {
            let octets = s.split(separator: ".", omittingEmptySubsequences: false)
            guard octets.count == 4 else { return nil }
            var bytes: [UInt8] = []
            for o in octets {
                guard let v = UInt8(o), o.count <= 3 else { return nil }
                bytes.append(v)
            }
            return bytes
        }
        guard s.contains(":") else { return nil }
        let halves = s.components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }
        func groups(_ part: String) -> [UInt16]? {
            if part.isEmpty { return [] }
            var out: [UInt16] = []
            for g in part.split(separator: ":", omittingEmptySubsequences: false) {
                guard g.count <= 4, let v = UInt16(g, radix: 16) else { return nil }
                out.append(v)
            }
            return out
        }
        guard let head = groups(halves[0]) else { return nil }
        var all = head
        if halves.count == 2 {
            guard let tail = groups(halves[1]), head.count + tail.count < 8 else { return nil }
            all += Array(repeating: 0, count: 8 - head.count - tail.count) + tail
        }
        guard all.count == 8 else { return nil }
        return all.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
    }
}

import PorticoBase
import PorticoJSON

/// Which tool packages a request asked for (`x-mcp-packages: data,ask`, `?packages=...`).
public struct PackageSelection: Sendable, Hashable {
    /// The packages listed (and whose resources are offered).
    public let names: [String]
    /// The packages whose tools may be called: `names`, or every package the app offers when the
    /// request named none and gets the first list.
    public let reachable: [String]
    /// The request named no packages: `tools/list` is the lean first list with `tools_search`.
    public let isFirstList: Bool

    public init(names: [String]) {
        self.names = names
        reachable = names
        isFirstList = false
    }

    /// The selection of a request that named no packages: `names` listed as before, every package
    /// in `reachable` found by `tools_search` and callable by name.
    public init(firstList names: [String], reachable: [String]) {
        self.names = names
        self.reachable = reachable
        isFirstList = true
    }

    /// Resolves a comma list against the known package names. Entries may carry the optional
    /// `@portico/` scope and `*` wildcards; an entry that matches nothing is an error naming
    /// the packages that exist, so a typo is not silently an empty tool list.
    public static func parse(_ text: String, known: [String]) throws(SelectionError) -> PackageSelection {
        var chosen: [String] = []
        let entries = text.split(separator: ",").map { $0.trimmingSpaces() }.filter { !$0.isEmpty }
        guard !entries.isEmpty else { throw SelectionError(message: "the package list is empty; known packages: \(known.joined(separator: ", "))") }
        for entry in entries {
            var pattern = entry
            if pattern.hasPrefix("@portico/") { pattern.removeFirst("@portico/".count) }
            guard !pattern.hasPrefix("@") else {
                throw SelectionError(
                    message:
                        "unknown package '\(entry)': packages are named without a scope or with '@portico/'; known packages: \(known.joined(separator: ", "))")
            }
            let matches = known.filter { Self.glob(pattern, matches: $0) }
            guard !matches.isEmpty else {
                throw SelectionError(message: "unknown package '\(entry)'; known packages: \(known.joined(separator: ", "))")
            }
            for name in matches where !chosen.contains(name) { chosen.append(name) }
        }
        return PackageSelection(names: chosen)
    }

    /// `*` matches any run of characters; everything else matches itself.
    static func glob(_ pattern: String, matches name: String) -> Bool {
        let p = Array(pattern.utf8)
        let n = Array(name.utf8)
        var pi = 0, ni = 0
        var star = -1, mark = 0
        while ni < n.count {
            if pi < p.count, p[pi] == UInt8(ascii: "*") {
                star = pi
                mark = ni
                pi += 1
            } else if pi < p.count, p[pi] == n[ni] {
                pi += 1
                ni += 1
            } else if star >= 0 {
                pi = star + 1
                mark += 1
                ni = mark
            } else {
                return false
            }
        }
        while pi < p.count, p[pi] == UInt8(ascii: "*") { pi += 1 }
        return pi == p.count
    }
}

public struct SelectionError: Error, Sendable {
    public var message: String
}

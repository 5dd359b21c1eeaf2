import PorticoJSON
import PorticoStore

/// Counts what a result holds while it is built, so no request grows past its budget: bytes of
/// the records (as estimated from the stored values, before any JSON is written) and related
/// records attached by `appends`.
final class ResultMeter {
    let maxBytes: Int
    let maxAttached: Int
    let maxPerParent: Int
    /// Related records attached so far, across every relation of the request.
    private(set) var attached = 0
    /// Relations whose lists were cut at `maxPerParent` for some record.
    var cutPerParent = Set<String>()
    /// Relations cut because the request reached `maxAttached`.
    var cutInAll = Set<String>()
    /// Whether records were left out to stay under `maxBytes`.
    var cutByBytes = false

    init(budget: ResultBudget) {
        maxBytes = budget.maxBytes
        maxAttached = budget.maxAttachedRows
        maxPerParent = budget.maxAppendedRows
    }

    /// Related records the request may still attach.
    var remainingAttached: Int { max(0, maxAttached - attached) }

    func attach(_ count: Int) { attached += count }

    /// How many of the leading records fit the byte budget, given each one's size.
    func fitting(_ sizes: [Int]) -> Int {
        var total = 2
        for (index, size) in sizes.enumerated() {
            total += size + 1
            if total > maxBytes {
                cutByBytes = true
                return index
            }
        }
        return sizes.count
    }

    /// The notes a result carries about what was left out.
    func notes(maxBytes: Int) -> [String] {
        var notes: [String] = []
        if !cutPerParent.isEmpty {
            notes.append("appends \(cutPerParent.sorted().joined(separator: ", ")) were limited to \(maxPerParent) related records each")
        }
        if !cutInAll.isEmpty {
            notes.append(
                "appends \(cutInAll.sorted().joined(separator: ", ")) stopped at \(maxAttached) related records in all, so some lists are incomplete; ask for fewer records (pageSize) or fewer appends"
            )
        }
        return notes
    }

    /// The serialised size of a stored value, give or take escapes.
    static func size(of value: SQLValue) -> Int {
        switch value {
        case .null: 4
        case .bool: 5
        case .int(let i): i >= 0 && i < 100_000 ? 5 : 20
        case .double: 24
        case .text(let s): s.utf8.count + 2
        }
    }

    /// The size of a record's member `name: value` once written.
    static func memberSize(_ name: String, _ value: SQLValue) -> Int {
        memberOverhead(name) + size(of: value)
    }

    /// What a member adds beside its value: its name, quoted, a colon and a comma.
    static func memberOverhead(_ name: String) -> Int {
        name.utf8.count + 4
    }
}

extension JSON {
    /// The serialised size in bytes, give or take escapes, without building the bytes: cheap
    /// enough to check result budgets on every call.
    public var estimatedSize: Int {
        switch self {
        case .null: return 4
        case .bool(let b): return b ? 4 : 5
        case .int(let i): return i < 0 ? 2 + String(i.magnitude).count : (i < 10 ? 1 : (i < 100_000 ? 5 : 19))
        case .double: return 12
        case .string(let s): return s.utf8.count + 2
        case .array(let items): return items.reduce(2) { $0 + $1.estimatedSize + 1 }
        case .object(let object): return object.reduce(2) { $0 + $1.key.utf8.count + 4 + $1.value.estimatedSize }
        }
    }
}

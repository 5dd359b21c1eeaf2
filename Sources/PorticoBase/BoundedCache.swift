public import Synchronization

/// Values kept by key in memory, within a bound: past `limit` entries the cache starts again
/// from the keys in use (a bound, not an LRU; every cache here holds what a restart loses
/// nothing by, and a full clear costs one miss per key in use). The one cache type of the
/// server: sessions' binding hashes and log levels, roles, API keys, SQL routes, plans and
/// scoped catalogs. Inlinable, so a lookup on the hot path is specialised where it is used.
public final class BoundedCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    @usableFromInline let entries: Mutex<[Key: Value]>
    /// Most entries kept at once.
    public let limit: Int

    public init(limit: Int) {
        self.limit = limit
        entries = Mutex([:])
    }

    /// The value kept for `key`, if any.
    @inlinable public subscript(key: Key) -> Value? {
        entries.withLock { $0[key] }
    }

    /// Keeps `value` for `key`.
    @inlinable public func store(_ value: Value, for key: Key) {
        entries.withLock { entries in
            if entries.count >= limit, entries[key] == nil { entries.removeAll(keepingCapacity: true) }
            entries[key] = value
        }
    }

    /// Changes what is kept for `key` in place (`nil` removes it), under the lock.
    @inlinable public func update(_ key: Key, _ change: (inout Value?) -> Void) {
        entries.withLock { entries in
            if entries.count >= limit, entries[key] == nil { entries.removeAll(keepingCapacity: true) }
            change(&entries[key])
        }
    }

    /// Forgets `key`.
    @inlinable public func remove(_ key: Key) {
        entries.withLock { _ = $0.removeValue(forKey: key) }
    }

    /// How many entries are kept.
    public var count: Int { entries.withLock { $0.count } }

    /// Every value kept, in no order.
    public var values: [Value] { entries.withLock { Array($0.values) } }
}

import Synchronization

/// One value with the time it was stored.
final class LockedCache<Value: Sendable>: Sendable {
    private let state = Mutex<(value: Value?, stored: ContinuousClock.Instant)>((nil, .now))

    func fresh(maxAge: Duration) -> Value? {
        state.withLock { s in
            guard let value = s.value, ContinuousClock.now - s.stored < maxAge else { return nil }
            return value
        }
    }

    /// The value however old it is.
    var last: Value? { state.withLock { $0.value } }

    func store(_ value: Value) {
        state.withLock { $0 = (value, .now) }
    }
}

public import Foundation
import Synchronization

/// The time of day as Portico's stores and servers read it: the system's, or one a test sets and
/// moves, so expiry (tokens, codes, sessions, keys, lockouts) is tested without sleeping.
public struct WallClock: Sendable {
    private let read: @Sendable () -> Date

    public init(_ read: @escaping @Sendable () -> Date) {
        self.read = read
    }

    public static let system = WallClock { Date() }

    /// The time written in the file at `path` (seconds since 1970), read again on every look, for
    /// end-to-end tests that move a running server's time (`PORTICO_TEST_CLOCK_FILE`); the system's
    /// time while the file cannot be read.
    public static func file(_ path: String) -> WallClock {
        WallClock {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8),
                let seconds = Double(text.trimmingCharacters(in: .whitespacesAndNewlines))
            else { return Date() }
            return Date(timeIntervalSince1970: seconds)
        }
    }

    public var date: Date { read() }

    /// Seconds since 1970, as Portico stores times.
    public var seconds: Int64 { Int64(read().timeIntervalSince1970) }

    /// Milliseconds since 1970 (the audit trail, workflows and tasks).
    public var milliseconds: Int64 { Int64(read().timeIntervalSince1970 * 1000) }
}

/// A clock that stands still until it is moved (tests).
public final class ManualClock: Sendable {
    private let current: Mutex<Date>

    public init(_ start: Date = Date()) {
        current = Mutex(start)
    }

    public func advance(seconds: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }

    public var clock: WallClock {
        WallClock { [self] in current.withLock { $0 } }
    }
}

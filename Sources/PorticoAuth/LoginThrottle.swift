import Foundation
import PorticoData
import PorticoJSON
public import PorticoStore

/// Slows password guessing: after `limit` failures within `window` seconds for a user name (or
/// `addressLimit` from one address, which many people may share behind NAT), sign-in is refused for
/// `lockout` seconds. Shared by replicas through the database.
public struct LoginThrottle: Sendable {
    let database: any Database
    public var limit = 5
    public var addressLimit = 20
    public var window: Int64 = 900
    public var lockout: Int64 = 900
    /// The time expiry is judged by.
    public let clock: WallClock

    public init(database: any Database, clock: WallClock = .system) {
        self.database = database
        self.clock = clock
    }

    var now: Int64 { clock.seconds }

    /// Seconds until sign-in may be tried again, or `nil` when it may be tried now.
    public func lockedFor(keys: [String]) async throws -> Int64? {
        var q = SQLFragment("SELECT MAX(locked_until) AS until FROM portico_login_failures WHERE key IN (")
        q.append(joining: keys.map { .bind(.text($0)) }, separator: ", ")
        q.append(")")
        guard let until = try await database.query(q).first?.int("until"), until > self.now else { return nil }
        return until - self.now
    }

    public func recordFailure(keys: [String]) async throws {
        let now = self.now
        for key in keys {
            var q = SQLFragment("INSERT INTO portico_login_failures (key, failures, first_at) VALUES (")
            q.append(joining: [.bind(.text(key)), .bind(.int(1)), .bind(.int(now))], separator: ", ")
            q.append(") ON CONFLICT (key) DO UPDATE SET failures = CASE WHEN portico_login_failures.first_at < ")
            q.append(bind: .int(now - window))
            q.append(" THEN 1 ELSE portico_login_failures.failures + 1 END, first_at = CASE WHEN portico_login_failures.first_at < ")
            q.append(bind: .int(now - window))
            q.append(" THEN ")
            q.append(bind: .int(now))
            q.append(" ELSE portico_login_failures.first_at END")
            try await database.execute(q)
            var lock = SQLFragment("UPDATE portico_login_failures SET locked_until = ")
            lock.append(bind: .int(now + lockout))
            lock.append(", failures = 0, first_at = ")
            lock.append(bind: .int(now))
            lock.append(" WHERE key = ")
            lock.append(bind: .text(key))
            lock.append(" AND failures >= ")
            lock.append(bind: .int(Int64(key.hasPrefix("ip:") ? addressLimit : limit)))
            try await database.execute(lock)
        }
    }

    public func reset(key: String) async throws {
        var q = SQLFragment("DELETE FROM portico_login_failures WHERE key = ")
        q.append(bind: .text(key))
        try await database.execute(q)
    }
}

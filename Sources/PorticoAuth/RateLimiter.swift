import Foundation
public import Logging
import Metrics
public import PorticoData
public import PorticoStore
import Synchronization

/// Why a request was not admitted, in words the caller can act on, and when to try again.
public struct RateRefusal: Error, Sendable, Equatable {
    public var message: String
    /// Seconds until the window that refused it ends.
    public var retryAfter: Int64
}

/// Requests per minute for each credential and each app, and tool calls per day for each
/// credential, counted in fixed windows (the minute, the UTC day).
///
/// Admission is decided in memory, without a query: each replica counts what it admits and, every
/// `syncInterval`, adds its counts to `portico_rate_counters` and reads back the totals of every
/// replica, so that replicas share one budget. Between two syncs a replica knows only its own
/// admissions, so all replicas together may go past a limit by what they admit in one interval.
/// On SQLite the same table keeps the day's counts across a restart.
public final class RateLimiter: Sendable {
    public struct Limits: Sendable, Equatable {
        /// Requests per minute for one credential (an API key, a client-credentials client, a user's
        /// OAuth tokens and browser sessions together: `Principal.rateKey`), unless its API key sets its own.
        public var perCredentialPerMinute: Int?
        /// Requests per minute for one app, whoever makes them.
        public var perAppPerMinute: Int?
        /// `tools/call` requests per UTC day for one credential.
        public var toolCallsPerDay: Int?
        /// `tools/call` requests per UTC day for one app, whoever makes them.
        public var appToolCallsPerDay: Int?

        public init(perCredentialPerMinute: Int? = nil, perAppPerMinute: Int? = nil, toolCallsPerDay: Int? = nil, appToolCallsPerDay: Int? = nil) {
            self.perCredentialPerMinute = perCredentialPerMinute
            self.perAppPerMinute = perAppPerMinute
            self.toolCallsPerDay = toolCallsPerDay
            self.appToolCallsPerDay = appToolCallsPerDay
        }
    }

    /// Without a raw value, so a key's hash and equality use the case alone, not its name's text
    /// (a raw-valued enum hashes and compares its raw value).
    enum Kind: Sendable, Hashable {
        case credential, app, daily, appDaily

        /// Its name in `/metrics`.
        var label: String {
            switch self {
            case .credential: "credential"
            case .app: "app"
            case .daily: "daily"
            case .appDaily: "app_daily"
            }
        }

        /// The prefix of its scopes in the shared table. A day's start with "d:"; an app's day is
        /// "d:@app" (no credential's key starts with "@").
        var prefix: String {
            switch self {
            case .credential: "c:"
            case .app: "a:"
            case .daily: "d:"
            case .appDaily: "d:@"
            }
        }

        var isDaily: Bool { self == .daily || self == .appDaily }
    }

    /// One window of one limit: what it counts (a credential or an app) and when. Counted under
    /// its parts, so admitting a call builds no text; `scope` is the shared table's name for it.
    struct Key: Hashable, Sendable {
        var kind: Kind
        var name: String
        var window: Int64

        var scope: String { kind.prefix + name }

        init(_ kind: Kind, _ name: String, window: Int64) {
            self.kind = kind
            self.name = name
            self.window = window
        }

        /// The key a scope of the shared table names.
        init?(scope: String, window: Int64) {
            for kind in [Kind.appDaily, .daily, .credential, .app] where scope.hasPrefix(kind.prefix) {
                self.init(kind, String(scope.dropFirst(kind.prefix.count)), window: window)
                return
            }
            return nil
        }
    }

    struct Count: Sendable {
        /// Every replica's count at the last sync (this one's included).
        var synced: Int64 = 0
        /// Admitted here since the last sync.
        var pending: Int64 = 0
        var total: Int64 { synced + pending }
    }

    public let limits: Limits
    let database: (any Database)?
    let clock: WallClock
    let logger: Logger
    private let counts = Mutex<[Key: Count]>([:])
    /// Exchanges with the shared table so far (a day's keys are read back every tenth).
    private let exchanges = Atomic<Int>(0)
    private let refusals: [Kind: Counter]

    public init(limits: Limits, database: (any Database)?, clock: WallClock = .system, logger: Logger = Logger(label: "portico.rate")) {
        self.limits = limits
        self.database = database
        self.clock = clock
        self.logger = logger
        refusals = [
            .credential: Counter(label: "portico_rate_limited_total", dimensions: [("limit", Kind.credential.label)]),
            .app: Counter(label: "portico_rate_limited_total", dimensions: [("limit", Kind.app.label)]),
            .daily: Counter(label: "portico_rate_limited_total", dimensions: [("limit", Kind.daily.label)]),
            .appDaily: Counter(label: "portico_rate_limited_total", dimensions: [("limit", Kind.appDaily.label)]),
        ]
    }

    /// A rate as written on the command line: `60/min` (or a bare `60`) for `unit` "min", `1000/day` for "day".
    public static func parseRate(_ text: String, per unit: String) throws(DataError) -> Int {
        let parts = text.lowercased().split(separator: "/", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
        let units = unit == "min" ? ["min", "m", "minute"] : ["day", "d"]
        guard let number = parts.first.flatMap({ Int($0) }), number > 0, number <= 100_000_000,
            parts.count == 1 || units.contains(parts[1])
        else {
            throw DataError.invalid("'\(text)' is not a rate: write a whole number of requests per \(unit == "min" ? "minute" : "day"), like 60/\(unit)")
        }
        return number
    }

    /// Counts one request of `principal` to `app` (and one tool call when `toolCall`), or refuses
    /// it without counting when a limit is reached. Anonymous callers (public discovery, SQLBot's
    /// sign-in) are not counted: they have no credential to count against.
    public func admit(_ principal: Principal, app: String, toolCall: Bool) -> RateRefusal? {
        let perCredential = principal.ratePerMinute ?? limits.perCredentialPerMinute
        let daily = toolCall ? limits.toolCallsPerDay : nil
        let appDaily = toolCall ? limits.appToolCallsPerDay : nil
        guard !principal.isAnonymous, perCredential != nil || limits.perAppPerMinute != nil || daily != nil || appDaily != nil else { return nil }
        let now = clock.seconds
        let minute = now / 60
        let day = now / 86_400
        let credential = principal.rateKey
        var checks: [(Key, Int, Kind)] = []
        checks.reserveCapacity(4)
        if let perCredential { checks.append((Key(.credential, credential, window: minute), perCredential, .credential)) }
        if let perApp = limits.perAppPerMinute { checks.append((Key(.app, app, window: minute), perApp, .app)) }
        if let daily { checks.append((Key(.daily, credential, window: day), daily, .daily)) }
        if let appDaily { checks.append((Key(.appDaily, app, window: day), appDaily, .appDaily)) }
        let refused: (Int, Kind)? = counts.withLock { counts in
            // Each key looked up once: its place is kept for the count, and keys new to the window
            // are added last (adding may move the others).
            var places: [Dictionary<Key, Count>.Index?] = []
            places.reserveCapacity(checks.count)
            // The last limit reached is the one with the longest wait: the checks go from minutes to days.
            var refused: (Int, Kind)?
            for (key, limit, kind) in checks {
                let place = counts.index(forKey: key)
                places.append(place)
                if let place, counts.values[place].total >= Int64(limit) { refused = (limit, kind) }
            }
            guard refused == nil else { return refused }
            for place in places { if let place { counts.values[place].pending += 1 } }
            for (check, place) in zip(checks, places) where place == nil { counts[check.0, default: Count()].pending += 1 }
            return nil
        }
        guard let (limit, kind) = refused else { return nil }
        refusals[kind]?.increment()
        switch kind {
        case .credential:
            let wait = 60 - now % 60
            return RateRefusal(
                message: "rate limit reached: at most \(limit) requests a minute for this \(principal.credentialNoun); try again in \(wait) s",
                retryAfter: wait)
        case .app:
            let wait = 60 - now % 60
            return RateRefusal(message: "rate limit reached: at most \(limit) requests a minute for app '\(app)'; try again in \(wait) s", retryAfter: wait)
        case .daily:
            let wait = 86_400 - now % 86_400
            return RateRefusal(
                message:
                    "daily quota reached: at most \(limit) tool calls a day for this \(principal.credentialNoun); it resets at 00:00 UTC, in \(wait / 3600) h \(wait % 3600 / 60) min",
                retryAfter: wait)
        case .appDaily:
            let wait = 86_400 - now % 86_400
            return RateRefusal(
                message:
                    "daily quota reached: at most \(limit) tool calls a day for app '\(app)'; it resets at 00:00 UTC, in \(wait / 3600) h \(wait % 3600 / 60) min",
                retryAfter: wait)
        }
    }

    /// Adds this replica's counts to the shared table and reads back everyone's, every
    /// `interval`, until the task is cancelled.
    public func run(every interval: Duration = .seconds(1)) async {
        guard database != nil else { return }
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            do {
                try await sync()
            } catch {
                logger.warning("could not share rate counts", metadata: ["error": "\(error)"])
            }
        }
    }

    /// One exchange with the shared table, in a few statements whatever the number of keys: this
    /// replica's new counts added (200 keys a statement, each answered with its total), then the
    /// totals of the keys it did not count since the last exchange read back. A day's keys are read
    /// back every tenth exchange only: a quota of a day needs no second-by-second view. Counts of
    /// ended windows are dropped here and in the table. Each statement has the store's time limits.
    public func sync() async throws {
        guard let database else { return }
        let now = clock.seconds
        let round = exchanges.add(1, ordering: .relaxed).oldValue
        let (pending, current): ([(Key, Int64)], [Key]) = counts.withLock { counts in
            counts = counts.filter { key, _ in Self.isCurrent(key, now: now) }
            return (counts.compactMap { key, count in count.pending > 0 ? (key, count.pending) : nil }, Array(counts.keys))
        }
        guard !current.isEmpty else { return }
        for chunk in Self.chunks(of: pending) {
            var q = SQLFragment("INSERT INTO portico_rate_counters (scope, window_start, count) VALUES ")
            q.append(
                joining: chunk.map { key, delta in
                    var row = SQLFragment("(")
                    row.append(joining: [.bind(.text(key.scope)), .bind(.int(key.window)), .bind(.int(delta))], separator: ", ")
                    row.append(")")
                    return row
                }, separator: ", ")
            q.append(" ON CONFLICT (scope, window_start) DO UPDATE SET count = portico_rate_counters.count + excluded.count")
            q.append(" RETURNING scope, window_start, count")
            let rows = try await database.query(q)
            var totals: [Key: Int64] = [:]
            for row in rows {
                if let scope = row.string("scope"), let window = row.int("window_start"), let count = row.int("count"),
                    let key = Key(scope: scope, window: window)
                {
                    totals[key] = count
                }
            }
            // Written: no longer this replica's alone, whatever happens to the rest of the exchange.
            counts.withLock { counts in
                for (key, delta) in chunk {
                    guard var count = counts[key] else { continue }
                    count.pending -= delta
                    count.synced = max(count.synced + delta, totals[key] ?? 0)
                    counts[key] = count
                }
            }
        }
        // Keys used here but not since the last exchange: read what the other replicas added.
        let written = Set(pending.map(\.0))
        let idle = current.filter { !written.contains($0) && (round % 10 == 0 || !$0.kind.isDaily) }
        var totals: [Key: Int64] = [:]
        for chunk in Self.chunks(of: idle) {
            var q = SQLFragment("SELECT scope, window_start, count FROM portico_rate_counters WHERE ")
            q.append(
                joining: chunk.map { key in
                    var part = SQLFragment("(scope = ")
                    part.append(bind: .text(key.scope))
                    part.append(" AND window_start = ")
                    part.append(bind: .int(key.window))
                    part.append(")")
                    return part
                }, separator: " OR ")
            for row in try await database.query(q) {
                if let scope = row.string("scope"), let window = row.int("window_start"), let count = row.int("count"),
                    let key = Key(scope: scope, window: window)
                {
                    totals[key] = count
                }
            }
        }
        counts.withLock { counts in
            for (key, total) in totals {
                guard var count = counts[key] else { continue }
                count.synced = max(count.synced, total)
                counts[key] = count
            }
        }
        // Once a minute, forget ended windows in the table too (the day's stay until the next day).
        if now % 60 < 2 {
            var q = SQLFragment("DELETE FROM portico_rate_counters WHERE (scope LIKE 'd:%' AND window_start < ")
            q.append(bind: .int(now / 86_400 - 1))
            q.append(") OR (scope NOT LIKE 'd:%' AND window_start < ")
            q.append(bind: .int(now / 60 - 1))
            q.append(")")
            try await database.execute(q)
        }
    }

    /// `items` in runs of at most 200, one statement's worth of bound keys.
    static func chunks<T>(of items: [T]) -> [ArraySlice<T>] {
        stride(from: 0, to: items.count, by: 200).map { items[$0..<min($0 + 200, items.count)] }
    }

    /// Loads today's tool-call counts, so a restart does not hand out a new daily quota.
    public func restore() async throws {
        guard let database, limits.toolCallsPerDay != nil || limits.appToolCallsPerDay != nil else { return }
        let day = clock.seconds / 86_400
        var q = SQLFragment("SELECT scope, count FROM portico_rate_counters WHERE scope LIKE 'd:%' AND window_start = ")
        q.append(bind: .int(day))
        let rows = try await database.query(q)
        counts.withLock { counts in
            for row in rows {
                if let scope = row.string("scope"), let count = row.int("count"), let key = Key(scope: scope, window: day) {
                    counts[key, default: Count()].synced = count
                }
            }
        }
    }

    static func isCurrent(_ key: Key, now: Int64) -> Bool {
        key.kind.isDaily ? key.window >= now / 86_400 : key.window >= now / 60
    }
}

extension Principal {
    /// What the caller's credential is called in a refusal.
    var credentialNoun: String {
        switch credential {
        case .apiKey: "API key"
        case .accessToken where userID != nil && userApproved: "user (across their OAuth clients and browser sessions)"
        case .accessToken, .clientCredentials: "OAuth client"
        case .webSession: "user"
        case .anonymous: "caller"
        }
    }
}

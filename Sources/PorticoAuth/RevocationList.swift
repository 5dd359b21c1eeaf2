import Foundation
public import Logging
import PorticoBase
import PorticoData
public import PorticoStore
import Synchronization

/// Things that stopped being valid before they expired: ended MCP sessions, revoked token
/// families, revoked single tokens. Kept in the database so every replica refuses them, and
/// mirrored in memory so each check is a set lookup. Entries written here are visible at once on
/// this replica and on the others at their next `sync` (run every 200 ms by the server).
public final class RevocationList: Sendable {
    let database: any Database
    let logger: Logger
    /// The time expiry is judged by.
    public let clock: WallClock
    private let state: Mutex<State>
    private let outbox = Mutex<[(id: String, revokedAt: Int64, expiresAt: Int64)]>([])
    /// One flush at a time: an immediate revocation whose entry another flush has taken waits for
    /// that flush to commit (or to fail and put it back) instead of returning before the row exists.
    private let flushing = WriteLease(queueDepth: "portico_revocation_flush_queue_depth", waitSeconds: "portico_revocation_flush_wait_seconds")
    /// Ended MCP sessions remembered at most; past it the oldest are forgotten.
    public let maxEndedSessions: Int
    /// This process's mark on the rows it writes: `refresh` reads the other processes' rows only
    /// (under a session per call, reading back its own cost more than writing them).
    let origin = Base64URL.encode(Secrets.randomBytes(12))

    /// Ids of ended MCP sessions start with this; the rest (token families, single tokens) are
    /// kept until they expire, whatever their number.
    public static let sessionPrefix = "session:"

    struct State {
        var revoked: [String: Int64] = [:]
        var sessions: EndedSessions
        var watermark: Int64 = 0
        /// The newest of this process's own rows written, which `refresh` does not read back.
        var written: Int64 = 0

        mutating func insert(_ id: String, expiresAt: Int64) {
            if id.hasPrefix(RevocationList.sessionPrefix) {
                sessions.insert(id, expiresAt: expiresAt)
            } else {
                revoked[id] = expiresAt
            }
        }

        func contains(_ id: String) -> Bool {
            id.hasPrefix(RevocationList.sessionPrefix) ? sessions.contains(id) : revoked[id] != nil
        }
    }

    /// Ended sessions, compactly and within a bound: a session ends when its own client says so,
    /// and a client can open and end sessions as fast as it likes, so they must not pile up.
    /// Forgetting an ended session only lets the credential that opened it use it again, which
    /// it could do anyway by opening a new one. Each is kept as a 64-bit hash (seeded per process).
    struct EndedSessions {
        private(set) var expiry: [Int: Int64] = [:]
        private var order: [Int] = []
        private var oldest = 0
        let limit: Int

        init(limit: Int) { self.limit = max(1, limit) }

        var count: Int { expiry.count }

        func contains(_ id: String) -> Bool { expiry[id.hashValue] != nil }

        mutating func insert(_ id: String, expiresAt: Int64) {
            let hash = id.hashValue
            guard expiry.updateValue(expiresAt, forKey: hash) == nil else { return }
            // A ring of hashes in arrival order: once full, each new one replaces the oldest.
            if order.count < limit {
                order.append(hash)
            } else {
                expiry.removeValue(forKey: order[oldest])
                order[oldest] = hash
                oldest = (oldest + 1) % limit
            }
        }

        mutating func removeExpired(now: Int64) {
            expiry = expiry.filter { $0.value > now }
            let kept = order[oldest...] + order[..<oldest]
            order = kept.filter { expiry[$0] != nil }
            oldest = 0
        }
    }

    /// Ten thousand ended sessions cover days of ordinary use and about two seconds of a client
    /// opening and ending sessions as fast as it can, in some 400 KB; a larger bound only costs
    /// memory (a hundred thousand held 5 MB more at the peak of the session-per-call benchmark).
    public init(database: any Database, logger: Logger, maxEndedSessions: Int = 10_000, clock: WallClock = .system) {
        self.clock = clock
        self.database = database
        self.logger = logger
        self.maxEndedSessions = maxEndedSessions
        state = Mutex(State(sessions: EndedSessions(limit: maxEndedSessions)))
    }

    public func contains(_ id: String) -> Bool {
        state.withLock { $0.contains(id) }
    }

    /// Ended sessions remembered now.
    public var endedSessionCount: Int { state.withLock { $0.sessions.count } }

    /// Revokes `id` until `expiresAt` (after which it is invalid on its own). With `immediate`,
    /// the row is written before returning; otherwise with the next batch.
    public func revoke(_ id: String, expiresAt: Int64, immediate: Bool = false) async throws {
        state.withLock { $0.insert(id, expiresAt: expiresAt) }
        outbox.withLock { $0.append((id, self.now, expiresAt)) }
        if immediate { try await flush() }
    }

    var now: Int64 { clock.seconds }

    /// Writes pending revocations in one transaction.
    public func flush() async throws {
        try await flushing.acquire()
        defer { flushing.release() }
        let pending = outbox.withLock { pending in
            defer { pending = [] }
            return pending
        }
        guard !pending.isEmpty else { return }
        do {
            // One prepared statement stepped per entry, in one transaction: a multi-row INSERT of
            // each flush's own length was parsed again every time (some 300,000 instructions).
            try await database.insertMany(
                into: "portico_revocations", columns: ["id", "revoked_at", "expires_at", "origin"],
                rows: pending.map { [.text($0.id), .int($0.revokedAt), .int($0.expiresAt), .text(origin)] }, skippingConflictsOn: ["id"])
        } catch {
            outbox.withLock { $0.insert(contentsOf: pending, at: 0) }
            throw error
        }
        // The rows written here move the watermark at the next refresh, as when they were read back.
        let newest = pending.map(\.revokedAt).max() ?? 0
        state.withLock { state in state.written = max(state.written, newest) }
    }

    /// Reads what other replicas revoked since the last look (with overlap: clocks tick in seconds).
    public func refresh() async throws {
        // This process's rows written before the query count as read by it.
        let (since, written) = state.withLock { ($0.watermark - 2, $0.written) }
        var q = SQLFragment("SELECT id, revoked_at, expires_at FROM portico_revocations WHERE revoked_at >= ")
        q.append(bind: .int(since))
        q.append(" AND expires_at > ")
        q.append(bind: .int(self.now))
        q.append(" AND (origin IS NULL OR origin <> ")
        q.append(bind: .text(origin))
        q.append(")")
        let rows = try await database.query(q)
        state.withLock { state in
            for row in rows {
                if let id = row.string("id") { state.insert(id, expiresAt: row.int("expires_at") ?? self.now) }
                if let at = row.int("revoked_at"), at > state.watermark { state.watermark = at }
            }
            state.watermark = max(state.watermark, written)
        }
    }

    /// Forgets entries that have expired anyway, here and in the database.
    public func purge() async throws {
        let now = self.now
        state.withLock { state in
            state.revoked = state.revoked.filter { $0.value > now }
            state.sessions.removeExpired(now: now)
        }
        var q = SQLFragment("DELETE FROM portico_revocations WHERE expires_at <= ")
        q.append(bind: .int(now))
        try await database.execute(q)
        try await purgeSessionsBeyondLimit()
    }

    /// Deletes the rows of all but the newest `maxEndedSessions` ended sessions (ids from
    /// `session:` up to `session;`, the next character, so the primary key finds them).
    public func purgeSessionsBeyondLimit() async throws {
        var q = SQLFragment(
            "DELETE FROM portico_revocations WHERE id >= 'session:' AND id < 'session;' AND revoked_at < (SELECT revoked_at FROM portico_revocations WHERE id >= 'session:' AND id < 'session;' ORDER BY revoked_at DESC LIMIT 1 OFFSET "
        )
        q.append(bind: .int(Int64(maxEndedSessions)))
        q.append(")")
        try await database.execute(q)
    }
}

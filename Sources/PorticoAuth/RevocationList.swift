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
///
/// Revoked tokens are rows of `portico_revocations`, one each. Ended sessions come far faster (a
/// client may open and end a session for every call) and are written as batches, a row of
/// `portico_ended_session_batches` per flush with a line per session: a row per session, at
/// random places of its key, rewrote hundreds of the table's pages a second under that load.
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
        /// Batches of ended sessions read lately (id → its stamp), not parsed again.
        var batchesRead: [Int64: Int64] = [:]
        /// Batches of ended sessions parsed so far.
        var batchesParsed = 0

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

    /// Batches of other replicas' ended sessions parsed so far.
    var batchesParsed: Int { state.withLock { $0.batchesParsed } }

    /// Revokes `id` until `expiresAt` (after which it is invalid on its own). With `immediate`,
    /// the row is written before returning; otherwise with the next batch.
    public func revoke(_ id: String, expiresAt: Int64, immediate: Bool = false) async throws {
        state.withLock { $0.insert(id, expiresAt: expiresAt) }
        outbox.withLock { $0.append((id, self.now, expiresAt)) }
        if immediate { try await flush() }
    }

    var now: Int64 { clock.seconds }

    /// Writes pending revocations: revoked tokens a row each, ended sessions as one batch.
    public func flush() async throws {
        try await flushing.acquire()
        defer { flushing.release() }
        let pending = outbox.withLock { pending in
            defer { pending = [] }
            return pending
        }
        guard !pending.isEmpty else { return }
        // Rows are stamped when they are written, not when revoked: a flush retried after a failure
        // must not land behind what other replicas have already read past.
        let stamp = max(now, pending.map(\.revokedAt).max() ?? 0)
        let tokens = pending.filter { !$0.id.hasPrefix(Self.sessionPrefix) }
        let sessions = pending.filter { $0.id.hasPrefix(Self.sessionPrefix) }
        let origin = self.origin
        // One prepared statement stepped per token, in one transaction: a multi-row INSERT of each
        // flush's own length was parsed again every time (some 300,000 instructions).
        @Sendable func writeTokens(_ db: any Database) async throws {
            try await db.insertMany(
                into: "portico_revocations", columns: ["id", "revoked_at", "expires_at", "origin"],
                rows: tokens.map { [.text($0.id), .int(stamp), .int($0.expiresAt), .text(origin)] }, skippingConflictsOn: ["id"])
        }
        @Sendable func writeSessions(_ db: any Database) async throws {
            try await db.insertMany(
                into: "portico_ended_session_batches", columns: ["origin", "revoked_at", "expires_at", "count", "sessions"],
                rows: [
                    [
                        .text(origin), .int(stamp), .int(sessions.map(\.expiresAt).max() ?? 0), .int(Int64(sessions.count)),
                        .text(EndedSessionBatch.lines(sessions.map { ($0.id, $0.expiresAt) })),
                    ]
                ])
        }
        do {
            switch (tokens.isEmpty, sessions.isEmpty) {
            case (false, true): try await writeTokens(database)
            case (true, false): try await writeSessions(database)
            default:
                try await database.transaction { db in
                    try await writeTokens(db)
                    try await writeSessions(db)
                }
            }
        } catch {
            outbox.withLock { $0.insert(contentsOf: pending, at: 0) }
            throw error
        }
        // The rows written here move the watermark at the next refresh, as when they were read back.
        state.withLock { state in state.written = max(state.written, stamp) }
    }

    /// Reads what other replicas revoked since the last look (with overlap: clocks tick in seconds).
    public func refresh() async throws {
        // This process's rows written before the query count as read by it.
        let (since, written) = state.withLock { ($0.watermark - 2, $0.written) }
        let now = self.now
        let rows = try await database.query(othersRows(of: "portico_revocations", columns: "id, revoked_at, expires_at", since: since, now: now))
        let batches = try await database.query(othersRows(of: "portico_ended_session_batches", columns: "id, revoked_at, sessions", since: since, now: now))
        state.withLock { state in
            for row in rows {
                if let id = row.string("id") { state.insert(id, expiresAt: row.int("expires_at") ?? now) }
                if let at = row.int("revoked_at"), at > state.watermark { state.watermark = at }
            }
            for row in batches {
                guard let id = row.int("id"), let at = row.int("revoked_at") else { continue }
                // The overlap reads a batch again for a second or two; its lines are read once. (A
                // batch's id may be used again on SQLite once it is deleted: its stamp tells them apart.)
                if state.batchesRead.updateValue(at, forKey: id) != at, let text = row.string("sessions") {
                    state.batchesParsed += 1
                    EndedSessionBatch.read(text) { nonce, expiresAt in
                        if expiresAt > now { state.insert(Self.sessionPrefix + nonce, expiresAt: expiresAt) }
                    }
                }
                if at > state.watermark { state.watermark = at }
            }
            state.watermark = max(state.watermark, written)
            let floor = state.watermark - 2
            state.batchesRead = state.batchesRead.filter { $0.value >= floor }
        }
    }

    /// The other processes' rows of `table` revoked since `since` and not yet expired, oldest first
    /// (so what the bound on ended sessions keeps is the newest).
    private func othersRows(of table: String, columns: String, since: Int64, now: Int64) -> SQLFragment {
        var q = SQLFragment("SELECT \(columns) FROM \(table) WHERE revoked_at >= ")
        q.append(bind: .int(since))
        q.append(" AND expires_at > ")
        q.append(bind: .int(now))
        q.append(" AND (origin IS NULL OR origin <> ")
        q.append(bind: .text(origin))
        q.append(") ORDER BY revoked_at, id")
        return q
    }

    /// Forgets entries that have expired anyway, here and in the database.
    public func purge() async throws {
        let now = self.now
        state.withLock { state in
            state.revoked = state.revoked.filter { $0.value > now }
            state.sessions.removeExpired(now: now)
        }
        for table in ["portico_revocations", "portico_ended_session_batches"] {
            var q = SQLFragment("DELETE FROM \(table) WHERE expires_at <= ")
            q.append(bind: .int(now))
            try await database.execute(q)
        }
        try await purgeSessionsBeyondLimit()
    }

    /// Deletes the batches of ended sessions whose every session is past the newest
    /// `maxEndedSessions` (counted newest batch first).
    public func purgeSessionsBeyondLimit() async throws {
        var q = SQLFragment(
            """
            DELETE FROM portico_ended_session_batches WHERE id IN (SELECT id FROM (SELECT id, SUM(count) OVER (ORDER BY revoked_at DESC, id DESC) - count AS newer
              FROM portico_ended_session_batches) AS ranked WHERE newer >= 
            """)
        q.append(bind: .int(Int64(maxEndedSessions)))
        q.append(")")
        try await database.execute(q)
    }
}

/// The text of a batch of ended sessions: a line per session, its nonce and its expiry (seconds)
/// separated by a space. Nonces are base64url, so neither separator can occur in one.
enum EndedSessionBatch {
    static func lines(_ sessions: [(id: String, expiresAt: Int64)]) -> String {
        var text = ""
        text.reserveCapacity(sessions.count * 34)
        for (id, expiresAt) in sessions {
            if !text.isEmpty { text.append("\n") }
            text.append(contentsOf: id.dropFirst(RevocationList.sessionPrefix.count))
            text.append(" ")
            text.append(String(expiresAt))
        }
        return text
    }

    /// Calls `body` with each well-formed line's nonce and expiry; other lines are skipped.
    static func read(_ text: String, _ body: (String, Int64) -> Void) {
        for line in text.split(separator: "\n") {
            guard let space = line.lastIndex(of: " "), let expiresAt = Int64(line[line.index(after: space)...]) else { continue }
            body(String(line[..<space]), expiresAt)
        }
    }
}

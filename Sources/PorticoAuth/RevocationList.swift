import Foundation
public import Logging
public import PorticoData
import Synchronization

/// Things that stopped being valid before they expired: ended MCP sessions, revoked token
/// families, revoked single tokens. Kept in the database so every replica refuses them, and
/// mirrored in memory so each check is a set lookup. Entries written here are visible at once on
/// this replica and on the others at their next `sync` (run every 200 ms by the server).
public final class RevocationList: Sendable {
    let database: any Database
    let logger: Logger
    private let state = Mutex<(revoked: [String: Int64], watermark: Int64)>((revoked: [:], watermark: 0))
    private let outbox = Mutex<[(id: String, revokedAt: Int64, expiresAt: Int64)]>([])

    public init(database: any Database, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    public func contains(_ id: String) -> Bool {
        state.withLock { $0.revoked[id] != nil }
    }

    /// Revokes `id` until `expiresAt` (after which it is invalid on its own). With `immediate`,
    /// the row is written before returning; otherwise with the next batch.
    public func revoke(_ id: String, expiresAt: Int64, immediate: Bool = false) async throws {
        state.withLock { $0.revoked[id] = expiresAt }
        outbox.withLock { $0.append((id, Self.now, expiresAt)) }
        if immediate { try await flush() }
    }

    static var now: Int64 { Int64(Date().timeIntervalSince1970) }

    /// Writes pending revocations in one statement.
    public func flush() async throws {
        let pending = outbox.withLock { pending in
            defer { pending = [] }
            return pending
        }
        guard !pending.isEmpty else { return }
        for chunk in stride(from: 0, to: pending.count, by: 300).map({ pending[$0..<min($0 + 300, pending.count)] }) {
            var q = SQLFragment("INSERT INTO portico_revocations (id, revoked_at, expires_at) VALUES ")
            q.append(joining: chunk.map { entry in
                var row = SQLFragment("(")
                row.append(joining: [.bind(.text(entry.id)), .bind(.int(entry.revokedAt)), .bind(.int(entry.expiresAt))], separator: ", ")
                row.append(")")
                return row
            }, separator: ", ")
            q.append(" ON CONFLICT (id) DO NOTHING")
            do {
                try await database.execute(q)
            } catch {
                outbox.withLock { $0.append(contentsOf: chunk) }
                throw error
            }
        }
    }

    /// Reads what other replicas revoked since the last look (with overlap: clocks tick in seconds).
    public func refresh() async throws {
        let since = state.withLock { $0.watermark } - 2
        var q = SQLFragment("SELECT id, revoked_at, expires_at FROM portico_revocations WHERE revoked_at >= ")
        q.append(bind: .int(since))
        q.append(" AND expires_at > ")
        q.append(bind: .int(Self.now))
        let rows = try await database.query(q)
        state.withLock { state in
            for row in rows {
                if let id = row.string("id") { state.revoked[id] = row.int("expires_at") ?? Self.now }
                if let at = row.int("revoked_at"), at > state.watermark { state.watermark = at }
            }
        }
    }

    /// Forgets entries that have expired anyway, here and in the database.
    public func purge() async throws {
        let now = Self.now
        state.withLock { state in state.revoked = state.revoked.filter { $0.value > now } }
        var q = SQLFragment("DELETE FROM portico_revocations WHERE expires_at <= ")
        q.append(bind: .int(now))
        try await database.execute(q)
    }
}

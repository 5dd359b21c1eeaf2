import Foundation
import Logging
import PorticoData
import PorticoMCP
import ServiceLifecycle
import Synchronization

/// Ended MCP sessions, recorded in the database so every replica refuses them. Each replica
/// keeps the set in memory and picks up the others' entries every second.
final class DatabaseSessionLedger: SessionLedger, Service {
    let database: any Database
    let logger: Logger
    private let state = Mutex<(ended: Set<String>, watermark: Int64)>((ended: [], watermark: 0))
    /// Sessions ended here but not yet written: DELETE answers at once and the rows are written in
    /// batches, so ending a session costs no write transaction on the request's path.
    private let outbox = Mutex<[(nonce: String, endedAt: Int64, expiresAt: Int64)]>([])

    init(database: any Database, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    func isEnded(_ nonce: String) -> Bool {
        state.withLock { $0.ended.contains(nonce) }
    }

    func end(_ session: MCPSession, expiresAt: Int64) async throws {
        _ = state.withLock { $0.ended.insert(session.nonce) }
        outbox.withLock { $0.append((session.nonce, Self.now, expiresAt)) }
    }

    /// Writes the sessions ended since the last flush in one statement.
    func flush() async throws {
        let pending = outbox.withLock { pending in
            defer { pending = [] }
            return pending
        }
        guard !pending.isEmpty else { return }
        for chunk in stride(from: 0, to: pending.count, by: 300).map({ pending[$0..<min($0 + 300, pending.count)] }) {
            var q = SQLFragment("INSERT INTO portico_ended_sessions (nonce, ended_at, expires_at) VALUES ")
            q.append(joining: chunk.map { entry in
                var row = SQLFragment("(")
                row.append(joining: [.bind(.text(entry.nonce)), .bind(.int(entry.endedAt)), .bind(.int(entry.expiresAt))], separator: ", ")
                row.append(")")
                return row
            }, separator: ", ")
            q.append(" ON CONFLICT (nonce) DO NOTHING")
            do {
                try await database.execute(q)
            } catch {
                outbox.withLock { $0.append(contentsOf: chunk) }  // try again on the next tick
                throw error
            }
        }
    }

    static var now: Int64 { Int64(Date().timeIntervalSince1970) }

    /// Reads sessions ended since the last look (with overlap, since clocks tick in seconds).
    func refresh() async throws {
        let since = state.withLock { $0.watermark } - 2
        var q = SQLFragment("SELECT nonce, ended_at FROM portico_ended_sessions WHERE ended_at >= ")
        q.append(bind: .int(since))
        q.append(" AND expires_at > ")
        q.append(bind: .int(Self.now))
        let rows = try await database.query(q)
        state.withLock { state in
            for row in rows {
                if let nonce = row.string("nonce") { state.ended.insert(nonce) }
                if let ended = row.int("ended_at"), ended > state.watermark { state.watermark = ended }
            }
        }
    }

    /// Removes sessions that have expired anyway: their ids fail verification on their own.
    func purge() async throws {
        var q = SQLFragment("DELETE FROM portico_ended_sessions WHERE expires_at <= ")
        q.append(bind: .int(Self.now))
        try await database.execute(q)
    }

    /// Every 200 ms writes this replica's ended sessions; every second reads the others'.
    func run() async throws {
        var ticks = 0
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                try await flush()
                if ticks % 5 == 0 { try await refresh() }
                if ticks % 18_000 == 0 { try await purge() }
            } catch {
                logger.warning("could not sync ended MCP sessions", metadata: ["error": "\(error)"])
            }
            ticks += 1
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .milliseconds(200)) }
        }
        try? await flush()
    }
}

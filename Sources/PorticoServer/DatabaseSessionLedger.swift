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

    init(database: any Database, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    func isEnded(_ nonce: String) -> Bool {
        state.withLock { $0.ended.contains(nonce) }
    }

    func end(_ session: MCPSession, expiresAt: Int64) async throws {
        var q = SQLFragment("INSERT INTO portico_ended_sessions (nonce, ended_at, expires_at) VALUES (")
        q.append(joining: [.bind(.text(session.nonce)), .bind(.int(Self.now)), .bind(.int(expiresAt))], separator: ", ")
        q.append(") ON CONFLICT (nonce) DO NOTHING")
        try await database.execute(q)
        _ = state.withLock { $0.ended.insert(session.nonce) }
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

    func run() async throws {
        var ticks = 0
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                try await refresh()
                if ticks % 3600 == 0 { try await purge() }
            } catch {
                logger.warning("could not read ended MCP sessions", metadata: ["error": "\(error)"])
            }
            ticks += 1
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(1)) }
        }
    }
}

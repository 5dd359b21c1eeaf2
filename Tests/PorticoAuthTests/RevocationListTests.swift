import Foundation
import Logging
import PorticoData
import PorticoStore
import PorticoTestSupport
import Testing

@testable import PorticoAuth

/// Ended sessions are remembered within a bound; revoked tokens are never dropped for room.
@Suite struct RevocationListTests {
    @Test func endedSessionsPastTheLimitForgetTheOldestFirst() {
        var sessions = RevocationList.EndedSessions(limit: 3)
        for n in 1...5 { sessions.insert("session:\(n)", expiresAt: 100) }
        #expect(sessions.count == 3)
        #expect(!sessions.contains("session:1") && !sessions.contains("session:2"))
        #expect(sessions.contains("session:3") && sessions.contains("session:5"))
        sessions.insert("session:5", expiresAt: 100)  // already there: nothing else is dropped
        #expect(sessions.contains("session:3"))
        sessions.removeExpired(now: 200)
        #expect(sessions.count == 0)
        sessions.insert("session:6", expiresAt: 300)
        #expect(sessions.contains("session:6"))
    }

    @Test(arguments: Backend.available) func churnedSessionsStayBoundedWhileTokensStay(_ backend: Backend) async throws {
        let fixture = try await AuthFixture.make(backend)
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let list = RevocationList(database: fixture.store, logger: Logger(label: "test"), maxEndedSessions: 50)
        try await list.revoke("token:kept", expiresAt: Int64(Date().timeIntervalSince1970) + 3600)
        for n in 0..<400 { try await list.revoke("session:\(n)", expiresAt: Int64(Date().timeIntervalSince1970) + 3600) }
        try await list.flush()
        #expect(list.endedSessionCount == 50)
        #expect(list.contains("session:399") && !list.contains("session:0"))
        #expect(list.contains("token:kept"))
        // The rows follow, so a replica reading them does not grow either.
        try await fixture.store.execute(
            "UPDATE portico_revocations SET revoked_at = revoked_at - 400 + CAST(substr(id, 9) AS INTEGER) WHERE id LIKE 'session:%'")
        try await list.purgeSessionsBeyondLimit()
        let rows = try await fixture.store.query("SELECT count(*) AS n FROM portico_revocations WHERE id LIKE 'session:%'")
        #expect(rows.first?.int("n") ?? 0 <= 51)
        #expect(try await fixture.store.query("SELECT id FROM portico_revocations WHERE id = 'token:kept'").count == 1)
        await fixture.store.close()
    }
}

import Crypto
import Foundation
public import PorticoBase
import PorticoData
import PorticoJSON
public import PorticoStore

/// Browser sign-in sessions for the consent and console pages. The cookie holds a random id; the
/// database holds only its digest. Forms carry a CSRF token derived from the session id.
public struct WebSessions: Sendable {
    let database: any Database
    let users: UserStore
    let csrfKey: SymmetricKey
    public let lifetime: Int64
    /// The time expiry is judged by.
    public let clock: WallClock

    public static let cookieName = "portico_session"

    public init(database: any Database, users: UserStore, masterKey: MasterKey, lifetime: Int64 = 12 * 3600, clock: WallClock = .system) {
        self.clock = clock
        self.database = database
        self.users = users
        csrfKey = masterKey.derived("portico.csrf")
        self.lifetime = lifetime
    }

    var now: Int64 { clock.seconds }

    /// Starts a session; returns the cookie value.
    public func start(userID: Int64) async throws -> String {
        let id = Secrets.random(43)
        var q = SQLFragment("INSERT INTO portico_web_sessions (id_hash, user_id, created_at, expires_at) VALUES (")
        q.append(joining: [.bind(.text(Secrets.sha256Hex(id))), .bind(.int(userID)), .bind(.int(self.now)), .bind(.int(self.now + lifetime))], separator: ", ")
        q.append(")")
        try await database.execute(q)
        return id
    }

    /// The signed-in user of a cookie value, when the session is live.
    public func user(session id: String) async throws -> User? {
        guard id.count == 43 else { return nil }
        var q = SQLFragment("SELECT user_id, expires_at FROM portico_web_sessions WHERE id_hash = ")
        q.append(bind: .text(Secrets.sha256Hex(id)))
        guard let row = try await database.query(q).first, (row.int("expires_at") ?? 0) > self.now, let userID = row.int("user_id") else { return nil }
        guard let user = try await users.find(id: userID), !user.disabled else { return nil }
        return user
    }

    public func end(session id: String) async throws {
        var q = SQLFragment("DELETE FROM portico_web_sessions WHERE id_hash = ")
        q.append(bind: .text(Secrets.sha256Hex(id)))
        try await database.execute(q)
    }

    /// The CSRF token of forms shown in a session (or, before sign-in, bound to a pre-session cookie).
    public func csrfToken(for session: String) -> String {
        Base64URL.encode(Array(HMAC<SHA256>.authenticationCode(for: Array("csrf|\(session)".utf8), using: csrfKey)))
    }

    public func checkCSRF(_ token: String?, session: String) -> Bool {
        guard let token else { return false }
        return constantTimeEqual(Array(token.utf8), Array(csrfToken(for: session).utf8))
    }

    /// Reads a cookie from a `Cookie` header.
    public static func cookie(_ name: String, in header: String?) -> String? {
        guard let header else { return nil }
        for part in header.split(separator: ";") {
            let pair = part.split(separator: "=", maxSplits: 1)
            if pair.count == 2, pair[0].trimmingSpaces() == name { return pair[1].trimmingSpaces() }
        }
        return nil
    }
}

import Foundation
import JWTKit
import PorticoBase
import PorticoData
import PorticoJSON
import PorticoStore
import Synchronization

/// Portico's credentials on one place: `Bearer <API key>`, `Bearer <access token>` (a JWT for
/// this endpoint), `Basic <client_id:client_secret>` (Casdoor's client credentials), and the
/// browser session cookie. Each yields the same `Principal`.
public struct CredentialAuthenticator: Authenticator {
    let keys: APIKeyStore
    let users: UserStore
    let authorizationServer: AuthorizationServer?
    let sessions: WebSessions?
    private let roles = RoleCache()

    public init(keys: APIKeyStore, users: UserStore, authorizationServer: AuthorizationServer?, sessions: WebSessions?) {
        self.keys = keys
        self.users = users
        self.authorizationServer = authorizationServer
        self.sessions = sessions
    }

    public func authenticate(_ credentials: RequestCredentials, app: String) async -> AuthOutcome {
        do {
            if let authorization = credentials.authorization, !authorization.isEmpty {
                if let token = Self.bearer(authorization) {
                    if APIKeyStore.looksLikeKey(token) { return try await apiKey(token, app: app) }
                    if token.split(separator: ".").count == 3, let server = authorizationServer {
                        return try await accessToken(token, app: app, server: server)
                    }
                    return .rejected("the bearer token is not a Portico API key or access token")
                }
                if Self.isBasic(authorization), let server = authorizationServer {
                    return try await clientCredentials(authorization, app: app, remoteAddress: credentials.remoteAddress, server: server)
                }
                return .rejected("the Authorization header must be 'Bearer <API key or access token>' or 'Basic <client_id:client_secret>'")
            }
            if let sessions, let id = WebSessions.cookie(WebSessions.cookieName, in: credentials.cookie), let user = try await sessions.user(session: id) {
                return .authenticated(
                    .signedIn(userID: user.id, userName: user.name, session: id, role: try await roles.role(users, app: app, userID: user.id)))
            }
            return .anonymous
        } catch let error as StoreError where error.kind == .unavailable {
            return .unavailable("the credentials could not be checked: the database cannot be reached right now; try again shortly")
        } catch {
            return .rejected("the credentials could not be checked right now; try again")
        }
    }

    func apiKey(_ token: String, app: String) async throws -> AuthOutcome {
        // One look at the change signal serves both caches.
        let stamp = keys.database.changes.stamp()
        switch try await keys.check(token: token, stamp: stamp) {
        case .success(let key):
            guard key.app == app else {
                return .rejected(
                    "this API key is for app '\(key.app)' and opens only its endpoint; create a key for app '\(app)' (portico apikey create --app \(app), or api_keys_create on its endpoint)"
                )
            }
            let role = try await roles.role(users, app: app, userID: key.userID, stamp: stamp)
            var principal = Principal(userID: key.userID, userName: key.userName, credential: .apiKey(id: key.id), scopes: key.scopes, role: role)
            principal.ratePerMinute = key.ratePerMinute
            return .authenticated(principal)
        case .failure(let refusal):
            return .rejected(refusal.description)
        }
    }

    func accessToken(_ token: String, app: String, server: AuthorizationServer) async throws -> AuthOutcome {
        switch await server.verifyAccessToken(token, resource: server.resource(app: app)) {
        case .failure(let rejection):
            return .rejected(rejection.description)
        case .success(let claims):
            let scopes = ScopeSet.parse(claims.scope).scopes
            if claims.sub.value.hasPrefix("user:"), let userID = Int64(claims.sub.value.dropFirst(5)) {
                var principal = Principal(
                    userID: userID, userName: claims.name, credential: .accessToken(clientID: claims.client_id, tokenID: claims.jti.value),
                    scopes: scopes, role: try await roles.role(users, app: app, userID: userID))
                // A grant a user approved has an id; a client's own (client credentials) has none.
                principal.userApproved = claims.gid != nil
                return .authenticated(principal)
            }
            let client = try await server.clients.find(clientID: claims.client_id)
            let role = try await client?.createdBy.asyncMap { try await roles.role(users, app: app, userID: $0) } ?? nil
            return .authenticated(
                Principal(
                    userID: client?.createdBy, userName: client.map { "client:\($0.name)" },
                    credential: .accessToken(clientID: claims.client_id, tokenID: claims.jti.value),
                    scopes: scopes, role: role))
        }
    }

    func clientCredentials(_ header: String, app: String, remoteAddress: String?, server: AuthorizationServer) async throws -> AuthOutcome {
        guard let (id, secret) = AuthorizationServer.basicCredentials(header) else {
            return .rejected("the Basic credentials must be base64 of client_id:client_secret")
        }
        let client: OAuthClient
        do {
            client = try await server.confidentialClient(id: id, secret: secret)
        } catch {
            return .rejected(error.description)
        }
        guard client.grantTypes.contains("client_credentials") else { return .rejected("client '\(id)' may not use client credentials") }
        guard client.owner == app else {
            return .rejected("client '\(id)' is an application of app '\(client.owner)' and opens only its endpoint")
        }
        guard IPAllowlist.allows(remoteAddress, entries: client.ipAllowlist) else {
            return .rejected("requests from \(remoteAddress ?? "this address") are not in the client's IP allow-list")
        }
        let scopes = (client.allowedScopes ?? ScopeSet([])).adding(.mcp)
        let role = try await client.createdBy.asyncMap { try await roles.role(users, app: app, userID: $0) } ?? nil
        return .authenticated(
            Principal(
                userID: client.createdBy, userName: "client:\(client.name)", credential: .clientCredentials(clientID: client.clientID), scopes: scopes,
                role: role))
    }

    /// The token of a `Bearer` header (scheme case-insensitive, RFC 6750).
    public static func bearer(_ header: String) -> String? {
        let bytes = header.utf8
        guard bytes.count > 7, startsWith(header, "bearer") else { return nil }
        var start = bytes.index(bytes.startIndex, offsetBy: 6)
        guard bytes[start] == UInt8(ascii: " ") else { return nil }
        var end = bytes.endIndex
        while start < end, bytes[start] == UInt8(ascii: " ") || bytes[start] == 0x09 { start = bytes.index(after: start) }
        while end > start, bytes[bytes.index(before: end)] == UInt8(ascii: " ") || bytes[bytes.index(before: end)] == 0x09 { end = bytes.index(before: end) }
        return start < end ? String(decoding: bytes[start..<end], as: UTF8.self) : nil
    }
}

extension CredentialAuthenticator {
    /// Whether an Authorization header holds Basic client credentials (`Basic <client_id:client_secret>`).
    public static func isBasic(_ header: String) -> Bool {
        startsWith(header, "basic ")
    }

    /// Whether `text` starts with `lowercasePrefix` (ASCII), whatever the case of its letters.
    static func startsWith(_ text: String, _ lowercasePrefix: StaticString) -> Bool {
        let prefix = UnsafeBufferPointer(start: lowercasePrefix.utf8Start, count: lowercasePrefix.utf8CodeUnitCount)
        var index = text.utf8.startIndex
        for expected in prefix {
            guard index < text.utf8.endIndex else { return false }
            let byte = text.utf8[index]
            // Letters compare without their case bit; anything else (the space) exactly.
            guard byte == expected || (expected >= UInt8(ascii: "a") && expected <= UInt8(ascii: "z") && byte | 0x20 == expected) else { return false }
            index = text.utf8.index(after: index)
        }
        return true
    }
}

/// Users' roles per app, remembered until a change is announced (`ChangeSignal`), so a busy
/// client does not read them on every request and a role change holds on the next one.
final class RoleCache: Sendable {
    private struct Key: Hashable {
        var app: String
        var userID: Int64
    }

    private struct Entry: Sendable {
        var role: Role?
        var stamp: ChangeSignal.Stamp
        var at: ContinuousClock.Instant
    }

    private let entries = BoundedCache<Key, Entry>(limit: 10_000)

    func role(_ users: UserStore, app: String, userID: Int64, stamp: ChangeSignal.Stamp? = nil) async throws -> Role? {
        let key = Key(app: app, userID: userID)
        let stamp = stamp ?? users.database.changes.stamp()
        if let entry = entries[key], entry.stamp == stamp, ContinuousClock.now - entry.at < .seconds(60) { return entry.role }
        let role = try await users.role(app: app, userID: userID)
        entries.store(Entry(role: role, stamp: stamp, at: .now), for: key)
        return role
    }
}

extension Optional {
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}

import Crypto
import Foundation
import JWTKit
import Logging
import PorticoBase
import PorticoData
public import PorticoJSON
public import PorticoStore

extension AuthorizationServer {
    /// The token endpoint: `authorization_code`, `refresh_token` and `client_credentials`.
    public func token(form: [(String, String)], authorization: String?, remoteAddress: String?) async throws(OAuthError) -> JSON {
        var fields: [String: String] = [:]
        for (key, value) in form {
            guard fields[key] == nil else { throw .invalidRequest("parameter '\(key)' appears more than once") }
            fields[key] = value
        }
        guard let grantType = fields["grant_type"] else { throw .invalidRequest("grant_type is missing") }
        let client = try await authenticateClient(form: fields, authorization: authorization)
        guard OAuthClient.grantTypes.contains(grantType) else {
            throw .unsupportedGrantType("grant_type '\(grantType)' is not supported; use authorization_code, refresh_token or client_credentials")
        }
        guard client.grantTypes.contains(grantType) else {
            throw .unauthorizedClient("client '\(client.clientID)' may not use the \(grantType) grant")
        }
        // An application's IP allow-list covers every use of its credentials.
        guard IPAllowlist.allows(remoteAddress, entries: client.ipAllowlist) else {
            throw .accessDenied("requests from \(remoteAddress ?? "this address") are not in the client's IP allow-list")
        }
        do {
            switch grantType {
            case "authorization_code": return try await exchangeCode(fields, client: client)
            case "refresh_token": return try await refresh(fields, client: client)
            default: return try await clientCredentials(fields, client: client, remoteAddress: remoteAddress)
            }
        } catch let error as OAuthError {
            throw error
        } catch {
            logger.error("token endpoint failed", metadata: ["error": "\(error)"])
            throw .serverError("the token could not be issued; try again")
        }
    }

    func exchangeCode(_ fields: [String: String], client: OAuthClient) async throws -> JSON {
        guard let code = fields["code"], let verifier = fields["code_verifier"] else {
            throw OAuthError.invalidRequest("code and code_verifier are required")
        }
        let now = self.now
        let (row, grantID) = try await redeem(
            Secrets.sha256Hex(code), in: "portico_oauth_codes", keyColumn: "code_hash", returning: "client_id, redirect_uri, code_challenge, expires_at",
            now: now, reused: "the authorization code was already used; the tokens issued with it are now revoked",
            invalid: "the authorization code is not valid"
        )
        guard row.string("client_id") == client.clientID else { throw OAuthError.invalidGrant("the authorization code was issued to another client") }
        guard (row.int("expires_at") ?? 0) > now else { throw OAuthError.invalidGrant("the authorization code has expired; start the authorization again") }
        guard fields["redirect_uri"] == nil || fields["redirect_uri"] == row.string("redirect_uri") else {
            throw OAuthError.invalidGrant("redirect_uri differs from the one in the authorization request")
        }
        guard Self.pkceMatches(verifier: verifier, challenge: row.string("code_challenge") ?? "") else {
            throw OAuthError.invalidGrant("the code_verifier does not match the code_challenge")
        }
        guard let grant = try await grant(grantID) else { throw OAuthError.invalidGrant("the grant no longer exists") }
        if let resource = fields["resource"], resource != grant.resource {
            throw OAuthError.invalidTarget("resource differs from the one authorized (\(grant.resource))")
        }
        return try await issue(grant: grant, client: client, withRefresh: grant.scopes.contains(.offlineAccess) && client.grantTypes.contains("refresh_token"))
    }

    /// Marks a one-time credential (an authorization code or a refresh token, stored by its hash) used and returns its
    /// row and grant. Marking and reading are one statement, so two racing redemptions cannot both win. A credential
    /// that was already used comes back from someone holding a copy: the whole grant it belongs to is revoked.
    private func redeem(
        _ hash: String, in table: String, keyColumn: String, returning columns: String, now: Int64, reused: String, invalid: String
    ) async throws -> (Row, String) {
        var claim = SQLFragment("UPDATE \(table) SET used_at = ")
        claim.append(bind: .int(now))
        claim.append(" WHERE \(keyColumn) = ")
        claim.append(bind: .text(hash))
        claim.append(" AND used_at IS NULL RETURNING grant_id, \(columns)")
        if let row = try await database.query(claim).first, let grantID = row.string("grant_id") { return (row, grantID) }
        var lookup = SQLFragment("SELECT grant_id FROM \(table) WHERE \(keyColumn) = ")
        lookup.append(bind: .text(hash))
        if let grantID = try await database.query(lookup).first?.string("grant_id") {
            try await revokeGrant(grantID)
            logger.warning("a used one-time credential came back; its grant is revoked", metadata: ["grant": "\(grantID)", "table": "\(table)"])
            throw OAuthError.invalidGrant(reused)
        }
        throw OAuthError.invalidGrant(invalid)
    }

    /// Rotates a refresh token. Everything that can be wrong with the request is checked before
    /// the token is spent, so a refresh refused for a bad scope or resource leaves the token
    /// usable; only a token that was already spent counts as a replay.
    func refresh(_ fields: [String: String], client: OAuthClient) async throws -> JSON {
        guard let token = fields["refresh_token"] else { throw OAuthError.invalidRequest("refresh_token is missing") }
        let now = self.now
        let hash = Secrets.sha256Hex(token)
        var lookup = SQLFragment("SELECT grant_id, expires_at, used_at FROM portico_oauth_refresh_tokens WHERE token_hash = ")
        lookup.append(bind: .text(hash))
        guard let stored = try await database.query(lookup).first, let storedGrantID = stored.string("grant_id") else {
            throw OAuthError.invalidGrant("the refresh token is not valid")
        }
        if stored.int("used_at") == nil {
            guard (stored.int("expires_at") ?? 0) > now else { throw OAuthError.invalidGrant("the refresh token has expired") }
            guard let grant = try await grant(storedGrantID), grant.revokedAt == nil, !revocations.contains("grant:\(storedGrantID)") else {
                throw OAuthError.invalidGrant("the authorization was revoked")
            }
            guard grant.clientID == client.clientID else { throw OAuthError.invalidGrant("the refresh token was issued to another client") }
            _ = try Self.refreshedScopes(fields, grant: grant)
            if let resource = fields["resource"], resource != grant.resource {
                throw OAuthError.invalidTarget("resource differs from the one authorized (\(grant.resource))")
            }
        }
        // Spent and read in one statement: of two racing refreshes one wins, the other is a replay.
        let (_, grantID) = try await redeem(
            hash, in: "portico_oauth_refresh_tokens", keyColumn: "token_hash", returning: "expires_at",
            now: now, reused: "the refresh token was already used; every token of this authorization is now revoked",
            invalid: "the refresh token is not valid"
        )
        guard var grant = try await grant(grantID), grant.revokedAt == nil, !revocations.contains("grant:\(grantID)") else {
            throw OAuthError.invalidGrant("the authorization was revoked")
        }
        grant.scopes = try Self.refreshedScopes(fields, grant: grant)
        return try await issue(grant: grant, client: client, withRefresh: true)
    }

    /// The scopes a refresh asks for: the grant's, or a subset of them.
    static func refreshedScopes(_ fields: [String: String], grant: Grant) throws(OAuthError) -> ScopeSet {
        guard let scope = fields["scope"] else { return grant.scopes }
        let (narrowed, unknown) = ScopeSet.parse(scope)
        guard unknown.isEmpty, narrowed.isSubset(of: grant.scopes) else {
            throw OAuthError.invalidScope("a refresh may only narrow the granted scopes (\(grant.scopes.text)); this refresh token is still valid")
        }
        return narrowed.adding(.mcp)
    }

    func clientCredentials(_ fields: [String: String], client: OAuthClient, remoteAddress: String?) async throws -> JSON {
        guard client.isConfidential else { throw OAuthError.unauthorizedClient("the client credentials grant needs a confidential client") }
        var scopes: ScopeSet
        if let text = fields["scope"] {
            let (parsed, unknown) = ScopeSet.parse(text)
            guard unknown.isEmpty else { throw OAuthError.invalidScope("unknown scope(s): \(unknown.joined(separator: " "))") }
            if let allowed = client.allowedScopes, let extra = parsed.expanded.first(where: { !allowed.contains($0) && $0 != .mcp }) {
                throw OAuthError.invalidScope("the client may not be granted \(extra.name); it is allowed: \(allowed.text)")
            }
            scopes = parsed
        } else {
            scopes = client.allowedScopes ?? ScopeSet([])
        }
        scopes = ScopeSet([.mcp] + scopes.expanded.filter { $0 != .mcp && $0 != .offlineAccess }.sorted())
        var app = client.owner
        if let resource = fields["resource"] {
            guard let resolved = await self.app(forResource: resource) else {
                throw OAuthError.invalidTarget("resource '\(resource)' is not an MCP endpoint of this server")
            }
            app = resolved
        }
        let grant = Grant(id: nil, clientID: client.clientID, userID: client.createdBy, app: app, scopes: scopes, resource: resource(app: app), revokedAt: nil)
        return try await issue(grant: grant, client: client, withRefresh: false)
    }

    /// Signs an access token (and, for code and refresh grants, rotates in a new refresh token).
    func issue(grant: Grant, client: OAuthClient, withRefresh: Bool) async throws -> JSON {
        let now = clock.date
        let lifetime = client.accessTokenLifetime ?? configuration.accessTokenLifetime
        var userName: String?
        if let userID = grant.userID { userName = try await users.find(id: userID)?.name }
        let claims = AccessTokenClaims(
            iss: .init(value: issuer),
            sub: .init(value: grant.userID.map { "user:\($0)" } ?? "client:\(client.clientID)"),
            aud: .init(value: [grant.resource]),
            exp: .init(value: now.addingTimeInterval(TimeInterval(lifetime))),
            iat: .init(value: now), nbf: .init(value: now.addingTimeInterval(-5)),
            jti: .init(value: Secrets.random(22)), scope: grant.scopes.text, client_id: client.clientID,
            app: grant.app, gid: grant.id, name: userName)
        var response: JSONObject = [
            "access_token": .string(try await keys.sign(claims)),
            "token_type": "Bearer",
            "expires_in": .int(lifetime),
            "scope": .string(grant.scopes.text),
        ]
        if withRefresh, let grantID = grant.id {
            let refresh = Secrets.random(48)
            var insert = SQLFragment("INSERT INTO portico_oauth_refresh_tokens (token_hash, grant_id, created_at, expires_at) VALUES (")
            insert.append(
                joining: [
                    .bind(.text(Secrets.sha256Hex(refresh))), .bind(.text(grantID)), .bind(.int(self.now)),
                    .bind(.int(self.now + configuration.refreshTokenLifetime)),
                ], separator: ", ")
            insert.append(")")
            try await database.execute(insert)
            var touch = SQLFragment("UPDATE portico_oauth_grants SET last_used_at = ")
            touch.append(bind: .int(self.now))
            touch.append(" WHERE id = ")
            touch.append(bind: .text(grantID))
            try await database.execute(touch)
            response["refresh_token"] = .string(refresh)
        }
        return .object(response)
    }

    /// The characters of a code verifier (RFC 7636 §4.1).
    private static let verifierCharacters = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    static func pkceMatches(verifier: String, challenge: String) -> Bool {
        guard (43...128).contains(verifier.count), verifier.allSatisfy(verifierCharacters.contains) else { return false }
        let digest = Base64URL.encode(Array(SHA256.hash(data: Array(verifier.utf8))))
        return constantTimeEqual(Array(digest.utf8), Array(challenge.utf8))
    }

    // MARK: Grants (token families)

    /// One authorization: a user's consent to a client for an app, and every token issued under it.
    public struct Grant: Sendable {
        public var id: String?
        public var clientID: String
        public var userID: Int64?
        public var app: String
        public var scopes: ScopeSet
        public var resource: String
        public var revokedAt: Int64?
        public var createdAt: Int64 = 0
        public var lastUsedAt: Int64?
    }

    func grant(_ id: String) async throws -> Grant? {
        var q = SQLFragment("SELECT \(Self.grantColumns) FROM portico_oauth_grants WHERE id = ")
        q.append(bind: .text(id))
        return try await database.query(q).first.map(Self.grant)
    }

    static let grantColumns = "id, client_id, user_id, app, scopes, resource, revoked_at, created_at, last_used_at"

    static func grant(_ row: Row) -> Grant {
        Grant(
            id: row.string("id"), clientID: row.string("client_id") ?? "", userID: row.int("user_id"), app: row.string("app") ?? "main",
            scopes: ScopeSet.parse(row.string("scopes") ?? "").scopes, resource: row.string("resource") ?? "", revokedAt: row.int("revoked_at"),
            createdAt: row.int("created_at") ?? 0, lastUsedAt: row.int("last_used_at"))
    }

    /// A user's live grants: the applications connected to their account.
    public func grants(userID: Int64) async throws -> [Grant] {
        var q = SQLFragment("SELECT \(Self.grantColumns) FROM portico_oauth_grants WHERE revoked_at IS NULL AND user_id = ")
        q.append(bind: .int(userID))
        q.append(" ORDER BY created_at DESC")
        return try await database.query(q).map(Self.grant)
    }

    /// Removes a user from `app` (`UserStore.remove`) and revokes the OAuth grants they gave
    /// clients there: what was theirs to use in the app stops with their membership.
    public func removeMember(userID: Int64, from app: String, by requester: Requester) async throws {
        try await users.remove(userID: userID, from: app, by: requester)
        for grant in try await grants(userID: userID) where grant.app == app {
            if let id = grant.id { try await revokeGrant(id) }
        }
    }

    /// Revokes a grant: its refresh tokens stop working at once, its access tokens on every replica within a second.
    public func revokeGrant(_ id: String) async throws {
        var q = SQLFragment("UPDATE portico_oauth_grants SET revoked_at = ")
        q.append(bind: .int(self.now))
        q.append(" WHERE id = ")
        q.append(bind: .text(id))
        q.append(" AND revoked_at IS NULL")
        try await database.execute(q)
        try await revocations.revoke("grant:\(id)", expiresAt: self.now + configuration.refreshTokenLifetime, immediate: true)
    }

    /// Revokes every live grant for an app's endpoint (when the app is removed), with or without a
    /// running server: its refresh tokens stop at once, its access tokens on every replica within
    /// a second, and an app made again under the same name does not take them back.
    public static func revokeGrants(app: String, database: any Database, revocations: RevocationList, clock: WallClock) async throws {
        var q = SQLFragment("SELECT id FROM portico_oauth_grants WHERE revoked_at IS NULL AND app = ")
        q.append(bind: .text(app))
        let now = clock.seconds
        for id in try await database.query(q).compactMap({ $0.string("id") }) {
            var revoke = SQLFragment("UPDATE portico_oauth_grants SET revoked_at = ")
            revoke.append(bind: .int(now))
            revoke.append(" WHERE id = ")
            revoke.append(bind: .text(id))
            try await database.execute(revoke)
            try await revocations.revoke("grant:\(id)", expiresAt: now + Configuration(issuer: "").refreshTokenLifetime, immediate: true)
        }
    }

    /// Revokes every grant of a client (when the client is deleted).
    public func revokeGrants(clientID: String) async throws {
        var q = SQLFragment("SELECT id FROM portico_oauth_grants WHERE revoked_at IS NULL AND client_id = ")
        q.append(bind: .text(clientID))
        for row in try await database.query(q) { if let id = row.string("id") { try await revokeGrant(id) } }
    }

    // MARK: Revocation (RFC 7009)

    /// Revokes a refresh token (its whole family) or an access token. Unknown tokens are not an error.
    public func revoke(form: [(String, String)], authorization: String?) async throws(OAuthError) {
        var fields: [String: String] = [:]
        for (k, v) in form { fields[k] = fields[k] ?? v }
        let client = try await authenticateClient(form: fields, authorization: authorization)
        guard let token = fields["token"], !token.isEmpty else { throw .invalidRequest("token is missing") }
        do {
            var lookup = SQLFragment(
                "SELECT r.grant_id, g.client_id FROM portico_oauth_refresh_tokens AS r JOIN portico_oauth_grants AS g ON g.id = r.grant_id WHERE r.token_hash = "
            )
            lookup.append(bind: .text(Secrets.sha256Hex(token)))
            if let row = try await database.query(lookup).first, let grantID = row.string("grant_id") {
                if row.string("client_id") == client.clientID { try await revokeGrant(grantID) }
                return
            }
            if let claims = try? await keys.verify(token), claims.client_id == client.clientID {
                let expires = Int64(claims.exp.value.timeIntervalSince1970)
                try await revocations.revoke("token:\(claims.jti.value)", expiresAt: expires, immediate: true)
            }
        } catch {
            logger.error("revocation failed", metadata: ["error": "\(error)"])
            throw .serverError("the token could not be revoked; try again")
        }
    }
}

import Crypto
import Foundation
public import Logging
import PorticoBase
import PorticoData
import PorticoJSON
public import PorticoStore
import Synchronization

/// An authorization request that passed every check, ready for sign-in and consent.
public struct AuthorizationRequest: Sendable {
    public var client: OAuthClient
    public var redirectURI: String
    public var state: String?
    public var codeChallenge: String
    public var requestedScopes: ScopeSet
    /// The MCP endpoint the token is for (its audience) and the app behind it.
    public var resource: String
    public var app: String
    /// The request's query parameters, carried through the sign-in and consent forms.
    public var parameters: [(String, String)]
}

/// Why an authorization request failed: before the redirect URI is trusted the user sees an
/// error page; after, the client gets the error at its redirect URI (RFC 6749 §4.1.2.1).
public enum AuthorizationFailure: Error, Sendable {
    case page(OAuthError)
    case redirect(OAuthError, to: String)
}

/// The OAuth 2.1 authorization server: authorization codes with PKCE, refresh-token rotation with
/// reuse detection, client credentials, dynamic registration, client ID metadata documents,
/// revocation, and JWT access tokens bound to one MCP endpoint.
public final class AuthorizationServer: Sendable {
    public struct Configuration: Sendable {
        /// The issuer: the public base URL, without a trailing slash.
        public var issuer: String
        public var accessTokenLifetime: Int64 = 3600
        public var refreshTokenLifetime: Int64 = 30 * 86400
        public var codeLifetime: Int64 = 60
        public var registration = Registration()

        public init(issuer: String) { self.issuer = issuer }
    }

    /// Who may register clients dynamically (RFC 7591), and how many. Registration needs no
    /// credential by default, as MCP clients expect; so each address may register a few an hour,
    /// and clients no one ever authorised are few and short-lived.
    public struct Registration: Sendable {
        public enum Mode: String, Sendable, CaseIterable {
            /// Anyone may register.
            case open
            /// Only with the operator's initial access token (RFC 7591 §3), as a Bearer token.
            case token
            /// Not at all: clients are made by administrators, or are client ID metadata documents.
            case off
        }

        public var mode = Mode.open
        /// SHA-256 (hex) of the initial access token, for `.token`.
        public var tokenDigest: String?
        /// Registrations from one address (an IPv6 /64) an hour.
        public var perAddressPerHour = 20
        /// Registered clients no user has authorised kept at once; a registration past it removes
        /// the oldest of them.
        public var maxUnusedClients = 1000
        /// Seconds a registered client no one authorised is kept.
        public var unusedLifetime: Int64 = 86400

        public init() {}
    }

    public let configuration: Configuration
    let database: any Database
    public let clients: OAuthClientStore
    let users: UserStore
    public let keys: TokenKeys
    let revocations: RevocationList
    let appNames: @Sendable () async throws -> [String]
    let metadataFetcher: (any ClientMetadataFetcher)?
    let policy = AccessPolicy()
    /// The time expiry is judged by.
    public let clock: WallClock
    let logger: Logger
    private let documentCache = BoundedCache<String, CachedDocument>(limit: 1000)

    public init(
        configuration: Configuration, database: any Database, users: UserStore, keys: TokenKeys, revocations: RevocationList,
        appNames: @escaping @Sendable () async throws -> [String], metadataFetcher: (any ClientMetadataFetcher)?, logger: Logger,
        clock: WallClock = .system
    ) {
        self.clock = clock
        self.configuration = configuration
        self.database = database
        clients = OAuthClientStore(database: database)
        self.users = users
        self.keys = keys
        self.revocations = revocations
        self.appNames = appNames
        self.metadataFetcher = metadataFetcher
        self.logger = logger
    }

    var now: Int64 { clock.seconds }
    var issuer: String { configuration.issuer }

    // MARK: Resources (the MCP endpoints tokens are issued for)

    /// The MCP endpoint URL of an app: the token audience and the PRM `resource`.
    public func resource(app: String) -> String {
        app == "main" ? "\(issuer)/api/mcp" : "\(issuer)/api/__app/\(app)/mcp"
    }

    /// The app behind a resource URL, when it is one of ours (scheme and host compared case-insensitively).
    public func app(forResource resource: String) async -> String? {
        guard let url = URLParts(resource), let base = URLParts(issuer), url.scheme == base.scheme,
            url.host.lowercased() == base.host.lowercased(), url.port == base.port, url.query == nil, url.fragment == nil
        else { return nil }
        var path = url.path
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        let basePath = base.path == "/" ? "" : base.path
        if path == basePath + "/api/mcp" { return "main" }
        let prefix = basePath + "/api/__app/"
        guard path.hasPrefix(prefix), path.hasSuffix("/mcp") else { return nil }
        let app = String(path.dropFirst(prefix.count).dropLast(4))
        guard !app.contains("/"), (try? await appNames())?.contains(app) == true else { return nil }
        return app
    }

    // MARK: Clients

    /// A client by id: registered, dynamically registered, or described by a metadata document at its URL.
    public func client(id: String) async throws(OAuthError) -> OAuthClient? {
        if let client = try? await clients.find(clientID: id) { return client }
        guard ClientMetadataDocument.isDocumentURL(id) else { return nil }
        if let cached = documentCache[id], cached.until > self.now { return cached.client }
        guard let metadataFetcher else { throw .invalidClient("client ID metadata documents are not enabled") }
        let document: JSON
        do {
            document = try await metadataFetcher.fetch(id)
        } catch {
            throw .invalidClient("the client metadata document at \(id) could not be fetched: \(error)")
        }
        let client = try ClientMetadataDocument.client(from: document, url: id, now: self.now)
        documentCache.store(CachedDocument(client: client, until: self.now + 300), for: id)
        return client
    }

    /// Client authentication at the token and revocation endpoints: HTTP Basic (`client_secret_basic`),
    /// the form's `client_secret` (`client_secret_post`), or a public client's bare `client_id`.
    public func authenticateClient(form: [String: String], authorization: String?) async throws(OAuthError) -> OAuthClient {
        if let authorization, authorization.lowercased().hasPrefix("basic ") {
            guard let (id, secret) = Self.basicCredentials(authorization) else {
                throw .invalidClient("the Basic credentials are not base64 of client_id:client_secret")
            }
            if let bodyID = form["client_id"], bodyID != id { throw .invalidRequest("client_id in the body differs from the Basic credentials") }
            return try await confidentialClient(id: id, secret: secret)
        }
        if let secret = form["client_secret"] {
            guard let id = form["client_id"] else { throw .invalidClient("client_secret without client_id") }
            return try await confidentialClient(id: id, secret: secret)
        }
        guard let id = form["client_id"], !id.isEmpty else {
            throw .invalidClient("client authentication is required: HTTP Basic, client_id and client_secret in the body, or a public client's client_id")
        }
        guard let client = try await client(id: id) else { throw .invalidClient("unknown client_id '\(id)'") }
        guard !client.isConfidential else { throw .invalidClient("client '\(id)' is confidential: authenticate with its client secret") }
        return client
    }

    func confidentialClient(id: String, secret: String) async throws(OAuthError) -> OAuthClient {
        let found = try? await clients.find(clientID: id)
        let digest = Secrets.sha256Hex(secret)
        guard let client = found, let hash = client.secretHash, Secrets.constantTimeEqual(digest, hash) else {
            _ = Secrets.constantTimeEqual(digest, String(repeating: "0", count: 64))
            throw .invalidClient("the client id or secret is wrong")
        }
        return client
    }

    /// `Basic base64(urlencode(id):urlencode(secret))` (RFC 6749 §2.3.1).
    public static func basicCredentials(_ header: String) -> (String, String)? {
        let encoded = header.dropFirst(6).trimmingSpaces()
        guard let data = Data(base64Encoded: encoded), let text = String(data: data, encoding: .utf8), let colon = text.firstIndex(of: ":") else { return nil }
        let id = FormEncoding.decode(text[..<colon])
        let secret = FormEncoding.decode(text[text.index(after: colon)...])
        guard let id, let secret, !id.isEmpty else { return nil }
        return (id, secret)
    }

    // MARK: Authorization endpoint

    public func validateAuthorization(_ parameters: [(String, String)]) async -> Result<AuthorizationRequest, AuthorizationFailure> {
        var query: [String: String] = [:]
        for (key, value) in parameters {
            if query[key] != nil {
                return .failure(.page(.invalidRequest("parameter '\(key)' appears more than once")))
            }
            query[key] = value
        }
        guard let clientID = query["client_id"], !clientID.isEmpty else {
            return .failure(.page(.invalidRequest("client_id is missing")))
        }
        let client: OAuthClient
        do {
            guard let found = try await self.client(id: clientID) else { return .failure(.page(.invalidClient("unknown client_id '\(clientID)'"))) }
            client = found
        } catch {
            return .failure(.page(error))
        }
        guard let redirectURI = query["redirect_uri"] ?? (client.redirectURIs.count == 1 ? client.redirectURIs[0] : nil) else {
            return .failure(.page(.invalidRequest("redirect_uri is missing")))
        }
        guard RedirectURI.matches(redirectURI, registered: client.redirectURIs) else {
            return .failure(.page(.invalidRequest("redirect_uri '\(redirectURI)' is not registered for this client; Portico will not redirect there")))
        }
        // Checked again here: a redirect URI stored before these rules (or edited in the database) is not trusted.
        if let problem = RedirectURI.validationProblem(redirectURI) {
            return .failure(.page(.invalidRequest("redirect_uri '\(redirectURI)' is registered but not acceptable: \(problem)")))
        }
        let state = query["state"]
        func fail(_ error: OAuthError) -> Result<AuthorizationRequest, AuthorizationFailure> {
            .failure(
                .redirect(
                    error,
                    to: authorizationResponse(
                        redirectURI: redirectURI, state: state, parameters: ["error": error.code, "error_description": error.description])))
        }
        guard query["response_type"] == "code" else {
            return fail(.unsupportedResponseType("response_type must be code"))
        }
        guard client.grantTypes.contains("authorization_code") else {
            return fail(.unauthorizedClient("this client may not use the authorization code grant"))
        }
        guard let challenge = query["code_challenge"], !challenge.isEmpty else {
            return fail(.invalidRequest("PKCE is required: send code_challenge and code_challenge_method=S256"))
        }
        guard query["code_challenge_method"] == "S256" else {
            return fail(.invalidRequest("code_challenge_method must be S256; plain is not accepted"))
        }
        guard challenge.count == 43, Base64URL.decode(challenge)?.count == 32 else {
            return fail(.invalidRequest("code_challenge must be the base64url SHA-256 of the code verifier (43 characters)"))
        }
        let (scopes, unknown) = ScopeSet.parse(query["scope"] ?? "mcp")
        guard unknown.isEmpty else {
            return fail(.invalidScope("unknown scope(s): \(unknown.joined(separator: " ")); known scopes: \(Scope.all.map(\.name).joined(separator: " "))"))
        }
        if let allowed = client.allowedScopes, let extra = scopes.expanded.first(where: { !allowed.contains($0) && $0 != .mcp && $0 != .offlineAccess }) {
            return fail(.invalidScope("this client may not be granted \(extra.name)"))
        }
        let resource = query["resource"] ?? self.resource(app: "main")
        guard let app = await app(forResource: resource) else {
            return fail(.invalidTarget("resource '\(resource)' is not an MCP endpoint of this server; use \(self.resource(app: "main"))"))
        }
        return .success(
            AuthorizationRequest(
                client: client, redirectURI: redirectURI, state: state, codeChallenge: challenge,
                requestedScopes: scopes.adding(.mcp), resource: self.resource(app: app), app: app, parameters: parameters))
    }

    /// The redirect carrying an authorization response, with `state` echoed and `iss` (RFC 9207).
    public func authorizationResponse(redirectURI: String, state: String?, parameters: [String: String]) -> String {
        var items = parameters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        if let state { items.append(("state", state)) }
        items.append(("iss", issuer))
        return redirectURI + (redirectURI.contains("?") ? "&" : "?") + FormEncoding.encode(items)
    }

    /// The resource scopes a consent screen offers for a request: the ones asked for, or when
    /// only `mcp` was asked for, everything the user's role allows; always within the client's allowance.
    public func offeredScopes(_ request: AuthorizationRequest, role: Role?) -> [Scope] {
        let roleScopes = policy.scopes(for: role)
        let asked = request.requestedScopes.namesResources ? roleScopes.filter { request.requestedScopes.contains($0) } : roleScopes
        guard let allowed = request.client.allowedScopes else { return asked }
        return asked.filter { allowed.contains($0) }
    }

    /// Records the user's approval and returns the redirect carrying the authorization code.
    public func approve(_ request: AuthorizationRequest, user: User, role: Role?, chosen: [Scope]) async throws -> String {
        let offered = Set(offeredScopes(request, role: role))
        var granted = [Scope.mcp]
        if request.requestedScopes.contains(.offlineAccess), request.client.grantTypes.contains("refresh_token") { granted.append(.offlineAccess) }
        granted += chosen.filter { offered.contains($0) }.sorted()
        let grantedScopes = ScopeSet(granted)
        let grantID = Secrets.random(24)
        let code = Secrets.random(43)
        let now = self.now
        try await database.transaction { db in
            var grant = SQLFragment("INSERT INTO portico_oauth_grants (id, client_id, user_id, app, scopes, resource, created_at) VALUES (")
            grant.append(
                joining: [
                    .bind(.text(grantID)), .bind(.text(request.client.clientID)), .bind(.int(user.id)), .bind(.text(request.app)),
                    .bind(.text(grantedScopes.text)), .bind(.text(request.resource)), .bind(.int(now)),
                ], separator: ", ")
            grant.append(")")
            try await db.execute(grant)
            try await Self.markUsed(clientID: request.client.clientID, at: now, db: db)
            var insert = SQLFragment("INSERT INTO portico_oauth_codes (code_hash, grant_id, client_id, redirect_uri, code_challenge, expires_at) VALUES (")
            insert.append(
                joining: [
                    .bind(.text(Secrets.sha256Hex(code))), .bind(.text(grantID)), .bind(.text(request.client.clientID)),
                    .bind(.text(request.redirectURI)), .bind(.text(request.codeChallenge)), .bind(.int(now + self.configuration.codeLifetime)),
                ], separator: ", ")
            insert.append(")")
            try await db.execute(insert)
        }
        return authorizationResponse(redirectURI: request.redirectURI, state: request.state, parameters: ["code": code])
    }

    /// The redirect telling the client that access was denied, and why.
    public func deny(_ request: AuthorizationRequest, reason: String = "the user declined the request") -> String {
        authorizationResponse(
            redirectURI: request.redirectURI, state: request.state,
            parameters: [
                "error": "access_denied", "error_description": reason,
            ])
    }
}

/// `application/x-www-form-urlencoded` reading and writing.
public enum FormEncoding {
    static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    public static func escape(_ s: String) -> String {
        s.addingPercentEncoding(withAllowedCharacters: unreserved) ?? s
    }

    /// `name=value&...`, each part escaped.
    public static func encode(_ pairs: [(String, String)]) -> String {
        pairs.map { "\(escape($0.0))=\(escape($0.1))" }.joined(separator: "&")
    }

    /// Name/value pairs in order; `nil` when the body is not form encoding.
    public static func parse(_ text: String) -> [(String, String)]? {
        var pairs: [(String, String)] = []
        for part in text.split(separator: "&", omittingEmptySubsequences: true) {
            let kv = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = decode(kv[0]), let value = decode(kv.count > 1 ? kv[1] : "") else { return nil }
            pairs.append((name, value))
        }
        return pairs
    }

    static func decode(_ s: Substring) -> String? {
        String(s).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }
}

/// A client metadata document's client, kept until `until` (seconds).
struct CachedDocument: Sendable {
    var client: OAuthClient
    var until: Int64
}

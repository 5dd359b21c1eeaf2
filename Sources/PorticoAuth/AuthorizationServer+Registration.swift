import Crypto
import Foundation
import JWTKit
import PorticoBase
import PorticoData
public import PorticoJSON
import PorticoStore

extension AuthorizationServer {
    // MARK: Dynamic client registration (RFC 7591)

    /// Registers a client from its metadata, for a caller at `remoteAddress` presenting
    /// `authorization`, within the operator's `Registration` rules.
    public func register(_ body: JSON, authorization: String?, remoteAddress: String?) async throws(OAuthError) -> JSON {
        try await admitRegistration(authorization: authorization, remoteAddress: remoteAddress)
        guard case .object(let metadata) = body else { throw .invalidClientMetadata("the registration request must be a JSON object") }
        func strings(_ key: String) throws(OAuthError) -> [String]? {
            guard let value = metadata[key], !value.isNull else { return nil }
            guard let items = value.arrayValue?.compactMap(\.stringValue), items.count == value.arrayValue?.count else {
                throw .invalidClientMetadata("\(key) must be an array of strings")
            }
            return items
        }
        let grantTypes = try strings("grant_types") ?? ["authorization_code", "refresh_token"]
        // A registered client has no user behind it: its own credentials would open nothing, and
        // using them would keep it for good past the limits on unused clients.
        guard !grantTypes.contains("client_credentials") else {
            throw .invalidClientMetadata(
                "client_credentials is for applications an administrator creates (add_application), which act as their creator; a registered client uses authorization_code"
            )
        }
        let responseTypes = try strings("response_types") ?? ["code"]
        guard responseTypes == ["code"] || (responseTypes.isEmpty && !grantTypes.contains("authorization_code")) else {
            throw .invalidClientMetadata("response_types must be [\"code\"]")
        }
        let redirectURIs = try strings("redirect_uris") ?? []
        let method = metadata["token_endpoint_auth_method"]?.stringValue ?? "client_secret_basic"
        if let type = metadata["application_type"]?.stringValue, !["native", "web"].contains(type) {
            throw .invalidClientMetadata("application_type must be native or web")
        }
        // The scope is checked but does not narrow the client: clients widen their scopes by step-up later.
        if let scope = metadata["scope"]?.stringValue {
            let unknown = ScopeSet.parse(scope).unknown
            guard unknown.isEmpty else { throw .invalidClientMetadata("unknown scope(s): \(unknown.joined(separator: " "))") }
        }
        let name = metadata["client_name"]?.stringValue ?? "MCP client"
        guard name.count <= 100 else { throw .invalidClientMetadata("client_name is longer than 100 characters") }
        var details = JSONObject()
        for key in ["client_uri", "logo_uri", "tos_uri", "policy_uri", "application_type", "software_id", "software_version"] {
            if let value = metadata[key], let text = value.stringValue {
                if key.hasSuffix("_uri"), !(text.hasPrefix("https://") || text.hasPrefix("http://")) {
                    throw .invalidClientMetadata("\(key) must be an http(s) URL")
                }
                details[key] = .string(text)
            }
        }
        let draft = OAuthClient(
            clientID: "", owner: "main", name: "", displayName: name, secretHash: nil, redirectURIs: redirectURIs, grantTypes: grantTypes,
            allowedScopes: nil, ipAllowlist: [], authMethod: method, kind: .dynamic, createdBy: nil, createdAt: 0, details: details)
        let client: OAuthClient
        let secret: String?
        do {
            (client, secret) = try await createClient(draft)
            if let remoteAddress {
                var from = SQLFragment("UPDATE portico_oauth_clients SET registered_from = ")
                from.append(bind: .text(Self.addressDigest(remoteAddress)))
                from.append(" WHERE client_id = ")
                from.append(bind: .text(client.clientID))
                try await database.execute(from)
            }
        } catch let violation as ClientRuleViolation {
            throw Self.registrationError(violation)
        } catch {
            throw .serverError("the client could not be registered; try again")
        }
        var response: JSONObject = [
            "client_id": .string(client.clientID), "client_id_issued_at": .int(client.createdAt),
            "client_name": .string(name), "redirect_uris": JSON(redirectURIs), "grant_types": JSON(grantTypes),
            "response_types": JSON(grantTypes.contains("authorization_code") ? ["code"] : []), "token_endpoint_auth_method": .string(method),
        ]
        if let secret {
            response["client_secret"] = .string(secret)
            response["client_secret_expires_at"] = 0
        }
        if let scope = metadata["scope"]?.stringValue { response["scope"] = .string(scope) }
        for (key, value) in details { response[key] = value }
        return .object(response)
    }

    /// Refuses a registration the operator's rules do not allow: registration off, a missing or
    /// wrong initial access token, too many from this address in the last hour. Clients no one
    /// authorised are removed past their lifetime, and the oldest of them past the cap.
    func admitRegistration(authorization: String?, remoteAddress: String?) async throws(OAuthError) {
        let rules = configuration.registration
        switch rules.mode {
        case .off:
            throw OAuthError(
                "access_denied",
                "dynamic client registration is off on this server: use a client ID metadata document as client_id, or ask an administrator for a client (add_application)",
                status: 403)
        case .token:
            guard let given = authorization.flatMap(CredentialAuthenticator.bearer), let digest = rules.tokenDigest,
                Secrets.constantTimeEqual(Secrets.sha256Hex(given), digest)
            else {
                throw OAuthError(
                    "invalid_token", "registration on this server needs the operator's initial access token as 'Authorization: Bearer <token>'", status: 401)
            }
        case .open:
            break
        }
        let now = self.now
        do {
            // A client some user authorised has a grant, whatever its used_at says (a client
            // imported from before used_at was kept has none): such clients are never removed here.
            let neverAuthorised =
                "kind = 'dynamic' AND used_at IS NULL AND NOT EXISTS (SELECT 1 FROM portico_oauth_grants AS g WHERE g.client_id = portico_oauth_clients.client_id)"
            var expired = SQLFragment("DELETE FROM portico_oauth_clients WHERE \(neverAuthorised) AND created_at <= ")
            expired.append(bind: .int(now - rules.unusedLifetime))
            try await database.execute(expired)
            if let remoteAddress {
                var recent = SQLFragment("SELECT COUNT(*) AS n FROM portico_oauth_clients WHERE kind = 'dynamic' AND created_at > ")
                recent.append(bind: .int(now - 3600))
                recent.append(" AND registered_from = ")
                recent.append(bind: .text(Self.addressDigest(remoteAddress)))
                if let count = try await database.query(recent).first?.int("n"), count >= Int64(rules.perAddressPerHour) {
                    throw OAuthError(
                        "temporarily_unavailable",
                        "this address registered \(rules.perAddressPerHour) clients in the last hour, the most it may; reuse one of them, or try again in an hour",
                        status: 429)
                }
            }
            // Past the cap the oldest clients no one authorised make room: the table stays bounded,
            // and no flood of registrations can close registration to everyone else.
            let unused = try await database.query("SELECT COUNT(*) AS n FROM portico_oauth_clients WHERE \(neverAuthorised)").first?.int("n") ?? 0
            if unused >= Int64(rules.maxUnusedClients) {
                var oldest = SQLFragment(
                    "DELETE FROM portico_oauth_clients WHERE client_id IN (SELECT client_id FROM portico_oauth_clients WHERE \(neverAuthorised) ORDER BY created_at, client_id LIMIT "
                )
                oldest.append(bind: .int(unused - Int64(rules.maxUnusedClients) + 1))
                oldest.append(")")
                try await database.execute(oldest)
            }
        } catch let error as OAuthError {
            throw error
        } catch {
            throw .serverError("the registration could not be checked; try again")
        }
    }

    /// Marks a client used (a user authorised it): it is kept.
    static func markUsed(clientID: String, at now: Int64, db: any Database) async throws {
        var q = SQLFragment("UPDATE portico_oauth_clients SET used_at = ")
        q.append(bind: .int(now))
        q.append(" WHERE client_id = ")
        q.append(bind: .text(clientID))
        q.append(" AND used_at IS NULL")
        try await db.execute(q)
    }

    /// The registering address as kept with the client: a digest, enough to count by. An IPv6
    /// address counts by its /64, which one subscriber holds whole.
    static func addressDigest(_ address: String) -> String {
        var counted = address
        if let bytes = IPAllowlist.parse(address), bytes.count == 16 { counted = "v6:" + bytes.prefix(8).map { String($0) }.joined(separator: ".") }
        return String(Secrets.sha256Hex("registration address " + counted).prefix(32))
    }

    /// A broken client rule in RFC 7591's words (its field names and error codes).
    static func registrationError(_ violation: ClientRuleViolation) -> OAuthError {
        switch violation {
        case .grantTypes: .invalidClientMetadata("grant_types may contain authorization_code, refresh_token and client_credentials")
        case .redirectURI(let uri, let problem): .invalidRedirectURI("'\(uri)': \(problem)")
        case .redirectURIsMissing: .invalidRedirectURI("redirect_uris is required for the authorization code grant")
        case .authMethod: .invalidClientMetadata("token_endpoint_auth_method must be none, client_secret_basic or client_secret_post")
        case .secretNeeded:
            .invalidClientMetadata("the client credentials grant needs a client secret: use client_secret_basic or client_secret_post")
        case .quotaExceeded: .invalidClientMetadata("no more clients can be registered")
        case .name, .nameTaken: .invalidClientMetadata("client_name is not accepted")
        case .ipAllowlist(let entry): .invalidClientMetadata("'\(entry)' is not an IP address or CIDR range")
        case .tokenHours(let key): .invalidClientMetadata("\(key) must be a number of hours from above 0 to a year")
        }
    }
}

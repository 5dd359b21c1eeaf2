import Foundation
import PorticoBase
import PorticoData
import PorticoJSON

/// A client setting that breaks one of the rules every OAuth client meets, however it is made or
/// changed: by an administrator (Casdoor's `add_application` / `update_application`) or by RFC
/// 7591 dynamic registration. Each surface words it in its own field names.
public enum ClientRuleViolation: Error, Sendable, Equatable {
    /// A grant type other than authorization_code, refresh_token and client_credentials, or none.
    case grantTypes
    /// A redirect URI that is not absolute https (or loopback http), or has a fragment or a wildcard.
    case redirectURI(String, problem: String)
    /// The authorization code grant without a redirect URI.
    case redirectURIsMissing
    /// An authentication method other than none, client_secret_basic and client_secret_post.
    case authMethod
    /// The client credentials grant for a client without a secret.
    case secretNeeded
    /// The owner has as many clients as the quota allows.
    case quotaExceeded
    /// An administrator's application named otherwise than 1 to 100 letters, digits, '.', '_' or '-'.
    case name(String)
    /// Another application of the owner has this name.
    case nameTaken(String)
    /// An entry of the IP allow-list that is neither an address nor a CIDR range.
    case ipAllowlist(String)
    /// A token lifetime setting (`expireInHours`, `refreshExpireInHours`) that is not a number of hours from just above 0 to a year.
    case tokenHours(String)
}

extension OAuthClient {
    /// Refuses settings that break a rule (`ClientRuleViolation`), the first one found.
    public func requireValid() throws(ClientRuleViolation) {
        if kind == .registered, !Self.validName(name) { throw .name(name) }
        guard !grantTypes.isEmpty, grantTypes.allSatisfy(Self.grantTypes.contains) else { throw .grantTypes }
        for uri in redirectURIs {
            if let problem = RedirectURI.validationProblem(uri) { throw .redirectURI(uri, problem: problem) }
        }
        if grantTypes.contains("authorization_code"), redirectURIs.isEmpty { throw .redirectURIsMissing }
        guard Self.authMethods.contains(authMethod) else { throw .authMethod }
        if grantTypes.contains("client_credentials"), authMethod == "none" { throw .secretNeeded }
        if let bad = IPAllowlist.invalidEntry(in: ipAllowlist) { throw .ipAllowlist(bad) }
        for key in Self.tokenHourSettings {
            guard let value = details[key], !value.isNull else { continue }
            guard let hours = value.doubleValue, hours > 0, hours <= 24 * 365 else { throw .tokenHours(key) }
        }
    }

    /// Whether an administrator's application may be called `name`: 1 to 100 letters, digits, '.', '_' or '-'.
    public static func validName(_ name: String) -> Bool {
        (1...100).contains(name.count) && name.allSatisfy { $0.isLetter || $0.isNumber || "._-".contains($0) }
    }

    /// Casdoor's per-application token lifetimes, in hours.
    public static let tokenHourSettings = ["expireInHours", "refreshExpireInHours"]
}

extension AuthorizationServer {
    /// Makes `client` (its id, and its secret unless it authenticates with none), after the rules
    /// and, when given, the owner's quota; returns it with the secret, shown once. The one way a
    /// client is created, for the Casdoor tools and for dynamic registration alike.
    public func createClient(_ draft: OAuthClient, quota: Int? = nil) async throws -> (client: OAuthClient, secret: String?) {
        var client = draft
        try client.requireValid()
        if let quota, quota >= 0, try await clients.count(owner: client.owner) >= quota { throw ClientRuleViolation.quotaExceeded }
        try await requireUniqueName(client)
        switch client.kind {
        case .registered: client.clientID = "app_" + Secrets.random(20)
        case .dynamic: client.clientID = "dcr_" + Secrets.random(20)
        case .metadataDocument: break  // its id is its document's URL
        }
        if client.name.isEmpty { client.name = client.clientID }
        client.createdAt = self.now
        let secret = client.authMethod == "none" ? nil : Secrets.random(48)
        client.secretHash = secret.map(Secrets.sha256Hex)
        try await clients.insert(client)
        return (client, secret)
    }

    /// Stores changed settings of a client, after the rules.
    public func updateClient(_ client: OAuthClient) async throws {
        try client.requireValid()
        try await requireUniqueName(client)
        try await clients.update(client)
    }

    /// An administrator's applications have names of their own within their owner.
    func requireUniqueName(_ client: OAuthClient) async throws {
        guard client.kind == .registered, let other = try await clients.find(owner: client.owner, name: client.name),
            other.clientID != client.clientID
        else { return }
        throw ClientRuleViolation.nameTaken(client.name)
    }

    /// Deletes a client and revokes every grant it holds: tokens issued to it stop working.
    public func deleteClient(clientID: String) async throws {
        _ = try await clients.delete(clientID: clientID)
        try await revokeGrants(clientID: clientID)
    }
}

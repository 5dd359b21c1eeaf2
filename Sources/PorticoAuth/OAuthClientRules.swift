import Foundation
import PorticoBase
import PorticoData

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
}

extension OAuthClient {
    /// Refuses settings that break a rule (`ClientRuleViolation`), the first one found.
    public func requireValid() throws(ClientRuleViolation) {
        guard !grantTypes.isEmpty, grantTypes.allSatisfy(Self.grantTypes.contains) else { throw .grantTypes }
        for uri in redirectURIs {
            if let problem = RedirectURI.validationProblem(uri) { throw .redirectURI(uri, problem: problem) }
        }
        if grantTypes.contains("authorization_code"), redirectURIs.isEmpty { throw .redirectURIsMissing }
        guard Self.authMethods.contains(authMethod) else { throw .authMethod }
        if grantTypes.contains("client_credentials"), authMethod == "none" { throw .secretNeeded }
    }
}

extension AuthorizationServer {
    /// Makes `client` (its id, and its secret unless it authenticates with none), after the rules
    /// and, when given, the owner's quota; returns it with the secret, shown once. The one way a
    /// client is created, for the Casdoor tools and for dynamic registration alike.
    public func createClient(_ draft: OAuthClient, quota: Int? = nil) async throws -> (client: OAuthClient, secret: String?) {
        var client = draft
        try client.requireValid()
        if let quota, quota >= 0, try await clients.count(owner: client.owner) >= quota { throw ClientRuleViolation.quotaExceeded }
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
        try await clients.update(client)
    }

    /// Deletes a client and revokes every grant it holds: tokens issued to it stop working.
    public func deleteClient(clientID: String) async throws {
        _ = try await clients.delete(clientID: clientID)
        try await revokeGrants(clientID: clientID)
    }
}

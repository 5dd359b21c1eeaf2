import Crypto
import Foundation
import JWTKit
import PorticoData
public import PorticoJSON

extension AuthorizationServer {
    // MARK: Dynamic client registration (RFC 7591)

    public func register(_ body: JSON) async throws(OAuthError) -> JSON {
        guard case .object(let metadata) = body else { throw .invalidClientMetadata("the registration request must be a JSON object") }
        func strings(_ key: String) throws(OAuthError) -> [String]? {
            guard let value = metadata[key], !value.isNull else { return nil }
            guard let items = value.arrayValue?.compactMap(\.stringValue), items.count == value.arrayValue?.count else {
                throw .invalidClientMetadata("\(key) must be an array of strings")
            }
            return items
        }
        let grantTypes = try strings("grant_types") ?? ["authorization_code", "refresh_token"]
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
        }
    }
}

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
        guard !grantTypes.isEmpty, grantTypes.allSatisfy(OAuthClient.grantTypes.contains) else {
            throw .invalidClientMetadata("grant_types may contain authorization_code, refresh_token and client_credentials")
        }
        let responseTypes = try strings("response_types") ?? ["code"]
        guard responseTypes == ["code"] || (responseTypes.isEmpty && !grantTypes.contains("authorization_code")) else {
            throw .invalidClientMetadata("response_types must be [\"code\"]")
        }
        let redirectURIs = try strings("redirect_uris") ?? []
        if grantTypes.contains("authorization_code") {
            guard !redirectURIs.isEmpty else { throw .invalidRedirectURI("redirect_uris is required for the authorization code grant") }
        }
        for uri in redirectURIs {
            if let problem = RedirectURI.validationProblem(uri) { throw .invalidRedirectURI("'\(uri)': \(problem)") }
        }
        let method = metadata["token_endpoint_auth_method"]?.stringValue ?? "client_secret_basic"
        guard OAuthClient.authMethods.contains(method) else {
            throw .invalidClientMetadata("token_endpoint_auth_method must be none, client_secret_basic or client_secret_post")
        }
        if grantTypes.contains("client_credentials"), method == "none" {
            throw .invalidClientMetadata("the client credentials grant needs a client secret: use client_secret_basic or client_secret_post")
        }
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
        let clientID = "dcr_" + Secrets.random(20)
        let secret = method == "none" ? nil : Secrets.random(48)
        let now = self.now
        let client = OAuthClient(
            clientID: clientID, owner: "main", name: clientID, displayName: name, secretHash: secret.map(Secrets.sha256Hex),
            redirectURIs: redirectURIs, grantTypes: grantTypes, allowedScopes: nil, ipAllowlist: [], authMethod: method,
            kind: .dynamic, createdBy: nil, createdAt: now, details: details)
        do {
            try await clients.insert(client)
        } catch {
            throw .serverError("the client could not be registered; try again")
        }
        var response: JSONObject = [
            "client_id": .string(clientID), "client_id_issued_at": .int(now),
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
}

import Foundation
import PorticoData
public import PorticoJSON

extension AuthorizationServer {
    // MARK: Metadata documents

    /// RFC 8414 authorization server metadata (also served as the OpenID discovery document).
    public func metadata(openID: Bool) -> JSON {
        var m: JSONObject = [
            "issuer": .string(issuer),
            "authorization_endpoint": .string("\(issuer)/oauth/authorize"),
            "token_endpoint": .string("\(issuer)/oauth/token"),
            "revocation_endpoint": .string("\(issuer)/oauth/revoke"),
            "jwks_uri": .string("\(issuer)/oauth/jwks.json"),
            "scopes_supported": JSON(Scope.all.map(\.name)),
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "grant_types_supported": JSON(OAuthClient.grantTypes),
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
            "revocation_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
            "code_challenge_methods_supported": ["S256"],
            "client_id_metadata_document_supported": .bool(metadataFetcher != nil),
            "authorization_response_iss_parameter_supported": true,
        ]
        if configuration.registration.mode != .off { m["registration_endpoint"] = .string("\(issuer)/oauth/register") }
        if openID {
            m["subject_types_supported"] = ["public"]
            m["id_token_signing_alg_values_supported"] = ["ES256"]
            m["claims_supported"] = ["sub", "iss", "aud", "exp", "iat", "name"]
        }
        return .object(m)
    }

    /// RFC 9728 protected resource metadata for one app's MCP endpoint.
    public func protectedResourceMetadata(app: String) -> JSON {
        [
            "resource": .string(resource(app: app)),
            "authorization_servers": [.string(issuer)],
            "scopes_supported": JSON(Scope.all.filter { $0 != .offlineAccess }.map(\.name)),
            "bearer_methods_supported": ["header"],
            "resource_name": .string("Portico (app \(app))"),
        ]
    }
}

import PorticoJSON

/// Authenticates `Authorization: Bearer <API key>`. The OAuth side adds its own credentials
/// beside this one and produces the same `Principal`.
public struct KeyAuthenticator: Authenticator {
    let keys: APIKeyStore

    public init(keys: APIKeyStore) {
        self.keys = keys
    }

    public func authenticate(authorization: String?, app: String) async -> AuthOutcome {
        guard let authorization, !authorization.isEmpty else { return .anonymous }
        guard let token = Self.bearer(authorization) else {
            return .rejected("the Authorization header must be 'Bearer <API key or access token>'")
        }
        do {
            switch try await keys.check(token: token, app: app) {
            case .success(let (key, role)):
                return .authenticated(Principal(userID: key.userID, userName: key.userName, credential: .apiKey(id: key.id), scopes: key.scopes, role: role))
            case .failure(let refusal):
                return .rejected(refusal.description)
            }
        } catch {
            return .rejected("the credentials could not be checked right now; try again")
        }
    }

    /// The token of a `Bearer` header (scheme case-insensitive, RFC 6750).
    public static func bearer(_ header: String) -> String? {
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].trimmingSpaces()
        return token.isEmpty ? nil : token
    }
}

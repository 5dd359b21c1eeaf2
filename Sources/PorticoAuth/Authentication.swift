/// The result of checking a request's credentials, before anything decides what it may do.
public enum AuthOutcome: Sendable {
    case authenticated(Principal)
    /// No credentials were presented.
    case anonymous
    /// Credentials were presented and refused; the reason is safe to show the client.
    case rejected(String)
}

/// Turns an `Authorization` header into a principal for one app.
public protocol Authenticator: Sendable {
    func authenticate(authorization: String?, app: String) async -> AuthOutcome
}

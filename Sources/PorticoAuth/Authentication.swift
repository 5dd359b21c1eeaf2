/// The result of checking a request's credentials, before anything decides what it may do.
public enum AuthOutcome: Sendable {
    case authenticated(Principal)
    /// No credentials were presented.
    case anonymous
    /// Credentials were presented and refused; the reason is safe to show the client.
    case rejected(String)
    /// The credentials could not be checked because the database cannot be reached; the request
    /// should be retried, not dropped (HTTP 503).
    case unavailable(String)
}

/// What a request presented to prove who it is.
public struct RequestCredentials: Sendable {
    public var authorization: String?
    public var cookie: String?
    public var remoteAddress: String?

    public init(authorization: String?, cookie: String? = nil, remoteAddress: String? = nil) {
        self.authorization = authorization
        self.cookie = cookie
        self.remoteAddress = remoteAddress
    }
}

/// Turns a request's credentials into a principal for one app.
public protocol Authenticator: Sendable {
    func authenticate(_ credentials: RequestCredentials, app: String) async -> AuthOutcome
}

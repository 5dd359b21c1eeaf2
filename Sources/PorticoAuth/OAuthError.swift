public import PorticoJSON

/// An OAuth error response (RFC 6749 §5.2, RFC 7591 §3.2.2, RFC 8707), with the HTTP status it travels with.
public struct OAuthError: Error, Sendable, CustomStringConvertible {
    public var code: String
    public var description: String
    public var status: Int

    public init(_ code: String, _ description: String, status: Int = 400) {
        self.code = code
        self.description = description
        self.status = status
    }

    public static func invalidRequest(_ d: String) -> OAuthError { OAuthError("invalid_request", d) }
    public static func invalidClient(_ d: String) -> OAuthError { OAuthError("invalid_client", d, status: 401) }
    public static func invalidGrant(_ d: String) -> OAuthError { OAuthError("invalid_grant", d) }
    public static func unauthorizedClient(_ d: String) -> OAuthError { OAuthError("unauthorized_client", d) }
    public static func unsupportedGrantType(_ d: String) -> OAuthError { OAuthError("unsupported_grant_type", d) }
    public static func invalidScope(_ d: String) -> OAuthError { OAuthError("invalid_scope", d) }
    public static func invalidTarget(_ d: String) -> OAuthError { OAuthError("invalid_target", d) }
    public static func accessDenied(_ d: String) -> OAuthError { OAuthError("access_denied", d, status: 403) }
    public static func unsupportedResponseType(_ d: String) -> OAuthError { OAuthError("unsupported_response_type", d) }
    public static func invalidRedirectURI(_ d: String) -> OAuthError { OAuthError("invalid_redirect_uri", d) }
    public static func invalidClientMetadata(_ d: String) -> OAuthError { OAuthError("invalid_client_metadata", d) }
    public static func serverError(_ d: String) -> OAuthError { OAuthError("server_error", d, status: 500) }

    public var json: JSON { ["error": .string(code), "error_description": .string(description)] }
}

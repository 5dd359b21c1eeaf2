import PorticoBase
public import PorticoData

/// Who is calling: the user behind a request, the credential that proved it, and what that
/// credential was narrowed to.
public struct Principal: Sendable, Hashable {
    /// How the caller proved who they are.
    public enum Credential: Sendable, Hashable {
        case apiKey(id: String)
        case accessToken(clientID: String, tokenID: String)
        case clientCredentials(clientID: String)
        case webSession(id: String)
        /// No credentials, on an endpoint whose tools check their callers themselves (SQLBot's
        /// port, where `mcp_start` hands out the token the other tools take as an argument).
        case anonymous
    }

    public var userID: Int64?
    public var userName: String?
    public var credential: Credential
    /// `nil` when the credential is not narrowed by scopes (an API key created without scopes,
    /// a signed-in browser session): the user's role alone decides.
    public var scopes: ScopeSet?
    /// The user's role in the app of this request, `nil` when the user has none there.
    public var role: Role?
    /// Requests a minute the credential itself is limited to (an API key made with `--rate`),
    /// instead of the operator's limit for every credential.
    public var ratePerMinute: Int?
    /// An OAuth access token from a grant its user approved (an authorization code and its
    /// refreshes), not one a client took with its own credentials on its creator's behalf.
    public var userApproved = false

    public init(userID: Int64?, userName: String?, credential: Credential, scopes: ScopeSet?, role: Role?) {
        self.userID = userID
        self.userName = userName
        self.credential = credential
        self.scopes = scopes
        self.role = role
    }

    /// The user the data layer keeps on what this caller writes (`createdById`, `updatedById`).
    public var caller: Caller { Caller(userID: userID, userName: userName) }

    /// Whether the credential's scopes allow `scope` (always true for an unscoped credential).
    public func isGranted(_ scope: Scope) -> Bool {
        scopes?.contains(scope) ?? true
    }

    /// A user signed in to the web pages with the session `session` (named by a digest of it).
    public static func signedIn(userID: Int64, userName: String, session: String, role: Role?) -> Principal {
        Principal(userID: userID, userName: userName, credential: .webSession(id: String(Secrets.sha256Hex(session).prefix(16))), scopes: nil, role: role)
    }

    /// A caller without credentials, for endpoints that let tools authenticate callers themselves.
    public static let anonymous = Principal(userID: nil, userName: nil, credential: .anonymous, scopes: ScopeSet([]), role: nil)

    public var isAnonymous: Bool { credential == .anonymous }

    /// OAuth credentials must carry the `mcp` scope to use an MCP endpoint at all.
    public var needsMCPScope: Bool {
        switch credential {
        case .accessToken, .clientCredentials: true
        case .apiKey, .webSession, .anonymous: false
        }
    }

    /// The granted scope tokens, as reported in `insufficient_scope` errors.
    public var grantedScopes: [String] {
        scopes?.granted ?? []
    }

    /// What the per-credential rate limits and quotas count against. The tokens a user approved
    /// count as the user, whichever client holds them, as their browser session does: registering
    /// more clients does not buy more requests. API keys and clients with their own credentials
    /// (whose tokens name the administrator who made them) count alone.
    public var rateKey: String {
        switch credential {
        case .accessToken where userID != nil && userApproved, .webSession: "user:\(userID.map(String.init) ?? "-")"
        default: bindingKey
        }
    }

    /// A stable name for the credential, used to bind MCP sessions to the caller that opened them.
    public var bindingKey: String {
        switch credential {
        case .apiKey(let id): "key:\(id)"
        case .accessToken(let client, _): "oauth:\(client):\(userID.map(String.init) ?? "-")"
        case .clientCredentials(let client): "client:\(client)"
        case .webSession: "user:\(userID.map(String.init) ?? "-")"
        case .anonymous: "anonymous"
        }
    }
}

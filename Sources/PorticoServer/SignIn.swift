import HTTPTypes
import Hummingbird
import PorticoAuth
import PorticoBase
import PorticoMCP

/// Password sign-in, shared by the consent flow and the console: the form's CSRF protection before
/// there is a session (a random pre-session cookie whose HMAC the form carries), throttling, and the
/// session cookie once signed in.
struct SignIn {
    let users: UserStore
    let throttle: LoginThrottle
    let sessions: WebSessions
    let secureCookies: Bool

    static let csrfCookie = "portico_csrf"

    enum Outcome {
        /// Signed in; `cookie` holds the header that sets the new session's cookie.
        case signedIn(User, cookie: HTTPFields)
        case failed(String, HTTPResponse.Status)
    }

    /// The CSRF token of a sign-in form, and the header that sets its pre-session cookie (the
    /// browser's own is kept when it has one).
    func formToken(_ request: Request) -> (csrf: String, headers: HTTPFields) {
        let pre = WebSessions.cookie(Self.csrfCookie, in: request.headers[.cookie]).flatMap { $0.count == 32 ? $0 : nil } ?? Secrets.random(32)
        var headers = HTTPFields()
        headers[.setCookie] = Forms.cookie(Self.csrfCookie, pre, secure: secureCookies, maxAge: 3600)
        return (sessions.csrfToken(for: "pre:\(pre)"), headers)
    }

    /// Whether a submitted sign-in form carries the CSRF token of the browser's pre-session cookie.
    func formIsGenuine(_ fields: [(String, String)], request: Request) -> Bool {
        guard let pre = WebSessions.cookie(Self.csrfCookie, in: request.headers[.cookie]) else { return false }
        return sessions.checkCSRF(Forms.first(fields, "csrf"), session: "pre:\(pre)")
    }

    /// The signed-in user and the session id of a request whose session cookie is live.
    func signedIn(_ request: Request) async throws -> (User, String)? {
        guard let session = WebSessions.cookie(WebSessions.cookieName, in: request.headers[.cookie]),
            let user = try await sessions.user(session: session)
        else { return nil }
        return (user, session)
    }

    /// The user whose password this is (`PasswordSignIn`); no session yet.
    func check(username: String, password: String, address: String?) async throws -> Result<User, PasswordSignIn.Failure> {
        try await PasswordSignIn(users: users, throttle: throttle).check(username: username, password: password, address: address)
    }

    func attempt(username: String, password: String, address: String?) async throws -> Outcome {
        let user: User
        switch try await check(username: username, password: password, address: address) {
        case .failure(.locked(let minutes)):
            return .failed("Too many failed sign-ins. Try again in \(minutes) minute\(minutes > 1 ? "s" : "").", .tooManyRequests)
        case .failure(.wrongPassword):
            return .failed("The user name or password is wrong.", .unauthorized)
        case .success(let found):
            user = found
        }
        let session = try await sessions.start(userID: user.id)
        var cookie = HTTPFields()
        cookie[.setCookie] = Forms.cookie(WebSessions.cookieName, session, secure: secureCookies, maxAge: sessions.lifetime)
        return .signedIn(user, cookie: cookie)
    }
}

/// A user signed in to the console through their session cookie.
struct SignedInUser: Sendable {
    let user: User
    let session: String

    var pair: (User, String) { (user, session) }
}

/// Signs the console's routes in: fills `context.signedIn` from a live session cookie, and sends a
/// request without one to the sign-in page, which comes back to the page it was on. One sign-in
/// for every page, as hummingbird-auth's authenticator middleware fills a request's identity.
struct SignedInMiddleware: RouterMiddleware {
    let signIn: SignIn

    func handle(_ request: Request, context: PorticoRequestContext, next: (Request, PorticoRequestContext) async throws -> Response) async throws
        -> Response
    {
        guard let (user, session) = try await signIn.signedIn(request) else { return Forms.redirect("/login?next=\(Self.page(of: request.uri.path))") }
        var context = context
        context.signedIn = SignedInUser(user: user, session: session)
        return try await next(request, context)
    }

    /// The page a request belongs to, to come back to: `/console`, `/console/ask` or `/console/workflows`.
    static func page(of path: String) -> String {
        let parts = path.split(separator: "/")
        if parts.count >= 2, ["ask", "workflows", "semantic"].contains(parts[1]) { return "/console/\(parts[1])" }
        return "/console"
    }
}

extension PorticoRequestContext {
    /// The signed-in user of a console route (`SignedInMiddleware` ran before it).
    func requireSignedIn() throws -> SignedInUser {
        guard let signedIn else { throw HTTPError(.unauthorized, message: "sign in at /login first") }
        return signedIn
    }
}

/// What a page action may do, decided by the check the tool registry makes for the tool the action
/// stands for (`ToolRegistry.permits`): the same scopes, the same role, the same area rights.
struct PageAccess: Sendable {
    let registry: ToolRegistry
    let users: UserStore
    let policy = AccessPolicy()

    /// The signed-in user as a caller in `app`: their role there, and no narrower scopes than a session has.
    func principal(_ signedIn: SignedInUser, app: String) async throws -> Principal {
        principal(signedIn, role: try await users.role(app: app, userID: signedIn.user.id))
    }

    /// The signed-in user as a caller with `role` (already read).
    func principal(_ signedIn: SignedInUser, role: Role?) -> Principal {
        .signedIn(userID: signedIn.user.id, userName: signedIn.user.name, session: signedIn.session, role: role)
    }

    /// Whether `principal` may do what the tool `tool` does.
    func permits(_ tool: String, principal: Principal) -> Bool {
        registry.permits(tool, principal: principal, policy: policy)
    }

    /// Whether the signed-in user may do in `app` what the tool `tool` does.
    func permits(_ tool: String, _ signedIn: SignedInUser, app: String) async throws -> Bool {
        registry.permits(tool, principal: try await principal(signedIn, app: app), policy: policy)
    }
}

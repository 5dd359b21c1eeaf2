import HTTPTypes
import Hummingbird
import PorticoAuth
import PorticoBase

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

import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import PorticoAuth
import PorticoBase
import PorticoData
import PorticoJSON
import PorticoStore

/// The signed-in user's console: their API keys (create, revoke) and connected applications (disconnect).
struct ConsoleController: Sendable {
    let pages: WebPages
    let sessions: WebSessions
    let users: UserStore
    let keys: APIKeyStore
    let server: AuthorizationServer
    let throttle: LoginThrottle
    let secureCookies: Bool
    let access: PageAccess
    static let notices = [
        "key-revoked": "The API key is revoked.", "app-disconnected": "The application is disconnected; its tokens no longer work.",
        "invitation-accepted": "You joined the app.", "invitation-declined": "The invitation is declined.",
    ]

    /// Sign-in and sign-out on `router`; the console's own routes on `console` (signed in by `SignedInMiddleware`).
    func addRoutes(to router: Router<PorticoRequestContext>, console: RouterGroup<PorticoRequestContext>) {
        router.get("login") { request, _ in loginPage(request, error: nil) }
        router.post("login") { request, context in try await login(request, context: context) }
        router.post("logout") { request, _ in try await logout(request) }
        console.get { request, context in
            let signedIn = try context.requireSignedIn()
            let notice = Forms.first(Forms.query(request), "message").flatMap { Self.notices[$0] }
            return try await self.console(user: signedIn.user, session: signedIn.session, message: notice)
        }
        console.post("keys") { request, context in
            try await createKey(request, signedIn: try context.requireSignedIn())
        }
        console.post("keys/{id}/revoke") { request, context in
            let id = try context.parameters.require("id")
            let signedIn = try context.requireSignedIn()
            guard try await checkForm(request, session: signedIn.session) else { return csrfError() }
            try await keys.revoke(id: id, userID: signedIn.user.id)
            return Forms.redirect("/console?message=key-revoked")
        }
        for (action, notice) in [("accept", "invitation-accepted"), ("decline", "invitation-declined")] {
            console.post(RouterPath("invitations/{app}/\(action)")) { request, context in
                let app = try context.parameters.require("app")
                let (user, session) = try context.requireSignedIn().pair
                guard try await checkForm(request, session: session) else { return csrfError() }
                do {
                    if action == "accept" { try await users.accept(app: app, userID: user.id) } else { try await users.decline(app: app, userID: user.id) }
                } catch let error as DataError {
                    return try await self.console(user: user, session: session, error: error.message)
                }
                return Forms.redirect("/console?message=\(notice)")
            }
        }
        console.post("grants/{id}/revoke") { request, context in
            let id = try context.parameters.require("id")
            let (user, session) = try context.requireSignedIn().pair
            guard try await checkForm(request, session: session) else { return csrfError() }
            if try await server.grants(userID: user.id).contains(where: { $0.id == id }) { try await server.revokeGrant(id) }
            return Forms.redirect("/console?message=app-disconnected")
        }
    }

    var signIn: SignIn { SignIn(users: users, throttle: throttle, sessions: sessions, secureCookies: secureCookies) }

    func checkForm(_ request: Request, session: String) async throws -> Bool {
        let fields = try await Forms.fields(request)
        return sessions.checkCSRF(Forms.first(fields, "csrf"), session: session)
    }

    func csrfError() -> Response {
        pages.error(
            "Form expired", "The form's security token is missing or wrong (CSRF); nothing was changed. Reload the console and try again.", code: "csrf",
            status: .forbidden)
    }

    func loginPage(_ request: Request, error: String?, username: String = "", status: HTTPResponse.Status = .ok) -> Response {
        let (csrf, headers) = signIn.formToken(request)
        let next = Forms.first(Forms.query(request), "next") ?? "/console"
        return pages.render(
            "login",
            [
                "action": "/login", "csrf": csrf, "hidden": [["name": "next", "value": next]],
                "error": error, "username": username,
            ], status: status, headers: headers)
    }

    func login(_ request: Request, context: PorticoRequestContext) async throws -> Response {
        let fields = try await Forms.fields(request)
        guard signIn.formIsGenuine(fields, request: request) else {
            return pages.error(
                "Sign-in form expired", "The form's security token is missing or wrong (CSRF). Reload the sign-in page.", code: "csrf", status: .forbidden)
        }
        let username = Forms.first(fields, "username") ?? ""
        switch try await signIn.attempt(username: username, password: Forms.first(fields, "password") ?? "", address: context.throttledAddress) {
        case .failed(let message, let status):
            return loginPage(request, error: message, username: username, status: status)
        case .signedIn(_, let cookie):
            var next = Forms.first(fields, "next") ?? "/console"
            // Only local paths: a sign-in form must not become an open redirect.
            if !next.hasPrefix("/") || next.hasPrefix("//") || next.contains("\\") { next = "/console" }
            return Forms.redirect(next, headers: cookie)
        }
    }

    func logout(_ request: Request) async throws -> Response {
        if let session = WebSessions.cookie(WebSessions.cookieName, in: request.headers[.cookie]) {
            guard try await checkForm(request, session: session) else { return csrfError() }
            try await sessions.end(session: session)
        }
        var headers = HTTPFields()
        headers[.setCookie] = Forms.cookie(WebSessions.cookieName, "", secure: secureCookies, maxAge: 0)
        return Forms.redirect("/login", headers: headers)
    }

    func console(user: User, session: String, message: String? = nil, error: String? = nil, newKey: String? = nil) async throws -> Response {
        let now = keys.clock.seconds
        let userKeys = try await keys.list(userID: user.id)
        let grants = try await server.grants(userID: user.id)
        var clientNames: [String: String] = [:]
        for grant in grants where clientNames[grant.clientID] == nil {
            clientNames[grant.clientID] = (try? await server.client(id: grant.clientID))??.displayName ?? grant.clientID
        }
        let roles = try await users.roles(userID: user.id)
        let allowed = Set(roles.values.flatMap { access.policy.scopes(for: $0) })
        let invitations = try await users.invitations(userID: user.id)
        // A key is for one app's endpoint: any app the user has a role in (`main` first).
        let names = roles.keys.sorted()
        let appChoices: [[String: String]] = (names.filter { $0 == "main" } + names.filter { $0 != "main" }).map { app in
            let endpoint = app == "main" ? "/api/mcp" : "/api/__app/\(app)/mcp"
            return ["name": app, "role": roles[app]?.name ?? "", "endpoint": endpoint]
        }
        return pages.render(
            "console",
            [
                "user": user.name, "csrf": sessions.csrfToken(for: session),
                "roles": roles.isEmpty ? "none" : roles.sorted { $0.key < $1.key }.map { "\($0.value.name) in \($0.key)" }.joined(separator: ", "),
                "message": message, "error": error, "newKey": newKey,
                "hasKeys": !userKeys.isEmpty,
                "keys": userKeys.map { key in
                    [
                        "id": key.id, "name": key.name, "app": key.app, "scopes": key.scopes?.text ?? "everything your role allows",
                        "created": WebPages.date(key.createdAt),
                        "status": key.status(at: now) + (key.isActive(at: now) ? key.expiresAt.map { " until \(WebPages.date($0))" } ?? "" : ""),
                        "active": key.isActive(at: now),
                    ] as [String: Any]
                },
                "scopeChoices": Scope.all.filter { allowed.contains($0) }.map { ["name": $0.name] },
                "appChoices": appChoices,
                "hasInvitations": !invitations.isEmpty,
                "invitations": invitations.map { invitation in
                    [
                        "app": invitation.app, "role": invitation.role, "from": invitation.invitedBy ?? "an administrator",
                        "sent": WebPages.date(invitation.createdAt),
                    ]
                },
                "hasGrants": !grants.isEmpty,
                "grants": grants.map { grant in
                    [
                        "id": grant.id ?? "", "client": clientNames[grant.clientID] ?? grant.clientID, "app": grant.app,
                        "scopes": grant.scopes.text, "created": WebPages.date(grant.createdAt),
                    ]
                },
            ])
    }

    func createKey(_ request: Request, signedIn: SignedInUser) async throws -> Response {
        let (user, session) = signedIn.pair
        let fields = try await Forms.fields(request)
        guard sessions.checkCSRF(Forms.first(fields, "csrf"), session: session) else { return csrfError() }
        let name = (Forms.first(fields, "name") ?? "").trimmingSpaces()
        guard !name.isEmpty, name.count <= 60 else {
            return try await console(user: user, session: session, error: "Give the key a name of at most 60 characters.")
        }
        let chosen = Forms.all(fields, "scope_choice")
        let (scopes, unknown) = ScopeSet.parse(chosen.joined(separator: " "))
        guard unknown.isEmpty else { return try await console(user: user, session: session, error: "Unknown scope: \(unknown.joined(separator: ", "))") }
        let lifetimes: [String: Int64] = ["30d": 30 * 86400, "90d": 90 * 86400, "1y": 365 * 86400]
        let expires = Forms.first(fields, "expires").flatMap { lifetimes[$0] }
        do {
            // As api_keys_create on that app's endpoint: the registry's check, then the store's
            // (which refuses scopes the user's role there does not allow).
            let app = Forms.first(fields, "app") ?? "main"
            guard try await access.permits("api_keys_create", signedIn, app: app) else {
                return try await console(user: user, session: session, error: "\(user.name) has no role in app '\(app)' that makes API keys there.")
            }
            let (_, token) = try await keys.create(userID: user.id, name: name, scopes: chosen.isEmpty ? nil : scopes, expiresIn: expires, app: app)
            return try await console(user: user, session: session, newKey: token)
        } catch let error as DataError {
            return try await console(user: user, session: session, error: error.message)
        }
    }
}

import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import PorticoAuth
import PorticoInstance
import PorticoJSON

/// The authorization server's HTTP surface: discovery documents, the sign-in and consent pages of
/// `/oauth/authorize`, and the token, registration, revocation and JWKS endpoints.
struct OAuthController: Sendable {
    let server: AuthorizationServer
    let pages: WebPages
    let sessions: WebSessions
    let users: UserStore
    let throttle: LoginThrottle
    let apps: AppDirectory
    let secureCookies: Bool

    /// Form fields that drive the pages, as opposed to the authorization request's own parameters.
    static let controlFields: Set<String> = ["csrf", "action", "username", "password", "decision", "scope_choice"]

    func addRoutes(to router: Router<PorticoRequestContext>) {
        router.get(".well-known/oauth-authorization-server") { _, _ in Response.json(server.metadata(openID: false), cors: true) }
        router.get(".well-known/openid-configuration") { _, _ in Response.json(server.metadata(openID: true), cors: true) }
        router.get(".well-known/oauth-protected-resource") { _, _ in Response.json(server.protectedResourceMetadata(app: "main"), cors: true) }
        router.get(".well-known/oauth-protected-resource/api/mcp") { _, _ in Response.json(server.protectedResourceMetadata(app: "main"), cors: true) }
        router.get(".well-known/oauth-protected-resource/api/__app/{app}/mcp") { _, context in
            try await resourceMetadata(app: context.parameters.require("app"))
        }
        router.get(".well-known/{app}/oauth-protected-resource") { _, context in
            try await resourceMetadata(app: context.parameters.require("app"))
        }
        router.get("oauth/jwks.json") { _, _ in Response.json(try await server.keys.jwks(), cors: true) }
        router.get("oauth/authorize") { request, context in await authorize(request, context: context) }
        router.post("oauth/authorize") { request, context in try await authorizeForm(request, context: context) }
        router.post("oauth/token") { request, context in try await token(request, context: context) }
        router.post("api/login/oauth/access_token") { request, context in try await token(request, context: context) }
        router.post("oauth/register") { request, context in try await register(request, context: context) }
        router.post("oauth/revoke") { request, _ in try await revoke(request) }
    }

    func resourceMetadata(app: String) async throws -> Response {
        guard await apps.exists(app) else {
            return Response.json(["error": "not_found", "error_description": .string("there is no app named '\(app)'")], status: .notFound)
        }
        return Response.json(server.protectedResourceMetadata(app: app), cors: true)
    }

    // MARK: Authorization endpoint

    func authorize(_ request: Request, context: PorticoRequestContext) async -> Response {
        let authorization: AuthorizationRequest
        switch await validate(Forms.query(request)) {
        case .failure(let refusal): return refusal.response
        case .success(let valid): authorization = valid
        }
        if let (user, session) = await signedIn(request) {
            return await consentPage(authorization, user: user, session: session)
        }
        return loginPage(authorization, request: request, error: nil, username: nil)
    }

    func authorizeForm(_ request: Request, context: PorticoRequestContext) async throws -> Response {
        let fields = try await Forms.fields(request)
        let authorization: AuthorizationRequest
        switch await validate(fields.filter { !Self.controlFields.contains($0.0) }) {
        case .failure(let refusal): return refusal.response
        case .success(let valid): authorization = valid
        }
        switch Forms.first(fields, "action") {
        case "login":
            return try await login(fields, authorization: authorization, request: request, context: context)
        case "consent":
            return try await consent(fields, authorization: authorization, request: request)
        default:
            return pages.error("Unexpected form", "The form did not say what to do; reload the page.")
        }
    }

    func login(_ fields: [(String, String)], authorization: AuthorizationRequest, request: Request, context: PorticoRequestContext) async throws -> Response {
        guard signIn.formIsGenuine(fields, request: request) else {
            return pages.error(
                "Sign-in form expired", "The form's security token is missing or wrong (CSRF). Go back to the application and start the sign-in again.",
                code: "csrf", status: .forbidden)
        }
        let username = Forms.first(fields, "username") ?? ""
        switch try await signIn.attempt(username: username, password: Forms.first(fields, "password") ?? "", address: context.throttledAddress) {
        case .failed(let message, let status):
            return loginPage(authorization, request: request, error: message, username: username, status: status)
        case .signedIn(_, let cookie):
            return Forms.redirect("/oauth/authorize?\(FormEncoding.encode(authorization.parameters))", headers: cookie)
        }
    }

    func consent(_ fields: [(String, String)], authorization: AuthorizationRequest, request: Request) async throws -> Response {
        guard let (user, session) = await signedIn(request) else {
            return loginPage(authorization, request: request, error: "Your sign-in has expired; sign in again.", username: nil)
        }
        guard sessions.checkCSRF(Forms.first(fields, "csrf"), session: session) else {
            return pages.error(
                "Consent form expired",
                "The form's security token is missing or wrong (CSRF). Nothing was approved. Go back to the application and start again.", code: "csrf",
                status: .forbidden)
        }
        guard Forms.first(fields, "decision") == "approve" else {
            return Forms.redirect(server.deny(authorization), status: .found)
        }
        let role = try await users.role(app: authorization.app, userID: user.id)
        guard role != nil else {
            return Forms.redirect(server.deny(authorization, reason: "user \(user.name) has no role in app \(authorization.app)"), status: .found)
        }
        let chosen = Forms.all(fields, "scope_choice").compactMap { Scope.expand($0)?.first }
        let location = try await server.approve(authorization, user: user, role: role, chosen: chosen)
        return Forms.redirect(location, status: .found)
    }

    /// A refused authorization request, as the page or redirect the browser gets.
    struct Refusal: Error {
        var response: Response
    }

    /// Checks an authorization request: an error page before the redirect URI is trusted, an error redirect after.
    func validate(_ parameters: [(String, String)]) async -> Result<AuthorizationRequest, Refusal> {
        switch await server.validateAuthorization(parameters) {
        case .failure(.page(let error)):
            return .failure(Refusal(response: pages.error("This sign-in request cannot be completed", error.description, code: error.code)))
        case .failure(.redirect(_, let location)):
            return .failure(Refusal(response: Forms.redirect(location, status: .found)))
        case .success(let valid):
            return .success(valid)
        }
    }

    func signedIn(_ request: Request) async -> (User, String)? {
        try? await signIn.signedIn(request)
    }

    var signIn: SignIn { SignIn(users: users, throttle: throttle, sessions: sessions, secureCookies: secureCookies) }

    func hidden(_ authorization: AuthorizationRequest) -> [[String: String]] {
        authorization.parameters.filter { !Self.controlFields.contains($0.0) }.map { ["name": $0.0, "value": $0.1] }
    }

    func loginPage(_ authorization: AuthorizationRequest, request: Request, error: String?, username: String?, status: HTTPResponse.Status = .ok) -> Response {
        let (csrf, headers) = signIn.formToken(request)
        return pages.render(
            "login",
            [
                "action": "/oauth/authorize", "csrf": csrf, "hidden": hidden(authorization),
                "clientName": authorization.client.displayName, "error": error, "username": username ?? "",
            ], status: status, headers: headers)
    }

    func consentPage(_ authorization: AuthorizationRequest, user: User, session: String) async -> Response {
        let role = try? await users.role(app: authorization.app, userID: user.id)
        guard let role else {
            return Forms.redirect(server.deny(authorization, reason: "user \(user.name) has no role in app \(authorization.app)"), status: .found)
        }
        let offered = server.offeredScopes(authorization, role: role)
        let host = URL(string: authorization.redirectURI)?.host ?? authorization.redirectURI
        return pages.render(
            "consent",
            [
                "csrf": sessions.csrfToken(for: session), "hidden": hidden(authorization), "clientName": authorization.client.displayName,
                "app": authorization.app, "user": user.name, "role": role.name, "redirectHost": host,
                "localRedirect": RedirectURI.isLoopback(host),
                "offline": authorization.requestedScopes.contains(.offlineAccess),
                "scopes": offered.map { ["name": $0.name, "label": WebPages.scopeLabels[$0.name] ?? $0.name] },
            ])
    }

    // MARK: Token, registration, revocation

    func token(_ request: Request, context: PorticoRequestContext) async throws -> Response {
        let fields: [(String, String)]
        do {
            fields = try await Forms.fields(request)
        } catch {
            return Response.json(
                OAuthError.invalidRequest("send the token request as application/x-www-form-urlencoded").json, status: .badRequest, noStore: true)
        }
        do {
            let result = try await server.token(form: fields, authorization: request.headers[.authorization], remoteAddress: context.remoteAddress)
            return Response.json(result, noStore: true)
        } catch {
            return oauthError(error, for: request)
        }
    }

    func register(_ request: Request, context: PorticoRequestContext) async throws -> Response {
        let body: JSON
        do {
            let buffer = try await request.body.collect(upTo: Forms.maxBytes)
            body = try JSONParser.parse(buffer.readableBytesView)
        } catch {
            return Response.json(
                OAuthError.invalidClientMetadata("the registration request must be a JSON object: \(error)").json, status: .badRequest, noStore: true)
        }
        do {
            // Counted per address only where the address is one client's (not loopback, nor a proxy's
            // that is not trusted): behind such a proxy only the cap on unused clients applies.
            return Response.json(
                try await server.register(body, authorization: request.headers[.authorization], remoteAddress: context.throttledAddress), status: .created,
                noStore: true)
        } catch {
            return oauthError(error, for: nil)
        }
    }

    func revoke(_ request: Request) async throws -> Response {
        let fields: [(String, String)]
        do {
            fields = try await Forms.fields(request)
        } catch {
            return Response.json(
                OAuthError.invalidRequest("send the revocation request as application/x-www-form-urlencoded").json, status: .badRequest, noStore: true)
        }
        do {
            try await server.revoke(form: fields, authorization: request.headers[.authorization])
            return Response(status: .ok, headers: [.cacheControl: "no-store"])
        } catch {
            return oauthError(error, for: request)
        }
    }

    /// The RFC 6749 error response; a client that authenticated with HTTP Basic and failed is told how to retry (RFC 6749 §5.2).
    func oauthError(_ error: OAuthError, for request: Request?) -> Response {
        var response = Response.json(error.json, status: HTTPResponse.Status(code: error.status), noStore: true)
        if error.code == "invalid_client", request?.headers[.authorization]?.lowercased().hasPrefix("basic ") == true {
            response.headers[.wwwAuthenticate] = "Basic realm=\"portico\", charset=\"UTF-8\""
        }
        if error.code == "invalid_token" { response.headers[.wwwAuthenticate] = "Bearer error=\"invalid_token\"" }
        if error.status == 429 { response.headers[.retryAfter] = "3600" }
        return response
    }
}

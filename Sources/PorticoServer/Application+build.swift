import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
public import Logging
import NIOCore
import PorticoAsk
import PorticoAuth
import PorticoBase
import PorticoData
public import PorticoInstance
import PorticoJSON
import PorticoMCP
import PorticoStore
import PorticoWorkflow
import ServiceLifecycle
import UnixSignals

/// What `portico serve` prints once it listens.
public struct ServerBanner: Sendable {
    public var baseURL: String
    public var mcpURL: String
    /// The SQLBot-compatible MCP endpoint, when `--sqlbot-port` is set.
    public var sqlbotURL: String?
    public var demo: DemoCredentials?
}

/// The HTTP application type of both listeners.
typealias PorticoHTTPApplication = Application<PorticoResponder>

/// A built server: an instance with its listeners, the main one and SQLBot's when configured.
/// Tests drive `application` in process with HummingbirdTesting; `portico serve` calls `run()`.
public struct PorticoApplication {
    let application: PorticoHTTPApplication
    let sqlbotApplication: PorticoHTTPApplication?
    public let instance: PorticoInstance
    let logger: Logger
    /// Exports spans, when tracing is on.
    var tracing: (any Service)?

    /// Runs until SIGINT or SIGTERM; in-flight requests finish first, then everything is closed.
    public func run() async throws {
        var services = instance.services(listener: application, sqlbotListener: sqlbotApplication)
        if let tracing {
            // First, so it stops last: the spans of the last requests are exported too.
            services.insert(tracing, at: 0)
        }
        var groupConfiguration = ServiceGroupConfiguration(
            services: services.map { .init(service: $0) }, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        // Calls still running `shutdownGrace` after the signal are cancelled; this is the backstop.
        groupConfiguration.maximumGracefulShutdownDuration = instance.configuration.shutdownGrace + .seconds(5)
        do {
            try await ServiceGroup(configuration: groupConfiguration).run()
        } catch {
            await close()
            throw error
        }
        await close()
    }

    /// Closes the instance: its event streams, HTTP client, datasources and databases.
    public func close() async {
        await instance.close()
    }
}

/// Opens the stores and builds both listeners from `configuration`; nothing listens until `run()`.
public func buildApplication(
    _ configuration: InstanceConfiguration, logger: Logger, onListening: @escaping @Sendable (ServerBanner) -> Void = { _ in }
) async throws -> PorticoApplication {
    // Tracing first, so that the router is built with its middleware.
    let tracing = try configuration.otelEndpoint.map { try TracingSetup.start(endpoint: $0, logger: logger) }
    _ = MetricsController.registry
    let instance = try await PorticoInstance.open(configuration, views: [try WebPages.answerView()], logger: logger)
    let parts: WebParts
    do {
        parts = WebParts(instance: instance, pages: try await WebPages.load())
    } catch {
        await instance.close()
        throw error
    }
    let port = configuration.port
    // Enough descriptors for the connection cap, with room left for the database and clients.
    let descriptors = FileDescriptorLimit.raise()
    var limits = configuration.connections
    limits.maxConnections = max(1, min(limits.maxConnections, descriptors - 256))
    let connectionCount = ConnectionCount(limit: limits.maxConnections, logger: logger)
    let connectionLimits = limits
    let demo = instance.demo
    let dates = HTTPDates()
    // Hummingbird's application runs the listener and its services; each connection answers with
    // Portico's responder itself (`HTTPConnectionChannel`), not through the application's.
    func connections(_ responder: PorticoResponder) -> HTTPServerBuilder {
        HTTPServerBuilder { _ in
            HTTPConnectionChannel(
                responder: responder, count: connectionCount, limits: connectionLimits, maxBodyBytes: configuration.maxBodyBytes, dates: dates)
        }
    }
    let responder = PorticoResponder(
        router: buildRouter(parts, configuration: configuration).buildResponder(),
        mcp: Traces.isOn ? nil : (mcpController(parts, configuration: configuration), RequestIDMiddleware(configuration)))
    let application = Application(
        responder: responder,
        server: connections(responder),
        configuration: .init(
            address: .hostname(configuration.host, port: port), serverName: nil, backlog: 1024,
            // A hard stop below the descriptor limit: past it the kernel's queue holds new connections.
            availableConnectionsDelegate: .maximum(max(limits.maxConnections + 64, descriptors - 64), logger: logger)),
        onServerRunning: { channel in
            let actual = channel.localAddress?.port ?? port
            let base = configuration.baseURL(port: actual)
            let sqlbotURL = configuration.sqlbotPort.map { configuration.publicURL == nil ? configuration.baseURL(port: $0) + "/mcp" : base + "/mcp" }
            onListening(ServerBanner(baseURL: base, mcpURL: base + "/api/mcp", sqlbotURL: sqlbotURL, demo: demo))
        },
        logger: logger)
    var sqlbotApplication: PorticoHTTPApplication?
    if let sqlbotPort = configuration.sqlbotPort, let router = buildSQLBotRouter(parts, configuration: configuration) {
        let sqlbotResponder = PorticoResponder(router: router.buildResponder(), mcp: nil)
        sqlbotApplication = Application(
            responder: sqlbotResponder,
            server: connections(sqlbotResponder),
            configuration: .init(address: .hostname(configuration.host, port: sqlbotPort), serverName: nil, backlog: 256),
            logger: logger)
    }
    return PorticoApplication(application: application, sqlbotApplication: sqlbotApplication, instance: instance, logger: logger, tracing: tracing)
}

/// The main listener's routes: health, images, metrics, OAuth, the console and ask pages, MCP.
func buildRouter(_ parts: WebParts, configuration: InstanceConfiguration) -> Router<PorticoRequestContext> {
    let router = Router(context: PorticoRequestContext.self)
    // `PorticoResponder` runs the same middleware for the main MCP endpoint: add a new one there too.
    router.add(middleware: RequestIDMiddleware(configuration))
    if Traces.isOn { router.add(middleware: tracingMiddleware) }
    HealthController(database: parts.stores.database).addRoutes(to: router)
    ImageController(images: parts.images).addRoutes(to: router)
    IconController().addRoutes(to: router)
    MetricsController(registry: MetricsController.registry, endpoint: parts.endpoint).addRoutes(to: router)
    OAuthController(
        server: parts.authorizationServer, pages: parts.pages, sessions: parts.sessions, users: parts.stores.users, throttle: parts.throttle,
        apps: parts.apps, secureCookies: parts.secureCookies
    ).addRoutes(to: router)
    // The console's pages: one sign-in for all of them, and each action checked as the tool it stands for.
    let signIn = SignIn(users: parts.stores.users, throttle: parts.throttle, sessions: parts.sessions, secureCookies: parts.secureCookies)
    let console = router.group("console").add(middleware: SignedInMiddleware(signIn: signIn))
    let access = PageAccess(registry: parts.endpoint.registry, users: parts.stores.users)
    ConsoleController(
        pages: parts.pages, sessions: parts.sessions, users: parts.stores.users, keys: parts.stores.apiKeys, server: parts.authorizationServer,
        throttle: parts.throttle, secureCookies: parts.secureCookies, access: access
    ).addRoutes(to: router, console: console)
    WorkflowsPageController(pages: parts.pages, sessions: parts.sessions, users: parts.stores.users, workflows: parts.workflows, access: access)
        .addRoutes(to: console)
    AskPageController(
        pages: parts.pages, sessions: parts.sessions, users: parts.stores.users, asker: parts.asker, limiter: parts.limiter, access: access
    ).addRoutes(to: console)
    SemanticPageController(pages: parts.pages, sessions: parts.sessions, users: parts.stores.users, asker: parts.asker, access: access)
        .addRoutes(to: console)
    mcpController(parts, configuration: configuration).addRoutes(to: router)
    return router
}

/// The main app's MCP endpoint.
func mcpController(_ parts: WebParts, configuration: InstanceConfiguration) -> MCPController {
    MCPController(
        endpoint: parts.endpoint, authenticator: parts.authenticator, apps: parts.apps, baseURL: parts.baseURL, maxBodyBytes: configuration.maxBodyBytes)
}

/// A listener's responder: the router, except that a request to the main MCP endpoint (the path
/// agents call for every tool) goes straight to it, through the same middleware the router
/// would run (`RequestIDMiddleware`), without the route lookup (about 3% of a get). With
/// tracing on, everything goes through the router and its tracing middleware.
struct PorticoResponder: HTTPResponder {
    let router: RouterResponder<PorticoRequestContext>
    let mcp: (controller: MCPController, middleware: RequestIDMiddleware)?

    func respond(to request: Request, context: PorticoRequestContext) async throws -> Response {
        if let (controller, middleware) = mcp, request.uri.path == "/api/mcp", MCPController.methods.contains(request.method) {
            return try await middleware.handle(request, context: context) { request, context in
                try await controller.handle(request, context: context, app: "main", path: "/api/mcp")
            }
        }
        return try await router.respond(to: request, context: context)
    }
}

extension RequestIDMiddleware {
    /// The request-id middleware as every listener runs it, from the server's configuration.
    init(_ configuration: InstanceConfiguration) {
        self.init(trustedProxies: configuration.trustedProxies)
    }
}

/// A span per HTTP request, the parent taken from its `traceparent` header; OAuth's secrets and
/// one-time values are not recorded from query strings.
let tracingMiddleware = TracingMiddleware<PorticoRequestContext>(
    redactingQueryParameters: ["code", "state", "code_challenge", "code_verifier", "token", "access_token", "refresh_token", "password", "client_secret"])

/// The SQLBot listener's routes (`--sqlbot-port`): MCP at `/mcp` with package `sqlbot`, its JSON
/// routes, health and images; `nil` without the option.
func buildSQLBotRouter(_ parts: WebParts, configuration: InstanceConfiguration) -> Router<PorticoRequestContext>? {
    guard let (sqlbot, endpoint, sqlbotBaseURL) = parts.sqlbot else { return nil }
    let router = Router(context: PorticoRequestContext.self)
    router.add(middleware: RequestIDMiddleware(configuration))
    if Traces.isOn { router.add(middleware: tracingMiddleware) }
    HealthController(database: parts.stores.database).addRoutes(to: router)
    ImageController(images: parts.images).addRoutes(to: router)
    IconController().addRoutes(to: router)
    SQLBotController(
        mcp: MCPController(
            endpoint: endpoint, authenticator: OpenAuthenticator(wrapped: parts.authenticator), apps: parts.apps, baseURL: sqlbotBaseURL,
            maxBodyBytes: configuration.maxBodyBytes),
        sqlbot: sqlbot, authenticator: parts.authenticator
    ).addRoutes(to: router)
    return router
}

/// What the routes are built from: the instance (its members read as the parts' own), and the
/// pages its web controllers render.
@dynamicMemberLookup
struct WebParts {
    let instance: PorticoInstance
    let pages: WebPages

    subscript<T>(dynamicMember member: KeyPath<PorticoInstance, T>) -> T { instance[keyPath: member] }
    /// Cookies are `Secure` when clients reach the server over https.
    var secureCookies: Bool { instance.baseURL.hasPrefix("https://") }
}

import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
public import Logging
import NIOCore
import PorticoAsk
import PorticoAuth
import PorticoBase
import PorticoData
public import PorticoInstance
import PorticoJSON
import PorticoMCP
import PorticoTools
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

/// A built server: the main listener, the SQLBot listener when configured, the services that
/// run beside them, and what to close when they stop. Tests drive `application` in process with
/// HummingbirdTesting; `portico serve` calls `run()`.
public struct PorticoApplication {
    let application: PorticoHTTPApplication
    let sqlbotApplication: PorticoHTTPApplication?
    let parts: ServerParts
    let configuration: ServerConfiguration
    let logger: Logger
    /// Exports spans, when tracing is on.
    var tracing: (any Service)?

    /// Runs until SIGINT or SIGTERM; in-flight requests finish first, then everything is closed.
    public func run() async throws {
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: RevocationService(list: parts.revocations, keys: parts.keys, logger: logger)), .init(service: application),
            .init(service: EndpointService(endpoint: parts.endpoint, grace: configuration.shutdownGrace)),
            .init(service: MemoryService()),
            .init(service: RateLimitService(limiter: parts.limiter)),
            .init(service: WorkflowRunService(engine: parts.workflows.engine)),
        ]
        if let sqlbotApplication, let sqlbotEndpoint = parts.sqlbotEndpoint {
            services.append(.init(service: sqlbotApplication))
            services.append(.init(service: EndpointService(endpoint: sqlbotEndpoint, grace: configuration.shutdownGrace)))
        }
        if let tracing {
            // First, so it stops last: the spans of the last requests are exported too.
            services.insert(.init(service: tracing), at: 0)
        }
        if let audit = parts.audit {
            // First, so it stops last: the calls that finish during shutdown are written too.
            services.insert(.init(service: AuditService(trail: audit, apps: parts.stores.apps, clock: configuration.clock, logger: logger)), at: 0)
        }
        var groupConfiguration = ServiceGroupConfiguration(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        // Calls still running `shutdownGrace` after the signal are cancelled; this is the backstop.
        groupConfiguration.maximumGracefulShutdownDuration = configuration.shutdownGrace + .seconds(5)
        do {
            try await ServiceGroup(configuration: groupConfiguration).run()
        } catch {
            await close()
            throw error
        }
        await close()
    }

    /// Ends the event streams and closes the HTTP client, the datasources and the database.
    public func close() async {
        parts.endpoint.closeStreams()
        parts.sqlbotEndpoint?.closeStreams()
        try? await parts.httpClient.shutdown()
        await parts.asker.datasources.close()
        await parts.stores.close()
    }
}

/// Opens the stores and builds both listeners from `configuration`; nothing listens until `run()`.
public func buildApplication(
    _ configuration: ServerConfiguration, logger: Logger, onListening: @escaping @Sendable (ServerBanner) -> Void = { _ in }
) async throws -> PorticoApplication {
    // Tracing first, so that the router is built with its middleware.
    let tracing = try configuration.otelEndpoint.map { try TracingSetup.start(endpoint: $0, logger: logger) }
    let parts = try await ServerParts.open(configuration, logger: logger)
    let port = configuration.port
    // Enough descriptors for the connection cap, with room left for the database and clients.
    let descriptors = FileDescriptorLimit.raise()
    var limits = configuration.connections
    limits.maxConnections = max(1, min(limits.maxConnections, descriptors - 256))
    let connectionCount = ConnectionCount(limit: limits.maxConnections, logger: logger)
    let guardLimits = limits
    let idleTimeout = TimeAmount.nanoseconds(
        Int64(limits.idleTimeout.components.seconds) * 1_000_000_000 + Int64(limits.idleTimeout.components.attoseconds / 1_000_000_000))
    let demo = parts.demo
    let application = Application(
        responder: PorticoResponder(
            router: buildRouter(parts, configuration: configuration).buildResponder(),
            mcp: Traces.isOn ? nil : (mcpController(parts, configuration: configuration), RequestIDMiddleware(configuration))),
        server: .http1(
            configuration: .init(additionalChannelHandlers: [ConnectionGuard(count: connectionCount, limits: guardLimits)], idleTimeout: idleTimeout)),
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
        sqlbotApplication = Application(
            responder: PorticoResponder(router: router.buildResponder(), mcp: nil),
            server: .http1(
                configuration: .init(additionalChannelHandlers: [ConnectionGuard(count: connectionCount, limits: guardLimits)], idleTimeout: idleTimeout)),
            configuration: .init(address: .hostname(configuration.host, port: sqlbotPort), serverName: nil, backlog: 256),
            logger: logger)
    }
    return PorticoApplication(
        application: application, sqlbotApplication: sqlbotApplication, parts: parts, configuration: configuration, logger: logger, tracing: tracing)
}

/// The main listener's routes: health, images, metrics, OAuth, the console and ask pages, MCP.
func buildRouter(_ parts: ServerParts, configuration: ServerConfiguration) -> Router<PorticoRequestContext> {
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
    ConsoleController(
        pages: parts.pages, sessions: parts.sessions, users: parts.stores.users, keys: parts.stores.apiKeys, server: parts.authorizationServer,
        throttle: parts.throttle, secureCookies: parts.secureCookies
    ).addRoutes(to: router)
    WorkflowsPageController(
        pages: parts.pages, sessions: parts.sessions, users: parts.stores.users, workflows: parts.workflows, throttle: parts.throttle,
        secureCookies: parts.secureCookies
    ).addRoutes(to: router)
    AskPageController(
        pages: parts.pages, sessions: parts.sessions, users: parts.stores.users, asker: parts.asker, throttle: parts.throttle, limiter: parts.limiter,
        secureCookies: parts.secureCookies
    ).addRoutes(to: router)
    mcpController(parts, configuration: configuration).addRoutes(to: router)
    return router
}

/// The main app's MCP endpoint.
func mcpController(_ parts: ServerParts, configuration: ServerConfiguration) -> MCPController {
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
    init(_ configuration: ServerConfiguration) {
        self.init(trustedProxies: configuration.trustedProxies)
    }
}

/// A span per HTTP request, the parent taken from its `traceparent` header; OAuth's secrets and
/// one-time values are not recorded from query strings.
let tracingMiddleware = TracingMiddleware<PorticoRequestContext>(
    redactingQueryParameters: ["code", "state", "code_challenge", "code_verifier", "token", "access_token", "refresh_token", "password", "client_secret"])

/// The SQLBot listener's routes (`--sqlbot-port`): MCP at `/mcp` with package `sqlbot`, its JSON
/// routes, health and images; `nil` without the option.
func buildSQLBotRouter(_ parts: ServerParts, configuration: ServerConfiguration) -> Router<PorticoRequestContext>? {
    guard let sqlbot = parts.sqlbot, let endpoint = parts.sqlbotEndpoint else { return nil }
    let router = Router(context: PorticoRequestContext.self)
    router.add(middleware: RequestIDMiddleware(configuration))
    if Traces.isOn { router.add(middleware: tracingMiddleware) }
    HealthController(database: parts.stores.database).addRoutes(to: router)
    ImageController(images: parts.images).addRoutes(to: router)
    IconController().addRoutes(to: router)
    SQLBotController(
        mcp: MCPController(
            endpoint: endpoint, authenticator: OpenAuthenticator(wrapped: parts.authenticator), apps: parts.apps, baseURL: parts.sqlbotBaseURL,
            maxBodyBytes: configuration.maxBodyBytes),
        sqlbot: sqlbot, authenticator: parts.authenticator
    ).addRoutes(to: router)
    return router
}

/// Everything the routes are built from, opened once at start-up.
struct ServerParts {
    let stores: PorticoStores
    let demo: DemoCredentials?
    let revocations: RevocationList
    let keys: TokenKeys
    let httpClient: HTTPClient
    let authorizationServer: AuthorizationServer
    let sessions: WebSessions
    let throttle: LoginThrottle
    let apps: AppDirectory
    let images: ImageStore
    let asker: AskService
    let audit: AuditTrail?
    let workflows: WorkflowService
    let limiter: RateLimiter
    let endpoint: MCPEndpoint
    let authenticator: CredentialAuthenticator
    let pages: WebPages
    let baseURL: String
    let secureCookies: Bool
    let sqlbot: SQLBotService?
    let sqlbotEndpoint: MCPEndpoint?
    let sqlbotBaseURL: String

    static func open(_ configuration: ServerConfiguration, logger: Logger) async throws -> ServerParts {
        _ = MetricsController.registry
        var storeOptions = SQLiteStore.Options()
        storeOptions.inlineReadBudget = configuration.inlineReadBudget
        var postgresOptions = PostgresStore.Options()
        postgresOptions.poolSize = configuration.databasePoolSize
        let stores = try await PorticoStores.open(
            dataDirectory: configuration.dataDirectory, databaseURL: configuration.databaseURL, options: storeOptions, postgresOptions: postgresOptions,
            clock: configuration.clock, logger: logger)
        let masterKey = try MasterKey.load(environment: configuration.masterKey, dataDirectory: configuration.dataDirectory)
        let demo: DemoCredentials? = configuration.demo ? try await DemoSetup.ensure(stores: stores, logger: logger) : nil
        let clock = configuration.clock
        let revocations = try await stores.revocationList(logger: logger)
        let signer = try await stores.sessionSigner(masterKey: masterKey)
        let port = configuration.port
        let baseURL = configuration.baseURL(port: port)
        let keys = try await stores.tokenKeys(masterKey: masterKey, maxTokenLifetime: max(configuration.accessTokenLifetime, 86400), logger: logger)
        let httpClient = HTTPClientMetadataFetcher.makeClient()
        let authorizationServer = stores.authorizationServer(
            issuer: baseURL, accessTokenLifetime: configuration.accessTokenLifetime, registration: configuration.clientRegistration, keys: keys,
            revocations: revocations,
            metadataFetcher: HTTPClientMetadataFetcher(client: httpClient, allowPrivateHosts: configuration.allowPrivateClientMetadata), logger: logger)
        let sessions = WebSessions(database: stores.database, users: stores.users, masterKey: masterKey, clock: clock)
        let throttle = LoginThrottle(database: stores.database, clock: clock)
        let apps = AppDirectory(load: { try await stores.apps.offeredPackages() })
        let catalogs = stores.catalogs
        // Replicas on PostgreSQL keep chart images in it, so any replica serves any image.
        let images = try ImageStore(
            directory: URL(fileURLWithPath: configuration.dataDirectory).appendingPathComponent("images"),
            database: stores.database.flavor == .postgres ? stores.database : nil)
        var asker = stores.askService(masterKey: masterKey, client: httpClient, images: images, limits: configuration.queryLimits)
        asker.sureOnly = configuration.askSureOnly
        let audit = stores.auditTrail(retentionDays: configuration.auditRetentionDays, logger: logger)
        var workflowConfiguration = WorkflowEngine.Configuration()
        workflowConfiguration.allowedHosts = configuration.workflowAllowHosts
        workflowConfiguration.allowPrivateHosts = configuration.allowPrivateWorkflowHosts
        workflowConfiguration.concurrency = configuration.workflowWorkers
        let workflows = stores.workflows(configuration: workflowConfiguration, masterKey: masterKey, asker: asker, audit: audit, logger: logger)
        let tools = stores.appTools(
            authorizationServer: authorizationServer, asker: asker, schema: stores.schemaService(), workflows: workflows, audit: audit,
            imageBaseURL: baseURL + "/images/",
            iconBaseURL: baseURL + "/icons/",
            applicationQuota: configuration.applicationQuota, pageSize: configuration.toolsPageSize)
        var endpointConfiguration = MCPEndpoint.Configuration(
            identity: ServerIdentity(
                name: "portico", title: "Portico", version: porticoVersion,
                description: "An organisation's data for AI agents: records, schema, roles, users and questions in plain language",
                icons: [.svg(baseURL + "/icons/portico.svg")]),
            publicDiscovery: configuration.publicDiscovery,
            allowedOrigins: configuration.allowedOrigins(port: port),
            instructions: { app in await DataPackage.instructions(app: app, catalogs: catalogs) })
        endpointConfiguration.demoMode = configuration.demoMode
        endpointConfiguration.requestTimeout = configuration.requestTimeout
        endpointConfiguration.maxBatchEntries = configuration.maxBatchMessages
        endpointConfiguration.maxBatchResponseBytes = configuration.maxBatchResponseBytes
        endpointConfiguration.maxStreamsPerCredential = configuration.maxStreamsPerCredential
        if let audit { endpointConfiguration.audit = { record in audit.record(record) } }
        let limiter = RateLimiter(limits: configuration.rateLimits, database: stores.database, clock: clock, logger: logger)
        try await limiter.restore()
        endpointConfiguration.admission = { principal, app, toolCall in limiter.admit(principal, app: app, toolCall: toolCall) }
        endpointConfiguration.resources = tools.resources
        endpointConfiguration.views = [try WebPages.answerView()]
        let endpoint = stores.endpoint(configuration: endpointConfiguration, registry: tools.registry, signer: signer, revocations: revocations)
        let authenticator = CredentialAuthenticator(keys: stores.apiKeys, users: stores.users, authorizationServer: authorizationServer, sessions: sessions)
        let secureCookies = baseURL.hasPrefix("https://")

        var sqlbot: SQLBotService?
        var sqlbotEndpoint: MCPEndpoint?
        var sqlbotBaseURL = baseURL
        if let sqlbotPort = configuration.sqlbotPort {
            // SQLBot's surface on its own port: its tools only, callers without credentials
            // allowed in (mcp_start signs them in), the same connection guard and limits.
            sqlbotBaseURL = configuration.publicURL == nil ? configuration.baseURL(port: sqlbotPort) : baseURL
            let tokens = WebSessions(database: stores.database, users: stores.users, masterKey: masterKey, lifetime: 8 * 3600, clock: clock)
            let users = stores.users
            let accounts = SQLBotService.Accounts(
                login: { username, password, address in
                    let signIn = SignIn(users: users, throttle: throttle, sessions: tokens, secureCookies: secureCookies)
                    switch try await signIn.check(username: username, password: password, address: address) {
                    case .failure(.locked(let minutes)):
                        return .failure(SQLBotError(429, "too many failed sign-ins; try again in \(minutes) minutes"))
                    case .failure(.wrongPassword):
                        return .failure(SQLBotError(400, "Incorrect account or password"))
                    case .success(let user):
                        return .success((try await tokens.start(userID: user.id), user.id))
                    }
                },
                verify: { token, app in
                    let bearer = APIKeyStore.looksLikeKey(token) || token.split(separator: ".").count == 3
                    return await authenticator.authenticate(
                        bearer
                            ? RequestCredentials(authorization: "Bearer " + token)
                            : RequestCredentials(authorization: nil, cookie: "\(WebSessions.cookieName)=\(token)"), app: app)
                },
                apps: { userID in try await users.roles(userID: userID).keys.sorted() },
                admit: { principal, app in limiter.admit(principal, app: app, toolCall: true) })
            let service = SQLBotService(asker: asker, accounts: accounts, imageBaseURL: sqlbotBaseURL + "/images/")
            let package = SQLBotPackage(service: service)
            var sqlbotConfiguration = endpointConfiguration
            sqlbotConfiguration.allowedOrigins = configuration.allowedOrigins(port: sqlbotPort)
            // SQLBot's listener serves its own tools only (its calls are audited like the main endpoint's).
            sqlbotConfiguration.resources = nil
            sqlbotConfiguration.views = []
            sqlbotConfiguration.identity.icons = [.svg(sqlbotBaseURL + "/icons/portico.svg")]
            sqlbotConfiguration.instructions = { _ in
                "SQLBot's tools: call mcp_start with username and password (or pass an API key as token), then mcp_question with the token and chat_id."
            }
            sqlbot = service
            sqlbotEndpoint = stores.endpoint(
                configuration: sqlbotConfiguration,
                registry: ToolRegistry(packages: [package.package.withIcon(baseURL: sqlbotBaseURL + "/icons/")], defaultPackages: [ToolInventory.sqlbot]),
                signer: signer, revocations: revocations)
        }
        return ServerParts(
            stores: stores, demo: demo, revocations: revocations, keys: keys, httpClient: httpClient, authorizationServer: authorizationServer,
            sessions: sessions, throttle: throttle, apps: apps, images: images, asker: asker, audit: audit, workflows: workflows, limiter: limiter,
            endpoint: endpoint,
            authenticator: authenticator,
            pages: try await WebPages.load(), baseURL: baseURL, secureCookies: secureCookies, sqlbot: sqlbot, sqlbotEndpoint: sqlbotEndpoint,
            sqlbotBaseURL: sqlbotBaseURL)
    }
}

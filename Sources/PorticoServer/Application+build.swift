import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
public import Logging
import NIOCore
import PorticoAsk
import PorticoAuth
import PorticoData
import PorticoJSON
import PorticoMCP
import PorticoTools
import ServiceLifecycle
import UnixSignals

/// Portico's version, reported as `serverInfo`.
public let porticoVersion = "0.2.0"

/// What `portico serve` prints once it listens.
public struct ServerBanner: Sendable {
    public var baseURL: String
    public var mcpURL: String
    /// The SQLBot-compatible MCP endpoint, when `--sqlbot-port` is set.
    public var sqlbotURL: String?
    public var demo: DemoCredentials?
}

/// Builds and runs the HTTP server until SIGINT or SIGTERM; in-flight requests finish first.
public enum PorticoServer {
    public static func run(_ configuration: ServerConfiguration, logger: Logger, onListening: @escaping @Sendable (ServerBanner) -> Void) async throws {
        let metricsRegistry = MetricsController.bootstrap()
        var storeOptions = SQLiteStore.Options()
        storeOptions.inlineReadBudget = configuration.inlineReadBudget
        let stores = try await PorticoStores.open(dataDirectory: configuration.dataDirectory, options: storeOptions, logger: logger)
        let masterKey = try MasterKey.load(environment: configuration.masterKey, dataDirectory: configuration.dataDirectory)
        let demo: DemoCredentials? = configuration.demo ? try await DemoSetup.ensure(stores: stores, logger: logger) : nil
        let revocations = RevocationList(database: stores.database, logger: logger)
        try await revocations.refresh()
        let signer = SessionSigner(secret: try await stores.sessionSecret(masterKey: masterKey))

        let port = configuration.port
        let baseURL = configuration.baseURL(port: port)
        let keys = TokenKeys(database: stores.database, masterKey: masterKey, logger: logger, maxTokenLifetime: max(configuration.accessTokenLifetime, 86400))
        try await keys.refresh()
        let httpClient = HTTPClientMetadataFetcher.makeClient()
        var oauthConfiguration = AuthorizationServer.Configuration(issuer: baseURL)
        oauthConfiguration.accessTokenLifetime = configuration.accessTokenLifetime
        let authorizationServer = AuthorizationServer(
            configuration: oauthConfiguration, database: stores.database, users: stores.users, keys: keys, revocations: revocations,
            appNames: { try await stores.appNames() },
            metadataFetcher: HTTPClientMetadataFetcher(client: httpClient, allowPrivateHosts: configuration.allowPrivateClientMetadata),
            logger: logger)
        let sessions = WebSessions(database: stores.database, users: stores.users, masterKey: masterKey)
        let throttle = LoginThrottle(database: stores.database)
        let apps = AppDirectory(load: { try await stores.appNames() })

        let catalogs = stores.catalogs
        let images = try ImageStore(directory: URL(fileURLWithPath: configuration.dataDirectory).appendingPathComponent("images"))
        let asker = stores.askService(masterKey: masterKey, dataDirectory: configuration.dataDirectory, client: httpClient, images: images)
        let datasources = asker.datasources
        let endpointBox = EndpointBox()
        let registry = ToolRegistry(
            packages: [
                DataPackage(records: stores.records).package,
                UsersPackage(users: stores.users, server: authorizationServer) { userID in endpointBox.endpoint?.notifyToolsListChanged(userID: userID) }
                    .package,
                ApplicationsPackage(server: authorizationServer, quota: configuration.applicationQuota).package,
                APIKeysPackage(keys: stores.apiKeys).package,
                AskPackage(asker: asker, imageBaseURL: baseURL + "/images/").package,
            ],
            defaultPackages: ["data", "schema", "ask"], pageSize: configuration.toolsPageSize)
        if !registry.missingDefaultPackages.isEmpty {
            logger.notice(
                "default packages not served by this version: \(registry.missingDefaultPackages.joined(separator: ", ")); the default set is \(registry.defaultPackages.joined(separator: ", "))"
            )
        }
        var endpointConfiguration = MCPEndpoint.Configuration(
            identity: ServerIdentity(name: "portico", title: "Portico", version: porticoVersion),
            publicDiscovery: configuration.publicDiscovery,
            allowedOrigins: configuration.allowedOrigins(port: port),
            instructions: { app in await DataPackage.instructions(app: app, catalogs: catalogs) })
        endpointConfiguration.demoMode = configuration.demoMode
        endpointConfiguration.requestTimeout = configuration.requestTimeout
        endpointConfiguration.maxBatchEntries = configuration.maxBatchMessages
        endpointConfiguration.maxBatchResponseBytes = configuration.maxBatchResponseBytes
        endpointConfiguration.maxStreamsPerCredential = configuration.maxStreamsPerCredential
        let endpoint = MCPEndpoint(configuration: endpointConfiguration, registry: registry, signer: signer, ledger: revocations)
        endpointBox.endpoint = endpoint

        let pages = try await WebPages.load()
        let secureCookies = baseURL.hasPrefix("https://")
        let router = Router(context: PorticoRequestContext.self)
        router.add(middleware: RequestIDMiddleware())
        HealthController(database: stores.database).addRoutes(to: router)
        ImageController(images: images).addRoutes(to: router)
        MetricsController(registry: metricsRegistry, endpoint: endpoint).addRoutes(to: router)
        OAuthController(
            server: authorizationServer, pages: pages, sessions: sessions, users: stores.users, throttle: throttle, apps: apps,
            secureCookies: secureCookies
        ).addRoutes(to: router)
        ConsoleController(
            pages: pages, sessions: sessions, users: stores.users, keys: stores.apiKeys, server: authorizationServer, throttle: throttle,
            secureCookies: secureCookies
        ).addRoutes(to: router)
        let authenticator = CredentialAuthenticator(keys: stores.apiKeys, users: stores.users, authorizationServer: authorizationServer, sessions: sessions)
        AskPageController(pages: pages, sessions: sessions, users: stores.users, asker: asker, throttle: throttle, secureCookies: secureCookies)
            .addRoutes(to: router)
        MCPController(endpoint: endpoint, authenticator: authenticator, apps: apps, baseURL: baseURL, maxBodyBytes: configuration.maxBodyBytes)
            .addRoutes(to: router)

        // Enough descriptors for the connection cap, with room left for the database and clients.
        let descriptors = FileDescriptorLimit.raise()
        var limits = configuration.connections
        limits.maxConnections = max(1, min(limits.maxConnections, descriptors - 256))
        let connectionCount = ConnectionCount(limit: limits.maxConnections, logger: logger)
        let guardLimits = limits
        let idle = limits.idleTimeout
        let app = Application(
            router: router,
            server: .http1(
                configuration: .init(
                    additionalChannelHandlers: [ConnectionGuard(count: connectionCount, limits: guardLimits)],
                    idleTimeout: .nanoseconds(Int64(idle.components.seconds) * 1_000_000_000 + Int64(idle.components.attoseconds / 1_000_000_000)))),
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
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: RevocationService(list: revocations, keys: keys, logger: logger)), .init(service: app),
            .init(service: EndpointService(endpoint: endpoint, grace: configuration.shutdownGrace)),
            .init(service: MemoryService()),
        ]
        var sqlbotEndpoint: MCPEndpoint?
        if let sqlbotPort = configuration.sqlbotPort {
            // SQLBot's surface on its own port: its tools only, callers without credentials
            // allowed in (mcp_start signs them in), the same connection guard and limits.
            let sqlbotBase = configuration.publicURL == nil ? configuration.baseURL(port: sqlbotPort) : baseURL
            let tokens = WebSessions(database: stores.database, users: stores.users, masterKey: masterKey, lifetime: 8 * 3600)
            let users = stores.users
            let accounts = SQLBotPackage.Accounts(
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
                apps: { userID in try await users.roles(userID: userID).keys.sorted() })
            let sqlbot = SQLBotPackage(asker: asker, accounts: accounts, imageBaseURL: sqlbotBase + "/images/")
            var sqlbotConfiguration = endpointConfiguration
            sqlbotConfiguration.allowedOrigins = configuration.allowedOrigins(port: sqlbotPort)
            sqlbotConfiguration.instructions = { _ in
                "SQLBot's tools: call mcp_start with username and password (or pass an API key as token), then mcp_question with the token and chat_id."
            }
            let second = MCPEndpoint(
                configuration: sqlbotConfiguration, registry: ToolRegistry(packages: [sqlbot.package], defaultPackages: ["sqlbot"]), signer: signer,
                ledger: revocations)
            sqlbotEndpoint = second
            let sqlbotRouter = Router(context: PorticoRequestContext.self)
            sqlbotRouter.add(middleware: RequestIDMiddleware())
            HealthController(database: stores.database).addRoutes(to: sqlbotRouter)
            ImageController(images: images).addRoutes(to: sqlbotRouter)
            SQLBotController(
                mcp: MCPController(
                    endpoint: second, authenticator: OpenAuthenticator(wrapped: authenticator), apps: apps, baseURL: sqlbotBase,
                    maxBodyBytes: configuration.maxBodyBytes),
                sqlbot: sqlbot, authenticator: authenticator
            ).addRoutes(to: sqlbotRouter)
            let sqlbotApp = Application(
                router: sqlbotRouter,
                server: .http1(
                    configuration: .init(
                        additionalChannelHandlers: [ConnectionGuard(count: connectionCount, limits: guardLimits)],
                        idleTimeout: .nanoseconds(Int64(idle.components.seconds) * 1_000_000_000))),
                configuration: .init(address: .hostname(configuration.host, port: sqlbotPort), serverName: nil, backlog: 256),
                logger: logger)
            services.append(.init(service: sqlbotApp))
            services.append(.init(service: EndpointService(endpoint: second, grace: configuration.shutdownGrace)))
        }
        var groupConfiguration = ServiceGroupConfiguration(
            services: services,
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        // Calls still running `shutdownGrace` after the signal are cancelled; this is the backstop.
        groupConfiguration.maximumGracefulShutdownDuration = configuration.shutdownGrace + .seconds(5)
        try await ServiceGroup(configuration: groupConfiguration).run()
        endpoint.closeStreams()
        sqlbotEndpoint?.closeStreams()
        try? await httpClient.shutdown()
        await datasources.close()
        await stores.database.close()
    }
}

/// Lets tools built before the endpoint reach it (for `tools/list_changed`).
final class EndpointBox: @unchecked Sendable {
    // Set once during start-up, before the server accepts requests; read afterwards.
    var endpoint: MCPEndpoint?
}

/// `GET /healthz` (the process is up) and `GET /readyz` (it can reach its database).
struct HealthController {
    let database: any Database

    func addRoutes(to router: Router<PorticoRequestContext>) {
        router.get("healthz") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/plain"], body: .init(byteBuffer: ByteBuffer(staticString: "ok\n")))
        }
        router.get("readyz") { _, context in
            do {
                _ = try await database.query("SELECT 1 AS ok")
                return Response(
                    status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(staticString: #"{"status":"ready"}"#)))
            } catch {
                context.logger.warning("readiness check failed", metadata: ["error": "\(error)"])
                return Response(
                    status: .serviceUnavailable, headers: [.contentType: "application/json"],
                    body: .init(byteBuffer: ByteBuffer(staticString: #"{"status":"database unavailable"}"#)))
            }
        }
    }
}

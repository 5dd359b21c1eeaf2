public import AsyncHTTPClient
import Foundation
public import Logging
public import PorticoAsk
public import PorticoAuth
public import PorticoBase
public import PorticoData
public import PorticoMCP
import PorticoStore
import PorticoTools
public import PorticoWorkflow
public import ServiceLifecycle

/// One Portico: its stores, master key and every service, opened from a configuration. The
/// composition root: `portico serve` builds its listeners over one (`PorticoServer`), and
/// `PorticoInstanceTests` open one on each database without HTTP. Nothing here speaks HTTP.
public final class PorticoInstance: Sendable {
    public let configuration: InstanceConfiguration
    public let stores: PorticoStores
    public let masterKey: MasterKey
    /// The demo's credentials, when it was opened with the demo data.
    public let demo: DemoCredentials?
    /// The address clients use, without a trailing slash: the OAuth issuer and where images and icons are.
    public let baseURL: String
    public let revocations: RevocationList
    public let keys: TokenKeys
    /// For client metadata documents, LLM APIs and workflow requests.
    public let httpClient: HTTPClient
    public let authorizationServer: AuthorizationServer
    public let sessions: WebSessions
    public let throttle: LoginThrottle
    public let apps: AppDirectory
    public let images: ImageStore
    public let asker: AskService
    /// The record of every tool call; `nil` when it is off.
    public let audit: AuditTrail?
    public let workflows: WorkflowService
    public let limiter: RateLimiter
    /// The main MCP endpoint: every app's tools (`ToolInventory`), behind `/api/mcp` and `/api/__app/NAME/mcp`.
    public let endpoint: MCPEndpoint
    public let authenticator: CredentialAuthenticator
    /// SQLBot's surface, when `sqlbotPort` is set: its service and an endpoint with its tools only.
    public let sqlbot: (service: SQLBotService, endpoint: MCPEndpoint, baseURL: String)?
    let logger: Logger

    /// Opens the stores (migrating them), loads the master key, adds the demo data when asked, and
    /// builds every service. `views` are the MCP Apps views the main endpoint offers (the server's
    /// pages). Nothing runs in the background until `services` are run.
    public static func open(_ configuration: InstanceConfiguration, views: [UIView] = [], logger: Logger) async throws -> PorticoInstance {
        let stores = try await PorticoStores.open(configuration, logger: logger)
        do {
            return try await PorticoInstance(configuration, stores: stores, views: views, logger: logger)
        } catch {
            await stores.close()
            throw error
        }
    }

    private init(_ configuration: InstanceConfiguration, stores: PorticoStores, views: [UIView], logger: Logger) async throws {
        let masterKey = try configuration.loadMasterKey()
        let clock = configuration.clock
        let demo = configuration.demo ? try await DemoSetup.ensure(stores: stores, logger: logger) : nil
        let revocations = try await stores.revocationList(logger: logger)
        let signer = try await stores.sessionSigner(masterKey: masterKey)
        let baseURL = configuration.baseURL(port: configuration.port)
        let keys = try await stores.tokenKeys(masterKey: masterKey, maxTokenLifetime: max(configuration.accessTokenLifetime, 86400), logger: logger)
        let httpClient = HTTPClientMetadataFetcher.makeClient()
        let authorizationServer = stores.authorizationServer(
            issuer: baseURL, accessTokenLifetime: configuration.accessTokenLifetime, registration: configuration.clientRegistration, keys: keys,
            revocations: revocations,
            metadataFetcher: HTTPClientMetadataFetcher(client: httpClient, allowPrivateHosts: configuration.allowPrivateClientMetadata), logger: logger)
        let sessions = WebSessions(database: stores.database, users: stores.users, masterKey: masterKey, clock: clock)
        let throttle = LoginThrottle(database: stores.database, clock: clock)
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
            imageBaseURL: baseURL + "/images/", iconBaseURL: baseURL + "/icons/", applicationQuota: configuration.applicationQuota,
            pageSize: configuration.toolsPageSize)
        let limiter = RateLimiter(limits: configuration.rateLimits, database: stores.database, clock: clock, logger: logger)
        try await limiter.restore()
        var endpointConfiguration = Self.endpointConfiguration(
            configuration, baseURL: baseURL, catalogs: stores.catalogs, apps: stores.apps, audit: audit, limiter: limiter)
        endpointConfiguration.resources = tools.resources
        endpointConfiguration.views = views
        let authenticator = CredentialAuthenticator(keys: stores.apiKeys, users: stores.users, authorizationServer: authorizationServer, sessions: sessions)
        if let sqlbotPort = configuration.sqlbotPort {
            // SQLBot's surface on its own port: its tools only, callers without credentials
            // allowed in (mcp_start signs them in), the same limits.
            let sqlbotBaseURL = configuration.publicURL == nil ? configuration.baseURL(port: sqlbotPort) : baseURL
            let accounts = Self.sqlbotAccounts(stores: stores, masterKey: masterKey, throttle: throttle, authenticator: authenticator, limiter: limiter)
            let service = SQLBotService(asker: asker, accounts: accounts, imageBaseURL: sqlbotBaseURL + "/images/")
            var sqlbotConfiguration = endpointConfiguration
            sqlbotConfiguration.allowedOrigins = configuration.allowedOrigins(port: sqlbotPort)
            // SQLBot's listener serves its own tools only (its calls are audited like the main endpoint's).
            sqlbotConfiguration.resources = nil
            sqlbotConfiguration.views = []
            sqlbotConfiguration.tasks = nil
            sqlbotConfiguration.identity.icons = [.svg(sqlbotBaseURL + "/icons/portico.svg")]
            sqlbotConfiguration.instructions = { _ in SQLBotPackage.instructions }
            let registry = ToolRegistry(
                packages: [SQLBotPackage(service: service).package.withIcon(baseURL: sqlbotBaseURL + "/icons/")], defaultPackages: [ToolInventory.sqlbot])
            let sqlbotEndpoint = stores.endpoint(configuration: sqlbotConfiguration, registry: registry, signer: signer, revocations: revocations)
            sqlbot = (service, sqlbotEndpoint, sqlbotBaseURL)
        } else {
            sqlbot = nil
        }
        self.configuration = configuration
        self.stores = stores
        self.masterKey = masterKey
        self.demo = demo
        self.baseURL = baseURL
        self.revocations = revocations
        self.keys = keys
        self.httpClient = httpClient
        self.authorizationServer = authorizationServer
        self.sessions = sessions
        self.throttle = throttle
        self.apps = AppDirectory(load: { try await stores.apps.offeredPackages() })
        self.images = images
        self.asker = asker
        self.audit = audit
        self.workflows = workflows
        self.limiter = limiter
        self.endpoint = stores.endpoint(configuration: endpointConfiguration, registry: tools.registry, signer: signer, revocations: revocations)
        self.authenticator = authenticator
        self.logger = logger
    }

    /// The main endpoint's settings: who it says it is, its limits, its audit and admission.
    static func endpointConfiguration(
        _ configuration: InstanceConfiguration, baseURL: String, catalogs: CatalogStore, apps: AppRegistry, audit: AuditTrail?, limiter: RateLimiter
    ) -> MCPEndpoint.Configuration {
        var endpoint = MCPEndpoint.Configuration(
            identity: ServerIdentity(
                name: "portico", title: "Portico", version: porticoVersion,
                description: "An organisation's data for AI agents: records, schema, roles, users and questions in plain language",
                icons: [.svg(baseURL + "/icons/portico.svg")]),
            publicDiscovery: configuration.publicDiscovery,
            allowedOrigins: configuration.allowedOrigins(port: configuration.port),
            instructions: { app in await DataPackage.instructions(app: app, catalogs: catalogs) })
        endpoint.demoMode = configuration.demoMode
        // A database that cannot say asks: a question too many is safer than a destroy unasked.
        endpoint.confirmsDestroy = { app in (try? await apps.confirmsDestroy(app)) ?? true }
        endpoint.tasks = TaskRecords(databases: apps.databases)
        endpoint.requestTimeout = configuration.requestTimeout
        endpoint.maxBatchEntries = configuration.maxBatchMessages
        endpoint.maxBatchResponseBytes = configuration.maxBatchResponseBytes
        endpoint.maxStreamsPerCredential = configuration.maxStreamsPerCredential
        if let audit { endpoint.audit = { record in audit.record(record) } }
        endpoint.admission = { principal, app, toolCall in limiter.admit(principal, app: app, toolCall: toolCall) }
        return endpoint
    }

    /// How SQLBot's `mcp_start` and `/api/v1/login` sign a user in (a password, throttled as
    /// every sign-in is, for an eight-hour token), and how its token is checked.
    static func sqlbotAccounts(
        stores: PorticoStores, masterKey: MasterKey, throttle: LoginThrottle, authenticator: CredentialAuthenticator, limiter: RateLimiter
    ) -> SQLBotService.Accounts {
        let tokens = WebSessions(database: stores.database, users: stores.users, masterKey: masterKey, lifetime: 8 * 3600, clock: stores.clock)
        let users = stores.users
        let passwords = PasswordSignIn(users: users, throttle: throttle)
        return SQLBotService.Accounts(
            login: { username, password, address in
                switch try await passwords.check(username: username, password: password, address: address) {
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
    }

    /// The instance's background work, in the order a service group starts it, with the
    /// listeners placed where they belong: the audit trail's writer first (it stops last, so calls
    /// that end during shutdown are written), then the revocation list's sync, the main listener
    /// and its endpoint's deadlines (after the listener, so it hears the shutdown first), the
    /// allocator's trim, the rate limits' sync, the workflow runner, and SQLBot's listener with its
    /// endpoint's deadlines.
    public func services(listener: any Service, sqlbotListener: (any Service)?) -> [any Service] {
        var services: [any Service] = []
        if let audit { services.append(AuditService(trail: audit, apps: stores.apps, clock: configuration.clock, logger: logger)) }
        services.append(RevocationService(list: revocations, keys: keys, logger: logger))
        services.append(listener)
        services.append(EndpointService(endpoint: endpoint, grace: configuration.shutdownGrace))
        services.append(MemoryService())
        services.append(RateLimitService(limiter: limiter))
        services.append(WorkflowRunService(engine: workflows.engine))
        if let sqlbot, let sqlbotListener {
            services.append(sqlbotListener)
            services.append(EndpointService(endpoint: sqlbot.endpoint, grace: configuration.shutdownGrace))
        }
        return services
    }

    /// Ends the event streams and closes the HTTP client, the datasources and the databases.
    public func close() async {
        endpoint.closeStreams()
        sqlbot?.endpoint.closeStreams()
        try? await httpClient.shutdown()
        await asker.datasources.close()
        await stores.close()
    }
}

import Foundation
public import PorticoAsk
public import PorticoAuth
public import PorticoBase
import PorticoData
public import PorticoStore

/// How `portico serve` runs: where it listens, where its data lives, what it calls itself, and
/// its limits. The defaults here are the only ones: the command line shows and uses them.
public struct InstanceConfiguration: Sendable {
    public var host = "127.0.0.1"
    public var port = 8080
    /// A second port serving SQLBot's surface (`/mcp` with package `sqlbot`, its JSON routes, images).
    public var sqlbotPort: Int?
    public var dataDirectory = "./portico-data"
    /// PostgreSQL (`postgres://user:password@host/database`) instead of the embedded database,
    /// for replicas that share it.
    public var databaseURL: String?
    /// Connections to PostgreSQL this process opens at most.
    public var databasePoolSize = 12
    /// The address clients use, e.g. `https://portico.example.com`; by default `http://host:port`.
    public var publicURL: String?
    public var demo = false
    /// The time tokens, codes, sessions and keys expire by (tests move it).
    public var clock = WallClock.system
    public var publicDiscovery = false
    /// Extra origins browsers may call the MCP endpoint from.
    public var allowedOrigins: [String] = []
    /// Largest request body accepted, in bytes.
    public var maxBodyBytes = 4 * 1024 * 1024
    /// Tools per `tools/list` page.
    public var toolsPageSize = 50
    /// Days the audit trail keeps each tool call; 0 records none.
    public var auditRetentionDays = 90
    /// Refuse every tool that changes something.
    public var demoMode = false
    /// Registered OAuth applications per app; -1 for no limit.
    public var applicationQuota = 50
    /// Where spans go (an OTLP/HTTP collector's base URL, or its `/v1/traces`); tracing is off without it.
    public var otelEndpoint: String?
    /// Requests a minute per credential and per app, and tool calls a day per credential; none by default.
    public var rateLimits = RateLimiter.Limits()
    /// Access-token lifetime in seconds.
    public var accessTokenLifetime: Int64 = 3600
    /// Who may register OAuth clients dynamically, and how many (`--client-registration`).
    public var clientRegistration = AuthorizationServer.Registration()
    /// Allow client ID metadata documents on private or loopback hosts (development only).
    public var allowPrivateClientMetadata = false
    /// Whether `ask` shows the built-in engine's less sure readings (below its sure band) to run,
    /// rather than running them at once.
    public var askSureOnly = AskService.sureOnlyByDefault
    /// Hosts the workflows' request node may call (`*.example.com` for subdomains); none: the node is off.
    public var workflowAllowHosts: [String] = []
    /// Let the request node reach private and loopback addresses (development and tests only).
    public var allowPrivateWorkflowHosts = false
    /// Workflow executions this replica runs at once; 0 leaves them to the other replicas.
    public var workflowWorkers = 4
    /// The master key in base64 (`PORTICO_MASTER_KEY`); otherwise `master.key` in the data directory.
    public var masterKey: String?
    /// How long the tool calls of one request may run before they are cancelled.
    public var requestTimeout: Duration = .seconds(30)
    /// JSON-RPC messages per batch.
    public var maxBatchMessages = 100
    /// Bytes of all the responses of one batch.
    public var maxBatchResponseBytes = 4 * 1024 * 1024
    /// Open event streams per credential.
    public var maxStreamsPerCredential = 8
    /// How long tool calls still running at shutdown may go on before they are cancelled.
    public var shutdownGrace: Duration = .seconds(3)
    /// How long a read may run on an event loop before it moves to a reader thread; zero sends
    /// every read to the reader threads.
    public var inlineReadBudget: Duration = .milliseconds(1)
    /// Connection caps and timeouts.
    public var connections = ConnectionLimits()
    /// Proxies (addresses or CIDR ranges) whose `X-Forwarded-For` names the client; from anyone
    /// else the header is ignored.
    public var trustedProxies: [String] = []
    /// What one query on a datasource may take: time, memory (SQLite) and rows.
    public var queryLimits = DatasourceService.Limits()

    public init() {}

    /// The master key: `masterKey` (from `PORTICO_MASTER_KEY`) when set, else `master.key` in the
    /// data directory, created on first use. The one place it is loaded, for the server and every
    /// command.
    public func loadMasterKey() throws -> MasterKey {
        try MasterKey.load(environment: masterKey, dataDirectory: dataDirectory)
    }

    /// The public base URL without a trailing slash, once the real port is known.
    public func baseURL(port actualPort: Int) -> String {
        if var url = publicURL {
            while url.hasSuffix("/") { url.removeLast() }
            return url
        }
        let shownHost = host == "0.0.0.0" || host == "::" ? "127.0.0.1" : (host.contains(":") ? "[\(host)]" : host)
        return "http://\(shownHost):\(actualPort)"
    }

    /// Origins allowed to call the MCP endpoint: the public URL's, the loopback spellings of a
    /// loopback address, and any configured extras.
    public func allowedOrigins(port actualPort: Int) -> Set<String> {
        var origins = Set(allowedOrigins.map { $0.lowercased().trimmingCharacters(in: ["/"]) })
        let base = baseURL(port: actualPort)
        if let url = URL(string: base), let scheme = url.scheme, let host = url.host {
            let defaultPort = scheme == "https" ? 443 : 80
            let portPart = url.port.map { $0 == defaultPort ? "" : ":\($0)" } ?? ""
            origins.insert("\(scheme)://\(host)\(portPart)".lowercased())
            if RedirectURI.isLoopback(host) {
                for loopback in ["127.0.0.1", "localhost", "[::1]"] { origins.insert("\(scheme)://\(loopback)\(portPart)") }
            }
        }
        return origins
    }
}

/// Limits on connections, so idle, slow or too many connections cannot starve the server.
public struct ConnectionLimits: Sendable {
    /// Open connections; past it a new connection is closed at once.
    public var maxConnections = 4096
    /// From connecting (or finishing a response) to a complete request head.
    public var headerTimeout: Duration = .seconds(10)
    /// From a request's head to its last body byte.
    public var bodyTimeout: Duration = .seconds(30)
    /// How long a keep-alive connection may sit idle between requests.
    public var idleTimeout: Duration = .seconds(30)

    public init() {}
}

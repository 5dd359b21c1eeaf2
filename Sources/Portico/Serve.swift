import ArgumentParser
import Foundation
import PorticoAsk
import PorticoAuth
import PorticoBase
import PorticoData
import PorticoInstance
import PorticoServer
import PorticoStore

/// The defaults every option of `serve` shows and falls back to: `InstanceConfiguration`'s own.
private let defaults = InstanceConfiguration()

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the Portico server.",
        discussion: """
            Serves MCP at <public-url>/api/mcp (app main) and /api/__app/<app>/mcp, plus /healthz, /readyz and /metrics.
            Every option also reads from the environment variable named after it, e.g. --max-connections from PORTICO_MAX_CONNECTIONS.
            Stops gracefully on SIGINT or SIGTERM: requests in progress finish first; tool calls still running after
            --shutdown-grace seconds are cancelled.
            """)

    @OptionGroup var common: CommonOptions

    @Option(help: "Address to listen on (default \(defaults.host), loopback only).")
    var host: String?

    @Option(help: "Port to listen on (default \(defaults.port)).")
    var port: Int?

    @Option(name: .customLong("sqlbot-port"), help: "Also serve SQLBot's MCP tools and JSON routes on this port, at /mcp (e.g. 8001).")
    var sqlbotPort: Int?

    @Option(name: .customLong("public-url"), help: "The URL clients reach Portico at, e.g. https://portico.example.com (default http://<host>:<port>).")
    var publicURL: String?

    @Flag(help: "Import the Chinook sample into app main and create an admin user and API key on first start.")
    var demo = false

    @Flag(name: .customLong("public-discovery"), help: "Answer initialize and tools/list without credentials; tool calls still need them.")
    var publicDiscovery = false

    @Option(
        name: .customLong("allowed-origin"),
        help: "An extra browser origin allowed to call the MCP endpoint; repeatable (env PORTICO_ALLOWED_ORIGINS, comma-separated).")
    var allowedOrigins: [String] = []

    @Option(name: .customLong("max-body-bytes"), help: "Largest request body accepted (default \(defaults.maxBodyBytes)).")
    var maxBodyBytes: Int?

    @Option(name: .customLong("tools-page-size"), help: "Tools per tools/list page (default \(defaults.toolsPageSize)).")
    var toolsPageSize: Int?

    @Option(
        name: .customLong("audit-retention-days"),
        help: "Days the audit trail keeps each tool call (default \(defaults.auditRetentionDays)); 0 keeps no audit trail.")
    var auditRetentionDays: Int?

    @Flag(name: .customLong("demo-mode"), help: "Refuse every tool that changes something, as Casdoor's demo mode.")
    var demoMode = false

    @Option(name: .customLong("application-quota"), help: "OAuth applications each app may register; -1 for no limit (default \(defaults.applicationQuota)).")
    var applicationQuota: Int?

    @Option(
        name: .customLong("otel-endpoint"),
        help: "Export OpenTelemetry traces over OTLP/HTTP to this collector (its base URL, e.g. http://127.0.0.1:4318). Off by default.")
    var otelEndpoint: String?

    @Option(
        name: .customLong("rate-limit"),
        help:
            "Requests a minute each credential (API key, OAuth client, signed-in user) may make, as N/min; an API key made with --rate has its own. None by default."
    )
    var rateLimit: String?

    @Option(name: .customLong("app-rate-limit"), help: "Requests a minute each app's endpoint takes from all its callers together, as N/min. None by default.")
    var appRateLimit: String?

    @Option(name: .customLong("tool-call-quota"), help: "Tool calls a UTC day each credential may make, as N/day. None by default.")
    var toolCallQuota: String?

    @Option(
        name: .customLong("app-tool-call-quota"),
        help: "Tool calls a UTC day each app's endpoint takes from all its callers together, as N/day. None by default.")
    var appToolCallQuota: String?

    @Option(name: .customLong("access-token-ttl"), help: "Access-token lifetime in seconds (default \(defaults.accessTokenLifetime)).")
    var accessTokenTTL: Int?

    @Flag(
        name: .customLong("ask-sure-only"), inversion: .prefixedNo,
        help:
            "ask runs the built-in engine's readings at once only when it is sure of them (the band right 97% of the time or more); others are shown to run with one choice (default on)."
    )
    var askSureOnly: Bool?

    @Option(
        name: .customLong("client-registration"),
        help:
            "Dynamic client registration (RFC 7591): open (default), token (only with the initial access token in PORTICO_REGISTRATION_TOKEN, sent as a Bearer token) or off."
    )
    var clientRegistration: String?

    @Option(
        name: .customLong("registrations-per-address"),
        help: "Clients one address may register an hour (default \(defaults.clientRegistration.perAddressPerHour)).")
    var registrationsPerAddress: Int?

    @Option(
        name: .customLong("max-unused-clients"),
        help:
            "Registered clients no user has authorised yet kept at once (default \(defaults.clientRegistration.maxUnusedClients)); past it the oldest make room, and each expires a day after it was registered."
    )
    var maxUnusedClients: Int?

    @Flag(name: .customLong("allow-private-client-metadata"), help: "Fetch client ID metadata documents from private and loopback hosts too; for development.")
    var allowPrivateClientMetadata = false

    @Option(
        name: .customLong("workflow-allow-host"),
        help:
            "A host the workflows' request node may call (repeatable; *.example.com allows its subdomains; env PORTICO_WORKFLOW_ALLOW_HOSTS, comma-separated). The node is off without one."
    )
    var workflowAllowHosts: [String] = []

    @Option(
        name: .customLong("workflow-workers"),
        help:
            "Workflow executions this replica runs at once (default \(defaults.workflowWorkers)); 0 runs none here, leaving them to replicas that do (this one still queues them and starts schedules)."
    )
    var workflowWorkers: Int?

    @Flag(
        name: .customLong("allow-private-workflow-hosts"),
        help: "Let the workflows' request node reach loopback and private addresses of allowed hosts too; for development and tests.")
    var allowPrivateWorkflowHosts = false

    @Option(
        name: .customLong("request-timeout"),
        help: "Seconds the tool calls of one request may run before they are stopped (default \(seconds(defaults.requestTimeout))).")
    var requestTimeout: Int?

    @Option(name: .customLong("max-batch-messages"), help: "JSON-RPC messages one batch may carry (default \(defaults.maxBatchMessages)).")
    var maxBatchMessages: Int?

    @Option(
        name: .customLong("max-batch-response-bytes"),
        help: "Bytes of all the responses of one batch; later messages are not run (default \(defaults.maxBatchResponseBytes)).")
    var maxBatchResponseBytes: Int?

    @Option(name: .customLong("max-streams"), help: "Open event streams per credential (default \(defaults.maxStreamsPerCredential)).")
    var maxStreams: Int?

    @Option(
        name: .customLong("max-connections"),
        help: "Open connections; more are closed at once (default \(defaults.connections.maxConnections), and below the open-file limit).")
    var maxConnections: Int?

    @Option(
        name: .customLong("header-timeout"),
        help: "Seconds a connection has to send a complete request head (default \(seconds(defaults.connections.headerTimeout))).")
    var headerTimeout: Int?

    @Option(name: .customLong("body-timeout"), help: "Seconds a request has to send its body (default \(seconds(defaults.connections.bodyTimeout))).")
    var bodyTimeout: Int?

    @Option(name: .customLong("idle-timeout"), help: "Seconds an idle keep-alive connection stays open (default \(seconds(defaults.connections.idleTimeout))).")
    var idleTimeout: Int?

    @Option(name: .customLong("shutdown-grace"), help: "Seconds tool calls may run on after a shutdown signal (default \(seconds(defaults.shutdownGrace))).")
    var shutdownGrace: Int?

    @Option(
        name: .customLong("database-pool-size"),
        help: "Connections to PostgreSQL this process opens at most, with --database-url (default \(defaults.databasePoolSize)).")
    var databasePoolSize: Int?

    @Option(
        name: .customLong("inline-read-budget"),
        help:
            "Milliseconds a database read may run on the thread that serves the request before it moves to a reader thread; 0 sends every read there (default \(defaults.inlineReadBudget.components.seconds * 1000 + defaults.inlineReadBudget.components.attoseconds / 1_000_000_000_000_000))."
    )
    var inlineReadBudget: Int?

    @Option(
        name: .customLong("trusted-proxy"),
        help:
            "A load balancer or proxy (address or CIDR range) whose X-Forwarded-For names the client, for sign-in throttling and IP allow-lists; repeatable (env PORTICO_TRUSTED_PROXIES, comma-separated)."
    )
    var trustedProxies: [String] = []

    @Option(
        name: .customLong("query-timeout"),
        help: "Seconds one query on a datasource may run before it is stopped (default \(seconds(defaults.queryLimits.timeout))).")
    var queryTimeout: Int?

    @Option(
        name: .customLong("query-memory-mb"),
        help: "Mebibytes of memory one query on an SQLite datasource may take before it is stopped (default \(defaults.queryLimits.maxMemory >> 20)).")
    var queryMemory: Int?

    func run() async throws {
        let logger = try common.makeLogger()
        var c = common.instance
        c.host = Setting.string(host, "host") ?? c.host
        c.port = try Setting.int(port, "port", in: 0...65535) ?? c.port
        c.sqlbotPort = try Setting.int(sqlbotPort, "sqlbot-port", in: 0...65535)
        c.databasePoolSize = try Setting.int(databasePoolSize, "database-pool-size", in: 2...1000) ?? c.databasePoolSize
        c.publicURL = Setting.string(publicURL, "public-url")
        c.demo = Setting.flag(demo, "demo")
        c.publicDiscovery = Setting.flag(publicDiscovery, "public-discovery")
        // Tests move a running server's time through a file; nothing else should set it.
        if let path = Environment.string("PORTICO_TEST_CLOCK_FILE") { c.clock = WallClock.file(path) }
        c.allowedOrigins = allowedOrigins + (Environment.string("PORTICO_ALLOWED_ORIGINS")?.split(separator: ",").map(String.init) ?? [])
        c.trustedProxies =
            trustedProxies + (Environment.string("PORTICO_TRUSTED_PROXIES")?.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } ?? [])
        if let bad = IPAllowlist.invalidEntry(in: c.trustedProxies) {
            throw ValidationError("--trusted-proxy takes an IP address or a CIDR range such as 10.0.0.0/24; got '\(bad)'")
        }
        c.maxBodyBytes = try Setting.int(maxBodyBytes, "max-body-bytes", in: 1024...(1 << 30)) ?? c.maxBodyBytes
        c.toolsPageSize = try Setting.int(toolsPageSize, "tools-page-size", in: 1...1000) ?? c.toolsPageSize
        c.auditRetentionDays = try Setting.int(auditRetentionDays, "audit-retention-days", in: 0...36500) ?? c.auditRetentionDays
        c.demoMode = Setting.flag(demoMode, "demo-mode")
        c.applicationQuota = try Setting.int(applicationQuota, "application-quota", in: -1...1_000_000) ?? c.applicationQuota
        c.otelEndpoint = Setting.string(otelEndpoint, "otel-endpoint")
        if let url = c.otelEndpoint {
            guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme ?? ""), parsed.host != nil else {
                throw ValidationError("--otel-endpoint must be an http(s) URL such as http://127.0.0.1:4318; got '\(url)'")
            }
        }
        c.rateLimits = RateLimiter.Limits(
            perCredentialPerMinute: try Setting.rate(rateLimit, "rate-limit", per: "min"),
            perAppPerMinute: try Setting.rate(appRateLimit, "app-rate-limit", per: "min"),
            toolCallsPerDay: try Setting.rate(toolCallQuota, "tool-call-quota", per: "day"),
            appToolCallsPerDay: try Setting.rate(appToolCallQuota, "app-tool-call-quota", per: "day"))
        c.accessTokenLifetime = Int64(try Setting.int(accessTokenTTL, "access-token-ttl", in: 1...86400) ?? Int(c.accessTokenLifetime))
        c.allowPrivateClientMetadata = Setting.flag(allowPrivateClientMetadata, "allow-private-client-metadata")
        if let mode = Setting.string(clientRegistration, "client-registration") {
            guard let parsed = AuthorizationServer.Registration.Mode(rawValue: mode) else {
                throw ValidationError("--client-registration is open, token or off; got '\(mode)'")
            }
            c.clientRegistration.mode = parsed
        }
        if c.clientRegistration.mode == .token {
            guard let token = Environment.string("PORTICO_REGISTRATION_TOKEN"), token.count >= 16 else {
                throw ValidationError(
                    "--client-registration token needs the initial access token in PORTICO_REGISTRATION_TOKEN, at least 16 characters (e.g. openssl rand -hex 24)"
                )
            }
            c.clientRegistration.tokenDigest = Secrets.sha256Hex(token)
        }
        c.clientRegistration.perAddressPerHour =
            try Setting.int(registrationsPerAddress, "registrations-per-address", in: 1...100_000) ?? c.clientRegistration.perAddressPerHour
        c.clientRegistration.maxUnusedClients =
            try Setting.int(maxUnusedClients, "max-unused-clients", in: 1...10_000_000) ?? c.clientRegistration.maxUnusedClients
        c.askSureOnly = try askSureOnly ?? CommonOptions.askSureOnly()
        c.workflowAllowHosts =
            workflowAllowHosts
            + (Environment.string("PORTICO_WORKFLOW_ALLOW_HOSTS")?.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } ?? [])
        if let bad = c.workflowAllowHosts.first(where: { $0.isEmpty || $0.contains("/") || $0.contains(":") && !IPAllowlist.isAddress($0) }) {
            throw ValidationError("--workflow-allow-host takes a host name such as hooks.example.com or *.example.com; got '\(bad)'")
        }
        c.allowPrivateWorkflowHosts = Setting.flag(allowPrivateWorkflowHosts, "allow-private-workflow-hosts")
        c.workflowWorkers = try Setting.int(workflowWorkers, "workflow-workers", in: 0...256) ?? c.workflowWorkers
        c.requestTimeout = try Setting.seconds(requestTimeout, "request-timeout", in: 1...3600) ?? c.requestTimeout
        c.maxBatchMessages = try Setting.int(maxBatchMessages, "max-batch-messages", in: 1...10_000) ?? c.maxBatchMessages
        c.maxBatchResponseBytes = try Setting.int(maxBatchResponseBytes, "max-batch-response-bytes", in: 1024...(1 << 30)) ?? c.maxBatchResponseBytes
        c.maxStreamsPerCredential = try Setting.int(maxStreams, "max-streams", in: 1...10_000) ?? c.maxStreamsPerCredential
        c.connections.maxConnections = try Setting.int(maxConnections, "max-connections", in: 1...1_000_000) ?? c.connections.maxConnections
        c.connections.headerTimeout = try Setting.seconds(headerTimeout, "header-timeout", in: 1...3600) ?? c.connections.headerTimeout
        c.connections.bodyTimeout = try Setting.seconds(bodyTimeout, "body-timeout", in: 1...3600) ?? c.connections.bodyTimeout
        c.connections.idleTimeout = try Setting.seconds(idleTimeout, "idle-timeout", in: 1...86400) ?? c.connections.idleTimeout
        c.shutdownGrace = try Setting.seconds(shutdownGrace, "shutdown-grace", in: 0...600) ?? c.shutdownGrace
        c.queryLimits.timeout = try Setting.seconds(queryTimeout, "query-timeout", in: 1...3600) ?? c.queryLimits.timeout
        c.queryLimits.maxMemory = Int64(try Setting.int(queryMemory, "query-memory-mb", in: 4...65536) ?? Int(c.queryLimits.maxMemory >> 20)) << 20
        c.inlineReadBudget = try Setting.int(inlineReadBudget, "inline-read-budget", in: 0...1000).map { .milliseconds($0) } ?? c.inlineReadBudget
        if let url = c.publicURL {
            guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme ?? ""), parsed.host != nil else {
                throw ValidationError("--public-url must be an http(s) URL such as https://portico.example.com; got '\(url)'")
            }
        }
        let dataDirectory = c.dataDirectory
        try await buildApplication(c, logger: logger) { banner in
            // One write, so the banner arrives whole even when stdout is a pipe.
            FileHandle.standardOutput.write(Data((Self.describe(banner, dataDir: dataDirectory) + "\n").utf8))
        }.run()
    }

    static func describe(_ banner: ServerBanner, dataDir: String) -> String {
        var lines = ["Portico \(porticoVersion) is listening on \(banner.baseURL)", "MCP endpoint: \(banner.mcpURL)"]
        if let sqlbot = banner.sqlbotURL { lines.insert("SQLBot endpoint: \(sqlbot)", at: 1) }
        guard let demo = banner.demo else { return lines.joined(separator: "\n") }
        let key = demo.apiKey ?? "<API key>"
        lines.append("")
        lines.append("Demo data: the Chinook sample, as collections of app main (data dir \(dataDir)).")
        if let password = demo.adminPassword {
            lines.append("Admin user:  admin / \(password)   (shown once; change it with `portico user set-password admin`)")
        } else {
            lines.append(
                "Admin user:  admin (its password was shown at the first start; reset it with `portico user set-password admin --data-dir \(dataDir)`)")
        }
        if let apiKey = demo.apiKey {
            lines.append("API key:     \(apiKey)   (shown once)")
        } else {
            lines.append("API key:     create one with `portico apikey create --user admin --data-dir \(dataDir)`")
        }
        lines.append("")
        lines.append("Claude Code:")
        lines.append("  claude mcp add --transport http portico \(banner.mcpURL) --header \"Authorization: Bearer \(key)\"")
        lines.append("Codex:")
        lines.append("  export PORTICO_API_KEY=\(key)")
        lines.append("  codex mcp add portico --url \(banner.mcpURL) --bearer-token-env-var PORTICO_API_KEY")
        lines.append("OpenCode (opencode.json):")
        lines.append(
            """
              {"$schema": "https://opencode.ai/config.json", "mcp": {"portico": {"type": "remote", "url": "\(banner.mcpURL)", "enabled": true, "headers": {"Authorization": "Bearer \(key)"}}}}
            """)
        return lines.joined(separator: "\n")
    }
}

private func seconds(_ duration: Duration) -> Int64 { duration.components.seconds }

/// An option's value: the flag, else the environment variable named after it
/// (`--max-connections` → `PORTICO_MAX_CONNECTIONS`), else nil for the default.
enum Setting {
    static func variable(_ option: String) -> String {
        "PORTICO_" + option.uppercased().replacingOccurrences(of: "-", with: "_")
    }

    static func string(_ flag: String?, _ option: String) -> String? {
        flag ?? Environment.string(variable(option))
    }

    static func flag(_ flag: Bool, _ option: String) -> Bool {
        flag || Environment.bool(variable(option))
    }

    static func int(_ flag: Int?, _ option: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let value = try flag ?? Environment.int(variable(option)) else { return nil }
        guard range.contains(value) else {
            throw ValidationError("--\(option) (or \(variable(option))) must be between \(range.lowerBound) and \(range.upperBound); got \(value)")
        }
        return value
    }

    static func seconds(_ flag: Int?, _ option: String, in range: ClosedRange<Int>) throws -> Duration? {
        try int(flag, option, in: range).map { .seconds($0) }
    }

    /// A rate such as `60/min` or `5000/day`, from the flag or the environment.
    static func rate(_ flag: String?, _ option: String, per unit: String) throws -> Int? {
        guard let text = string(flag, option) else { return nil }
        do {
            return try RateLimiter.parseRate(text, per: unit)
        } catch {
            throw ValidationError("--\(option) (or \(variable(option))): \(error.message)")
        }
    }
}

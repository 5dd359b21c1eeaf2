import ArgumentParser
import Foundation
import PorticoServer

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the Portico server.",
        discussion: """
            Serves MCP at <public-url>/api/mcp (app main) and /api/__app/<app>/mcp, plus /healthz and /readyz.
            Stops gracefully on SIGINT or SIGTERM: requests in progress finish first.
            """)

    @OptionGroup var common: CommonOptions

    @Option(help: "Address to listen on (env PORTICO_HOST; default 127.0.0.1, loopback only).")
    var host: String?

    @Option(help: "Port to listen on (env PORTICO_PORT; default 8080).")
    var port: Int?

    @Option(name: .customLong("public-url"), help: "The URL clients reach Portico at, e.g. https://portico.example.com (env PORTICO_PUBLIC_URL; default http://<host>:<port>).")
    var publicURL: String?

    @Flag(help: "Import the Chinook sample into app main and create an admin user and API key on first start (env PORTICO_DEMO).")
    var demo = false

    @Flag(name: .customLong("public-discovery"), help: "Answer initialize and tools/list without credentials; tool calls still need them (env PORTICO_PUBLIC_DISCOVERY).")
    var publicDiscovery = false

    @Option(name: .customLong("allowed-origin"), help: "An extra browser origin allowed to call the MCP endpoint; repeatable (env PORTICO_ALLOWED_ORIGINS, comma-separated).")
    var allowedOrigins: [String] = []

    @Option(name: .customLong("max-body-bytes"), help: "Largest request body accepted (env PORTICO_MAX_BODY_BYTES; default 4194304).")
    var maxBodyBytes: Int?

    @Option(name: .customLong("tools-page-size"), help: "Tools per tools/list page (env PORTICO_TOOLS_PAGE_SIZE; default 50).")
    var toolsPageSize: Int?

    @Flag(name: .customLong("demo-mode"), help: "Refuse every tool that changes something, as Casdoor's demo mode (env PORTICO_DEMO_MODE).")
    var demoMode = false

    @Option(name: .customLong("application-quota"), help: "OAuth applications each app may register; -1 for no limit (env PORTICO_APPLICATION_QUOTA; default 50).")
    var applicationQuota: Int?

    @Option(name: .customLong("access-token-ttl"), help: "Access-token lifetime in seconds (env PORTICO_ACCESS_TOKEN_TTL; default 3600).")
    var accessTokenTTL: Int?

    @Flag(name: .customLong("allow-private-client-metadata"), help: "Fetch client ID metadata documents from private and loopback hosts too; for development (env PORTICO_ALLOW_PRIVATE_CLIENT_METADATA).")
    var allowPrivateClientMetadata = false

    func run() async throws {
        let logger = try common.makeLogger()
        var configuration = ServerConfiguration()
        configuration.host = host ?? Environment.string("PORTICO_HOST") ?? "127.0.0.1"
        configuration.port = try port ?? Environment.int("PORTICO_PORT") ?? 8080
        configuration.dataDirectory = common.resolvedDataDir
        configuration.publicURL = publicURL ?? Environment.string("PORTICO_PUBLIC_URL")
        configuration.demo = demo || Environment.bool("PORTICO_DEMO")
        configuration.publicDiscovery = publicDiscovery || Environment.bool("PORTICO_PUBLIC_DISCOVERY")
        configuration.allowedOrigins = allowedOrigins + (Environment.string("PORTICO_ALLOWED_ORIGINS")?.split(separator: ",").map(String.init) ?? [])
        configuration.maxBodyBytes = try maxBodyBytes ?? Environment.int("PORTICO_MAX_BODY_BYTES") ?? configuration.maxBodyBytes
        configuration.toolsPageSize = try toolsPageSize ?? Environment.int("PORTICO_TOOLS_PAGE_SIZE") ?? configuration.toolsPageSize
        configuration.demoMode = demoMode || Environment.bool("PORTICO_DEMO_MODE")
        configuration.applicationQuota = try applicationQuota ?? Environment.int("PORTICO_APPLICATION_QUOTA") ?? configuration.applicationQuota
        configuration.accessTokenLifetime = Int64(try accessTokenTTL ?? Environment.int("PORTICO_ACCESS_TOKEN_TTL") ?? 3600)
        configuration.allowPrivateClientMetadata = allowPrivateClientMetadata || Environment.bool("PORTICO_ALLOW_PRIVATE_CLIENT_METADATA")
        configuration.masterKey = Environment.string("PORTICO_MASTER_KEY")
        guard configuration.accessTokenLifetime >= 1, configuration.accessTokenLifetime <= 86400 else { throw ValidationError("--access-token-ttl must be between 1 and 86400 seconds") }
        guard (0...65535).contains(configuration.port) else { throw ValidationError("--port must be between 0 and 65535") }
        guard configuration.maxBodyBytes >= 1024 else { throw ValidationError("--max-body-bytes must be at least 1024") }
        if let url = configuration.publicURL {
            guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme ?? ""), parsed.host != nil else {
                throw ValidationError("--public-url must be an http(s) URL such as https://portico.example.com; got '\(url)'")
            }
        }
        let dataDirectory = configuration.dataDirectory
        try await PorticoServer.run(configuration, logger: logger) { banner in
            // One write, so the banner arrives whole even when stdout is a pipe.
            FileHandle.standardOutput.write(Data((Self.describe(banner, dataDir: dataDirectory) + "\n").utf8))
        }
    }

    static func describe(_ banner: ServerBanner, dataDir: String) -> String {
        var lines = ["Portico \(porticoVersion) is listening on \(banner.baseURL)", "MCP endpoint: \(banner.mcpURL)"]
        guard let demo = banner.demo else { return lines.joined(separator: "\n") }
        let key = demo.apiKey ?? "<API key>"
        lines.append("")
        lines.append("Demo data: the Chinook sample, as collections of app main (data dir \(dataDir)).")
        if let password = demo.adminPassword {
            lines.append("Admin user:  admin / \(password)   (shown once; change it with `portico user set-password admin`)")
        } else {
            lines.append("Admin user:  admin (its password was shown at the first start; reset it with `portico user set-password admin --data-dir \(dataDir)`)")
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
        lines.append("""
              {"$schema": "https://opencode.ai/config.json", "mcp": {"portico": {"type": "remote", "url": "\(banner.mcpURL)", "enabled": true, "headers": {"Authorization": "Bearer \(key)"}}}}
            """)
        return lines.joined(separator: "\n")
    }
}

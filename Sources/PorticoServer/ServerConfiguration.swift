import Foundation
import PorticoAuth

/// How `portico serve` runs: where it listens, where its data lives, what it calls itself.
public struct ServerConfiguration: Sendable {
    public var host: String
    public var port: Int
    public var dataDirectory: String
    /// The address clients use, e.g. `https://portico.example.com`; by default `http://host:port`.
    public var publicURL: String?
    public var demo: Bool
    public var publicDiscovery: Bool
    /// Extra origins browsers may call the MCP endpoint from.
    public var allowedOrigins: [String]
    /// Largest request body accepted, in bytes.
    public var maxBodyBytes: Int
    /// Tools per `tools/list` page.
    public var toolsPageSize: Int
    /// Refuse every tool that changes something.
    public var demoMode = false
    /// Registered OAuth applications per app; -1 for no limit.
    public var applicationQuota = 50
    /// Access-token lifetime in seconds.
    public var accessTokenLifetime: Int64 = 3600
    /// Allow client ID metadata documents on private or loopback hosts (development only).
    public var allowPrivateClientMetadata = false
    /// The master key in base64 (`PORTICO_MASTER_KEY`); otherwise `master.key` in the data directory.
    public var masterKey: String?
    /// How long tool calls still running at shutdown may go on before they are cancelled.
    public var shutdownGrace: Duration = .seconds(3)
    /// Connection caps and timeouts.
    public var connections = ConnectionLimits()

    public init(
        host: String = "127.0.0.1", port: Int = 8080, dataDirectory: String = "./portico-data", publicURL: String? = nil,
        demo: Bool = false, publicDiscovery: Bool = false, allowedOrigins: [String] = [], maxBodyBytes: Int = 4 * 1024 * 1024,
        toolsPageSize: Int = 50
    ) {
        self.host = host
        self.port = port
        self.dataDirectory = dataDirectory
        self.publicURL = publicURL
        self.demo = demo
        self.publicDiscovery = publicDiscovery
        self.allowedOrigins = allowedOrigins
        self.maxBodyBytes = maxBodyBytes
        self.toolsPageSize = toolsPageSize
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

public import HTTPTypes
public import Logging
public import PorticoAuth
import PorticoJSON

/// One HTTP request to an MCP endpoint, as the transport sees it (independent of the HTTP server).
public struct MCPHTTPRequest: Sendable {
    public var method: HTTPRequest.Method
    public var headers: HTTPFields
    public var body: [UInt8]
    /// The app whose endpoint was called (`main` for `/api/mcp`).
    public var app: String
    /// The `?packages=` query value, if any (the `x-mcp-packages` header wins).
    public var packagesQuery: String?
    /// The packages the app's administrator lets its endpoint offer; `nil` for all. A request's
    /// selection only narrows this.
    public var offeredPackages: [String]?
    /// The RFC 9728 metadata URL to name in `WWW-Authenticate` challenges.
    public var resourceMetadataURL: String
    public var auth: AuthOutcome
    public var logger: Logger

    public init(
        method: HTTPRequest.Method, headers: HTTPFields, body: [UInt8], app: String, packagesQuery: String?,
        resourceMetadataURL: String, auth: AuthOutcome, logger: Logger
    ) {
        self.method = method
        self.headers = headers
        self.body = body
        self.app = app
        self.packagesQuery = packagesQuery
        self.resourceMetadataURL = resourceMetadataURL
        self.auth = auth
        self.logger = logger
    }
}

/// What the transport answers: one JSON body, an empty response, or a stream of server-sent events.
public enum MCPHTTPResponse: Sendable {
    case json(status: HTTPResponse.Status, headers: HTTPFields, body: [UInt8])
    case empty(status: HTTPResponse.Status, headers: HTTPFields)
    case stream(headers: HTTPFields, events: EventStream)

    public var status: HTTPResponse.Status {
        switch self {
        case .json(let status, _, _), .empty(let status, _): status
        case .stream: .ok
        }
    }
}

/// Server-sent event frames for one response, and how to stop the work behind them when the
/// client goes away.
public struct EventStream: Sendable {
    public let frames: AsyncStream<[UInt8]>
    public let cancel: @Sendable () -> Void

    public init(frames: AsyncStream<[UInt8]>, cancel: @escaping @Sendable () -> Void) {
        self.frames = frames
        self.cancel = cancel
    }

    static func frame(_ message: JSON) -> [UInt8] {
        var writer = JSONWriter(capacity: 512)
        writer.appendLiteral("event: message\ndata: ")
        writer.write(message)
        writer.appendLiteral("\n\n")
        return writer.bytes
    }

    static func frame(_ response: RPCResponse) -> [UInt8] {
        var writer = JSONWriter(capacity: 1024)
        writer.appendLiteral("event: message\ndata: ")
        response.write(to: &writer)
        writer.appendLiteral("\n\n")
        return writer.bytes
    }

    static let keepAlive: [UInt8] = Array(": keep-alive\n\n".utf8)
}

extension HTTPField.Name {
    public static let mcpProtocolVersion = HTTPField.Name("MCP-Protocol-Version")!
    public static let mcpSessionID = HTTPField.Name("Mcp-Session-Id")!
    public static let mcpMethod = HTTPField.Name("Mcp-Method")!
    public static let mcpName = HTTPField.Name("Mcp-Name")!
    public static let mcpPackages = HTTPField.Name("x-mcp-packages")!
    public static let xAccelBuffering = HTTPField.Name("X-Accel-Buffering")!
}

extension HTTPFields {
    /// The value of the field `name`, as `self[name]` reads it, without that subscript's generic
    /// joining when the field appears once (the common case, and a measurable share of a call).
    public func value(_ name: HTTPField.Name) -> String? {
        var found: String?
        for field in self where field.name == name {
            guard found == nil else { return self[name] }  // repeated: joined as HTTPTypes joins it
            found = field.value
        }
        return found
    }

    /// How many times the field `name` appears.
    public func occurrences(of name: HTTPField.Name) -> Int {
        var count = 0
        for field in self where field.name == name { count += 1 }
        return count
    }
}

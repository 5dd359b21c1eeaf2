public import HTTPTypes
public import Logging
public import PorticoAuth
import PorticoJSON

/// One HTTP request to an MCP endpoint, as the transport sees it (independent of the HTTP server).
public struct MCPHTTPRequest: Sendable {
    public var method: HTTPRequest.Method
    public var headers: HTTPFields {
        didSet { known = KnownHeaders(headers) }
    }
    /// The fields the endpoint reads, found in one pass over `headers`.
    public private(set) var known: KnownHeaders
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
        known = KnownHeaders(headers)
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

/// The fields of a request the MCP endpoint reads, each found in one pass over the fields: a
/// lookup by name walks every field comparing names, and a call made some twenty of them. A field
/// that appears more than once reads as `HTTPFields` joins it, and is counted.
public struct KnownHeaders: Sendable {
    public private(set) var accept: String?
    public private(set) var contentType: String?
    public private(set) var contentLength: String?
    public private(set) var authorization: String?
    public private(set) var cookie: String?
    public private(set) var origin: String?
    public private(set) var userAgent: String?
    public private(set) var protocolVersion: String?
    public private(set) var method: String?
    public private(set) var name: String?
    public private(set) var sessionID: String?
    public private(set) var packages: String?
    /// How many times the fields that may appear only once appear.
    public private(set) var protocolVersionCount = 0
    public private(set) var methodCount = 0
    public private(set) var nameCount = 0
    public private(set) var sessionIDCount = 0

    public init(_ fields: HTTPFields) {
        for field in fields {
            let name = field.name
            // By the name's length first: most fields then need one comparison, or none.
            switch name.canonicalName.utf8.count {
            case 6:
                if name == .accept {
                    Self.note(field, in: fields, &accept)
                } else if name == .cookie {
                    Self.note(field, in: fields, &cookie)
                } else if name == .origin {
                    Self.note(field, in: fields, &origin)
                }
            case 8 where name == .mcpName:
                Self.note(field, in: fields, &self.name, count: &nameCount)
            case 10:
                if name == .mcpMethod {
                    Self.note(field, in: fields, &method, count: &methodCount)
                } else if name == .userAgent {
                    Self.note(field, in: fields, &userAgent)
                }
            case 12 where name == .contentType:
                Self.note(field, in: fields, &contentType)
            case 13 where name == .authorization:
                Self.note(field, in: fields, &authorization)
            case 14:
                if name == .mcpSessionID {
                    Self.note(field, in: fields, &sessionID, count: &sessionIDCount)
                } else if name == .mcpPackages {
                    Self.note(field, in: fields, &packages)
                } else if name == .contentLength {
                    Self.note(field, in: fields, &contentLength)
                }
            case 20 where name == .mcpProtocolVersion:
                Self.note(field, in: fields, &protocolVersion, count: &protocolVersionCount)
            default:
                break
            }
        }
    }

    private static func note(_ field: HTTPField, in fields: HTTPFields, _ value: inout String?) {
        var count = 0
        note(field, in: fields, &value, count: &count)
    }

    private static func note(_ field: HTTPField, in fields: HTTPFields, _ value: inout String?, count: inout Int) {
        count += 1
        // Repeated (rare): joined as HTTPTypes joins it.
        value = value == nil ? field.value : fields[field.name]
    }
}

public import PorticoAuth
public import PorticoJSON

/// A resource as `resources/list` shows it.
public struct MCPResource: Sendable, Equatable {
    public var uri: String
    public var name: String
    public var title: String?
    public var description: String?
    public var mimeType: String

    public init(uri: String, name: String, title: String? = nil, description: String? = nil, mimeType: String = "application/json") {
        self.uri = uri
        self.name = name
        self.title = title
        self.description = description
        self.mimeType = mimeType
    }

    var json: JSON {
        var object: JSONObject = ["uri": .string(uri), "name": .string(name), "mimeType": .string(mimeType)]
        if let title { object["title"] = .string(title) }
        if let description { object["description"] = .string(description) }
        return .object(object)
    }
}

/// What an endpoint serves as MCP resources: offered with a package (when the request selects
/// it) to callers whose credential has `requiredScope`; what each caller sees is the
/// provider's to decide (its role).
public struct ResourceProvider: Sendable {
    public var package: String
    public var requiredScope: Scope
    /// `resources/templates/list` entries.
    public var templates: [JSON]
    public var list: @Sendable (_ app: String, _ principal: Principal) async throws -> [MCPResource]
    /// The contents of `uri`, or `nil` when the caller has no such resource.
    public var read: @Sendable (_ app: String, _ principal: Principal, _ uri: String) async throws -> [JSON]?

    public init(
        package: String, requiredScope: Scope, templates: [JSON],
        list: @escaping @Sendable (_ app: String, _ principal: Principal) async throws -> [MCPResource],
        read: @escaping @Sendable (_ app: String, _ principal: Principal, _ uri: String) async throws -> [JSON]?
    ) {
        self.package = package
        self.requiredScope = requiredScope
        self.templates = templates
        self.list = list
        self.read = read
    }
}

/// An HTML view of the MCP Apps extension (`io.modelcontextprotocol/ui`): a `ui://` resource that
/// hosts render, in a sandboxed frame, for the results of the tools that name it.
public struct UIView: Sendable {
    public static let extensionID = "io.modelcontextprotocol/ui"
    public static let mimeType = "text/html;profile=mcp-app"

    public var uri: String
    public var name: String
    public var description: String
    public var html: String
    /// The tools whose results it shows.
    public var tools: Set<String>

    public init(uri: String, name: String, description: String, html: String, tools: Set<String>) {
        self.uri = uri
        self.name = name
        self.description = description
        self.html = html
        self.tools = tools
    }

    var listed: JSON {
        ["uri": .string(uri), "name": .string(name), "description": .string(description), "mimeType": .string(Self.mimeType)]
    }

    /// Its contents: self-contained (no origin to fetch from or connect to: the CSP lists none),
    /// with a border asked for.
    var contents: JSON {
        [
            "uri": .string(uri), "mimeType": .string(Self.mimeType), "text": .string(html),
            "_meta": ["ui": ["csp": ["connectDomains": [], "resourceDomains": []], "prefersBorder": true]],
        ]
    }

    /// Whether client capabilities (`initialize`'s or a 2026-07-28 request's) declare HTML views.
    public static func isDeclared(in capabilities: JSONObject) -> Bool {
        guard let settings = capabilities["extensions"]?.objectValue?[extensionID]?.objectValue else { return false }
        return settings["mimeTypes"]?.arrayValue?.contains { $0.stringValue == mimeType } ?? false
    }
}

extension MCPEndpoint {
    /// Whether the caller's client renders MCP Apps views: declared at `initialize` (kept in the
    /// session) or in this 2026-07-28 request's capabilities.
    func rendersViews(_ exchange: Exchange) -> Bool {
        exchange.session?.clientCapabilities.contains(.ui) == true || (exchange.modern && UIView.isDeclared(in: exchange.clientCapabilities))
    }

    /// `resources/list`, `resources/templates/list` and `resources/read`, in either era.
    func resources(_ message: RequestMessage, exchange: Exchange) async throws -> JSON {
        let views = rendersViews(exchange) ? configuration.views : []
        if message.method == "resources/read", let uri = message.params?["uri"]?.stringValue, uri.hasPrefix("ui://") {
            // A view is the same page for everyone; what it shows comes with each tool result.
            guard exchange.principal != nil else { throw RPCError.unauthorized("Unauthorized operation: reading a resource needs credentials") }
            guard let view = configuration.views.first(where: { $0.uri == uri }) else {
                throw RPCError.invalidParams("Resource not found", data: ["uri": .string(uri)])
            }
            return ["contents": [view.contents]]
        }
        guard let provider = configuration.resources else {
            guard !configuration.views.isEmpty else { throw RPCError.methodNotFound(message.method) }
            return message.method == "resources/list" ? ["resources": .array(views.map(\.listed))] : ["resourceTemplates": []]
        }
        let offered = exchange.selection.names.contains(provider.package)
        switch message.method {
        case "resources/templates/list":
            return ["resourceTemplates": .array(offered ? provider.templates : [])]
        case "resources/list":
            // Without credentials (public discovery) or the scope, there is nothing to list.
            guard offered, let principal = exchange.principal, principal.isGranted(provider.requiredScope) else { return ["resources": []] }
            do {
                return ["resources": .array(views.map(\.listed) + (try await provider.list(exchange.request.app, principal).map(\.json)))]
            } catch {
                throw RPCError.internalError("the resources could not be listed: \(error)")
            }
        default:
            guard let uri = message.params?["uri"]?.stringValue, !uri.isEmpty else {
                throw RPCError.invalidParams("'uri' is required: a resource's URI from resources/list")
            }
            guard let principal = exchange.principal else { throw RPCError.unauthorized("Unauthorized operation: reading a resource needs credentials") }
            guard principal.isGranted(provider.requiredScope) else {
                throw RPCError(
                    code: RPCError.unauthorizedCode, message: "insufficient_scope",
                    data: ["uri": .string(uri), "granted_scopes": JSON(principal.grantedScopes), "required_scope": .string(provider.requiredScope.name)])
            }
            let contents: [JSON]?
            do {
                contents = offered ? try await provider.read(exchange.request.app, principal, uri) : nil
            } catch {
                throw RPCError.internalError("the resource could not be read: \(error)")
            }
            guard let contents else { throw RPCError.invalidParams("Resource not found", data: ["uri": .string(uri)]) }
            return ["contents": .array(contents)]
        }
    }
}

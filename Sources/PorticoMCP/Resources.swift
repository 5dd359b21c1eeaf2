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

extension MCPEndpoint {
    /// `resources/list`, `resources/templates/list` and `resources/read`, in either era.
    func resources(_ message: RequestMessage, exchange: Exchange) async throws -> JSON {
        guard let provider = configuration.resources else { throw RPCError.methodNotFound(message.method) }
        let offered = exchange.selection.names.contains(provider.package)
        switch message.method {
        case "resources/templates/list":
            return ["resourceTemplates": .array(offered ? provider.templates : [])]
        case "resources/list":
            // Without credentials (public discovery) or the scope, there is nothing to list.
            guard offered, let principal = exchange.principal, principal.isGranted(provider.requiredScope) else { return ["resources": []] }
            do {
                return ["resources": .array(try await provider.list(exchange.request.app, principal).map(\.json))]
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

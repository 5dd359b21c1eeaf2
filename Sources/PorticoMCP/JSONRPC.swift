public import PorticoJSON

/// A JSON-RPC request id: MCP allows strings and integers, never null.
public enum RequestID: Hashable, Sendable, CustomStringConvertible {
    case int(Int64)
    case string(String)

    public var json: JSON {
        switch self {
        case .int(let i): .int(i)
        case .string(let s): .string(s)
        }
    }

    public var description: String {
        switch self {
        case .int(let i): String(i)
        case .string(let s): "\"\(s)\""
        }
    }

    /// Reads an id from a decoded message; `nil` when the value is not a valid MCP id.
    public init?(json: JSON) {
        switch json {
        case .int(let i): self = .int(i)
        case .string(let s): self = .string(s)
        default: return nil
        }
    }
}

/// A JSON-RPC error object, the one shape every protocol failure takes on the wire.
public struct RPCError: Error, Sendable, Equatable {
    public var code: Int
    public var message: String
    public var data: JSON?

    public init(code: Int, message: String, data: JSON? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    public var json: JSON {
        var object: JSONObject = ["code": .int(Int64(code)), "message": .string(message)]
        if let data { object["data"] = data }
        return .object(object)
    }
}

extension RPCError {
    public static let parseErrorCode = -32700
    public static let invalidRequestCode = -32600
    public static let methodNotFoundCode = -32601
    public static let invalidParamsCode = -32602
    public static let internalErrorCode = -32603
    /// Portico, Casdoor and NocoBase use -32001 for missing credentials and missing scopes.
    public static let unauthorizedCode = -32001
    public static let headerMismatchCode = -32020
    public static let missingClientCapabilityCode = -32021
    public static let unsupportedProtocolVersionCode = -32022
    /// A request stopped by `notifications/cancelled`; outside the JSON-RPC reserved range.
    public static let requestCancelledCode = -32800
    /// The server cannot serve the request now (its database is unreachable): HTTP 503 with `Retry-After`.
    public static let unavailableCode = -32050
    /// Implementation-defined server error: a batch entry not run because the batch's response budget was spent.
    public static let batchBudgetCode = -32011
    /// Implementation-defined server error: a request over the caller's rate limit (HTTP 429 with `Retry-After`).
    public static let rateLimitedCode = -32029

    public static func parseError(_ detail: String) -> RPCError {
        RPCError(code: parseErrorCode, message: "Parse error", data: .string(detail))
    }

    public static func invalidRequest(_ detail: String) -> RPCError {
        RPCError(code: invalidRequestCode, message: "Invalid Request", data: .string(detail))
    }

    public static func methodNotFound(_ method: String) -> RPCError {
        RPCError(code: methodNotFoundCode, message: "Method not found", data: .string("Method '\(method)' not found"))
    }

    public static func invalidParams(_ detail: String, data: JSON? = nil) -> RPCError {
        RPCError(code: invalidParamsCode, message: "Invalid params: \(detail)", data: data ?? .string(detail))
    }

    public static func internalError(_ detail: String) -> RPCError {
        RPCError(code: internalErrorCode, message: "Internal error", data: .string(detail))
    }

    public static func unavailable(_ detail: String) -> RPCError {
        RPCError(code: unavailableCode, message: "Service unavailable", data: .string(detail))
    }

    public static func rateLimited(_ detail: String) -> RPCError {
        RPCError(code: rateLimitedCode, message: "Too many requests", data: .string(detail))
    }

    public static func unauthorized(_ detail: String) -> RPCError {
        RPCError(code: unauthorizedCode, message: "Unauthorized", data: .string(detail))
    }

    public static func headerMismatch(_ detail: String) -> RPCError {
        RPCError(code: headerMismatchCode, message: "Header mismatch: \(detail)")
    }

    public static func unsupportedProtocolVersion(requested: String, supported: [String]) -> RPCError {
        RPCError(
            code: unsupportedProtocolVersionCode, message: "Unsupported protocol version",
            data: ["supported": JSON(supported), "requested": .string(requested)])
    }

    public static func missingClientCapability(_ capabilities: [String: JSON]) -> RPCError {
        var required = JSONObject()
        for (key, value) in capabilities.sorted(by: { $0.key < $1.key }) { required[key] = value }
        return RPCError(
            code: missingClientCapabilityCode,
            message: "Missing required client capability: \(capabilities.keys.sorted().joined(separator: ", "))",
            data: ["requiredCapabilities": .object(required)])
    }
}

/// One decoded JSON-RPC message sent by a client.
public enum IncomingMessage: Sendable {
    case request(RequestMessage)
    case notification(method: String, params: JSONObject?)
    /// A client's answer to a server-initiated request (`elicitation/create` in the handshake era):
    /// its id, and its result or error object.
    case response(id: RequestID?, answer: JSON)
}

/// A JSON-RPC request: it has an id and is owed exactly one response.
public struct RequestMessage: Sendable {
    public var id: RequestID
    public var method: String
    public var params: JSONObject?

    public init(id: RequestID, method: String, params: JSONObject? = nil) {
        self.id = id
        self.method = method
        self.params = params
    }

    /// `params._meta`, where MCP carries the progress token and the per-request envelope.
    public var meta: JSONObject? { params?["_meta"]?.objectValue }
}

extension IncomingMessage {
    /// Validates one member of a body. The error carries the id when one could be read, so
    /// the client can match the failure to its request.
    public static func decode(_ json: JSON) -> Result<IncomingMessage, IdentifiedError> {
        guard case .object(let object) = json else {
            return .failure(IdentifiedError(id: nil, error: .invalidRequest("a JSON-RPC message must be an object, got \(json.typeName)")))
        }
        var id: RequestID?
        if let rawID = object["id"] {
            guard let parsed = RequestID(json: rawID) else {
                let detail =
                    rawID.isNull
                    ? "'id' must not be null: MCP request ids are strings or integers"
                    : "'id' must be a string or an integer, got \(rawID.typeName)"
                return .failure(IdentifiedError(id: nil, error: .invalidRequest(detail)))
            }
            id = parsed
        }
        guard let version = object["jsonrpc"] else {
            return .failure(IdentifiedError(id: id, error: .invalidRequest("missing 'jsonrpc' member: it must be \"2.0\"")))
        }
        guard version == .string("2.0") else {
            return .failure(IdentifiedError(id: id, error: .invalidRequest("'jsonrpc' must be \"2.0\"")))
        }
        if object["method"] == nil, object["result"] != nil || object["error"] != nil {
            guard id != nil || object["error"] != nil else {
                return .failure(IdentifiedError(id: nil, error: .invalidRequest("a response must carry the 'id' of the request it answers")))
            }
            return .success(.response(id: id, answer: object["result"] ?? ["error": object["error"] ?? .null]))
        }
        guard let methodValue = object["method"] else {
            return .failure(IdentifiedError(id: id, error: .invalidRequest("missing 'method' member")))
        }
        guard case .string(let method) = methodValue, !method.isEmpty else {
            return .failure(IdentifiedError(id: id, error: .invalidRequest("'method' must be a non-empty string, got \(methodValue.typeName)")))
        }
        var params: JSONObject?
        if let rawParams = object["params"] {
            switch rawParams {
            case .object(let p): params = p
            case .null: params = nil
            default:
                return .failure(IdentifiedError(id: id, error: .invalidParams("'params' must be an object, got \(rawParams.typeName)")))
            }
        }
        if let id {
            return .success(.request(RequestMessage(id: id, method: method, params: params)))
        }
        return .success(.notification(method: method, params: params))
    }
}

/// An error together with the id of the request it answers, when that could be read.
public struct IdentifiedError: Error, Sendable {
    public var id: RequestID?
    public var error: RPCError

    public init(id: RequestID?, error: RPCError) {
        self.id = id
        self.error = error
    }
}

/// One JSON-RPC response, serialised.
public enum RPCResponse: Sendable {
    case result(id: RequestID, JSON)
    /// A `tools/call` result, kept apart so its structured content is serialised only once;
    /// `extra` members follow the result's own (`resultType`, `_meta` in the modern era).
    case toolResult(id: RequestID, ToolResult, extra: JSONObject)
    case error(id: RequestID?, RPCError)

    public var json: JSON {
        switch self {
        case .result(let id, let result):
            return ["jsonrpc": "2.0", "id": id.json, "result": result]
        case .toolResult(let id, let result, let extra):
            guard case .object(var object) = result.json else { return .null }
            object.merge(extra) { _, new in new }
            return ["jsonrpc": "2.0", "id": id.json, "result": .object(object)]
        case .error(let id, let error):
            return ["jsonrpc": "2.0", "id": id?.json ?? .null, "error": error.json]
        }
    }

    /// The compact serialisation, as `json.serialized` but cheaper for tool results.
    public var serialized: [UInt8] {
        var writer = JSONWriter(capacity: 1024)
        write(to: &writer)
        return writer.bytes
    }

    func write(to writer: inout JSONWriter) {
        guard case .toolResult(let id, let result, let extra) = self else {
            writer.write(json)
            return
        }
        writer.appendLiteral("{\"jsonrpc\":\"2.0\",\"id\":")
        writer.write(id.json)
        writer.appendLiteral(",\"result\":")
        result.write(to: &writer, extra: extra)
        writer.appendLiteral("}")
    }

    public var error: RPCError? {
        if case .error(_, let e) = self { return e }
        return nil
    }
}

/// A server-to-client notification (progress, log message, list changed).
public struct RPCNotification: Sendable {
    public var method: String
    public var params: JSON

    public init(method: String, params: JSON) {
        self.method = method
        self.params = params
    }

    public var json: JSON {
        ["jsonrpc": "2.0", "method": .string(method), "params": params]
    }
}

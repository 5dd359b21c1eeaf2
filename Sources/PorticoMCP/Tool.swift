public import PorticoAuth
public import PorticoData
public import PorticoJSON

/// Hints about a tool's behaviour, shown to clients (MCP `ToolAnnotations`).
public struct ToolAnnotations: Sendable {
    public var title: String?
    public var readOnly: Bool
    public var destructive: Bool
    public var idempotent: Bool
    public var openWorld: Bool

    public init(title: String? = nil, readOnly: Bool, destructive: Bool = false, idempotent: Bool = false, openWorld: Bool = false) {
        self.title = title
        self.readOnly = readOnly
        self.destructive = destructive
        self.idempotent = idempotent
        self.openWorld = openWorld
    }

    public static let read = ToolAnnotations(readOnly: true, idempotent: true)

    var json: JSON {
        var object = JSONObject()
        if let title { object["title"] = .string(title) }
        object["readOnlyHint"] = .bool(readOnly)
        object["destructiveHint"] = .bool(destructive)
        object["idempotentHint"] = .bool(idempotent)
        object["openWorldHint"] = .bool(openWorld)
        return .object(object)
    }
}

/// An image a client may show beside a tool or the server (MCP `Icon`, 2025-11-25).
public struct Icon: Sendable, Hashable {
    public var src: String
    public var mimeType: String?
    /// `WxH` sizes, or `any` for a scalable image.
    public var sizes: [String]

    public init(src: String, mimeType: String? = nil, sizes: [String] = []) {
        self.src = src
        self.mimeType = mimeType
        self.sizes = sizes
    }

    /// A scalable SVG image at `src`.
    public static func svg(_ src: String) -> Icon { Icon(src: src, mimeType: "image/svg+xml", sizes: ["any"]) }

    public var json: JSON {
        var object: JSONObject = ["src": .string(src)]
        if let mimeType { object["mimeType"] = .string(mimeType) }
        if !sizes.isEmpty { object["sizes"] = JSON(sizes) }
        return .object(object)
    }
}

/// What a user's role must allow for a tool to be offered and run.
public enum ToolAccess: Sendable {
    /// Record tools: the per-collection check happens in the data layer; here only whether the
    /// role may take this action on some collection at all.
    case data(RecordAction)
    case admin(AdminArea, write: Bool)
    /// Offered to every caller, credentials or not: the tool checks who calls it itself (SQLBot's
    /// tools, which take the token of `mcp_start` as an argument).
    case open
}

/// The result of a tool call: short text for the model, structured content for programs.
public struct ToolResult: Sendable {
    public var content: [JSON]
    /// The structured content, as a value; one given already serialised is read back from its
    /// bytes when asked for here (the response is written from the bytes).
    public var structuredContent: JSON? {
        get { structuredValue ?? structuredBytes.flatMap { try? JSONParser.parse($0) } }
        set {
            structuredValue = newValue
            structuredBytes = nil
        }
    }
    private var structuredValue: JSON?
    private var structuredBytes: [UInt8]?
    public var isError: Bool
    /// Set when the tool needs the client's input before it can finish (2026-07-28 only).
    public var inputRequired: InputRequired?
    /// The sealed `requestState` of an `inputRequired` result, written by the endpoint.
    var sealedState: String?
    /// The task the call became (a `CreateTaskResult`), written by the endpoint.
    var createdTask: JSONObject?
    /// Whether a text block carrying `structuredContent`'s compact JSON leads `content` (written
    /// straight from the value when the response is written, never held as a string).
    private(set) var mirrorsStructuredContent = false

    public init(content: [JSON], structuredContent: JSON? = nil, isError: Bool = false) {
        self.content = content
        self.structuredValue = structuredContent
        self.isError = isError
    }

    /// A structured result with its compact JSON as the text content, as MCP recommends for
    /// clients that ignore `structuredContent`.
    public static func structured(_ value: JSON) -> ToolResult {
        var result = ToolResult(content: [], structuredContent: value)
        result.mirrorsStructuredContent = true
        return result
    }

    /// `structured(_:)` for a value already serialised (compact JSON, as `JSONWriter` writes it):
    /// a record list written straight from its rows is never made a value tree.
    public static func structured(serialized: [UInt8]) -> ToolResult {
        var result = ToolResult(content: [])
        result.structuredBytes = serialized
        result.mirrorsStructuredContent = true
        return result
    }

    /// Asks the client for input (an `InputRequiredResult`); the tool is called again with the
    /// answers and `state` in `CallContext.input`.
    public static func needsInput(_ requests: JSONObject, state: JSON) -> ToolResult {
        var result = ToolResult(content: [])
        result.inputRequired = InputRequired(requests: requests, state: state)
        return result
    }

    /// A failure the model can read and correct (`isError: true`), not a protocol error.
    public static func error(_ message: String) -> ToolResult {
        ToolResult(content: [["type": "text", "text": .string(message)]], isError: true)
    }

    /// The content blocks, the text mirror of the structured content included.
    public var allContent: [JSON] {
        guard mirrorsStructuredContent, let structuredContent else { return content }
        return [["type": "text", "text": .string(structuredContent.serializedString)]] + content
    }

    public var json: JSON {
        var object: JSONObject = ["content": .array(allContent)]
        if let structuredContent { object["structuredContent"] = structuredContent }
        if isError { object["isError"] = true }
        return .object(object)
    }

    /// Writes the result object (as `json` with `extra`'s members after its own).
    func write(to writer: inout JSONWriter, extra: JSONObject) {
        // The structured content is serialised once, for its own member and for the text mirror.
        let hasStructuredContent = structuredValue != nil || structuredBytes != nil
        var serialized = JSONWriter(capacity: hasStructuredContent ? 1024 : 0)
        if let structuredBytes {
            serialized.writeRaw(structuredBytes)
        } else if let structuredValue {
            serialized.write(structuredValue)
        }
        writer.appendLiteral("{\"content\":[")
        if mirrorsStructuredContent, hasStructuredContent {
            writer.appendLiteral("{\"type\":\"text\",\"text\":")
            writer.writeAsString(serialized)
            writer.appendLiteral("}")
            if !content.isEmpty { writer.appendLiteral(",") }
        }
        for (index, block) in content.enumerated() {
            if index > 0 { writer.appendLiteral(",") }
            writer.write(block)
        }
        writer.appendLiteral("]")
        if hasStructuredContent {
            writer.appendLiteral(",\"structuredContent\":")
            writer.append(contentsOf: serialized)
        }
        if isError { writer.appendLiteral(",\"isError\":true") }
        for (key, value) in extra {
            writer.appendLiteral(",")
            writer.writeString(key)
            writer.appendLiteral(":")
            writer.write(value)
        }
        writer.appendLiteral("}")
    }
}

/// A failure inside a tool that the caller can fix; reported as a tool error (`isError: true`).
public struct ToolError: Error, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
}

/// One tool: its wire definition, the scope and role it needs, and its handler.
public struct Tool: Sendable {
    public typealias Handler = @Sendable (_ arguments: JSONObject, _ context: CallContext) async throws -> ToolResult

    public let name: String
    public let description: String
    public let inputSchema: JSON
    /// `inputSchema`, compiled once for the check of every call's arguments.
    public let argumentSchema: CompiledSchema
    public let outputSchema: JSON?
    public private(set) var annotations: ToolAnnotations
    /// Images a client may show beside the tool (its package's).
    public private(set) var icons: [Icon] = []
    public let requiredScope: Scope
    public let access: ToolAccess
    public let handler: Handler
    /// The tool as listed in `tools/list`, built once.
    public private(set) var definition: JSON
    /// Turns an error the handler threw into the error the caller sees (a `ToolError` becomes a
    /// tool result); applied once, where the call's errors are caught.
    public var mapError: (@Sendable (any Error) -> any Error)?
    /// Whether the tool may ask the client back (`CallContext.elicit`): in the handshake era its
    /// calls are answered on an event stream when the session's client declared elicitation.
    public var asksBack = false
    /// Whether a call may answer with a task when it is not done within about a second (to a
    /// client that declared the tasks extension on the request).
    public private(set) var mayBecomeTask = false

    public init(
        name: String, description: String, inputSchema: JSON, outputSchema: JSON? = nil,
        annotations: ToolAnnotations, requiredScope: Scope, access: ToolAccess, handler: @escaping Handler
    ) {
        self.name = name
        self.description = description
        self.inputSchema = inputSchema
        argumentSchema = CompiledSchema(inputSchema)
        self.outputSchema = outputSchema
        self.annotations = annotations
        self.requiredScope = requiredScope
        self.access = access
        self.handler = handler
        definition = .null
        definition = makeDefinition()
    }

    /// The tool with a human title (listed as `title` and `annotations.title`) and icons.
    public func presented(title: String, icons: [Icon]) -> Tool {
        var tool = self
        tool.annotations.title = title
        tool.icons = icons
        tool.definition = tool.makeDefinition()
        return tool
    }

    public var title: String? { annotations.title }

    /// The tool, whose calls may run long: one not done within about a second answers with a
    /// task to a client that can poll it (the MCP tasks extension).
    public func runningLong() -> Tool {
        var tool = self
        tool.mayBecomeTask = true
        return tool
    }

    private func makeDefinition() -> JSON {
        var object: JSONObject = ["name": .string(name)]
        if let title = annotations.title { object["title"] = .string(title) }
        object["description"] = .string(description)
        object["inputSchema"] = inputSchema
        if let outputSchema { object["outputSchema"] = outputSchema }
        object["annotations"] = annotations.json
        if !icons.isEmpty { object["icons"] = .array(icons.map(\.json)) }
        return .object(object)
    }
}

/// A named group of tools, chosen per request (NocoBase's `x-mcp-packages`).
public struct ToolPackage: Sendable {
    public let name: String
    public let summary: String
    public private(set) var tools: [Tool]

    public init(name: String, summary: String, tools: [Tool]) {
        self.name = name
        self.summary = summary
        self.tools = tools
    }

    /// The package with each tool's human title: every tool must have one (a missing title is a
    /// programming error caught when the package is built).
    public func titled(_ titles: [String: String]) -> ToolPackage {
        var package = self
        package.tools = tools.map { tool in
            guard let title = titles[tool.name] else { preconditionFailure("tool \(tool.name) has no title") }
            return tool.presented(title: title, icons: tool.icons)
        }
        return package
    }

    /// The package with `icon` beside each of its tools.
    public func withIcon(_ icon: Icon) -> ToolPackage {
        var package = self
        package.tools = tools.map { $0.presented(title: $0.title ?? $0.name, icons: [icon]) }
        return package
    }
}

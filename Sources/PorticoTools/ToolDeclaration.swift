import PorticoAuth
import PorticoJSON
import PorticoMCP

/// One argument of a tool, declared once: its entry in the tool's input schema and how its value
/// is read from a call. A handler reads only what its tool declared (`ToolInput` checks this in
/// debug builds), so the schema a client sees and what the handler reads cannot drift apart.
struct Parameter<Value>: DeclaredParameter {
    let name: String
    let schema: JSON
    let isRequired: Bool
    let read: @Sendable (ToolArguments, String) throws -> Value

    /// The same argument read through `transform`, e.g. a default for an absent value.
    func map<Other>(_ transform: @escaping @Sendable (Value) throws -> Other) -> Parameter<Other> {
        let read = self.read
        return Parameter<Other>(name: name, schema: schema, isRequired: isRequired) { arguments, name in try transform(read(arguments, name)) }
    }

    /// The same argument with more JSON Schema keywords (`minLength`, `pattern`, …) for the check of every call.
    func constrained(_ keywords: JSONObject) -> Parameter {
        var schema = self.schema.objectValue ?? [:]
        for (key, value) in keywords { schema[key] = value }
        return Parameter(name: name, schema: .object(schema), isRequired: isRequired, read: read)
    }

    /// The value, or `fallback` when the caller left it out (nothing in the schema changes).
    func or<Wrapped: Sendable>(_ fallback: Wrapped) -> Parameter<Wrapped> where Value == Wrapped? {
        map { $0 ?? fallback }
    }
}

/// What the schema needs of a parameter, whatever it reads to.
protocol DeclaredParameter: Sendable {
    var name: String { get }
    var schema: JSON { get }
    var isRequired: Bool { get }
}

/// The parameter kinds tools take. Each reads what the input schema promised and says which
/// argument is wrong, in the caller's words, when a value is not what it should be.
enum Param {
    static func property(_ type: JSON, _ description: String?, _ extra: JSONObject = [:]) -> JSON {
        var schema: JSONObject = ["type": type]
        if let description { schema["description"] = .string(description) }
        for (key, value) in extra { schema[key] = value }
        return .object(schema)
    }

    /// A required, non-empty string.
    static func string(_ name: String, _ description: String? = nil, _ extra: JSONObject = [:]) -> Parameter<String> {
        Parameter(name: name, schema: property("string", description, extra), isRequired: true) { arguments, name in try arguments.string(name) }
    }

    /// A string the caller may leave out; `values` lists the only ones allowed (`enum`).
    static func optionalString(_ name: String, _ description: String? = nil, values: [String]? = nil, required: Bool = false) -> Parameter<String?> {
        Parameter(name: name, schema: property("string", description, values.map { ["enum": JSON($0)] } ?? [:]), isRequired: required) {
            arguments, name in try arguments.optionalString(name)
        }
    }

    /// A string that may also be set to null: `nil` when absent, `.some(nil)` for null.
    static func nullableString(_ name: String, _ description: String? = nil) -> Parameter<String??> {
        Parameter(name: name, schema: property(["string", "null"], description), isRequired: false) { arguments, name in
            guard arguments[name] != nil else { return nil }
            return .some(try arguments.optionalString(name))
        }
    }

    /// A list of strings (also accepted as one comma-separated string), or `nil` when absent or null.
    static func strings(_ name: String, _ description: String? = nil, required: Bool = false, nullable: Bool = false, minItems: Int? = nil)
        -> Parameter<[String]?>
    {
        var extra: JSONObject = ["items": ["type": "string"]]
        if let minItems { extra["minItems"] = .int(Int64(minItems)) }
        return Parameter(name: name, schema: property(nullable ? ["array", "null"] : "array", description, extra), isRequired: required) {
            arguments, name in try arguments.optionalStrings(name)
        }
    }

    /// A whole number, within `minimum` and `maximum` when they are given.
    static func int(_ name: String, _ description: String? = nil, minimum: Int? = nil, maximum: Int? = nil) -> Parameter<Int?> {
        var extra: JSONObject = [:]
        if let minimum { extra["minimum"] = .int(Int64(minimum)) }
        if let maximum { extra["maximum"] = .int(Int64(maximum)) }
        return Parameter(name: name, schema: property("integer", description, extra), isRequired: false) { arguments, name in
            try arguments.optionalInt(name)
        }
    }

    static func bool(_ name: String, _ description: String? = nil) -> Parameter<Bool?> {
        Parameter(name: name, schema: property("boolean", description), isRequired: false) { arguments, name in try arguments.optionalBool(name) }
    }

    /// A boolean the caller must give.
    static func requiredBool(_ name: String, _ description: String? = nil) -> Parameter<Bool> {
        Parameter(name: name, schema: property("boolean", description), isRequired: true) { arguments, name in
            guard let value = try arguments.optionalBool(name) else { throw ToolError("\(arguments.label(name)) is required: true or false") }
            return value
        }
    }

    /// A nested object, read with its own path (`user.email`); an empty one when absent.
    static func object(_ name: String, _ description: String? = nil, schema extra: JSONObject = [:], required: Bool = false) -> Parameter<ToolArguments> {
        Parameter(name: name, schema: property("object", description, extra), isRequired: required) { arguments, name in try arguments.object(name) }
    }

    /// An object taken as it was sent (a filter, field values), or `nil` when absent or null.
    static func jsonObject(_ name: String, _ description: String? = nil, schema extra: JSONObject = [:], required: Bool = false)
        -> Parameter<JSONObject?>
    {
        Parameter(name: name, schema: property("object", description, extra), isRequired: required) { arguments, name in
            try arguments.optionalObject(name)
        }
    }

    /// A list of values taken as they were sent (each checked by the schema of `items`).
    static func array(_ name: String, _ description: String? = nil, items: JSON) -> Parameter<[JSON]> {
        Parameter(name: name, schema: property("array", description, ["items": items]), isRequired: false) { arguments, name in
            switch arguments[name] {
            case nil, .null?: return []
            case .array(let items)?: return items
            case let value?: throw ToolError("\(arguments.label(name)) must be a list, got \(value.typeName)")
            }
        }
    }

    /// A value of any shape the schema allows, as it was sent; `nil` when absent.
    static func json(_ name: String, schema: JSON, required: Bool = false) -> Parameter<JSON?> {
        Parameter(name: name, schema: schema, isRequired: required) { arguments, name in arguments[name] }
    }
}

/// A call's arguments, read through the parameters its tool declared.
struct ToolInput: Sendable {
    let arguments: ToolArguments
    /// The declared names, checked in debug builds so that a read of an undeclared argument fails the tests.
    let declared: [String]

    init(_ object: JSONObject, declared: [String] = []) {
        arguments = ToolArguments(object)
        self.declared = declared
    }

    subscript<Value>(_ parameter: Parameter<Value>) -> Value {
        get throws {
            assert(declared.contains(parameter.name), "'\(parameter.name)' is read but not declared by its tool")
            return try parameter.read(arguments, parameter.name)
        }
    }

    /// The arguments as they were sent, for a service that reads them in its own terms (SQLBot's).
    var object: JSONObject { arguments.object }
}

extension Tool {
    /// A tool whose input schema is made from its parameters.
    /// - Parameter closed: whether arguments the tool does not declare are refused (`additionalProperties: false`).
    init(
        _ name: String, _ description: String, parameters: [any DeclaredParameter], closed: Bool = false, output: JSON? = nil,
        annotations: ToolAnnotations, scope: Scope, access: ToolAccess,
        run: @escaping @Sendable (ToolInput, CallContext) async throws -> ToolResult
    ) {
        var properties = JSONObject()
        for parameter in parameters {
            precondition(properties[parameter.name] == nil, "\(name) declares '\(parameter.name)' twice")
            properties[parameter.name] = parameter.schema
        }
        var schema: JSONObject = ["type": "object", "properties": .object(properties)]
        let required = parameters.filter(\.isRequired).map(\.name)
        if !required.isEmpty { schema["required"] = JSON(required) }
        if closed { schema["additionalProperties"] = false }
        let declared = parameters.map(\.name)
        self.init(
            name: name, description: description, inputSchema: .object(schema), outputSchema: output, annotations: annotations,
            requiredScope: scope, access: access
        ) { arguments, context in
            try await run(ToolInput(arguments, declared: declared), context)
        }
    }
}

extension Tool {
    /// A tool of an administration area. A read (`change: nil`) needs the read scope of `resource`
    /// and the role's right to see the area; a change needs the write scope and the right to change it.
    static func admin(
        _ area: AdminArea, _ resource: Scope.Resource, _ name: String, _ description: String, _ parameters: [any DeclaredParameter],
        closed: Bool = false, output: JSON = ["type": "object"], change: ToolAnnotations?,
        run: @escaping @Sendable (ToolInput, CallContext) async throws -> ToolResult
    ) -> Tool {
        Tool(
            name, description, parameters: parameters, closed: closed, output: output, annotations: change ?? .read,
            scope: Scope(change == nil ? .read : .write, resource), access: .admin(area, write: change != nil), run: run)
    }
}

public import PorticoJSON

/// Checks tool arguments against the subset of JSON Schema 2020-12 that Portico's own tool
/// schemas use, and says precisely where and why a value does not fit.
public struct SchemaValidator: Sendable {
    public init() {}

    /// Returns the first violation as a message such as
    /// `arguments.pageSize: expected integer, got string`, or `nil` when the value fits.
    public func validate(_ value: JSON, against schema: JSON, path: String = "arguments") -> String? {
        CompiledSchema(schema).validate(value, path: path)
    }
}

/// A schema read once into the checks it makes, so validating the arguments of every call looks
/// nothing up by name. A tool compiles its input schema when it is made.
public final class CompiledSchema: Sendable {
    enum Additional: Sendable {
        case allowed, forbidden
        case schema(CompiledSchema)
    }

    let alternatives: [CompiledSchema]?
    let types: [String]
    let allowedValues: [JSON]?
    let constant: JSON?
    let minLength: Int64?, maxLength: Int64?
    let minimum: Double?, maximum: Double?
    let minItems: Int64?, maxItems: Int64?
    let items: CompiledSchema?
    let properties: [String: CompiledSchema]
    /// Property names in the schema's order, for "allowed: ..." messages.
    let propertyNames: [String]
    let required: [String]
    let additional: Additional
    let minProperties: Int64?

    public init(_ schema: JSON) {
        let s = schema.objectValue ?? [:]
        alternatives = (s["anyOf"]?.arrayValue ?? s["oneOf"]?.arrayValue)?.map(CompiledSchema.init)
        types = s["type"].map { $0.stringValue.map { [$0] } ?? $0.arrayValue?.compactMap(\.stringValue) ?? [] } ?? []
        allowedValues = s["enum"]?.arrayValue
        constant = s["const"]
        minLength = s["minLength"]?.intValue
        maxLength = s["maxLength"]?.intValue
        minimum = s["minimum"]?.doubleValue
        maximum = s["maximum"]?.doubleValue
        minItems = s["minItems"]?.intValue
        maxItems = s["maxItems"]?.intValue
        items = s["items"].map(CompiledSchema.init)
        let declared = s["properties"]?.objectValue ?? [:]
        propertyNames = Array(declared.keys)
        properties = Dictionary(uniqueKeysWithValues: declared.map { ($0.key, CompiledSchema($0.value)) })
        required = s["required"]?.arrayValue?.compactMap(\.stringValue) ?? []
        switch s["additionalProperties"] {
        case .bool(false)?: additional = .forbidden
        case .object(let object)?: additional = .schema(CompiledSchema(.object(object)))
        default: additional = .allowed
        }
        minProperties = s["minProperties"]?.intValue
    }

    /// The first violation as a message such as `arguments.pageSize: expected integer, got
    /// string`, or `nil` when the value fits.
    public func validate(_ value: JSON, path: String = "arguments") -> String? {
        check(value) { path }
    }

    /// The path is built only when a message needs it: most arguments are valid.
    private func check(_ value: JSON, path: () -> String) -> String? {
        if let alternatives {
            var messages: [String] = []
            for option in alternatives {
                guard let message = option.check(value, path: path) else { return nil }
                messages.append(message)
            }
            return messages.count == 1 ? messages[0] : "\(path()): does not match any allowed form (\(messages.joined(separator: "; ")))"
        }
        if !types.isEmpty, !types.contains(where: { SchemaValidator.matches(value, type: $0) }) {
            return "\(path()): expected \(types.joined(separator: " or ")), got \(SchemaValidator.describe(value))"
        }
        if let allowedValues, !allowedValues.contains(where: { SchemaValidator.equal($0, value) }) {
            let listed = allowedValues.map { $0.serializedString }.joined(separator: ", ")
            return "\(path()): must be one of \(listed), got \(value.serializedString.prefix(60))"
        }
        if let constant, !SchemaValidator.equal(constant, value) {
            return "\(path()): must be \(constant.serializedString)"
        }
        switch value {
        case .string(let string):
            if let min = minLength, string.count < min {
                return "\(path()): must be at least \(min) character\(min == 1 ? "" : "s") long"
            }
            if let max = maxLength, string.count > max {
                return "\(path()): must be at most \(max) characters long"
            }
        case .int, .double:
            let number = value.doubleValue!
            if let min = minimum, number < min { return "\(path()): must be at least \(SchemaValidator.format(min)), got \(value.serializedString)" }
            if let max = maximum, number > max { return "\(path()): must be at most \(SchemaValidator.format(max)), got \(value.serializedString)" }
        case .array(let elements):
            if let min = minItems, elements.count < min { return "\(path()): must have at least \(min) item\(min == 1 ? "" : "s")" }
            if let max = maxItems, elements.count > max { return "\(path()): must have at most \(max) items" }
            if let items {
                for (index, element) in elements.enumerated() {
                    if let message = items.check(element, path: { "\(path())[\(index)]" }) { return message }
                }
            }
        case .object(let object):
            for name in required where object[name] == nil {
                return "\(path()).\(name): is required"
            }
            for (key, member) in object {
                if let property = properties[key] {
                    if let message = property.check(member, path: { "\(path()).\(key)" }) { return message }
                } else {
                    switch additional {
                    case .allowed: break
                    case .forbidden: return "\(path()).\(key): unknown argument; allowed: \(propertyNames.joined(separator: ", "))"
                    case .schema(let schema):
                        if let message = schema.check(member, path: { "\(path()).\(key)" }) { return message }
                    }
                }
            }
            if let min = minProperties, object.count < min {
                return "\(path()): must have at least \(min) member\(min == 1 ? "" : "s")"
            }
        default:
            break
        }
        return nil
    }
}

extension SchemaValidator {
    static func matches(_ value: JSON, type: String) -> Bool {
        switch (type, value) {
        case ("null", .null), ("boolean", .bool), ("string", .string), ("array", .array), ("object", .object): return true
        case ("integer", .int): return true
        case ("integer", .double(let d)): return d.rounded() == d
        case ("number", .int), ("number", .double): return true
        default: return false
        }
    }

    static func describe(_ value: JSON) -> String {
        switch value {
        case .string(let s): "string \"\(s.prefix(40))\""
        case .int(let i): "integer \(i)"
        case .double(let d): "number \(d)"
        case .bool(let b): "boolean \(b)"
        default: value.typeName
        }
    }

    static func equal(_ a: JSON, _ b: JSON) -> Bool {
        if let x = a.doubleValue, let y = b.doubleValue { return x == y }
        return a == b
    }

    static func format(_ number: Double) -> String {
        number.rounded() == number && abs(number) < 1e15 ? String(Int64(number)) : String(number)
    }
}

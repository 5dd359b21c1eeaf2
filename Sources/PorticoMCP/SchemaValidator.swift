public import PorticoJSON

/// Checks tool arguments against the subset of JSON Schema 2020-12 that Portico's own tool
/// schemas use, and says precisely where and why a value does not fit.
public struct SchemaValidator: Sendable {
    public init() {}

    /// Returns the first violation as a message such as
    /// `arguments.pageSize: expected integer, got string`, or `nil` when the value fits.
    public func validate(_ value: JSON, against schema: JSON, path: String = "arguments") -> String? {
        check(value, against: schema) { path }
    }

    /// `validate`, with the path built only when a message needs it (most arguments are valid,
    /// and every call is checked).
    private func check(_ value: JSON, against schema: JSON, path: () -> String) -> String? {
        guard case .object(let s) = schema else { return nil }
        if let anyOf = s["anyOf"]?.arrayValue ?? s["oneOf"]?.arrayValue {
            var messages: [String] = []
            for option in anyOf {
                guard let message = check(value, against: option, path: path) else { return nil }
                messages.append(message)
            }
            return messages.count == 1 ? messages[0] : "\(path()): does not match any allowed form (\(messages.joined(separator: "; ")))"
        }
        if let type = s["type"], !Self.matches(value, typeOf: type) {
            let allowed: [String] = type.stringValue.map { [$0] } ?? type.arrayValue?.compactMap(\.stringValue) ?? []
            return "\(path()): expected \(allowed.joined(separator: " or ")), got \(Self.describe(value))"
        }
        if let options = s["enum"]?.arrayValue, !options.contains(where: { Self.equal($0, value) }) {
            let listed = options.map { $0.serializedString }.joined(separator: ", ")
            return "\(path()): must be one of \(listed), got \(value.serializedString.prefix(60))"
        }
        if let constant = s["const"], !Self.equal(constant, value) {
            return "\(path()): must be \(constant.serializedString)"
        }
        switch value {
        case .string(let string):
            if let min = s["minLength"]?.intValue, string.count < min {
                return "\(path()): must be at least \(min) character\(min == 1 ? "" : "s") long"
            }
            if let max = s["maxLength"]?.intValue, string.count > max {
                return "\(path()): must be at most \(max) characters long"
            }
        case .int, .double:
            let number = value.doubleValue!
            if let min = s["minimum"]?.doubleValue, number < min { return "\(path()): must be at least \(Self.format(min)), got \(value.serializedString)" }
            if let max = s["maximum"]?.doubleValue, number > max { return "\(path()): must be at most \(Self.format(max)), got \(value.serializedString)" }
        case .array(let items):
            if let min = s["minItems"]?.intValue, items.count < min { return "\(path()): must have at least \(min) item\(min == 1 ? "" : "s")" }
            if let max = s["maxItems"]?.intValue, items.count > max { return "\(path()): must have at most \(max) items" }
            if let itemSchema = s["items"] {
                for (index, item) in items.enumerated() {
                    if let message = check(item, against: itemSchema, path: { "\(path())[\(index)]" }) { return message }
                }
            }
        case .object(let object):
            let properties = s["properties"]?.objectValue ?? [:]
            if let required = s["required"]?.arrayValue {
                for case .string(let name) in required where object[name] == nil {
                    return "\(path()).\(name): is required"
                }
            }
            for (key, member) in object {
                if let propertySchema = properties[key] {
                    if let message = check(member, against: propertySchema, path: { "\(path()).\(key)" }) { return message }
                } else if let additional = s["additionalProperties"] {
                    if additional == .bool(false) {
                        let known = properties.keys.joined(separator: ", ")
                        return "\(path()).\(key): unknown argument; allowed: \(known)"
                    }
                    if case .object = additional, let message = check(member, against: additional, path: { "\(path()).\(key)" }) {
                        return message
                    }
                }
            }
            if let minProperties = s["minProperties"]?.intValue, object.count < minProperties {
                return "\(path()): must have at least \(minProperties) member\(minProperties == 1 ? "" : "s")"
            }
        default:
            break
        }
        return nil
    }

    /// Whether `value` is of the schema's `type` (a name, or a list of names).
    static func matches(_ value: JSON, typeOf type: JSON) -> Bool {
        switch type {
        case .string(let name): return matches(value, type: name)
        case .array(let names):
            var named = false
            for case .string(let name) in names {
                if matches(value, type: name) { return true }
                named = true
            }
            return !named
        default: return true
        }
    }

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
        number.rounded() == number ? String(Int64(number)) : String(number)
    }
}

import Foundation
public import PorticoJSON
public import PorticoStore

/// Converts client JSON into values of a field's type, refusing what does not fit.
public enum ValueCoercion {
    public static func coerce(_ value: JSON, to field: Field, at path: String) throws(DataError) -> SQLValue {
        if value.isNull {
            return .null
        }
        func mismatch(_ expected: String) -> DataError {
            .invalid(
                "\(path): '\(field.name)' is \(field.type.rawValue == "integer" ? "an" : "a") \(field.type.rawValue) field; expected \(expected), got \(SchemaDescription.describe(value))"
            )
        }
        switch field.type {
        case .integer:
            if let i = value.intValue { return .int(i) }
            if case .string(let s) = value, let i = Int64(s) { return .int(i) }
            throw mismatch("an integer")
        case .float, .decimal:
            if case .int(let i) = value { return .int(i) }
            if case .double(let d) = value { return .double(d) }
            if case .string(let s) = value, let d = Double(s), d.isFinite { return .double(d) }
            throw mismatch("a number")
        case .boolean:
            switch value {
            case .bool(let b): return .bool(b)
            case .int(0), .string("false"): return .bool(false)
            case .int(1), .string("true"): return .bool(true)
            default: throw mismatch("true or false")
            }
        case .string, .text:
            switch value {
            case .string(let s): return .text(s)
            case .int, .double: return .text(value.serializedString)
            default: throw mismatch("a string")
            }
        case .select:
            guard case .string(let s) = value else { throw mismatch("one of its options as a string") }
            if let options = field.options, !options.contains(s) {
                throw .invalid("\(path): '\(s)' is not an option of '\(field.name)'; options: \(options.joined(separator: ", "))")
            }
            return .text(s)
        case .date, .datetime:
            guard case .string(let text) = value, let parsed = TemporalValue.parse(text) else {
                throw mismatch("a date string such as \"2024-05-17\"" + (field.type == .datetime ? " or \"2024-05-17 13:45:00\"" : ""))
            }
            return .text(parsed.formatted(dateOnly: field.type == .date))
        case .json:
            return .text(value.serializedString)
        case .belongsTo, .hasMany, .belongsToMany:
            throw .invalid("\(path): '\(field.name)' is a relation, not a value")
        }
    }
}

/// Short descriptions of client values for error messages.
enum SchemaDescription {
    static func describe(_ value: JSON) -> String {
        switch value {
        case .string(let s): "the string \"\(s.prefix(40))\""
        case .int(let i): "the integer \(i)"
        case .double(let d): "the number \(d)"
        case .bool(let b): "\(b)"
        case .null: "null"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

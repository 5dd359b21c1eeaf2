import PorticoAsk
import PorticoAskEngine
import PorticoAuth
import PorticoBase
import PorticoData
import PorticoJSON
import PorticoMCP
import PorticoStore

/// Typed readers for a tool's arguments. The arguments were already checked against the tool's
/// input schema; these read them, and say which argument is wrong when one is.
struct ToolArguments {
    let object: JSONObject
    /// Where these arguments sit in the call, e.g. `user` for the object of `add_user`; errors
    /// name `user.name` rather than `name`.
    let path: String?

    init(_ object: JSONObject, path: String? = nil) {
        self.object = object
        self.path = path
    }

    /// The nested object `name` (an empty one when absent), read with its own path.
    func object(_ name: String) throws -> ToolArguments {
        switch object[name] {
        case nil, .null?: return ToolArguments([:], path: label(name))
        case .object(let nested)?: return ToolArguments(nested, path: label(name))
        case let value?: throw ToolError("\(label(name)) must be an object, got \(value.typeName)")
        }
    }

    /// The argument's name as the caller wrote it, with its path.
    func label(_ name: String) -> String { path.map { "\($0).\(name)" } ?? name }

    /// The value of `name` as it was sent, unread.
    subscript(_ name: String) -> JSON? { object[name] }

    func string(_ name: String) throws -> String {
        guard let value = try optionalString(name), !value.isEmpty else { throw ToolError("\(label(name)) is required") }
        return value
    }

    func optionalString(_ name: String) throws -> String? {
        guard let value = object[name], !value.isNull else { return nil }
        guard let text = value.stringValue else { throw ToolError("\(label(name)) must be a string, got \(value.typeName)") }
        return text
    }

    /// A list of strings, also accepted as one comma-separated string.
    func optionalStrings(_ name: String) throws -> [String]? {
        switch object[name] {
        case nil, .null?: return nil
        case .array(let items)?:
            return try items.map { item in
                guard let text = item.stringValue else { throw ToolError("\(label(name)) must be a list of strings, got an item of type \(item.typeName)") }
                return text
            }
        case .string(let text)?:
            return text.split(separator: ",").map { $0.trimmingSpaces() }.filter { !$0.isEmpty }
        case let value?:
            throw ToolError("\(label(name)) must be a list of strings, got \(value.typeName)")
        }
    }

    func optionalInt(_ name: String) throws -> Int? {
        try Self.int(object[name], label(name))
    }

    /// A whole number, or `nil` for an absent or null value.
    static func int(_ value: JSON?, _ name: String) throws -> Int? {
        guard let value, !value.isNull else { return nil }
        guard let i = value.intValue, let n = Int(exactly: i) else { throw ToolError("\(name) must be a whole number, got \(value.serializedString)") }
        return n
    }

    func optionalBool(_ name: String) throws -> Bool? {
        guard let value = object[name], !value.isNull else { return nil }
        guard let flag = value.boolValue else { throw ToolError("\(label(name)) must be true or false, got \(value.typeName)") }
        return flag
    }

    /// An object argument as it was sent, or `nil` when absent or null.
    func optionalObject(_ name: String) throws -> JSONObject? {
        switch object[name] {
        case nil, .null?: return nil
        case .object(let nested)?: return nested
        case let value?: throw ToolError("\(label(name)) must be an object, got \(value.typeName)")
        }
    }
}

extension ToolPackage {
    /// A package whose tools' errors pass through `ToolErrors.map` where the endpoint catches
    /// them, each tool with its title from `titles`.
    static func mapped(name: String, summary: String, tools: [Tool], titles: [String: String] = ToolTitles.byName) -> ToolPackage {
        ToolPackage(
            name: name, summary: summary,
            tools: tools.map { tool in
                var mapped = tool
                mapped.mapError = ToolErrors.map
                return mapped
            }
        ).titled(titles)
    }
}

/// The one place where errors from below become tool errors the model can read and act on;
/// every package is built with `ToolPackage.mapped`, so none catches these itself.
enum ToolErrors {
    static func map(_ error: any Error) -> any Error {
        switch error {
        case let error as ToolError: return error
        case let refusal as AskRefusal: return ToolError(refusal.message + (refusal.chatID.map { " (chat_id \($0))" } ?? ""))
        case let error as SQLBotError: return ToolError(error.message)
        case let error as DataError:
            return error.kind == .forbidden ? ToolError("Permission denied: \(error.message)") : ToolError(error.message)
        case let error as SQLGuardError: return ToolError("The SQL was refused: \(error.message)")
        case let error as DatasourceError: return ToolError(error.message)
        case let error as StateError:
            return ToolError("Portico could not do this: \(error.message). The fault is in Portico's stored state, not in the request; tell its administrator.")
        case let error as StoreError where error.kind == .unavailable:
            // Not the caller's mistake and not a tool result: the request is refused with 503 to be retried.
            return RPCError.unavailable(error.guidance + "; try again shortly")
        case let error as StoreError where error.kind == .notAuthorized:
            return ToolError("The database refused the SQL: \(error.message)")
        case let error as StoreError where error.kind != .cancelled:
            return ToolError(error.kind == .other ? "The database could not run the SQL: \(error.message)" : error.guidance)
        default: return error
        }
    }
}

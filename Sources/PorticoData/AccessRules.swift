import PorticoBase
public import PorticoJSON
import PorticoStore

/// The record actions, by NocoBase's names: what a role is granted per collection.
public enum RecordAction: String, Sendable, Hashable, CaseIterable {
    case list, get, create, update, destroy, query

    public var isRead: Bool {
        switch self {
        case .list, .get, .query: true
        case .create, .update, .destroy: false
        }
    }

    /// The action that governs the other collections one call reaches (relations in `appends`,
    /// filters, sorts, association parents and link targets): `query` for aggregates, `list` otherwise.
    var related: RecordAction { self == .query ? .query : .list }
}

/// What a role may do with one action on one collection.
public struct AccessRule: Sendable, Hashable {
    /// The fields it may read (for `create` and `update`: write); `nil` is every field. The key
    /// is always readable.
    public var fields: [String]?
    /// A NocoBase filter the rows must match, with `{{currentUser.id}}`-style variables.
    public var filter: JSON?

    public init(fields: [String]? = nil, filter: JSON? = nil) {
        self.fields = fields
        self.filter = filter
    }

    public static let everything = AccessRule()

    public var isEverything: Bool { fields == nil && (filter == nil || filter?.isNull == true) }
}

/// Who makes a call, as the data layer keeps it: the user whose id a record's `createdById` and
/// `updatedById` hold, and whom row filters name as `{{currentUser.id}}`. Built once from the
/// principal, for every role, built-in or custom, and carried beside its rules in `RecordAccess`.
public struct Caller: Sendable, Hashable {
    public var userID: Int64?
    public var userName: String?

    public init(userID: Int64?, userName: String?) {
        self.userID = userID
        self.userName = userName
    }

    /// No user: an operator's tool or a caller without an account.
    public static let nobody = Caller(userID: nil, userName: nil)

    /// The values of the variables row filters may name (`RecordAccess.variableNames`).
    public var variables: [String: JSON] {
        var variables: [String: JSON] = [:]
        if let userID {
            variables["currentUser.id"] = .int(userID)
            variables["$user.id"] = .int(userID)
        }
        if let userName {
            variables["currentUser.name"] = .string(userName)
            variables["currentUser.username"] = .string(userName)
        }
        return variables
    }
}

/// One caller's rights over an app's records: per collection and action, a rule or a refusal.
/// Every table reference of a call goes through the catalog these rights scope
/// (`Catalog.scoped(by:root:action:)`), so no path can read around them.
public struct RecordAccess: Sendable {
    public enum Decision: Sendable {
        case allow(AccessRule)
        /// The reason, naming the collection and the action.
        case deny(String)
    }

    /// Identifies the rules and the variables' values: scoped catalogs are kept against it.
    public let key: String
    /// Who calls: the user kept on the records they write.
    public let caller: Caller
    /// Values of the variables row filters may use (`currentUser.id`, ...), from the caller.
    public let variables: [String: JSON]
    /// Every allowed action is allowed in full (no field list, no row filter), so a call needs
    /// only its own action checked, not a scoped catalog.
    public let allowsInFull: Bool
    let decide: @Sendable (_ collection: String, _ action: RecordAction) -> Decision

    public init(
        key: String, caller: Caller = .nobody, allowsInFull: Bool,
        decide: @escaping @Sendable (_ collection: String, _ action: RecordAction) -> Decision
    ) {
        self.key = key
        self.caller = caller
        variables = allowsInFull ? [:] : caller.variables
        self.allowsInFull = allowsInFull
        self.decide = decide
    }

    public static let unrestricted = RecordAccess(key: "*", allowsInFull: true) { _, _ in .allow(.everything) }

    public func decision(_ collection: String, _ action: RecordAction) -> Decision { decide(collection, action) }

    func require(_ collection: String, _ action: RecordAction) throws(DataError) {
        if case .deny(let reason) = decide(collection, action) { throw DataError(.forbidden, reason) }
    }

    /// Whether the caller reads every row of `collection`: its list and get rules allow it with no
    /// row filter. Only then may a write's refusal tell of a row the write met.
    public func readsEveryRow(of collection: String) -> Bool {
        if allowsInFull { return true }
        for action in [RecordAction.list, .get] {
            guard case .allow(let rule) = decide(collection, action), rule.filter == nil || rule.filter?.isNull == true else { return false }
        }
        return true
    }

    /// The variables row filters may name, as `{{name}}`.
    public static let variableNames = ["currentUser.id", "currentUser.name", "currentUser.username", "$user.id"]

    /// `filter` with each `"{{variable}}"` string replaced by the variable's value.
    public static func substitute(_ filter: JSON, variables: [String: JSON], collection: String) throws(DataError) -> JSON {
        switch filter {
        case .string(let text):
            guard let name = variableName(text) else { return filter }
            guard let value = variables[name], !value.isNull else {
                if variableNames.contains(name) {
                    throw DataError(
                        .forbidden, "the rows of '\(collection)' this role may see depend on {{\(name)}}, and this caller has none (sign in as a user)")
                }
                throw .invalid("unknown variable {{\(name)}}; row filters may use \(variableNames.map { "{{\($0)}}" }.joined(separator: ", "))")
            }
            return value
        case .array(let items):
            var result: [JSON] = []
            result.reserveCapacity(items.count)
            for item in items { result.append(try substitute(item, variables: variables, collection: collection)) }
            return .array(result)
        case .object(let object):
            var result = JSONObject()
            for (key, value) in object { result[key] = try substitute(value, variables: variables, collection: collection) }
            return .object(result)
        default:
            return filter
        }
    }

    /// `currentUser.id` for `"{{currentUser.id}}"` or `"{{ currentUser.id }}"`; `nil` for other text.
    static func variableName(_ text: String) -> String? {
        guard text.hasPrefix("{{"), text.hasSuffix("}}"), text.count > 4 else { return nil }
        return String(text.dropFirst(2).dropLast(2)).trimmingSpaces()
    }
}

extension Catalog {
    /// This catalog as `access` lets one call see it: the call's own collection (`root`) under
    /// the rule for `action`, every other collection under the rule for the related action.
    /// A refused collection stays named but cannot be reached (`collection(_:)` throws its
    /// reason); a field list narrows the schema, so a hidden field is unknown to every path
    /// (fields, appends, filters, sorts, measures); a row filter turns the collection's table
    /// into the rows it allows wherever the table is read (`from(_:as:)`).
    public func scoped(by access: RecordAccess, root: String, action: RecordAction) throws(DataError) -> Catalog {
        if access.allowsInFull {
            try access.require(root, action)
            return self
        }
        var visible: [CollectionSchema] = []
        var refusals: [String: String] = [:]
        var rowFilters: [String: SQLFragment] = [:]
        let compiler = FilterCompiler(catalog: self, flavor: database.flavor)
        for collection in collections.values {
            let rule: AccessRule
            switch access.decision(collection.name, collection.name == root ? action : action.related) {
            case .deny(let reason):
                if collection.name == root { throw DataError(.forbidden, reason) }
                refusals[collection.name] = reason
                visible.append(collection)
                continue
            case .allow(let allowed):
                rule = allowed
            }
            var schema = collection
            if let fields = rule.fields {
                let allowed = Set(fields)
                schema.fields = collection.fields.filter { $0.primaryKey || allowed.contains($0.name) }
            }
            if let filter = rule.filter, !filter.isNull {
                let bound = try RecordAccess.substitute(filter, variables: access.variables, collection: collection.name)
                // Written by an administrator, so compiled over the whole catalog.
                if let condition = try compiler.compile(bound, on: collection, alias: RecordService.rootAlias) {
                    rowFilters[collection.name] = condition
                }
            }
            visible.append(schema)
        }
        return Catalog(scoping: self, collections: visible, refusals: refusals, rowFilters: rowFilters)
    }
}

import Crypto
import PorticoBase
public import PorticoData
public import PorticoJSON

/// A user's role in one app. The built-in roles are `admin`, `member` and `viewer`; an app's
/// administrators define others with per-collection permissions.
public struct Role: Hashable, Sendable, CustomStringConvertible {
    public let name: String
    /// A custom role's grants; `nil` for a built-in role. A custom role whose definition is
    /// gone has empty permissions: it may do nothing.
    public var permissions: RolePermissions?

    public init(name: String, permissions: RolePermissions? = nil) {
        self.name = name
        self.permissions = Self.builtInNames.contains(name) ? nil : (permissions ?? RolePermissions())
    }

    public static let admin = Role(name: "admin")
    public static let member = Role(name: "member")
    public static let viewer = Role(name: "viewer")
    public static let builtIn: [Role] = [.admin, .member, .viewer]
    public static let builtInNames: Set<String> = ["admin", "member", "viewer"]

    public var isBuiltIn: Bool { permissions == nil }

    public var description: String { name }
}

/// What a custom role may do with records: per collection and action, a rule (field list,
/// row filter). An action that is absent is denied. The collection `*` stands for every
/// collection without an entry of its own.
public struct RolePermissions: Hashable, Sendable {
    public var collections: [String: [RecordAction: AccessRule]] {
        didSet { digest = Self.digest(collections) }
    }
    /// Names these grants (a digest of `json`), made when they are read or changed, not on every
    /// call that keys a cache by them.
    public private(set) var digest: String

    public init(collections: [String: [RecordAction: AccessRule]] = [:]) {
        self.collections = collections
        digest = Self.digest(collections)
    }

    static func digest(_ collections: [String: [RecordAction: AccessRule]]) -> String {
        let text = RolePermissions.json(collections).serializedString
        return SHA256.hash(data: Array(text.utf8)).withUnsafeBytes { Hex.encode(UnsafeRawBufferPointer(rebasing: $0.prefix(16))) }
    }

    public func rule(_ collection: String, _ action: RecordAction) -> AccessRule? {
        if let actions = collections[collection] { return actions[action] }
        return collections["*"]?[action]
    }

    /// Whether some collection grants `action`.
    public func grantsAny(_ action: RecordAction) -> Bool {
        collections.values.contains { $0[action] != nil }
    }

    /// `{"Deal": {"list": {"fields": [...], "filter": {...}}, "update": {}}}`, keys in a stable order.
    public var json: JSON { Self.json(collections) }

    static func json(_ collections: [String: [RecordAction: AccessRule]]) -> JSON {
        var object = JSONObject()
        for collection in collections.keys.sorted() {
            var actions = JSONObject()
            for action in RecordAction.allCases {
                guard let rule = collections[collection]?[action] else { continue }
                var r = JSONObject()
                if let fields = rule.fields { r["fields"] = JSON(fields) }
                if let filter = rule.filter, !filter.isNull { r["filter"] = filter }
                actions[action.rawValue] = .object(r)
            }
            object[collection] = .object(actions)
        }
        return .object(object)
    }

    /// Reads what `json` wrote; unreadable entries are left out (they grant nothing).
    public init(json: JSON) {
        var collections: [String: [RecordAction: AccessRule]] = [:]
        for (collection, actions) in json.objectValue ?? [:] {
            var rules: [RecordAction: AccessRule] = [:]
            for (name, rule) in actions.objectValue ?? [:] {
                guard let action = RecordAction(rawValue: name) else { continue }
                rules[action] = AccessRule(fields: rule["fields"]?.arrayValue?.compactMap(\.stringValue), filter: rule["filter"])
            }
            collections[collection] = rules
        }
        self.init(collections: collections)
    }
}

/// The administrative areas beyond data that a role may manage.
public enum AdminArea: String, Sendable {
    case schema, acl, users, applications, apikeys, datasources, workflows
}

/// The one place that decides what a role may do. Scopes are checked separately (they say
/// what a client may do for its user); this says what the user may do.
public struct AccessPolicy: Sendable {
    public init() {}

    /// Whether `role` may perform `action` on records of `collection` (in some rows and fields).
    public func allows(_ role: Role?, _ action: RecordAction, collection: String) -> Bool {
        if case .allow = decision(role, action, collection: collection, app: "") { return true }
        return false
    }

    /// What `role` may do with `action` on `collection`: a rule, or the refusal naming both.
    public func decision(_ role: Role?, _ action: RecordAction, collection: String, app: String) -> RecordAccess.Decision {
        func refusal() -> RecordAccess.Decision {
            .deny("role '\(role?.name ?? "none")'\(app.isEmpty ? "" : " in app '\(app)'") may not \(action.rawValue) records of '\(collection)'")
        }
        guard let role else { return refusal() }
        if let permissions = role.permissions {
            return permissions.rule(collection, action).map { .allow($0) } ?? refusal()
        }
        switch role.name {
        case "admin", "member": return .allow(.everything)
        case "viewer": return action.isRead ? .allow(.everything) : refusal()
        default: return refusal()
        }
    }

    /// Whether `role` may perform `action` on the records of some collection: whether a tool
    /// for that action is offered at all.
    public func allowsAny(_ role: Role?, _ action: RecordAction) -> Bool {
        guard let role else { return false }
        if let permissions = role.permissions { return permissions.grantsAny(action) }
        return allows(role, action, collection: "*")
    }

    /// The caller's rights over the records of `app`, for the data layer's choke point.
    public func recordAccess(role: Role?, app: String, caller: Caller) -> RecordAccess {
        let policy = self
        guard let custom = role?.permissions, let role else {
            // A built-in role reads every collection in full: no variables, no scoped catalog.
            return RecordAccess(key: "", caller: caller, allowsInFull: true) { collection, action in
                policy.decision(role, action, collection: collection, app: app)
            }
        }
        // Scoped catalogs are kept per role definition and caller (its variables).
        let key = "\(app)/\(role.name)/\(custom.digest)/\(caller.userID.map(String.init) ?? "-")/\(caller.userName ?? "-")"
        return RecordAccess(key: key, caller: caller, allowsInFull: false) { collection, action in
            policy.decision(role, action, collection: collection, app: app)
        }
    }

    /// Whether `role` permits what `scope` stands for: a credential can only ever be granted
    /// scopes its user's role allows.
    public func allows(_ role: Role?, scope: Scope) -> Bool {
        let parts = scope.name.split(separator: ":")
        guard parts.count == 2, let kind = Scope.Kind(rawValue: String(parts[0])), let resource = Scope.Resource(rawValue: String(parts[1])) else {
            return true  // mcp, offline_access, openid, ...
        }
        let write = kind == .write
        switch resource {
        case .data: return write ? [.create, .update, .destroy].contains { allowsAny(role, $0) } : [.list, .get, .query].contains { allowsAny(role, $0) }
        case .schema: return allows(role, area: .schema, write: write)
        case .acl: return allows(role, area: .acl, write: write)
        case .user: return allows(role, area: .users, write: write)
        case .application: return allows(role, area: .applications, write: write)
        case .datasource: return allows(role, area: .datasources, write: write)
        case .apikey: return allows(role, area: .apikeys, write: write)
        case .workflow: return allows(role, area: .workflows, write: write)
        }
    }

    /// The resource scopes (`read:data`, ...) a role permits, in a stable order.
    public func scopes(for role: Role?) -> [Scope] {
        Scope.all.filter { $0 != .mcp && $0 != .offlineAccess && allows(role, scope: $0) }
    }

    /// Whether `role` may read (or, with `write`, change) an administrative area.
    public func allows(_ role: Role?, area: AdminArea, write: Bool) -> Bool {
        guard let role else { return false }
        switch (role, area) {
        case (.admin, _): return true
        case (_, .apikeys): return true  // every user manages their own keys
        case (_, .schema), (_, .datasources): return !write  // what the role may read of them is narrowed by its collection rules
        default: return false
        }
    }
}

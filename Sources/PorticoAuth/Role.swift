/// A user's role in one app. The built-in roles are `admin`, `member` and `viewer`.
public struct Role: Hashable, Sendable, CustomStringConvertible {
    public let name: String

    public init(name: String) { self.name = name }

    public static let admin = Role(name: "admin")
    public static let member = Role(name: "member")
    public static let viewer = Role(name: "viewer")
    public static let builtIn: [Role] = [.admin, .member, .viewer]

    public var description: String { name }
}

/// The actions a role is checked for, per collection (NocoBase's ACL action names).
public enum DataAction: String, Sendable, CaseIterable {
    case list, get, create, update, destroy, query

    public var isRead: Bool {
        switch self {
        case .list, .get, .query: true
        case .create, .update, .destroy: false
        }
    }
}

/// The administrative areas beyond data that a role may manage.
public enum AdminArea: String, Sendable {
    case schema, acl, users, applications, apikeys, datasources
}

/// The one place that decides what a role may do. Scopes are checked separately (they say
/// what a client may do for its user); this says what the user may do.
public struct AccessPolicy: Sendable {
    public init() {}

    /// Whether `role` may perform `action` on records of `collection`.
    public func allows(_ role: Role?, _ action: DataAction, collection: String) -> Bool {
        guard let role else { return false }
        switch role {
        case .admin, .member: return true
        case .viewer: return action.isRead
        default: return false
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
        case .data: return allows(role, write ? .create : .list, collection: "*")
        case .schema: return allows(role, area: .schema, write: write)
        case .acl: return allows(role, area: .acl, write: write)
        case .user: return allows(role, area: .users, write: write)
        case .application: return allows(role, area: .applications, write: write)
        case .datasource: return allows(role, area: .datasources, write: write)
        case .apikey: return allows(role, area: .apikeys, write: write)
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
        case (.member, .schema), (.viewer, .schema), (.member, .datasources), (.viewer, .datasources): return !write
        default: return false
        }
    }
}

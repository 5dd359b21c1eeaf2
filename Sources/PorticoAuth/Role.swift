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

    /// Whether `role` may read (or, with `write`, change) an administrative area.
    public func allows(_ role: Role?, area: AdminArea, write: Bool) -> Bool {
        guard let role else { return false }
        switch (role, area) {
        case (.admin, _): return true
        case (_, .apikeys): return true  // every user manages their own keys
        case (.member, .schema), (.viewer, .schema): return !write
        default: return false
        }
    }
}

import Foundation
public import PorticoData
public import PorticoJSON
public import PorticoStore

/// A role as an app lists it: built in or defined there, with what it grants and who holds it.
public struct RoleDefinition: Sendable, Equatable {
    public var name: String
    public var title: String?
    public var builtIn: Bool
    /// `nil` for the built-in roles, whose grants are fixed.
    public var permissions: RolePermissions?
    public var members: Int

    public var json: JSON {
        var object: JSONObject = ["name": .string(name), "title": title.map(JSON.string) ?? .null, "builtIn": .bool(builtIn), "members": JSON(members)]
        if let permissions { object["permissions"] = permissions.json }
        return .object(object)
    }
}

/// Each app's roles: the three built in, and the custom ones its administrators define
/// (`portico_roles`), with permissions per collection and action. A change is announced, so
/// every replica's cached roles are read again on the next request.
public struct RoleStore: Sendable {
    let database: any Database
    let clock: WallClock

    public init(database: any Database, clock: WallClock = .system) {
        self.database = database
        self.clock = clock
    }

    static let builtInTitles = ["admin": "Administrator: everything", "member": "Member: reads and writes records", "viewer": "Viewer: reads records"]

    public static func validateName(_ name: String) throws(DataError) {
        guard (1...64).contains(name.utf8.count), name.first?.isLetter == true,
            name.allSatisfy({ ($0.isASCII && ($0.isLetter || $0.isNumber)) || $0 == "_" || $0 == "-" })
        else {
            throw .invalid("a role name is 1 to 64 ASCII letters, digits, '_' or '-', starting with a letter; got '\(name)'")
        }
        guard !Role.builtInNames.contains(name) else { throw DataError(.conflict, "'\(name)' is a built-in role; choose another name") }
    }

    /// Every role of `app`, the built-in ones first.
    public func list(app: String) async throws -> [RoleDefinition] {
        let counts = try await memberCounts(app: app)
        var roles = Role.builtIn.map { RoleDefinition(name: $0.name, title: Self.builtInTitles[$0.name], builtIn: true, members: counts[$0.name] ?? 0) }
        var q = SQLFragment("SELECT name, title, permissions FROM portico_roles WHERE app = ")
        q.append(bind: .text(app))
        q.append(" ORDER BY name")
        for row in try await database.query(q) {
            guard let name = row.string("name") else { continue }
            roles.append(
                RoleDefinition(
                    name: name, title: row.string("title"), builtIn: false, permissions: Self.permissions(row.string("permissions")),
                    members: counts[name] ?? 0))
        }
        return roles
    }

    public func get(app: String, name: String) async throws -> RoleDefinition? {
        try await list(app: app).first { $0.name == name }
    }

    /// The role `name` of `app`, or a refusal that lists the roles there are.
    public func require(app: String, name: String) async throws -> RoleDefinition {
        let roles = try await list(app: app)
        guard let role = roles.first(where: { $0.name == name }) else {
            throw DataError.notFound("app '\(app)' has no role '\(name)'; its roles are: \(roles.map(\.name).joined(separator: ", "))")
        }
        return role
    }

    public func create(app: String, name: String, title: String?) async throws -> RoleDefinition {
        try Self.validateName(name)
        if try await get(app: app, name: name) != nil { throw DataError(.conflict, "app '\(app)' already has a role '\(name)'") }
        var q = SQLFragment("INSERT INTO portico_roles (app, name, title, permissions, created_at) VALUES (")
        q.append(
            joining: [.bind(.text(app)), .bind(.text(name)), .bind(title.map { .text($0) } ?? .null), .bind(.text("{}")), .bind(.int(clock.seconds))],
            separator: ", ")
        q.append(")")
        try await database.execute(q)
        database.changes.announce()
        return RoleDefinition(name: name, title: title, builtIn: false, permissions: RolePermissions(), members: 0)
    }

    public func update(app: String, name: String, title: String?) async throws -> RoleDefinition {
        var role = try await requireCustom(app: app, name: name, change: "changed")
        var q = SQLFragment("UPDATE portico_roles SET title = ")
        q.append(bind: title.map { .text($0) } ?? .null)
        q.append(where: app, name)
        try await database.execute(q)
        database.changes.announce()
        role.title = title
        return role
    }

    /// Removes a custom role no one holds.
    public func destroy(app: String, name: String) async throws {
        let role = try await requireCustom(app: app, name: name, change: "removed")
        guard role.members == 0 else {
            throw DataError(
                .conflict, "role '\(name)' is held by \(role.members) user(s) in app '\(app)'; give them another role with users_set_roles first")
        }
        var q = SQLFragment("DELETE FROM portico_roles")
        q.append(where: app, name)
        try await database.execute(q)
        database.changes.announce()
    }

    /// Replaces what `name` may do with `collection` (or `*`, every collection without its own
    /// entry): one rule per granted action; an empty map takes every right on it away.
    public func setPermissions(app: String, name: String, collection: String, actions: [RecordAction: AccessRule]) async throws -> RoleDefinition {
        var role = try await requireCustom(app: app, name: name, change: "given permissions")
        var permissions = role.permissions ?? RolePermissions()
        permissions.collections[collection] = actions.isEmpty ? nil : actions
        var q = SQLFragment("UPDATE portico_roles SET permissions = ")
        q.append(bind: .text(permissions.json.serializedString))
        q.append(where: app, name)
        try await database.execute(q)
        database.changes.announce()
        // Its holders' tools may change with their rights.
        var holders = SQLFragment("SELECT user_id FROM portico_app_users WHERE app = ")
        holders.append(bind: .text(app))
        holders.append(" AND role = ")
        holders.append(bind: .text(name))
        for row in try await database.query(holders) {
            if let userID = row.int("user_id") { database.changes.broadcast(.toolsListChanged(userID: userID)) }
        }
        role.permissions = permissions
        return role
    }

    /// Gives `userID` the role `name` in `app` (they join the app if they were not in it). The
    /// app's last administrator keeps the role.
    /// Gives the user the role `name` in `app`, or invites them to it when they belong to other
    /// apps only and `requester` does not administer the instance (`UserStore`'s membership rules).
    @discardableResult
    public func assign(app: String, userID: Int64, name: String, by requester: Requester) async throws -> RoleAssignment {
        _ = try await require(app: app, name: name)
        return try await UserStore(database: database, clock: clock).assign(Role(name: name), app: app, userID: userID, by: requester)
    }

    func requireCustom(app: String, name: String, change: String) async throws -> RoleDefinition {
        let role = try await require(app: app, name: name)
        guard !role.builtIn else { throw DataError.invalid("'\(name)' is a built-in role and cannot be \(change); create a role of your own") }
        return role
    }

    func memberCounts(app: String) async throws -> [String: Int] {
        var q = SQLFragment("SELECT role, COUNT(*) AS n FROM portico_app_users WHERE app = ")
        q.append(bind: .text(app))
        q.append(" GROUP BY role")
        var counts: [String: Int] = [:]
        for row in try await database.query(q) {
            if let role = row.string("role") { counts[role] = Int(row.int("n") ?? 0) }
        }
        return counts
    }

    static func permissions(_ text: String?) -> RolePermissions {
        guard let text, let json = try? JSONParser.parse(text) else { return RolePermissions() }
        return RolePermissions(json: json)
    }
}

extension SQLFragment {
    /// ` WHERE app = $1 AND name = $2`
    fileprivate mutating func append(where app: String, _ name: String) {
        append(" WHERE app = ")
        append(bind: .text(app))
        append(" AND name = ")
        append(bind: .text(name))
    }
}

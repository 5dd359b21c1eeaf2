import Foundation
public import PorticoAuth
import PorticoBase
import PorticoData
import PorticoJSON
public import PorticoMCP

/// Package `users`: Casdoor's user tools. `owner` is the app; a user's `type` is their role there
/// (admin, member, viewer). Passwords are accepted, never returned.
public struct UsersPackage: Sendable {
    let users: UserStore
    let server: AuthorizationServer

    public init(users: UserStore, server: AuthorizationServer) {
        self.users = users
        self.server = server
    }

    static let owner = Param.optionalString("owner", "The app, e.g. main", required: true)
    static let id = Param.optionalString("id", "owner/name")
    static let userID = Param.optionalString("id", required: true)
    static let lookupOwner = Param.optionalString("owner")
    static let email = Param.optionalString("email")
    static let phone = Param.optionalString("phone")
    static let user = Param.object("user", userDescription, required: true)
    static let userName = Param.object(
        "user", schema: ["properties": ["owner": ["type": "string"], "name": ["type": "string"]], "required": ["name"]], required: true)
    static let userDescription =
        "Casdoor user: owner (app), name, displayName, email, phone, password (write-only), type (role: admin, member or viewer) or isAdmin."

    public var package: ToolPackage {
        ToolPackage.mapped(
            name: "users", summary: "Users and their roles (Casdoor's tools)",
            tools: [
                Tool.admin(
                    .users, .user, "get_users", "Get all users of an owner (app), with their role as type.", [Self.owner],
                    output: ["type": "object", "properties": ["data": ["type": "array", "items": ["type": "object"]]], "required": ["data"]], change: nil
                ) { input, context in
                    let owner = try Casdoor.owner(try input[Self.owner], context)
                    let members = try await users.members(app: owner)
                    return Casdoor.result(.array(members.map { Self.json($0.0, role: $0.1, profile: $0.2, owner: owner) }))
                },
                Tool.admin(
                    .users, .user, "get_user", "Get one user by id (owner/name), or by owner with email or phone.",
                    [Self.id, Self.lookupOwner, Self.email, Self.phone],
                    output: ["type": "object", "properties": ["data": ["type": ["object", "null"]]], "required": ["data"]], change: nil
                ) { input, context in
                    let match = try await find(input, context)
                    return Casdoor.result(match.map { Self.json($0.0, role: $0.1, profile: $0.2, owner: context.app) } ?? .null)
                },
                Tool.admin(
                    .users, .user, "add_user", "Create a user with a role (type) in the owner app; a password is generated when none is given and shown once.",
                    [Self.user],
                    change: ToolAnnotations(readOnly: false)
                ) { input, context in
                    try await add(try input[Self.user], context)
                },
                Tool.admin(
                    .users, .user, "update_user", "Change a user (id = owner/name): displayName, email, phone, password, type (role).",
                    [Self.userID, Self.user],
                    change: ToolAnnotations(readOnly: false, idempotent: true)
                ) { input, context in
                    try await update(id: try input[Self.userID], try input[Self.user], context)
                },
                Tool.destroying(
                    .users, .user, "delete_user", "Remove a user from the owner app (a user left in no app is deleted).", [Self.userName],
                    idempotent: true,
                    loss: { input, context in
                        let u = try input[Self.userName]
                        let owner = try Casdoor.owner(try u.optionalString("owner"), context)
                        guard let name = try u.optionalString("name"), let user = try await users.find(name: name),
                            try await users.role(app: owner, userID: user.id) != nil
                        else { return nil }
                        return "This removes user '\(name)' from app '\(owner)', with the access it gave them there (a user left in no app is deleted)."
                    }
                ) { input, context in
                    let u = try input[Self.userName]
                    let owner = try Casdoor.owner(try u.optionalString("owner"), context)
                    guard let name = try u.optionalString("name"), let user = try await users.find(name: name),
                        try await users.role(app: owner, userID: user.id) != nil
                    else {
                        return Casdoor.operation("delete", affected: false, resource: "user")
                    }
                    // The store refuses a self-removal; the grants given in the app go with the membership.
                    try await server.removeMember(userID: user.id, from: owner, by: context.requester)
                    return Casdoor.operation("delete", affected: true, resource: "user")
                },
            ])
    }

    func find(_ input: ToolInput, _ context: CallContext) async throws -> (User, Role, UserStore.Profile)? {
        if let id = try input[Self.id] {
            let (owner, name) = try Casdoor.id(id, context)
            return try await users.members(app: owner).first { $0.0.name == name }
        }
        let owner = try Casdoor.owner(try input[Self.lookupOwner], context)
        let members = try await users.members(app: owner)
        if let email = try input[Self.email] { return members.first { $0.0.email == email } }
        if let phone = try input[Self.phone] { return members.first { $0.2.phone == phone } }
        throw ToolError("give id (owner/name), or owner with email or phone")
    }

    static func role(_ u: ToolArguments) throws -> Role? {
        if let type = try u.optionalString("type"), !type.isEmpty, type != "normal-user" {
            let role = Role(name: type)
            guard Role.builtIn.contains(role) else { throw ToolError("type (role) must be admin, member or viewer; got '\(type)'") }
            return role
        }
        if let admin = try u.optionalBool("isAdmin") { return admin ? .admin : .member }
        return nil
    }

    func add(_ u: ToolArguments, _ context: CallContext) async throws -> ToolResult {
        let owner = try Casdoor.owner(try u.optionalString("owner"), context)
        let name = try u.string("name")
        let role = try Self.role(u) ?? .member
        let generated = try u.optionalString("password") == nil
        let password = try u.optionalString("password") ?? Secrets.random(20)
        let user = try await users.create(name: name, email: try u.optionalString("email"), password: password, app: owner, role: role)
        let profile = UserStore.Profile(displayName: try u.optionalString("displayName"), phone: try u.optionalString("phone"))
        if profile.displayName != nil || profile.phone != nil { try await users.setProfile(userID: user.id, profile) }
        let text = "Successfully added user"
        var data = Self.json(user, role: role, profile: profile, owner: owner)
        if generated, case .object(var o) = data {
            o["password"] = .string(password)  // generated: shown once
            data = .object(o)
        }
        return ToolResult(
            content: [["type": "text", "text": .string(text + (generated ? "; its generated password is in the result, shown once" : ""))]],
            structuredContent: ["status": "ok", "msg": .string(text), "data": data])
    }

    func update(id: String?, _ u: ToolArguments, _ context: CallContext) async throws -> ToolResult {
        let (owner, name) = try Casdoor.id(id, context)
        guard let user = try await users.find(name: name), let current = try await users.role(app: owner, userID: user.id) else {
            return Casdoor.operation("update", affected: false, resource: "user")
        }
        var changed = false
        // Casdoor's clients send the whole user back: only what differs is a change.
        let newName = try u.optionalString("name").flatMap { $0 != user.name ? $0 : nil }
        let email = try u.optionalString("email").flatMap { $0 != user.email ? $0 : nil }
        var profile = try await users.profile(userID: user.id)
        let before = profile
        // A display name is shown as the user name when there is none: sent back as is, it is no change.
        if let v = try u.optionalString("displayName"), v != (before.displayName ?? user.name) { profile.displayName = v }
        if let v = try u.optionalString("phone") { profile.phone = v }
        let password = try u.optionalString("password").flatMap { !$0.isEmpty && $0 != "***" ? $0 : nil }
        if newName != nil || email != nil || profile != before || password != nil {
            try await users.requireAccountChange(of: user, in: owner, by: context.requester)
        }
        if let newName {
            try await users.rename(userID: user.id, to: newName)
            changed = true
        }
        if let email {
            try await users.setEmail(userID: user.id, email)
            changed = true
        }
        if profile != before {
            try await users.setProfile(userID: user.id, profile)
            changed = true
        }
        if let password {
            try await users.setPassword(name: newName ?? user.name, password: password)
            changed = true
        }
        if let role = try Self.role(u), role != current {
            // The store refuses an admin's demotion of themselves.
            try await users.setRole(app: owner, userID: user.id, role: role, by: context.requester)
            changed = true
        }
        return Casdoor.operation("update", affected: changed, resource: "user")
    }

    static func json(_ user: User, role: Role, profile: UserStore.Profile, owner: String) -> JSON {
        [
            "owner": .string(owner), "name": .string(user.name), "id": .string(String(user.id)),
            "createdTime": .string(ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: TimeInterval(user.createdAt)))),
            "displayName": .string(profile.displayName ?? user.name), "email": JSON(user.email), "phone": JSON(profile.phone),
            "type": .string(role.name), "isAdmin": .bool(role == .admin), "isForbidden": .bool(user.disabled),
        ]
    }
}

import Foundation
import HummingbirdBcrypt
import NIOPosix
public import PorticoData
import PorticoJSON
public import PorticoStore

/// A person who signs in, with a role in each app they belong to.
public struct User: Sendable, Hashable {
    public var id: Int64
    public var name: String
    public var email: String?
    public var disabled: Bool
    public var createdAt: Int64
}

/// Users, their passwords (bcrypt) and their roles per app.
public struct UserStore: Sendable {
    let database: any Database
    /// The time expiry is judged by.
    public let clock: WallClock
    /// bcrypt cost: about 60 ms per hash on this class of machine.
    public static let bcryptCost: UInt8 = 10

    public init(database: any Database, clock: WallClock = .system) {
        self.clock = clock
        self.database = database
    }

    public static func validateName(_ name: String) throws(DataError) {
        guard (1...64).contains(name.count), name.allSatisfy({ $0.isLetter || $0.isNumber || "._-@".contains($0) }) else {
            throw .invalid("a user name is 1 to 64 letters, digits, '.', '_', '-' or '@'; got '\(name)'")
        }
    }

    public static func validatePassword(_ password: String) throws(DataError) {
        guard password.count >= 8 else { throw .invalid("a password needs at least 8 characters") }
        guard password.utf8.count <= 72 else { throw .invalid("a password may have at most 72 bytes (bcrypt's limit)") }
    }

    @discardableResult
    public func create(name: String, email: String?, password: String?, app: String = "main", role: Role = .member) async throws -> User {
        try Self.validateName(name)
        if let password { try Self.validatePassword(password) }
        guard Role.builtIn.contains(role) else { throw DataError.invalid("unknown role '\(role.name)'; built-in roles: admin, member, viewer") }
        if try await find(name: name) != nil { throw DataError(.conflict, "a user named '\(name)' already exists") }
        try await requireDistinct(name, except: nil)
        let hash = try await password.asyncMap { try await Self.hash($0) }
        let now = clock.seconds
        let user = try await database.transaction { db in
            var insert = SQLFragment("INSERT INTO portico_users (name, email, password_hash, created_at) VALUES (")
            insert.append(
                joining: [.bind(.text(name)), .bind(email.map { .text($0) } ?? .null), .bind(hash.map { .text($0) } ?? .null), .bind(.int(now))],
                separator: ", ")
            insert.append(") RETURNING id")
            guard let id = try await db.query(insert).first?.int("id") else { throw DataError.invalid("the user was not created") }
            try await Self.setRole(db, app: app, userID: id, role: role)
            return User(id: id, name: name, email: email, disabled: false, createdAt: now)
        }
        database.changes.announce()
        return user
    }

    /// Refuses a name another user's could be mistaken for (`ADMIN` beside `admin`, `аdmin` with a
    /// Cyrillic а): the same skeleton (`NameSkeleton`). The other name is not told: the one who
    /// names an account may not see every account of the instance.
    func requireDistinct(_ name: String, except userID: Int64?) async throws {
        let skeleton = NameSkeleton.of(name)
        for row in try await database.query("SELECT id, name FROM portico_users") where row.int("id") != userID {
            guard let other = row.string("name"), NameSkeleton.of(other) == skeleton else { continue }
            throw DataError(
                .conflict,
                "the name '\(name)' could be mistaken for an existing user's (the same once case, accents and look-alike letters are set aside); choose another"
            )
        }
    }

    public func find(name: String) async throws -> User? {
        var q = SQLFragment("SELECT \(Self.columns) FROM portico_users WHERE name = ")
        q.append(bind: .text(name))
        return try await database.query(q).first.map(Self.user)
    }

    public func find(id: Int64) async throws -> User? {
        var q = SQLFragment("SELECT \(Self.columns) FROM portico_users WHERE id = ")
        q.append(bind: .int(id))
        return try await database.query(q).first.map(Self.user)
    }

    public func list() async throws -> [(User, [String: Role])] {
        let users = try await database.query("SELECT \(Self.columns) FROM portico_users ORDER BY id").map(Self.user)
        var roles: [Int64: [String: Role]] = [:]
        for row in try await database.query("SELECT app, user_id, role FROM portico_app_users") {
            if let userID = row.int("user_id"), let app = row.string("app"), let role = row.string("role") {
                roles[userID, default: [:]][app] = Role(name: role)
            }
        }
        return users.map { ($0, roles[$0.id] ?? [:]) }
    }

    public func setPassword(name: String, password: String) async throws {
        try Self.validatePassword(password)
        var q = SQLFragment("UPDATE portico_users SET password_hash = ")
        q.append(bind: .text(try await Self.hash(password)))
        q.append(" WHERE name = ")
        q.append(bind: .text(name))
        q.append(" RETURNING id")
        guard try await !database.query(q).isEmpty else { throw DataError.notFound("there is no user named '\(name)'") }
    }

    /// Checks a password; `nil` for an unknown user, a disabled one, or a wrong password.
    public func verify(name: String, password: String) async throws -> User? {
        var q = SQLFragment("SELECT \(Self.columns), password_hash FROM portico_users WHERE name = ")
        q.append(bind: .text(name))
        guard let row = try await database.query(q).first, let hash = row.string("password_hash") else {
            // Spend the same time as a real check, so timing does not reveal which names exist.
            _ = try await Self.verify(password, hash: nil)
            return nil
        }
        let user = Self.user(row)
        guard try await Self.verify(password, hash: hash), !user.disabled else { return nil }
        return user
    }

    static let columns = "id, name, email, disabled, created_at"

    /// Compared against when there is no real hash; made (once, lazily) on the blocking pool like every other hash.
    static let dummyHash = Bcrypt.hash("portico-timing-equaliser", cost: bcryptCost)

    /// bcrypt runs on the blocking pool: it takes tens of milliseconds and must not stall an event loop.
    static func hash(_ password: String) async throws -> String {
        try await NIOThreadPool.singleton.runIfActive { Bcrypt.hash(password, cost: bcryptCost) }
    }

    /// Checks `password` against `hash`, or against a dummy hash (spending the same time) when there is none.
    static func verify(_ password: String, hash: String?) async throws -> Bool {
        try await NIOThreadPool.singleton.runIfActive { Bcrypt.verify(password, hash: hash ?? dummyHash) }
    }

    /// A user's role in each app they belong to.
    public func roles(userID: Int64) async throws -> [String: Role] {
        var q = SQLFragment(Self.roleQuery + " WHERE m.user_id = ")
        q.append(bind: .int(userID))
        var roles: [String: Role] = [:]
        for row in try await database.query(q) {
            if let app = row.string("app"), let role = Self.role(row) { roles[app] = role }
        }
        return roles
    }

    /// The user's role in `app`, with its permissions when it is a custom role.
    public func role(app: String, userID: Int64) async throws -> Role? {
        try await Self.role(database, app: app, userID: userID)
    }

    /// The user's role in `app` as `db` (a transaction, say) sees it.
    static func role(_ db: any Database, app: String, userID: Int64) async throws -> Role? {
        var q = SQLFragment(Self.roleQuery + " WHERE m.app = ")
        q.append(bind: .text(app))
        q.append(" AND m.user_id = ")
        q.append(bind: .int(userID))
        return try await db.query(q).first.flatMap(Self.role)
    }

    static let roleQuery =
        "SELECT m.app, m.role, r.permissions FROM portico_app_users AS m LEFT JOIN portico_roles AS r ON r.app = m.app AND r.name = m.role"

    static func role(_ row: Row) -> Role? {
        guard let name = row.string("role") else { return nil }
        let permissions = row.string("permissions").flatMap { try? JSONParser.parse($0) }.map(RolePermissions.init(json:))
        return Role(name: name, permissions: permissions)
    }

    /// Gives the user `role` in `app`, as `requester` asks; the app's last administrator keeps the
    /// role, and no administrator takes theirs away themselves (another admin must).
    public func setRole(app: String, userID: Int64, role: Role, by requester: Requester) async throws {
        try await database.transaction { db in
            try await Self.refuseSelfDemotion(db, app: app, userID: userID, to: role, by: requester)
            if role != .admin { try await Self.keepAnAdmin(db, app: app, losing: userID) }
            try await Self.setRole(db, app: app, userID: userID, role: role)
        }
        rightsChanged(userID)
    }

    /// Tells every replica (caches and the user's open sessions, which hear
    /// `tools/list_changed`) that a user's rights changed. Every writer of roles and memberships
    /// calls it after its change committed, so no caller has to remember to.
    func rightsChanged(_ userID: Int64) {
        database.changes.announce()
        database.changes.broadcast(.toolsListChanged(userID: userID))
    }

    /// Refuses a change that would leave `app` without an administrator, when `userID` is its last.
    static func keepAnAdmin(_ db: any Database, app: String, losing userID: Int64) async throws {
        // Two demotions at once cannot pass each other: each holds the lock while it counts.
        if let lock = db.flavor.migrationLock { try await db.execute(lock) }
        var q = SQLFragment("SELECT user_id FROM portico_app_users WHERE role = 'admin' AND app = ")
        q.append(bind: .text(app))
        let admins = try await db.query(q).compactMap { $0.int("user_id") }
        if admins == [userID] {
            throw DataError(.conflict, "this is the last admin of app '\(app)'; make another user admin first")
        }
    }

    static func setRole(_ db: any Database, app: String, userID: Int64, role: Role) async throws {
        var q = SQLFragment("INSERT INTO portico_app_users (app, user_id, role) VALUES (")
        q.append(joining: [.bind(.text(app)), .bind(.int(userID)), .bind(.text(role.name))], separator: ", ")
        q.append(") ON CONFLICT (app, user_id) DO UPDATE SET role = excluded.role")
        try await db.execute(q)
        // A role given now replaces whatever an earlier invitation offered.
        var invitation = SQLFragment("DELETE FROM portico_invitations WHERE app = ")
        invitation.append(bind: .text(app))
        invitation.append(" AND user_id = ")
        invitation.append(bind: .int(userID))
        try await db.execute(invitation)
    }

    /// Users with a role in `app`, with their role and profile.
    public func members(app: String) async throws -> [(User, Role, Profile)] {
        var q = SQLFragment(
            "SELECT u.id, u.name, u.email, u.disabled, u.created_at, m.role, d.display_name, d.phone FROM portico_app_users AS m JOIN portico_users AS u ON u.id = m.user_id LEFT JOIN portico_user_details AS d ON d.user_id = u.id WHERE m.app = "
        )
        q.append(bind: .text(app))
        q.append(" ORDER BY u.name")
        return try await database.query(q).map {
            (Self.user($0), Role(name: $0.string("role") ?? "viewer"), Profile(displayName: $0.string("display_name"), phone: $0.string("phone")))
        }
    }

    /// Display name and phone, kept beside the account.
    public struct Profile: Sendable, Equatable {
        public var displayName: String?
        public var phone: String?
        public init(displayName: String?, phone: String?) {
            self.displayName = displayName
            self.phone = phone
        }
    }

    public func profile(userID: Int64) async throws -> Profile {
        var q = SQLFragment("SELECT display_name, phone FROM portico_user_details WHERE user_id = ")
        q.append(bind: .int(userID))
        let row = try await database.query(q).first
        return Profile(displayName: row?.string("display_name"), phone: row?.string("phone"))
    }

    public func setProfile(userID: Int64, _ profile: Profile) async throws {
        var q = SQLFragment("INSERT INTO portico_user_details (user_id, display_name, phone) VALUES (")
        q.append(
            joining: [.bind(.int(userID)), .bind(profile.displayName.map { .text($0) } ?? .null), .bind(profile.phone.map { .text($0) } ?? .null)],
            separator: ", ")
        q.append(") ON CONFLICT (user_id) DO UPDATE SET display_name = excluded.display_name, phone = excluded.phone")
        try await database.execute(q)
    }

    public func setEmail(userID: Int64, _ email: String?) async throws {
        var q = SQLFragment("UPDATE portico_users SET email = ")
        q.append(bind: email.map { .text($0) } ?? .null)
        q.append(" WHERE id = ")
        q.append(bind: .int(userID))
        try await database.execute(q)
    }

    public func rename(userID: Int64, to name: String) async throws {
        try Self.validateName(name)
        if let other = try await find(name: name), other.id != userID { throw DataError(.conflict, "a user named '\(name)' already exists") }
        try await requireDistinct(name, except: userID)
        var q = SQLFragment("UPDATE portico_users SET name = ")
        q.append(bind: .text(name))
        q.append(" WHERE id = ")
        q.append(bind: .int(userID))
        try await database.execute(q)
        database.changes.announce()  // keys carry their user's name
    }

    /// No administrator takes their own admin role away: another admin must, so an app is never
    /// left to a slip of its only careful admin (and the last one keeps it anyway, `keepAnAdmin`).
    static func refuseSelfDemotion(_ db: any Database, app: String, userID: Int64, to role: Role, by requester: Requester) async throws {
        guard role != .admin, requester == .user(userID), try await Self.role(db, app: app, userID: userID) == .admin else { return }
        throw DataError(.forbidden, "you cannot take away your own admin role in app '\(app)'; ask another admin")
    }

    /// Removes the user from `app`, as `requester` asks; a user left in no app is deleted with
    /// their keys and sessions. No one removes themselves (another admin must), and the app's last
    /// administrator stays.
    public func remove(userID: Int64, from app: String, by requester: Requester) async throws {
        guard requester != .user(userID) else { throw DataError(.forbidden, "you cannot remove yourself from app '\(app)'; ask another admin") }
        try await database.transaction { db in
            try await Self.keepAnAdmin(db, app: app, losing: userID)
            var q = SQLFragment("DELETE FROM portico_app_users WHERE app = ")
            q.append(bind: .text(app))
            q.append(" AND user_id = ")
            q.append(bind: .int(userID))
            try await db.execute(q)
            var left = SQLFragment("SELECT COUNT(*) AS n FROM portico_app_users WHERE user_id = ")
            left.append(bind: .int(userID))
            if try await db.query(left).first?.int("n") == 0 {
                var delete = SQLFragment("DELETE FROM portico_users WHERE id = ")
                delete.append(bind: .int(userID))
                try await db.execute(delete)
            }
        }
        rightsChanged(userID)
    }

    static func user(_ row: Row) -> User {
        User(
            id: row.int("id") ?? 0, name: row.string("name") ?? "", email: row.string("email"), disabled: row.bool("disabled") ?? false,
            createdAt: row.int("created_at") ?? 0)
    }
}

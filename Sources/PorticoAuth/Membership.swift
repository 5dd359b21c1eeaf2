import PorticoData
import PorticoStore

/// Who asks for a change to a user's account or memberships.
public enum Requester: Sendable, Equatable {
    /// The operator at the command line, who holds the data directory or the database URL: an
    /// instance administrator.
    case `operator`
    /// A signed-in user, through any of their credentials.
    case user(Int64)
    /// An OAuth application acting on its own behalf (client credentials), with no user.
    case application
}

/// How a role was given: at once, or as an invitation the user accepts.
public enum RoleAssignment: Sendable, Equatable {
    case assigned
    /// The user belongs to other apps and not to this one: they join when they accept.
    case invited
}

/// A user's pending invitation to an app.
public struct Invitation: Sendable, Equatable {
    public var app: String
    public var role: String
    /// The name of the user who sent it, when there was one.
    public var invitedBy: String?
    public var createdAt: Int64
}

/// The rules of a multi-app instance, as Casdoor's `built-in` organization and NocoBase's main
/// app have them: a user is one identity across apps; an app's administrators manage the users
/// who belong to their app only. Adding a user of another app is an invitation that user
/// accepts, unless an instance administrator (an admin of app `main`, or the operator) adds
/// them; and a user who belongs to other apps too keeps their name, email, password and profile
/// unless they change them themselves or an instance administrator does.
extension UserStore {
    /// The app whose administrators administer the instance.
    public static let instanceApp = "main"
    /// How long an invitation waits to be accepted.
    public static let invitationLifetime: Int64 = 14 * 86400

    /// Whether `requester` administers the whole instance: the operator, or an admin of app `main`.
    public func isInstanceAdmin(_ requester: Requester) async throws -> Bool {
        switch requester {
        case .operator: return true
        case .application: return false
        case .user(let id): return try await role(app: Self.instanceApp, userID: id) == .admin
        }
    }

    /// Refuses a change to `user`'s account (name, email, password, profile) asked for in `app`,
    /// when the user belongs to another app as well, unless `requester` is that user or an
    /// instance administrator: otherwise one app's administrator could take over an account
    /// that other apps trust.
    public func requireAccountChange(of user: User, in app: String, by requester: Requester) async throws {
        if requester == .user(user.id) { return }
        // An app that has invited the user counts too: its invitation is for the person, not for
        // whoever could set their password before they accept.
        let invitedTo = try await invitations(userID: user.id).map(\.app)
        let others = Set(try await roles(userID: user.id).keys).union(invitedTo).filter { $0 != app }.sorted()
        guard !others.isEmpty, try await !isInstanceAdmin(requester) else { return }
        throw DataError(
            .forbidden,
            "'\(user.name)' also belongs to app\(others.count > 1 ? "s" : "") \(others.map { "'\($0)'" }.joined(separator: ", ")); only they or an instance administrator (an admin of app '\(Self.instanceApp)') can change their name, email, password or profile"
        )
    }

    /// Gives `userID` role `role` in `app`, or invites them: a member of the app, and anyone when
    /// an instance administrator asks, get the role at once; a user who belongs to other apps only
    /// is invited, and joins when they accept in their console.
    func assign(_ role: Role, app: String, userID: Int64, by requester: Requester) async throws -> RoleAssignment {
        let mayAdd = try await isInstanceAdmin(requester)
        let now = clock.seconds
        // Whether they are a member is decided in the same transaction as what follows, so a
        // removal that lands in between cannot turn an invitation into a membership.
        let outcome: RoleAssignment = try await database.transaction { db in
            guard try await Self.role(db, app: app, userID: userID) != nil || mayAdd else {
                try await Self.invite(db, userID: userID, to: app, role: role, by: requester, at: now)
                return .invited
            }
            // The app's last admin is told so first (what users_set_roles always said); then the self rule.
            if role != .admin { try await Self.keepAnAdmin(db, app: app, losing: userID) }
            try await Self.refuseSelfDemotion(db, app: app, userID: userID, to: role, by: requester)
            try await Self.setRole(db, app: app, userID: userID, role: role)
            return .assigned
        }
        if outcome == .assigned { rightsChanged(userID) } else { database.changes.announce() }
        return outcome
    }

    static func invite(_ db: any Database, userID: Int64, to app: String, role: Role, by requester: Requester, at now: Int64) async throws {
        var q = SQLFragment("INSERT INTO portico_invitations (app, user_id, role, invited_by, created_at) VALUES (")
        let inviter: SQLValue = if case .user(let id) = requester { .int(id) } else { .null }
        q.append(joining: [.bind(.text(app)), .bind(.int(userID)), .bind(.text(role.name)), .bind(inviter), .bind(.int(now))], separator: ", ")
        q.append(") ON CONFLICT (app, user_id) DO UPDATE SET role = excluded.role, invited_by = excluded.invited_by, created_at = excluded.created_at")
        try await db.execute(q)
    }

    /// The user's invitations that have not expired, oldest first.
    public func invitations(userID: Int64) async throws -> [Invitation] {
        var q = SQLFragment(
            "SELECT i.app, i.role, i.created_at, u.name AS inviter FROM portico_invitations AS i LEFT JOIN portico_users AS u ON u.id = i.invited_by WHERE i.user_id = "
        )
        q.append(bind: .int(userID))
        q.append(" AND i.created_at > ")
        q.append(bind: .int(clock.seconds - Self.invitationLifetime))
        q.append(" ORDER BY i.created_at, i.app")
        return try await database.query(q).compactMap { row in
            guard let app = row.string("app"), let role = row.string("role") else { return nil }
            return Invitation(app: app, role: role, invitedBy: row.string("inviter"), createdAt: row.int("created_at") ?? 0)
        }
    }

    /// Accepts the user's invitation to `app`: they get its role there, if the role still exists.
    @discardableResult
    public func accept(app: String, userID: Int64) async throws -> Role {
        let role: Role = try await database.transaction { db in
            guard let invitation = try await Self.takeInvitation(db, app: app, userID: userID, since: clock.seconds - Self.invitationLifetime) else {
                throw DataError.notFound("there is no invitation to app '\(app)' waiting for you (it may have expired after 14 days)")
            }
            let role = Role(name: invitation)
            if !Role.builtIn.contains(role) {
                var exists = SQLFragment("SELECT name FROM portico_roles WHERE app = ")
                exists.append(bind: .text(app))
                exists.append(" AND name = ")
                exists.append(bind: .text(invitation))
                guard try await !db.query(exists).isEmpty else {
                    throw DataError.notFound("the role '\(invitation)' you were invited to in app '\(app)' no longer exists; ask for a new invitation")
                }
            }
            try await Self.setRole(db, app: app, userID: userID, role: role)
            return role
        }
        rightsChanged(userID)
        return role
    }

    /// Declines (removes) the user's invitation to `app`.
    public func decline(app: String, userID: Int64) async throws {
        _ = try await database.transaction { db in try await Self.takeInvitation(db, app: app, userID: userID, since: 0) }
    }

    /// Removes the invitation and returns its role, when one is there and newer than `since`.
    static func takeInvitation(_ db: any Database, app: String, userID: Int64, since: Int64) async throws -> String? {
        var q = SQLFragment("DELETE FROM portico_invitations WHERE app = ")
        q.append(bind: .text(app))
        q.append(" AND user_id = ")
        q.append(bind: .int(userID))
        q.append(" RETURNING role, created_at")
        guard let row = try await db.query(q).first, (row.int("created_at") ?? 0) > since else { return nil }
        return row.string("role")
    }
}

import Foundation
import PorticoData
import PorticoStore
import PorticoTestSupport
import Testing

@testable import PorticoAuth

/// The rules of one identity across apps, at the store, on both databases: an app's admin invites
/// a user of another app rather than adding them, and cannot change their account; an instance
/// administrator (an admin of app main, or the operator) can do both.
@Suite struct MembershipTests {
    struct People {
        let mainAdmin: User
        let appAdmin: User
        let onlyInApp: User
    }

    static func people(_ f: AuthFixture) async throws -> People {
        try await f.store.execute("INSERT INTO portico_apps (name, title, created_at) VALUES ('other', 'other', 0)")
        let mainAdmin = try await f.users.create(name: "root", email: nil, password: nil, app: "main", role: .admin)
        let appAdmin = try await f.users.create(name: "olga", email: nil, password: nil, app: "other", role: .admin)
        let onlyInApp = try await f.users.create(name: "otto", email: nil, password: nil, app: "other", role: .member)
        return People(mainAdmin: mainAdmin, appAdmin: appAdmin, onlyInApp: onlyInApp)
    }

    @Test(arguments: Backend.available) func anAppAdminInvitesAndTheUserDecides(_ backend: Backend) async throws {
        let f = try await AuthFixture.make(backend)
        defer { Task { await f.close() } }
        let p = try await Self.people(f)
        let roles = RoleStore(database: f.store)
        // While another app's invitation waits, the only app's admin no longer holds the account alone.
        try await f.users.requireAccountChange(of: p.onlyInApp, in: "other", by: .user(p.appAdmin.id))
        try await f.store.execute("INSERT INTO portico_apps (name, title, created_at) VALUES ('third', 'third', 0)")
        #expect(try await roles.assign(app: "third", userID: p.onlyInApp.id, name: "viewer", by: .application) == .invited)
        await #expect(throws: DataError.self) { try await f.users.requireAccountChange(of: p.onlyInApp, in: "other", by: .user(p.appAdmin.id)) }
        try await f.users.decline(app: "third", userID: p.onlyInApp.id)
        #expect(try await roles.assign(app: "other", userID: p.mainAdmin.id, name: "viewer", by: .user(p.appAdmin.id)) == .invited)
        #expect(try await f.users.role(app: "other", userID: p.mainAdmin.id) == nil)
        #expect(try await f.users.invitations(userID: p.mainAdmin.id).map(\.app) == ["other"])
        #expect(try await f.users.invitations(userID: p.mainAdmin.id).first?.invitedBy == "olga")
        // Not the app admin's account to change, before or after joining.
        await #expect(throws: DataError.self) { try await f.users.requireAccountChange(of: p.mainAdmin, in: "other", by: .user(p.appAdmin.id)) }
        #expect(try await f.users.accept(app: "other", userID: p.mainAdmin.id) == .viewer)
        #expect(try await f.users.role(app: "other", userID: p.mainAdmin.id) == .viewer)
        #expect(try await f.users.invitations(userID: p.mainAdmin.id).isEmpty)
        await #expect(throws: DataError.self) { try await f.users.requireAccountChange(of: p.mainAdmin, in: "other", by: .user(p.appAdmin.id)) }
        await #expect(throws: DataError.self) { try await f.users.requireAccountChange(of: p.mainAdmin, in: "other", by: .application) }
        // A member now: the app's admin changes their role there at once.
        #expect(try await roles.assign(app: "other", userID: p.mainAdmin.id, name: "member", by: .user(p.appAdmin.id)) == .assigned)
        // Their own account is theirs, and the instance's administrators'.
        try await f.users.requireAccountChange(of: p.mainAdmin, in: "other", by: .user(p.mainAdmin.id))
        try await f.users.requireAccountChange(of: p.mainAdmin, in: "other", by: .operator)
        // A user of this app alone is the app admin's to manage.
        try await f.users.requireAccountChange(of: p.onlyInApp, in: "other", by: .user(p.appAdmin.id))
        // Nothing to accept twice, and a declined invitation is gone.
        await #expect(throws: DataError.self) { try await f.users.accept(app: "other", userID: p.mainAdmin.id) }
        let stranger = try await f.users.create(name: "sven", email: nil, password: nil, app: "main", role: .member)
        #expect(try await roles.assign(app: "other", userID: stranger.id, name: "admin", by: .user(p.appAdmin.id)) == .invited)
        try await f.users.decline(app: "other", userID: stranger.id)
        await #expect(throws: DataError.self) { try await f.users.accept(app: "other", userID: stranger.id) }
        #expect(try await f.users.role(app: "other", userID: stranger.id) == nil)
    }

    @Test(arguments: Backend.available) func instanceAdministratorsAddAndChangeAnyone(_ backend: Backend) async throws {
        let f = try await AuthFixture.make(backend)
        defer { Task { await f.close() } }
        let p = try await Self.people(f)
        let roles = RoleStore(database: f.store)
        #expect(try await f.users.isInstanceAdmin(.user(p.mainAdmin.id)))
        #expect(try await !f.users.isInstanceAdmin(.user(p.appAdmin.id)))
        #expect(try await roles.assign(app: "main", userID: p.onlyInApp.id, name: "viewer", by: .user(p.mainAdmin.id)) == .assigned)
        try await f.users.requireAccountChange(of: p.onlyInApp, in: "main", by: .user(p.mainAdmin.id))
        // An invitation made earlier does not outlive a role given since.
        #expect(try await roles.assign(app: "main", userID: p.appAdmin.id, name: "admin", by: .user(p.onlyInApp.id)) == .invited)
        #expect(try await roles.assign(app: "main", userID: p.appAdmin.id, name: "viewer", by: .operator) == .assigned)
        await #expect(throws: DataError.self) { try await f.users.accept(app: "main", userID: p.appAdmin.id) }
        #expect(try await f.users.role(app: "main", userID: p.appAdmin.id) == .viewer)
    }

    @Test(arguments: Backend.available) func noOneDemotesOrRemovesThemselves(_ backend: Backend) async throws {
        let f = try await AuthFixture.make(backend)
        defer { Task { await f.close() } }
        let p = try await Self.people(f)
        let roles = RoleStore(database: f.store)
        let second = try await f.users.create(name: "ada", email: nil, password: nil, app: "other", role: .admin)
        // Another admin is there, so only the rule stops it: not by the store, nor by the role tools' path.
        await #expect(throws: DataError.self) { try await f.users.setRole(app: "other", userID: p.appAdmin.id, role: .member, by: .user(p.appAdmin.id)) }
        await #expect(throws: DataError.self) { try await roles.assign(app: "other", userID: p.appAdmin.id, name: "viewer", by: .user(p.appAdmin.id)) }
        await #expect(throws: DataError.self) { try await f.users.remove(userID: p.appAdmin.id, from: "other", by: .user(p.appAdmin.id)) }
        #expect(try await f.users.role(app: "other", userID: p.appAdmin.id) == .admin)
        // A member leaving is an admin's decision too; an admin setting their own role to admin is no change.
        await #expect(throws: DataError.self) { try await f.users.remove(userID: p.onlyInApp.id, from: "other", by: .user(p.onlyInApp.id)) }
        try await f.users.setRole(app: "other", userID: p.appAdmin.id, role: .admin, by: .user(p.appAdmin.id))
        // Another admin, and the operator, may.
        try await f.users.setRole(app: "other", userID: p.appAdmin.id, role: .member, by: .user(second.id))
        #expect(try await f.users.role(app: "other", userID: p.appAdmin.id) == .member)
        try await f.users.remove(userID: p.appAdmin.id, from: "other", by: .operator)
        #expect(try await f.users.role(app: "other", userID: p.appAdmin.id) == nil)
    }
}

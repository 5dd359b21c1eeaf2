import PorticoAuth
public import PorticoData
public import PorticoStore

/// The apps that exist (`portico_apps`, in the instance's database), each made with its own
/// database and removed with it.
public struct AppRegistry: Sendable {
    /// Each app's database (`main`'s is the instance's).
    public let databases: AppDatabases
    let clock: WallClock
    var database: any Database { databases.primary }

    public init(databases: AppDatabases, clock: WallClock = .system) {
        self.databases = databases
        self.clock = clock
    }

    /// The apps that exist, by name.
    public func names() async throws -> [String] {
        try await database.query("SELECT name FROM portico_apps ORDER BY name").compactMap { $0.string("name") }
    }

    /// Every app with the packages its endpoint may offer (`nil`: every package).
    public func offeredPackages() async throws -> [String: [String]?] {
        var apps: [String: [String]?] = [:]
        for row in try await database.query("SELECT name, packages FROM portico_apps") {
            guard let name = row.string("name") else { continue }
            // updateValue, because assigning nil through the subscript would remove the app.
            apps.updateValue(row.string("packages").map { $0.split(separator: ",").map(String.init) }, forKey: name)
        }
        return apps
    }

    /// Restricts the packages `app`'s endpoint offers (`nil`: every package); a request's
    /// `x-mcp-packages` or `?packages=` then only narrows this set.
    public func setOfferedPackages(_ app: String, _ packages: [String]?) async throws {
        var q = SQLFragment("UPDATE portico_apps SET packages = ")
        q.append(bind: packages.map { .text($0.joined(separator: ",")) } ?? .null)
        q.append(" WHERE name = ")
        q.append(bind: .text(app))
        q.append(" RETURNING name")
        guard try await !database.query(q).isEmpty else { throw DataError.notFound("there is no app '\(app)'") }
        database.changes.announce()
    }

    /// The setting that turns an app's confirmations off (`"off"`; absent: destructive tools ask).
    public static func confirmationsKey(_ app: String) -> String { "app." + app + ".confirm_destroy" }

    /// Whether `app`'s destructive tools ask before they act (the default), read by every replica
    /// on each destructive call.
    public func confirmsDestroy(_ app: String) async throws -> Bool {
        try await Settings(database: database).value(Self.confirmationsKey(app)) != "off"
    }

    /// Turns `app`'s confirmations on or off (off: for trusted automation).
    public func setConfirmsDestroy(_ app: String, _ confirms: Bool) async throws {
        guard try await names().contains(app) else { throw DataError.notFound("there is no app '\(app)'") }
        try await Settings(database: database).set(Self.confirmationsKey(app), confirms ? nil : "off")
    }

    /// An app's name: it is a path segment of its endpoint, a file name and a PostgreSQL schema, so
    /// 1 to 64 lower-case ASCII letters, digits, '-' and '_', starting with a letter or digit.
    public static func validateName(_ name: String) throws(DataError) {
        let allowed = name.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D || $0 == 0x5F }
        guard (1...64).contains(name.utf8.count), allowed, let first = name.utf8.first, first != 0x2D, first != 0x5F else {
            throw .invalid(
                "an app name is 1 to 64 lower-case ASCII letters, digits, '-' or '_', starting with a letter or digit (it is part of the endpoint's URL); got '\(name)'"
            )
        }
    }

    /// Creates an app (its name doubles as its title) and its database.
    public func create(_ name: String) async throws {
        try Self.validateName(name)
        var insert = SQLFragment("INSERT INTO portico_apps (name, title, created_at) VALUES (")
        insert.append(joining: [.bind(.text(name)), .bind(.text(name)), .bind(.int(clock.seconds))], separator: ", ")
        insert.append(")")
        try await database.execute(insert)
        _ = try await databases.database(app: name)
        database.changes.announce()
    }

    /// Removes an app: its OAuth grants (revoked, so tokens for its endpoint stop everywhere),
    /// its API keys (revoked, so an app made later under the name does not honour them), its
    /// memberships, roles, datasources and chats, then its database with every collection in it.
    public func remove(_ name: String) async throws {
        try await AuthorizationServer.revokeGrants(
            app: name, database: database, revocations: RevocationList(database: database, logger: database.logger, clock: clock), clock: clock)
        var keys = SQLFragment("UPDATE portico_api_keys SET revoked_at = ")
        keys.append(bind: .int(clock.seconds))
        keys.append(" WHERE revoked_at IS NULL AND app = ")
        keys.append(bind: .text(name))
        try await database.execute(keys)
        var delete = SQLFragment("DELETE FROM portico_apps WHERE name = ")
        delete.append(bind: .text(name))
        try await database.execute(delete)
        try await Settings(database: database).set(Self.confirmationsKey(name), nil)
        try await databases.remove(app: name)
        database.changes.announce()
    }

    /// How many users belong to the app.
    public func memberCount(app: String) async throws -> Int64 {
        var q = SQLFragment("SELECT COUNT(*) AS n FROM portico_app_users WHERE app = ")
        q.append(bind: .text(app))
        return try await database.query(q).first?.int("n") ?? 0
    }
}

public import Logging
import PorticoAuth
import PorticoBase
import PorticoData
import PorticoDemo
import PorticoStore

/// What a first demo start created; the password and key are shown once.
public struct DemoCredentials: Sendable {
    public var created: Bool
    public var adminName: String
    public var adminPassword: String?
    public var apiKey: String?
}

/// `--demo`: the Chinook collections, an `admin` user and an API key, created once.
public enum DemoSetup {
    /// In one transaction that holds the migration lock, so replicas started together with
    /// `--demo` on one PostgreSQL database install it once.
    public static func ensure(stores: PorticoStores, logger: Logger) async throws -> DemoCredentials {
        let credentials = try await stores.database.transaction { db in
            if let lock = db.flavor.migrationLock { try await db.execute(lock) }
            var credentials = DemoCredentials(created: false, adminName: "admin")
            if try await !DemoData.isInstalled(catalogs: stores.catalogs) {
                try await DemoData.install(catalogs: stores.catalogs, logger: logger)
                credentials.created = true
            }
            if try await stores.users.find(name: "admin") == nil {
                let password = Secrets.random(20)
                let admin = try await stores.users.create(name: "admin", email: nil, password: password, role: .admin)
                let (_, token) = try await stores.apiKeys.create(userID: admin.id, name: "demo", scopes: nil, expiresIn: nil)
                credentials.adminPassword = password
                credentials.apiKey = token
                credentials.created = true
            }
            return credentials
        }
        // Announced once committed, so no cache anywhere keeps the catalog as it was before.
        if credentials.created { stores.database.changes.announce() }
        return credentials
    }
}

public import AsyncHTTPClient
import Foundation
public import Logging
public import PorticoAsk
public import PorticoAuth
public import PorticoBase
public import PorticoData
public import PorticoStore

/// Portico's stores over one database, shared by the server and the command line.
public struct PorticoStores: Sendable {
    public let database: any Database
    public let settings: Settings
    /// The apps and each app's database (`main`'s is `database`).
    public let apps: AppRegistry
    public let catalogs: CatalogStore
    public let records: RecordService
    public let users: UserStore
    /// Each app's roles and their permissions.
    public let roles: RoleStore
    public let apiKeys: APIKeyStore
    /// The time expiry is judged by.
    public let clock: WallClock

    /// Opens Portico's database and brings its schema up to date: PostgreSQL at `databaseURL`
    /// when one is given, else the embedded database in `dataDirectory` (created if needed; the
    /// directory and the file are readable by their owner only). The data directory also holds
    /// the master key when none is in the environment, and chart images.
    public static func open(
        dataDirectory: String, databaseURL: String? = nil, options: SQLiteStore.Options = SQLiteStore.Options(),
        postgresOptions: PostgresStore.Options = PostgresStore.Options(), migrate: Bool = true, clock: WallClock = .system, logger: Logger
    ) async throws -> PorticoStores {
        try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: dataDirectory)
        let store: any Database
        let layout: AppDatabases.Layout
        if let databaseURL {
            store = try PostgresStore(url: databaseURL, options: postgresOptions, logger: logger)
            layout = .schemas(url: databaseURL, options: postgresOptions)
        } else {
            store = try SQLiteStore(path: databasePath(dataDirectory: dataDirectory), options: options, logger: logger)
            layout = .files(directory: dataDirectory, options: options)
        }
        do {
            if migrate {
                try await Migrator().migrate(store)
                try await store.transaction { db in
                    if let lock = db.flavor.migrationLock { try await db.execute(lock) }
                    try await CatalogStore.addUpdatedBy(db: db)
                }
            }
        } catch {
            await store.close()
            throw error
        }
        return PorticoStores(database: store, apps: AppDatabases(primary: store, layout: layout, logger: logger), clock: clock)
    }

    /// The stores of the instance `configuration` names, with its database options and clock: how
    /// the instance and the command line's admin commands both open them.
    public static func open(_ configuration: InstanceConfiguration, migrate: Bool = true, logger: Logger) async throws -> PorticoStores {
        var options = SQLiteStore.Options()
        options.inlineReadBudget = configuration.inlineReadBudget
        var postgresOptions = PostgresStore.Options()
        postgresOptions.poolSize = configuration.databasePoolSize
        return try await open(
            dataDirectory: configuration.dataDirectory, databaseURL: configuration.databaseURL, options: options, postgresOptions: postgresOptions,
            migrate: migrate, clock: configuration.clock, logger: logger)
    }

    /// Where an app's `main` datasource reads its own collections: the app's file, or the
    /// PostgreSQL database with the app's schema as its search path.
    func mainDatabase(app: String) -> MainDatabase {
        let (flavor, location, schema) = apps.databases.location(app: app)
        switch flavor {
        case .sqlite: return MainDatabase(kind: .sqlite, location: location)
        case .postgres: return MainDatabase(kind: .postgres, location: schema.map { PostgresURL.withSearchPath(location, schema: $0) } ?? location)
        }
    }

    /// The embedded database's file in `dataDirectory`.
    public static func databasePath(dataDirectory: String) -> String {
        URL(fileURLWithPath: dataDirectory).appendingPathComponent("portico.sqlite").path
    }

    public init(database: any Database, apps: AppDatabases, clock: WallClock = .system) {
        self.database = database
        self.clock = clock
        self.apps = AppRegistry(databases: apps, clock: clock)
        settings = Settings(database: database)
        catalogs = CatalogStore(databases: apps)
        records = RecordService(catalogs: catalogs, clock: clock)
        users = UserStore(database: database, clock: clock)
        roles = RoleStore(database: database, clock: clock)
        apiKeys = APIKeyStore(database: database, users: users, clock: clock)
    }

    /// Closes every app's database, then the instance's.
    public func close() async {
        await apps.databases.close()
        await database.close()
    }

    /// The secret that signs MCP session ids: created once, stored sealed with the master key,
    /// shared by every replica.
    public func sessionSecret(masterKey: MasterKey) async throws -> [UInt8] {
        let purpose = "portico.mcp-session-secret"
        let sealed = try await settings.valueOrCreate("mcp.session_secret") { try masterKey.seal(Secrets.randomBytes(32), purpose: purpose) }
        return try masterKey.open(sealed, purpose: purpose)
    }
}

extension PorticoStores {
    /// The Ask pipeline over this data directory: its datasources (`main` reads the app's own
    /// collections), the configured LLMs and the chats; images go to `images` when given.
    public func askService(
        masterKey: MasterKey, client: HTTPClient, images: ImageStore?, limits: DatasourceService.Limits = DatasourceService.Limits()
    ) -> AskService {
        let catalogs = self.catalogs
        let datasources = DatasourceService(
            store: DatasourceStore(database: database, masterKey: masterKey), main: { [self] app in mainDatabase(app: app) },
            mainTables: { app in
                try await catalogs.catalog(app: app).collections.values.map { collection in
                    // A title that says more than the name is worth a comment; one that repeats it is not.
                    func note(_ title: String?, _ name: String) -> String? {
                        guard let title, !title.isEmpty, title.lowercased() != name.lowercased() else { return nil }
                        return title
                    }
                    return DatasourceService.CatalogNote(
                        table: collection.tableName, comment: note(collection.title, collection.tableName),
                        columns: Dictionary(
                            collection.columns.compactMap { field in note(field.title, field.name).map { (field.name, $0) } },
                            uniquingKeysWith: { first, _ in first }))
                }
            }, limits: limits)
        return AskService(
            datasources: datasources, catalogs: catalogs, llms: LLMStore(database: database), chats: ChatStore(database: database),
            knowledge: KnowledgeStore(databases: { [apps] app in try await apps.databases.database(app: app) }), images: images, client: client)
    }
}

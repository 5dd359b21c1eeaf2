public import AsyncHTTPClient
import Foundation
public import Logging
public import PorticoAsk
public import PorticoAuth
public import PorticoData

/// Portico's stores over one database, shared by the server and the command line.
public struct PorticoStores: Sendable {
    public let database: any Database
    public let settings: Settings
    public let catalogs: CatalogStore
    public let records: RecordService
    public let users: UserStore
    public let apiKeys: APIKeyStore

    /// Opens Portico's database and brings its schema up to date: PostgreSQL at `databaseURL`
    /// when one is given, else the embedded database in `dataDirectory` (created if needed; the
    /// directory and the file are readable by their owner only). The data directory also holds
    /// the master key when none is in the environment, and chart images.
    public static func open(
        dataDirectory: String, databaseURL: String? = nil, options: SQLiteStore.Options = SQLiteStore.Options(),
        postgresOptions: PostgresStore.Options = PostgresStore.Options(), migrate: Bool = true, logger: Logger
    ) async throws -> PorticoStores {
        try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: dataDirectory)
        let store: any Database
        if let databaseURL {
            store = try PostgresStore(url: databaseURL, options: postgresOptions, logger: logger)
        } else {
            store = try SQLiteStore(path: databasePath(dataDirectory: dataDirectory), options: options, logger: logger)
        }
        do {
            if migrate { try await Migrator().migrate(store) }
        } catch {
            await store.close()
            throw error
        }
        return PorticoStores(database: store)
    }

    /// Where the `main` datasource reads the app's own collections.
    func mainDatabase(dataDirectory: String) -> MainDatabase {
        if let postgres = database as? PostgresStore { return MainDatabase(kind: .postgres, location: postgres.url) }
        return MainDatabase(kind: .sqlite, location: Self.databasePath(dataDirectory: dataDirectory))
    }

    /// The embedded database's file in `dataDirectory`.
    public static func databasePath(dataDirectory: String) -> String {
        URL(fileURLWithPath: dataDirectory).appendingPathComponent("portico.sqlite").path
    }

    public init(database: any Database) {
        self.database = database
        settings = Settings(database: database)
        catalogs = CatalogStore(database: database)
        records = RecordService(database: database, catalogs: catalogs)
        users = UserStore(database: database)
        apiKeys = APIKeyStore(database: database, users: users)
    }

    /// The secret that signs MCP session ids: created once, stored sealed with the master key,
    /// shared by every replica.
    public func sessionSecret(masterKey: MasterKey) async throws -> [UInt8] {
        let purpose = "portico.mcp-session-secret"
        let sealed = try await settings.valueOrCreate("mcp.session_secret") { try masterKey.seal(Secrets.randomBytes(32), purpose: purpose) }
        return try masterKey.open(sealed, purpose: purpose)
    }

    /// Creates an app (its name doubles as its title).
    public func createApp(_ name: String) async throws {
        var insert = SQLFragment("INSERT INTO portico_apps (name, title, created_at) VALUES (")
        insert.append(joining: [.bind(.text(name)), .bind(.text(name)), .bind(.int(Int64(Date().timeIntervalSince1970)))], separator: ", ")
        insert.append(")")
        try await database.execute(insert)
    }

    /// The apps that exist.
    public func appNames() async throws -> [String] {
        try await database.query("SELECT name FROM portico_apps ORDER BY name").compactMap { $0.string("name") }
    }
}

extension PorticoStores {
    /// The Ask pipeline over this data directory: its datasources (`main` reads the app's own
    /// collections), the configured LLMs and the chats; images go to `images` when given.
    public func askService(masterKey: MasterKey, dataDirectory: String, client: HTTPClient, images: ImageStore?) -> AskService {
        let catalogs = self.catalogs
        let datasources = DatasourceService(
            store: DatasourceStore(database: database, masterKey: masterKey), main: mainDatabase(dataDirectory: dataDirectory),
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
            })
        return AskService(datasources: datasources, llms: LLMStore(database: database), chats: ChatStore(database: database), images: images, client: client)
    }
}

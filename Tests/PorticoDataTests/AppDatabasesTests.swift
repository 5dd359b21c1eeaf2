import Foundation
import Logging
import PorticoJSON
import PorticoStore
import PorticoTestSupport
import Testing

@testable import PorticoData

/// Each app's collections in a database of its own: a file per app on SQLite, a schema per app
/// on PostgreSQL.
@Suite struct AppDatabasesTests {
    let logger = Logger(label: "test")

    /// A migrated instance database with apps `eu` and `us`, and the provider over it.
    func make(_ backend: Backend) async throws -> (URL, AppDatabases) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("portico-apps-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let primary: any Database
        let layout: AppDatabases.Layout
        switch backend {
        case .sqlite:
            primary = try SQLiteStore(path: directory.appendingPathComponent("portico.sqlite").path, logger: logger)
            layout = .files(directory: directory.path, options: SQLiteStore.Options())
        case .postgres:
            let url = try await Backend.freshPostgresDatabase()
            primary = try PostgresStore(url: url, options: Backend.postgresOptions, logger: logger)
            layout = .schemas(url: url, options: PostgresStore.Options())
        }
        try await Migrator().migrate(primary)
        try await primary.execute("INSERT INTO portico_apps (name, title, created_at) VALUES ('eu', 'eu', 0), ('us', 'us', 0)")
        return (directory, AppDatabases(primary: primary, layout: layout, logger: logger))
    }

    static let deal = CollectionSchema(
        name: "deal", tableName: "deal",
        fields: [
            Field(name: "id", type: .integer, nullable: false, primaryKey: true, autoIncrement: true),
            Field(name: "title", type: .string, nullable: false),
        ])

    func create(_ records: RecordService, app: String, title: String) async throws {
        var request = RecordRequest(resource: "deal")
        request.values = ["title": .string(title)]
        _ = try await records.create(app: app, request, access: .unrestricted)
    }

    func titles(_ records: RecordService, app: String) async throws -> [String] {
        let result = try await records.list(app: app, RecordRequest(resource: "deal"), access: .unrestricted)
        return result["data"]?.arrayValue?.compactMap { $0["title"]?.stringValue } ?? []
    }

    @Test(arguments: Backend.available)
    func collectionsOfTheSameNameInTwoAppsHoldTheirOwnRows(_ backend: Backend) async throws {
        let (directory, apps) = try await make(backend)
        let catalogs = CatalogStore(databases: apps)
        let records = RecordService(catalogs: catalogs)
        try await catalogs.create(app: "eu", collections: [Self.deal])
        try await catalogs.create(app: "us", collections: [Self.deal])
        try await create(records, app: "eu", title: "Berlin")
        try await create(records, app: "us", title: "Boston")
        try await create(records, app: "us", title: "Austin")
        #expect(try await titles(records, app: "eu") == ["Berlin"])
        #expect(try await titles(records, app: "us").sorted() == ["Austin", "Boston"])
        // main's catalog and the instance's database know nothing of either.
        #expect(try await catalogs.catalog(app: "main").collections.isEmpty)
        await #expect(throws: DataError.self) { try await titles(records, app: "main") }
        let primaryTables: [Row]
        switch backend {
        case .sqlite:
            primaryTables = try await apps.primary.query("SELECT name FROM sqlite_master WHERE name = 'deal'")
            #expect(FileManager.default.fileExists(atPath: AppDatabases.filePath(directory: directory.path, app: "eu")))
            #expect(FileManager.default.fileExists(atPath: AppDatabases.filePath(directory: directory.path, app: "us")))
        case .postgres:
            primaryTables = try await apps.primary.query(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_name = 'deal'")
            let schemas = try await apps.primary.query(
                "SELECT table_schema::text AS s FROM information_schema.tables WHERE table_name = 'deal' ORDER BY table_schema")
            #expect(schemas.compactMap { $0.string("s") } == ["app_eu", "app_us"])
        }
        #expect(primaryTables.isEmpty, "the instance's database has no table of another app")
        await apps.close()
        await apps.primary.close()
    }

    @Test(arguments: Backend.available)
    func aRemovedAppLeavesNothingAndAnUnknownAppIsRefused(_ backend: Backend) async throws {
        let (directory, apps) = try await make(backend)
        let catalogs = CatalogStore(databases: apps)
        let records = RecordService(catalogs: catalogs)
        try await catalogs.create(app: "eu", collections: [Self.deal])
        try await create(records, app: "eu", title: "Berlin")
        try await apps.remove(app: "eu")
        catalogs.invalidate(app: "eu")
        switch backend {
        case .sqlite:
            #expect(!FileManager.default.fileExists(atPath: AppDatabases.filePath(directory: directory.path, app: "eu")))
        case .postgres:
            let left = try await apps.primary.query("SELECT 1 AS x FROM information_schema.schemata WHERE schema_name = 'app_eu'")
            #expect(left.isEmpty, "the app's schema is dropped with its tables")
        }
        // Opened again (the app still listed), it is a new, empty database.
        #expect(try await catalogs.catalog(app: "eu").collections.isEmpty)
        do {
            _ = try await apps.database(app: "nowhere")
            Issue.record("an app that does not exist got a database")
        } catch let error as DataError {
            #expect(error.kind == .notFound && error.message.contains("there is no app named 'nowhere'"), "\(error)")
        }
        if backend == .sqlite {
            #expect(!FileManager.default.fileExists(atPath: AppDatabases.filePath(directory: directory.path, app: "nowhere")))
        }
        await #expect(throws: DataError.self) { try await apps.remove(app: "main") }
        await apps.close()
        await apps.primary.close()
    }

    /// A running server reads an app's tables in a transaction (its catalog, a record with its
    /// relations) while `portico app remove` drops the app from another process. Dropping takes
    /// the tables one by one, so PostgreSQL may find the two waiting on each other and abort one;
    /// the removal then tries again and succeeds. Both orders of the reader's tables are tried.
    @Test(arguments: Backend.available)
    func removingAnAppWhileAnotherProcessReadsItSucceeds(_ backend: Backend) async throws {
        for order in [["lead", "deal"], ["deal", "lead"]] {
            let (_, remover) = try await make(backend)
            let server = AppDatabases(primary: remover.primary, layout: remover.layout, logger: logger)
            var lead = Self.deal
            lead.name = "lead"
            lead.tableName = "lead"
            try await CatalogStore(databases: server).create(app: "eu", collections: [Self.deal, lead])
            let eu = try await server.database(app: "eu")
            let reader = Task {
                try await eu.transaction { db in
                    _ = try await db.query("SELECT COUNT(*) AS n FROM \(order[0])")
                    try await Task.sleep(for: .milliseconds(400))
                    _ = try await db.query("SELECT COUNT(*) AS n FROM \(order[1])")
                    try await Task.sleep(for: .milliseconds(200))
                }
            }
            try await Task.sleep(for: .milliseconds(150))
            do {
                try await remover.remove(app: "eu")
            } catch {
                Issue.record("reading \(order): the removal failed beside a reader: \(error)")
            }
            _ = try? await reader.value
            await server.close()
            await remover.close()
            await remover.primary.close()
        }
    }

    @Test func longAppNamesGetDistinctSchemasWithinPostgreSQLsLimit() {
        let long = String(repeating: "a", count: 64)
        let other = String(repeating: "a", count: 63) + "b"
        #expect(AppDatabases.schemaName(app: "eu") == "app_eu")
        #expect(AppDatabases.schemaName(app: long).utf8.count <= 63)
        #expect(AppDatabases.schemaName(app: other).utf8.count <= 63)
        #expect(AppDatabases.schemaName(app: long) != AppDatabases.schemaName(app: other))
        let accented = String(repeating: "é", count: 40)
        #expect(AppDatabases.schemaName(app: accented).utf8.count <= 63)
    }

    @Test func searchPathsTravelInTheURLsOptions() throws {
        let url = PostgresURL.withSearchPath("postgres://u:p@db:5432/portico?sslmode=disable", schema: "app_eu")
        #expect(PostgresURL.searchPath(url) == "app_eu")
        _ = try PostgresURL.configuration(url)
        #expect(PostgresURL.searchPath("postgres://u@db/portico") == nil)
        #expect(throws: PostgresURL.Invalid.self) { try PostgresURL.configuration("postgres://u@db/p?options=search_path%3Dx") }
    }
}

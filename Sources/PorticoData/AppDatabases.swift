import Foundation
public import Logging
public import PorticoStore
import Synchronization

/// Where each app's collections live: the app → database provider. App `main` keeps its
/// collections in the instance's own database (beside Portico's tables, where they have always
/// been); every other app has a database of its own — a file `apps/<app>.sqlite` in the data
/// directory on SQLite, a schema `app_<app>` on PostgreSQL, reached through a pool whose
/// `search_path` names that schema only. An app's database holds its collections' tables and
/// their definitions (`portico_collections`, `portico_fields`), what the app taught its question
/// engines (`KnowledgeTables`), so a schema change is one
/// transaction in one database, and no SQL Portico builds for one app can name another's table.
public final class AppDatabases: Sendable {
    public enum Layout: Sendable {
        /// One SQLite file per app in `directory`.
        case files(directory: String, options: SQLiteStore.Options)
        /// One schema per app in the PostgreSQL database at `url`.
        case schemas(url: String, options: PostgresStore.Options)
        /// Every app's collections in the instance's database (tests of the data layer alone).
        case shared
    }

    /// The instance's database, which is also app `main`'s.
    public let primary: any Database
    public let layout: Layout
    let logger: Logger
    /// Each open app database, with its file's identity on SQLite (a file removed and made again
    /// by another process, `portico app remove` then `create`, is a new database).
    private let opened = Mutex<[String: (database: any Database, file: FileIdentity?)]>([:])

    public init(primary: any Database, layout: Layout, logger: Logger) {
        self.primary = primary
        self.layout = layout
        self.logger = logger
    }

    /// The app's database, opened on first use (and made, with its definition tables, if it is
    /// not there yet: `portico app create` makes it, an import or another replica may not have).
    public func database(app: String) async throws -> any Database {
        if app == Self.mainApp { return primary }
        if case .shared = layout { return primary }
        if let open = opened.withLock({ $0[app] }) {
            guard case .files(let directory, _) = layout, open.file != FileIdentity(path: Self.filePath(directory: directory, app: app)) else {
                return open.database
            }
            // The file this process opened was removed (and perhaps made again) by another.
            let stale = opened.withLock { opened -> (any Database)? in
                guard let current = opened[app], current.file == open.file else { return nil }
                return opened.removeValue(forKey: app)?.database
            }
            await stale?.close()
        }
        var exists = SQLFragment("SELECT 1 AS present FROM portico_apps WHERE name = ")
        exists.append(bind: .text(app))
        guard try await !primary.query(exists).isEmpty else {
            throw DataError.notFound("there is no app named '\(app)'; `portico app list` shows the apps")
        }
        let database = try open(app: app)
        do {
            try await prepare(database, app: app)
        } catch {
            await database.close()
            throw error
        }
        var file: FileIdentity?
        if case .files(let directory, _) = layout { file = FileIdentity(path: Self.filePath(directory: directory, app: app)) }
        let (kept, extra) = opened.withLock { opened -> (any Database, (any Database)?) in
            if let other = opened[app] { return (other.database, database) }
            opened[app] = (database, file)
            return (database, nil)
        }
        if let extra { await extra.close() }
        return kept
    }

    /// Closes and deletes the app's database: its file, or its schema with every table in it.
    public func remove(app: String) async throws {
        guard app != Self.mainApp else { throw DataError.invalid("app 'main' always exists; it cannot be removed") }
        let open = opened.withLock { $0.removeValue(forKey: app) }
        await open?.database.close()
        switch layout {
        case .files(let directory, _):
            let path = Self.filePath(directory: directory, app: app)
            for suffix in ["", "-wal", "-shm", "-changes"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        case .shared:
            break
        case .schemas:
            // Dropping locks the schema's tables one at a time, so a running server reading two of
            // them in one transaction can wait on it while it waits on the server; PostgreSQL then
            // aborts one of the two. Dropping is idempotent: it tries again after a pause.
            let drop = "DROP SCHEMA IF EXISTS \(SQLFragment.quote(Self.schemaName(app: app))) CASCADE"
            for attempt in 1... {
                do {
                    try await primary.execute(drop)
                    return
                } catch let error as StoreError where error.kind == .busy && attempt < Self.dropAttempts {
                    logger.notice("dropping an app's schema met a concurrent transaction; trying again", metadata: ["app": "\(app)", "error": "\(error)"])
                    try await Task.sleep(for: .milliseconds(100 << attempt))
                }
            }
        }
    }

    /// How many times dropping an app's schema is tried when it deadlocks with another transaction.
    static let dropAttempts = 5

    /// Where the app's database is, for the `main` datasource that reads it: its file, or the
    /// PostgreSQL URL with its schema.
    public func location(app: String) -> (kind: SQLFlavor, location: String, schema: String?) {
        switch layout {
        case .files(let directory, _):
            let path = app == Self.mainApp ? (primary as? SQLiteStore)?.path ?? "" : Self.filePath(directory: directory, app: app)
            return (.sqlite, path, nil)
        case .schemas(let url, _):
            return (.postgres, url, app == Self.mainApp ? nil : Self.schemaName(app: app))
        case .shared:
            return (primary.flavor, (primary as? SQLiteStore)?.path ?? (primary as? PostgresStore)?.url ?? "", nil)
        }
    }

    public func close() async {
        let all = opened.withLock { opened in
            defer { opened.removeAll() }
            return opened.values.map(\.database)
        }
        for database in all { await database.close() }
    }

    static let mainApp = "main"

    /// `apps/<app>.sqlite` in the data directory (app names are letters, digits, `-` and `_`).
    public static func filePath(directory: String, app: String) -> String {
        URL(fileURLWithPath: directory).appendingPathComponent("apps").appendingPathComponent("\(app).sqlite").path
    }

    /// `app_<app>`; a name too long for PostgreSQL's 63-byte identifiers keeps its start and
    /// gains a digest of the whole, so two long names never share a schema.
    public static func schemaName(app: String) -> String {
        let plain = "app_" + app
        guard plain.utf8.count > 63 else { return plain }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in app.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        var prefix = ""
        for character in plain where prefix.utf8.count + character.utf8.count <= 46 { prefix.append(character) }
        return prefix + "_" + String(hash, radix: 16)
    }

    func open(app: String) throws -> any Database {
        switch layout {
        case .files(let directory, var options):
            let folder = URL(fileURLWithPath: directory).appendingPathComponent("apps").path
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            // An app's file serves fewer callers than the instance's: fewer reader threads.
            options.readers = min(options.readers, 2)
            options.inlineReaders = min(options.inlineReaders, 2)
            return try SQLiteStore(path: Self.filePath(directory: directory, app: app), options: options, logger: logger)
        case .schemas(let url, var options):
            options.searchPath = Self.schemaName(app: app)
            options.poolSize = max(2, options.poolSize / 2)
            let store = try PostgresStore(url: url, options: options, changes: primary.changes, logger: logger)
            // Only the instance's store listens; it tells the app's when the database goes away.
            (primary as? PostgresStore)?.shareOutages(with: store)
            return store
        case .shared:
            return primary
        }
    }

    /// Makes the app's schema (on PostgreSQL) and its definition tables, once, under the
    /// migration lock so replicas opening it together do not race.
    func prepare(_ database: any Database, app: String) async throws {
        if case .schemas = layout {
            try await primary.transaction { db in
                if let lock = db.flavor.migrationLock { try await db.execute(lock) }
                try await db.execute("CREATE SCHEMA IF NOT EXISTS \(SQLFragment.quote(Self.schemaName(app: app)))")
            }
        }
        try await database.transaction { db in
            if let lock = db.flavor.migrationLock { try await db.execute(lock) }
            for statement in Self.definitionTables + AuditTrail.createTable(flavor: db.flavor) + KnowledgeTables.create(flavor: db.flavor)
                + WorkflowTables.create(flavor: db.flavor) + TaskRecords.create
            {
                try await db.execute(statement)
            }
            // Databases made before collections had descriptions gain the column.
            try await Migrator.addColumnIfMissing(db, table: "portico_collections", column: "description", type: "TEXT")
            try await Migrator.addColumnIfMissing(db, table: "portico_executions", column: "takeovers", type: "INTEGER NOT NULL DEFAULT 0")
            try await CatalogStore.addUpdatedBy(db: db)
            // Databases made before the audit trail was kept in batches move their rows into batches.
            if try await !db.columnTypes(of: "portico_audit").isEmpty {
                for statement in AuditTrail.batchesFromRows(flavor: db.flavor) { try await db.execute(statement) }
            }
        }
    }

    /// The collections' definitions in an app's own database: the instance's tables of the same
    /// names, without the reference to `portico_apps` (which lives in the instance's database).
    static let definitionTables = [
        """
        CREATE TABLE IF NOT EXISTS portico_collections (app TEXT NOT NULL, name TEXT NOT NULL,
          title TEXT, table_name TEXT NOT NULL, created_at BIGINT NOT NULL, description TEXT, PRIMARY KEY (app, name))
        """,
        """
        CREATE TABLE IF NOT EXISTS portico_fields (app TEXT NOT NULL, collection TEXT NOT NULL, name TEXT NOT NULL, position INTEGER NOT NULL,
          definition TEXT NOT NULL, PRIMARY KEY (app, collection, name),
          FOREIGN KEY (app, collection) REFERENCES portico_collections (app, name) ON DELETE CASCADE)
        """,
    ]
}

/// A file's device and inode: the same path naming a new file has a new identity.
public struct FileIdentity: Equatable, Sendable {
    let device: UInt64
    let inode: UInt64

    /// The file at `path` now; nil when there is none.
    public init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}

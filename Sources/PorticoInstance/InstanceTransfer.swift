import Foundation
import PorticoBase
import PorticoData
import PorticoJSON
import PorticoStore

/// Moves a whole instance from one database to another (a laptop's SQLite file to PostgreSQL,
/// or back): `export` writes every row Portico keeps — its own tables and the collections'
/// tables — as JSON lines; `importing` loads them into a database that has nothing yet. Secrets
/// travel as they are stored (hashed, or sealed with the master key), so the target must be
/// served with the same master key.
public enum InstanceTransfer {
    /// Portico's own tables, in an order that satisfies their foreign keys. Sign-in failures are
    /// left behind (they expire in minutes); collections' definitions travel as rows here, and
    /// their tables are created from them in the target's flavor.
    static let ownTables =
        [
            "portico_settings", "portico_apps", "portico_roles", "portico_users", "portico_user_details", "portico_app_users", "portico_invitations",
            "portico_api_keys",
            "portico_oauth_clients", "portico_oauth_grants", "portico_oauth_codes", "portico_oauth_refresh_tokens", "portico_signing_keys",
            "portico_web_sessions", "portico_revocations", "portico_ended_session_batches", "portico_datasources", "portico_llms", "portico_chats",
            "portico_chat_records",
            "portico_collections", "portico_fields",
        ] + KnowledgeTables.names + WorkflowTables.names
    /// Portico's tables that stay behind, each for its reason; with `ownTables` they are every table
    /// the migrations make (a test holds the lists to the migrations, so a new table needs a decision).
    public static let leftBehind: [String: String] = [
        "portico_migrations": "the target's own migrations write it",
        "portico_login_failures": "sign-in failures expire in minutes",
        "portico_rate_counters": "rate counts last a minute, daily quotas a day",
        "portico_images": "chart images expire, and answers draw them again",
        "portico_audit_batches": "the record of what was called on this instance; read it with `portico audit --json`",
        "portico_tasks": "a task's result is kept an hour at most, for the client that is polling it",
    ]
    /// The tables of Portico's in an app's own database.
    static let appTables = ["portico_collections", "portico_fields"] + KnowledgeTables.names + WorkflowTables.names
    /// Integer keys assigned by the database, caught up after the rows are in.
    static let ownKeys = [("portico_users", "id"), ("portico_chats", "id"), ("portico_chat_records", "id"), ("portico_ended_session_batches", "id")]
    static let rowsPerLine = 500
    static let format = "portico-export"

    public struct Summary: Sendable {
        public var tables = 0
        public var rows = 0
    }

    /// Writes the instance to `write`, one JSON object per line: a header, then each table's
    /// columns and rows in chunks.
    public static func export(_ stores: PorticoStores, write: (String) throws -> Void) async throws -> Summary {
        let database = stores.database
        let version = try await database.query("SELECT MAX(version) AS v FROM portico_migrations").first?.int("v") ?? 0
        try write(JSON.object(["format": .string(format), "version": 1, "migration": .int(version)]).serializedString)
        var summary = Summary()
        // The instance's own tables and app main's collections, in the instance's database; then each
        // other app's definitions and collections, from its own database, marked with the app.
        var groups: [(app: String?, database: any Database, tables: [String])] = []
        let mainCatalog = try await stores.catalogs.catalog(app: "main")
        groups.append((nil, database, ownTables + CatalogStore.dependencyOrder(Array(mainCatalog.collections.values)).map(\.tableName)))
        for app in try await stores.apps.names() where app != "main" {
            let catalog = try await stores.catalogs.catalog(app: app)
            let own = (catalog.database as AnyObject) === (database as AnyObject) ? [] : appTables
            groups.append((app, catalog.database, own + CatalogStore.dependencyOrder(Array(catalog.collections.values)).map(\.tableName)))
        }
        for (app, source, tables) in groups {
            for table in tables {
                var select = SQLFragment("SELECT * FROM ")
                select.append(identifier: table)
                let rows = try await source.query(select)
                summary.tables += 1
                summary.rows += rows.count
                let columns = rows.first?.columns ?? []
                var start = 0
                repeat {
                    let chunk = rows[start..<min(start + rowsPerLine, rows.count)]
                    var line: JSONObject = [
                        "table": .string(table), "columns": JSON(columns),
                        "rows": .array(chunk.map { row in .array(row.values.map(\.json)) }),
                    ]
                    if let app { line["app"] = .string(app) }
                    try write(JSON.object(line).serializedString)
                    start += rowsPerLine
                } while start < rows.count
            }
        }
        return summary
    }

    public struct ImportError: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// Loads an export into `stores`, whose database must hold no users and no collections yet
    /// (just migrated). All or nothing: one transaction.
    public static func importing(_ stores: PorticoStores, lines: some Sequence<String>) async throws -> Summary {
        let database = stores.database
        let users = try await database.query("SELECT COUNT(*) AS n FROM portico_users").first?.int("n") ?? 0
        let collections = try await database.query("SELECT COUNT(*) AS n FROM portico_collections").first?.int("n") ?? 0
        guard users == 0, collections == 0 else {
            throw ImportError(
                description:
                    "the target already has \(users) users and \(collections) collections; import into a new, empty database (it is migrated when first opened)"
            )
        }
        var parsed: [Chunk] = []
        var sawHeader = false
        for (index, line) in lines.enumerated() where !line.trimmingSpaces().isEmpty {
            let json: JSON
            do {
                json = try JSONParser.parse(line, maxDepth: 64)
            } catch {
                throw ImportError(description: "line \(index + 1) is not JSON: \(error)")
            }
            if json["format"]?.stringValue == format {
                sawHeader = true
                continue
            }
            guard sawHeader else { throw ImportError(description: "the file does not start with a Portico export header; make it with `portico export FILE`") }
            guard let table = json["table"]?.stringValue, let columns = json["columns"]?.arrayValue?.compactMap(\.stringValue),
                let rows = json["rows"]?.arrayValue?.compactMap(\.arrayValue)
            else { throw ImportError(description: "line \(index + 1) is not a table chunk ({table, columns, rows})") }
            let app = json["app"]?.stringValue
            guard table.hasPrefix("portico_") ? (app == nil ? ownTables : appTables).contains(table) : true else {
                throw ImportError(description: "line \(index + 1) names an unknown table of Portico's, \(table)")
            }
            guard rows.allSatisfy({ $0.count == columns.count }) else {
                throw ImportError(description: "line \(index + 1): a row of \(table) does not have its \(columns.count) columns")
            }
            parsed.append(Chunk(app: app, table: table, columns: columns, rows: rows))
        }
        guard sawHeader else { throw ImportError(description: "the file is empty; make it with `portico export FILE`") }
        let chunks = parsed.filter { $0.app == nil }
        var summary = try await database.transaction { db in
            // What the migrations wrote (the main app, settings) gives way to what was exported.
            for table in ["portico_apps", "portico_settings", "portico_signing_keys", "portico_revocations", "portico_ended_session_batches"] {
                try await db.execute("DELETE FROM \(table)")
            }
            let summary = try await load(chunks, app: "main", into: db, stores: stores)
            // An export made before ended sessions were kept in batches has them as rows.
            for statement in Migrator.endedSessionsFromRows(flavor: db.flavor) { try await db.execute(statement) }
            // Keys the database assigns continue after the imported ones.
            for (table, column) in ownKeys {
                if let catchUp = db.flavor.keyCatchUp(table: table, column: column) { try await db.execute(catchUp) }
            }
            return summary
        }
        // Each other app into its own database, one transaction each.
        var apps: [String] = []
        for chunk in parsed { if let app = chunk.app, !apps.contains(app) { apps.append(app) } }
        for app in apps {
            let appChunks = parsed.filter { $0.app == app }
            let appDatabase = try await stores.apps.databases.database(app: app)
            let loaded = try await appDatabase.transaction { db in try await load(appChunks, app: app, into: db, stores: stores) }
            summary.tables += loaded.tables
            summary.rows += loaded.rows
        }
        for app in try await stores.apps.names() { stores.catalogs.invalidate(app: app) }
        database.changes.announce()
        return summary
    }

    struct Chunk: Sendable {
        var app: String?
        var table: String
        var columns: [String]
        var rows: [[JSON]]
    }

    /// Inserts the chunks into `db` (inside its transaction): the definitions first, then the
    /// app's collection tables made from them, then their rows, with their keys caught up.
    static func load(_ chunks: [Chunk], app: String, into db: any Database, stores: PorticoStores) async throws -> Summary {
        var summary = Summary()
        var types: [String: [String: String]] = [:]
        var createdTables = false
        for chunk in chunks {
            if !chunk.table.hasPrefix("portico_"), !createdTables {
                // The collections' definitions are in: make their tables, in this database's flavor.
                try await stores.catalogs.createTables(app: app)
                createdTables = true
            }
            let table = chunk.table
            if types[table] == nil { types[table] = try await db.columnTypes(of: table) }
            let kinds = chunk.columns.map { types[table]?[$0.lowercased()] ?? "" }
            for row in chunk.rows {
                var insert = SQLFragment("INSERT INTO ")
                insert.append(identifier: table)
                insert.append(" (")
                insert.append(joining: chunk.columns.map { SQLFragment.identifier($0) }, separator: ", ")
                insert.append(") VALUES (")
                insert.append(joining: zip(row, kinds).map { SQLFragment.bind(value($0, columnType: $1)) }, separator: ", ")
                insert.append(")")
                try await db.execute(insert)
            }
            summary.tables += 1
            summary.rows += chunk.rows.count
        }
        if !createdTables { try await stores.catalogs.createTables(app: app) }
        // Terms, examples, semantic definitions, workflows, executions and jobs are numbered by the app's database.
        for table in ["portico_terms", "portico_examples", "portico_semantic", "portico_workflows", "portico_executions", "portico_jobs"] {
            if let catchUp = db.flavor.keyCatchUp(table: table, column: "id") { try await db.execute(catchUp) }
        }
        for collection in try await stores.catalogs.catalog(app: app).collections.values {
            if let key = collection.fields.first(where: { $0.primaryKey && $0.autoIncrement }),
                let catchUp = db.flavor.keyCatchUp(table: collection.tableName, column: key.name)
            {
                try await db.execute(catchUp)
            }
        }
        return summary
    }

    /// A value from the file, as the target column takes it: SQLite keeps booleans as 0 and 1,
    /// PostgreSQL as true and false.
    static func value(_ json: JSON, columnType: String) -> SQLValue {
        switch json {
        case .null: return .null
        case .bool(let b): return columnType.contains("bool") ? .bool(b) : .int(b ? 1 : 0)
        case .int(let i): return columnType.contains("bool") ? .bool(i != 0) : .int(i)
        case .double(let d): return .double(d)
        case .string(let s): return .text(s)
        default: return .text(json.serializedString)
        }
    }
}

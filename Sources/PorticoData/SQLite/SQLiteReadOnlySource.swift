import CSQLite
import Foundation

/// What a query on a datasource may touch, enforced by SQLite itself while it compiles the
/// statement (its authorizer): reading tables that are not hidden, calling listed functions.
/// Everything else — writing, `PRAGMA`, `ATTACH`, creating anything — is refused.
public struct SQLiteQueryPolicy: Sendable {
    /// Tables whose names start with one of these cannot be read (`sqlite_`, `portico_`).
    public var hiddenPrefixes: [String]
    /// Functions that may be called, lower case.
    public var functions: Set<String>
    /// When set, the only tables that can be read (lower case): an app's own collections in a
    /// file that holds other apps' tables too.
    public var visibleTables: Set<String>?

    public init(hiddenPrefixes: [String], functions: Set<String>, visibleTables: Set<String>? = nil) {
        self.hiddenPrefixes = hiddenPrefixes.map { $0.lowercased() }
        self.functions = functions
        self.visibleTables = visibleTables
    }

    func isVisible(_ table: String) -> Bool {
        let name = table.lowercased()
        if hiddenPrefixes.contains(where: { name.hasPrefix($0) }) { return false }
        return visibleTables?.contains(name) ?? true
    }

    func allows(_ action: Int32, _ first: String?, _ second: String?) -> Bool {
        switch action {
        case SQLITE_SELECT, SQLITE_RECURSIVE:
            return true
        case SQLITE_READ:
            guard let table = first else { return false }
            return isVisible(table)
        case SQLITE_FUNCTION:
            guard let name = second?.lowercased() else { return false }
            return functions.contains(name)
        default:
            return false
        }
    }
}

/// The rows of a query, at most the cap asked for.
public struct QueryRows: Sendable {
    public let columns: [String]
    public let rows: [[SQLValue]]
    /// Whether more rows (or more bytes) were there than were returned.
    public let truncated: Bool

    public init(columns: [String], rows: [[SQLValue]], truncated: Bool) {
        self.columns = columns
        self.rows = rows
        self.truncated = truncated
    }
}

/// A table of a datasource, as introspection found it.
public struct SourceTable: Sendable {
    public struct Column: Sendable {
        public let name: String
        public let type: String
        public let notNull: Bool
        public let primaryKey: Bool
        /// A few distinct values, for text columns.
        public var samples: [String]
        /// The database's comment on the column (PostgreSQL's `COMMENT ON COLUMN`), if any.
        public var comment: String?

        public init(name: String, type: String, notNull: Bool, primaryKey: Bool, samples: [String]) {
            self.name = name
            self.type = type
            self.notNull = notNull
            self.primaryKey = primaryKey
            self.samples = samples
        }
    }

    public struct ForeignKey: Sendable {
        public let column: String
        public let table: String
        public let targetColumn: String?

        public init(column: String, table: String, targetColumn: String?) {
            self.column = column
            self.table = table
            self.targetColumn = targetColumn
        }
    }

    public let name: String
    public let isView: Bool
    public var columns: [Column]
    public var foreignKeys: [ForeignKey]
    /// The database's comment on the table (PostgreSQL's `COMMENT ON TABLE`), if any.
    public var comment: String?

    public init(name: String, isView: Bool, columns: [Column], foreignKeys: [ForeignKey]) {
        self.name = name
        self.isView = isView
        self.columns = columns
        self.foreignKeys = foreignKeys
    }
}

/// An SQLite file opened for questions: read-only connections (`SQLITE_OPEN_READONLY` and
/// `query_only`) on their own threads, an authorizer that allows only reads of the file's own
/// tables and listed functions, a time limit that interrupts the statement, and a row cap. This
/// is the guard's second layer: what the first (`SQLGuard`) lets through still cannot write.
public final class SQLiteReadOnlySource: Sendable {
    let workers: SQLiteWorkers
    public let policy: SQLiteQueryPolicy
    /// Bytes of values returned at most by one query; past it the rows are cut.
    public let maxBytes: Int

    public init(path: String, policy: SQLiteQueryPolicy, connections: Int = 2, maxBytes: Int = 4 << 20) throws {
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw StoreError(kind: .unavailable, message: "the SQLite file \(path) does not exist or cannot be read", sql: "")
        }
        var opened: [SQLiteConnection] = []
        for _ in 0..<max(1, connections) {
            let connection = try SQLiteConnection(path: path, mode: .read, limits: SQLiteLimits())
            connection.enableAuthorizer()
            opened.append(connection)
        }
        workers = SQLiteWorkers(name: "datasource", connections: opened)
        self.policy = policy
        self.maxBytes = maxBytes
    }

    /// Runs one query under the policy (narrowed to `visibleTables` when given): at most
    /// `maxRows` rows, interrupted after `timeout`.
    public func query(_ sql: String, maxRows: Int, timeout: Duration, visibleTables: Set<String>? = nil) async throws -> QueryRows {
        var narrowed = self.policy
        if let visibleTables { narrowed.visibleTables = Set(visibleTables.map { $0.lowercased() }) }
        let policy = narrowed
        let maxBytes = self.maxBytes
        return try await SQLiteJob.run(on: workers, timeout: timeout) { connection, _ in
            connection.queryPolicy = policy
            defer { connection.queryPolicy = nil }
            let (statement, _) = try connection.statement(sql, cache: false)
            defer { sqlite3_finalize(statement.pointer) }
            guard statement.readOnly else {
                throw StoreError(kind: .readOnly, message: "the statement would write; only reading queries run here", sql: sql)
            }
            var rows: [[SQLValue]] = []
            var bytes = 0
            var truncated = false
            let width = Int32(statement.columns.count)
            while true {
                let status = sqlite3_step(statement.pointer)
                if status == SQLITE_DONE { break }
                guard status == SQLITE_ROW else { throw connection.error(status, sql: sql) }
                guard rows.count < maxRows, bytes < maxBytes else {
                    truncated = true
                    break
                }
                var values: [SQLValue] = []
                values.reserveCapacity(Int(width))
                for column in 0..<width {
                    let value = SQLiteConnection.value(statement.pointer, column)
                    if case .text(let text) = value { bytes += text.utf8.count } else { bytes += 8 }
                    values.append(value)
                }
                rows.append(values)
            }
            return QueryRows(columns: statement.columns, rows: rows, truncated: truncated)
        }
    }

    /// Tables and views with their columns, keys and a few sample values of each text column;
    /// hidden tables are left out.
    public func introspect(samples: Int = 3, only: Set<String>? = nil, timeout: Duration = .seconds(30)) async throws -> [SourceTable] {
        var narrowed = self.policy
        if let only { narrowed.visibleTables = Set(only.map { $0.lowercased() }) }
        let policy = narrowed
        return try await SQLiteJob.run(on: workers, timeout: timeout) { connection, _ in
            connection.queryPolicy = nil
            let objects = try connection.run(
                "SELECT name, type FROM sqlite_schema WHERE type IN ('table', 'view') ORDER BY name", [], cache: false)
            var tables: [SourceTable] = []
            for object in objects {
                guard let name = object.string("name"), policy.isVisible(name) else { continue }
                let columns = try connection.run("SELECT name, type, \"notnull\" AS nn, pk FROM pragma_table_info(?)", [.text(name)], cache: false)
                let keys = try connection.run(
                    "SELECT \"from\" AS source, \"table\" AS target, \"to\" AS target_column FROM pragma_foreign_key_list(?)", [.text(name)], cache: false)
                var table = SourceTable(
                    name: name, isView: object.string("type") == "view",
                    columns: columns.map {
                        SourceTable.Column(
                            name: $0.string("name") ?? "", type: $0.string("type") ?? "", notNull: ($0.int("nn") ?? 0) != 0,
                            primaryKey: ($0.int("pk") ?? 0) != 0,
                            samples: [])
                    },
                    foreignKeys: keys.map {
                        SourceTable.ForeignKey(column: $0.string("source") ?? "", table: $0.string("target") ?? "", targetColumn: $0.string("target_column"))
                    })
                if samples > 0 {
                    for index in table.columns.indices where Self.isText(table.columns[index].type) {
                        let column = Self.quoted(table.columns[index].name)
                        let sql = "SELECT DISTINCT \(column) AS v FROM \(Self.quoted(name)) WHERE \(column) IS NOT NULL AND \(column) <> '' LIMIT \(samples)"
                        let values = (try? connection.run(sql, [], cache: false)) ?? []
                        table.columns[index].samples = values.compactMap { $0.string("v") }.map { $0.count > 60 ? String($0.prefix(57)) + "..." : $0 }
                    }
                }
                tables.append(table)
            }
            return tables
        }
    }

    public func close() async {
        await workers.shutdown()
    }

    static func isText(_ type: String) -> Bool {
        let t = type.uppercased()
        return t.isEmpty || t.contains("CHAR") || t.contains("TEXT") || t.contains("CLOB")
    }

    static func quoted(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

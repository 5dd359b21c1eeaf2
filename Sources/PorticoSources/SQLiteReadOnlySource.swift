import CSQLite
import Foundation
import PorticoBase
public import PorticoStore

/// An SQLite file opened for questions: read-only connections (`SQLITE_OPEN_READONLY` and
/// `query_only`) on their own threads, an authorizer that allows only reads of the file's own
/// tables and listed functions, a time limit and a memory cap that interrupt the statement, a
/// row cap, and bounded versions of the functions whose work outgrows their input. This is the
/// guard's second layer: what the first (`SQLGuard`) lets through still cannot write, read what
/// its caller may not, or hold a worker past its limits.
public final class SQLiteReadOnlySource: Sendable {
    let workers: SQLiteWorkers
    public let policy: SQLiteQueryPolicy
    /// Bytes of values returned at most by one query; past it the rows are cut.
    public let maxBytes: Int
    /// Bytes SQLite's memory may grow by while one query runs; past it the query is stopped.
    public let maxMemory: Int64
    /// How many queries may run at once: one per connection.
    public let connections: Int

    /// Limits of a datasource's connections: no value larger than a query may return, and short
    /// LIKE and GLOB patterns, whose matching SQLite does in one step.
    public static let limits: SQLiteLimits = {
        var limits = SQLiteLimits()
        limits.valueLength = 4 << 20
        limits.likePatternLength = 100
        return limits
    }()

    public init(path: String, policy: SQLiteQueryPolicy, connections: Int = 2, maxBytes: Int = 4 << 20, maxMemory: Int64 = 64 << 20) throws {
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw StoreError(kind: .unavailable, message: "the SQLite file \(path) does not exist or cannot be read", sql: "")
        }
        var opened: [SQLiteConnection] = []
        for _ in 0..<max(1, connections) {
            let connection = try SQLiteConnection(path: path, mode: .read, limits: Self.limits)
            do {
                try connection.prepareForQueries()
            } catch {
                connection.close()
                for other in opened { other.close() }
                throw error
            }
            opened.append(connection)
        }
        workers = SQLiteWorkers(name: "datasource", connections: opened)
        self.policy = policy
        self.maxBytes = maxBytes
        self.maxMemory = maxMemory
        self.connections = opened.count
    }

    /// Runs one query under the policy, narrowed by `scope`: at most `maxRows` rows, interrupted
    /// after `timeout` or when it needs more memory than the source allows.
    public func query(_ sql: String, maxRows: Int, timeout: Duration, scope: ReadScope = ReadScope()) async throws -> QueryRows {
        var narrowed = self.policy
        if let visibleTables = scope.visibleTables { narrowed.visibleTables = visibleTables }
        narrowed.protectedTables = scope.protectedTables
        narrowed.views = Set(scope.views.keys.map { $0.lowercased() })
        narrowed.commonTableNames = scope.commonTableNames
        let policy = narrowed
        let maxBytes = self.maxBytes
        return try await SQLiteJob.run(on: workers, timeout: timeout, memoryLimit: maxMemory) { connection, _ in
            try connection.ensureViews(scope.views)
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

    /// The name of a table's rowid that no column of its own hides, if the table has one: asked of
    /// SQLite itself, so views, tables `WITHOUT ROWID` and virtual tables without one get none.
    static func storedOrder(of table: SourceTable, in connection: SQLiteConnection) -> StoredOrder? {
        guard !table.isView else { return nil }
        let names = Set(table.columns.map { $0.name.lowercased() })
        guard let name = StoredOrder.allCases.first(where: { !names.contains($0.rawValue) }) else { return nil }
        return (try? connection.run("SELECT \(name.rawValue) FROM \(quoted(table.name)) LIMIT 0", [], cache: false)) != nil ? name : nil
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
                table.storedOrder = Self.storedOrder(of: table, in: connection)
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
        await workers.shutdown(interruptingRunning: true)
    }

    static func isText(_ type: String) -> Bool {
        let t = type.uppercased()
        return t.isEmpty || t.contains("CHAR") || t.contains("TEXT") || t.contains("CLOB")
    }

    static func quoted(_ name: String) -> String {
        "\"" + name.doubling("\"") + "\""
    }
}

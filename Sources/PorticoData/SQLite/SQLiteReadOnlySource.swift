import CSQLite
import Foundation
import PorticoBase

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
    /// Tables the query may read only through `views` (lower case): the ones a caller's role
    /// refuses or shows in part. Whatever the SQL's text looks like, SQLite names every table it
    /// reads here, so one named in a way the guard did not see is refused, not read whole.
    public var protectedTables: Set<String> = []
    /// The temporary views (lower case) that stand in for protected tables in this query: they
    /// may be read, and what they read themselves is theirs to read.
    public var views: Set<String> = []
    /// The names the query's WITH clauses define (lower case): SQLite reports reading a recursive
    /// one like a table's.
    public var commonTableNames: Set<String> = []

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

    enum Verdict: Equatable {
        case allow
        case deny(String)
    }

    /// The authorizer's answer for one action: `first` and `second` are SQLite's first two
    /// arguments (for a read, the table and column), `source` the view or trigger whose body
    /// does the reading (`nil` for the statement's own text).
    func decide(_ action: Int32, _ first: String?, _ second: String?, source: String?) -> Verdict {
        switch action {
        case SQLITE_SELECT, SQLITE_RECURSIVE:
            return .allow
        case SQLITE_READ:
            guard let table = first else { return .deny("the statement reads something that is not a table") }
            let name = table.lowercased()
            if let source, views.contains(source.lowercased()) { return .allow }
            if views.contains(name) { return .allow }
            if protectedTables.contains(name) { return .deny(ReadScope.readAroundView(table)) }
            let hidden = hiddenPrefixes.contains(where: { name.hasPrefix($0) })
            guard isVisible(table) || (commonTableNames.contains(name) && !hidden) else { return .deny("'\(table)' is not part of this datasource") }
            return .allow
        case SQLITE_FUNCTION:
            guard let name = second?.lowercased(), functions.contains(name) else {
                return .deny("function '\(second ?? "?")' is not allowed here")
            }
            return .allow
        default:
            return .deny("only reading queries run here")
        }
    }
}

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

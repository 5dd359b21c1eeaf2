import Foundation
public import PorticoAskEngine
import PorticoBase
public import PorticoData
import PorticoJSON
public import PorticoSources
public import PorticoStore
import Synchronization
import Tracing

/// A query's answer: the SQL that ran, its columns and rows.
public struct QueryAnswer: Sendable {
    public let datasource: String
    public let sql: String
    public let columns: [String]
    public let rows: [[SQLValue]]
    public let truncated: Bool
    /// The tables the SQL reads, as written in it.
    public let tables: [String]
}

/// How one caller may read a table of an app's own data (its `main` datasource): the caller's
/// role decides. External datasources are read whole by whoever may query them.
public enum TableAccess: Sendable, Equatable {
    case whole
    /// Not at all, with the reason (naming the collection and the action).
    case refused(String)
    /// Only through the view of the columns and rows it may see, which the query reads in place
    /// of the table wherever it names it.
    case view(CollectionView)

    /// Every table read whole.
    public static let everything: @Sendable (String) -> TableAccess = { _ in .whole }

    /// `tables` as a caller with these rights may see them: refused tables left out, a viewed
    /// table's hidden columns left out and no table's sample values shown where rows are hidden.
    public static func narrow(_ tables: [SourceTable], by rights: (String) -> TableAccess) -> [SourceTable] {
        tables.compactMap { table in
            switch rights(table.name) {
            case .whole: return table
            case .refused: return nil
            case .view(let view):
                let columns = Set(view.columns.map { $0.lowercased() })
                var narrowed = table
                narrowed.columns = table.columns.filter { columns.contains($0.name.lowercased()) }.map { column in
                    var shown = column
                    shown.samples = []
                    return shown
                }
                narrowed.foreignKeys = table.foreignKeys.filter { columns.contains($0.column.lowercased()) }
                // The view read in its place keeps no order of its own (a view has no rowid).
                narrowed.storedOrder = nil
                return narrowed
            }
        }
    }
}

/// Who runs a query: how their role may read each table of the app's own data, and a name under
/// which the datasource's connections are shared fairly among callers.
public struct QueryCaller: Sendable {
    /// The user or credential (`user:12`, `key:...`): one caller's queries take at most their share of a datasource's connections.
    public var key: String
    public var rights: @Sendable (String) -> TableAccess

    public init(key: String, rights: @escaping @Sendable (String) -> TableAccess = TableAccess.everything) {
        self.key = key
        self.rights = rights
    }

    /// The operator at the command line, who reads everything.
    public static let `operator` = QueryCaller(key: "operator")
}

/// Where Portico's own database is: the file or the PostgreSQL URL the `main` datasource reads.
public struct MainDatabase: Sendable {
    public let kind: Datasource.Kind
    public let location: String

    public init(kind: Datasource.Kind, location: String) {
        self.kind = kind
        self.location = location
    }
}

/// Opens datasources on first use and keeps them open with their schema; checks and runs SQL
/// through both layers of the guard.
public final class DatasourceService: Sendable {
    public struct Limits: Sendable {
        /// Rows one query returns at most (the rest are cut and `truncated` is set).
        public var maxRows = 1000
        /// How long one query may run before it is interrupted.
        public var timeout: Duration = .seconds(10)
        /// Bytes of memory one query on an SQLite datasource may take before it is interrupted.
        public var maxMemory: Int64 = 64 << 20
        public init() {}
    }

    let store: DatasourceStore
    /// Each app's own database, which its `main` datasource reads (read-only, without Portico's tables).
    let main: (@Sendable (String) -> MainDatabase)?
    /// The tables of an app's own collections: all that its `main` datasource may read (the
    /// app's database holds its collections' definitions too), with what the catalog says about them.
    let mainTables: @Sendable (String) async throws -> [CatalogNote]
    public let limits: Limits
    private let open = Mutex<[String: OpenSource]>([:])

    final class OpenSource: Sendable {
        let datasource: Datasource
        let source: any ReadOnlySource
        /// One caller's queries run on at most half of the source's connections at once.
        let share: FairShare
        let schema: Mutex<[SourceTable]?> = Mutex(nil)
        /// When the schema was last read, so SQL naming an unknown table re-reads it at most this often.
        let readAt = Mutex<ContinuousClock.Instant?>(nil)
        /// The text values the built-in engine matches words against, read on first use.
        let values = Mutex<ValueIndex?>(nil)
        /// The cost limit as last read from the registry (it may change while the source stays open).
        let maxCost: Mutex<Double?>

        /// The SQLite file's identity when it was opened: an app's file removed and made again
        /// by another process is opened anew.
        let file: FileIdentity?

        init(datasource: Datasource, source: any ReadOnlySource) {
            self.datasource = datasource
            self.source = source
            share = FairShare(share: max(1, source.connections / 2))
            maxCost = Mutex(datasource.maxCost)
            file = datasource.kind == .sqlite ? FileIdentity(path: datasource.location) : nil
        }
    }

    public init(
        store: DatasourceStore, main: (@Sendable (String) -> MainDatabase)?, mainTables: @escaping @Sendable (String) async throws -> [CatalogNote],
        limits: Limits = Limits()
    ) {
        self.store = store
        self.main = main
        self.mainTables = mainTables
        self.limits = limits
    }

    /// What an app's catalog says about one of its tables, shown as the table's comments.
    public struct CatalogNote: Sendable {
        public var table: String
        public var comment: String?
        /// Column comments by column name.
        public var columns: [String: String]

        public init(table: String, comment: String?, columns: [String: String]) {
            self.table = table
            self.comment = comment
            self.columns = columns
        }
    }

    /// How soon SQL that names a table missing from the cached schema may make it be read again.
    static let rereadInterval: Duration = .seconds(5)

    /// Tables whose names start with these are never part of a datasource.
    static let hiddenPrefixes = ["sqlite_", "portico_"]

    static let authorizedFunctions = SQLGuard.sqliteFunctions.union(["->", "->>", "likely", "unlikely", "likelihood"])

    /// `main` first, then the registered ones.
    /// Registers a datasource (the store checks its name and opens nothing yet).
    public func add(app: String, name: String, kind: Datasource.Kind, location: String) async throws {
        try await store.add(app: app, name: name, kind: kind, location: location)
    }

    public func list(app: String) async throws -> [Datasource] {
        (mainDatasource(app: app).map { [$0] } ?? []) + (try await store.list(app: app))
    }

    /// The app's own database as a datasource, where it can be read as a file.
    func mainDatasource(app: String) -> Datasource? {
        main.map { $0(app) }.map { Datasource(app: app, name: "main", kind: $0.kind, description: "the app's own collections", location: $0.location) }
    }

    /// The datasource's tables, from the cache unless `refresh`.
    public func schema(app: String, datasource name: String, refresh: Bool = false) async throws -> (Datasource, [SourceTable]) {
        let source = try await source(app: app, name: name)
        guard name == "main" else { return (source.datasource, try await tables(of: source, visible: nil, refresh: refresh)) }
        // The app's own tables carry their collections' and fields' titles as comments.
        let notes = Dictionary(try await mainTables(app).map { ($0.table.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
        var tables = try await tables(of: source, visible: Set(notes.keys), refresh: refresh)
        for index in tables.indices {
            guard let note = notes[tables[index].name.lowercased()] else { continue }
            tables[index].comment = note.comment
            for column in tables[index].columns.indices { tables[index].columns[column].comment = note.columns[tables[index].columns[column].name] }
        }
        return (source.datasource, tables)
    }

    func tables(of source: OpenSource, visible: Set<String>?, refresh: Bool) async throws -> [SourceTable] {
        if !refresh, let cached = source.schema.withLock({ $0 }) {
            return visible.map { only in cached.filter { only.contains($0.name.lowercased()) } } ?? cached
        }
        let tables = try await source.source.introspect(samples: 3, only: visible)
        source.schema.withLock { $0 = tables }
        source.values.withLock { $0 = nil }
        source.readAt.withLock { $0 = .now }
        return tables
    }

    /// The distinct text values of the datasource's tables, built on first use and kept with the
    /// schema (a refreshed schema drops it).
    public func values(app: String, datasource name: String, tables: [SourceTable]) async throws -> ValueIndex {
        let source = try await source(app: app, name: name)
        if let cached = source.values.withLock({ $0 }) { return cached }
        let visible = try await visibleTables(app: app, name: name)
        let limits = self.limits
        let index = try await ValueIndex.build(SchemaModel(tables), dialect: source.datasource.dialect) { sql in
            try await source.source.query(sql, maxRows: ValueIndex.perColumn + 1, timeout: limits.timeout, scope: ReadScope(visibleTables: visible)).rows
        }
        source.values.withLock { $0 = index }
        return index
    }

    /// The tables `main` may read for `app` (its collections); `nil` for an external datasource.
    func visibleTables(app: String, name: String) async throws -> Set<String>? {
        guard name == "main" else { return nil }
        return Set(try await mainTables(app).map { $0.table.lowercased() })
    }

    /// Checks `sql` with the guard and runs it read-only. On the app's own data (`main`), the
    /// caller's rights may refuse a table their role cannot read, or give the view the SQL reads
    /// in its place (the role's rows and fields); the database then refuses any read of such a
    /// table other than through its view (SQLite's authorizer, PostgreSQL's plan), however the
    /// SQL names it, so no SQL can read around the role.
    public func query(app: String, datasource name: String, sql: String, maxRows: Int? = nil, caller: QueryCaller = .operator) async throws -> QueryAnswer {
        let statement = try await prepare(app: app, datasource: name, sql: sql, caller: caller)
        let maxRows = min(maxRows ?? limits.maxRows, limits.maxRows)
        let timeout = limits.timeout
        let dialect = statement.source.datasource.dialect
        let rows = try await Traces.span("SELECT " + statement.source.datasource.name, kind: .client) { span in
            span?.attributes["db.system.name"] = dialect.systemName
            span?.attributes["db.namespace"] = statement.source.datasource.name
            span?.attributes["db.operation.name"] = "SELECT"
            // On a database server the statement names its span (sqlcommenter), so the server's own logs join the trace.
            var runnable = statement.runnable
            if dialect != .sqlite, let comment = Traces.sqlComment() { runnable += "\n" + comment }
            let rows = try await statement.source.share.run(caller: caller.key) { [runnable] in
                try await statement.source.source.query(runnable, maxRows: maxRows, timeout: timeout, scope: statement.scope)
            }
            span?.attributes["db.response.returned_rows"] = rows.rows.count
            span?.attributes["portico.truncated"] = rows.truncated
            return rows
        }
        return QueryAnswer(
            datasource: statement.source.datasource.name, sql: statement.shown, columns: rows.columns, rows: rows.rows, truncated: rows.truncated,
            tables: statement.tables)
    }

    /// What the database would do to run `sql` (checked and narrowed as `query` does), without running it.
    public func explain(app: String, datasource name: String, sql: String, caller: QueryCaller = .operator) async throws -> (
        sql: String, plan: PlanReport
    ) {
        let statement = try await prepare(app: app, datasource: name, sql: sql, caller: caller)
        let timeout = limits.timeout
        var plan = try await statement.source.share.run(caller: caller.key) {
            try await statement.source.source.plan(statement.runnable, timeout: timeout, scope: statement.scope)
        }
        if statement.source.datasource.dialect == .sqlite {
            // SQLite names a scanned table by the query's alias for it.
            let aliases = Self.aliases(in: statement.shown, tables: statement.tables)
            var named: [String] = []
            for scan in plan.fullScans {
                let table = aliases[scan.lowercased()] ?? scan
                if !named.contains(table) { named.append(table) }
            }
            plan.fullScans = named
        }
        // The estimates are the planner's for whole tables (their statistics), not for the rows a
        // role may see: to a role that reads a table in part they would tell its size.
        if statement.readsInPart { plan = plan.withoutFigures() }
        return (statement.shown, plan)
    }

    /// The tables a query's aliases stand for (`FROM Track t` → `t`: `Track`), and each table's own name.
    static func aliases(in sql: String, tables: [String]) -> [String: String] {
        var out = Dictionary(tables.map { ($0.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
        guard let tokens = try? SQLTokenizer.tokenize(sql, dialect: .sqlite) else { return out }
        let clauses: Set<String> = ["WHERE", "JOIN", "ON", "GROUP", "ORDER", "LIMIT", "INNER", "LEFT", "RIGHT", "CROSS", "NATURAL", "USING", "UNION", "HAVING"]
        for (i, token) in tokens.enumerated() where token.kind == .word || token.kind == .quotedIdentifier {
            guard let table = tables.first(where: { $0.lowercased() == token.text.lowercased() }) else { continue }
            var j = i + 1
            if j < tokens.count, tokens[j].keyword == "AS" { j += 1 }
            guard j < tokens.count, tokens[j].kind == .word || tokens[j].kind == .quotedIdentifier, !clauses.contains(tokens[j].keyword) else { continue }
            out[tokens[j].text.lowercased()] = table
        }
        return out
    }

    /// A statement the guard passed, as the caller wrote it (`shown`) and as it runs (`runnable`:
    /// each table the caller's role reads in part replaced by its view), with the scope it runs in.
    struct Prepared {
        let source: OpenSource
        let shown: String
        let runnable: String
        let scope: ReadScope
        let tables: [String]
        /// The caller's role reads some table of the query in part (through its view).
        var readsInPart = false
    }

    func prepare(app: String, datasource name: String, sql: String, caller: QueryCaller) async throws -> Prepared {
        let source = try await source(app: app, name: name)
        let datasource = source.datasource
        let visible = try await visibleTables(app: app, name: name)
        var tables = try await self.tables(of: source, visible: visible, refresh: false)
        let checked = try? SQLGuard(dialect: datasource.dialect, tables: tables.map(\.name), schemas: datasource.schemas).check(sql)
        if checked == nil, source.readAt.withLock({ $0.map { ContinuousClock.now - $0 >= Self.rereadInterval } ?? true }) {
            // Perhaps a table created since the schema was read: read it again (not more often than
            // every few seconds), then check once more, which says what is wrong if it still is.
            tables = try await self.tables(of: source, visible: visible, refresh: true)
        }
        let guarded = try checked ?? SQLGuard(dialect: datasource.dialect, tables: tables.map(\.name), schemas: datasource.schemas).check(sql)
        // What the caller reads back is their SQL; what runs reads each table through their view of it.
        var shown = guarded.sql
        var runnable = guarded.sql
        var scope = ReadScope(visibleTables: visible, commonTableNames: guarded.commonTableNames)
        var readsInPart = false
        if name == "main" {
            // The caller's rights over each table, judged once (a view is rendered in the judging).
            let rights = Dictionary(tables.map { ($0.name.lowercased(), caller.rights($0.name)) }, uniquingKeysWith: { first, _ in first })
            scope.protectedTables = Set(rights.filter { $0.value != .whole }.keys)
            // A WITH name that is also a table would hide, inside its own definition, the table it
            // shadows, and a role's view may read other tables (its row filter across a relation):
            // where the caller reads any table in part, no WITH name may be a table's.
            if !scope.protectedTables.isEmpty,
                let shadow = guarded.commonTableNames.first(where: { name in tables.contains { $0.name.lowercased() == name } })
            {
                throw DatasourceError(
                    "the WITH name '\(shadow)' is also a table of this datasource, which your role reads in part; give the WITH query another name")
            }
            var views: [String: CollectionView] = [:]
            for table in guarded.tables where !guarded.commonTableNames.contains(table.lowercased()) {
                switch rights[table.lowercased()] ?? caller.rights(table) {
                case .whole: break
                case .refused(let reason): throw DatasourceError(reason)
                case .view(let view): views[table.lowercased()] = view
                }
            }
            readsInPart = !views.isEmpty
            if !views.isEmpty {
                switch datasource.dialect {
                case .sqlite:
                    // Temporary views of the datasource's connection, which SQLite's authorizer tells apart from the tables they read.
                    var names: [String: String] = [:]
                    for (table, view) in views {
                        names[table] = view.temporaryName
                        scope.views[view.temporaryName] = view.sql
                    }
                    // In `temp`, by its schema: no WITH name can stand in for it.
                    runnable = guarded.replacingTables { names[$0.lowercased()].map { "temp." + SQLFragment.identifier($0).renderedWithLiterals() } }
                case .postgres:
                    // Written in, with aliases the caller cannot know, which the plan must show on every read of a
                    // protected table, and tables named in their schema, which no WITH name can stand in for.
                    let prefix = "portico_" + Hex.encode((0..<8).map { _ in UInt8.random(in: 0...255) }) + "_"
                    scope.viewAliasPrefix = prefix
                    let schema = datasource.schemas.first
                    runnable = guarded.replacingTables { views[$0.lowercased()].map { "(" + $0.sql(aliasPrefix: prefix, schema: schema) + ")" } }
                case .mysql:
                    // An app's own data is never on MySQL; roles' views exist only there.
                    throw DatasourceError("a role's view of a table cannot be applied on a MySQL datasource")
                }
            }
        }
        if datasource.dialect == .postgres {
            let names = tables.flatMap { [$0.name] + $0.columns.map(\.name) }
            shown = IdentifierCase.quotingMixedCase(shown, names: names)
            // Without views what runs is what is shown: quoted once.
            runnable = runnable == guarded.sql ? shown : IdentifierCase.quotingMixedCase(runnable, names: names)
        }
        scope.maxCost = source.maxCost.withLock { $0 }
        return Prepared(source: source, shown: shown, runnable: runnable, scope: scope, tables: guarded.tables, readsInPart: readsInPart)
    }

    func source(app: String, name: String) async throws -> OpenSource {
        let key = app + "/" + name
        if let source = open.withLock({ $0[key] }) {
            // A registered datasource is looked up again on every use, so removing or replacing it
            // (from the command line, another process) takes effect at once.
            if name == "main", source.datasource.kind == .postgres || FileIdentity(path: source.datasource.location) == source.file { return source }
            if let current = try await store.find(app: app, name: name), current.location == source.datasource.location, current.kind == source.datasource.kind
            {
                source.maxCost.withLock { $0 = current.maxCost }
                return source
            }
            await forget(app: app, name: name)
        }
        let datasource: Datasource
        if name == "main" {
            guard let main = mainDatasource(app: app) else {
                throw DatasourceError("the app's own database cannot be queried as a datasource on this deployment")
            }
            datasource = main
        } else {
            guard let found = try await store.find(app: app, name: name) else {
                let names = try await list(app: app).map(\.name)
                throw DatasourceError("app '\(app)' has no datasource '\(name)'; its datasources are: \(names.joined(separator: ", "))")
            }
            datasource = found
        }
        let opened: any ReadOnlySource =
            switch datasource.kind {
            case .sqlite:
                try SQLiteReadOnlySource(
                    path: datasource.location, policy: SQLiteQueryPolicy(hiddenPrefixes: Self.hiddenPrefixes, functions: Self.authorizedFunctions),
                    maxMemory: limits.maxMemory)
            case .postgres:
                try PostgresReadOnlySource(url: datasource.location)
            case .mysql:
                try MySQLReadOnlySource(url: datasource.location, longestQuery: limits.timeout)
            }
        let source = OpenSource(datasource: datasource, source: opened)
        let (kept, extra) = open.withLock { open -> (OpenSource, OpenSource?) in
            if let existing = open[key] { return (existing, source) }
            open[key] = source
            return (source, nil)
        }
        if let extra { await extra.source.close() }
        return kept
    }

    /// Forgets an opened datasource (after it was removed), closing its connections.
    public func forget(app: String, name: String) async {
        if let source = open.withLock({ $0.removeValue(forKey: app + "/" + name) }) { await source.source.close() }
    }

    public func close() async {
        let all = open.withLock { open in
            defer { open = [:] }
            return Array(open.values)
        }
        for source in all { await source.source.close() }
    }
}

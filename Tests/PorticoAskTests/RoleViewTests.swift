import Foundation
import Logging
import PorticoAuth
import PorticoBase
import PorticoData
import PorticoJSON
import PorticoStore
import PorticoTestSupport
import Testing

@testable import PorticoAsk
@testable import PorticoAskEngine
@testable import PorticoBuiltinEngine
@testable import PorticoSources

/// A role that sees part of a table reads it only through its view, however the SQL names the
/// table, on SQLite (the authorizer) and PostgreSQL (the plan); a refused table is not read at all.
@Suite struct RoleViewTests {
    /// An app's own database with two collections: customers in two regions, and employees.
    struct Setup {
        let backend: Backend
        let store: any Database
        let service: DatasourceService
        let catalog: Catalog

        /// The analyst sees EU customers' names and regions, and no employees.
        func analyst() throws -> QueryCaller {
            try caller("analyst", user: 2, customers: AccessRule(fields: ["name", "region"], filter: ["region": "EU"]))
        }

        /// Sees the customers whose support rep is Eve: a row filter across a relation, whose view reads the employees.
        func evesCustomers() throws -> QueryCaller {
            try caller("eve", user: 3, customers: AccessRule(filter: ["rep": ["name": "Eve"]]))
        }

        /// A caller whose role lists customers under `customers` and nothing else, with rights
        /// derived as the tools derive them (`AccessPolicy.tableRights`).
        func caller(_ role: String, user: Int64, customers: AccessRule) throws -> QueryCaller {
            let access = RecordAccess(key: role, allowsInFull: false) { collection, _ in
                collection == "Customer" ? .allow(customers) : .deny("role '\(role)' may not list records of '\(collection)'")
            }
            let scoped = try catalog.scoped(by: access, root: "", action: .list)
            let catalog = self.catalog
            return QueryCaller(key: "user:\(user)") { table in
                guard let name = catalog.collection(table: table) else { return .refused("'\(table)' is not a collection") }
                do {
                    return try scoped.view(of: name).map { .view($0) } ?? .whole
                } catch {
                    return .refused("\(error)")
                }
            }
        }

        /// A table's name as the SQL of this backend writes it.
        func q(_ name: String) -> String { backend == .postgres ? "\"\(name)\"" : name }

        func close() async {
            await service.close()
            await store.close()
        }
    }

    static func setUp(_ backend: Backend, limits: DatasourceService.Limits = .init()) async throws -> Setup {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("portico-roleview-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let location: String
        let store: any Database
        switch backend {
        case .sqlite:
            location = directory.appendingPathComponent("t.sqlite").path
            store = try SQLiteStore(path: location, logger: Logger(label: "test"))
        case .postgres:
            location = try await Backend.freshPostgresDatabase()
            store = try PostgresStore(url: location, options: Backend.postgresOptions, logger: Logger(label: "test"))
        }
        try await Migrator().migrate(store)
        let catalogs = CatalogStore(database: store)
        let id = Field(name: "id", type: .integer, nullable: false, primaryKey: true, autoIncrement: true)
        try await catalogs.create(
            app: "main",
            collections: [
                CollectionSchema(
                    name: "Customer", tableName: "Customer",
                    fields: [
                        id, Field(name: "name", type: .string), Field(name: "phone", type: .string), Field(name: "region", type: .string),
                        Field(name: "repId", type: .integer),
                        Field(name: "rep", type: .belongsTo, relation: Relation(target: "Employee", foreignKey: "repId", sourceKey: "repId", targetKey: "id")),
                    ]),
                CollectionSchema(
                    name: "Employee", tableName: "Employee", fields: [id, Field(name: "name", type: .string), Field(name: "salary", type: .integer)]),
            ])
        try await store.execute(
            "INSERT INTO \"Customer\" (name, phone, region) VALUES ('Ana', '111', 'EU'), ('Ben', '222', 'US'), ('Cleo', '333', 'EU'), ('Dev', '444', 'APAC')")
        try await store.execute("INSERT INTO \"Employee\" (name, salary) VALUES ('Eve', 9000), ('Zed', 8000)")
        try await store.execute("UPDATE \"Customer\" SET \"repId\" = 1 WHERE name = 'Ana'")
        try await store.execute("UPDATE \"Customer\" SET \"repId\" = 2 WHERE name = 'Ben'")
        let kind: Datasource.Kind = backend == .sqlite ? .sqlite : .postgres
        let service = DatasourceService(
            store: DatasourceStore(database: store, masterKey: MasterKey(bytes: Array(repeating: 7, count: 32))),
            main: { _ in MainDatabase(kind: kind, location: location) },
            mainTables: { _ in [.init(table: "Customer", comment: nil, columns: [:]), .init(table: "Employee", comment: nil, columns: [:])] },
            limits: limits)
        return Setup(backend: backend, store: store, service: service, catalog: try await catalogs.catalog(app: "main"))
    }

    /// Shapes of SQL that name the customers' table; each reads the EU customers only.
    @Test(arguments: Backend.available) func everyWayOfNamingATableReadsTheView(_ backend: Backend) async throws {
        let s = try await Self.setUp(backend)
        let analyst = try s.analyst()
        let customer = s.q("Customer")
        var shapes = [
            "SELECT count(*) FROM \(customer)",
            "SELECT count(*) FROM (\(customer) c JOIN \(s.q("Customer")) d ON c.\(s.q("name")) = d.\(s.q("name")))",
            "SELECT count(*) FROM (SELECT 1 AS x) one, \(customer)",
            "SELECT count(*) FROM \(customer) WHERE EXISTS (SELECT 1 FROM \(customer) AS inner_c)",
        ]
        if backend == .sqlite {
            shapes += [
                "SELECT count(*) FROM 'Customer'", "SELECT count(*) FROM 'main'.Customer", "SELECT count(*) FROM main.'Customer'",
                "SELECT count(*) FROM (Customer)", "SELECT count(*) FROM (SELECT 1) AS one JOIN 'Customer' ON 1",
            ]
        } else {
            shapes += ["SELECT count(*) FROM public.\"Customer\"", "SELECT count(*) FROM ONLY \"Customer\""]
        }
        for sql in shapes {
            let answer = try await s.service.query(app: "main", datasource: "main", sql: sql, caller: analyst)
            #expect(answer.rows == [[.int(2)]], "\(sql)")
        }
        // The hidden column is not there to read, and the refused table is refused.
        for sql in [
            "SELECT \(s.q("phone")) FROM \(customer)", "SELECT count(*) FROM \(s.q("Employee"))",
            // A WITH name must not take the place of a table a view may read.
            "WITH \(s.q("Employee")) AS (SELECT 1 AS x) SELECT count(*) FROM \(customer)",
        ] {
            await #expect(throws: (any Error).self, "\(sql)") { _ = try await s.service.query(app: "main", datasource: "main", sql: sql, caller: analyst) }
        }
        if backend == .sqlite {
            for sql in ["SELECT phone FROM 'Customer'", "SELECT count(*) FROM 'Employee'", "SELECT 1 WHERE 1 IN Employee"] {
                await #expect(throws: (any Error).self, "\(sql)") { _ = try await s.service.query(app: "main", datasource: "main", sql: sql, caller: analyst) }
            }
        }
        // Someone who reads everything sees every row.
        let all = try await s.service.query(app: "main", datasource: "main", sql: "SELECT count(*) FROM \(customer)")
        #expect(all.rows == [[.int(4)]])
        await s.close()
    }

    /// The database's own check, past the guard: a protected table read other than through the
    /// views of the query is refused, whatever the text looks like.
    @Test(arguments: Backend.available) func theDatabaseRefusesReadsAroundTheViews(_ backend: Backend) async throws {
        let s = try await Self.setUp(backend)
        let analyst = try s.analyst()
        guard case .view(let view) = analyst.rights("Customer") else {
            Issue.record("the analyst should read customers through a view")
            return
        }
        let visible: Set<String> = ["customer", "employee"]
        switch backend {
        case .sqlite:
            let source = try SQLiteReadOnlySource(
                path: try await mainLocation(s),
                policy: SQLiteQueryPolicy(hiddenPrefixes: ["sqlite_", "portico_"], functions: DatasourceService.authorizedFunctions))
            let scope = ReadScope(visibleTables: visible, protectedTables: ["customer", "employee"], views: [view.temporaryName: view.sql])
            for sql in ["SELECT count(*) FROM Customer", "SELECT count(*) FROM (Customer)", "SELECT count(*) FROM 'Customer'", "SELECT count(*) FROM Employee"]
            {
                do {
                    _ = try await source.query(sql, maxRows: 10, timeout: .seconds(5), scope: scope)
                    Issue.record("read around the role: \(sql)")
                } catch let error as StoreError {
                    #expect(error.kind == .notAuthorized, "\(sql): \(error)")
                }
            }
            let viewed = try await source.query("SELECT count(*) FROM \"\(view.temporaryName)\" AS c", maxRows: 10, timeout: .seconds(5), scope: scope)
            #expect(viewed.rows == [[.int(2)]])
            // Another role's view on the same connection is not this query's to read.
            let other = ReadScope(visibleTables: visible, protectedTables: ["customer"], views: [:])
            await #expect(throws: StoreError.self) {
                _ = try await source.query("SELECT count(*) FROM \"\(view.temporaryName)\"", maxRows: 10, timeout: .seconds(5), scope: other)
            }
            await source.close()
        case .postgres:
            let source = try PostgresReadOnlySource(url: try await mainLocation(s))
            let prefix = "portico_0123abcd_"
            let scope = ReadScope(visibleTables: visible, protectedTables: ["customer", "employee"], viewAliasPrefix: prefix)
            for sql in [
                "SELECT count(*) FROM \"Customer\"", "SELECT count(*) FROM (\"Customer\" c JOIN \"Employee\" e ON true)",
                "SELECT count(*) FROM (SELECT * FROM \"Customer\" AS \"portico_other_t0\") x", "SELECT count(*) FROM portico_users",
                "SELECT count(*) FROM (\(view.sql(aliasPrefix: prefix))) AS c, \"Employee\"",
            ] {
                do {
                    _ = try await source.query(sql, maxRows: 10, timeout: .seconds(5), scope: scope)
                    Issue.record("read around the role: \(sql)")
                } catch let error as StoreError {
                    #expect(error.kind == .notAuthorized, "\(sql): \(error)")
                }
            }
            let viewed = try await source.query("SELECT count(*) FROM (\(view.sql(aliasPrefix: prefix))) AS c", maxRows: 10, timeout: .seconds(5), scope: scope)
            #expect(viewed.rows == [[.int(2)]])
            await source.close()
        }
        await s.close()
    }

    /// A WITH query named like a table the view reads (through its row filter) changes nothing:
    /// refused where the SQL is read, and, past that, unable to stand in for the table.
    @Test(arguments: Backend.available) func aWithNameCannotStandInForATableTheViewReads(_ backend: Backend) async throws {
        let s = try await Self.setUp(backend)
        let eve = try s.evesCustomers()
        let customer = s.q("Customer")
        #expect(try await s.service.query(app: "main", datasource: "main", sql: "SELECT count(*) FROM \(customer)", caller: eve).rows == [[.int(1)]])
        let fake = "WITH \(s.q("Employee")) AS (SELECT 1 AS id, 'Eve' AS name UNION ALL SELECT 2, 'Eve') SELECT count(*) FROM \(customer)"
        await #expect(throws: DatasourceError.self) { _ = try await s.service.query(app: "main", datasource: "main", sql: fake, caller: eve) }
        guard case .view(let view) = eve.rights("Customer") else {
            Issue.record("Eve's customers are a view")
            return
        }
        switch backend {
        case .sqlite:
            let source = try SQLiteReadOnlySource(
                path: try await mainLocation(s),
                policy: SQLiteQueryPolicy(hiddenPrefixes: ["sqlite_", "portico_"], functions: DatasourceService.authorizedFunctions))
            let scope = ReadScope(
                visibleTables: ["customer", "employee"], protectedTables: ["customer", "employee"], views: [view.temporaryName: view.sql],
                commonTableNames: ["employee"])
            let rows = try await source.query(
                "WITH Employee AS (SELECT 1 AS id, 'Eve' AS name UNION ALL SELECT 2, 'Eve') SELECT count(*) FROM temp.\"\(view.temporaryName)\"", maxRows: 1,
                timeout: .seconds(5), scope: scope)
            #expect(rows.rows == [[.int(1)]])
            await source.close()
        case .postgres:
            let source = try PostgresReadOnlySource(url: try await mainLocation(s))
            let prefix = "portico_89abcdef_"
            let scope = ReadScope(visibleTables: ["customer", "employee"], protectedTables: ["customer", "employee"], viewAliasPrefix: prefix)
            let rows = try await source.query(
                "WITH \"Employee\" AS (SELECT 1 AS id, 'Eve' AS name UNION ALL SELECT 2, 'Eve') SELECT count(*) FROM (\(view.sql(aliasPrefix: prefix, schema: "public"))) AS c",
                maxRows: 1, timeout: .seconds(5), scope: scope)
            #expect(rows.rows == [[.int(1)]])
            await source.close()
        }
        await s.close()
    }

    func mainLocation(_ s: Setup) async throws -> String {
        try await s.service.source(app: "main", name: "main").datasource.location
    }

    /// One caller's slow queries leave a connection for everyone else.
    @Test(arguments: Backend.available) func aCallerTakesAtMostItsShareOfTheConnections(_ backend: Backend) async throws {
        var limits = DatasourceService.Limits()
        limits.timeout = .seconds(6)
        let s = try await Self.setUp(backend, limits: limits)
        let slow = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT count(*) FROM n"
        let share = try await s.service.source(app: "main", name: "main").source.connections
        let greedy = QueryCaller(key: "user:9")
        let hogs = (0..<share).map { _ in
            Task { () -> (StoreError.Kind?, ContinuousClock.Instant) in
                do {
                    _ = try await s.service.query(app: "main", datasource: "main", sql: slow, caller: greedy)
                    return (nil, .now)
                } catch let error as StoreError {
                    return (error.kind, .now)
                }
            }
        }
        try await Task.sleep(for: .milliseconds(300))
        let answer = try await s.service.query(
            app: "main", datasource: "main", sql: "SELECT count(*) FROM \(s.q("Customer"))", caller: QueryCaller(key: "user:1"))
        let answered = ContinuousClock.now
        #expect(answer.rows == [[.int(4)]])
        // Told by order, not by a bound on time: the answer came while every slow query still ran,
        // and they ran (a recursive WITH on the app's own data) until their time limit.
        for hog in hogs {
            let (kind, ended) = try await hog.value
            #expect(kind == .timeout)
            #expect(answered < ended, "the other caller waited for the greedy one's queries")
        }
        await s.close()
    }
}

/// SQLite's functions whose work outgrows their input, bounded on datasource connections: the
/// same answers as SQLite's own, in time linear in the input, and no width larger than a value.
@Suite struct BoundedFunctionTests {
    static func source(maxMemory: Int64 = 64 << 20) async throws -> SQLiteReadOnlySource {
        let path = try await ReadOnlySourceTests.makeDatabase()
        return try SQLiteReadOnlySource(
            path: path, policy: SQLiteQueryPolicy(hiddenPrefixes: ["sqlite_", "portico_"], functions: DatasourceService.authorizedFunctions),
            maxMemory: maxMemory)
    }

    /// Expressions whose answers must match SQLite's built-in functions (read on a plain connection).
    @Test func answersMatchSQLitesOwn() async throws {
        let source = try await Self.source()
        let plain = try SQLiteStore(path: try await ReadOnlySourceTests.makeDatabase() + ".plain", logger: Logger(label: "test"))
        let expressions = [
            "instr('héllo wörld', 'wö')", "instr('abc', '')", "instr('', 'a')", "instr(NULL, 'a')", "instr('a', NULL)", "instr(12345, 34)",
            "instr(x'00010203', x'0203')", "instr(x'0001', 'a')", "instr('aaa', 'aa')", "instr('日本語の日本', '日本')", "instr('abc', 'd')",
            "replace('banana', 'an', 'AN')", "replace('banana', '', 'x')", "replace('aaa', 'a', 'bb')", "replace(NULL, 'a', 'b')",
            "replace('abc', NULL, 'b')", "replace('abc', 'b', NULL)", "replace(12.5, '.', ',')", "replace('ééé', 'é', 'e')",
            "trim('xxhixx', 'x')", "ltrim('xxhixx', 'x')", "rtrim('xxhixx', 'x')", "trim('  hi  ')", "trim('ééhiéé', 'é')", "trim('abc', '')",
            "trim(NULL, 'x')", "trim('abc', NULL)", "trim('bacab', 'ab')", "rtrim('hello日本', '本日')", "trim(123321, '1')",
            "printf('%.2f', 3.14159)", "printf('%5s|%-5d|%05d', 'a', 3, 42)", "printf('%s and %s', 'x')", "printf('%.*c', 5, 'x')",
            "printf('%*d', -4, 7)", "printf('%q', 'it''s')", "printf('%,d', 1234567)", "printf('%x', 255)", "format('%d%%', 50)", "printf(NULL)",
            "printf('%!.3g', 2.0)", "printf('no args')", "length(printf('%.*c', 100000, 'z'))",
            // Values as SQLite keeps them, and text that is not UTF-8.
            "typeof(replace(5, '', 'x'))", "replace('abc', char(0), 'x')", "hex(rtrim(CAST(x'8080' AS TEXT), CAST(x'80' AS TEXT)))",
            "hex(ltrim(CAST(x'80C3A9' AS TEXT), CAST(x'80' AS TEXT)))", "instr(CAST(x'61808080' AS TEXT), CAST(x'80' AS TEXT))",
            "instr(CAST(x'8061' AS TEXT), CAST(x'80' AS TEXT))", "instr(CAST(x'C3A961' AS TEXT), 'a')", "trim('xyzzy', 'zyx')",
        ]
        for expression in expressions {
            let bounded = try await source.query("SELECT \(expression) AS v", maxRows: 1, timeout: .seconds(5)).rows
            let builtIn = try await plain.query("SELECT \(expression) AS v").map { $0.values }
            #expect(bounded == builtIn, "\(expression)")
        }
        await plain.close()
        await source.close()
    }

    /// Inputs that keep SQLite's own functions busy for minutes take moments, or are refused.
    @Test func quadraticInputsAreLinearOrRefused() async throws {
        let source = try await Self.source()
        let started = ContinuousClock.now
        let instr = try await source.query(
            "SELECT instr(printf('%.*c', 4000000, 'a'), printf('%.*c', 2000000, 'a') || 'b')", maxRows: 1, timeout: .seconds(10))
        #expect(instr.rows == [[.int(0)]])
        let replaced = try await source.query(
            "SELECT length(replace(printf('%.*c', 4000000, 'a'), printf('%.*c', 2000000, 'a') || 'b', 'c'))", maxRows: 1, timeout: .seconds(10))
        #expect(replaced.rows == [[.int(4_000_000)]])
        let trimmed = try await source.query(
            "SELECT length(trim(printf('%.*c', 1000000, 'a'), printf('%.*c', 60000, 'b') || 'c'))", maxRows: 1, timeout: .seconds(10))
        #expect(trimmed.rows == [[.int(1_000_000)]])
        // A needle of continuation bytes in a haystack of them (not UTF-8): still one pass.
        let continuation = try await source.query(
            "SELECT instr('a' || printf('%.*c', 4000000, CAST(x'80' AS TEXT)), printf('%.*c', 2000000, CAST(x'80' AS TEXT)))",
            maxRows: 1, timeout: .seconds(10))
        #expect(continuation.rows == [[.int(0)]])
        // SQLite's own functions take minutes on these; the bound leaves room for the parallel suites.
        #expect(ContinuousClock.now - started < .seconds(20))
        for sql in ["SELECT printf('%.*c', 2147483647, 'x')", "SELECT printf('%2147483647d', 1)", "SELECT format('%*s', -99999999, 'x')"] {
            let refusedAt = ContinuousClock.now
            await #expect(throws: StoreError.self, "\(sql)") { _ = try await source.query(sql, maxRows: 1, timeout: .seconds(10)) }
            #expect(ContinuousClock.now - refusedAt < .seconds(5), "\(sql)")
        }
        await source.close()
    }

    /// A query that piles up memory inside one aggregate is stopped at the cap.
    @Test func aQueryIsStoppedAtItsMemoryCap() async throws {
        let source = try await Self.source(maxMemory: 16 << 20)
        let sql = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n LIMIT 20000000) SELECT length(json_group_array(x)) FROM n"
        do {
            _ = try await source.query(sql, maxRows: 1, timeout: .seconds(20))
            Issue.record("the query ran past its memory cap")
        } catch let error as StoreError {
            #expect(error.message.contains("MiB of memory"), "\(error)")
        }
        // The connection is fine afterwards.
        let rows = try await source.query("SELECT count(*) FROM item", maxRows: 1, timeout: .seconds(5))
        #expect(rows.rows == [[.int(3)]])
        await source.close()
    }

    /// Closing a source (the server stopping) stops the query it runs instead of waiting for it.
    @Test func closingStopsARunningQuery() async throws {
        let source = try await Self.source()
        let running = Task {
            try await source.query("WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT count(*) FROM n", maxRows: 1, timeout: .seconds(60))
        }
        try await Task.sleep(for: .milliseconds(300))
        let started = ContinuousClock.now
        await source.close()
        #expect(ContinuousClock.now - started < .seconds(15), "the query (60 s) was stopped, not waited for")
        await #expect(throws: (any Error).self) { _ = try await running.value }
    }
}

extension RoleViewTests {
    /// The built-in engine breaks ties of a ranking by the table's rowid on SQLite; a role that reads
    /// the table through its view (which has none) gets an answer that runs all the same.
    @Test func aRankedQuestionRunsForARoleThatReadsThroughAView() async throws {
        let s = try await Self.setUp(.sqlite)
        let (_, all) = try await s.service.schema(app: "main", datasource: "main")
        #expect(all.first { $0.name == "Customer" }?.storedOrder == .rowid)
        func answer(_ tables: [SourceTable], _ caller: QueryCaller) async throws -> (String?, [[SQLValue]]) {
            var request = EngineRequest(
                question: "List the names of customers in alphabetical order.", lang: "en", dialect: .sqlite, schema: "", examples: [], history: [],
                corrections: [])
            request.tables = tables
            guard let sql = BuiltinEngine.answer(request).candidates.first else { return (nil, []) }
            return (sql, try await s.service.query(app: "main", datasource: "main", sql: sql, caller: caller).rows)
        }
        let (everyone, rows) = try await answer(all, .operator)
        #expect(everyone?.contains("t0.rowid") == true, "\(everyone ?? "refused")")
        #expect(rows == [[.text("Ana")], [.text("Ben")], [.text("Cleo")], [.text("Dev")]])
        let analyst = try s.analyst()
        let (viewed, seen) = try await answer(TableAccess.narrow(all, by: analyst.rights), analyst)
        #expect(viewed?.contains("rowid") == false, "\(viewed ?? "refused")")
        #expect(seen == [[.text("Ana")], [.text("Cleo")]])
        await s.close()
    }
}

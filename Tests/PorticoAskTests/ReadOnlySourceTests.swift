import Foundation
import Logging
import PorticoAuth
import PorticoBase
import PorticoData
import PorticoJSON
import PorticoStore
import Testing

@testable import PorticoAsk
@testable import PorticoSources

/// The guard's second layer on its own: SQL that the first layer would have refused is sent
/// straight to the read-only source, which must refuse it and leave the file as it was.
@Suite struct ReadOnlySourceTests {
    /// A small database with a data table and a table named like Portico's own.
    static func makeDatabase() async throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("portico-ask-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("data.sqlite").path
        let store = try SQLiteStore(path: path, logger: Logger(label: "test"))
        try await store.execute("CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL)")
        try await store.execute("CREATE TABLE portico_users (id INTEGER PRIMARY KEY, password_hash TEXT)")
        try await store.execute("INSERT INTO item (name, price) VALUES ('apple', 1.5), ('pear', 2.0), ('plum', 0.5)")
        try await store.execute("INSERT INTO portico_users (password_hash) VALUES ('secret')")
        await store.close()
        return path
    }

    static func source(_ path: String) throws -> SQLiteReadOnlySource {
        try SQLiteReadOnlySource(
            path: path, policy: SQLiteQueryPolicy(hiddenPrefixes: ["sqlite_", "portico_"], functions: DatasourceService.authorizedFunctions))
    }

    @Test func readsRowsWithinTheCap() async throws {
        let source = try Self.source(try await Self.makeDatabase())
        let rows = try await source.query("SELECT name, price FROM item ORDER BY price", maxRows: 2, timeout: .seconds(5))
        #expect(rows.columns == ["name", "price"])
        #expect(rows.rows.count == 2)
        #expect(rows.truncated)
        await source.close()
    }

    @Test(arguments: [
        "DELETE FROM item",
        "UPDATE item SET price = 0",
        "INSERT INTO item (name) VALUES ('x')",
        "DROP TABLE item",
        "CREATE TABLE x (a)",
        "SELECT * FROM portico_users",
        "SELECT name FROM sqlite_master",
        "ATTACH DATABASE ':memory:' AS other",
        "PRAGMA writable_schema = 1",
        "SELECT load_extension('/nonexistent.so')",
        "SELECT readfile('/etc/passwd')",
        "VACUUM INTO '/tmp/portico-ask-copy.sqlite'",
        "SELECT randomblob(10)",
    ])
    func refusesWhatTheFirstLayerWouldHave(_ sql: String) async throws {
        let path = try await Self.makeDatabase()
        let source = try Self.source(path)
        await #expect(throws: StoreError.self) {
            _ = try await source.query(sql, maxRows: 10, timeout: .seconds(5))
        }
        let rows = try await source.query("SELECT count(*) AS n, sum(price) AS total FROM item", maxRows: 1, timeout: .seconds(5))
        #expect(rows.rows.first == [.int(3), .double(4.0)])
        #expect(!FileManager.default.fileExists(atPath: "/tmp/portico-ask-copy.sqlite"))
        await source.close()
    }

    /// Another app's tables in the same file: the authorizer refuses what is not in the visible set.
    @Test func tablesOutsideTheVisibleSetCannotBeRead() async throws {
        let source = try Self.source(try await Self.makeDatabase())
        await #expect(throws: StoreError.self) {
            _ = try await source.query("SELECT name FROM item", maxRows: 10, timeout: .seconds(5), scope: ReadScope(visibleTables: ["orders"]))
        }
        let rows = try await source.query("SELECT name FROM item", maxRows: 10, timeout: .seconds(5), scope: ReadScope(visibleTables: ["Item"]))
        #expect(rows.rows.count == 3)
        #expect(try await source.introspect(only: ["orders"]).isEmpty)
        await source.close()
    }

    @Test func aQueryPastItsTimeLimitIsInterrupted() async throws {
        let source = try Self.source(try await Self.makeDatabase())
        let started = ContinuousClock.now
        await #expect(throws: StoreError.self) {
            _ = try await source.query(
                "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT count(*) FROM n", maxRows: 10, timeout: .milliseconds(300))
        }
        // The query never ends by itself; the bound leaves room for the parallel suites.
        #expect(ContinuousClock.now - started < .seconds(30))
        await source.close()
    }

    @Test func introspectionLeavesHiddenTablesOut() async throws {
        let source = try Self.source(try await Self.makeDatabase())
        let tables = try await source.introspect()
        #expect(tables.map(\.name) == ["item"])
        #expect(tables[0].columns.map(\.name) == ["id", "name", "price"])
        #expect(tables[0].columns[0].primaryKey)
        #expect(tables[0].columns[1].samples.sorted() == ["apple", "pear", "plum"])
        await source.close()
    }

    @Test func introspectionNamesTheOrderTablesKeepTheirRowsIn() async throws {
        let path = try await Self.makeDatabase()
        let store = try SQLiteStore(path: path, logger: Logger(label: "test"))
        try await store.execute("CREATE TABLE coded (code TEXT PRIMARY KEY, label TEXT) WITHOUT ROWID")
        try await store.execute("CREATE TABLE spaced (code TEXT PRIMARY KEY) WITHOUT\n  /* no rowid */ ROWID")
        try await store.execute("CREATE TABLE shadowed (rowid TEXT, label TEXT)")
        try await store.execute("CREATE VIEW cheap AS SELECT name FROM item WHERE price < 1")
        await store.close()
        let source = try Self.source(path)
        let order = Dictionary(uniqueKeysWithValues: try await source.introspect().map { ($0.name, $0.storedOrder?.rawValue ?? "none") })
        #expect(order == ["item": "rowid", "coded": "none", "spaced": "none", "shadowed": "_rowid_", "cheap": "none"])
        // What the built-in engine breaks ties with runs through the read-only guard.
        let rows = try await source.query("SELECT t0.name FROM item t0 ORDER BY t0.price, t0.rowid", maxRows: 10, timeout: .seconds(5))
        #expect(rows.rows.count == 3)
        await source.close()
    }

    @Test func mainShowsTheCatalogsTitlesAsCommentsAndOnlyTheAppsTables() async throws {
        let path = try await Self.makeDatabase()
        let store = try SQLiteStore(path: path, logger: Logger(label: "test"))
        try await store.execute("DROP TABLE portico_users")
        try await Migrator().migrate(store)
        try await store.execute("CREATE TABLE other_app_item (id INTEGER PRIMARY KEY)")
        let service = DatasourceService(
            store: DatasourceStore(database: store, masterKey: MasterKey(bytes: Array(repeating: 7, count: 32))),
            main: { _ in MainDatabase(kind: .sqlite, location: path) },
            mainTables: { _ in [.init(table: "item", comment: "Things for sale", columns: ["price": "Price in euros"])] })
        let (_, tables) = try await service.schema(app: "main", datasource: "main")
        #expect(tables.map(\.name) == ["item"])
        #expect(tables[0].comment == "Things for sale")
        #expect(tables[0].columns.first { $0.name == "price" }?.comment == "Price in euros")
        #expect(tables[0].columns.first { $0.name == "name" }?.comment == nil)
        await service.close()
        await store.close()
    }
}

/// A plan shown to a role that reads a table in part carries none of the planner's figures,
/// which are the whole table's.
@Suite struct PlanFiguresTests {
    @Test func thePlannersEstimatesAreTakenOut() throws {
        let document = try JSONParser.parse(
            """
            [{"Plan": {"Node Type": "Seq Scan", "Relation Name": "Invoice", "Startup Cost": 0.0, "Total Cost": 9.12, "Plan Rows": 412,
              "Plan Width": 40, "Filter": "(x = 1)", "Plans": [{"Node Type": "Index Scan", "Plan Rows": 3, "Total Cost": 1.5}]}}]
            """)
        let plain = PlanReport(postgresJSON: document).withoutFigures()
        #expect(plain.estimatedRows == nil && plain.estimatedCost == nil)
        #expect(plain.fullScans == ["Invoice"])
        let text = plain.json?.serializedString ?? ""
        for figure in ["Cost", "Plan Rows", "Plan Width", "412", "9.12"] { #expect(!text.contains(figure), "\(figure) in \(text)") }
        #expect(text.contains("Seq Scan") && text.contains("Index Scan") && text.contains("(x = 1)"))
        var mysql = PlanReport()
        mysql.lines = ["Invoice: ALL (~412 rows)", "Track: ref"]
        #expect(mysql.withoutFigures().lines == ["Invoice: ALL", "Track: ref"])
    }
}

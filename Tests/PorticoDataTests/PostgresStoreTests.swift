import Foundation
import Logging
import OrderedCollections
import PorticoJSON
import PorticoStore
import PorticoTestSupport
import Synchronization
import Testing

@testable import PorticoData

/// Portico's own store on a real PostgreSQL (the cluster `make test` starts): what replicas that
/// share one database rely on.
@Suite(.enabled(if: Backend.clusterURL != nil))
struct PostgresStoreTests {
    let logger = Logger(label: "test")

    @Test func replicasStartingTogetherMigrateOnce() async throws {
        let url = try await Backend.freshPostgresDatabase()
        let stores = try (0..<3).map { _ in try PostgresStore(url: url, logger: logger) }
        let applied = try await withThrowingTaskGroup(of: [Int].self) { group in
            for store in stores { group.addTask { try await Migrator().migrate(store) } }
            return try await group.reduce(into: [Int]()) { $0 += $1 }
        }
        #expect(applied.sorted() == Migrator.core.map(\.version), "each migration applied by exactly one of the three")
        let rows = try await stores[0].query("SELECT version FROM portico_migrations ORDER BY version")
        #expect(rows.compactMap { $0.int("version") } == Migrator.core.map { Int64($0.version) })
        for store in stores { await store.close() }
    }

    @Test func constraintFailuresAreClassifiedWithTheirColumn() async throws {
        let f = try await Fixture.make(.postgres)
        defer { Task { await f.close() } }
        do {
            try await f.store.execute(#"INSERT INTO "Author" (id, name) VALUES (1, 'again')"#)
            Issue.record("a duplicate key was accepted")
        } catch let error as StoreError {
            #expect(error.kind == .constraint && error.constraint == .unique && error.column == "id", "\(error)")
        }
        do {
            try await f.store.execute(#"INSERT INTO "Author" (id, name) VALUES (9, NULL)"#)
            Issue.record("a null name was accepted")
        } catch let error as StoreError {
            #expect(error.kind == .constraint && error.constraint == .notNull && error.column == "name", "\(error)")
        }
        do {
            try await f.store.execute(#"INSERT INTO "Post" (id, title, "authorId") VALUES (9, 'x', 999)"#)
            Issue.record("a dangling key was accepted")
        } catch let error as StoreError {
            #expect(error.kind == .constraint && error.constraint == .foreignKey, "\(error)")
        }
    }

    @Test func aRecordCreatedAfterRowsWithTheirOwnKeysGetsANewKey() async throws {
        let f = try await Fixture.make(.postgres)
        defer { Task { await f.close() } }
        var request = RecordRequest(resource: "Author")
        request.values = ["name": "Dana"]
        let created = try await f.records.create(app: "main", request, access: .unrestricted)
        #expect(created["data"]?["id"] == 4)
        request.values = ["id": 10, "name": "Eve"]
        _ = try await f.records.create(app: "main", request, access: .unrestricted)
        request.values = ["name": "Finn"]
        #expect(try await f.records.create(app: "main", request, access: .unrestricted)["data"]?["id"] == 11)
    }

    @Test func aFailedTransactionLeavesNothingBehind() async throws {
        let f = try await Fixture.make(.postgres)
        defer { Task { await f.close() } }
        await #expect(throws: StoreError.self) {
            try await f.store.transaction { db in
                try await db.execute(#"INSERT INTO "Author" (id, name) VALUES (20, 'kept?')"#)
                try await db.execute(#"INSERT INTO "Author" (id, name) VALUES (20, 'duplicate')"#)
            }
        }
        #expect(try await f.store.query(#"SELECT id FROM "Author" WHERE id = 20"#).isEmpty)
    }

    @Test func aChangeAnnouncedByOneReplicaIsSeenByAnother() async throws {
        let url = try await Backend.freshPostgresDatabase()
        let a = try PostgresStore(url: url, logger: logger)
        let b = try PostgresStore(url: url, logger: logger)
        defer {
            Task {
                await a.close()
                await b.close()
            }
        }
        // Wait until b listens (its counter moves once when listening starts).
        let deadline = ContinuousClock.now + .seconds(10)
        while !b.isListeningForChanges, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(b.isListeningForChanges)
        let before = b.changes.stamp()
        a.changes.announce()
        var seen = false
        let heardBy = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < heardBy {
            if b.changes.stamp() != before {
                seen = true
                break
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(seen, "b heard a's change within five seconds")
    }

    @Test func anUnreachableDatabaseFailsFastAsUnavailable() async throws {
        // A port nothing listens on.
        var options = PostgresStore.Options()
        options.acquireTimeout = .seconds(1)
        options.connectTimeout = .seconds(1)
        let store = try PostgresStore(url: "postgres://nobody@127.0.0.1:9/none?sslmode=disable", options: options, logger: logger)
        let started = ContinuousClock.now
        do {
            _ = try await store.query("SELECT 1")
            Issue.record("a query on an unreachable database succeeded")
        } catch let error as StoreError {
            #expect(error.kind == .unavailable, "\(error)")
        }
        // Without its time limits the pool would wait for a connection forever; the bound is far above
        // them because the suites run in parallel on as few as two cores (4.09 s was seen with 4 s).
        #expect(ContinuousClock.now - started < .seconds(20))
        await store.close()
    }

    @Test func aCancelledCallersStatementStopsOnTheServer() async throws {
        let url = try await Backend.freshPostgresDatabase()
        let store = try PostgresStore(url: url, logger: logger)
        defer { Task { await store.close() } }
        let sleeper = Task { try await store.query("SELECT pg_sleep(20) AS slept") }
        func sleeping() async throws -> Int64 {
            try await store.query(
                "SELECT COUNT(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'SELECT pg_sleep(20)%' AND state = 'active'"
            ).first?.int("n")
                ?? -1
        }
        var started = false
        for _ in 0..<100 where !started {
            started = try await sleeping() == 1
            if !started { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(started, "the statement is running")
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        var stopped = false
        let deadline = ContinuousClock.now + .seconds(3)
        while !stopped, ContinuousClock.now < deadline {
            stopped = try await sleeping() == 0
            if !stopped { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(stopped, "the server stopped the abandoned statement instead of running it for 20 s")
        #expect(try await store.query("SELECT 1 AS one").first?.int("one") == 1, "the pool serves the next caller")
    }

    @Test func anAppsStoreHearsOfAnOutageFromTheInstancesListener() async throws {
        let url = try await Backend.freshPostgresDatabase()
        let primary = try PostgresStore(url: url, logger: logger)
        let app = try PostgresStore(url: url, changes: primary.changes, logger: logger)
        primary.shareOutages(with: app)
        defer {
            Task {
                await app.close(); await primary.close()
            }
        }
        for _ in 0..<100 where !primary.isListeningForChanges { try await Task.sleep(for: .milliseconds(20)) }
        #expect(primary.isListeningForChanges && !app.isListeningForChanges)
        let started = ContinuousClock.now
        let sleeper = Task { try await app.query("SELECT pg_sleep(20) AS slept") }
        try await Task.sleep(for: .milliseconds(300))
        // The database drops the instance's listening connection, as it does when it shuts down
        // (asked on a store of its own that does not listen, so only that one connection goes).
        let admin = try PostgresStore(url: url, changes: ChangeSignal(path: nil), logger: logger)
        defer { Task { await admin.close() } }
        _ = try await admin.query(
            "SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()"
        )
        do {
            _ = try await sleeper.value
            Issue.record("the app's statement ran to its end")
        } catch let error as StoreError {
            #expect(error.kind == .unavailable, "\(error)")
        }
        // The statement would sleep 20 s: well under that means it was let go (not a speed bound).
        #expect(ContinuousClock.now - started < .seconds(15), "the app's caller was let go when the instance's store heard of the outage")
    }

    @Test func badURLsSayWhatAURLLooksLike() {
        #expect(throws: StoreError.self) { try PostgresStore(url: "mysql://x@y/z", logger: logger) }
        #expect(throws: StoreError.self) { try PostgresStore(url: "postgres://x@y/z?sslmode=sometimes", logger: logger) }
    }

    /// A collection's create repeats one text whatever order its values come in: it is prepared
    /// once per connection and run by name.
    @Test func aCreateIsPreparedOnceOnItsConnection() async throws {
        let f = try await Fixture.make(.postgres)
        defer { Task { await f.close() } }
        let prepared = try await f.store.transaction { db in
            for n in 0..<6 {
                var request = RecordRequest(resource: "Post")
                request.values = ["title": .string("post \(n)"), "score": .double(Double(n)), "published": "2024-05-01 10:00:00", "authorId": 1]
                _ = try await f.records.create(app: "main", request, access: .unrestricted)
            }
            return try await db.query("SELECT name, statement FROM pg_prepared_statements WHERE name LIKE 'portico%'")
        }
        #expect(prepared.count == 1, "\(prepared)")
        #expect(prepared.first?.string("statement")?.hasPrefix("INSERT INTO \"Post\"") == true, "\(prepared)")
        let titles = try await f.store.query(#"SELECT title FROM "Post" WHERE title LIKE 'post %' ORDER BY title"#)
        #expect(titles.compactMap { $0.string("title") } == (0..<6).map { "post \($0)" })
    }

    /// A statement prepared before its table changed, run again under the same name, fails once;
    /// the next call prepares it anew rather than failing on that connection for good.
    @Test func aStatementPreparedBeforeItsTableChangedIsPreparedAnew() async throws {
        let store = try await Self.storeOfOneConnection()
        defer { Task { await store.close() } }
        try await store.execute("CREATE TABLE t (id BIGSERIAL PRIMARY KEY, v INTEGER)")
        #expect(try await Self.insert(1, into: store).first?.int("v") == 1)
        try await store.execute("ALTER TABLE t ALTER COLUMN v TYPE TEXT")
        await #expect(throws: StoreError.self) { try await Self.insert(2, into: store) }
        #expect(try await Self.insert(3, into: store).first?.string("v") == "3")
    }

    /// PostgresNIO keeps a failed preparation for its name on the connection: a statement first
    /// prepared where it could not be (in a transaction an error had ended) runs once it can.
    @Test func aStatementWhosePreparationFailedIsPreparedAnew() async throws {
        let store = try await Self.storeOfOneConnection()
        defer { Task { await store.close() } }
        try await store.execute("CREATE TABLE t (id BIGSERIAL PRIMARY KEY, v INTEGER)")
        let backend = Mutex<Int64?>(nil)
        await #expect(throws: (any Error).self) {
            try await store.transaction { db in
                let pid = try await db.query("SELECT pg_backend_pid() AS pid").first?.int("pid")
                backend.withLock { $0 = pid }
                _ = try? await db.query("SELECT 1 / 0")  // ends the transaction: nothing else runs in it
                _ = try await Self.insert(1, into: db)
            }
        }
        let (pid, v) = try await store.transaction { db in
            (try await db.query("SELECT pg_backend_pid() AS pid").first?.int("pid"), try await Self.insert(2, into: db).first?.int("v"))
        }
        #expect(pid != nil && pid == backend.withLock { $0 }, "the same connection, where the preparation failed")
        #expect(v == 2)
    }

    /// A store with a pool of one (two: its least), so a call finds what the previous one prepared
    /// there on the connection the pool hands out again.
    static func storeOfOneConnection() async throws -> PostgresStore {
        var options = PostgresStore.Options()
        options.poolSize = 1
        return try PostgresStore(
            url: try await Backend.freshPostgresDatabase(), options: options, changes: ChangeSignal(path: nil), logger: Logger(label: "test"))
    }

    /// A prepared insert into `t`, with the shape of a replica that knows `v` as an integer.
    static func insert(_ value: Int64, into db: any Database) async throws -> [Row] {
        var q = SQLFragment("INSERT INTO t (v) VALUES (")
        q.append(bind: .int(value))
        q.append(") RETURNING id, v")
        q.preparedShape = "v integer"
        return try await db.query(q)
    }
}

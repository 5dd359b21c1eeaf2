import Foundation
import Logging
import Synchronization
import Testing

@testable import PorticoStore

/// The storage path: writers queue for one writer, readers never wait behind them, and a
/// statement stops when its caller is cancelled or its time is up.
@Suite struct SQLiteStoreTests {
    static let forever = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) AS n FROM c"

    func store(_ configure: (inout SQLiteStore.Options) -> Void = { _ in }) throws -> (SQLiteStore, URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("portico-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var options = SQLiteStore.Options()
        configure(&options)
        let store = try SQLiteStore(path: directory.appendingPathComponent("t.sqlite").path, options: options, logger: Logger(label: "test"))
        return (store, directory)
    }

    /// Settings are set, replaced and removed (an app's confirmations turned off and on again).
    @Test func settingsAreSetReplacedAndRemoved() async throws {
        let (store, directory) = try store()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await store.execute("CREATE TABLE portico_settings (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        let settings = Settings(database: store)
        #expect(try await settings.value("app.x.confirm_destroy") == nil)
        try await settings.set("app.x.confirm_destroy", "off")
        #expect(try await settings.value("app.x.confirm_destroy") == "off")
        try await settings.set("app.x.confirm_destroy", "on")
        #expect(try await settings.value("app.x.confirm_destroy") == "on")
        try await settings.set("app.x.confirm_destroy", nil)
        #expect(try await settings.value("app.x.confirm_destroy") == nil)
        try await settings.set("app.x.confirm_destroy", nil)
    }

    @Test func concurrentWritersAllSucceedInOrderOfArrival() async throws {
        let (store, directory) = try store()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await store.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, writer INTEGER, n INTEGER)")
        let start = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<8 {
                group.addTask {
                    for n in 0..<15 {
                        if n % 3 == 0 {
                            try await store.transaction { tx in
                                var insert = SQLFragment("INSERT INTO t (writer, n) VALUES (")
                                insert.append(joining: [.bind(.int(Int64(writer))), .bind(.int(Int64(n)))], separator: ", ")
                                insert.append(")")
                                try await tx.execute(insert)
                                _ = try await tx.query("SELECT count(*) AS c FROM t")
                            }
                        } else {
                            var insert = SQLFragment("INSERT INTO t (writer, n) VALUES (")
                            insert.append(joining: [.bind(.int(Int64(writer))), .bind(.int(Int64(n)))], separator: ", ")
                            insert.append(")")
                            try await store.execute(insert)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        // Not a speed bound (a fraction of a second alone; 10.2 s was seen with the suites in parallel on
        // a loaded machine): writers that deadlocked or spun on a busy database would not finish at all.
        #expect(ContinuousClock.now - start < .seconds(60))
        #expect(try await store.query("SELECT count(*) AS c FROM t").first?.int("c") == 120)
        await store.close()
    }

    /// Waits until `flag` is set, or 30 s.
    static func until(_ flag: borrowing Mutex<Bool>) async throws {
        var waited = 0
        while !flag.withLock({ $0 }), waited < 3000 {
            try await Task.sleep(for: .milliseconds(10))
            waited += 1
        }
    }

    @Test func readsDoNotWaitForAnOpenWriteTransaction() async throws {
        let (store, directory) = try store()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await store.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
        try await store.execute("INSERT INTO t (v) VALUES ('before')")
        // Told by order, not by time: the writer holds its transaction until the read is done (or
        // 30 s, were the read to wait for it), and half a second more for the second writer.
        let inside = Mutex(false), read = Mutex(false), released = Mutex(false)
        let holding = Task {
            try await store.transaction { tx in
                try await tx.execute("INSERT INTO t (v) VALUES ('inside')")
                inside.withLock { $0 = true }
                try await Self.until(read)
                try await Task.sleep(for: .milliseconds(500))
                released.withLock { $0 = true }
            }
        }
        try await Self.until(inside)
        try #require(inside.withLock { $0 }, "the writer began its transaction")
        let rows = try await store.query("SELECT v FROM t ORDER BY id")
        #expect(!released.withLock { $0 }, "a read does not wait for the writer")
        read.withLock { $0 = true }
        #expect(rows.map { $0.string("v") } == ["before"], "a reader sees the last committed state")
        try await store.execute("INSERT INTO t (v) VALUES ('after')")
        #expect(released.withLock { $0 }, "a second writer waits its turn")
        try await holding.value
        #expect(try await store.query("SELECT v FROM t ORDER BY id").map { $0.string("v") } == ["before", "inside", "after"])
        await store.close()
    }

    @Test func aStatementPastItsTimeLimitIsInterrupted() async throws {
        let (store, directory) = try store { $0.statementTimeout = .milliseconds(200) }
        defer { try? FileManager.default.removeItem(at: directory) }
        let start = ContinuousClock.now
        await #expect { _ = try await store.query(SQLFragment(Self.forever)) } throws: { ($0 as? StoreError)?.kind == .timeout }
        // A bound far above the 200 ms limit: the statement never ends by itself, and the suites run in
        // parallel on as few as two cores (2.06 s was seen under that load with a 2 s bound).
        #expect(ContinuousClock.now - start < .seconds(10), "the statement was interrupted, not left to run")
        #expect(try await store.query("SELECT 1 AS one").first?.int("one") == 1, "the connection is usable afterwards")
        await store.close()
    }

    @Test func shortReadsRunOnTheCallersThreadAndSlowOnesMoveToTheReaders() async throws {
        let (store, directory) = try store { $0.statementTimeout = .milliseconds(300) }
        defer { try? FileManager.default.removeItem(at: directory) }
        try await store.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
        try await store.execute("INSERT INTO t (v) VALUES ('a')")
        #expect(store.route(of: "INSERT INTO t (v) VALUES ('a')") == .write, "a write found by its first try goes to the writer from then on")
        #expect(try await store.query("SELECT v FROM t").first?.string("v") == "a")
        #expect(store.route(of: "SELECT v FROM t") == .read)
        // Past the inline budget (1 ms) it is abandoned and run again on a reader thread, where
        // the statement limit stops it; next time it goes to the readers directly.
        let start = ContinuousClock.now
        await #expect { _ = try await store.query(SQLFragment(Self.forever)) } throws: { ($0 as? StoreError)?.kind == .timeout }
        #expect(ContinuousClock.now - start < .seconds(10), "the statement (which never ends) was stopped at its limit")
        #expect(store.route(of: Self.forever)?.isSlowRead == true)
        #expect(try await store.query("INSERT INTO t (v) VALUES ('b') RETURNING id").first?.int("id") == 2, "a write sent as a query still runs")
        await store.close()
    }

    @Test func aReadThatWasSlowOnceIsTriedOnTheCallersThreadAgain() async throws {
        // A read past the budget goes to the reader threads, but not for good: a statement that
        // was slow once (preempted, a cold cache, a table since emptied) comes back once it fits.
        let (store, directory) = try store()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await store.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
        try await store.execute(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300000) INSERT INTO t (v) SELECT printf('%040d', i) FROM n")
        let scan = "SELECT sum(length(v)) AS n FROM t"
        #expect(try await store.query(SQLFragment(scan)).first?.int("n") == 12_000_000)
        #expect(store.route(of: scan)?.isSlowRead == true, "300,000 rows take longer than the 1 ms budget")
        try await store.execute("DELETE FROM t")
        // Each try that still misses doubles the wait (0.1 s, 0.2 s, ...): the sleeps keep pace,
        // and a few are enough even on a loaded machine.
        for attempt in 0..<6 where store.route(of: scan) != .read {
            try await Task.sleep(for: .milliseconds(100 << attempt))
            #expect(try await store.query(SQLFragment(scan)).first?["n"] == .null)
        }
        #expect(store.route(of: scan) == .read, "the emptied table's scan is back on the caller's thread")
        await store.close()
    }

    @Test func aSlowReadWaitsLongerAfterEachMiss() {
        let start: UInt64 = 1_000_000_000
        var route = SQLiteStore.Route.read.missed(at: start)
        #expect(route == .slowRead(retryAt: start + 100_000_000, misses: 1))
        var waits: [UInt64] = []
        for _ in 0..<14 {
            route = route.missed(at: start)
            if case .slowRead(let retryAt, _) = route { waits.append(retryAt - start) }
        }
        #expect(Array(waits.prefix(3)) == [200_000_000, 400_000_000, 800_000_000])
        #expect(waits.last == 60_000_000_000, "at most a minute")
        #expect(SQLiteStore.Route.slowRead(retryAt: 0, misses: 1).triesInline)
        #expect(!SQLiteStore.Route.slowRead(retryAt: .max, misses: 1).triesInline)
        #expect(!SQLiteStore.Route.write.triesInline)
    }

    @Test func cancellingTheCallerStopsItsStatement() async throws {
        // Every read on the reader threads (none on the caller's), and only one of them.
        let (store, directory) = try store {
            $0.readers = 1
            $0.inlineReadBudget = .zero
        }
        defer { try? FileManager.default.removeItem(at: directory) }
        let running = Task { try await store.query(SQLFragment(Self.forever)) }
        // A second query queued behind it on the only reader; cancelled, it must not wait.
        let queued = Task { try await store.query("SELECT 2 AS two") }
        try await Task.sleep(for: .milliseconds(150))
        let start = ContinuousClock.now
        queued.cancel()
        await #expect(throws: CancellationError.self) { _ = try await queued.value }
        running.cancel()
        await #expect(throws: CancellationError.self) { _ = try await running.value }
        #expect(ContinuousClock.now - start < .seconds(10), "the statements (which never end) were stopped")
        #expect(try await store.query("SELECT 1 AS one").first?.int("one") == 1)
        await store.close()
    }

    @Test func aCallerCancelledBeforeItsQueryIsQueuedIsNotLeftWaiting() async throws {
        // The cancellation handler runs before the job is queued; nobody may be left waiting for it.
        let (store, directory) = try store { $0.inlineReadBudget = .zero }
        defer { try? FileManager.default.removeItem(at: directory) }
        let finished = Mutex<String?>(nil)
        Task {
            withUnsafeCurrentTask { $0?.cancel() }
            let outcome = (try? await store.query("SELECT 1 AS one")).map { _ in "answered" } ?? "cancelled"
            finished.withLock { $0 = outcome }
        }
        // Polled, so a caller left waiting fails the test instead of hanging it.
        var outcome: String?
        for _ in 0..<50 where outcome == nil {
            try await Task.sleep(for: .milliseconds(100))
            outcome = finished.withLock { $0 }
        }
        #expect(outcome == "cancelled")
        await store.close()
    }

    @Test func aCancelledTransactionRollsBackAndFreesTheWriter() async throws {
        let (store, directory) = try store()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await store.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
        let task = Task {
            try await store.transaction { tx in
                try await tx.execute("INSERT INTO t (v) VALUES ('lost')")
                _ = try await tx.query(SQLFragment(Self.forever))
            }
        }
        try await Task.sleep(for: .milliseconds(150))
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        try await store.execute("INSERT INTO t (v) VALUES ('kept')")
        #expect(try await store.query("SELECT v FROM t").map { $0.string("v") } == ["kept"])
        await store.close()
    }

    @Test func limitsBecomeClearErrors() async throws {
        let (store, directory) = try store { $0.limits.expressionDepth = 50 }
        defer { try? FileManager.default.removeItem(at: directory) }
        let deep = "SELECT " + String(repeating: "(1 + ", count: 100) + "1" + String(repeating: ")", count: 100) + " AS x"
        await #expect { _ = try await store.query(SQLFragment(deep)) } throws: { ($0 as? StoreError)?.kind == .tooComplex }
        await store.close()
    }

    @Test func theFileIsReadableByItsOwnerOnly() async throws {
        let (store, directory) = try store()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await store.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)")
        for suffix in ["", "-wal", "-shm"] {
            let attributes = try FileManager.default.attributesOfItem(atPath: store.path + suffix)
            #expect((attributes[.posixPermissions] as? Int) == 0o600, "\(suffix)")
        }
        await store.close()
    }

    @Test func readOnlyConnectionsRefuseWritesAndWritesAreRoutedToTheWriter() async throws {
        let (store, directory) = try store()
        defer { try? FileManager.default.removeItem(at: directory) }
        // The first time a statement is seen it is prepared on a reader, found to write, and sent on.
        try await store.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
        for _ in 0..<3 { try await store.execute("INSERT INTO t (v) VALUES ('x')") }
        let inserted = try await store.query("INSERT INTO t (v) VALUES ('y') RETURNING id")
        #expect(inserted.first?.int("id") == 4)
        await store.close()
        let readOnly = try SQLiteStore(
            path: store.path,
            options: {
                var o = SQLiteStore.Options(); o.readOnly = true; return o
            }(), logger: Logger(label: "test"))
        await #expect { try await readOnly.execute("INSERT INTO t (v) VALUES ('z')") } throws: { ($0 as? StoreError)?.kind == .readOnly }
        #expect(try await readOnly.query("SELECT count(*) AS c FROM t").first?.int("c") == 4)
        await readOnly.close()
    }
}

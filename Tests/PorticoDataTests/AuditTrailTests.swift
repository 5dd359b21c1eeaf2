import Foundation
import Logging
import PorticoJSON
import PorticoStore
import PorticoTestSupport
import Testing

@testable import PorticoData

/// The audit trail keeps what it is given until `flush` writes it, in batches, to each app's
/// database; reads filter and order it; retention removes old records.
@Suite struct AuditTrailTests {
    func record(_ i: Int, app: String = "main", principal: String = "ada", tool: String = "resource_list", at: Int64? = nil) -> ToolCall {
        ToolCall(
            at: at ?? 1_700_000_000_000 + Int64(i), app: app, userID: principal == "ada" ? 1 : nil, principal: principal, credential: "key:abc",
            client: "test", clientVersion: "1", tool: tool, arguments: ["i": .int(Int64(i))],
            outcome: i % 7 == 0 ? "tool_error" : "ok", durationMilliseconds: Int64(i % 5))
    }

    @Test(arguments: Backend.available) func aFlushWaitsForTheOneUnderWay(_ backend: Backend) async throws {
        let f = try await Fixture.make(backend)
        defer { Task { await f.close() } }
        let trail = AuditTrail(databases: f.catalogs.databases, logger: Logger(label: "test"))
        for i in 0..<20_000 { trail.record(record(i)) }
        // The background flush takes every pending record and is still writing them when a
        // reader flushes with nothing left pending: the reader's flush returns only once those
        // are written, so what it reads next includes them.
        let background = Task { try await trail.flush() }
        while trail.pendingCount > 0 { await Task.yield() }
        try await trail.flush()
        let read = try await trail.read(app: "main", AuditTrail.Query(limit: 10_000))
        #expect(read.count == 10_000 && read.first?.at == 1_700_000_000_000 + 19_999)
        try await background.value
    }

    @Test(arguments: Backend.available) func recordsAreWrittenInBatchesAndReadNewestFirst(_ backend: Backend) async throws {
        let f = try await Fixture.make(backend)
        defer { Task { await f.close() } }
        let trail = AuditTrail(databases: f.catalogs.databases, logger: Logger(label: "test"))
        for i in 0..<450 { trail.record(record(i, principal: i % 3 == 0 ? "bob" : "ada", tool: i % 2 == 0 ? "resource_get" : "resource_list")) }
        #expect(trail.pendingCount == 450)
        #expect(try await trail.read(app: "main", AuditTrail.Query()).isEmpty, "nothing is written before a flush")
        try await trail.flush()
        #expect(trail.pendingCount == 0)
        let newest = try await trail.read(app: "main", AuditTrail.Query(limit: 3))
        #expect(newest.map(\.at) == [1_700_000_000_449, 1_700_000_000_448, 1_700_000_000_447])
        #expect(newest[0] == record(449, principal: "ada", tool: "resource_list").record, "every field comes back as it was recorded")
        #expect(newest[0].client == "test/1" && newest[0].argumentsDigest == ToolCallRecord.digest(["i": 449]))
        let bobs = try await trail.read(app: "main", AuditTrail.Query(principal: "bob", tool: "resource_get", limit: 1000))
        #expect(bobs.count == 75 && bobs.allSatisfy { $0.principal == "bob" && $0.tool == "resource_get" })
        let recent = try await trail.read(app: "main", AuditTrail.Query(since: 1_700_000_000_400, limit: 1000))
        #expect(recent.count == 50)
        // Retention: records older than the kept days go.
        trail.record(record(0, at: Int64(Date().timeIntervalSince1970 * 1000)))
        try await trail.flush()
        try await trail.prune(apps: ["main"], now: Date())
        #expect(try await trail.read(app: "main", AuditTrail.Query(limit: 1000)).count == 1)
    }

    /// What the request path hands over is written out later as the record it stands for: the
    /// client with its version, long text clipped, the arguments' digest written as hex into the
    /// line the same as `ToolCallRecord.digest` makes it.
    @Test(arguments: Backend.available) func aCallIsWrittenOutAsItsRecord(_ backend: Backend) async throws {
        let f = try await Fixture.make(backend)
        defer { Task { await f.close() } }
        let trail = AuditTrail(databases: f.catalogs.databases, logger: Logger(label: "test"))
        let arguments: JSONObject = ["resource": "albums", "filter": ["title": ["$includes": "é\"\n"]], "page": 2]
        let calls = [
            ToolCall(
                at: 1, app: "main", userID: nil, principal: nil, credential: "none", client: "curl/8", tool: "resource_list",
                arguments: arguments, outcome: "error", durationMilliseconds: 3),
            ToolCall(
                at: 2, app: "main", userID: 7, principal: String(repeating: "p", count: 300), credential: "key:k", client: "agent",
                clientVersion: String(repeating: "v", count: 250), tool: String(repeating: "t", count: 150), arguments: [:], outcome: "ok",
                durationMilliseconds: 0),
        ]
        for call in calls { trail.record(call) }
        trail.writeOut()
        #expect(trail.pendingCount == 2, "written out is still pending until stored")
        try await trail.flush()
        let read = try await trail.read(app: "main", AuditTrail.Query())
        #expect(read.count == 2)
        let (first, second) = (read[1], read[0])
        #expect(first.principal == "anonymous" && first.client == "curl/8" && first.userID == nil)
        #expect(first.argumentsDigest == ToolCallRecord.digest(arguments) && first.argumentsDigest.count == 64)
        #expect(
            second.client == "agent/" + String(repeating: "v", count: 194) + "…" && second.principal == String(repeating: "p", count: 100) + "…"
                && second.tool.count == 101)
        #expect(second.argumentsDigest == "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a", "SHA-256 of {}")
        #expect(Array(read.reversed()) == calls.map(\.record), "the line read back is the record the call stands for")
    }

    /// A flush that cannot store its batches keeps them for the next, counted as pending; the next
    /// flush stores them before what was recorded since, and none is written twice.
    @Test(arguments: Backend.available) func whatAFlushCouldNotStoreTheNextStores(_ backend: Backend) async throws {
        let f = try await Fixture.make(backend)
        defer { Task { await f.close() } }
        let trail = AuditTrail(databases: f.catalogs.databases, logger: Logger(label: "test"))
        for i in 0..<1_500 { trail.record(record(i)) }
        try await f.store.execute("DROP TABLE portico_audit_batches")
        try await trail.flush()
        #expect(trail.pendingCount == 1_500, "nothing stored, nothing lost")
        for i in 1_500..<1_700 { trail.record(record(i)) }
        #expect(trail.pendingCount == 1_700)
        for statement in AuditTrail.createTable(flavor: f.store.flavor) { try await f.store.execute(statement) }
        try await trail.flush()
        #expect(trail.pendingCount == 0)
        let read = try await trail.read(app: "main", AuditTrail.Query(limit: 10_000))
        #expect(read.count == 1_700 && Set(read.map(\.at)).count == 1_700)
        let rows = try await f.store.query("SELECT count FROM portico_audit_batches ORDER BY id")
        #expect(rows.map { $0.int("count") ?? 0 } == [1_000, 500, 200], "the kept batches first, then the new")
    }

    /// A flush writes each app's records as rows of at most a thousand records each; a read of the
    /// newest goes through as many rows as it needs, in whatever order their times overlap, and an
    /// app reads only its own.
    @Test(arguments: Backend.available) func eachFlushWritesARowPerThousandRecordsOfAnApp(_ backend: Backend) async throws {
        let f = try await Fixture.make(backend)
        defer { Task { await f.close() } }
        let trail = AuditTrail(databases: f.catalogs.databases, logger: Logger(label: "test"))
        // Recorded out of time order, as calls that end in another order than they began.
        for i in 0..<2_500 { trail.record(record(i % 2 == 0 ? i : 2_500 - i)) }
        for i in 0..<30 { trail.record(record(10_000 + i, app: "other", principal: "eve")) }
        try await trail.flush()
        let rows = try await f.store.query("SELECT app, count, first_at, last_at FROM portico_audit_batches ORDER BY app, id")
        #expect(rows.map { $0.string("app") ?? "" } == ["main", "main", "main", "other"])
        #expect(rows.map { $0.int("count") ?? 0 } == [1_000, 1_000, 500, 30])
        let main = try await trail.read(app: "main", AuditTrail.Query(limit: 10_000))
        #expect(main.count == 2_500 && !main.contains { $0.principal == "eve" })
        #expect(main.map(\.at) == main.map(\.at).sorted(by: >), "newest first across batches")
        let newest = try await trail.read(app: "main", AuditTrail.Query(limit: 5))
        #expect(newest.map(\.at) == (2_495...2_499).reversed().map { 1_700_000_000_000 + Int64($0) })
        // Filters read through batches until enough records match.
        let sevenths = try await trail.read(app: "main", AuditTrail.Query(principal: "bob", limit: 40))
        #expect(sevenths.isEmpty)
        let other = try await trail.read(app: "other", AuditTrail.Query(since: 1_700_000_010_020, limit: 100))
        #expect(other.map(\.at) == (20..<30).reversed().map { 1_700_000_010_000 + Int64($0) } && other.allSatisfy { $0.app == "other" })
    }

    /// More batches than a page of the read: every record comes back once, newest first, across pages
    /// (each batch here ends after the next one begins).
    @Test(arguments: Backend.available) func aReadGoesOnPastAPageOfBatches(_ backend: Backend) async throws {
        let f = try await Fixture.make(backend)
        defer { Task { await f.close() } }
        let trail = AuditTrail(databases: f.catalogs.databases, logger: Logger(label: "test"))
        for flush in 0..<75 {
            for i in 0..<4 { trail.record(record(flush * 3 + i)) }
            try await trail.flush()
        }
        let read = try await trail.read(app: "main", AuditTrail.Query(limit: 10_000))
        #expect(read.count == 300)
        #expect(read.map(\.at) == read.map(\.at).sorted(by: >))
        let limited = try await trail.read(app: "main", AuditTrail.Query(tool: "resource_list", limit: 250))
        #expect(limited.count == 250 && limited.map(\.at) == read.prefix(250).map(\.at))
    }

    /// A database that kept the trail as a row per call (before batches) has its rows moved into
    /// batches by the migration, every field as it was, the newest still first.
    @Test(arguments: Backend.available) func rowsOfTheOldTableMoveIntoBatches(_ backend: Backend) async throws {
        let f = try await Fixture.make(backend)
        defer { Task { await f.close() } }
        for statement in AuditTrail.rowTable(flavor: f.store.flavor) { try await f.store.execute(statement) }
        let old = (0..<150).map { record($0 * 1_000, principal: $0 % 2 == 0 ? "ada" : "bob", tool: "t'\($0)\"\n").record }
        try await f.store.insertMany(
            into: "portico_audit",
            columns: ["at", "app", "user_id", "principal", "credential", "client", "tool", "arguments_digest", "outcome", "duration_ms"],
            rows: old.map { r in
                [
                    .int(r.at), .text(r.app), r.userID.map { .int($0) } ?? .null, .text(r.principal), .text(r.credential), .text(r.client),
                    .text(r.tool), .text(r.argumentsDigest), .text(r.outcome), .int(r.durationMilliseconds),
                ]
            })
        for statement in AuditTrail.batchesFromRows(flavor: f.store.flavor) { try await f.store.execute(statement) }
        #expect(try await f.store.columnTypes(of: "portico_audit").isEmpty, "the old table is gone")
        let trail = AuditTrail(databases: f.catalogs.databases, logger: Logger(label: "test"))
        let read = try await trail.read(app: "main", AuditTrail.Query(limit: 1_000))
        #expect(read == old.reversed())
        #expect(try await f.store.query("SELECT COUNT(*) AS n FROM portico_audit_batches")[0].int("n") == 3, "a batch per minute")
    }

    /// The bulk insert the trail writes with: one transaction, so a batch with a bad row leaves
    /// nothing behind, and inside an open transaction it joins that one.
    @Test(arguments: Backend.available) func insertManyIsAllOrNothing(_ backend: Backend) async throws {
        let f = try await Fixture.make(backend)
        defer { Task { await f.close() } }
        let db = f.store
        try await db.execute("CREATE TABLE bulk (n BIGINT NOT NULL, label TEXT)")
        let rows: [[SQLValue]] = (0..<120).map { [.int(Int64($0)), $0 % 2 == 0 ? .text("even \($0)") : .null] }
        try await db.insertMany(into: "bulk", columns: ["n", "label"], rows: rows)
        let written = try await db.query("SELECT COUNT(*) AS c, SUM(n) AS s, COUNT(label) AS l FROM bulk")
        #expect(written[0].int("c") == 120 && written[0].int("s") == 7140 && written[0].int("l") == 60)
        await #expect(throws: (any Error).self, "a NULL in a NOT NULL column fails the batch") {
            try await db.insertMany(into: "bulk", columns: ["n", "label"], rows: [[.int(1000), .text("kept?")], [.null, .text("bad")]])
        }
        // A bad row late in a long batch (on PostgreSQL, inside its second multi-row statement).
        let late: [[SQLValue]] = (0..<80).map { [$0 == 70 ? .null : .int(Int64(1000 + $0)), .text("late")] }
        await #expect(throws: (any Error).self) { try await db.insertMany(into: "bulk", columns: ["n", "label"], rows: late) }
        #expect(try await db.query("SELECT COUNT(*) AS c FROM bulk")[0].int("c") == 120, "the failed batches left no row behind")
        await #expect(throws: (any Error).self) {
            try await db.transaction { tx in
                try await tx.insertMany(into: "bulk", columns: ["n", "label"], rows: [[.int(2000), .null]])
                throw DataError.invalid("roll back")
            }
        }
        #expect(try await db.query("SELECT COUNT(*) AS c FROM bulk")[0].int("c") == 120, "inside a transaction the rows go with its rollback")
        try await db.insertMany(into: "bulk", columns: ["n", "label"], rows: [])
    }

    /// With a key to skip conflicts on, a row whose key is taken (already, or earlier in the same
    /// batch) is left out and the rest are written; without one, it fails the batch.
    @Test(arguments: Backend.available) func insertManySkipsTakenKeysWhenAsked(_ backend: Backend) async throws {
        let f = try await Fixture.make(backend)
        defer { Task { await f.close() } }
        let db = f.store
        try await db.execute("CREATE TABLE keyed (id TEXT PRIMARY KEY, n BIGINT NOT NULL)")
        try await db.insertMany(into: "keyed", columns: ["id", "n"], rows: [[.text("a"), .int(1)]])
        // Long enough for PostgreSQL's multi-row statements, with a key taken before and one twice.
        let rows: [[SQLValue]] = [[.text("a"), .int(2)]] + (0..<60).map { [.text("k\($0)"), .int(Int64($0))] } + [[.text("k5"), .int(99)]]
        try await db.insertMany(into: "keyed", columns: ["id", "n"], rows: rows, skippingConflictsOn: ["id"])
        let written = try await db.query("SELECT COUNT(*) AS c, SUM(n) AS s FROM keyed")
        #expect(written[0].int("c") == 61 && written[0].int("s") == 1 + (0..<60).reduce(0, +), "the first value of each key is kept")
        await #expect(throws: (any Error).self) {
            try await db.insertMany(into: "keyed", columns: ["id", "n"], rows: [[.text("b"), .int(1)], [.text("a"), .int(3)]])
        }
        #expect(try await db.query("SELECT COUNT(*) AS c FROM keyed")[0].int("c") == 61)
    }

    /// Each row's texts, bound from one buffer per row on SQLite, arrive as given: empty, short,
    /// long, non-ASCII, beside numbers and NULLs, and never another row's, in a batch of a few rows
    /// and in one long enough for PostgreSQL's multi-row statements (fifty rows each) and a rest.
    @Test(arguments: Backend.available) func insertManyWritesEachTextAsGiven(_ backend: Backend) async throws {
        let f = try await Fixture.make(backend)
        defer { Task { await f.close() } }
        let db = f.store
        try await db.execute("CREATE TABLE texts (n BIGINT NOT NULL, a TEXT, b TEXT, c TEXT)")
        let long = String(repeating: "long text ", count: 500)
        let shapes: [(Int64) -> [SQLValue]] = [
            { [.int($0), .text(""), .text("short \($0)"), .text(long + "\($0)")] },
            { [.int($0), .text("Ünïcødé ✓ \($0)"), .null, .text("x")] },
            { [.int($0), .null, .text(""), .null] },
            { [.int($0), .text("a\($0)"), .text("b"), .text("c")] },
        ]
        for count in [4, 103] {
            try await db.execute("DELETE FROM texts")
            let rows = (0..<count).map { shapes[$0 % shapes.count](Int64($0)) }
            try await db.insertMany(into: "texts", columns: ["n", "a", "b", "c"], rows: rows)
            let read = try await db.query("SELECT n, a, b, c FROM texts ORDER BY n")
            #expect(read.count == count)
            for (row, given) in zip(read, rows) {
                #expect([row["n"], row["a"], row["b"], row["c"]].map { $0 ?? .null } == given)
            }
        }
    }

    @Test func sinceTakesDatesTimesAndMilliseconds() {
        #expect(AuditTrail.parseSince("2026-11-23") == 1_795_392_000_000)
        let tenAM: Int64 = 1_795_428_000_000
        #expect(AuditTrail.parseSince("2026-11-23T10:00:00Z") == tenAM)
        #expect(AuditTrail.parseSince("1700000000000") == 1_700_000_000_000)
        #expect(AuditTrail.parseSince("yesterday") == nil)
    }
}

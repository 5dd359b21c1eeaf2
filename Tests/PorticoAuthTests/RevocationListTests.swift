import Foundation
import Logging
import PorticoData
import PorticoStore
import PorticoTestSupport
import Synchronization
import Testing

@testable import PorticoAuth

/// Ended sessions are remembered within a bound; revoked tokens are never dropped for room.
@Suite struct RevocationListTests {
    @Test func endedSessionsPastTheLimitForgetTheOldestFirst() {
        var sessions = RevocationList.EndedSessions(limit: 3)
        for n in 1...5 { sessions.insert("session:\(n)", expiresAt: 100) }
        #expect(sessions.count == 3)
        #expect(!sessions.contains("session:1") && !sessions.contains("session:2"))
        #expect(sessions.contains("session:3") && sessions.contains("session:5"))
        sessions.insert("session:5", expiresAt: 100)  // already there: nothing else is dropped
        #expect(sessions.contains("session:3"))
        sessions.removeExpired(now: 200)
        #expect(sessions.count == 0)
        sessions.insert("session:6", expiresAt: 300)
        #expect(sessions.contains("session:6"))
    }

    @Test(arguments: Backend.available) func churnedSessionsStayBoundedWhileTokensStay(_ backend: Backend) async throws {
        let fixture = try await AuthFixture.make(backend)
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let list = RevocationList(database: fixture.store, logger: Logger(label: "test"), maxEndedSessions: 50)
        let expires = Int64(Date().timeIntervalSince1970) + 3600
        try await list.revoke("token:kept", expiresAt: expires)
        // Eight flushes of fifty ended sessions: eight batches.
        for n in 0..<400 {
            try await list.revoke("session:\(n)", expiresAt: expires)
            if n % 50 == 49 { try await list.flush() }
        }
        #expect(list.endedSessionCount == 50)
        #expect(list.contains("session:399") && !list.contains("session:0"))
        #expect(list.contains("token:kept"))
        #expect(try await fixture.store.query("SELECT COUNT(*) AS n FROM portico_ended_session_batches")[0].int("n") == 8)
        #expect(try await fixture.store.query("SELECT COUNT(*) AS n FROM portico_revocations")[0].int("n") == 1, "a row for the token only")
        // The rows follow, so a replica reading them does not grow either: the newest batch holds the fifty.
        try await list.purgeSessionsBeyondLimit()
        let kept = try await fixture.store.query("SELECT SUM(count) AS n FROM portico_ended_session_batches")
        #expect(kept.first?.int("n") == 50)
        let other = RevocationList(database: fixture.store, logger: Logger(label: "other"), maxEndedSessions: 50)
        try await other.refresh()
        #expect(other.contains("session:399") && other.contains("session:350") && !other.contains("session:349"))
        #expect(other.contains("token:kept"))
        await fixture.store.close()
    }

    /// Another replica's ended sessions are read from its batches, each with its own expiry; a
    /// session past its expiry is not taken, and a line that is not one is skipped.
    @Test(arguments: Backend.available) func endedSessionsReachTheOtherReplicas(_ backend: Backend) async throws {
        let fixture = try await AuthFixture.make(backend)
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let (one, two) = (
            RevocationList(database: fixture.store, logger: Logger(label: "one")), RevocationList(database: fixture.store, logger: Logger(label: "two"))
        )
        let now = Int64(Date().timeIntervalSince1970)
        try await one.revoke("session:abc-_1", expiresAt: now + 600)
        try await one.revoke("session:abc-_2", expiresAt: now + 1200)
        try await one.revoke("session:gone", expiresAt: now - 1)
        try await one.flush()
        try await two.refresh()
        #expect(two.contains("session:abc-_1") && two.contains("session:abc-_2") && !two.contains("session:abc-_3"))
        #expect(!two.contains("session:gone"), "a session past its expiry is not taken from a batch still current")
        #expect(two.batchesParsed == 1)
        // Read again within the overlap, a batch is not parsed again; a new one is.
        try await two.refresh()
        #expect(two.batchesParsed == 1)
        try await two.revoke("session:mine", expiresAt: now + 600)
        try await two.flush()
        try await one.revoke("session:abc-_3", expiresAt: now + 600)
        try await one.flush()
        try await two.refresh()
        #expect(two.contains("session:abc-_3") && two.endedSessionCount == 4 && two.batchesParsed == 2)
        #expect(!one.contains("session:mine"))
        try await one.refresh()
        #expect(one.contains("session:mine"))
        var lines: [(String, Int64)] = []
        EndedSessionBatch.read("good 12\nbad\n\nalso-good 13\nworse x") { lines.append(($0, $1)) }
        #expect(lines.map(\.0) == ["good", "also-good"] && lines.map(\.1) == [12, 13])
        await fixture.store.close()
    }

    /// Rows are stamped when written: a flush that lands late (retried after a failure) is still
    /// ahead of what another replica has read past in the meantime.
    @Test(arguments: Backend.available) func aLateFlushIsStampedWhenItLands(_ backend: Backend) async throws {
        let fixture = try await AuthFixture.make(backend)
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let start = Date()
        let time = Mutex(start)
        let late = RevocationList(database: fixture.store, logger: Logger(label: "late"), clock: WallClock { time.withLock { $0 } })
        let reader = RevocationList(database: fixture.store, logger: Logger(label: "reader"))
        let other = RevocationList(database: fixture.store, logger: Logger(label: "other"), clock: WallClock { start + 5 })
        let expires = Int64(start.timeIntervalSince1970) + 3600
        try await late.revoke("session:late", expiresAt: expires)
        try await late.revoke("token:late", expiresAt: expires)
        // Another replica's row five seconds on is read first, moving the reader past the revocations above.
        try await other.revoke("token:other", expiresAt: expires, immediate: true)
        try await reader.refresh()
        #expect(reader.contains("token:other"))
        time.withLock { $0 = start + 6 }
        try await late.flush()
        try await reader.refresh()
        #expect(reader.contains("session:late") && reader.contains("token:late"))
        await fixture.store.close()
    }

    /// A database that kept ended sessions as rows of `portico_revocations` has them moved into
    /// batches by the migration, each with its expiry; revoked tokens stay rows.
    @Test(arguments: Backend.available) func endedSessionsKeptAsRowsMoveIntoBatches(_ backend: Backend) async throws {
        let fixture = try await AuthFixture.make(backend)
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let now = Int64(Date().timeIntervalSince1970)
        try await fixture.store.insertMany(
            into: "portico_revocations", columns: ["id", "revoked_at", "expires_at", "origin"],
            rows: [
                [.text("session:old1"), .int(now - 10), .int(now + 100), .null], [.text("session:old2"), .int(now - 5), .int(now + 200), .text("x")],
                [.text("token:t"), .int(now), .int(now + 300), .null],
            ])
        for statement in Migrator.endedSessionsFromRows(flavor: fixture.store.flavor) { try await fixture.store.execute(statement) }
        #expect(try await fixture.store.query("SELECT id FROM portico_revocations").compactMap { $0.string("id") } == ["token:t"])
        let list = RevocationList(database: fixture.store, logger: Logger(label: "test"))
        try await list.refresh()
        #expect(list.contains("session:old1") && list.contains("session:old2") && list.contains("token:t"))
        let batches = try await fixture.store.query("SELECT origin, sessions FROM portico_ended_session_batches ORDER BY origin")
        #expect(batches.map { $0.string("sessions") } == ["old1 \(now + 100)", "old2 \(now + 200)"], "a batch per origin, each line with its expiry")
        await fixture.store.close()
    }
}

/// A database whose first batch of revocations waits until the test lets it go: a flush
/// caught between taking the pending entries and committing them.
private final class HeldInsert: Database, Sendable {
    let inner: any Database
    let arrived = AsyncStream<Void>.makeStream()
    let release = AsyncStream<Void>.makeStream()
    private let held = Mutex(false)

    init(_ inner: any Database) { self.inner = inner }

    var flavor: SQLFlavor { inner.flavor }
    var logger: Logger { inner.logger }
    var changes: ChangeSignal { inner.changes }

    func query(_ statement: SQLFragment) async throws -> [Row] {
        try await inner.query(statement)
    }

    func insertMany(into table: String, columns: [String], rows: [[SQLValue]], skippingConflictsOn key: [String]) async throws {
        let first =
            table == "portico_revocations"
            && held.withLock { held in
                defer { held = true }
                return !held
            }
        if first {
            arrived.continuation.yield()
            for await _ in release.stream { break }
        }
        try await inner.insertMany(into: table, columns: columns, rows: rows, skippingConflictsOn: key)
    }

    func transaction<T: Sendable>(_ body: @escaping @Sendable (any Database) async throws -> T) async throws -> T {
        try await inner.transaction(body)
    }

    func close() async { await inner.close() }
}

/// Whether a task got past its call.
private final class Returned: Sendable {
    let value = Mutex(false)
}

extension RevocationListTests {
    /// An immediate revocation returns only once its row is written, even when a background flush
    /// took its entry first and has not committed yet.
    @Test(arguments: Backend.available) func anImmediateRevocationWaitsForTheFlushThatTookItsEntry(_ backend: Backend) async throws {
        let fixture = try await AuthFixture.make(backend)
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let database = HeldInsert(fixture.store)
        let list = RevocationList(database: database, logger: Logger(label: "test"))
        let expires = Int64(Date().timeIntervalSince1970) + 3600
        try await list.revoke("token:first", expiresAt: expires)
        // The background flush takes the entry and is held before its INSERT.
        let background = Task { try await list.flush() }
        for await _ in database.arrived.stream { break }
        let returned = Returned()
        let immediate = Task {
            try await list.revoke("token:second", expiresAt: expires, immediate: true)
            returned.value.withLock { $0 = true }
        }
        try await Task.sleep(for: .milliseconds(200))
        #expect(!returned.value.withLock { $0 }, "the immediate revocation returned while an earlier flush had not written")
        database.release.continuation.yield()
        try await background.value
        try await immediate.value
        let rows = try await fixture.store.query("SELECT id FROM portico_revocations ORDER BY id")
        #expect(rows.compactMap { $0.string("id") } == ["token:first", "token:second"])
        await fixture.store.close()
    }
}

extension RevocationListTests {
    /// Each process marks the rows it writes and reads back only the others': two lists on one
    /// database (two replicas, or `portico apikey revoke` beside a server) each learn the other's.
    @Test(arguments: Backend.available) func eachListReadsTheOthersRevocations(_ backend: Backend) async throws {
        let fixture = try await AuthFixture.make(backend)
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let (one, two) = (
            RevocationList(database: fixture.store, logger: Logger(label: "one")), RevocationList(database: fixture.store, logger: Logger(label: "two"))
        )
        let expires = Int64(Date().timeIntervalSince1970) + 3600
        try await one.revoke("token:one", expiresAt: expires, immediate: true)
        try await two.revoke("token:two", expiresAt: expires, immediate: true)
        #expect(!one.contains("token:two") && !two.contains("token:one"))
        try await one.refresh()
        try await two.refresh()
        #expect(one.contains("token:two") && two.contains("token:one"))
        let origins = try await fixture.store.query("SELECT COUNT(DISTINCT origin) AS n FROM portico_revocations")
        #expect(origins.first?.int("n") == 2)
        await fixture.store.close()
    }

    /// A row another replica writes late (its clock behind, or its flush slow) after this one wrote
    /// a newer row of its own is still read: this replica's own rows move its watermark only when it
    /// next reads, as they did when they were read back.
    @Test(arguments: Backend.available) func aLateRowOfAnotherReplicaIsReadAfterANewerRowOfOurOwn(_ backend: Backend) async throws {
        let fixture = try await AuthFixture.make(backend)
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let now = Date()
        let ahead = RevocationList(database: fixture.store, logger: Logger(label: "ahead"), clock: WallClock { now })
        let behind = RevocationList(database: fixture.store, logger: Logger(label: "behind"), clock: WallClock { now - 5 })
        let expires = Int64(now.timeIntervalSince1970) + 3600
        try await ahead.refresh()
        try await ahead.revoke("token:ahead", expiresAt: expires, immediate: true)
        try await behind.revoke("token:behind", expiresAt: expires, immediate: true)
        try await ahead.refresh()
        #expect(ahead.contains("token:behind"))
        await fixture.store.close()
    }
}

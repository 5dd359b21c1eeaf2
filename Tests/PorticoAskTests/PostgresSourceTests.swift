import Foundation
import PorticoData
import PorticoStore
import Testing

@testable import PorticoAsk
@testable import PorticoSources

/// The guard's second layer on a real PostgreSQL (the cluster `make test` starts; these tests
/// need `PORTICO_TEST_POSTGRES_URL`): SQL sent straight to the source, past the first layer,
/// still cannot write, stack statements or run past its time limit.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["PORTICO_TEST_POSTGRES_URL"] != nil))
struct PostgresSourceTests {
    func source() throws -> PostgresReadOnlySource {
        try PostgresReadOnlySource(url: ProcessInfo.processInfo.environment["PORTICO_TEST_POSTGRES_URL"] ?? "")
    }

    @Test(arguments: [
        "DELETE FROM album", "DROP TABLE album", "WITH x AS (DELETE FROM album RETURNING *) SELECT * FROM x", "SELECT * INTO backup FROM album",
        "CREATE TABLE evil (x int)", "UPDATE artist SET name = 'x'",
    ])
    func writesFailInsideTheReadOnlyTransaction(_ sql: String) async throws {
        let source = try source()
        await #expect(throws: StoreError.self) { _ = try await source.query(sql, maxRows: 10, timeout: .seconds(5), scope: ReadScope()) }
        let count = try await source.query("SELECT count(*) FROM album", maxRows: 1, timeout: .seconds(5), scope: ReadScope())
        #expect(count.rows == [[.int(347)]])
        await source.close()
    }

    @Test func stackedStatementsAreOneMessageAndRefused() async throws {
        let source = try source()
        await #expect(throws: StoreError.self) {
            _ = try await source.query("SELECT 1; COMMIT; DROP TABLE album", maxRows: 10, timeout: .seconds(5), scope: ReadScope())
        }
        let count = try await source.query("SELECT count(*) AS n FROM album", maxRows: 1, timeout: .seconds(5), scope: ReadScope())
        #expect(count.columns == ["n"] && count.rows == [[.int(347)]])
        await source.close()
    }

    /// A row larger than an answer may be is refused by the server before it is sent; rows keep their order.
    @Test func aHugeRowIsRefusedOnTheServer() async throws {
        let source = try source()
        do {
            _ = try await source.query("SELECT lpad('', 50000000, 'x') AS huge", maxRows: 1, timeout: .seconds(10), scope: ReadScope())
            Issue.record("a 50 MB row was sent")
        } catch let error as StoreError {
            #expect(error.message.contains("larger than a query may return"), "\(error)")
        }
        let ordered = try await source.query("SELECT name FROM artist ORDER BY name DESC LIMIT 3", maxRows: 10, timeout: .seconds(5), scope: ReadScope())
        let plain = try await source.query("SELECT name FROM artist ORDER BY name DESC", maxRows: 3, timeout: .seconds(5), scope: ReadScope())
        #expect(ordered.rows == plain.rows && ordered.rows.count == 3)
        // The query's own errors are still its own.
        await #expect(throws: StoreError.self) {
            _ = try await source.query("SELECT CAST('x' AS integer)", maxRows: 1, timeout: .seconds(5), scope: ReadScope())
        }
        await source.close()
    }

    @Test func theTimeLimitStopsASlowQuery() async throws {
        let source = try source()
        // The connection is made first, with room to spare: under the parallel suites a new
        // connection alone can take longer than the 300 ms limit and the source's connect deadline
        // together, and that deadline is not what this test is about.
        _ = try await source.query("SELECT 1", maxRows: 1, timeout: .seconds(30), scope: ReadScope())
        let started = ContinuousClock.now
        do {
            _ = try await source.query("SELECT pg_sleep(120)", maxRows: 1, timeout: .milliseconds(300), scope: ReadScope())
            Issue.record("the sleep was not stopped")
        } catch let error as StoreError {
            #expect(error.kind == .timeout)
        }
        // Stopped, not slept out: well before the two minutes the statement asks for, even when the
        // parallel suites keep the executor's threads busy (10 s was seen against a 10 s sleep).
        #expect(ContinuousClock.now - started < .seconds(30))
        await source.close()
    }

    @Test func introspectionFindsKeysAndSamples() async throws {
        let source = try source()
        let tables = try await source.introspect(samples: 2, only: nil)
        let track = try #require(tables.first { $0.name == "track" })
        #expect(track.columns.first { $0.name == "track_id" }?.primaryKey == true)
        #expect(track.foreignKeys.contains { $0.column == "genre_id" && $0.table == "genre" && $0.targetColumn == "genre_id" })
        #expect(track.columns.first { $0.name == "name" }?.samples.count == 2)
        await source.close()
    }
}

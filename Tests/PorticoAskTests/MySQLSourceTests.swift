import Foundation
import PorticoData
import PorticoStore
import Testing

@testable import PorticoAsk
@testable import PorticoSources

/// The guard's second layer on a real MariaDB (the server `make test` starts; these tests need
/// `PORTICO_TEST_MYSQL_WRITER_URL`, a user that may write): SQL sent straight to the source, past
/// the first layer, still cannot write, stack statements, read a file or run past its time limit.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["PORTICO_TEST_MYSQL_WRITER_URL"] != nil))
struct MySQLSourceTests {
    func source() throws -> MySQLReadOnlySource {
        try MySQLReadOnlySource(url: ProcessInfo.processInfo.environment["PORTICO_TEST_MYSQL_WRITER_URL"] ?? "")
    }

    @Test(arguments: [
        "DELETE FROM Album", "DROP TABLE Album", "UPDATE Artist SET Name = 'x'", "INSERT INTO Genre (GenreId, Name) VALUES (999, 'x')",
        "CREATE TABLE evil (x int)", "SELECT Name FROM Artist INTO OUTFILE '/tmp/portico-mysql-pwned'",
    ])
    func writesFailInTheReadOnlySession(_ sql: String) async throws {
        let source = try source()
        await #expect(throws: (any Error).self) { _ = try await source.query(sql, maxRows: 10, timeout: .seconds(5), scope: ReadScope()) }
        let count = try await source.query("SELECT COUNT(*) FROM Album", maxRows: 1, timeout: .seconds(5), scope: ReadScope())
        #expect(count.rows == [[.int(347)]])
        let artist = try await source.query("SELECT Name FROM Artist WHERE ArtistId = 1", maxRows: 1, timeout: .seconds(5), scope: ReadScope())
        #expect(artist.rows == [[.text("AC/DC")]])
        #expect(!FileManager.default.fileExists(atPath: "/tmp/portico-mysql-pwned"))
        await source.close()
    }

    /// A read-only transaction does not stop `INTO OUTFILE`; a user who could run it is not used.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["PORTICO_TEST_MYSQL_FILE_URL"] != nil))
    func aUserWithTheFilePrivilegeIsRefused() async throws {
        let source = try MySQLReadOnlySource(url: ProcessInfo.processInfo.environment["PORTICO_TEST_MYSQL_FILE_URL"] ?? "")
        let error = await #expect(throws: DatasourceError.self) {
            _ = try await source.query("SELECT 1", maxRows: 1, timeout: .seconds(5), scope: ReadScope())
        }
        #expect(error?.message.contains("FILE") == true)
        await source.close()
    }

    @Test func stackedStatementsAreRefusedAndTheConnectionGoesOn() async throws {
        let source = try source()
        await #expect(throws: (any Error).self) {
            _ = try await source.query("SELECT 1; DROP TABLE Album", maxRows: 10, timeout: .seconds(5), scope: ReadScope())
        }
        let count = try await source.query("SELECT COUNT(*) AS n FROM Album", maxRows: 1, timeout: .seconds(5), scope: ReadScope())
        #expect(count.columns == ["n"] && count.rows == [[.int(347)]])
        await source.close()
    }

    @Test func theRowCapAndTheTypesHold() async throws {
        let source = try source()
        let capped = try await source.query("SELECT TrackId FROM Track ORDER BY TrackId", maxRows: 5, timeout: .seconds(5), scope: ReadScope())
        #expect(capped.rows.count == 5 && capped.truncated && capped.rows.first == [.int(1)])
        let typed = try await source.query(
            "SELECT UnitPrice, Name, NULL AS nothing, Milliseconds / 1000 AS seconds FROM Track WHERE TrackId = 1", maxRows: 1, timeout: .seconds(5),
            scope: ReadScope())
        #expect(typed.rows.first?[0] == .double(0.99) && typed.rows.first?[2] == .null)
        // The server calls dates, times and JSON "binary"; they are values all the same, a BLOB's bytes are not.
        let dated = try await source.query(
            "SELECT InvoiceDate, TIME(InvoiceDate), JSON_OBJECT('a', 1), CAST('x' AS BINARY) FROM Invoice WHERE InvoiceId = 1",
            maxRows: 1, timeout: .seconds(5), scope: ReadScope())
        #expect(dated.rows.first?[0] == .text("2021-01-01 00:00:00") && dated.rows.first?[1] == .text("00:00:00"), "\(dated.rows)")
        #expect(dated.rows.first?[2] == .text("{\"a\": 1}") && dated.rows.first?[3] == .text("x"), "\(dated.rows)")
        await source.close()
    }

    @Test func theTimeLimitStopsASlowQueryOnTheServer() async throws {
        let source = try source()
        let started = ContinuousClock.now
        do {
            _ = try await source.query("SELECT COUNT(*) FROM Track a, Track b, Track c", maxRows: 1, timeout: .seconds(1), scope: ReadScope())
            Issue.record("a query of 43 billion rows finished within a second")
        } catch let error as StoreError {
            #expect(error.kind == .timeout, "\(error)")
        }
        // The statement would run for many minutes; the bound leaves room for a busy machine.
        #expect(ContinuousClock.now - started < .seconds(30))
        let count = try await source.query("SELECT COUNT(*) FROM Genre", maxRows: 1, timeout: .seconds(5), scope: ReadScope())
        #expect(count.rows == [[.int(25)]])
        await source.close()
    }

    @Test func introspectionReadsKeysAndComments() async throws {
        let source = try source()
        let tables = try await source.introspect(samples: 3, only: ["album", "artist", "track"])
        let byName = Dictionary(uniqueKeysWithValues: tables.map { ($0.name, $0) })
        #expect(Set(byName.keys) == ["Album", "Artist", "Track"])
        #expect(byName["Album"]?.foreignKeys.contains { $0.column == "ArtistId" && $0.table == "Artist" } == true)
        #expect(byName["Artist"]?.comment?.isEmpty == false)
        #expect(byName["Track"]?.columns.first { $0.name == "Milliseconds" }?.comment?.isEmpty == false)
        #expect(byName["Artist"]?.columns.first { $0.name == "Name" }?.samples.count == 3)
        #expect(byName["Album"]?.columns.first { $0.name == "AlbumId" }?.primaryKey == true)
        await source.close()
    }
}

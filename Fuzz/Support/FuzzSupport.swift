import Foundation
import Logging
public import PorticoJSON

@testable public import PorticoData
@testable import PorticoDemo
@testable public import PorticoStore

/// What every fuzz target shares: running async code from libFuzzer's synchronous callback, and
/// the Chinook sample (plus one collection with every other field type) as a catalog and a database.
public enum FuzzSupport {
    /// Hands `test` to libFuzzer, which runs it on every input and never returns. SwiftPM renames
    /// an executable's `main`, so libFuzzer's own cannot be used; its driver entry point can.
    public static func run(_ test: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> Never {
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, test))
    }

    /// Runs `body` to completion on the concurrency pool and waits for it.
    public static func blocking<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
        let box = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        Task {
            box.value = await body()
            done.signal()
        }
        done.wait()
        return box.value!
    }

    final class ResultBox<T>: @unchecked Sendable {
        // Written by the task before it signals; read after the wait.
        var value: T?
    }

    /// Chinook's collections and `Gadget`, a collection with the field types Chinook lacks.
    public static let collections: [CollectionSchema] = {
        guard let url = DemoData.scriptURL(), let text = try? String(contentsOf: url, encoding: .utf8), let script = try? ChinookScript(text: text) else {
            fatalError("the Chinook script is missing from PorticoDemo's resources")
        }
        let gadget = CollectionSchema(
            name: "Gadget", tableName: "Gadget",
            fields: [
                Field(name: "id", type: .integer, nullable: false, primaryKey: true, autoIncrement: true),
                Field(name: "label", type: .text),
                Field(name: "active", type: .boolean),
                Field(name: "settings", type: .json),
                Field(name: "kind", type: .select, options: ["a", "b"]),
                Field(name: "madeOn", type: .date),
                Field(name: "weight", type: .float),
                Field(name: "ArtistId", type: .integer),
                Field(
                    name: "artist", type: .belongsTo, relation: Relation(target: "Artist", foreignKey: "ArtistId", sourceKey: "ArtistId", targetKey: "ArtistId")
                ),
            ])
        return DemoData.schemas(from: script) + [gadget]
    }()

    /// The catalog the filter and argument targets compile against; nothing is run on its
    /// database (the SQL is only prepared, by `preparer`).
    public static let catalog = Catalog(app: "main", collections: collections, database: Unqueried())

    /// A database that is never queried: the catalog of targets that only build SQL.
    final class Unqueried: Database {
        let flavor = SQLFlavor.sqlite
        let logger = Logger(label: "portico.fuzz")
        let changes = ChangeSignal(path: nil)
        func query(_ statement: SQLFragment) async throws -> [Row] { fatalError("the fuzz catalog's database is not queried") }
        func transaction<T: Sendable>(_ body: @escaping @Sendable (any Database) async throws -> T) async throws -> T {
            fatalError("the fuzz catalog's database is not queried")
        }
        func close() async {}
    }

    /// Prepares SQL against a database with every collection's table and returns the failure,
    /// if any: generated SQL that does not prepare is a bug, unless it hit one of the limits.
    public static func preparer() -> @Sendable (String) -> StoreError? {
        let connection: SQLiteConnection
        do {
            connection = try SQLiteConnection(path: ":memory:", mode: .write, limits: SQLiteLimits())
            for collection in CatalogStore.dependencyOrder(collections) {
                for statement in DDL.createTable(collection, flavor: .sqlite) { _ = try connection.run(statement, []) }
            }
        } catch {
            fatalError("could not create the fuzz schema: \(error)")
        }
        let box = ConnectionBox(connection)
        return { sql in
            do throws(StoreError) {
                try box.connection.check(sql)
                return nil
            } catch {
                return error
            }
        }
    }

    final class ConnectionBox: @unchecked Sendable {
        // Fuzz targets call from one thread at a time.
        let connection: SQLiteConnection
        init(_ connection: SQLiteConnection) { self.connection = connection }
    }

    /// Reads a fuzz input as JSON, or nil when it is not JSON (the parser target covers that).
    public static func json(_ data: UnsafePointer<UInt8>, _ size: Int) -> JSON? {
        try? JSONParser.parse(UnsafeBufferPointer(start: data, count: size))
    }
}

/// libFuzzer's driver (linked by `-sanitize=fuzzer`).
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ test: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

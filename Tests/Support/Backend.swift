public import Foundation
public import Logging
import PorticoData
public import PorticoStore

/// The databases the store tests run on: SQLite always, PostgreSQL when the cluster `make test`
/// starts is there (`PORTICO_TEST_POSTGRES_URL`).
public enum Backend: String, Sendable, CustomStringConvertible {
    case sqlite, postgres

    public static let available: [Backend] = [.sqlite] + (clusterURL == nil ? [] : [.postgres])

    public static var clusterURL: String? { ProcessInfo.processInfo.environment["PORTICO_TEST_POSTGRES_URL"] }

    public var description: String { rawValue }

    /// A new, empty database of this kind: a file in `directory`, or a database of its own in the cluster.
    public func makeStore(in directory: URL, logger: Logger = Logger(label: "test")) async throws -> any Database {
        switch self {
        case .sqlite: try SQLiteStore(path: directory.appendingPathComponent("t.sqlite").path, logger: logger)
        case .postgres: try PostgresStore(url: try await Self.freshPostgresDatabase(), options: Self.postgresOptions, logger: logger)
        }
    }

    /// A test store's options: the default deadlines for a connection, but longer. The suites run in
    /// parallel on as few as two cores, each creating databases in one cluster; five seconds were seen
    /// to pass there while a connection was only slow to come, not missing (the outage tests set their own).
    public static var postgresOptions: PostgresStore.Options {
        var options = PostgresStore.Options()
        options.acquireTimeout = .seconds(30)
        options.downAcquireTimeout = .seconds(30)
        return options
    }

    /// A fresh, empty PostgreSQL database in the test cluster; its URL.
    public static func freshPostgresDatabase() async throws -> String {
        guard let cluster = clusterURL else { throw StoreError(kind: .unavailable, message: "PORTICO_TEST_POSTGRES_URL is not set", sql: "") }
        let name = "portico_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased()
        let admin = try PostgresStore(url: cluster, options: postgresOptions, logger: Logger(label: "test"))
        try await admin.execute("CREATE DATABASE \(name)")
        await admin.close()
        return cluster.replacingOccurrences(of: "/chinook", with: "/" + name)
    }
}

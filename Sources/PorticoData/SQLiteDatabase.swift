import Foundation
public import Logging
import NIOCore
import NIOPosix
import SQLiteKit
public import SQLKit

/// Portico's embedded database: SQLite in WAL mode with foreign keys on and a busy timeout,
/// through a small pool of connections.
public final class SQLiteStore: Database {
    public let flavor = SQLFlavor.sqlite
    public let logger: Logger
    let pool: ConnectionPool<SQLiteConnection>
    let path: String

    /// How long a writer waits for another writer before failing (ms).
    static let busyTimeout = 5000

    public init(path: String, readOnly: Bool = false, maxConnections: Int = 4, logger: Logger) {
        self.path = path
        self.logger = logger
        pool = ConnectionPool(limit: maxConnections) {
            try await Self.open(path: path, readOnly: readOnly, logger: logger)
        } close: { connection in
            try? await connection.close()
        }
    }

    /// Opens the file (creating it) and switches it to WAL. Run once before serving.
    public func prepare() async throws {
        _ = try await query(SQLFragment("PRAGMA journal_mode = WAL"))
    }

    public func query(_ statement: any SQLExpression) async throws -> [Row] {
        try await pool.withConnection { connection in
            try await Self.run(statement, on: connection, logger: logger)
        }
    }

    public func transaction<T: Sendable>(_ body: @Sendable (any Database) async throws -> T) async throws -> T {
        try await pool.withConnection { connection in
            let pinned = PinnedConnection(connection: connection, logger: logger)
            _ = try await Self.run(SQLFragment("BEGIN IMMEDIATE"), on: connection, logger: logger)
            do {
                let result = try await body(pinned)
                _ = try await Self.run(SQLFragment("COMMIT"), on: connection, logger: logger)
                return result
            } catch {
                _ = try? await Self.run(SQLFragment("ROLLBACK"), on: connection, logger: logger)
                throw error
            }
        }
    }

    public func close() async {
        await pool.shutdown()
    }

    /// Opens a connection with Portico's pragmas.
    static func open(path: String, readOnly: Bool, logger: Logger) async throws -> SQLiteConnection {
        let storage: SQLiteConnection.Storage = .file(path: readOnly ? "file:\(path)?mode=ro" : path)
        let connection: SQLiteConnection = try await SQLiteConnection.open(
            storage: storage, threadPool: .singleton, logger: logger, on: MultiThreadedEventLoopGroup.singleton.any())
        // busy_timeout replaces SQLiteNIO's spinning busy handler with one that sleeps.
        for pragma in ["PRAGMA busy_timeout = \(busyTimeout)", "PRAGMA foreign_keys = ON", "PRAGMA synchronous = NORMAL"]
            + (readOnly ? ["PRAGMA query_only = ON"] : []) {
            try await connection.query(pragma, []) { _ in }
        }
        return connection
    }

    static func run(_ statement: any SQLExpression, on connection: SQLiteConnection, logger: Logger) async throws -> [Row] {
        var serializer = SQLSerializer(database: connection.sql())
        statement.serialize(to: &serializer)
        let binds = try serializer.binds.map(Self.data)
        let collected = RowCollector()
        do {
            try await connection.query(serializer.sql, binds) { row in collected.append(row) }
        } catch let error as SQLiteError {
            throw StoreError(sqlite: error, sql: serializer.sql)
        }
        return collected.rows
    }

    static func data(_ bind: any Encodable & Sendable) throws -> SQLiteData {
        switch bind {
        case let value as SQLValue:
            switch value {
            case .null: return .null
            case .int(let i): return .integer(Int(i))
            case .double(let d): return .float(d)
            case .text(let s): return .text(s)
            case .bool(let b): return .integer(b ? 1 : 0)
            }
        case let s as String: return .text(s)
        case let i as Int: return .integer(i)
        case let i as Int64: return .integer(Int(i))
        case let d as Double: return .float(d)
        case let b as Bool: return .integer(b ? 1 : 0)
        default: return try SQLiteDataEncoder().encode(bind)
        }
    }

    static func value(_ data: SQLiteData) -> SQLValue {
        switch data {
        case .integer(let i): .int(Int64(i))
        case .float(let d): .double(d)
        case .text(let s): .text(s)
        case .blob(let buffer): .text(String(buffer: buffer))
        case .null: .null
        }
    }

    /// A connection held for the length of a transaction.
    struct PinnedConnection: Database {
        let connection: SQLiteConnection
        let logger: Logger
        var flavor: SQLFlavor { .sqlite }

        func query(_ statement: any SQLExpression) async throws -> [Row] {
            try await SQLiteStore.run(statement, on: connection, logger: logger)
        }

        func transaction<T: Sendable>(_ body: @Sendable (any Database) async throws -> T) async throws -> T {
            try await body(self)  // already inside one
        }

        func close() async {}
    }
}

/// Gathers rows delivered by the driver's callback.
final class RowCollector: @unchecked Sendable {
    // The driver calls the callback sequentially on its thread before the query returns.
    private(set) var rows: [Row] = []
    private var columns: [String]?

    func append(_ row: SQLiteRow) {
        let cols = row.columns
        if columns == nil { columns = cols.map(\.name) }
        rows.append(Row(columns: columns!, values: cols.map { SQLiteStore.value($0.data) }))
    }
}

/// A database failure, with what the database said and, for constraint failures, a message for the caller.
public struct StoreError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable { case constraint, busy, readOnly, other }
    public let kind: Kind
    public let message: String
    public let sql: String

    init(sqlite error: SQLiteError, sql: String) {
        message = error.message
        self.sql = sql
        let text = "\(error.reason)"
        if text.hasPrefix("constraint") {
            kind = .constraint
        } else if text.hasPrefix("busy") || text.hasPrefix("locked") {
            kind = .busy
        } else if text.hasPrefix("readOnly") || text.hasPrefix("readonly") {
            kind = .readOnly
        } else {
            kind = .other
        }
    }

    public init(kind: Kind, message: String, sql: String) {
        self.kind = kind
        self.message = message
        self.sql = sql
    }

    public var description: String { message }
}

import Foundation
import Logging

/// A versioned change to Portico's own tables, written once for every database flavor.
public struct Migration: Sendable {
    public let version: Int
    public let name: String
    public let statements: @Sendable (SQLFlavor) -> [String]

    public init(version: Int, name: String, statements: @escaping @Sendable (SQLFlavor) -> [String]) {
        self.version = version
        self.name = name
        self.statements = statements
    }
}

/// Applies the migrations a database has not seen yet, each in its own transaction.
public struct Migrator: Sendable {
    public let migrations: [Migration]

    public init(migrations: [Migration]) {
        self.migrations = migrations.sorted { $0.version < $1.version }
    }

    /// The migrations the database has not seen yet.
    public func pending(_ database: any Database) async throws -> [Migration] {
        guard try await !database.columnTypes(of: "portico_migrations").isEmpty else { return migrations }
        let applied = Set(try await database.query("SELECT version FROM portico_migrations").compactMap { $0.int("version") })
        return migrations.filter { !applied.contains(Int64($0.version)) }
    }

    /// Returns the versions it applied.
    @discardableResult
    public func migrate(_ database: any Database) async throws -> [Int] {
        // Replicas that start together take turns: each step holds the flavor's migration lock
        // (on SQLite, the write lock of the transaction does the same).
        try await database.transaction { db in
            if let lock = db.flavor.migrationLock { try await db.execute(lock) }
            try await db.execute(
                "CREATE TABLE IF NOT EXISTS portico_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)")
        }
        var applied: [Int] = []
        for migration in migrations {
            let done: Bool = try await database.transaction { db in
                if let lock = db.flavor.migrationLock { try await db.execute(lock) }
                var check = SQLFragment("SELECT version FROM portico_migrations WHERE version = ")
                check.append(bind: .int(Int64(migration.version)))
                if try await !db.query(check).isEmpty { return true }
                for statement in migration.statements(db.flavor) {
                    try await db.execute(statement)
                }
                var record = SQLFragment("INSERT INTO portico_migrations (version, name, applied_at) VALUES (")
                record.append(
                    joining: [.bind(.int(Int64(migration.version))), .bind(.text(migration.name)), .bind(.int(Int64(Date().timeIntervalSince1970)))],
                    separator: ", ")
                record.append(")")
                try await db.execute(record)
                return false
            }
            if !done {
                applied.append(migration.version)
                database.logger.info("applied migration", metadata: ["version": "\(migration.version)", "name": "\(migration.name)"])
            }
        }
        return applied
    }

    /// Adds `column` to `table` unless it is there (for tables made outside the migrations).
    public static func addColumnIfMissing(_ db: any Database, table: String, column: String, type: String) async throws {
        guard try await db.columnTypes(of: table)[column.lowercased()] == nil else { return }
        try await db.execute("ALTER TABLE \(SQLFragment.quote(table)) ADD COLUMN \(SQLFragment.quote(column)) \(type)")
    }
}

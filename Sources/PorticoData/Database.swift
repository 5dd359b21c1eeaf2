public import Logging
public import SQLKit

/// One row of a result, as plain values in column order.
public struct Row: Sendable {
    public let columns: [String]
    public let values: [SQLValue]

    public init(columns: [String], values: [SQLValue]) {
        self.columns = columns
        self.values = values
    }

    public subscript(_ column: String) -> SQLValue? {
        guard let index = columns.firstIndex(of: column) else { return nil }
        return values[index]
    }

    public func int(_ column: String) -> Int64? {
        switch self[column] {
        case .int(let i)?: return i
        case .double(let d)?: return Int64(exactly: d)
        case .text(let s)?: return Int64(s)
        case .bool(let b)?: return b ? 1 : 0
        default: return nil
        }
    }

    public func string(_ column: String) -> String? {
        switch self[column] {
        case .text(let s)?: return s
        case .int(let i)?: return String(i)
        case .double(let d)?: return String(d)
        default: return nil
        }
    }

    public func bool(_ column: String) -> Bool? {
        switch self[column] {
        case .bool(let b)?: return b
        case .int(let i)?: return i != 0
        default: return nil
        }
    }
}

/// A database Portico stores its metadata and collections in. SQL is built with SQLKit
/// expressions, so it is quoted and parameterised by the driver's dialect; rows come back as
/// plain values whatever the driver.
public protocol Database: Sendable {
    var flavor: SQLFlavor { get }
    var logger: Logger { get }

    /// Runs one statement and returns its rows.
    func query(_ statement: any SQLExpression) async throws -> [Row]

    /// Runs `body` inside a transaction on one connection; commits when it returns, rolls back when it throws.
    func transaction<T: Sendable>(_ body: @Sendable (any Database) async throws -> T) async throws -> T

    /// Closes every connection.
    func close() async
}

extension Database {
    /// Runs a statement for its effect.
    public func execute(_ statement: any SQLExpression) async throws {
        _ = try await query(statement)
    }

    public func query(_ sql: String) async throws -> [Row] {
        try await query(SQLFragment(sql))
    }

    public func execute(_ sql: String) async throws {
        _ = try await query(SQLFragment(sql))
    }
}

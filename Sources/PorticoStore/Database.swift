public import Logging

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

    public func double(_ column: String) -> Double? {
        switch self[column] {
        case .double(let d)?: return d
        case .int(let i)?: return Double(i)
        case .text(let s)?: return Double(s)
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

/// A database Portico stores its metadata and collections in. SQL is built as `SQLFragment`s,
/// so identifiers are quoted and values always bound; rows come back as
/// plain values whatever the driver.
public protocol Database: Sendable {
    var flavor: SQLFlavor { get }
    var logger: Logger { get }
    /// Announces changes that caches of stored state must see, across processes and replicas.
    var changes: ChangeSignal { get }

    /// Runs one statement and returns its rows.
    func query(_ statement: SQLFragment) async throws -> [Row]

    /// Runs `body` inside a transaction on one connection; commits when it returns, rolls back when it throws.
    func transaction<T: Sendable>(_ body: @escaping @Sendable (any Database) async throws -> T) async throws -> T

    /// Closes every connection.
    func close() async

    /// A transaction for changing tables' structure. On SQLite foreign keys are checked once,
    /// for the whole database, before it commits (so a table others reference can be rebuilt,
    /// as SQLite's own procedure for such changes does); elsewhere a plain transaction.
    func schemaTransaction<T: Sendable>(_ body: @escaping @Sendable (any Database) async throws -> T) async throws -> T

    /// Appends `rows` (values in the order of `columns`) to `table` in one transaction: the bulk
    /// path for records written in batches, such as the audit trail. With `skippingConflictsOn`
    /// (a unique key's columns), a row whose key is taken is left out instead of failing the batch.
    func insertMany(into table: String, columns: [String], rows: [[SQLValue]], skippingConflictsOn key: [String]) async throws
}

extension Database {
    public func schemaTransaction<T: Sendable>(_ body: @escaping @Sendable (any Database) async throws -> T) async throws -> T {
        try await transaction(body)
    }
}

extension Database {
    /// Multi-row INSERTs of `insertManyRowsPerStatement` rows in one transaction, the rest one by
    /// one, so every statement text is one of two and stays in the connection's cache.
    public func insertMany(into table: String, columns: [String], rows: [[SQLValue]]) async throws {
        try await insertMany(into: table, columns: columns, rows: rows, skippingConflictsOn: [])
    }

    public func insertMany(into table: String, columns: [String], rows: [[SQLValue]], skippingConflictsOn key: [String]) async throws {
        guard !rows.isEmpty else { return }
        let head = insertHead(table, columns)
        let tail = insertTail(skippingConflictsOn: key)
        try await transaction { db in
            var start = 0
            while start < rows.count {
                let size = rows.count - start >= insertManyRowsPerStatement ? insertManyRowsPerStatement : 1
                var q = SQLFragment(head)
                for (index, row) in rows[start..<start + size].enumerated() {
                    q.append(index == 0 ? "(" : ", (")
                    for (column, value) in row.enumerated() {
                        if column > 0 { q.append(", ") }
                        q.append(bind: value)
                    }
                    q.append(")")
                }
                q.append(tail)
                try await db.execute(q)
                start += size
            }
        }
    }
}

/// `INSERT INTO "table" ("a", "b") VALUES `, the start of `insertMany`'s statements.
func insertHead(_ table: String, _ columns: [String]) -> String {
    "INSERT INTO \(SQLFragment.quote(table)) (\(columns.map(SQLFragment.quote).joined(separator: ", "))) VALUES "
}

/// ` ON CONFLICT ("a") DO NOTHING` for a key, else nothing: the end of `insertMany`'s statements.
func insertTail(skippingConflictsOn key: [String]) -> String {
    key.isEmpty ? "" : " ON CONFLICT (\(key.map(SQLFragment.quote).joined(separator: ", "))) DO NOTHING"
}

/// Rows one multi-row INSERT of `insertMany` carries (keep rows × columns under 1,000 bound values).
let insertManyRowsPerStatement = 50

extension Database {
    /// Runs a statement for its effect.
    public func execute(_ statement: SQLFragment) async throws {
        _ = try await query(statement)
    }

    public func query(_ sql: String) async throws -> [Row] {
        try await query(SQLFragment(sql))
    }

    public func execute(_ sql: String) async throws {
        _ = try await query(SQLFragment(sql))
    }

    /// The declared type of each column of `table` (in the current schema on PostgreSQL), by
    /// lower-cased name, lower-cased; empty when there is no such table.
    public func columnTypes(of table: String) async throws -> [String: String] {
        var q: SQLFragment
        switch flavor {
        case .sqlite:
            q = SQLFragment("SELECT name, type FROM pragma_table_info(")
            q.append(bind: .text(table))
            q.append(")")
        case .postgres:
            q = SQLFragment(
                "SELECT column_name::text AS name, data_type::text AS type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = "
            )
            q.append(bind: .text(table))
        }
        let rows = try await query(q)
        return Dictionary(rows.compactMap { row in row.string("name").map { ($0.lowercased(), (row.string("type") ?? "").lowercased()) } }) { a, _ in a }
    }
}

/// A database failure, classified so callers can explain it without reading the driver's text.
public struct StoreError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable {
        /// A constraint refused the change (see `constraint`).
        case constraint
        /// Another process holds the write lock past the busy timeout.
        case busy
        case readOnly
        /// The datasource's own check refused what the statement reads or calls (SQLite's authorizer).
        case notAuthorized
        /// The statement ran past its time limit.
        case timeout
        /// The caller went away (cancellation, shutdown) while the statement waited or ran.
        case cancelled
        /// The statement hit one of the database's limits (expression depth, bound values, terms).
        case tooComplex
        /// The statement returned more rows than allowed.
        case tooLarge
        /// The database cannot be opened, read or written (disk full, I/O error, shutting down).
        case unavailable
        case other
    }

    /// Which kind of constraint failed, for `.constraint` errors.
    public enum Constraint: Sendable { case unique, notNull, foreignKey, check, other }

    public let kind: Kind
    public let constraint: Constraint?
    /// The column a constraint failure is about, when the database names one.
    public let column: String?
    /// What the database said.
    public let message: String
    public let sql: String

    public init(kind: Kind, message: String, sql: String, constraint: Constraint? = nil, column: String? = nil) {
        self.kind = kind
        self.message = message
        self.sql = sql
        self.constraint = constraint
        self.column = column
    }

    public var description: String { message }

    /// What the caller can do about it, for errors a request can cause.
    public var guidance: String {
        switch kind {
        case .tooComplex:
            return
                "the request is too complex for the database (\(message)); use fewer conditions or fewer $and/$or items, $in for lists of values, or split it into several calls"
        case .timeout:
            return "the query ran past its time limit and was stopped; narrow the filter, ask for fewer records or fewer appends"
        case .tooLarge:
            return "the query matched too many rows (\(message)); narrow the filter"
        case .busy:
            return "the database is busy; try again in a moment"
        case .unavailable:
            return "the database is unavailable: \(message)"
        case .readOnly:
            return "the database is read-only: \(message)"
        case .notAuthorized:
            return "the database refused the SQL: \(message)"
        case .cancelled:
            return "the request was cancelled"
        case .constraint, .other:
            return "the database refused the request: \(message)"
        }
    }
}

import CSQLite
import Foundation
import PorticoJSON
import Synchronization

/// One SQLite connection, used by one thread at a time (its worker), with a cache of prepared
/// statements and an interrupt check that ties cancellation and deadlines to the statement that
/// is running.
final class SQLiteConnection {
    enum Mode: Sendable {
        /// The single writer: may create the file, changes the schema and data.
        case write
        /// A WAL reader: opened read-only and `query_only`, so a misrouted write cannot run.
        case read
    }

    let handle: OpaquePointer
    let mode: Mode
    private var statements: [String: CachedStatement] = [:]
    private var statementAges: [String] = []
    /// The job whose statements run now, for the interrupt check.
    private(set) var current: SQLiteJob?
    /// What statements prepared now may touch, checked by SQLite's authorizer as it compiles them;
    /// `nil` lets everything through. Set only on datasource connections (`enableAuthorizer`).
    var queryPolicy: SQLiteQueryPolicy?

    static let statementCacheSize = 128
    /// Statements longer than this, or with more bound values, are prepared each time: large IN
    /// lists and multi-row inserts, whose many shapes would fill the cache with big programs.
    static let cacheableSQLLength = 2048
    static let cacheableBindCount: Int32 = 64
    /// SQLite calls the interrupt check every this many virtual-machine steps.
    static let interruptCheckInterval: Int32 = 1000

    final class CachedStatement {
        let pointer: OpaquePointer
        let columns: [String]
        let readOnly: Bool

        init(pointer: OpaquePointer) {
            self.pointer = pointer
            readOnly = sqlite3_stmt_readonly(pointer) != 0
            let count = sqlite3_column_count(pointer)
            columns = (0..<count).map { String(cString: sqlite3_column_name(pointer, $0)) }
        }
    }

    init(path: String, mode: Mode, limits: SQLiteLimits) throws(StoreError) {
        var db: OpaquePointer?
        // NOMUTEX: the connection is confined to its worker thread, so SQLite's own locking is waste.
        let flags = (mode == .write ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY) | SQLITE_OPEN_NOMUTEX
        let status = sqlite3_open_v2(path, &db, flags, nil)
        guard status == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            if let db { sqlite3_close_v2(db) }
            throw StoreError(kind: .unavailable, message: "cannot open the database at \(path): \(message)", sql: "")
        }
        handle = db
        self.mode = mode
        sqlite3_extended_result_codes(db, 1)
        // Limits below SQLite's compiled defaults, so a hostile filter fails fast with a clear error.
        sqlite3_limit(db, SQLITE_LIMIT_EXPR_DEPTH, limits.expressionDepth)
        sqlite3_limit(db, SQLITE_LIMIT_VARIABLE_NUMBER, limits.variables)
        sqlite3_limit(db, SQLITE_LIMIT_SQL_LENGTH, limits.sqlLength)
        sqlite3_limit(db, SQLITE_LIMIT_COMPOUND_SELECT, limits.compoundSelect)
        sqlite3_limit(db, SQLITE_LIMIT_LIKE_PATTERN_LENGTH, limits.likePatternLength)
        sqlite3_limit(db, SQLITE_LIMIT_LENGTH, limits.valueLength)
        sqlite3_progress_handler(
            db, Self.interruptCheckInterval,
            { context in
                guard let context else { return 0 }
                return Unmanaged<SQLiteConnection>.fromOpaque(context).takeUnretainedValue().shouldInterrupt() ? 1 : 0
            }, Unmanaged.passUnretained(self).toOpaque())
        var pragmas = [
            "PRAGMA busy_timeout = \(limits.busyTimeoutMilliseconds)",
            "PRAGMA foreign_keys = ON",
            "PRAGMA synchronous = NORMAL",
        ]
        if mode == .write {
            pragmas.insert("PRAGMA journal_mode = WAL", at: 0)
        } else {
            pragmas.append("PRAGMA query_only = ON")
            pragmas.append("PRAGMA cache_size = -\(limits.readerCacheKiB)")
        }
        do {
            for pragma in pragmas { _ = try run(pragma, [], cache: false) }
        } catch {
            close()
            throw error
        }
    }

    /// Has SQLite ask `queryPolicy` about every table read and function call while it compiles a
    /// statement, and refuse everything else (writes, pragmas, attaching) outright.
    func enableAuthorizer() {
        sqlite3_set_authorizer(
            handle,
            { context, action, first, second, _, _ in
                guard let context else { return SQLITE_DENY }
                let connection = Unmanaged<SQLiteConnection>.fromOpaque(context).takeUnretainedValue()
                guard let policy = connection.queryPolicy else { return SQLITE_OK }
                return policy.allows(action, first.map { String(cString: $0) }, second.map { String(cString: $0) }) ? SQLITE_OK : SQLITE_DENY
            }, Unmanaged.passUnretained(self).toOpaque())
    }

    func close() {
        for statement in statements.values { sqlite3_finalize(statement.pointer) }
        statements = [:]
        statementAges = []
        sqlite3_close_v2(handle)
    }

    /// Runs `body` with `job` as the statement owner for the interrupt check.
    func serving<T, Failure: Error>(_ job: SQLiteJob, _ body: () throws(Failure) -> T) throws(Failure) -> T {
        current = job
        defer { current = nil }
        return try body()
    }

    private func shouldInterrupt() -> Bool {
        guard let job = current else { return false }
        return job.shouldStop()
    }

    var isAutocommit: Bool { sqlite3_get_autocommit(handle) != 0 }

    // MARK: Statements

    /// A prepared statement for `sql`, from the cache when it was prepared before.
    func statement(_ sql: String, cache: Bool = true) throws(StoreError) -> (CachedStatement, cached: Bool) {
        if let cached = statements[sql] { return (cached, true) }
        var pointer: OpaquePointer?
        let status = sql.withCString { sqlite3_prepare_v3(handle, $0, -1, cache ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0, &pointer, nil) }
        guard status == SQLITE_OK, let pointer else {
            throw error(status, sql: sql)
        }
        let statement = CachedStatement(pointer: pointer)
        guard cache, sql.utf8.count <= Self.cacheableSQLLength, sqlite3_bind_parameter_count(pointer) <= Self.cacheableBindCount else {
            return (statement, false)
        }
        if statements.count >= Self.statementCacheSize, !statementAges.isEmpty {
            let oldest = statementAges.removeFirst()
            if let evicted = statements.removeValue(forKey: oldest) { sqlite3_finalize(evicted.pointer) }
        }
        statements[sql] = statement
        statementAges.append(sql)
        return (statement, true)
    }

    /// Prepares `sql` without running it (nor caching it); throws what SQLite says is wrong with it.
    func check(_ sql: String) throws(StoreError) {
        let (statement, cached) = try statement(sql, cache: false)
        if !cached { sqlite3_finalize(statement.pointer) }
    }

    /// Runs one statement with its bound values and returns every row.
    func run(_ sql: String, _ binds: [SQLValue], cache: Bool = true, maxRows: Int = .max) throws(StoreError) -> [Row] {
        let (statement, cached) = try statement(sql, cache: cache)
        return try execute(statement, cached: cached, sql: sql, binds, maxRows: maxRows)
    }

    /// Runs the statement only if it does not write (SQLite's own judgement); `nil` if it writes.
    func runIfReadOnly(_ sql: String, _ binds: [SQLValue], maxRows: Int = .max) throws(StoreError) -> [Row]? {
        let (statement, cached) = try statement(sql)
        guard statement.readOnly else {
            if !cached { sqlite3_finalize(statement.pointer) }
            return nil
        }
        return try execute(statement, cached: cached, sql: sql, binds, maxRows: maxRows)
    }

    private func execute(_ statement: CachedStatement, cached: Bool, sql: String, _ binds: [SQLValue], maxRows: Int) throws(StoreError) -> [Row] {
        let pointer = statement.pointer
        defer {
            if cached {
                sqlite3_reset(pointer)
                sqlite3_clear_bindings(pointer)
            } else {
                sqlite3_finalize(pointer)
            }
        }
        for (index, value) in binds.enumerated() {
            let position = Int32(index + 1)
            let status: Int32
            switch value {
            case .null: status = sqlite3_bind_null(pointer, position)
            case .int(let i): status = sqlite3_bind_int64(pointer, position, i)
            case .double(let d): status = sqlite3_bind_double(pointer, position, d)
            case .bool(let b): status = sqlite3_bind_int64(pointer, position, b ? 1 : 0)
            case .text(let s):
                var text = s
                status = text.withUTF8 { bytes in
                    guard let base = bytes.baseAddress, !bytes.isEmpty else { return sqlite3_bind_text(pointer, position, "", 0, nil) }
                    return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                        sqlite3_bind_text64(pointer, position, $0, UInt64(bytes.count), Self.transient, UInt8(SQLITE_UTF8))
                    }
                }
            }
            guard status == SQLITE_OK else { throw error(status, sql: sql) }
        }
        var rows: [Row] = []
        let columns = statement.columns
        let width = Int32(columns.count)
        while true {
            let status = sqlite3_step(pointer)
            if status == SQLITE_DONE { break }
            guard status == SQLITE_ROW else { throw error(status, sql: sql) }
            guard rows.count < maxRows else {
                throw StoreError(kind: .tooLarge, message: "the statement returned more than \(maxRows) rows", sql: sql)
            }
            var values: [SQLValue] = []
            values.reserveCapacity(columns.count)
            for column in 0..<width {
                values.append(Self.value(pointer, column))
            }
            rows.append(Row(columns: columns, values: values))
        }
        return rows
    }

    static func value(_ statement: OpaquePointer, _ column: Int32) -> SQLValue {
        switch sqlite3_column_type(statement, column) {
        case SQLITE_INTEGER:
            return .int(sqlite3_column_int64(statement, column))
        case SQLITE_FLOAT:
            return .double(sqlite3_column_double(statement, column))
        case SQLITE_NULL:
            return .null
        default:  // text, and blobs read as UTF-8 text
            guard let bytes = sqlite3_column_text(statement, column) else { return .null }
            let count = Int(sqlite3_column_bytes(statement, column))
            return .text(String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self))
        }
    }

    /// SQLite copies bound text before the call returns.
    static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

    // MARK: Errors

    func error(_ status: Int32, sql: String) -> StoreError {
        let message = String(cString: sqlite3_errmsg(handle))
        return StoreError(sqliteCode: status, message: message, sql: sql, interruptedBy: current?.stopReason)
    }
}

/// Limits set on every connection (`sqlite3_limit`), below SQLite's compiled maximums.
public struct SQLiteLimits: Sendable {
    /// Depth of an expression tree: nesting of `$and`/`$or` and long chains of conditions.
    public var expressionDepth: Int32 = 250
    /// Bound values in one statement.
    public var variables: Int32 = 10_000
    /// Bytes of SQL text in one statement.
    public var sqlLength: Int32 = 1_000_000
    public var compoundSelect: Int32 = 100
    public var likePatternLength: Int32 = 1000
    /// Largest string or blob, in bytes.
    public var valueLength: Int32 = 16 * 1024 * 1024
    /// How long a writer waits for another process (the command line) holding the write lock.
    public var busyTimeoutMilliseconds = 5000
    /// Kibibytes of pages each read-only connection keeps; the writer keeps SQLite's default
    /// (2 MiB). Readers are many and share the operating system's cache of the file, so a small
    /// cache each keeps the hot pages without holding the same pages several times.
    public var readerCacheKiB: Int32 = 512

    public init() {}
}

extension StoreError {
    /// Classifies an SQLite result code, with a message that says what to change when one of
    /// SQLite's own limits was hit.
    init(sqliteCode status: Int32, message: String, sql: String, interruptedBy reason: SQLiteJob.StopReason?) {
        let primary = status & 0xFF
        switch primary {
        case SQLITE_CONSTRAINT:
            // Extended codes (sqlite3.h: SQLITE_CONSTRAINT | (n << 8)); the C macros do not import.
            let constraint: Constraint =
                switch status >> 8 {
                case 8, 6: .unique  // UNIQUE, PRIMARYKEY
                case 5: .notNull
                case 3: .foreignKey
                case 1: .check
                default: .other
                }
            // SQLite names the column as `... constraint failed: Table.column[, Table.other]`.
            let column = message.split(separator: ":").last?.split(separator: ",").first?.split(separator: ".").last.map { $0.trimmingSpaces() }
            self.init(kind: .constraint, message: message, sql: sql, constraint: constraint, column: column)
        case SQLITE_BUSY, SQLITE_LOCKED:
            self.init(kind: .busy, message: "the database is busy (another process holds its write lock): \(message)", sql: sql)
        case SQLITE_READONLY:
            self.init(kind: .readOnly, message: message, sql: sql)
        case SQLITE_INTERRUPT:
            switch reason {
            case .deadline?: self.init(kind: .timeout, message: "the statement ran past its time limit", sql: sql)
            default: self.init(kind: .cancelled, message: "the statement was cancelled", sql: sql)
            }
        case SQLITE_TOOBIG:
            self.init(kind: .tooComplex, message: "a value or the statement is larger than the database accepts (SQLite: \(message))", sql: sql)
        case SQLITE_CANTOPEN, SQLITE_IOERR, SQLITE_FULL, SQLITE_CORRUPT, SQLITE_NOTADB:
            self.init(kind: .unavailable, message: message, sql: sql)
        default:
            let lowered = message.lowercased()
            let limitMessages = [
                "expression tree is too large", "too many sql variables", "too many terms", "too many arguments", "too many columns", "pattern too complex",
                "parser stack overflow", "too many from clause terms",
            ]
            if limitMessages.contains(where: lowered.contains) {
                self.init(kind: .tooComplex, message: message, sql: sql)
            } else {
                self.init(kind: .other, message: message, sql: sql)
            }
        }
    }
}

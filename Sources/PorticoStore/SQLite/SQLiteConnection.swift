import CSQLite
import Foundation
import PorticoBase
import PorticoJSON
import Synchronization

/// One SQLite connection, used by one thread at a time (its worker), with a cache of prepared
/// statements and an interrupt check that ties cancellation and deadlines to the statement that
/// is running.
package final class SQLiteConnection {
    package enum Mode: Sendable {
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
    /// `nil` lets everything through. Set only on datasource connections (`prepareForQueries`).
    package var queryPolicy: SQLiteQueryPolicy?
    /// Why the authorizer refused the statement being prepared, for the error it becomes.
    var denial: String?
    /// The temporary views this (datasource) connection has made, by name.
    private var temporaryViews: Set<String> = []
    /// The private in-memory connection whose own `printf` runs the checked calls, with a statement per argument count.
    private var printfHelper: OpaquePointer?
    private var printfStatements: [Int: OpaquePointer] = [:]

    static let statementCacheSize = 128
    /// Statements longer than this, or with more bound values, are prepared each time: large IN
    /// lists and multi-row inserts, whose many shapes would fill the cache with big programs.
    static let cacheableSQLLength = 2048
    static let cacheableBindCount: Int32 = 64
    /// SQLite calls the interrupt check every this many virtual-machine steps.
    static let interruptCheckInterval: Int32 = 1000

    package final class CachedStatement {
        package let pointer: OpaquePointer
        package let columns: [String]
        package let readOnly: Bool

        init(pointer: OpaquePointer) {
            self.pointer = pointer
            readOnly = sqlite3_stmt_readonly(pointer) != 0
            let count = sqlite3_column_count(pointer)
            columns = (0..<count).map { String(cString: sqlite3_column_name(pointer, $0)) }
        }
    }

    package init(path: String, mode: Mode, limits: SQLiteLimits) throws(StoreError) {
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

    /// Makes this a datasource connection: SQLite asks `queryPolicy` about every table read and
    /// function call while it compiles a statement and refuses everything else (writes, pragmas,
    /// attaching) outright; the functions whose work outgrows their input are replaced by bounded
    /// ones; sorts and temporary results stay in memory, where the query's memory cap sees them.
    package func prepareForQueries() throws(StoreError) {
        sqlite3_set_authorizer(
            handle,
            { context, action, first, second, _, source in
                guard let context else { return SQLITE_DENY }
                let connection = Unmanaged<SQLiteConnection>.fromOpaque(context).takeUnretainedValue()
                guard let policy = connection.queryPolicy else { return SQLITE_OK }
                let verdict = policy.decide(
                    action, first.map { String(cString: $0) }, second.map { String(cString: $0) }, source: source.map { String(cString: $0) })
                guard case .deny(let reason) = verdict else { return SQLITE_OK }
                if connection.denial == nil { connection.denial = reason }
                return SQLITE_DENY
            }, Unmanaged.passUnretained(self).toOpaque())
        _ = try run("PRAGMA temp_store = MEMORY", [], cache: false)
        var helper: OpaquePointer?
        guard sqlite3_open_v2(":memory:", &helper, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK, let helper else {
            if let helper { sqlite3_close_v2(helper) }
            throw StoreError(kind: .unavailable, message: "cannot open SQLite's in-memory helper for printf", sql: "")
        }
        sqlite3_limit(helper, SQLITE_LIMIT_LENGTH, sqlite3_limit(handle, SQLITE_LIMIT_LENGTH, -1))
        printfHelper = helper
        SQLiteBoundedFunctions.install(on: self)
    }

    /// Creates the temporary views a query reads in place of the tables its caller may not read
    /// whole (`name` → SELECT), unless this connection made them before. They live in SQLite's
    /// `temp` schema of this connection only, so `query_only` is lifted while they are made.
    package func ensureViews(_ views: [String: String]) throws(StoreError) {
        let missing = views.filter { !temporaryViews.contains($0.key) }
        guard !missing.isEmpty else { return }
        let policy = queryPolicy
        queryPolicy = nil
        defer { queryPolicy = policy }
        _ = try run("PRAGMA query_only = OFF", [], cache: false)
        defer { _ = try? run("PRAGMA query_only = ON", [], cache: false) }
        if temporaryViews.count + missing.count > Self.maxTemporaryViews {
            for name in temporaryViews { _ = try run("DROP VIEW IF EXISTS temp.\(SQLFragment.quote(name))", [], cache: false) }
            temporaryViews = []
        }
        for (name, select) in missing.sorted(by: { $0.key < $1.key }) {
            _ = try run("CREATE TEMP VIEW IF NOT EXISTS \(SQLFragment.quote(name)) AS \(select)", [], cache: false)
            temporaryViews.insert(name)
        }
    }

    /// Temporary views one datasource connection keeps; past it they are dropped and made anew.
    static let maxTemporaryViews = 256

    /// SQL's `printf` and `format`, once the format's widths are known to fit in a value: SQLite's
    /// own implementation, run on the private in-memory connection with the same arguments.
    func printf(_ context: OpaquePointer, arguments: UnsafeBufferPointer<OpaquePointer?>) {
        let limit = Int64(sqlite3_limit(handle, SQLITE_LIMIT_LENGTH, -1))
        if let format = SQLiteBoundedFunctions.bytes(arguments.first ?? nil),
            let widest = SQLiteBoundedFunctions.largestWidth(format: format, arguments: arguments),
            widest > limit
        {
            return sqlite3_result_error(
                context, "printf: a width or precision of \(widest) is more than the \(limit) characters a value may have here", -1)
        }
        guard let helper = printfHelper else { return sqlite3_result_error(context, "printf is not available", -1) }
        let statement: OpaquePointer
        if let prepared = printfStatements[arguments.count] {
            statement = prepared
        } else {
            let sql = "SELECT printf(" + (0..<arguments.count).map { "?\($0 + 1)" }.joined(separator: ", ") + ")"
            var prepared: OpaquePointer?
            guard sqlite3_prepare_v2(helper, sql, -1, &prepared, nil) == SQLITE_OK, let prepared else {
                return sqlite3_result_error(context, sqlite3_errmsg(helper), -1)
            }
            printfStatements[arguments.count] = prepared
            statement = prepared
        }
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        for (index, argument) in arguments.enumerated() { sqlite3_bind_value(statement, Int32(index + 1), argument) }
        switch sqlite3_step(statement) {
        case SQLITE_ROW: sqlite3_result_value(context, sqlite3_column_value(statement, 0))
        case let status where status & 0xFF == SQLITE_TOOBIG: sqlite3_result_error_toobig(context)
        default: sqlite3_result_error(context, sqlite3_errmsg(helper), -1)
        }
    }

    package func close() {
        for statement in statements.values { sqlite3_finalize(statement.pointer) }
        statements = [:]
        statementAges = []
        for statement in printfStatements.values { sqlite3_finalize(statement) }
        printfStatements = [:]
        if let printfHelper { sqlite3_close_v2(printfHelper) }
        printfHelper = nil
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
    package func statement(_ sql: String, cache: Bool = true) throws(StoreError) -> (CachedStatement, cached: Bool) {
        if let cached = statements[sql] { return (cached, true) }
        denial = nil
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
    package func run(_ sql: String, _ binds: [SQLValue], cache: Bool = true, maxRows: Int = .max) throws(StoreError) -> [Row] {
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

    /// Runs one statement that returns no rows once for each set of values: found (or prepared)
    /// once, then bound and stepped per set, as a batch of audit records is written. Each set
    /// gives every parameter (none is left from the set before). A set's text is copied into one
    /// buffer kept for the batch and bound from there, where SQLite would allocate a copy of
    /// each value.
    func runEach(_ sql: String, _ sets: [[SQLValue]]) throws(StoreError) {
        let (statement, cached) = try statement(sql)
        let pointer = statement.pointer
        defer {
            if cached {
                sqlite3_reset(pointer)
                sqlite3_clear_bindings(pointer)
            } else {
                sqlite3_finalize(pointer)
            }
        }
        let parameters = Int(sqlite3_bind_parameter_count(pointer))
        var text: [UInt8] = []
        var spans: [Range<Int>] = []
        for binds in sets {
            guard binds.count == parameters else {
                throw StoreError(kind: .other, message: "\(binds.count) values for a statement of \(parameters) parameters", sql: sql)
            }
            sqlite3_reset(pointer)
            text.removeAll(keepingCapacity: true)
            spans.removeAll(keepingCapacity: true)
            for value in binds {
                guard case .text(var string) = value else { continue }
                let start = text.count
                string.withUTF8 { text.append(contentsOf: $0) }
                spans.append(start..<text.count)
            }
            let status: Int32 = text.withUnsafeBufferPointer { buffer in
                var next = 0
                for (index, value) in binds.enumerated() {
                    let position = Int32(index + 1)
                    let bound: Int32
                    if let scalar = Self.bindScalar(value, to: pointer, at: position) {
                        bound = scalar
                    } else {
                        let span = spans[next]
                        next += 1
                        // The buffer outlives the step (SQLITE_STATIC: not copied).
                        bound = UnsafeRawPointer(buffer.baseAddress ?? UnsafePointer(bitPattern: 1)!).advanced(by: span.lowerBound)
                            .withMemoryRebound(to: CChar.self, capacity: max(span.count, 1)) {
                                sqlite3_bind_text64(pointer, position, $0, UInt64(span.count), nil, UInt8(SQLITE_UTF8))
                            }
                    }
                    guard bound == SQLITE_OK else { return bound }
                }
                return sqlite3_step(pointer)
            }
            guard status == SQLITE_DONE else { throw error(status, sql: sql) }
        }
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
        try bind(binds, to: pointer, sql: sql)
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

    private func bind(_ binds: [SQLValue], to pointer: OpaquePointer, sql: String) throws(StoreError) {
        for (index, value) in binds.enumerated() {
            let position = Int32(index + 1)
            let status: Int32
            if case .text(var text) = value {
                status = text.withUTF8 { bytes in
                    guard let base = bytes.baseAddress, !bytes.isEmpty else { return sqlite3_bind_text(pointer, position, "", 0, nil) }
                    return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                        sqlite3_bind_text64(pointer, position, $0, UInt64(bytes.count), Self.transient, UInt8(SQLITE_UTF8))
                    }
                }
            } else {
                status = Self.bindScalar(value, to: pointer, at: position) ?? SQLITE_MISUSE
            }
            guard status == SQLITE_OK else { throw error(status, sql: sql) }
        }
    }

    /// Binds a value that is not text at `position` (1-based); nil for text, which the callers
    /// bind from their own buffers.
    @inline(__always)
    static func bindScalar(_ value: SQLValue, to pointer: OpaquePointer, at position: Int32) -> Int32? {
        switch value {
        case .null: sqlite3_bind_null(pointer, position)
        case .int(let i): sqlite3_bind_int64(pointer, position, i)
        case .double(let d): sqlite3_bind_double(pointer, position, d)
        case .bool(let b): sqlite3_bind_int64(pointer, position, b ? 1 : 0)
        case .text: nil
        }
    }

    package static func value(_ statement: OpaquePointer, _ column: Int32) -> SQLValue {
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

    package func error(_ status: Int32, sql: String) -> StoreError {
        let message = status & 0xFF == SQLITE_AUTH ? denial ?? String(cString: sqlite3_errmsg(handle)) : String(cString: sqlite3_errmsg(handle))
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
        case SQLITE_AUTH:
            self.init(kind: .notAuthorized, message: message, sql: sql)
        case SQLITE_INTERRUPT:
            switch reason {
            case .deadline?: self.init(kind: .timeout, message: "the statement ran past its time limit", sql: sql)
            case .memory(let limit)?:
                self.init(
                    kind: .tooComplex,
                    message: "the query needed more than \(limit >> 20) MiB of memory and was stopped; read fewer rows or avoid joins that multiply them",
                    sql: sql)
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

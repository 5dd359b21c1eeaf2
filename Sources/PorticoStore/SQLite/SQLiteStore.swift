import Foundation
public import Logging
import Metrics
import PorticoBase
import PorticoJSON
import Synchronization
import Tracing

/// Portico's embedded database: one SQLite file in WAL mode, with one writer connection on a
/// thread of its own, several read-only connections on theirs, and a few read-only connections
/// that short reads borrow on the caller's thread (`SQLiteInlineReaders`).
///
/// Writers queue for the writer as suspended tasks (`WriteLease`), so concurrent writes never
/// sleep in SQLite's busy handler on shared threads, and reads never wait behind a write: WAL
/// gives every reader the last committed state while the writer works. Each connection keeps
/// its prepared statements. A statement is interrupted when its caller is cancelled or when it
/// runs past `statementTimeout`.
public final class SQLiteStore: Database {
    public let flavor = SQLFlavor.sqlite
    public let logger: Logger
    public let path: String
    /// Beside the file (`<path>-changes`), so the command line's changes reach a running server.
    public let changes: ChangeSignal
    /// The longest any one statement may run before it is interrupted.
    public let statementTimeout: Duration
    /// Rows one statement may return; a backstop behind the callers' own limits.
    public let maxRowsPerStatement: Int

    let readers: SQLiteWorkers
    let writer: SQLiteWorkers?
    let inline: SQLiteInlineReaders?
    let lease = WriteLease()
    /// Reads served on the caller's thread, and reads that ran past the budget there and moved.
    private let inlineReads = Counter(label: "portico_db_inline_reads_total")
    private let movedReads = Counter(label: "portico_db_reads_moved_total")
    /// Where each statement seen so far runs, so writes and slow reads go straight to their threads.
    private let routes = BoundedCache<String, Route>(limit: 4096)

    enum Route: Equatable {
        /// Read on the caller's thread when a connection is free.
        case read
        /// Read on the reader threads: it ran past the inline budget `misses` times in a row, the
        /// last time then. It is tried on the caller's thread again from `retryAt` (uptime
        /// nanoseconds): a read the system preempted once, or that met a cold cache, is not sent
        /// the slow way for good. The wait doubles with each miss, so a read that is slow by
        /// nature costs the caller's thread one budget now and then.
        case slowRead(retryAt: UInt64, misses: Int)
        case write

        var isSlowRead: Bool {
            if case .slowRead = self { return true }
            return false
        }

        /// The first wait before a slow read is tried inline again, and the longest.
        static let firstRetryNanoseconds: UInt64 = 100_000_000
        static let longestRetryNanoseconds: UInt64 = 60_000_000_000

        /// The route after one more run past the budget, at `now`.
        func missed(at now: UInt64) -> Route {
            var misses = 1
            if case .slowRead(_, let earlier) = self { misses = min(earlier + 1, 30) }
            let wait = min(Self.firstRetryNanoseconds << UInt64(min(misses - 1, 20)), Self.longestRetryNanoseconds)
            return .slowRead(retryAt: now &+ wait, misses: misses)
        }

        /// Whether a read on this route is tried on the caller's thread.
        var triesInline: Bool {
            switch self {
            case .read: true
            case .write: false
            case .slowRead(let retryAt, _): Uptime.nanoseconds >= retryAt
            }
        }
    }

    public struct Options: Sendable {
        /// Read-only connections (and threads).
        public var readers: Int = SQLiteStore.defaultReaderCount
        /// Open the file read-only: no writer, every write refused.
        public var readOnly = false
        public var limits = SQLiteLimits()
        public var statementTimeout: Duration = .seconds(30)
        public var maxRowsPerStatement = 200_000
        /// How long a read may run on the caller's thread before it moves to a reader thread;
        /// zero sends every read to the reader threads.
        public var inlineReadBudget: Duration = .milliseconds(1)
        /// Connections for reads on the caller's thread (one per event loop is enough).
        public var inlineReaders: Int = ProcessInfo.processInfo.activeProcessorCount

        public init() {}
    }

    /// Enough readers that a few slow queries do not hold up the quick ones.
    public static let defaultReaderCount = max(4, min(8, ProcessInfo.processInfo.activeProcessorCount * 2))

    /// Opens (creating, for a writable store) the database file; it and its WAL files are
    /// readable by the owner only.
    public init(path: String, options: Options = Options(), logger: Logger) throws {
        self.path = path
        self.logger = logger
        changes = ChangeSignal(path: path + "-changes")
        statementTimeout = options.statementTimeout
        maxRowsPerStatement = options.maxRowsPerStatement
        if options.readOnly {
            writer = nil
        } else {
            try Self.restrictPermissions(path)
            writer = SQLiteWorkers(name: "write", connections: [try SQLiteConnection(path: path, mode: .write, limits: options.limits)])
        }
        var connections: [SQLiteConnection] = []
        do {
            for _ in 0..<max(1, options.readers) {
                connections.append(try SQLiteConnection(path: path, mode: .read, limits: options.limits))
            }
        } catch {
            for connection in connections { connection.close() }
            if let writer { Task { await writer.shutdown() } }
            throw error
        }
        readers = SQLiteWorkers(name: "read", connections: connections)
        if options.inlineReadBudget > .zero, options.inlineReaders > 0 {
            do {
                inline = try SQLiteInlineReaders(path: path, count: options.inlineReaders, limits: options.limits, budget: options.inlineReadBudget)
            } catch {
                let (readers, writer) = (readers, writer)
                Task {
                    await readers.shutdown()
                    await writer?.shutdown()
                }
                throw error
            }
        } else {
            inline = nil
        }
    }

    /// Creates the file with mode 0600 if it does not exist, and narrows an existing one.
    static func restrictPermissions(_ path: String) throws {
        let files = FileManager.default
        if !files.fileExists(atPath: path), !files.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) {
            throw StoreError(kind: .unavailable, message: "cannot create the database file \(path); check that its directory exists and is writable", sql: "")
        }
        for file in [path, path + "-wal", path + "-shm", path + "-changes"] where files.fileExists(atPath: file) {
            try files.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
        }
    }

    // MARK: Database

    public func query(_ statement: SQLFragment) async throws -> [Row] {
        guard Traces.isOn, ServiceContext.current != nil else { return try await untracedQuery(statement) }
        return try await Traces.statement(statement, system: "sqlite") { try await untracedQuery(statement) }
    }

    private func untracedQuery(_ statement: SQLFragment) async throws -> [Row] {
        let (sql, binds) = statement.rendered()
        if let transaction = Self.currentTransaction, transaction.store === self {
            return try await transaction.run(sql, binds)
        }
        let route = routes[sql]
        if route == .write {
            return try await write(sql, binds)
        }
        let maxRows = maxRowsPerStatement
        if let inline, route?.triesInline ?? true {
            switch try inline.run(sql, binds, maxRows: maxRows) {
            case .rows(let rows):
                if route != .read { remember(sql, .read) }
                inlineReads.increment()
                return rows
            case .writes:
                remember(sql, .write)
                return try await write(sql, binds)
            case .elsewhere(let slow):
                if slow {
                    remember(sql, (route ?? .read).missed(at: Uptime.nanoseconds))
                    movedReads.increment()
                }
            }
        }
        let rows = try await SQLiteJob.run(on: readers, timeout: statementTimeout) { connection, _ in
            try connection.runIfReadOnly(sql, binds, maxRows: maxRows)
        }
        if route == nil {
            // A read that just missed the budget was learnt as slow above; that stands.
            routes.update(sql) { known in if rows == nil { known = .write } else if known == nil { known = .read } }
        }
        if let rows { return rows }
        return try await write(sql, binds)
    }

    public func transaction<T: Sendable>(_ body: @escaping @Sendable (any Database) async throws -> T) async throws -> T {
        if let transaction = Self.currentTransaction, transaction.store === self {
            return try await body(transaction)  // already inside one: join it
        }
        guard let writer else { throw Self.readOnlyError }
        try await lease.acquire()
        defer { lease.release() }
        let transaction = Transaction(store: self, writer: writer)
        _ = try await transaction.run("BEGIN IMMEDIATE", [])
        do {
            let result = try await Self.$currentTransaction.withValue(transaction) { try await body(transaction) }
            _ = try await transaction.run("COMMIT", [], cancellable: false)
            return result
        } catch {
            await transaction.rollback()
            throw error
        }
    }

    public func schemaTransaction<T: Sendable>(_ body: @escaping @Sendable (any Database) async throws -> T) async throws -> T {
        if let transaction = Self.currentTransaction, transaction.store === self { return try await body(transaction) }
        guard let writer else { throw Self.readOnlyError }
        try await lease.acquire()
        defer { lease.release() }
        let transaction = Transaction(store: self, writer: writer)
        // The pragma has no effect inside a transaction, so it is set around one.
        _ = try await transaction.run("PRAGMA foreign_keys = OFF", [], cancellable: false)
        do {
            _ = try await transaction.run("BEGIN IMMEDIATE", [])
            do {
                let result = try await Self.$currentTransaction.withValue(transaction) { try await body(transaction) }
                let broken = try await transaction.run("PRAGMA foreign_key_check", [], cancellable: false)
                if let first = broken.first {
                    throw StoreError(
                        kind: .constraint,
                        message:
                            "\(broken.count) record(s) of \(first.string("table") ?? "a table") would point at records of \(first.string("parent") ?? "another") that do not exist",
                        sql: "PRAGMA foreign_key_check")
                }
                _ = try await transaction.run("COMMIT", [], cancellable: false)
                _ = try await transaction.run("PRAGMA foreign_keys = ON", [], cancellable: false)
                return result
            } catch {
                await transaction.rollback()
                throw error
            }
        } catch {
            _ = try? await transaction.run("PRAGMA foreign_keys = ON", [], cancellable: false)
            throw error
        }
    }

    /// One job on the writer: BEGIN, one prepared INSERT stepped once per row, COMMIT. A batch
    /// costs one trip to the writer thread instead of one per statement.
    public func insertMany(into table: String, columns: [String], rows: [[SQLValue]], skippingConflictsOn key: [String]) async throws {
        guard !rows.isEmpty else { return }
        let sql =
            insertHead(table, columns) + "(" + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ")"
            + insertTail(skippingConflictsOn: key)
        if let transaction = Self.currentTransaction, transaction.store === self {
            for row in rows { _ = try await transaction.run(sql, row) }
            return
        }
        guard let writer else { throw Self.readOnlyError }
        try await lease.acquire()
        defer { lease.release() }
        try await SQLiteJob.run(on: writer, timeout: statementTimeout) { connection, _ in
            _ = try connection.run("BEGIN IMMEDIATE", [])
            do {
                try connection.runEach(sql, rows)
                _ = try connection.run("COMMIT", [])
            } catch {
                if !connection.isAutocommit { _ = try? connection.run("ROLLBACK", []) }
                throw error
            }
        }
    }

    public func close() async {
        inline?.close()
        await readers.shutdown()
        await writer?.shutdown()
    }

    // MARK: Writes

    /// One statement outside a transaction: it waits its turn for the writer.
    func write(_ sql: String, _ binds: [SQLValue]) async throws -> [Row] {
        guard let writer else { throw Self.readOnlyError }
        try await lease.acquire()
        defer { lease.release() }
        let maxRows = maxRowsPerStatement
        return try await SQLiteJob.run(on: writer, timeout: statementTimeout) { connection, _ in
            try connection.run(sql, binds, maxRows: maxRows)
        }
    }

    /// Where `sql` runs, once it has run.
    func route(of sql: String) -> Route? {
        routes[sql]
    }

    private func remember(_ sql: String, _ route: Route) {
        // One that writes stays a write. A read's route is replaced as it is learnt: slow after a
        // miss, quick again once a retry fits the budget.
        routes.update(sql) { known in if known != .write { known = route } }
    }

    static let readOnlyError = StoreError(kind: .readOnly, message: "this database is open read-only", sql: "")

    /// The transaction the current task runs in, so every statement of the task joins it.
    @TaskLocal static var currentTransaction: Transaction?

    /// The writer, held by one task from BEGIN to COMMIT or ROLLBACK.
    final class Transaction: Database {
        let store: SQLiteStore
        let writer: SQLiteWorkers
        var flavor: SQLFlavor { .sqlite }
        var logger: Logger { store.logger }
        var changes: ChangeSignal { store.changes }

        init(store: SQLiteStore, writer: SQLiteWorkers) {
            self.store = store
            self.writer = writer
        }

        func query(_ statement: SQLFragment) async throws -> [Row] {
            let (sql, binds) = statement.rendered()
            return try await run(sql, binds)
        }

        func run(_ sql: String, _ binds: [SQLValue], cancellable: Bool = true) async throws -> [Row] {
            let maxRows = store.maxRowsPerStatement
            return try await SQLiteJob.run(on: writer, timeout: cancellable ? store.statementTimeout : nil, cancellable: cancellable) { connection, _ in
                try connection.run(sql, binds, maxRows: maxRows)
            }
        }

        /// Rolls back whatever is open, even when the caller was cancelled; SQLite may already
        /// have rolled back an interrupted statement's transaction itself.
        func rollback() async {
            do {
                _ = try await SQLiteJob.run(on: writer, timeout: nil, cancellable: false) { connection, _ in
                    if !connection.isAutocommit { _ = try connection.run("ROLLBACK", []) }
                }
            } catch {
                store.logger.critical("could not roll back a transaction", metadata: ["error": "\(error)"])
            }
        }

        func transaction<T: Sendable>(_ body: @escaping @Sendable (any Database) async throws -> T) async throws -> T {
            try await body(self)
        }

        func close() async {}
    }
}

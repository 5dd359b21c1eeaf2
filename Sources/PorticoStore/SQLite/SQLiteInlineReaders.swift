import Synchronization

/// Read-only connections lent to the calling thread for reads that finish within a short budget.
///
/// Handing a statement to a worker thread costs two context switches and a wake-up each way,
/// several times what a primary-key lookup costs SQLite. So a read first runs where the caller
/// is (an event loop), on one of these connections, with an interrupt at `budget`: a read that
/// runs past it, or meets a lock, is abandoned (a read changes nothing) and runs again on the
/// reader threads, and its SQL is remembered as slow so it goes there directly next time. The
/// event loop is therefore never held longer than the budget.
final class SQLiteInlineReaders: Sendable {
    /// How long one read may hold the calling thread.
    let budget: Duration
    private let budgetNanoseconds: UInt64
    private let idle: Mutex<Pool>

    private struct Pool: ~Copyable {
        var connections: [SQLiteConnectionBox]
        var closed = false
    }

    /// What an inline attempt came to.
    enum Outcome {
        case rows([Row])
        /// The statement writes: it belongs to the writer.
        case writes
        /// Past the budget, locked, or no connection free: run it on the reader threads.
        case elsewhere(slow: Bool)
    }

    init(path: String, count: Int, limits: SQLiteLimits, budget: Duration) throws(StoreError) {
        self.budget = budget
        budgetNanoseconds = UInt64(budget.components.seconds) * 1_000_000_000 + UInt64(budget.components.attoseconds / 1_000_000_000)
        var limits = limits
        // A lock is a reason to go to a worker, never to sleep on the caller's thread.
        limits.busyTimeoutMilliseconds = 0
        var connections: [SQLiteConnectionBox] = []
        do {
            for _ in 0..<count { connections.append(SQLiteConnectionBox(try SQLiteConnection(path: path, mode: .read, limits: limits))) }
        } catch {
            for box in connections { box.connection.close() }
            throw error
        }
        idle = Mutex(Pool(connections: connections))
    }

    /// Runs `sql` on the calling thread if a connection is free and it finishes within the budget.
    func run(_ sql: String, _ binds: [SQLValue], maxRows: Int) throws(StoreError) -> Outcome {
        guard let box = idle.withLock({ pool in pool.closed ? nil : pool.connections.popLast() }) else { return .elsewhere(slow: false) }
        defer { giveBack(box) }
        let job = SQLiteJob(deadline: Uptime.nanoseconds &+ budgetNanoseconds, cancellable: false)
        do {
            let rows = try box.connection.serving(job) { () throws(StoreError) -> [Row]? in
                try box.connection.runIfReadOnly(sql, binds, maxRows: maxRows)
            }
            return rows.map(Outcome.rows) ?? .writes
        } catch {
            switch error.kind {
            case .timeout: return .elsewhere(slow: true)
            case .busy: return .elsewhere(slow: false)
            default: throw error
            }
        }
    }

    private func giveBack(_ box: SQLiteConnectionBox) {
        let close = idle.withLock { pool in
            if pool.closed { return true }
            pool.connections.append(box)
            return false
        }
        if close { box.connection.close() }
    }

    /// Closes the idle connections; one still lent out is closed when it comes back.
    func close() {
        let connections = idle.withLock { pool in
            pool.closed = true
            defer { pool.connections = [] }
            return pool.connections
        }
        for box in connections { box.connection.close() }
    }
}

/// A connection moving between threads, used by one at a time (the pool hands it out once).
// Unchecked: SQLite's connection is a C pointer; the pool hands the box to one thread at a time.
final class SQLiteConnectionBox: @unchecked Sendable {
    let connection: SQLiteConnection
    init(_ connection: SQLiteConnection) { self.connection = connection }
}

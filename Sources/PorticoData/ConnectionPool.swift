import Synchronization

/// A small pool of database connections for async code: connections are opened on demand up
/// to a limit, reused most-recently-released first, and handed to waiters in arrival order.
final class ConnectionPool<Connection: Sendable>: Sendable {
    private struct State {
        var idle: [Connection] = []
        var opened = 0
        var waiters: [CheckedContinuation<Connection, any Error>] = []
        var closed = false
    }

    private let state = Mutex(State())
    private let limit: Int
    private let open: @Sendable () async throws -> Connection
    private let close: @Sendable (Connection) async -> Void

    init(limit: Int, open: @escaping @Sendable () async throws -> Connection, close: @escaping @Sendable (Connection) async -> Void) {
        self.limit = max(1, limit)
        self.open = open
        self.close = close
    }

    struct PoolClosed: Error, CustomStringConvertible {
        var description: String { "the database is shutting down" }
    }

    func withConnection<T>(_ body: (Connection) async throws -> T) async throws -> T {
        let connection = try await acquire()
        do {
            let result = try await body(connection)
            release(connection)
            return result
        } catch {
            release(connection)
            throw error
        }
    }

    private enum Next {
        case ready(Connection)
        case openNew
        case wait
        case closed
    }

    func acquire() async throws -> Connection {
        let next: Next = state.withLock { s in
            if s.closed { return .closed }
            if let connection = s.idle.popLast() { return .ready(connection) }
            if s.opened < limit {
                s.opened += 1
                return .openNew
            }
            return .wait
        }
        switch next {
        case .ready(let connection):
            return connection
        case .closed:
            throw PoolClosed()
        case .openNew:
            do {
                return try await open()
            } catch {
                state.withLock { $0.opened -= 1 }
                throw error
            }
        case .wait:
            return try await withCheckedThrowingContinuation { continuation in
                let resumeNow: Connection? = state.withLock { s in
                    if let connection = s.idle.popLast() { return connection }
                    s.waiters.append(continuation)
                    return nil
                }
                if let resumeNow { continuation.resume(returning: resumeNow) }
            }
        }
    }

    func release(_ connection: Connection) {
        let waiter: CheckedContinuation<Connection, any Error>? = state.withLock { s in
            if !s.waiters.isEmpty { return s.waiters.removeFirst() }
            s.idle.append(connection)
            return nil
        }
        waiter?.resume(returning: connection)
    }

    /// Closes idle connections and refuses new work; call when nothing uses the pool any more.
    func shutdown() async {
        let (idle, waiters) = state.withLock { s in
            s.closed = true
            defer { s.idle = []; s.waiters = [] }
            return (s.idle, s.waiters)
        }
        for waiter in waiters { waiter.resume(throwing: PoolClosed()) }
        for connection in idle { await close(connection) }
    }
}

public import Logging
public import PostgresNIO
import Synchronization

/// Stops a statement on the server when its caller goes away (cancelled, past its deadline),
/// instead of letting it run on to its end or its `statement_timeout` while holding a connection.
/// Each pooled connection's server process id is read once; the cancellation
/// (`pg_cancel_backend`) goes over another connection of the pool, and the connection is handed
/// back only once it is done, so it cannot stop the next caller's statement.
public final class PostgresStatementCanceller: Sendable {
    let client: PostgresClient
    let logger: Logger
    /// The server process of each connection, by connection id.
    private let backends = Mutex<[PostgresConnection.ID: Int32]>([:])

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Runs `body` on `connection`, stopping its statement on the server if the caller is cancelled meanwhile.
    public func run<T: Sendable>(on connection: PostgresConnection, _ body: (PostgresConnection) async throws -> T) async throws -> T {
        let backend = try await backendID(of: connection)
        let canceller = Mutex<Task<Void, Never>?>(nil)
        let outcome: Result<T, any Error>
        do {
            outcome = .success(
                try await withTaskCancellationHandler {
                    try await body(connection)
                } onCancel: {
                    canceller.withLock { $0 = self.cancel(backend) }
                })
        } catch {
            outcome = .failure(error)
        }
        if let sent = canceller.withLock({ $0 }) { await sent.value }
        return try outcome.get()
    }

    func backendID(of connection: PostgresConnection) async throws -> Int32 {
        if let known = backends.withLock({ $0[connection.id] }) { return known }
        var pid: Int32 = 0
        for try await row in try await connection.query("SELECT pg_backend_pid()", logger: logger) { pid = try row.decode(Int32.self) }
        backends.withLock { $0[connection.id] = pid }
        return pid
    }

    /// Asks the server to stop what process `backend` runs; gives up after two seconds (the
    /// database may be the reason the caller went away).
    private func cancel(_ backend: Int32) -> Task<Void, Never> {
        let client = self.client
        let logger = self.logger
        return Task {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { _ = try? await client.query(PostgresQuery(unsafeSQL: "SELECT pg_cancel_backend(\(backend))"), logger: logger) }
                group.addTask { try? await Task.sleep(for: .seconds(2)) }
                await group.next()
                group.cancelAll()
            }
        }
    }
}

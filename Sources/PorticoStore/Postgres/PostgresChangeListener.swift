import Logging
import PostgresNIO
import Synchronization

/// Carries change announcements between replicas on PostgreSQL: `publish` sends `NOTIFY` on the
/// channel, and one pooled connection `LISTEN`s on it and moves `heard` for every notification.
///
/// Whatever was announced while the listening connection was down cannot be known, so `heard`
/// moves when listening starts again, and once a second while it cannot (the fallback: caches
/// then re-read at most once a second, as if they polled).
final class PostgresChangeListener: Sendable {
    let heard = ChangeCounter()
    let client: PostgresClient
    let channel: String
    let logger: Logger
    private let task = Mutex<Task<Void, Never>?>(nil)
    /// Whether the `LISTEN` is in place now.
    let listening = Atomic<Bool>(false)
    /// Called when the listening connection is lost (the database is going away).
    private let lostHandler = Mutex<(@Sendable () -> Void)?>(nil)
    var onLost: (@Sendable () -> Void)? {
        get { lostHandler.withLock { $0 } }
        set { lostHandler.withLock { $0 = newValue } }
    }
    /// Called with the payload of each message heard.
    private let messageHandler = Mutex<(@Sendable (String) -> Void)?>(nil)
    var onMessage: (@Sendable (String) -> Void)? {
        get { messageHandler.withLock { $0 } }
        set { messageHandler.withLock { $0 = newValue } }
    }
    /// Attempts to listen that failed since it last worked.
    private let failures = Atomic<Int>(0)
    /// Announcements being sent.
    private let pending = Mutex<[Int: Task<Void, Never>]>([:])
    private let nextID = Atomic<Int>(0)

    init(client: PostgresClient, channel: String, logger: Logger) {
        self.client = client
        self.channel = channel
        self.logger = logger
    }

    func start() {
        task.withLock { task in
            guard task == nil else { return }
            task = Task { await self.listen() }
        }
    }

    /// Stops listening, once the announcements still being sent have gone out (a command-line
    /// process announces and then exits).
    func stop() async {
        let sending = pending.withLock { pending in
            defer { pending = [:] }
            return Array(pending.values)
        }
        for task in sending { await task.value }
        task.withLock { $0?.cancel() }
    }

    /// Sends a change announcement (nil) or a message on the channel, to every replica.
    func publish(_ message: String?) {
        let (client, channel, logger) = (self.client, self.channel, self.logger)
        let payload = message ?? ""
        let id = nextID.add(1, ordering: .relaxed).newValue
        // Registered under the lock, so the task's own removal comes after it.
        pending.withLock { pending in
            pending[id] = Task {
                do {
                    try await client.query("SELECT pg_notify(\(channel), \(payload))", logger: logger)
                } catch {
                    logger.warning("could not announce a change to the other replicas", metadata: ["error": "\(String(reflecting: error))"])
                }
                _ = self.pending.withLock { $0.removeValue(forKey: id) }
            }
        }
    }

    private func listen() async {
        while !Task.isCancelled {
            do {
                try await client.withConnection { connection in
                    try await connection.listen(on: channel) { notifications in
                        listening.store(true, ordering: .releasing)
                        heard.bump()
                        if failures.exchange(0, ordering: .relaxed) > 0 { logger.notice("listening for changes of other replicas again") }
                        for try await notification in notifications {
                            heard.bump()
                            if !notification.payload.isEmpty { onMessage?(notification.payload) }
                        }
                    }
                }
            } catch  where Task.isCancelled {
                break
            } catch {
                if listening.load(ordering: .acquiring) { onLost?() }
                if failures.add(1, ordering: .relaxed).oldValue == 0 {
                    logger.warning(
                        "cannot listen for changes of other replicas; caches re-read stored state every second until it can",
                        metadata: ["error": "\(String(reflecting: error))"])
                }
            }
            listening.store(false, ordering: .releasing)
            heard.bump()
            try? await Task.sleep(for: .seconds(1))
        }
        listening.store(false, ordering: .releasing)
    }
}

import Logging
import Metrics
import Synchronization

/// Counts this server's open connections for every connection's handler (`HTTPConnectionHandler`).
final class ConnectionCount: Sendable {
    let limit: Int
    private let open = Atomic<Int>(0)
    private let refused = Atomic<Int>(0)
    private let gauge = Gauge(label: "portico_http_connections_open")
    private let refusals = Counter(label: "portico_http_connections_refused_total")
    let logger: Logger

    init(limit: Int, logger: Logger) {
        self.limit = limit
        self.logger = logger
    }

    /// Counts a new connection; `false` when it is one too many.
    func opened() -> Bool {
        let now = open.add(1, ordering: .relaxed).newValue
        gauge.record(now)
        guard now > limit else { return true }
        refusals.increment()
        // One warning per thousand refusals, so a flood does not flood the log as well.
        if refused.add(1, ordering: .relaxed).oldValue % 1000 == 0 {
            logger.warning("refusing connections: \(limit) are open", metadata: ["limit": "\(limit)"])
        }
        return false
    }

    func closed() {
        gauge.record(open.subtract(1, ordering: .relaxed).newValue)
    }
}

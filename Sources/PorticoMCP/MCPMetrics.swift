import Metrics
import Synchronization

/// What the endpoint reports to `/metrics` (through swift-metrics, so any backend works):
/// requests by method, tool and outcome, their latency, and sessions.
final class MCPMetrics: Sendable {
    /// How a JSON-RPC request ended.
    enum Outcome: String, Sendable {
        case ok
        /// A tool result with `isError: true`.
        case toolError = "tool_error"
        /// A JSON-RPC error response.
        case error
        case cancelled
        case timeout
    }

    private struct Key: Hashable {
        var method: String
        var tool: String
        var outcome: Outcome
    }

    // Handles are made once per label set: making one takes the factory's lock.
    private let counters = Mutex<[Key: Counter]>([:])
    private let timers = Mutex<[Key: Metrics.Timer]>([:])
    let sessionsInitialized = Counter(label: "portico_mcp_sessions_initialized_total")
    let sessionsEnded = Counter(label: "portico_mcp_sessions_ended_total")
    private let activeSessions = Mutex<[String: ContinuousClock.Instant]>([:])

    /// Counts one request and records its duration; `tool` is empty for other methods.
    func record(method: String, tool: String, outcome: Outcome, since start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        // Unknown methods and tools are one label, so a client cannot mint label values.
        let key = Key(method: method, tool: tool, outcome: outcome)
        let counter = counters.withLock { counters in
            if let counter = counters[key] { return counter }
            let counter = Counter(label: "portico_mcp_requests_total", dimensions: [("method", method), ("tool", tool), ("outcome", outcome.rawValue)])
            counters[key] = counter
            return counter
        }
        counter.increment()
        let timerKey = Key(method: method, tool: tool, outcome: .ok)
        let timer = timers.withLock { timers in
            if let timer = timers[timerKey] { return timer }
            let timer = Metrics.Timer(label: "portico_mcp_request_duration_seconds", dimensions: [("method", method), ("tool", tool)], preferredDisplayUnit: .seconds)
            timers[timerKey] = timer
            return timer
        }
        timer.recordNanoseconds(Int64(elapsed.components.seconds) * 1_000_000_000 + Int64(elapsed.components.attoseconds / 1_000_000_000))
    }

    /// Notes that a session made a request.
    func sawSession(_ nonce: String) {
        activeSessions.withLock { $0[nonce] = .now }
    }

    func endedSession(_ nonce: String) {
        sessionsEnded.increment()
        activeSessions.withLock { _ = $0.removeValue(forKey: nonce) }
    }

    /// Sessions that made a request on this replica within `window`; older ones are forgotten.
    func activeSessionCount(within window: Duration) -> Int {
        let cutoff = ContinuousClock.now - window
        return activeSessions.withLock { sessions in
            sessions = sessions.filter { $0.value >= cutoff }
            return sessions.count
        }
    }
}

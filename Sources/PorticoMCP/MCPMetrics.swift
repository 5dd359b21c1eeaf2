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
        /// Answered with a task, which goes on after the request.
        case task
    }

    private struct Key: Hashable {
        var method: String
        var tool: String
        var outcome: Outcome
    }

    // Handles are made once per label set (making one takes the factory's lock), and found
    // together with one lookup per request.
    private let handles = Mutex<[Key: (counter: Counter, timer: Metrics.Timer)]>([:])
    let sessionsInitialized = Counter(label: "portico_mcp_sessions_initialized_total")
    let sessionsEnded = Counter(label: "portico_mcp_sessions_ended_total")
    private let activeSessions = Mutex<(sessions: [String: ContinuousClock.Instant], prunedAt: ContinuousClock.Instant)>(([:], .now))

    /// Counts one request and records its duration; `tool` is empty for other methods.
    func record(method: String, tool: String, outcome: Outcome, since start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        // Unknown methods and tools are one label, so a client cannot mint label values.
        let key = Key(method: method, tool: tool, outcome: outcome)
        let (counter, timer) = handles.withLock { handles in
            if let known = handles[key] { return known }
            let made = (
                counter: Counter(label: "portico_mcp_requests_total", dimensions: [("method", method), ("tool", tool), ("outcome", outcome.rawValue)]),
                // One timer per method and tool, whatever the outcome (swift-metrics hands back the same series).
                timer: Metrics.Timer(
                    label: "portico_mcp_request_duration_seconds", dimensions: [("method", method), ("tool", tool)], preferredDisplayUnit: .seconds)
            )
            handles[key] = made
            return made
        }
        counter.increment()
        timer.recordNanoseconds(Int64(elapsed.components.seconds) * 1_000_000_000 + Int64(elapsed.components.attoseconds / 1_000_000_000))
    }

    /// How long a session counts as active after its last request.
    static let activeWindow: Duration = .seconds(300)

    /// Notes that a session made a request. Sessions that simply stop (most clients never end
    /// theirs) are forgotten once the map grows, so it stays bounded even if nobody reads it.
    func sawSession(_ nonce: String) {
        let now = ContinuousClock.now
        activeSessions.withLock { state in
            if state.sessions[nonce] == nil, state.sessions.count >= 4096, now - state.prunedAt > .seconds(10) {
                state.sessions = state.sessions.filter { now - $0.value < Self.activeWindow }
                state.prunedAt = now
            }
            // Past the cap the gauge saturates rather than the map growing.
            guard state.sessions.count < Self.maxTracked || state.sessions[nonce] != nil else { return }
            state.sessions[nonce] = now
        }
    }

    /// Sessions tracked at most for the `portico_mcp_sessions_active` gauge.
    static let maxTracked = 50_000

    func endedSession(_ nonce: String) {
        sessionsEnded.increment()
        activeSessions.withLock { _ = $0.sessions.removeValue(forKey: nonce) }
    }

    /// Sessions that made a request on this replica within `window`; older ones are forgotten.
    func activeSessionCount(within window: Duration) -> Int {
        let cutoff = ContinuousClock.now - window
        return activeSessions.withLock { state in
            state.sessions = state.sessions.filter { $0.value >= cutoff }
            return state.sessions.count
        }
    }
}

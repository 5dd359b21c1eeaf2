import Metrics
import Synchronization

/// The right to use the single writer connection: writers queue here, first come first served,
/// suspended as tasks (no thread sleeps), and a cancelled writer leaves the queue at once.
package final class WriteLease: Sendable {
    private struct State {
        var held = false
        var waiters: [(id: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
        /// Writers that asked and have been neither served nor cancelled.
        var pending: Set<UInt64> = []
        /// Writers cancelled before they joined `waiters`.
        var cancelledEarly: Set<UInt64> = []
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())
    /// Writers waiting for the lease (`portico_db_write_queue_depth` for the writer connection).
    private let depth: Gauge
    private let wait: Metrics.Timer

    package init(queueDepth: String = "portico_db_write_queue_depth", waitSeconds: String = "portico_db_write_wait_seconds") {
        depth = Gauge(label: queueDepth)
        wait = Metrics.Timer(label: waitSeconds, preferredDisplayUnit: .seconds)
    }

    package func acquire() async throws {
        let id: UInt64? = state.withLock { s in
            if !s.held {
                s.held = true
                return nil
            }
            s.nextID += 1
            s.pending.insert(s.nextID)
            return s.nextID
        }
        guard let id else { return }
        let start = Uptime.nanoseconds
        defer { wait.recordNanoseconds(Int64(truncatingIfNeeded: Uptime.nanoseconds &- start)) }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Result<Void, any Error>? = state.withLock { s in
                    if s.cancelledEarly.remove(id) != nil {
                        s.pending.remove(id)
                        return .failure(CancellationError())
                    }
                    if !s.held {
                        s.held = true
                        s.pending.remove(id)
                        return .success(())
                    }
                    s.waiters.append((id, continuation))
                    depth.record(s.waiters.count)
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let continuation: CheckedContinuation<Void, any Error>? = state.withLock { s in
                if let index = s.waiters.firstIndex(where: { $0.id == id }) {
                    let continuation = s.waiters.remove(at: index).continuation
                    s.pending.remove(id)
                    depth.record(s.waiters.count)
                    return continuation
                }
                if s.pending.contains(id) { s.cancelledEarly.insert(id) }
                return nil
            }
            continuation?.resume(throwing: CancellationError())
        }
    }

    /// Hands the lease to the next writer, or frees it.
    package func release() {
        let next: CheckedContinuation<Void, any Error>? = state.withLock { s in
            guard !s.waiters.isEmpty else {
                s.held = false
                return nil
            }
            let next = s.waiters.removeFirst()
            s.pending.remove(next.id)
            depth.record(s.waiters.count)
            return next.continuation
        }
        next?.resume()
    }
}

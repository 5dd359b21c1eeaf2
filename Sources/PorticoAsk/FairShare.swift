import Synchronization

/// Shares a datasource's connections among its callers: one caller runs at most `share` queries
/// at once there, and the rest of theirs wait their turn, so a caller with slow queries cannot
/// take every connection and leave the others' queries to time out in the queue.
final class FairShare: Sendable {
    let share: Int

    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var running: [String: Int] = [:]
        var waiting: [String: [Waiter]] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    init(share: Int) {
        self.share = max(1, share)
    }

    /// Runs `body` once `caller` has fewer than `share` queries running here.
    func run<T: Sendable>(caller: String, _ body: () async throws -> T) async throws -> T {
        try await acquire(caller)
        defer { release(caller) }
        return try await body()
    }

    private func acquire(_ caller: String) async throws {
        let id: UInt64? = state.withLock { state in
            if state.running[caller, default: 0] < share {
                state.running[caller, default: 0] += 1
                return nil
            }
            state.nextID += 1
            return state.nextID
        }
        guard let id else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Outcome { case admitted, cancelled, queued }
                let outcome = state.withLock { state -> Outcome in
                    // A cancellation before this point found no waiter to resume: it is seen here instead.
                    if Task.isCancelled { return .cancelled }
                    // A slot may have come free since the first look.
                    if state.running[caller, default: 0] < share {
                        state.running[caller, default: 0] += 1
                        return .admitted
                    }
                    state.waiting[caller, default: []].append(Waiter(id: id, continuation: continuation))
                    return .queued
                }
                switch outcome {
                case .admitted: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .queued: break
                }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.waiting[caller]?.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiting[caller]?.remove(at: index)
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    private func release(_ caller: String) {
        let next = state.withLock { state -> Waiter? in
            if var queue = state.waiting[caller], !queue.isEmpty {
                // The slot passes straight to the caller's next query.
                let next = queue.removeFirst()
                state.waiting[caller] = queue.isEmpty ? nil : queue
                return next
            }
            let running = state.running[caller, default: 1] - 1
            state.running[caller] = running > 0 ? running : nil
            return nil
        }
        next?.continuation.resume()
    }
}

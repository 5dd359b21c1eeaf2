import Synchronization

/// A signal one waiter sleeps on until it is given or a time passes: the engine's worker waits on
/// it between polls, and a write that queues an execution wakes it at once. A signal given while
/// nobody waits is kept for the next wait.
final class Wakeup: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.pending = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns when signalled, when `timeout` has passed, or when the task is cancelled.
    func wait(timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                try? await Task.sleep(for: timeout)
                if !Task.isCancelled { self.signal() }
            }
            group.addTask {
                await withTaskCancellationHandler {
                    await withCheckedContinuation { continuation in
                        let ready = self.state.withLock { state -> Bool in
                            if state.pending {
                                state.pending = false
                                return true
                            }
                            state.waiter = continuation
                            return false
                        }
                        if ready { continuation.resume() }
                    }
                } onCancel: {
                    self.signal()
                }
            }
            await group.next()
            group.cancelAll()
        }
        // A timeout that raced the signal leaves no stale signal behind for the next wait.
        state.withLock { $0.pending = false }
    }
}

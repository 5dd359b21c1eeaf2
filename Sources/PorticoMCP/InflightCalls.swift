import PorticoJSON
import Synchronization

/// Tool calls in progress on this replica: what `notifications/cancelled` may stop, what the
/// request deadline stops, and what a shutdown stops after its grace period.
final class InflightCalls: Sendable {
    typealias CallTask = Task<ToolResult, any Error>

    private struct Entry {
        let key: String?
        let task: CallTask
        let deadline: ContinuousClock.Instant
        var timedOut = false
    }

    private struct State {
        var next: UInt64 = 0
        var entries: [UInt64: Entry] = [:]
        /// The latest call for each session-and-request-id key, for cancellation by id.
        var byKey: [String: UInt64] = [:]
    }

    private let state = Mutex(State())

    /// Registers a call; the token removes it. Without a key (the 2026-07-28 era, where closing
    /// the stream is the cancellation) it cannot be cancelled by id.
    func register(_ key: String?, _ task: CallTask, deadline: ContinuousClock.Instant) -> UInt64 {
        state.withLock { s in
            s.next += 1
            s.entries[s.next] = Entry(key: key, task: task, deadline: deadline)
            if let key { s.byKey[key] = s.next }
            return s.next
        }
    }

    /// Removes a finished call and says whether the deadline stopped it.
    @discardableResult
    func remove(_ token: UInt64) -> Bool {
        state.withLock { s in
            guard let entry = s.entries.removeValue(forKey: token) else { return false }
            if let key = entry.key, s.byKey[key] == token { s.byKey[key] = nil }
            return entry.timedOut
        }
    }

    /// Gives a call that became a task the key `tasks/cancel` names it by, and the task's time.
    func retarget(_ token: UInt64, key: String, deadline: ContinuousClock.Instant) {
        state.withLock { s in
            guard var entry = s.entries[token] else { return }
            if let old = entry.key, s.byKey[old] == token { s.byKey[old] = nil }
            entry = Entry(key: key, task: entry.task, deadline: deadline, timedOut: entry.timedOut)
            s.entries[token] = entry
            s.byKey[key] = token
        }
    }

    /// Cancels the call a client named in `notifications/cancelled`.
    @discardableResult
    func cancel(_ key: String) -> Bool {
        let task: CallTask? = state.withLock { s in
            guard let token = s.byKey[key] else { return nil }
            return s.entries[token]?.task
        }
        task?.cancel()
        return task != nil
    }

    /// Cancels every call past its deadline; returns how many.
    @discardableResult
    func expire(now: ContinuousClock.Instant) -> Int {
        let overdue: [CallTask] = state.withLock { s in
            var tasks: [CallTask] = []
            for (token, entry) in s.entries where !entry.timedOut && entry.deadline <= now {
                s.entries[token]?.timedOut = true
                tasks.append(entry.task)
            }
            return tasks
        }
        for task in overdue { task.cancel() }
        return overdue.count
    }

    /// Cancels every call (a shutdown whose grace period is over).
    func cancelAll() {
        let tasks = state.withLock { s in s.entries.values.map(\.task) }
        for task in tasks { task.cancel() }
    }

    var count: Int { state.withLock { $0.entries.count } }
}

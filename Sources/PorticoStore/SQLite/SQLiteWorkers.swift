import CSQLite
import Foundation
import Metrics
import Synchronization

/// One piece of database work waiting for, or running on, a worker thread. Whoever moves it out
/// of `queued` first (the worker starting it, or the caller cancelling it) resumes the caller, so
/// a cancelled caller never waits for a busy worker.
// Unchecked: `work` and `fail` are set before the job is queued and read by the one worker that takes it (`state` orders them).
package final class SQLiteJob: @unchecked Sendable {
    enum StopReason: Sendable {
        case cancelled, deadline
        /// SQLite's memory grew by more than the limit (in bytes) while the job ran.
        case memory(limit: Int64)
    }

    // A job is prepared (its callbacks set) before it is queued; a cancellation that comes first
    // finds it preparing, and the submitter then fails it instead of queueing it.
    private static let preparing = 3, queued = 0, running = 1, finished = 2

    // Set before the job is submitted; read by the worker that takes it.
    private var work: ((SQLiteConnection) -> Void)?
    private var fail: ((any Error) -> Void)?
    private let state = Atomic<Int>(SQLiteJob.preparing)
    private let stop = Atomic<Int>(0)  // 0: run on, 1: cancelled, 2: past the deadline, 3: over the memory limit
    /// Uptime in nanoseconds past which the statement is interrupted; 0 for none.
    let deadline: UInt64
    /// Bytes SQLite's memory may grow by while the job runs before it is interrupted; 0 for no limit.
    let memoryLimit: Int64
    /// SQLite's memory in use when the job started, plus the limit; set by the worker.
    private var memoryCeiling: Int64 = .max
    /// The connection running the job, for `sqlite3_interrupt` on cancellation: set and cleared
    /// under the lock, so an interrupt never reaches the connection's next job.
    private let runningOn = Mutex<UInt>(0)  // the connection's handle as an address; 0 when the job is not running
    /// Whether cancelling the caller's task stops this job (COMMIT and ROLLBACK must run anyway).
    let cancellable: Bool
    let enqueuedAt: UInt64

    package init(deadline: UInt64, cancellable: Bool, memoryLimit: Int64 = 0) {
        self.deadline = deadline
        self.cancellable = cancellable
        self.memoryLimit = memoryLimit
        enqueuedAt = Uptime.nanoseconds
    }

    /// Runs `body` on a worker of `workers` and returns its result to the calling task.
    package static func run<T: Sendable>(
        on workers: SQLiteWorkers, timeout: Duration?, cancellable: Bool = true, memoryLimit: Int64 = 0,
        _ body: @escaping @Sendable (SQLiteConnection, SQLiteJob) throws -> T
    ) async throws -> T {
        let deadline =
            timeout.map { Uptime.nanoseconds &+ UInt64($0.components.seconds) * 1_000_000_000 &+ UInt64($0.components.attoseconds / 1_000_000_000) } ?? 0
        let job = SQLiteJob(deadline: deadline, cancellable: cancellable, memoryLimit: memoryLimit)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                job.work = { connection in
                    do {
                        continuation.resume(returning: try connection.serving(job) { try body(connection, job) })
                    } catch let error as StoreError where error.kind == .cancelled {
                        continuation.resume(throwing: CancellationError())
                    } catch {
                        continuation.resume(throwing: error)
                    }
                }
                job.fail = { error in continuation.resume(throwing: error) }
                if job.enqueue() {
                    workers.submit(job)
                } else {
                    // Cancelled before it was queued (the cancellation handler ran first): nobody else resumes it.
                    continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            if cancellable { job.cancel() }
        }
    }

    /// Moves a prepared job to the queue; `false` when it was cancelled while being prepared.
    func enqueue() -> Bool {
        state.compareExchange(expected: Self.preparing, desired: Self.queued, ordering: .acquiringAndReleasing).exchanged
    }

    /// Called by the caller's cancellation: a queued job fails at once, a running one is interrupted,
    /// one still being prepared is failed by its submitter.
    func cancel() {
        stop.store(1, ordering: .relaxed)
        // A statement inside a long step (a sort, a function) hears this sooner than the progress handler.
        runningOn.withLock { address in if let handle = OpaquePointer(bitPattern: address) { sqlite3_interrupt(handle) } }
        if state.compareExchange(expected: Self.preparing, desired: Self.finished, ordering: .acquiringAndReleasing).exchanged { return }
        if state.compareExchange(expected: Self.queued, desired: Self.finished, ordering: .acquiringAndReleasing).exchanged {
            let fail = self.fail
            release()
            fail?(CancellationError())
        }
    }

    /// Called by a worker: runs the job unless it was cancelled while queued.
    func start(on connection: SQLiteConnection) {
        guard state.compareExchange(expected: Self.queued, desired: Self.running, ordering: .acquiringAndReleasing).exchanged else { return }
        let work = self.work
        release()
        if memoryLimit > 0 { memoryCeiling = sqlite3_memory_used() &+ memoryLimit }
        runningOn.withLock { $0 = UInt(bitPattern: connection.handle) }
        // A cancellation that came between the state change and now has nobody to interrupt yet.
        if stop.load(ordering: .relaxed) == 1 { sqlite3_interrupt(connection.handle) }
        work?(connection)
        runningOn.withLock { $0 = 0 }
    }

    /// Called by a worker that is shutting down.
    func abandon(_ error: any Error) {
        guard state.compareExchange(expected: Self.queued, desired: Self.finished, ordering: .acquiringAndReleasing).exchanged else { return }
        let fail = self.fail
        release()
        fail?(error)
    }

    private func release() {
        work = nil
        fail = nil
    }

    /// The interrupt check, from SQLite's progress handler on the worker thread.
    func shouldStop() -> Bool {
        if stop.load(ordering: .relaxed) != 0 { return true }
        if deadline != 0, Uptime.nanoseconds > deadline {
            stop.store(2, ordering: .relaxed)
            return true
        }
        if memoryLimit > 0, sqlite3_memory_used() > memoryCeiling {
            stop.store(3, ordering: .relaxed)
            return true
        }
        return false
    }

    var stopReason: StopReason? {
        switch stop.load(ordering: .relaxed) {
        case 1: .cancelled
        case 2: .deadline
        case 3: .memory(limit: memoryLimit)
        default: nil
        }
    }
}

/// Threads of its own, each owning one connection, taking jobs from one queue in arrival order.
/// SQLite's calls block; here they block these threads only, never an event loop or the
/// concurrency pool.
package final class SQLiteWorkers: Sendable {
    private struct Queue {
        var jobs: [SQLiteJob] = []
        var head = 0
        var closed = false
        var idle: Int
        /// The job each worker runs now, so a shutdown can stop them.
        var running: [ObjectIdentifier: SQLiteJob] = [:]

        var count: Int { jobs.count - head }

        mutating func pop() -> SQLiteJob? {
            guard head < jobs.count else { return nil }
            let job = jobs[head]
            head += 1
            if head > 64, head * 2 > jobs.count {
                jobs.removeFirst(head)
                head = 0
            }
            return job
        }
    }

    let name: String
    private let condition = NSCondition()
    private nonisolated(unsafe) var queue: Queue
    private let running = DispatchGroup()
    /// Jobs waiting for a worker (`portico_db_queue_depth`).
    private let depth: Gauge
    /// How long jobs waited for a worker (`portico_db_queue_wait_seconds`).
    private let wait: Metrics.Timer

    /// Starts one thread per connection. The connections move to their threads and are closed there.
    package init(name: String, connections: [SQLiteConnection]) {
        self.name = name
        depth = Gauge(label: "portico_db_queue_depth", dimensions: [("pool", name)])
        wait = Metrics.Timer(label: "portico_db_queue_wait_seconds", dimensions: [("pool", name)], preferredDisplayUnit: .seconds)
        queue = Queue(idle: 0)
        for (index, connection) in connections.enumerated() {
            let box = SQLiteConnectionBox(connection)
            running.enter()
            let thread = Thread { [self] in
                self.serve(box.connection)
                box.connection.close()
                self.running.leave()
            }
            thread.name = "portico-sqlite-\(name)-\(index)"
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    func submit(_ job: SQLiteJob) {
        condition.lock()
        if queue.closed {
            condition.unlock()
            job.abandon(StoreError(kind: .unavailable, message: "the database is shutting down", sql: ""))
            return
        }
        queue.jobs.append(job)
        let waiting = queue.count
        if queue.idle > 0 { condition.signal() }
        condition.unlock()
        depth.record(waiting)
    }

    private func serve(_ connection: SQLiteConnection) {
        let worker = ObjectIdentifier(connection)
        while true {
            condition.lock()
            var job = queue.pop()
            while job == nil {
                if queue.closed {
                    condition.unlock()
                    return
                }
                queue.idle += 1
                condition.wait()
                queue.idle -= 1
                job = queue.pop()
            }
            let waiting = queue.count
            queue.running[worker] = job
            condition.unlock()
            depth.record(waiting)
            guard let job else { continue }
            wait.recordNanoseconds(Int64(truncatingIfNeeded: Uptime.nanoseconds &- job.enqueuedAt))
            job.start(on: connection)
            condition.lock()
            queue.running[worker] = nil
            condition.unlock()
        }
    }

    private func closeQueue() -> (abandoned: [SQLiteJob], running: [SQLiteJob]) {
        condition.lock()
        defer { condition.unlock() }
        queue.closed = true
        var abandoned: [SQLiteJob] = []
        while let job = queue.pop() { abandoned.append(job) }
        condition.broadcast()
        return (abandoned, Array(queue.running.values))
    }

    /// Fails queued jobs, lets running ones finish (or stops them, with `interruptingRunning`: a
    /// datasource's queries are answers nobody will read once the server stops), and waits for
    /// every thread to close its connection.
    package func shutdown(interruptingRunning: Bool = false) async {
        let (abandoned, busy) = closeQueue()
        for job in abandoned { job.abandon(StoreError(kind: .unavailable, message: "the database is shutting down", sql: "")) }
        if interruptingRunning { for job in busy where job.cancellable { job.cancel() } }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            running.notify(queue: .global()) { continuation.resume() }
        }
    }
}

/// Monotonic time, cheap enough for every statement.
/// `CLOCK_MONOTONIC` in nanoseconds: the clock of deadlines and of request arrivals (NIO's
/// `NIODeadline` reads the same clock).
package enum Uptime {
    package static var nanoseconds: UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}

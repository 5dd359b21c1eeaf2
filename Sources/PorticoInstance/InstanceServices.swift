import Logging
import PorticoAuth
import PorticoData
import PorticoStore
import PorticoWorkflow
import ServiceLifecycle

/// Writes the audit trail: a batch once `batch` calls are waiting or a second has passed since
/// the last, hourly a prune of records past the retention, and at shutdown what is still pending.
/// Busy servers write often in large batches; quiet ones once a second.
struct AuditService: Service {
    let trail: AuditTrail
    let apps: AppRegistry
    let clock: WallClock
    let logger: Logger
    static let batch = 1_000
    static let tick: Duration = .milliseconds(100)
    static let ticksPerFlush = 10
    static let ticksPerPrune = 36_000  // an hour

    func run() async throws {
        var ticks = 0
        var sinceFlush = 0
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                sinceFlush += 1
                if sinceFlush >= Self.ticksPerFlush || trail.pendingCount >= Self.batch {
                    sinceFlush = 0
                    try await trail.flush()
                }
                if ticks % Self.ticksPerPrune == 0 { try await trail.prune(apps: try await apps.names(), now: clock.date) }
            } catch {
                logger.warning("could not write the audit trail", metadata: ["error": "\(error)"])
            }
            ticks += 1
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: Self.tick) }
        }
        // Calls that end during shutdown are recorded after this service was told to stop.
        try? await Task.sleep(for: .milliseconds(100))
        try? await trail.flush()
    }
}

/// Shares the rate limiter's counts with the other replicas (and keeps the day's on disk) once a second.
struct RateLimitService: Service {
    let limiter: RateLimiter

    func run() async throws {
        await cancelWhenGracefulShutdown { await limiter.run() }
        // What was counted since the last exchange (a day's tool calls must outlive the process).
        try? await limiter.sync()
    }
}

/// Runs the workflows' executions and schedules until shutdown; an execution stopped midway is
/// taken up again, by this replica after a restart or by another when its lease runs out.
struct WorkflowRunService: Service {
    let engine: WorkflowEngine

    func run() async throws {
        await cancelWhenGracefulShutdown { await engine.run() }
    }
}

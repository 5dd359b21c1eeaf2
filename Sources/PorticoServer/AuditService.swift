import Logging
import PorticoData
import ServiceLifecycle

/// Writes the audit trail: every quarter second what was recorded, hourly a prune of records
/// past the retention, and at shutdown what is still pending.
struct AuditService: Service {
    let trail: AuditTrail
    let apps: AppRegistry
    let clock: WallClock
    let logger: Logger

    func run() async throws {
        var ticks = 0
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                try await trail.flush()
                if ticks % 14_400 == 0 { try await trail.prune(apps: try await apps.names(), now: clock.date) }
            } catch {
                logger.warning("could not write the audit trail", metadata: ["error": "\(error)"])
            }
            ticks += 1
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .milliseconds(250)) }
        }
        // Calls that end during shutdown are recorded after this service was told to stop.
        try? await Task.sleep(for: .milliseconds(100))
        try? await trail.flush()
    }
}

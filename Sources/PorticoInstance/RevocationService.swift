import Logging
import PorticoAuth
import ServiceLifecycle

/// Keeps the revocation list in step with the other replicas: every 200 ms it writes this
/// replica's entries; every second it reads the others'; every minute it drops the rows of
/// ended sessions past the limit, and hourly it forgets expired entries.
struct RevocationService: Service {
    let list: RevocationList
    let keys: TokenKeys?
    let logger: Logger

    func run() async throws {
        var ticks = 0
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            // Each step on its own: a flush that keeps failing must not stop this replica from reading
            // what the others revoke.
            await step("could not write the revocation list") { try await list.flush() }
            if ticks % 5 == 0 { await step("could not read the other replicas' revocations") { try await list.refresh() } }
            if ticks % 18_000 == 0 {
                await step("could not purge the revocation list") { try await list.purge() }
            } else if ticks % 300 == 0 {
                await step("could not purge the revocation list") { try await list.purgeSessionsBeyondLimit() }
            }
            // Picks up keys rotated by another replica and rotates when a key is due.
            if ticks % 3_000 == 0, ticks > 0 { await step("could not refresh the signing keys") { try await keys?.refresh() } }
            ticks += 1
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .milliseconds(200)) }
        }
        try? await list.flush()
    }

    private func step(_ failure: Logger.Message, _ body: () async throws -> Void) async {
        do {
            try await body()
        } catch {
            logger.warning(failure, metadata: ["error": "\(error)"])
        }
    }
}

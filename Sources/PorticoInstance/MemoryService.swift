import Foundation
import ServiceLifecycle

/// Hands freed heap memory back to the system every second. glibc keeps what a burst of work
/// freed (session churn, a large result) in its arenas, so the resident size would stay at its
/// high-water mark; `malloc_trim` returns the free pages of every arena, at a cost of well under
/// a millisecond. Where there is no `malloc_trim` (not glibc), it does nothing.
struct MemoryService: Service {
    var interval: Duration = .seconds(1)

    /// glibc's `malloc_trim`, found at run time (its header is not part of the Glibc module).
    private static let trim: (@convention(c) (Int) -> Int32)? = {
        guard let symbol = dlsym(nil, "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
    }()

    func run() async throws {
        guard let trim = Self.trim else { return }
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            _ = trim(0)
        }
    }
}

/// How the process uses glibc's allocator.
public enum Allocator {
    /// At most two malloc arenas: each thread that allocates would otherwise get one (up to eight
    /// per core), each keeping its own freed memory. Call before the threads start.
    public static func limitArenas() {
        guard let symbol = dlsym(nil, "mallopt") else { return }
        let mallopt = unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
        _ = mallopt(-8, 2)  // M_ARENA_MAX
    }
}

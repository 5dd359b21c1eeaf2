import ArgumentParser
import Dispatch
import Foundation
import NIOCore
import NIOPosix
import PorticoInstance
import PorticoServer

/// CPUs this process may run on (`taskset`, cpusets), which NIO's default sizing ignores:
/// the bits of `Cpus_allowed` in /proc/self/status on Linux.
func usableProcessorCount() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed:") })
    else { return System.coreCount }
    let mask = line.dropFirst("Cpus_allowed:".count).filter { $0.isHexDigit }
    let count = mask.reduce(0) { $0 + (Int(String($1), radix: 16) ?? 0).nonzeroBitCount }
    return max(1, min(count, System.coreCount))
}

// Fewer malloc arenas keep less freed memory resident (see MemoryService).
Allocator.limitArenas()

// One event loop and one blocking thread per usable CPU: more only adds context switches.
let processors = usableProcessorCount()
NIOSingletons.groupLoopCountSuggestion = processors
NIOSingletons.blockingPoolThreadCountSuggestion = processors

// Run Swift Concurrency's jobs on NIO's event loops, so a request does not hop between NIO's
// threads and the concurrency pool (it must happen on the main thread, before any task runs).
switch ProcessInfo.processInfo.environment["PORTICO_EXECUTOR"] {
case "nio": NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
case "pool": break
default: _ = EventLoopExecutor.install()
}

/// Runs a command's asynchronous `run()` (on the existential, the synchronous one would be chosen).
func runAsync<Command: AsyncParsableCommand>(_ command: Command) async throws {
    var command = command
    try await command.run()
}

// Every command is asynchronous; run whichever one the arguments name (the root prints help).
// It runs as a detached task (top-level code is on the main actor) while the main thread waits:
// an `async` main would park the main thread in libdispatch's signal wait, which valgrind cannot
// run, and `make bench` counts a call's instructions under valgrind.
let finished = DispatchSemaphore(value: 0)
Task.detached {
    do {
        var command = try await Portico.asyncParseAsRoot()
        if let asyncCommand = command as? any AsyncParsableCommand {
            try await runAsync(asyncCommand)
        } else {
            try command.run()
        }
    } catch {
        Portico.exit(withError: error)
    }
    finished.signal()
}
finished.wait()

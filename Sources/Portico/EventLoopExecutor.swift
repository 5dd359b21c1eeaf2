internal import CTaskHook
import NIOCore
import NIOPosix

/// Runs Swift concurrency's global jobs on NIO's event loops, so a request never hops between
/// NIO's threads and the concurrency pool.
///
/// NIO offers this itself (`NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor`),
/// but it runs each job isolated to the event loop as a *serial* executor. Every nonisolated
/// `async` function then starts with a switch to the generic executor, which the runtime sees as
/// a different executor: the task is enqueued on the same event loop again, about seventy times
/// per MCP request. Here a job runs on the generic executor with the default task executor, as
/// the runtime's own global executor runs it, so those switches cost nothing.
enum EventLoopExecutor {
    private typealias EnqueueGlobalHook = @convention(thin) (UnownedJob, @convention(thin) (UnownedJob) -> Void) -> Void

    /// Installs the hook; call once, from the main thread, before any task runs. Returns whether it
    /// was installed (not when something else installed one first).
    static func install() -> Bool {
        let slot = UnsafeMutableRawPointer(portico_task_enqueue_global_hook()).assumingMemoryBound(to: EnqueueGlobalHook?.self)
        guard slot.pointee == nil else { return false }
        slot.pointee = { job, _ in
            // `any()` is the calling thread's own event loop when it is one of the group's.
            MultiThreadedEventLoopGroup.singleton.any().execute {
                job.runSynchronously(on: EventLoopExecutor.defaultTaskExecutor)
            }
        }
        return true
    }

    private static let defaultTaskExecutor = globalConcurrentExecutor.asUnownedTaskExecutor()
}

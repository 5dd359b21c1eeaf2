import Foundation
import Logging
import Metrics
import PorticoAuth
import PorticoBase
public import PorticoData
import PorticoJSON
import PorticoStore
import Synchronization

/// Where the endpoint keeps its tasks: `TaskRecords` (rows in the app's database, so any replica
/// answers for them) on a server, a dictionary in tests.
public protocol TaskStore: Sendable {
    func create(_ task: TaskRecords.Record) async throws
    func find(app: String, id: String) async throws -> TaskRecords.Record?
    /// Ends a task still working; returns whether this call ended it.
    func finish(app: String, id: String, status: TaskRecords.Status, message: String?, result: String?, error: String?, now: Int64) async throws -> Bool
    /// Notes that this replica still runs the task.
    func touch(app: String, id: String, now: Int64) async throws
}

extension TaskRecords: TaskStore {}

/// The MCP tasks extension (`io.modelcontextprotocol/tasks`): a long `tools/call` of a client
/// that declared it in the request's capabilities answers with a task, which `tasks/get` polls.
enum TaskExtension {
    static let id = "io.modelcontextprotocol/tasks"

    /// Whether a 2026-07-28 request's client capabilities declare the extension.
    static func isDeclared(in capabilities: JSONObject) -> Bool {
        capabilities["extensions"]?.objectValue?[id]?.objectValue != nil
    }

    /// What a client is told to wait between polls.
    static let pollIntervalMilliseconds: Int64 = 1000

    /// Whether a task still working was lost: its replica has not said it runs it for three of
    /// its `heartbeat`s (it stopped, or was killed, before the task ended).
    static func isLost(_ task: TaskRecords.Record, now: Int64, heartbeat: Duration) -> Bool {
        task.status == .working && now - task.aliveAt > 3 * heartbeat.milliseconds
    }

    /// `2026-11-28T17:04:05Z` for milliseconds since 1970.
    static func timestamp(_ milliseconds: Int64) -> String {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000).formatted(.iso8601)
    }

    /// The task as `tasks/get` answers it (a `DetailedTask`): its result or error once it has one.
    static func detailed(_ task: TaskRecords.Record) -> JSONObject {
        var object: JSONObject = [
            "taskId": .string(task.id), "status": .string(task.status.rawValue), "createdAt": .string(timestamp(task.createdAt)),
            "lastUpdatedAt": .string(timestamp(task.updatedAt)), "ttlMs": .int(task.expiresAt - task.createdAt),
            "pollIntervalMs": .int(pollIntervalMilliseconds),
        ]
        if let message = task.statusMessage { object["statusMessage"] = .string(message) }
        if task.status == .completed, let result = task.result.flatMap({ try? JSONParser.parse($0, maxDepth: 512) }) {
            object["result"] = result
        }
        if task.status == .failed {
            object["error"] =
                task.error.flatMap { try? JSONParser.parse($0, maxDepth: 64) } ?? RPCError.internalError(task.statusMessage ?? "the task failed").json
        }
        return object
    }
}

/// Set once a call has answered with a task: its client is no longer on the line, so the tool
/// cannot ask it anything (`CallContext.canElicit`).
final class TaskMark: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .relaxed) }
    func set() { value.store(true, ordering: .relaxed) }
}

/// Resumes a continuation once, whichever of its racers comes first.
private final class FirstOf<Value: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<Value, Never>?>
    init(_ continuation: CheckedContinuation<Value, Never>) { self.continuation = Mutex(continuation) }
    func resume(_ value: Value) {
        continuation.withLock { $0.take() }?.resume(returning: value)
    }
}

/// Counts of tasks by what became of them, for `/metrics`.
final class TaskMetrics: Sendable {
    let created = Counter(label: "portico_mcp_tasks_total", dimensions: [("state", "created")])
    let completed = Counter(label: "portico_mcp_tasks_total", dimensions: [("state", "completed")])
    let failed = Counter(label: "portico_mcp_tasks_total", dimensions: [("state", "failed")])
    let cancelled = Counter(label: "portico_mcp_tasks_total", dimensions: [("state", "cancelled")])
    let running = Atomic<Int>(0)
    /// Tasks running on this replica, by the credential that made them.
    private let byOwner = Mutex<[String: Int]>([:])

    /// Counts a task for `owner`, unless it has `limit` running here already.
    func start(_ owner: String, limit: Int) -> Bool {
        let started = byOwner.withLock { counts in
            guard counts[owner, default: 0] < limit else { return false }
            counts[owner, default: 0] += 1
            return true
        }
        if started { running.add(1, ordering: .relaxed) }
        return started
    }

    func stop(_ owner: String) {
        byOwner.withLock { counts in
            let left = counts[owner, default: 1] - 1
            counts[owner] = left > 0 ? left : nil
        }
        running.subtract(1, ordering: .relaxed)
    }

    func ended(_ status: TaskRecords.Status) {
        switch status {
        case .completed: completed.increment()
        case .failed: failed.increment()
        case .cancelled: cancelled.increment()
        case .working: break
        }
    }
}

extension MCPEndpoint {
    /// The call's result if it ends within `limit`; `nil` if it is still running then.
    static func result(of call: InflightCalls.CallTask, within limit: Duration) async -> Result<ToolResult, any Error>? {
        await withCheckedContinuation { continuation in
            let first = FirstOf<Result<ToolResult, any Error>?>(continuation)
            let timer = Task {
                // Cancelled: the call ended first and answered already.
                guard (try? await Task.sleep(for: limit)) != nil else { return }
                first.resume(nil)
            }
            Task {
                let result = await call.result
                first.resume(result)
                timer.cancel()
            }
        }
    }

    /// Whether this call may answer with a task: a tool that may run long, a client that declared
    /// the extension on this (2026-07-28) request, and somewhere to keep tasks.
    func mayBecomeTask(_ tool: Tool, _ exchange: Exchange) -> Bool {
        tool.mayBecomeTask && exchange.modern && configuration.tasks != nil && TaskExtension.isDeclared(in: exchange.clientCapabilities)
    }

    /// Makes the running call a task: stored before it is answered (so a `tasks/get` at any
    /// replica finds it), given the task's time instead of the request's, and finished in the
    /// background. `nil` when the task could not be stored: the call is then answered as usual.
    func becomeTask(_ call: InflightCalls.CallTask, token: UInt64, tool: Tool, context: CallContext, exchange: Exchange) async -> ToolResult? {
        guard let store = configuration.tasks else { return nil }
        let now = clock.milliseconds
        let task = TaskRecords.Record(
            id: Base64URL.encode(Secrets.randomBytes(18)), app: context.app, owner: context.principal.bindingKey, tool: tool.name,
            statusMessage: "\(tool.name) is running", createdAt: now, updatedAt: now,
            expiresAt: now + configuration.taskTTL.milliseconds, aliveAt: now)
        // A credential's tasks are bounded here: past the bound its calls hold their requests, as without tasks.
        guard taskMetrics.start(task.owner, limit: configuration.maxTasksPerCredential) else { return nil }
        do {
            try await store.create(task)
        } catch {
            taskMetrics.stop(task.owner)
            exchange.request.logger.warning("a task could not be stored; the call is answered when it ends", metadata: ["error": "\(error)"])
            return nil
        }
        context.taskMark?.set()
        inflight.retarget(token, key: Self.taskKey(app: task.app, id: task.id), deadline: .now + configuration.taskRunLimit)
        taskMetrics.created.increment()
        let logger = exchange.request.logger
        Task { await self.finishTask(task, call: call, token: token, tool: tool, store: store, logger: logger) }
        var result = ToolResult(content: [])
        var handle = TaskExtension.detailed(task)
        handle["resultType"] = "task"
        result.createdTask = handle
        return result
    }

    /// Waits for the call behind a task and stores how it ended; a task cancelled meanwhile
    /// stays cancelled.
    func finishTask(_ task: TaskRecords.Record, call: InflightCalls.CallTask, token: UInt64, tool: Tool, store: any TaskStore, logger: Logger) async {
        let (clock, heartbeat) = (clock, configuration.taskHeartbeat)
        let alive = Task {
            while !Task.isCancelled {
                try await Task.sleep(for: heartbeat)
                try? await store.touch(app: task.app, id: task.id, now: clock.milliseconds)
            }
        }
        let outcome = await call.result
        alive.cancel()
        let timedOut = inflight.remove(token)
        taskMetrics.stop(task.owner)
        var status = TaskRecords.Status.completed
        var message = "\(task.tool) answered with an error"
        var stored: String?
        var error: String?
        switch outcome {
        case .success(let result) where result.inputRequired != nil:
            message = "\(task.tool) needed an answer"
            stored = Self.serialized(
                .error("\(task.tool) needed an answer from you after it became a task, and a task cannot ask; call it again and say what you mean"))
        case .success(let result):
            if !result.isError { message = "\(task.tool) is done" }
            stored = Self.serialized(result)
        case .failure(is CancellationError) where timedOut:
            let limit = configuration.taskRunLimit.formatted(.units(allowed: [.minutes, .seconds], width: .abbreviated))
            message = "\(task.tool) ran past the \(limit) a task may run"
            stored = Self.serialized(.error("\(task.tool) ran past the \(limit) a task may run and was stopped; narrow it"))
        case .failure(is CancellationError):
            // Not by tasks/cancel (that ended the task already): the server is shutting down.
            status = .failed
            message = "\(task.tool) was stopped before it ended: the server shut down; call it again"
            error = RPCError.internalError(message).json.serializedString
        case .failure(let failure):
            switch tool.mapError?(failure) ?? failure {
            case let mapped as ToolError:
                stored = Self.serialized(.error(mapped.message))
            case let mapped as RPCError:
                status = .failed
                message = "\(task.tool) failed: \(mapped.message)"
                error = mapped.json.serializedString
            default:
                logger.error("tool failed", metadata: ["tool": "\(task.tool)", "error": "\(failure)"])
                stored = Self.serialized(.error("\(task.tool) failed: \(failure)"))
            }
        }
        if let bytes = stored?.utf8.count, bytes > configuration.maxTaskResultBytes {
            let limit = configuration.maxTaskResultBytes
            stored = Self.serialized(.error("\(task.tool)'s result was \(bytes) bytes, more than the \(limit) a task keeps; ask for fewer rows or columns"))
        }
        // The database may be away for a moment: the end is tried a few times before it is lost
        // (then the task is reported lost once its heartbeat is missed).
        for attempt in 1...3 {
            do {
                let now = clock.milliseconds
                if try await store.finish(app: task.app, id: task.id, status: status, message: message, result: stored, error: error, now: now) {
                    taskMetrics.ended(status)
                }
                return
            } catch {
                logger.error("a task's end could not be stored", metadata: ["task": "\(task.id)", "attempt": "\(attempt)", "error": "\(error)"])
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    /// A tool result as a task keeps it: the 2026-07-28 `CallToolResult`.
    static func serialized(_ result: ToolResult) -> String {
        var writer = JSONWriter(capacity: 1024)
        result.write(to: &writer, extra: ["resultType": "complete"])
        return writer.withBytes { String(decoding: $0, as: UTF8.self) }
    }

    static func taskKey(app: String, id: String) -> String { "task|" + app + "|" + id }

    // MARK: tasks/get, tasks/update, tasks/cancel

    /// The task a request names, if it is the caller's: another caller's task is as unknown as
    /// one that never was. A task whose replica stopped before it ended is reported failed.
    func namedTask(_ message: RequestMessage, exchange: Exchange) async throws(RPCError) -> (TaskRecords.Record, any TaskStore) {
        guard let store = configuration.tasks else { throw .methodNotFound(message.method) }
        guard let id = message.params?["taskId"]?.stringValue, !id.isEmpty, id.utf8.count <= 64 else {
            throw .invalidParams("'taskId' is required: the taskId of the task a tools/call answered with")
        }
        guard let principal = exchange.principal else { throw .unauthorized("Unauthorized operation: tasks need credentials") }
        let found: TaskRecords.Record?
        do {
            found = try await store.find(app: exchange.request.app, id: id)
        } catch {
            throw .unavailable("the task could not be read now; try again")
        }
        guard var task = found, task.owner == principal.bindingKey else {
            throw .invalidParams("Failed to retrieve task: Task not found")
        }
        let now = clock.milliseconds
        guard now < task.expiresAt else { throw .invalidParams("Failed to retrieve task: Task has expired") }
        // The caller is checked again: a role or a key's scopes may have changed since the call.
        if let tool = registry.toolsByName[task.tool]?.tool,
            !principal.isGranted(tool.requiredScope) || !ToolRegistry.roleAllows(tool.access, principal.role, policy: policy)
        {
            throw .invalidParams("Failed to retrieve task: you may no longer use \(task.tool), so its result is not shown")
        }
        if TaskExtension.isLost(task, now: now, heartbeat: configuration.taskHeartbeat) {
            let message = "\(task.tool) stopped without an end: the server running it stopped; call it again"
            let error = RPCError.internalError(message).json.serializedString
            if (try? await store.finish(app: task.app, id: task.id, status: .failed, message: message, result: nil, error: error, now: now)) == true {
                taskMetrics.ended(.failed)
            }
            task.status = .failed
            task.statusMessage = message
            task.error = error
            task.updatedAt = now
        }
        return (task, store)
    }

    func getTask(_ message: RequestMessage, exchange: Exchange) async throws(RPCError) -> JSONObject {
        TaskExtension.detailed(try await namedTask(message, exchange: exchange).0)
    }

    /// Portico's tasks never wait for input, so there is nothing outstanding to answer: the
    /// answers are acknowledged and ignored, as the extension says of keys not outstanding.
    func updateTask(_ message: RequestMessage, exchange: Exchange) async throws(RPCError) -> JSONObject {
        _ = try await namedTask(message, exchange: exchange)
        if let responses = message.params?["inputResponses"], responses.objectValue == nil {
            throw .invalidParams("'inputResponses' must be an object of answers by request key")
        }
        return [:]
    }

    /// Marks the task cancelled and stops its call, at this replica or the one running it (the
    /// statement in the database stops with it).
    func cancelTask(_ message: RequestMessage, exchange: Exchange) async throws(RPCError) -> JSONObject {
        let (task, store) = try await namedTask(message, exchange: exchange)
        guard task.status == .working else { return [:] }
        let now = clock.milliseconds
        let ended: Bool
        do {
            ended = try await store.finish(
                app: task.app, id: task.id, status: .cancelled, message: "Cancelled by the client", result: nil, error: nil, now: now)
        } catch {
            throw .unavailable("the task could not be cancelled now; try again")
        }
        if ended { taskMetrics.ended(.cancelled) }
        let key = Self.taskKey(app: task.app, id: task.id)
        if !inflight.cancel(key) { peerRelay.withLock { $0 }?(.cancel(key: key)) }
        return [:]
    }
}

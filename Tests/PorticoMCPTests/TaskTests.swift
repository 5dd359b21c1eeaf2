import Foundation
import HTTPTypes
import Logging
import PorticoAuth
import PorticoData
import PorticoJSON
import PorticoStore
import Synchronization
import Testing

@testable import PorticoMCP

/// Tasks kept in memory, for tests.
final class MemoryTasks: TaskStore {
    let rows = Mutex<[String: TaskRecords.Record]>([:])

    func create(_ task: TaskRecords.Record) async throws { rows.withLock { $0[task.app + "|" + task.id] = task } }
    func find(app: String, id: String) async throws -> TaskRecords.Record? { rows.withLock { $0[app + "|" + id] } }
    func finish(app: String, id: String, status: TaskRecords.Status, message: String?, result: String?, error: String?, now: Int64) async throws -> Bool {
        rows.withLock { rows in
            guard var task = rows[app + "|" + id], task.status == .working else { return false }
            (task.status, task.statusMessage, task.result, task.error, task.updatedAt) = (status, message, result, error, now)
            rows[app + "|" + id] = task
            return true
        }
    }
    func touch(app: String, id: String, now: Int64) async throws {
        rows.withLock { rows in
            if rows[app + "|" + id]?.status == .working { rows[app + "|" + id]?.aliveAt = now }
        }
    }
}

/// A long call of a client that declared the tasks extension answers with a task; `tasks/get`
/// polls it, `tasks/cancel` stops it, and nobody else sees it.
@Suite struct TaskTests {
    let tasks = MemoryTasks()
    let probe = Probe()

    func endpoint(maxResultBytes: Int = 1 << 20, maxTasks: Int = 16) -> MCPEndpoint {
        let probe = self.probe
        func waiting(_ name: String) -> Tool {
            Tool(
                name: name, description: "waits ms milliseconds", inputSchema: ["type": "object", "properties": ["ms": ["type": "integer"]]],
                annotations: .read, requiredScope: Scope(.read, .data), access: .data(.list)
            ) { arguments, context in
                do {
                    try await Task.sleep(for: .milliseconds(arguments["ms"]?.intValue ?? 0))
                } catch {
                    probe.cancelled.withLock { $0 = true }
                    throw error
                }
                if arguments["fail"] != nil { throw ToolError("the wait went wrong") }
                if arguments["big"] != nil { return .structured(["text": .string(String(repeating: "x", count: 4096))]) }
                return .structured(["waited": arguments["ms"] ?? 0, "couldAsk": .bool(context.canElicit)])
            }
        }
        let registry = ToolRegistry(
            packages: [ToolPackage(name: "data", summary: "", tools: [waiting("wait").runningLong(), waiting("quick")])], defaultPackages: ["data"])
        var configuration = MCPEndpoint.Configuration(
            identity: ServerIdentity(name: "t", title: "T", version: "1"), allowedOrigins: ["http://localhost"], instructions: { _ in "test" })
        configuration.tasks = tasks
        configuration.taskAfter = .milliseconds(100)
        configuration.maxTaskResultBytes = maxResultBytes
        configuration.maxTasksPerCredential = maxTasks
        return MCPEndpoint(configuration: configuration, registry: registry, signer: SessionSigner(secret: [1, 2, 3]), ledger: MemoryLedger())
    }

    static let owner = Principal(userID: 1, userName: "u", credential: .apiKey(id: "k"), scopes: nil, role: .member)
    static let stranger = Principal(userID: 2, userName: "v", credential: .apiKey(id: "other"), scopes: nil, role: .member)

    func send(
        _ endpoint: MCPEndpoint, _ method: String, _ params: JSONObject, declared: Bool = true, as principal: Principal = owner
    ) async throws -> JSON {
        var params = params
        let capabilities: JSON = declared ? ["extensions": ["io.modelcontextprotocol/tasks": [:]], "elicitation": [:]] : ["elicitation": [:]]
        params["_meta"] = ["io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": capabilities]
        var fields = HTTPFields()
        fields[.contentType] = "application/json"
        fields[.mcpProtocolVersion] = "2026-07-28"
        fields[.mcpMethod] = method
        if let name = params["name"]?.stringValue ?? params["taskId"]?.stringValue { fields[.mcpName] = name }
        let body: JSON = ["jsonrpc": "2.0", "id": 1, "method": .string(method), "params": .object(params)]
        let request = MCPHTTPRequest(
            method: .post, headers: fields, body: Array(body.serializedString.utf8), app: "main", packagesQuery: nil,
            resourceMetadataURL: "http://localhost/.well-known/oauth-protected-resource/api/mcp", auth: .authenticated(principal),
            logger: Logger(label: "test"))
        guard case .json(_, _, let bytes) = await endpoint.handle(request) else { throw EndpointTests.TestFailure("expected JSON") }
        return try JSONParser.parse(bytes)
    }

    func poll(_ endpoint: MCPEndpoint, _ id: String) async throws -> JSON {
        for _ in 0..<100 {
            let task = try await send(endpoint, "tasks/get", ["taskId": .string(id)])
            if task["result"]?["status"]?.stringValue != "working" { return task }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw EndpointTests.TestFailure("the task did not end")
    }

    @Test func aLongCallBecomesATaskPolledToItsResult() async throws {
        let endpoint = endpoint()
        let created = try await send(endpoint, "tools/call", ["name": "wait", "arguments": ["ms": 300]])["result"]
        #expect(created?["resultType"] == "task")
        #expect(created?["status"] == "working")
        #expect(created?["ttlMs"] == .int(3_600_000))
        let id = try #require(created?["taskId"]?.stringValue)
        #expect(id.count == 24)
        #expect(endpoint.tasksRunning == 1)

        let ended = try await poll(endpoint, id)["result"]
        #expect(ended?["resultType"] == "complete")
        #expect(ended?["status"] == "completed")
        #expect(ended?["result"]?["structuredContent"]?["waited"] == 300)
        // A task cannot ask: its client is no longer on the line.
        #expect(ended?["result"]?["structuredContent"]?["couldAsk"] == false)
        #expect(endpoint.tasksRunning == 0)
    }

    @Test func quickCallsAndClientsWithoutTheExtensionAreAnsweredAtOnce() async throws {
        let endpoint = endpoint()
        let quick = try await send(endpoint, "tools/call", ["name": "wait", "arguments": ["ms": 1]])["result"]
        #expect(quick?["resultType"] == "complete" && quick?["structuredContent"]?["waited"] == 1)
        let undeclared = try await send(endpoint, "tools/call", ["name": "wait", "arguments": ["ms": 300]], declared: false)["result"]
        #expect(undeclared?["resultType"] == "complete" && undeclared?["structuredContent"]?["couldAsk"] == true)
        let notLong = try await send(endpoint, "tools/call", ["name": "quick", "arguments": ["ms": 300]])["result"]
        #expect(notLong?["resultType"] == "complete", "a tool not declared long never becomes a task")
        #expect(tasks.rows.withLock { $0.isEmpty })
    }

    @Test func aToolErrorCompletesTheTaskAndAnOversizedResultIsReplaced() async throws {
        let endpoint = endpoint(maxResultBytes: 1000)
        let failing = try await send(endpoint, "tools/call", ["name": "wait", "arguments": ["ms": 200, "fail": true]])["result"]
        let failed = try await poll(endpoint, try #require(failing?["taskId"]?.stringValue))["result"]
        #expect(failed?["status"] == "completed" && failed?["result"]?["isError"] == true)
        #expect(failed?["result"]?["content"]?.arrayValue?.first?["text"] == "the wait went wrong")

        let big = try await send(endpoint, "tools/call", ["name": "wait", "arguments": ["ms": 200, "big": true]])["result"]
        let replaced = try await poll(endpoint, try #require(big?["taskId"]?.stringValue))["result"]
        let text = replaced?["result"]?["content"]?.arrayValue?.first?["text"]?.stringValue ?? ""
        #expect(replaced?["result"]?["isError"] == true && text.contains("more than the 1000 a task keeps"), "\(text)")
    }

    @Test func cancellingStopsTheCallAndTheTaskStaysCancelled() async throws {
        let endpoint = endpoint()
        let created = try await send(endpoint, "tools/call", ["name": "wait", "arguments": ["ms": 60_000]])["result"]
        let id = try #require(created?["taskId"]?.stringValue)
        let ack = try await send(endpoint, "tasks/cancel", ["taskId": .string(id)])["result"]
        #expect(ack?["resultType"] == "complete")
        let task = try await send(endpoint, "tasks/get", ["taskId": .string(id)])["result"]
        #expect(task?["status"] == "cancelled" && task?["result"] == nil)
        for _ in 0..<100 where !probe.cancelled.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
        #expect(probe.cancelled.withLock { $0 }, "the call was stopped")
        try await Task.sleep(for: .milliseconds(50))
        #expect(try await send(endpoint, "tasks/get", ["taskId": .string(id)])["result"]?["status"] == "cancelled")
    }

    @Test func anotherCallerAndAnUnknownIdFindNoTask() async throws {
        let endpoint = endpoint()
        let created = try await send(endpoint, "tools/call", ["name": "wait", "arguments": ["ms": 300]])["result"]
        let id = try #require(created?["taskId"]?.stringValue)
        for (principal, taskID) in [(Self.stranger, id), (Self.owner, "unknown")] {
            let refused = try await send(endpoint, "tasks/get", ["taskId": .string(taskID)], as: principal)["error"]
            #expect(refused?["code"] == .int(Int64(RPCError.invalidParamsCode)))
            #expect(refused?["message"]?.stringValue?.hasSuffix("Task not found") == true)
            #expect(try await send(endpoint, "tasks/cancel", ["taskId": .string(taskID)], as: principal)["error"] != nil)
        }
        #expect(try await poll(endpoint, id)["result"]?["status"] == "completed", "the stranger's cancel did nothing")
    }

    @Test func aCredentialsRunningTasksAreBounded() async throws {
        let endpoint = endpoint(maxTasks: 1)
        let first = try await send(endpoint, "tools/call", ["name": "wait", "arguments": ["ms": 1_200]])["result"]
        #expect(first?["resultType"] == "task")
        // Past the bound the call holds its request, as for a client without the extension.
        let second = try await send(endpoint, "tools/call", ["name": "wait", "arguments": ["ms": 300]])["result"]
        #expect(second?["resultType"] == "complete" && second?["structuredContent"]?["waited"] == 300)
        // Another credential has its own bound.
        let other = try await send(endpoint, "tools/call", ["name": "wait", "arguments": ["ms": 300]], as: Self.stranger)["result"]
        #expect(other?["resultType"] == "task")
        _ = try await poll(endpoint, try #require(first?["taskId"]?.stringValue))
        let after = try await send(endpoint, "tools/call", ["name": "wait", "arguments": ["ms": 300]])["result"]
        #expect(after?["resultType"] == "task", "a task that ended frees its place")
    }

    @Test func aTaskWhoseReplicaFellSilentIsReportedFailed() async throws {
        let endpoint = endpoint()
        let now = Int64(endpoint.clock.date.timeIntervalSince1970 * 1000)
        try await tasks.create(
            TaskRecords.Record(
                id: "lost", app: "main", owner: Self.owner.bindingKey, tool: "wait", createdAt: now - 120_000, updatedAt: now - 120_000,
                expiresAt: now + 3_600_000, aliveAt: now - 50_000))
        let task = try await send(endpoint, "tasks/get", ["taskId": "lost"])["result"]
        #expect(task?["status"] == "failed")
        #expect(task?["error"]?["code"] == .int(Int64(RPCError.internalErrorCode)))
        #expect(tasks.rows.withLock { $0["main|lost"]?.status } == .failed)
        let alive = TaskRecords.Record(
            id: "x", app: "main", owner: "o", tool: "wait", createdAt: 0, updatedAt: 0, expiresAt: 1, aliveAt: 100_000)
        #expect(!TaskExtension.isLost(alive, now: 144_000, heartbeat: .seconds(15)))
        #expect(TaskExtension.isLost(alive, now: 146_000, heartbeat: .seconds(15)))
    }
}

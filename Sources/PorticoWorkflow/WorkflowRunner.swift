import Foundation
import Logging
import Metrics
import PorticoAsk
import PorticoAskEngine
import PorticoAuth
import PorticoBase
import PorticoData
import PorticoJSON
import PorticoStore

/// The execution's replica lost it between two nodes: it was canceled, or its lease ran out and
/// another replica took it. The node's result is not recorded; whoever holds it now goes on.
struct LeaseLost: Error {}

/// Who a workflow runs as: its owner, with their role in the app now and the scopes of the
/// credential that saved it.
struct Owner: Sendable {
    let principal: Principal
    let access: RecordAccess
}

/// Where a walk through the nodes stands after a node.
enum Flow: Sendable {
    case next
    case ended(Execution.Status, String?)
    /// A delay let the execution go until it ends.
    case suspended
}

/// How a walk records its steps: an execution's jobs and lease, or nothing (a before-action
/// workflow, which runs inside the write it judges).
enum Mode: Sendable {
    case durable(execution: Execution, db: any Database)
    case inline
}

struct Walk: Sendable {
    let app: String
    let workflow: Workflow
    let owner: Owner
    let mode: Mode
    let started: ContinuousClock.Instant
    var variables: Variables
    /// The jobs already recorded (an execution that resumes after a delay or a restart).
    var done: [String: Job]
}

extension WorkflowEngine {
    func owner(of workflow: Workflow, app: String) async throws -> Owner {
        guard let id = workflow.ownerID else {
            throw WorkflowError("workflow \(workflow.id) has no owner to run as; save it again as a user (workflows_update)")
        }
        guard let role = try await users.role(app: app, userID: id) else {
            throw DataError(.forbidden, "the workflow's owner (user \(id)) has no role in app '\(app)' any more; an administrator should save it again")
        }
        let scopes = workflow.scopes.map { ScopeSet.parse($0).scopes }
        let principal = Principal(userID: id, userName: workflow.ownerName, credential: .apiKey(id: "workflow-" + workflow.key), scopes: scopes, role: role)
        return Owner(principal: principal, access: policy.recordAccess(role: role, app: app, caller: principal.caller))
    }

    /// The owner of `workflow`, read again only when stored state changed since (a change of a
    /// role or a membership moves the change signal): asked on every write a workflow hears.
    func cachedOwner(of workflow: Workflow, app: String) async throws -> Owner {
        let stamp = changes.stamp()
        if let known = owners[workflow.id], known.stamp == stamp { return known.owner }
        let owner = try await owner(of: workflow, app: app)
        owners.store(KnownOwner(owner: owner, stamp: stamp), for: workflow.id)
        return owner
    }

    /// The fields of a record of `collection` the owner may read (its `get` rule): `nil` for all.
    /// Throws when the owner may not read the collection at all.
    func readableFields(of collection: String, app: String, owner: Owner) async throws -> Set<String>? {
        switch owner.access.decision(collection, .get) {
        case .deny(let reason):
            throw DataError(.forbidden, "the workflow's owner may not read records of '\(collection)': \(reason)")
        case .allow(let rule):
            guard let fields = rule.fields else { return nil }
            let key = try await records.catalogs.catalog(app: app).collection(collection).primaryKey.map(\.name)
            return Set(fields).union(key)
        }
    }

    /// `context` with its `data` (and `values`) cut to the fields the owner may read, as an
    /// execution and a rule see them: they cannot copy out what the owner could not read.
    func ownersView(of context: JSON, app: String, owner: Owner) async throws -> JSON {
        guard let collection = context["collection"]?.stringValue, case .object(var narrowed) = context,
            let readable = try await readableFields(of: collection, app: app, owner: owner)
        else { return context }
        for member in ["data", "values"] {
            if case .object(let record)? = narrowed[member] { narrowed[member] = .object(record.filter { readable.contains($0.key) }) }
        }
        return .object(narrowed)
    }

    /// Runs a claimed execution from its last recorded node to its end or its next delay.
    func execute(_ execution: Execution, app: String) async {
        let clockStart = ContinuousClock.now
        var status: Execution.Status?
        var message: String?
        do {
            let database = try await store.databases.database(app: app)
            let workflow = try await store.get(app: app, id: execution.workflowID)
            let done = try await store.jobs(db: database, execution: execution.id)
            let owner = try await owner(of: workflow, app: app)
            // Queued with what its owner could read then; cut again, should the owner read less now.
            let context = try await ownersView(of: execution.context, app: app, owner: owner)
            var variables = Variables(context: context, now: clock.date)
            for job in done { variables.jobs[job.node] = job.result }
            var walk = Walk(
                app: app, workflow: workflow, owner: owner, mode: .durable(execution: execution, db: database),
                started: clockStart, variables: variables, done: Dictionary(done.map { ($0.node, $0) }, uniquingKeysWith: { a, _ in a }))
            switch try await run(workflow.definition.nodes, &walk) {
            case .next: status = .resolved
            case .ended(let s, let m): (status, message) = (s, m)
            case .suspended: return
            }
        } catch is LeaseLost {
            return
        } catch let error where Self.isStop(error) {
            return
        } catch {
            status = .failed
            message = Self.describe(error)
        }
        guard let status else { return }
        do {
            let database = try await store.databases.database(app: app)
            let error = message
            let finished = try await database.transaction { [store, replica] db in
                try await store.finish(db: db, execution: execution.id, owner: replica, status: status, error: error)
            }
            if finished {
                Counter(label: "portico_workflow_executions_total", dimensions: [("outcome", status.rawValue)]).increment()
                let elapsed = ContinuousClock.now - clockStart
                Metrics.Timer(label: "portico_workflow_execution_duration_seconds", preferredDisplayUnit: .seconds).recordNanoseconds(
                    elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)
            }
        } catch {
            logger.warning("could not record the end of a workflow execution", metadata: ["execution": "\(execution.id)", "error": "\(error)"])
        }
    }

    enum InlineOutcome { case passed, failed(String) }

    /// Runs a before-action workflow inside the write it judges: nothing recorded, and an `end`
    /// node with status failed (or a failing node) refuses the write.
    func runInline(_ workflow: Workflow, app: String, context: JSON, owner: Owner) async throws -> InlineOutcome {
        // The rule judges the fields its owner may read of what the writer may read; the write is the writer's.
        let judged = try await ownersView(of: context, app: app, owner: owner)
        var walk = Walk(
            app: app, workflow: workflow, owner: owner, mode: .inline, started: .now,
            variables: Variables(context: judged, now: clock.date), done: [:])
        switch try await run(workflow.definition.nodes, &walk) {
        case .ended(.failed, let message): return .failed(message ?? "the workflow ended with failure")
        default: return .passed
        }
    }

    func run(_ nodes: [WorkflowNode], _ walk: inout Walk) async throws -> Flow {
        for node in nodes {
            if let job = walk.done[node.key] {
                // Run before this execution was interrupted: its result stands, and is not made again.
                walk.variables.jobs[node.key] = job.result
                if job.status == "failed" { return .ended(.failed, "node '\(node.key)': \(job.result["error"]?.stringValue ?? "failed")") }
                switch node.type {
                case .condition:
                    let flow = try await run(job.result["result"]?.boolValue == true ? node.then : node.otherwise, &walk)
                    if case .next = flow { continue }
                    return flow
                case .end:
                    return .ended(job.result["status"]?.stringValue == "failed" ? .failed : .resolved, job.result["message"]?.stringValue)
                default:
                    continue
                }
            }
            guard ContinuousClock.now - walk.started < configuration.executionTimeLimit else {
                return .ended(.failed, "the execution ran past its time limit of \(configuration.executionTimeLimit) before node '\(node.key)'")
            }
            let flow = try await step(node, &walk)
            if case .next = flow { continue }
            return flow
        }
        return .next
    }

    /// Runs one node and records its job.
    func step(_ node: WorkflowNode, _ walk: inout Walk) async throws -> Flow {
        let began = ContinuousClock.now
        let result: JSON
        do {
            switch (node.action, walk.mode) {
            case (.delay(let seconds), .durable(let execution, let db)):
                let until = nowMilliseconds + Int64(seconds * 1000)
                let value: JSON = ["until": .int(until)]
                try await db.transaction { [store, replica] tx in
                    try await store.recordJob(db: tx, execution: execution.id, node: node, status: "resolved", result: value)
                    guard try await store.sleep(db: tx, execution: execution.id, owner: replica, until: until) else { throw LeaseLost() }
                }
                audit(node, walk, outcome: "ok", began: began)
                wake()
                return .suspended
            case (_, .durable(let execution, let db)) where node.type.writes:
                let variables = walk.variables
                let app = walk.app
                let owner = walk.owner
                let lease = leaseEnd()
                result = try await db.transaction { [store, replica] tx in
                    guard try await store.renew(db: tx, execution: execution.id, owner: replica, until: lease) else { throw LeaseLost() }
                    let value = try await WriteOrigin.$depth.withValue(execution.depth + 1) {
                        try await self.limited { try await self.perform(node, app: app, owner: owner, variables: variables) }
                    }
                    try await store.recordJob(db: tx, execution: execution.id, node: node, status: "resolved", result: value)
                    return value
                }
            default:
                let variables = walk.variables
                let app = walk.app
                let owner = walk.owner
                let value = try await limited { try await self.perform(node, app: app, owner: owner, variables: variables) }
                if case .durable(let execution, let db) = walk.mode {
                    let lease = leaseEnd()
                    try await db.transaction { [store, replica] tx in
                        guard try await store.renew(db: tx, execution: execution.id, owner: replica, until: lease) else { throw LeaseLost() }
                        try await store.recordJob(db: tx, execution: execution.id, node: node, status: "resolved", result: value)
                    }
                }
                result = value
            }
        } catch let lost as LeaseLost {
            throw lost
        } catch let error where Self.isStop(error) {
            // The process is shutting down: the node's result is not recorded, and the execution is
            // taken up again when its lease runs out (by this process after a restart, or another).
            throw error
        } catch {
            let message = Self.describe(error)
            if case .durable(let execution, let db) = walk.mode {
                let lease = leaseEnd()
                try await db.transaction { [store, replica] tx in
                    guard try await store.renew(db: tx, execution: execution.id, owner: replica, until: lease) else { throw LeaseLost() }
                    try await store.recordJob(db: tx, execution: execution.id, node: node, status: "failed", result: ["error": .string(message)])
                }
            }
            audit(node, walk, outcome: "tool_error", began: began)
            return .ended(.failed, "node '\(node.key)' (\(node.type.rawValue)): \(message)")
        }
        audit(node, walk, outcome: "ok", began: began)
        walk.variables.jobs[node.key] = result
        switch node.type {
        case .condition:
            return try await run(result["result"]?.boolValue == true ? node.then : node.otherwise, &walk)
        case .end:
            return .ended(result["status"]?.stringValue == "failed" ? .failed : .resolved, result["message"]?.stringValue)
        default:
            return .next
        }
    }

    /// `body` within the per-node time limit.
    func limited<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let limit = configuration.nodeTimeLimit
        return try await withThrowingTaskGroup(of: T.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: limit)
                throw WorkflowError("the node ran past its time limit of \(limit)")
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }

    func requireScope(_ owner: Owner, _ scope: Scope) throws {
        guard owner.principal.isGranted(scope) else {
            throw DataError(.forbidden, "the workflow was saved with a credential narrowed to scopes without \(scope.name), which this node needs")
        }
    }

    /// What one node does; its result is the job's.
    func perform(_ node: WorkflowNode, app: String, owner: Owner, variables: Variables) async throws -> JSON {
        /// The collection or datasource a node acts on, as written: a record's value never chooses it
        /// (checked when the workflow is saved; a workflow stored before that check fails here).
        func target(_ written: String, _ kind: String) throws -> String {
            guard !written.contains("{{") else {
                throw WorkflowError("\(kind) '\(written.prefix(80))' is a variable; a node names its \(kind) itself, so no record's value can choose it")
            }
            return written
        }
        /// A request for the records a node acts on, its filter's and keys' variables resolved.
        func request(_ records: NodeAction.RecordsNode, writing: Bool = false) throws -> RecordRequest {
            var request = RecordRequest(resource: try target(records.collection, "collection"))
            if writing { request.values = try variables.resolve(.object(records.values)).objectValue }
            if let filter = records.filter { request.filter = try variables.resolveFilter(filter) }
            if let key = records.filterByTk {
                // The keys a node's filterByTk names: a list written in the node, or one key from a variable.
                let resolved = try variables.operand(key)
                if case .string(let text) = key, text.contains("{{"), case .array = resolved {
                    throw WorkflowError(
                        "filterByTk '\(text.prefix(80))' holds a list; from a variable it names one record (write a list in the node for several)")
                }
                request.filterByTk = resolved
            }
            return request
        }
        switch node.action {
        case .condition(let filter):
            return ["result": .bool(try FilterMatcher(variables: variables).matches(filter))]
        case .calculation(let calculation):
            return try calculation.evaluate(variables)
        case .end(let failed, let message):
            var result: JSONObject = ["status": .string(failed ? "failed" : "resolved")]
            if let message { result["message"] = .string(Variables.text(try variables.resolve(message))) }
            return .object(result)
        case .query(let records, let sort, let limit):
            try requireScope(owner, Scope(.read, .data))
            var query = try request(records)
            query.sort = sort
            query.pageSize = limit
            let rows = try await self.records.list(app: app, query, access: owner.access)["data"]?.arrayValue ?? []
            return limit > 1 ? .array(rows) : (rows.first ?? .null)
        case .create(let records):
            try requireScope(owner, Scope(.write, .data))
            return try await self.records.create(app: app, try request(records, writing: true), access: owner.access)["data"] ?? .null
        case .update(let records):
            try requireScope(owner, Scope(.write, .data))
            return try await self.records.update(app: app, try request(records, writing: true), access: owner.access)["data"] ?? .array([])
        case .destroy(let records):
            try requireScope(owner, Scope(.write, .data))
            return ["count": try await self.records.destroy(app: app, try request(records), access: owner.access)["data"] ?? 0]
        case .sql(let datasource, let sql):
            try requireScope(owner, Scope(.read, .datasource))
            guard let asker else { throw WorkflowError("SQL nodes need the question service, which this process does not run") }
            let caller = try await policy.queryCaller(owner.principal, app: app, catalogs: asker.catalogs)
            // The SQL is run as written: values are never pasted into it.
            let answer = try await asker.datasources.query(
                app: app, datasource: try target(datasource, "datasource"), sql: sql, maxRows: 1000, caller: caller)
            return Self.rows(answer.columns, answer.rows, sql: answer.sql, truncated: answer.truncated)
        case .ask(let datasource, let question):
            try requireScope(owner, Scope(.read, .datasource))
            guard let asker else { throw WorkflowError("ask nodes need the question service, which this process does not run") }
            let caller = try await policy.queryCaller(owner.principal, app: app, catalogs: asker.catalogs)
            var request = AskRequest(
                app: app, userID: nil, question: Variables.text(try variables.resolve(question)), datasource: try target(datasource, "datasource"),
                drawImage: false, caller: caller)
            request.canPick = false
            let answer = try await asker.ask(request)
            var result = Self.rows(answer.columns, answer.rows, sql: answer.sql, truncated: answer.truncated).objectValue ?? [:]
            result["engine"] = .string(answer.engine)
            return .object(result)
        case .request(let spec):
            var headers: [String: String] = [:]
            for (name, value) in spec.headers {
                let text = Variables.text(try variables.resolve(try secrets.open(value)))
                // A value with a line break would start a header (or a body) of its own.
                guard !text.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) else {
                    throw WorkflowError("the header \(name) would hold a line break (from a variable's value); a header value is one line")
                }
                headers[name] = text
            }
            let body = try spec.body.map { body throws(WorkflowError) in try Self.body(body, variables: variables, headers: headers) }
            return try await requests.perform(method: spec.method, url: try variables.resolveURL(spec.url), headers: headers, body: body)
        case .delay(let seconds):
            return ["until": .int(nowMilliseconds + Int64(seconds * 1000))]
        }
    }

    /// A request node's body with its variables written in as values. A body given as JSON (an
    /// object or a list) keeps each variable a value of its own; a text body is plain text, where a
    /// form's values are percent-encoded so none can add a field. A text body that is JSON with
    /// variables inside its text is refused: a value with a quote in it could add members.
    static func body(_ body: JSON, variables: Variables, headers: [String: String]) throws(WorkflowError) -> JSON {
        guard case .string(let text) = body, text.contains("{{") else { return try variables.resolve(body) }
        let parts = try Template.parse(text)
        if parts.count == 1, case .variable = parts[0] { return try variables.resolve(body) }
        if let refusal = bodyTemplateRefusal(text) { throw WorkflowError(refusal) }
        let type = headers.first { $0.key.lowercased() == "content-type" }?.value.lowercased() ?? ""
        guard type.contains("x-www-form-urlencoded") else { return try variables.resolve(body) }
        return .string(try variables.interpolate(parts, encoding: Variables.percentEncoded))
    }

    /// Why a text body with variables cannot be sent as it is: JSON written as text. `nil` for
    /// other text (also checked when the workflow is saved).
    static func bodyTemplateRefusal(_ text: String) -> String? {
        guard text.contains("{{"), let parts = try? Template.parse(text), parts.count > 1 else { return nil }
        // JSON opens with an object's brace or a list's bracket; "{{" opens a variable.
        let opening = text.drop { $0.isWhitespace }
        guard opening.hasPrefix("[") || opening.hasPrefix("{") && !opening.hasPrefix("{{") else { return nil }
        return
            "the request body is JSON written as text with variables inside it; give the body as a JSON object (body: {\"name\": \"{{$context.data.name}}\"}) so each variable stays a value"
    }

    /// `{columns, rows: [{column: value}], rowCount, truncated, sql}`, rows keyed so variables can name them.
    static func rows(_ columns: [String], _ rows: [[SQLValue]], sql: String, truncated: Bool) -> JSON {
        let objects: [JSON] = rows.map { row in
            var object = JSONObject()
            for (index, column) in columns.enumerated() where index < row.count { object[column] = row[index].json }
            return .object(object)
        }
        return [
            "sql": .string(sql), "columns": JSON(columns), "rows": .array(objects), "rowCount": .int(Int64(rows.count)), "truncated": .bool(truncated),
        ]
    }

    /// The node in the audit trail, as a call by the workflow's owner.
    func audit(_ node: WorkflowNode, _ walk: Walk, outcome: String, began: ContinuousClock.Instant) {
        guard let audit else { return }
        let elapsed = ContinuousClock.now - began
        var label = "workflow \(walk.workflow.key) v\(walk.workflow.version)"
        if case .durable(let execution, _) = walk.mode { label += " execution \(execution.id)" }
        audit.record(
            ToolCall(
                at: nowMilliseconds, app: walk.app, userID: walk.owner.principal.userID, principal: walk.owner.principal.userName ?? "workflow",
                credential: "workflow:\(walk.workflow.key)", client: label, tool: "workflow.\(node.type.rawValue):\(node.key)",
                arguments: node.config, outcome: outcome, durationMilliseconds: elapsed.milliseconds))
    }

    /// Whether `error` is this process stopping (its task cancelled), not the workflow failing.
    static func isStop(_ error: any Error) -> Bool {
        if error is CancellationError { return Task.isCancelled }
        if let error = error as? StoreError, error.kind == .cancelled { return Task.isCancelled }
        return false
    }

    /// An error in words a workflow's author can act on.
    static func describe(_ error: any Error) -> String {
        switch error {
        case let e as WorkflowError: e.message
        case let e as DataError: e.message
        case let e as AskRefusal: e.message
        case let e as SQLGuardError: "the SQL was refused: \(e.message)"
        case let e as StoreError: e.guidance
        case let e as RequestNodeError: e.message
        case is CancellationError: "the execution was stopped"
        default: "\(error)"
        }
    }
}

import Foundation
import Metrics
import PorticoBase
public import PorticoData
public import PorticoJSON
public import PorticoStore

/// A saved version of a workflow.
public struct Workflow: Sendable {
    public let id: Int64
    public let key: String
    public let version: Int64
    public let current: Bool
    public let title: String
    public let enabled: Bool
    public let definition: WorkflowDefinition
    public let ownerID: Int64?
    public let ownerName: String?
    /// The scopes of the credential that saved it (space-separated), `nil` when it was not narrowed.
    public let scopes: String?
    public let createdAt: Int64
    public let updatedAt: Int64

    public var json: JSON {
        [
            "id": .int(id), "key": .string(key), "version": .int(version), "current": .bool(current), "title": .string(title), "enabled": .bool(enabled),
            "trigger": definition.json["trigger"] ?? .null, "nodes": HeaderSecrets.redacted(definition.json["nodes"] ?? .array([])),
            "owner": ["id": ownerID.map { .int($0) } ?? .null, "name": JSON(ownerName)], "createdAt": .int(createdAt), "updatedAt": .int(updatedAt),
        ]
    }

    init(row: Row) throws {
        id = row.int("id") ?? 0
        key = row.string("key") ?? ""
        version = row.int("version") ?? 1
        current = (row.int("current") ?? 0) != 0
        title = row.string("title") ?? ""
        enabled = (row.int("enabled") ?? 0) != 0
        let stored = try JSONParser.parse(row.string("definition") ?? "{}")
        definition = try WorkflowDefinition(stored: stored)
        ownerID = row.int("owner_id")
        ownerName = row.string("owner_name")
        scopes = row.string("scopes")
        createdAt = row.int("created_at") ?? 0
        updatedAt = row.int("updated_at") ?? 0
    }
}

/// One run of a workflow and its steps.
public struct Execution: Sendable {
    public enum Status: String, Sendable, CaseIterable {
        case queued, running, resolved, failed, canceled

        public var isFinal: Bool { self == .resolved || self == .failed || self == .canceled }
    }

    public let id: Int64
    public let workflowID: Int64
    public let workflowKey: String
    public let status: Status
    public let context: JSON
    public let depth: Int
    public let error: String?
    public let createdAt: Int64
    public let startedAt: Int64?
    public let finishedAt: Int64?
    public let leaseUntil: Int64
    /// Times it was taken up again after the replica that held it died.
    public let takeovers: Int

    init(row: Row) {
        id = row.int("id") ?? 0
        workflowID = row.int("workflow_id") ?? 0
        workflowKey = row.string("workflow_key") ?? ""
        status = Status(rawValue: row.string("status") ?? "") ?? .failed
        var context = (try? JSONParser.parse(row.string("context") ?? "{}")) ?? [:]
        // A create's statement stores its row as the database writes it, beside its field types, under
        // a key no context given by a caller can have (theirs is always under `data`).
        if case .object(var object) = context, let stored = object.removeValue(forKey: "$record") {
            object["data"] = RowMapping.record(stored: stored)
            context = .object(object)
        }
        self.context = context
        depth = Int(row.int("depth") ?? 0)
        error = row.string("error")
        createdAt = row.int("created_at") ?? 0
        startedAt = row.int("started_at")
        finishedAt = row.int("finished_at")
        leaseUntil = row.int("lease_until") ?? 0
        takeovers = Int(row.int("takeovers") ?? 0)
    }

    public func json(jobs: [Job]? = nil) -> JSON {
        var object: JSONObject = [
            "id": .int(id), "workflow": .int(workflowID), "workflowKey": .string(workflowKey), "status": .string(status.rawValue),
            "context": context, "createdAt": .int(createdAt), "startedAt": startedAt.map { .int($0) } ?? .null,
            "finishedAt": finishedAt.map { .int($0) } ?? .null,
        ]
        if let error { object["error"] = .string(error) }
        if status == .running, finishedAt == nil, leaseUntil > 0 { object["waitingUntil"] = .int(leaseUntil) }
        if takeovers > 0 { object["takeovers"] = .int(Int64(takeovers)) }
        if let jobs { object["jobs"] = .array(jobs.map(\.json)) }
        return .object(object)
    }
}

/// One node's run in an execution.
public struct Job: Sendable {
    public let node: String
    public let type: String
    public let status: String
    public let result: JSON
    public let createdAt: Int64

    init(row: Row) {
        node = row.string("node_key") ?? ""
        type = row.string("node_type") ?? ""
        status = row.string("status") ?? ""
        result = (try? JSONParser.parse(row.string("result") ?? "null")) ?? .null
        createdAt = row.int("created_at") ?? 0
    }

    public var json: JSON { ["node": .string(node), "type": .string(type), "status": .string(status), "result": result, "at": .int(createdAt)] }
}

/// The SQL of workflows, executions and jobs, in an app's database.
public struct WorkflowStore: Sendable {
    public let databases: AppDatabases
    let clock: WallClock

    public init(databases: AppDatabases, clock: WallClock) {
        self.databases = databases
        self.clock = clock
    }

    var now: Int64 { clock.milliseconds }

    func database(_ app: String) async throws -> any Database { try await databases.database(app: app) }

    // MARK: Workflows

    /// The current version of every workflow of the app.
    public func list(app: String) async throws -> [Workflow] {
        var q = SQLFragment("SELECT * FROM portico_workflows WHERE app = ")
        q.append(bind: .text(app))
        q.append(" AND current = 1 ORDER BY id")
        return try await database(app).query(q).map(Workflow.init(row:))
    }

    /// A version by id.
    public func get(app: String, id: Int64) async throws -> Workflow {
        guard let row = try await row(of: "portico_workflows", app: app, id: id) else {
            throw DataError.notFound("there is no workflow \(id) in app '\(app)'; workflows_list shows them")
        }
        return try Workflow(row: row)
    }

    func insert(
        db: any Database, app: String, key: String, version: Int64, title: String, enabled: Bool, definition: WorkflowDefinition, ownerID: Int64?,
        ownerName: String?, scopes: String?
    ) async throws -> Int64 {
        var q = SQLFragment(
            "INSERT INTO portico_workflows (app, key, version, current, title, enabled, trigger_type, definition, owner_id, owner_name, scopes, created_at, updated_at) VALUES ("
        )
        let now = self.now
        let values: [SQLValue] = [
            .text(app), .text(key), .int(version), .int(1), .text(title), .int(enabled ? 1 : 0), .text(definition.trigger.type),
            .text(definition.json.serializedString), ownerID.map { .int($0) } ?? .null, ownerName.map { .text($0) } ?? .null,
            scopes.map { .text($0) } ?? .null, .int(now), .int(now),
        ]
        q.append(joining: values.map { .bind($0) }, separator: ", ")
        q.append(") RETURNING id")
        guard let id = try await db.query(q).first?.int("id") else { throw DataError.invalid("the database did not return the new workflow") }
        return id
    }

    public func create(
        app: String, title: String, definition: WorkflowDefinition, enabled: Bool, ownerID: Int64?, ownerName: String?, scopes: String?
    ) async throws -> Workflow {
        let key = Secrets.random(12)
        let id = try await database(app).transaction { db in
            try await insert(
                db: db, app: app, key: key, version: 1, title: title, enabled: enabled, definition: definition, ownerID: ownerID, ownerName: ownerName,
                scopes: scopes)
        }
        return try await get(app: app, id: id)
    }

    /// What an update changes; `nil` leaves a part as it is.
    public struct Change: Sendable {
        public var title: String?
        public var definition: WorkflowDefinition?
        public var enabled: Bool?

        public init(title: String? = nil, definition: WorkflowDefinition? = nil, enabled: Bool? = nil) {
            self.title = title
            self.definition = definition
            self.enabled = enabled
        }
    }

    /// Applies `change` to the current version `id`. A new trigger or new nodes for a workflow
    /// that has executions make a new version (the old one keeps its executions and stops); the
    /// editor becomes the owner of what it saves.
    public func update(app: String, id: Int64, _ change: Change, ownerID: Int64?, ownerName: String?, scopes: String?) async throws -> Workflow {
        let existing = try await get(app: app, id: id)
        guard existing.current else {
            throw DataError.invalid(
                "workflow \(id) is version \(existing.version) of '\(existing.title)', not the current one; workflows_list shows the current id")
        }
        let newID: Int64 = try await database(app).transaction { db in
            let now = self.now
            if let definition = change.definition {
                var count = SQLFragment("SELECT COUNT(*) AS n FROM portico_executions WHERE workflow_id = ")
                count.append(bind: .int(id))
                if (try await db.query(count).first?.int("n") ?? 0) > 0 {
                    var retire = SQLFragment("UPDATE portico_workflows SET current = 0, enabled = 0, updated_at = ")
                    retire.append(bind: .int(now))
                    retire.append(" WHERE id = ")
                    retire.append(bind: .int(id))
                    try await db.execute(retire)
                    return try await insert(
                        db: db, app: app, key: existing.key, version: existing.version + 1, title: change.title ?? existing.title,
                        enabled: change.enabled ?? existing.enabled, definition: definition, ownerID: ownerID, ownerName: ownerName, scopes: scopes)
                }
            }
            var q = SQLFragment("UPDATE portico_workflows SET updated_at = ")
            q.append(bind: .int(now))
            if let title = change.title {
                q.append(", title = ")
                q.append(bind: .text(title))
            }
            if let enabled = change.enabled {
                q.append(", enabled = ")
                q.append(bind: .int(enabled ? 1 : 0))
            }
            if let definition = change.definition {
                q.append(", definition = ")
                q.append(bind: .text(definition.json.serializedString))
                q.append(", trigger_type = ")
                q.append(bind: .text(definition.trigger.type))
                q.append(", owner_id = ")
                q.append(bind: ownerID.map { .int($0) } ?? .null)
                q.append(", owner_name = ")
                q.append(bind: ownerName.map { .text($0) } ?? .null)
                q.append(", scopes = ")
                q.append(bind: scopes.map { .text($0) } ?? .null)
            }
            q.append(" WHERE id = ")
            q.append(bind: .int(id))
            try await db.execute(q)
            return id
        }
        return try await get(app: app, id: newID)
    }

    /// Removes every version of the workflow and its executions.
    public func destroy(app: String, id: Int64) async throws {
        let workflow = try await get(app: app, id: id)
        try await database(app).transaction { db in
            var jobs = SQLFragment("DELETE FROM portico_jobs WHERE execution_id IN (SELECT id FROM portico_executions WHERE workflow_key = ")
            jobs.append(bind: .text(workflow.key))
            jobs.append(")")
            try await db.execute(jobs)
            var ticks = SQLFragment("DELETE FROM portico_workflow_ticks WHERE workflow_id IN (SELECT id FROM portico_workflows WHERE key = ")
            ticks.append(bind: .text(workflow.key))
            ticks.append(")")
            try await db.execute(ticks)
            for table in ["portico_executions", "portico_workflows"] {
                var q = SQLFragment("DELETE FROM \(table) WHERE \(table == "portico_workflows" ? "key" : "workflow_key") = ")
                q.append(bind: .text(workflow.key))
                try await db.execute(q)
            }
        }
    }

    // MARK: Executions

    /// Queues an execution of `workflow` (in `db`, the caller's transaction when there is one).
    func enqueue(db: any Database, app: String, workflow: Workflow, context: JSON, depth: Int) async throws -> Int64 {
        var q = SQLFragment(
            "INSERT INTO portico_executions (app, workflow_id, workflow_key, status, context, depth, lease_until, created_at) VALUES (")
        let values: [SQLValue] = [
            .text(app), .int(workflow.id), .text(workflow.key), .text(Execution.Status.queued.rawValue), .text(context.serializedString),
            .int(Int64(depth)), .int(0), .int(now),
        ]
        q.append(joining: values.map { .bind($0) }, separator: ", ")
        q.append(") RETURNING id")
        guard let id = try await db.query(q).first?.int("id") else { throw DataError.invalid("the database did not return the new execution") }
        return id
    }

    /// The statement that queues an execution of `workflow` for the row a create's statement
    /// inserts (`RowMapping.writtenRow`), run as part of that statement; its context's record is
    /// `record`, which the database builds from the row (`RowMapping.storedRecord`).
    func enqueueWithRow(app: String, workflow: Workflow, action: String, collection: String, record: SQLFragment, depth: Int) -> SQLFragment {
        var q = SQLFragment(
            "INSERT INTO portico_executions (app, workflow_key, status, workflow_id, context, depth, lease_until, created_at) SELECT ")
        // Text binds are typed here: PostgreSQL does not take the column's type for them in a SELECT.
        for text in [app, workflow.key, Execution.Status.queued.rawValue] {
            q.append("CAST(")
            q.append(bind: .text(text))
            q.append(" AS TEXT), ")
        }
        q.append(bind: .int(workflow.id))
        q.append(", ")
        let context = "{\"action\":" + JSON.string(action).serializedString + ",\"collection\":" + JSON.string(collection).serializedString + ",\"$record\":"
        q.append("CAST(")
        q.append(bind: .text(context))
        q.append(" AS TEXT) || ")
        q.append(record)
        q.append(" || '}', ")
        q.append(joining: [SQLValue.int(Int64(depth)), .int(0), .int(now)].map { .bind($0) }, separator: ", ")
        q.append(" FROM \(RowMapping.writtenRow)")
        return q
    }

    public func executions(app: String, workflowKey: String?, status: Execution.Status?, limit: Int = 100) async throws -> [Execution] {
        var q = SQLFragment("SELECT * FROM portico_executions WHERE app = ")
        q.append(bind: .text(app))
        if let workflowKey {
            q.append(" AND workflow_key = ")
            q.append(bind: .text(workflowKey))
        }
        if let status {
            q.append(" AND status = ")
            q.append(bind: .text(status.rawValue))
        }
        q.append(" ORDER BY id DESC LIMIT ")
        q.append(bind: .int(Int64(limit)))
        return try await database(app).query(q).map(Execution.init(row:))
    }

    public func execution(app: String, id: Int64) async throws -> Execution {
        guard let row = try await row(of: "portico_executions", app: app, id: id) else {
            throw DataError.notFound("there is no execution \(id) in app '\(app)'; executions_list shows them")
        }
        return Execution(row: row)
    }

    /// The row `id` of the app's `table` (workflows or executions).
    func row(of table: String, app: String, id: Int64) async throws -> Row? {
        var q = SQLFragment("SELECT * FROM \(table) WHERE app = ")
        q.append(bind: .text(app))
        q.append(" AND id = ")
        q.append(bind: .int(id))
        return try await database(app).query(q).first
    }

    public func jobs(app: String, execution: Int64) async throws -> [Job] {
        try await jobs(db: database(app), execution: execution)
    }

    func jobs(db: any Database, execution: Int64) async throws -> [Job] {
        var q = SQLFragment("SELECT * FROM portico_jobs WHERE execution_id = ")
        q.append(bind: .int(execution))
        q.append(" ORDER BY id")
        return try await db.query(q).map(Job.init(row:))
    }

    /// Cancels a queued or running execution; the replica running it stops before its next node.
    public func cancel(app: String, id: Int64) async throws -> Execution {
        let execution = try await self.execution(app: app, id: id)
        guard !execution.status.isFinal else {
            throw DataError.invalid("execution \(id) has already ended (\(execution.status.rawValue)); only a queued or running one can be canceled")
        }
        var q = SQLFragment("UPDATE portico_executions SET status = 'canceled', lease_owner = NULL, finished_at = ")
        q.append(bind: .int(now))
        q.append(" WHERE id = ")
        q.append(bind: .int(id))
        q.append(" AND status IN ('queued', 'running') RETURNING id")
        // Counted by the cancel that changed it, should two race.
        if try await !database(app).query(q).isEmpty {
            Counter(label: "portico_workflow_executions_total", dimensions: [("outcome", "canceled")]).increment()
        }
        return try await self.execution(app: app, id: id)
    }

    /// How many executions of the app wait to run.
    func queued(app: String) async throws -> Int {
        Int(try await database(app).query("SELECT COUNT(*) AS n FROM portico_executions WHERE status = 'queued'").first?.int("n") ?? 0)
    }

    /// Whether some execution of the app can be taken now: read first, so an idle replica looks
    /// without taking the write lock (SQLite) or a row lock (PostgreSQL).
    func hasRunnable(app: String) async throws -> Bool {
        var q = SQLFragment("SELECT 1 AS runnable FROM portico_executions WHERE status IN ('queued', 'running') AND lease_until <= ")
        q.append(bind: .int(now))
        q.append(" LIMIT 1")
        return try await !database(app).query(q).isEmpty
    }

    /// Takes the oldest runnable execution (queued, or running with its lease run out: a replica
    /// died, or a delay ended) for `owner` until `until`; each is taken by one replica only.
    ///
    /// An execution whose lease ran out while a replica still held it (`lease_owner` set: the
    /// replica died, or hung, in one of its nodes) is taken over at most `maxTakeovers` times. Past
    /// that it fails with the reason instead of being taken again: a node that kills the process
    /// running it would otherwise kill every replica that takes it, after every restart.
    func claim(app: String, owner: String, until: Int64, maxTakeovers: Int) async throws -> Execution? {
        let db = try await database(app)
        let now = self.now
        var poisoned = SQLFragment("UPDATE portico_executions SET status = 'failed', lease_owner = NULL, finished_at = ")
        poisoned.append(bind: .int(now))
        poisoned.append(", error = ")
        poisoned.append(bind: .text(Self.takenOverTooOften(maxTakeovers)))
        poisoned.append(" WHERE status = 'running' AND lease_owner IS NOT NULL AND lease_until <= ")
        poisoned.append(bind: .int(now))
        poisoned.append(" AND takeovers >= ")
        poisoned.append(bind: .int(Int64(maxTakeovers)))
        poisoned.append(" RETURNING id")
        var q = SQLFragment("UPDATE portico_executions SET status = 'running', lease_owner = ")
        q.append(bind: .text(owner))
        // The SET sees the row as it was: a holder still named there died holding it.
        q.append(", takeovers = takeovers + CASE WHEN lease_owner IS NULL THEN 0 ELSE 1 END, lease_until = ")
        q.append(bind: .int(until))
        q.append(", started_at = COALESCE(started_at, ")
        q.append(bind: .int(now))
        q.append(") WHERE id = (SELECT id FROM portico_executions WHERE status IN ('queued', 'running') AND lease_until <= ")
        q.append(bind: .int(now))
        q.append(" ORDER BY id LIMIT 1")
        if db.flavor == .postgres { q.append(" FOR UPDATE SKIP LOCKED") }
        q.append(") AND status IN ('queued', 'running') RETURNING *")
        let claim = q
        let (failed, taken) = try await db.transaction { [poisoned] db in
            (try await db.query(poisoned).count, try await db.query(claim).first.map(Execution.init(row:)))
        }
        if failed > 0 { Counter(label: "portico_workflow_executions_total", dimensions: [("outcome", "failed")]).increment(by: failed) }
        return taken
    }

    /// Why an execution taken over too often was failed, in words an operator can act on.
    static func takenOverTooOften(_ times: Int) -> String {
        "the replica running this execution stopped without finishing a node, and so did each of the \(times) that took it over after it; "
            + "it is not taken up again without a person: executions_get shows the last node recorded, the node after it is the likely cause "
            + "(a request or query that outlives the replica, or a node that stops the process); correct the workflow and run it again"
    }

    /// Extends `owner`'s lease of the execution (in `db`); false when it is no longer theirs to
    /// run (canceled, or taken by another replica after the lease ran out).
    func renew(db: any Database, execution: Int64, owner: String, until: Int64) async throws -> Bool {
        var set = SQLFragment("lease_until = ")
        set.append(bind: .int(until))
        return try await updateHeld(db: db, execution: execution, owner: owner, set: set)
    }

    /// Lets go of every execution `owner` is running (it is stopping): any replica may take them now.
    /// A sleeping execution (a delay) is held by no one and keeps its wake time.
    func release(app: String, owner: String) async throws {
        var q = SQLFragment("UPDATE portico_executions SET lease_owner = NULL, lease_until = 0 WHERE status = 'running' AND lease_owner = ")
        q.append(bind: .text(owner))
        try await database(app).execute(q)
    }

    /// Lets the execution go until `wake` (a delay): no replica holds it, and any may take it then.
    func sleep(db: any Database, execution: Int64, owner: String, until wake: Int64) async throws -> Bool {
        var set = SQLFragment("lease_owner = NULL, lease_until = ")
        set.append(bind: .int(wake))
        return try await updateHeld(db: db, execution: execution, owner: owner, set: set)
    }

    func recordJob(db: any Database, execution: Int64, node: WorkflowNode, status: String, result: JSON) async throws {
        var q = SQLFragment("INSERT INTO portico_jobs (execution_id, node_key, node_type, status, result, created_at) VALUES (")
        let values: [SQLValue] = [.int(execution), .text(node.key), .text(node.type.rawValue), .text(status), .text(result.serializedString), .int(now)]
        q.append(joining: values.map { .bind($0) }, separator: ", ")
        q.append(")")
        try await db.execute(q)
    }

    /// Ends an execution `owner` holds with `status`.
    func finish(db: any Database, execution: Int64, owner: String, status: Execution.Status, error: String?) async throws -> Bool {
        var set = SQLFragment("status = ")
        set.append(bind: .text(status.rawValue))
        set.append(", error = ")
        set.append(bind: error.map { .text(String($0.prefix(2000))) } ?? .null)
        set.append(", lease_owner = NULL, finished_at = ")
        set.append(bind: .int(now))
        return try await updateHeld(db: db, execution: execution, owner: owner, set: set)
    }

    /// `UPDATE … SET set` of an execution `owner` holds and is running; false when it no longer holds it.
    func updateHeld(db: any Database, execution: Int64, owner: String, set: SQLFragment) async throws -> Bool {
        var q = SQLFragment("UPDATE portico_executions SET ")
        q.append(set)
        q.append(" WHERE id = ")
        q.append(bind: .int(execution))
        q.append(" AND lease_owner = ")
        q.append(bind: .text(owner))
        q.append(" AND status = 'running' RETURNING id")
        return try await !db.query(q).isEmpty
    }

    /// Claims a scheduled start: true for the one caller (of every replica) that inserted it.
    func claimTick(db: any Database, workflow: Int64, at: Int64, subject: String) async throws -> Bool {
        var q = SQLFragment("INSERT INTO portico_workflow_ticks (workflow_id, tick_at, subject) VALUES (")
        q.append(joining: [.bind(.int(workflow)), .bind(.int(at)), .bind(.text(subject))], separator: ", ")
        q.append(") ON CONFLICT DO NOTHING RETURNING workflow_id")
        return try await !db.query(q).isEmpty
    }
}

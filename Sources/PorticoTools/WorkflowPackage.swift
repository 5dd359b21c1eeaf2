import PorticoAuth
import PorticoData
import PorticoJSON
public import PorticoMCP
public import PorticoWorkflow

/// Package `workflow`: NocoBase's automation. An app's administrators build workflows (a trigger
/// and nodes), enable them, start them by hand and read their executions step by step. A workflow
/// runs as the user who saved it, with the scopes of the credential they saved it with.
public struct WorkflowPackage: Sendable {
    let service: WorkflowService

    public init(service: WorkflowService) {
        self.service = service
    }

    static let id = Param.int("id", "The workflow's id (workflows_list gives it)", minimum: 1).map { id -> Int64 in
        guard let id else { throw ToolError("id is required: the workflow's id from workflows_list") }
        return Int64(id)
    }
    static let executionID = Param.int("id", "The execution's id (executions_list gives it)", minimum: 1).map { id -> Int64 in
        guard let id else { throw ToolError("id is required: the execution's id from executions_list") }
        return Int64(id)
    }
    static let title = Param.string("title", "What the workflow does, e.g. \"Onboarding task when a deal is won\"")
    static let newTitle = Param.optionalString("title", "A new title")
    static let triggerSchema: JSON = [
        "type": "object",
        "description":
            "{type: \"collection\", collection, on: \"create\"|\"update\"|\"destroy\" or a list, changed?: [fields], condition?: filter} | {type: \"schedule\", cron: \"0 8 * * MON\", timezone?} | {type: \"schedule\", collection, field, offset?: \"-3d\"} | {type: \"manual\"} | {type: \"beforeAction\", collection, on}",
        "properties": [
            "type": ["type": "string", "enum": ["collection", "schedule", "manual", "beforeAction"]], "collection": ["type": "string"],
            "on": ["type": ["string", "array"]], "changed": ["type": "array", "items": ["type": "string"]], "condition": ["type": "object"],
            "cron": ["type": "string"], "timezone": ["type": "string"], "field": ["type": "string"], "offset": ["type": ["string", "integer"]],
        ],
        "required": ["type"],
    ]
    static let nodesSchema: JSON = [
        "type": "array",
        "description":
            "Nodes run in order, each {key, type, config}: condition {filter} with then/else lists, query {collection, filter?, sort?, limit?}, create {collection, values}, update {collection, filter, values}, destroy {collection, filter}, sql {datasource, sql}, ask {datasource, question}, calculation {expression}, request {method, url, headers?, body?}, delay {seconds}, end {status: resolved|failed, message?}. Values and filters may use {{$context.data.<field>}} and {{$jobsMapByNodeKey.<key>.<field>}}.",
        "items": [
            "type": "object",
            "properties": [
                "key": ["type": "string"],
                "type": ["type": "string", "enum": JSON(NodeType.allCases.map(\.rawValue))],
                "config": ["type": "object"], "then": ["type": "array"], "else": ["type": "array"],
            ],
            "required": ["key", "type"],
        ],
        "maxItems": 200,
    ]
    static let trigger = Param.json("trigger", schema: triggerSchema, required: true)
    static let nodes = Param.json("nodes", schema: nodesSchema, required: true)
    static let newTrigger = Param.json("trigger", schema: triggerSchema)
    static let newNodes = Param.json("nodes", schema: nodesSchema)
    static let enabled = Param.bool("enabled", "Whether it runs (default false on create: enable it once it looks right)")
    static let context = Param.jsonObject("context", "What the run gets as {{$context.data}}, e.g. {\"id\": 12}")
    static let workflowFilter = Param.int("workflow", "Only the executions of this workflow (any of its versions)", minimum: 1)
    static let status = Param.optionalString(
        "status", "Only executions with this status", values: Execution.Status.allCases.map(\.rawValue))

    static let workflowOutput: JSON = [
        "type": "object",
        "properties": [
            "id": ["type": "integer"], "key": ["type": "string"], "version": ["type": "integer"], "title": ["type": "string"],
            "enabled": ["type": "boolean"], "trigger": ["type": "object"], "nodes": ["type": "array"],
        ],
        "required": ["id", "key", "version", "title", "enabled", "trigger", "nodes"],
    ]
    static let executionOutput: JSON = [
        "type": "object",
        "properties": [
            "id": ["type": "integer"], "workflow": ["type": "integer"], "status": ["type": "string"],
            "jobs": [
                "type": "array",
                "items": [
                    "type": "object", "properties": ["node": ["type": "string"], "status": ["type": "string"]], "required": ["node", "status", "result"],
                ],
            ],
        ],
        "required": ["id", "workflow", "status"],
    ]
    static let changes = ToolAnnotations(readOnly: false, destructive: false, idempotent: false)

    public var package: ToolPackage {
        let service = self.service
        let list: JSON = ["type": "object", "properties": ["data": ["type": "array", "items": Self.workflowOutput]], "required": ["data"]]
        return ToolPackage.mapped(
            name: "workflow", summary: "Automations: workflows, their triggers and nodes, and their executions",
            tools: [
                Tool.admin(
                    .workflows, .workflow, "workflows_list", "The app's workflows (their current versions), with triggers and nodes.", [], output: list,
                    change: nil
                ) {
                    _, context in
                    .structured(["data": .array(try await service.store.list(app: context.app).map(\.json))])
                },
                Tool.admin(.workflows, .workflow, "workflows_get", "One workflow (any version) by id.", [Self.id], output: Self.workflowOutput, change: nil) {
                    input, context in
                    .structured(try await service.store.get(app: context.app, id: input[Self.id]).json)
                },
                Tool.admin(
                    .workflows, .workflow, "workflows_create",
                    "Create a workflow: a trigger and nodes run in order. It runs as you, with your role and this credential's scopes, and is checked against the app's collections before it is saved. Enable it with enabled: true.",
                    [Self.title, Self.trigger, Self.nodes, Self.enabled], output: Self.workflowOutput, change: Self.changes
                ) { input, context in
                    let workflow = try await service.create(
                        app: context.app, title: input[Self.title], trigger: input[Self.trigger] ?? .null, nodes: input[Self.nodes] ?? .null,
                        enabled: input[Self.enabled] ?? false, saver: .init(context.principal))
                    return .structured(workflow.json)
                },
                Tool.admin(
                    .workflows, .workflow, "workflows_update",
                    "Change a workflow: what is given replaces what was. New nodes or a new trigger for a workflow that has run make a new version (the returned id); its executions keep the version they ran.",
                    [Self.id, Self.newTitle, Self.newTrigger, Self.newNodes, Self.enabled], output: Self.workflowOutput, change: Self.changes
                ) { input, context in
                    let workflow = try await service.update(
                        app: context.app, id: input[Self.id], title: input[Self.newTitle], trigger: input[Self.newTrigger], nodes: input[Self.newNodes],
                        enabled: input[Self.enabled], saver: .init(context.principal))
                    return .structured(workflow.json)
                },
                Tool.destroying(
                    .workflows, .workflow, "workflows_destroy", "Remove a workflow, every version and its executions.", [Self.id],
                    output: ["type": "object", "properties": ["id": ["type": "integer"]], "required": ["id"]], idempotent: true,
                    loss: { input, _ in "This removes workflow \(try input[Self.id]), every version of it and all its executions." }
                ) { input, context in
                    let id = try input[Self.id]
                    try await service.destroy(app: context.app, id: id)
                    return .structured(["id": .int(id)])
                },
                Tool.admin(
                    .workflows, .workflow, "workflows_trigger",
                    "Start a run of a workflow now with context (its {{$context.data}}). Returns {execution: {id, status}}; executions_get shows its steps.",
                    [Self.id, Self.context],
                    output: ["type": "object", "properties": ["execution": Self.executionOutput], "required": ["execution"]], change: Self.changes
                ) { input, context in
                    let execution = try await service.trigger(
                        app: context.app, id: input[Self.id], context: (try input[Self.context]).map { .object($0) } ?? [:],
                        by: .init(context.principal))
                    return .structured([
                        "execution": ["id": .int(execution.id), "workflow": .int(execution.workflowID), "status": .string(execution.status.rawValue)]
                    ])
                }.runningLong(),
                Tool.admin(
                    .workflows, .workflow, "executions_list", "Recent executions (newest first, at most 100), optionally of one workflow or one status.",
                    [Self.workflowFilter, Self.status],
                    output: ["type": "object", "properties": ["data": ["type": "array", "items": Self.executionOutput]], "required": ["data"]], change: nil
                ) { input, context in
                    var key: String?
                    if let id = try input[Self.workflowFilter] { key = try await service.store.get(app: context.app, id: Int64(id)).key }
                    let status = try input[Self.status].flatMap(Execution.Status.init(rawValue:))
                    let executions = try await service.store.executions(app: context.app, workflowKey: key, status: status)
                    return .structured(["data": .array(executions.map { $0.json() })])
                },
                Tool.admin(
                    .workflows, .workflow, "executions_get", "One execution with each node's job: its status and result (or error).", [Self.executionID],
                    output: Self.executionOutput, change: nil
                ) { input, context in
                    .structured(try await service.execution(app: context.app, id: input[Self.executionID]))
                },
                Tool.admin(
                    .workflows, .workflow, "executions_cancel", "Cancel a queued or running execution; it stops before its next node.", [Self.executionID],
                    output: Self.executionOutput, change: ToolAnnotations(readOnly: false, destructive: true, idempotent: true)
                ) { input, context in
                    .structured(try await service.store.cancel(app: context.app, id: input[Self.executionID]).json())
                },
            ])
    }
}

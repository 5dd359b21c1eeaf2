import Foundation
public import PorticoAuth
public import PorticoData
public import PorticoJSON

/// The rules of managing workflows, shared by the `workflow` tools and the command line: a
/// definition is checked against the app's collections and the saving credential's scopes
/// before it is stored, the saver becomes the owner it runs as, and every replica hears of a change.
public struct WorkflowService: Sendable {
    public let engine: WorkflowEngine
    let catalogs: CatalogStore

    public init(engine: WorkflowEngine, catalogs: CatalogStore) {
        self.engine = engine
        self.catalogs = catalogs
    }

    public var store: WorkflowStore { engine.store }

    /// Who saves, changes or starts a workflow: the user it will run as (when saved) and the scopes
    /// of their credential.
    public struct Saver: Sendable {
        public var userID: Int64?
        public var userName: String?
        /// `nil` when the credential is not narrowed.
        public var scopes: ScopeSet?

        public init(userID: Int64?, userName: String?, scopes: ScopeSet?) {
            self.userID = userID
            self.userName = userName
            self.scopes = scopes
        }

        public init(_ principal: Principal) {
            self.init(userID: principal.userID, userName: principal.userName, scopes: principal.scopes)
        }
    }

    /// Reads and checks a definition: its shape, then the collections and fields it names, then
    /// that the saver's credential has the scopes its nodes need.
    public func definition(app: String, trigger: JSON, nodes: JSON, saver: Saver, previous: Workflow? = nil) async throws -> WorkflowDefinition {
        let definition: WorkflowDefinition
        do {
            let sealed = try engine.secrets.seal(nodes, previous: previous?.definition.json["nodes"])
            definition = try WorkflowDefinition(trigger: trigger, nodes: sealed)
        } catch let error as WorkflowError {
            throw DataError.invalid(error.message)
        }
        let catalog = try await catalogs.catalog(app: app)
        func collection(_ name: String, at path: String) throws -> CollectionSchema {
            guard let schema = catalog.collections[name] else {
                throw DataError.invalid("\(path) names collection '\(name)', which app '\(app)' does not have; collections_list shows them")
            }
            return schema
        }
        switch definition.trigger {
        case .collection(let name, _, let changed, _):
            let schema = try collection(name, at: "trigger.collection")
            for field in changed where schema.field(field) == nil {
                throw DataError.invalid("trigger.changed names '\(field)', which '\(name)' does not have")
            }
        case .beforeAction(let name, _):
            _ = try collection(name, at: "trigger.collection")
        case .dateField(let name, let field, _):
            guard try collection(name, at: "trigger.collection").field(field) != nil else {
                throw DataError.invalid("trigger.field names '\(field)', which '\(name)' does not have")
            }
        case .cron, .manual:
            break
        }
        try checkFields(of: definition, in: catalog)
        for node in definition.allNodes {
            switch node.action {
            case .query(let target, _, _), .create(let target), .update(let target), .destroy(let target):
                guard !target.collection.contains("{{") else {
                    throw DataError.invalid(
                        "node '\(node.key)' config.collection is a variable; name the collection itself, so no record's value can choose it")
                }
                let schema = try collection(target.collection, at: "node '\(node.key)' config.collection")
                if let filter = target.filter { try Self.checkFilterFields(filter, of: schema, at: "node '\(node.key)' config.filter") }
                for (name, value) in target.values {
                    guard let field = schema.field(name) else {
                        throw DataError.invalid("node '\(node.key)' sets '\(name)', which '\(schema.name)' does not have")
                    }
                    // A value written out (not a variable) must fit its field now, not when the node runs.
                    if !field.type.isRelation, !Self.hasVariable(value) {
                        _ = try ValueCoercion.coerce(value, to: field, at: "node '\(node.key)' values.\(name)")
                    }
                }
            case .sql(let name, _), .ask(let name, _):
                if name.contains("{{") {
                    throw DataError.invalid(
                        "node '\(node.key)' config.datasource is a variable; name the datasource itself, so no record's value can choose it")
                }
            case .request(let request):
                // Checked here, not with the definition's shape: a workflow stored before this
                // check still loads (its node fails when it runs, saying the same).
                if let text = request.body?.stringValue, let refusal = WorkflowEngine.bodyTemplateRefusal(text) {
                    throw DataError.invalid("node '\(node.key)': \(refusal)")
                }
            case .condition, .calculation, .delay, .end:
                break
            }
        }
        try Self.requireScopes(of: definition, granted: saver.scopes, to: "save")
        return definition
    }

    /// Refuses a credential that lacks a scope some node of `definition` needs. A workflow runs
    /// with the scopes it was saved with, so whoever saves, changes, enables or starts it must
    /// hold them too: a key narrowed to `read:workflow write:workflow` cannot set off the writes of
    /// a workflow a wider credential saved.
    static func requireScopes(of definition: WorkflowDefinition, granted: ScopeSet?, to verb: String) throws {
        guard let granted else { return }
        for node in definition.allNodes {
            guard let needed = scope(of: node.type), !granted.contains(needed) else { continue }
            throw DataError(
                .forbidden,
                "node '\(node.key)' (\(node.type.rawValue)) needs \(needed.name), which your credential was not granted; "
                    + "to \(verb) a workflow a credential needs every scope its nodes need (a workflow runs with its saver's scopes)")
        }
    }

    /// The fields variables name, where the collection is known when the workflow is saved: the
    /// triggering record's (`{{$context.data.<field>}}`) and a query's or create's record
    /// (`{{$jobsMapByNodeKey.<key>.<field>}}`).
    func checkFields(of definition: WorkflowDefinition, in catalog: Catalog) throws {
        var record: String?
        switch definition.trigger {
        case .collection(let name, _, _, _), .beforeAction(let name, _), .dateField(let name, _, _): record = name
        default: record = nil
        }
        var produces: [String: String] = [:]
        for node in definition.allNodes {
            switch node.action {
            case .query(let target, _, 1), .create(let target):
                if !target.collection.contains("{{") { produces[node.key] = target.collection }
            default:
                break
            }
        }
        func check(_ collection: String, _ field: String, _ variable: String, _ node: String) throws {
            guard let schema = catalog.collections[collection], schema.field(field) == nil else { return }
            throw DataError.invalid("node '\(node)' reads {{\(variable)}}, but '\(collection)' has no field '\(field)'")
        }
        for node in definition.allNodes {
            for name in try node.variables() {
                let path = try VariablePath(name)
                switch path.root {
                case .context where path.steps.count >= 2 && path.steps[0] == "data":
                    if let record { try check(record, path.steps[1], name, node.key) }
                case .job(let key) where !path.steps.isEmpty:
                    if let collection = produces[key] { try check(collection, path.steps[0], name, node.key) }
                default:
                    break
                }
            }
        }
    }

    /// The fields a node's filter names (the first step of a path such as `owner.name`), checked
    /// against its collection when the workflow is saved rather than when the node first runs.
    static func checkFilterFields(_ filter: JSON, of schema: CollectionSchema, at path: String) throws {
        guard case .object(let object) = filter else { return }
        for (key, value) in object {
            if key == "$and" || key == "$or" {
                for item in value.arrayValue ?? [] { try checkFilterFields(item, of: schema, at: path) }
                continue
            }
            guard !key.hasPrefix("$"), !key.contains("{{") else { continue }
            let first = String(key.split(separator: ".", maxSplits: 1).first ?? "")
            guard schema.field(first) != nil else {
                throw DataError.invalid(
                    "\(path) filters on '\(key)', but '\(schema.name)' has no field '\(first)'; its fields are: \(schema.fields.map(\.name).joined(separator: ", "))"
                )
            }
        }
    }

    static func hasVariable(_ value: JSON) -> Bool {
        switch value {
        case .string(let text): text.contains("{{")
        case .array(let items): items.contains(where: hasVariable)
        case .object(let object): object.values.contains(where: hasVariable)
        default: false
        }
    }

    static func scope(of type: NodeType) -> Scope? {
        switch type {
        case .query: Scope(.read, .data)
        case .create, .update, .destroy: Scope(.write, .data)
        case .sql, .ask: Scope(.read, .datasource)
        default: nil
        }
    }

    public func create(app: String, title: String, trigger: JSON, nodes: JSON, enabled: Bool, saver: Saver) async throws -> Workflow {
        guard saver.userID != nil else { throw DataError(.forbidden, "a workflow runs as the user who saves it; sign in as a user to save one") }
        let definition = try await definition(app: app, trigger: trigger, nodes: nodes, saver: saver)
        let workflow = try await store.create(
            app: app, title: title, definition: definition, enabled: enabled, ownerID: saver.userID, ownerName: saver.userName, scopes: saver.scopes?.text)
        engine.changed(app: app)
        return workflow
    }

    public func update(app: String, id: Int64, title: String?, trigger: JSON?, nodes: JSON?, enabled: Bool?, saver: Saver) async throws -> Workflow {
        let existing = try await store.get(app: app, id: id)
        if trigger == nil && nodes == nil { try Self.requireScopes(of: existing.definition, granted: saver.scopes, to: "change") }
        var change = WorkflowStore.Change(title: title, enabled: enabled)
        if trigger != nil || nodes != nil {
            guard saver.userID != nil else { throw DataError(.forbidden, "a workflow runs as the user who saves it; sign in as a user to change its nodes") }
            change.definition = try await definition(
                app: app, trigger: trigger ?? existing.definition.json["trigger"] ?? .null,
                nodes: nodes ?? HeaderSecrets.redacted(existing.definition.json["nodes"] ?? []), saver: saver, previous: existing)
        }
        let workflow: Workflow
        if change.definition != nil {
            workflow = try await store.update(app: app, id: id, change, ownerID: saver.userID, ownerName: saver.userName, scopes: saver.scopes?.text)
        } else {
            workflow = try await store.update(app: app, id: id, change, ownerID: existing.ownerID, ownerName: existing.ownerName, scopes: existing.scopes)
        }
        engine.changed(app: app)
        return workflow
    }

    public func destroy(app: String, id: Int64) async throws {
        try await store.destroy(app: app, id: id)
        engine.changed(app: app)
    }

    /// Starts a run of the workflow with `context` as `$context.data`, for `starter`, whose
    /// credential must hold the scopes the workflow's nodes need.
    public func trigger(app: String, id: Int64, context: JSON, by starter: Saver) async throws -> Execution {
        let workflow = try await store.get(app: app, id: id)
        try Self.requireScopes(of: workflow.definition, granted: starter.scopes, to: "start")
        return try await engine.trigger(app: app, workflow: workflow, context: context)
    }

    /// An execution with its jobs.
    public func execution(app: String, id: Int64) async throws -> JSON {
        let execution = try await store.execution(app: app, id: id)
        return execution.json(jobs: try await store.jobs(app: app, execution: id))
    }
}

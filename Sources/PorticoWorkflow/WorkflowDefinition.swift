import Foundation
public import PorticoData
public import PorticoJSON

/// What starts a workflow.
public enum Trigger: Sendable, Equatable {
    /// After records of `collection` are created, updated or destroyed; for updates only when one of
    /// `changed` was set (empty: any), and only when `condition` holds on the record.
    case collection(collection: String, on: [RecordAction], changed: [String], condition: JSON?)
    /// Every minute the cron expression names, in its time zone.
    case cron(Cron, expression: String, timezone: String?)
    /// When a date field of a record, moved by `offset` seconds, is reached ("3 days before dueDate").
    case dateField(collection: String, field: String, offset: Int64)
    /// Only when started by `workflows_trigger` (or `portico workflow run`).
    case manual
    /// Inside the write's transaction, before it is made: an `end` node with status failed refuses
    /// the write with its message.
    case beforeAction(collection: String, on: [RecordAction])

    public var type: String {
        switch self {
        case .collection: "collection"
        case .cron, .dateField: "schedule"
        case .manual: "manual"
        case .beforeAction: "beforeAction"
        }
    }
}

/// The kinds of node.
public enum NodeType: String, Sendable, CaseIterable {
    case condition, query, create, update, destroy, sql, ask, calculation, request, delay, end

    /// Nodes whose effect is a write of records: their job is recorded in the write's transaction.
    var writes: Bool { self == .create || self == .update || self == .destroy }
}

/// One step of a workflow.
public struct WorkflowNode: Sendable {
    public let key: String
    public let type: NodeType
    /// The configuration as written: what is stored and shown, and where variables are found.
    public let config: JSONObject
    /// What the node does, read from `config` once.
    let action: NodeAction
    /// A condition's branches.
    public let then: [WorkflowNode]
    public let otherwise: [WorkflowNode]
}

/// A workflow's trigger and nodes, read from what a caller sent and checked before it is saved:
/// every node's type and configuration, unique keys, at most `maxNodes`, variables that name
/// nodes which run before them, filters and expressions that parse.
public struct WorkflowDefinition: Sendable {
    public static let maxNodes = 200
    public static let maxDepth = 16

    public let trigger: Trigger
    public let nodes: [WorkflowNode]
    /// `{trigger, nodes}` as given (normalised), which is what is stored.
    public let json: JSON

    public init(trigger triggerJSON: JSON, nodes nodesJSON: JSON) throws(WorkflowError) {
        try self.init(trigger: triggerJSON, nodes: nodesJSON, stored: false)
    }

    /// `stored`: read from the database, where a rule added since it was saved must not make it
    /// unreadable (every write of the app asks for the workflows it starts); such a value is
    /// brought within the rule instead (an offset past ten years is ten years).
    init(trigger triggerJSON: JSON, nodes nodesJSON: JSON, stored: Bool) throws(WorkflowError) {
        trigger = try Self.trigger(triggerJSON, stored: stored)
        guard case .array(let items) = nodesJSON else { throw WorkflowError("nodes must be a list of {key, type, config}") }
        var keys: Set<String> = []
        var count = 0
        nodes = try Self.nodes(items, path: "nodes", keys: &keys, count: &count, depth: 0)
        guard count <= Self.maxNodes else { throw WorkflowError("a workflow has at most \(Self.maxNodes) nodes; this one has \(count)") }
        try Self.checkVariables(nodes, before: [], trigger: trigger)
        if case .beforeAction = trigger {
            let allowed: Set<NodeType> = [.condition, .calculation, .query, .end]
            try Self.walk(nodes) { node throws(WorkflowError) in
                guard allowed.contains(node.type) else {
                    throw WorkflowError(
                        "node '\(node.key)' is a \(node.type.rawValue) node; a beforeAction workflow runs inside the write and may only use condition, calculation, query and end nodes"
                    )
                }
            }
        }
        json = ["trigger": triggerJSON, "nodes": nodesJSON]
    }

    /// Reads a stored definition.
    public init(stored: JSON) throws(WorkflowError) {
        try self.init(trigger: stored["trigger"] ?? .null, nodes: stored["nodes"] ?? .array([]), stored: true)
    }

    static func actions(_ value: JSON?, path: String) throws(WorkflowError) -> [RecordAction] {
        let names: [String]
        switch value {
        case .string(let name)?: names = [name]
        case .array(let items)?: names = items.compactMap(\.stringValue)
        default: throw WorkflowError("\(path) is \"create\", \"update\", \"destroy\" or a list of them")
        }
        var actions: [RecordAction] = []
        for name in names {
            guard let action = RecordAction(rawValue: name), !action.isRead else {
                throw WorkflowError("\(path) has '\(name)'; it takes create, update and destroy")
            }
            actions.append(action)
        }
        guard !actions.isEmpty else { throw WorkflowError("\(path) names no action") }
        return actions
    }

    static func trigger(_ json: JSON, stored: Bool = false) throws(WorkflowError) -> Trigger {
        guard case .object(let t) = json, let type = t["type"]?.stringValue else {
            throw WorkflowError("trigger must be {type: \"collection\" | \"schedule\" | \"manual\" | \"beforeAction\", ...}")
        }
        func collection() throws(WorkflowError) -> String {
            guard let name = t["collection"]?.stringValue, !name.isEmpty else { throw WorkflowError("trigger.collection is required for a \(type) trigger") }
            return name
        }
        switch type {
        case "collection":
            let changed = t["changed"]?.arrayValue?.compactMap(\.stringValue) ?? []
            var condition: JSON?
            if let c = t["condition"], !c.isNull {
                try FilterMatcher.check(c, at: "trigger.condition")
                condition = c
            }
            return .collection(collection: try collection(), on: try actions(t["on"], path: "trigger.on"), changed: changed, condition: condition)
        case "schedule":
            if let cron = t["cron"]?.stringValue {
                let zone = t["timezone"]?.stringValue
                return .cron(try Cron(cron, timeZone: zone), expression: cron, timezone: zone)
            }
            guard let field = t["field"]?.stringValue else {
                throw WorkflowError("a schedule trigger takes {cron, timezone?} or {collection, field, offset?} (offset in seconds, or like \"-3d\", \"2h\")")
            }
            return .dateField(collection: try collection(), field: field, offset: try offset(t["offset"], clamping: stored))
        case "manual":
            return .manual
        case "beforeAction":
            return .beforeAction(collection: try collection(), on: try actions(t["on"], path: "trigger.on"))
        default:
            throw WorkflowError("unknown trigger type '\(type)'; use collection, schedule, manual or beforeAction")
        }
    }

    /// The furthest a date trigger's offset moves a date: ten years, either way.
    static let maxOffset: Int64 = 3650 * 86400

    /// Seconds from a number or text like `-3d`, `2h`, `30m`, `45s`, at most ten years either way:
    /// checked before anything is multiplied or converted, so no offset (1e300,
    /// "9223372036854775807d") can overflow.
    /// `clamping`: a stored offset past the bound is the bound, and one with a fraction is cut to
    /// whole seconds, as offsets were read before the bound.
    static func offset(_ value: JSON?, clamping: Bool = false) throws(WorkflowError) -> Int64 {
        do {
            return try offset(value)
        } catch {
            guard clamping else { throw error }
            switch value {
            case .double(let d)? where d.isFinite && abs(d) <= Double(maxOffset): return Int64(d)
            case .double(let d)? where d.isFinite: return d < 0 ? -maxOffset : maxOffset
            case .int(let i)?: return i < 0 ? -maxOffset : maxOffset
            case .string(let text)? where text.hasPrefix("-"): return -maxOffset
            default: return maxOffset
            }
        }
    }

    static func offset(_ value: JSON?) throws(WorkflowError) -> Int64 {
        let tooFar = WorkflowError("trigger.offset is at most ten years (\(maxOffset) seconds, or \"3650d\") either way")
        let seconds: Int64
        switch value {
        case nil, .null?: return 0
        case .int(let i)?: seconds = i
        case .double(let d)?:
            guard d.isFinite, d == d.rounded() else { throw WorkflowError("trigger.offset must be a whole number of seconds, or text like -3d") }
            guard abs(d) <= Double(maxOffset) else { throw tooFar }
            seconds = Int64(d)
        case .string(let text)?:
            let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604_800]
            if let last = text.last, let unit = units[last], let n = Int64(text.dropLast()) {
                let (product, overflow) = n.multipliedReportingOverflow(by: unit)
                guard !overflow else { throw tooFar }
                seconds = product
            } else if let n = Int64(text) {
                seconds = n
            } else {
                throw WorkflowError("trigger.offset '\(text.prefix(40))' is not a number of seconds or like -3d, 2h, 30m")
            }
        default:
            throw WorkflowError("trigger.offset must be a number of seconds or text like -3d")
        }
        guard seconds.magnitude <= maxOffset.magnitude else { throw tooFar }
        return seconds
    }

    static func nodes(_ items: [JSON], path: String, keys: inout Set<String>, count: inout Int, depth: Int) throws(WorkflowError) -> [WorkflowNode] {
        guard depth < maxDepth else { throw WorkflowError("\(path): conditions are nested more than \(maxDepth) deep") }
        var nodes: [WorkflowNode] = []
        for (index, item) in items.enumerated() {
            let at = "\(path)[\(index)]"
            count += 1
            guard count <= maxNodes else { throw WorkflowError("a workflow has at most \(maxNodes) nodes") }
            guard case .object(let object) = item else { throw WorkflowError("\(at) must be {key, type, config}") }
            guard let key = object["key"]?.stringValue, !key.isEmpty, key.count <= 64,
                key.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" })
            else {
                throw WorkflowError("\(at).key is required: letters, digits, - and _, at most 64 (it names the node's result in {{$jobsMapByNodeKey.<key>}})")
            }
            guard keys.insert(key).inserted else { throw WorkflowError("\(at).key '\(key)' is used by another node; keys are unique in a workflow") }
            guard let typeName = object["type"]?.stringValue, let type = NodeType(rawValue: typeName) else {
                throw WorkflowError("\(at).type must be one of \(NodeType.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            var config = object["config"]?.objectValue ?? [:]
            if let c = object["config"], !c.isNull, c.objectValue == nil { throw WorkflowError("\(at).config must be an object") }
            var then: [WorkflowNode] = []
            var otherwise: [WorkflowNode] = []
            if type == .condition {
                let thenJSON = object["then"] ?? config["then"]
                let elseJSON = object["else"] ?? config["else"]
                config["then"] = nil
                config["else"] = nil
                then = try Self.nodes(thenJSON?.arrayValue ?? [], path: "\(at).then", keys: &keys, count: &count, depth: depth + 1)
                otherwise = try Self.nodes(elseJSON?.arrayValue ?? [], path: "\(at).else", keys: &keys, count: &count, depth: depth + 1)
            }
            let action = try NodeAction.read(type, config, at: "\(at).config")
            nodes.append(WorkflowNode(key: key, type: type, config: config, action: action, then: then, otherwise: otherwise))
        }
        return nodes
    }

    static func walk(_ nodes: [WorkflowNode], _ body: (WorkflowNode) throws(WorkflowError) -> Void) throws(WorkflowError) {
        for node in nodes {
            try body(node)
            try walk(node.then, body)
            try walk(node.otherwise, body)
        }
    }

    /// Every variable names the context or a node that has run by then (before it, on its path).
    static func checkVariables(_ nodes: [WorkflowNode], before: Set<String>, trigger: Trigger) throws(WorkflowError) {
        var seen = before
        for node in nodes {
            let names = try node.variables()
            for name in names {
                let path = try VariablePath(name)
                if case .job(let key) = path.root, !seen.contains(key) {
                    throw WorkflowError(
                        "node '\(node.key)' reads {{\(name)}}, but no node '\(key)' runs before it; a node reads the results of nodes earlier on its path")
                }
            }
            try checkVariables(node.then, before: seen.union([node.key]), trigger: trigger)
            try checkVariables(node.otherwise, before: seen.union([node.key]), trigger: trigger)
            seen.insert(node.key)
        }
    }

    /// Every node, depth first.
    public var allNodes: [WorkflowNode] {
        var all: [WorkflowNode] = []
        try? Self.walk(nodes) { node in all.append(node) }
        return all
    }
}

extension WorkflowNode {
    /// The variables the node reads: in its configuration's values, and in a calculation's expression.
    func variables() throws(WorkflowError) -> [String] {
        var names = try Template.variables(in: .object(config))
        if case .calculation(let calculation) = action { names += calculation.variables }
        return names
    }
}

import PorticoJSON

/// What a node does, read once from its configuration when the definition is read (and so checked
/// before it is saved): the runner, the save-time checks and the scope rules read these values,
/// never the configuration's JSON by key. Values that may hold variables (`{{…}}`) stay JSON until
/// the node runs.
enum NodeAction: Sendable {
    case condition(filter: JSON)
    case query(RecordsNode, sort: [String]?, limit: Int)
    case create(RecordsNode)
    case update(RecordsNode)
    case destroy(RecordsNode)
    case sql(datasource: String, sql: String)
    case ask(datasource: String, question: JSON)
    case calculation(Calculation)
    case request(RequestSpec)
    case delay(seconds: Double)
    case end(failed: Bool, message: JSON?)

    /// A node over a collection's records: the collection it names itself, and for writes the
    /// values; for update and destroy which records (a filter or their keys).
    struct RecordsNode: Sendable {
        var collection: String
        var values: JSONObject = [:]
        var filter: JSON?
        var filterByTk: JSON?
    }

    /// A request node: method, URL, headers (sealed when stored, `HeaderSecrets`) and body.
    struct RequestSpec: Sendable {
        var method: String
        var url: String
        var headers: JSONObject
        var body: JSON?
    }

    /// The collection a records node acts on.
    var collection: String? {
        switch self {
        case .query(let node, _, _), .create(let node), .update(let node), .destroy(let node): node.collection
        default: nil
        }
    }

    /// The datasource an SQL or ask node reads.
    var datasource: String? {
        switch self {
        case .sql(let name, _), .ask(let name, _): name
        default: nil
        }
    }

    /// Reads and checks a node's configuration; every refusal names the setting and an example.
    static func read(_ type: NodeType, _ config: JSONObject, at path: String) throws(WorkflowError) -> NodeAction {
        func require(_ name: String, _ example: String) throws(WorkflowError) -> JSON {
            guard let value = config[name], !value.isNull else { throw WorkflowError("\(path).\(name) is required, e.g. \(example)") }
            return value
        }
        func text(_ name: String, _ example: String) throws(WorkflowError) -> String {
            guard case .string(let s) = try require(name, example), !s.isEmpty else {
                throw WorkflowError("\(path).\(name) must be text, e.g. \(example)")
            }
            return s
        }
        func values(_ example: String) throws(WorkflowError) -> JSONObject {
            guard let object = try require("values", example).objectValue else { throw WorkflowError("\(path).values must be an object of field values") }
            return object
        }
        func which(_ verb: String) throws(WorkflowError) -> (filter: JSON?, keys: JSON?) {
            let filter = config["filter"].flatMap { $0.isNull ? nil : $0 }
            let keys = config["filterByTk"].flatMap { $0.isNull ? nil : $0 }
            guard filter != nil || keys != nil else {
                throw WorkflowError("\(path).filter (or filterByTk) is required, so \(verb) by accident")
            }
            return (filter, keys)
        }
        switch type {
        case .condition:
            let filter = try require("filter", "{\"amount\": {\"$gt\": 1000}}")
            try FilterMatcher.check(filter, at: "\(path).filter")
            return .condition(filter: filter)
        case .query:
            var limit = 1
            if let value = config["limit"] {
                guard let n = value.intValue, (1...1000).contains(n) else { throw WorkflowError("\(path).limit must be a whole number from 1 to 1000") }
                limit = Int(n)
            }
            let sort = config["sort"].flatMap { $0.arrayValue?.compactMap(\.stringValue) ?? $0.stringValue.map { [$0] } }
            let filter = config["filter"].flatMap { $0.isNull ? nil : $0 }
            return .query(RecordsNode(collection: try text("collection", "\"Deal\""), filter: filter), sort: sort, limit: limit)
        case .create:
            let collection = try text("collection", "\"Task\"")
            return .create(RecordsNode(collection: collection, values: try values("{\"title\": \"Onboard {{$context.data.name}}\"}")))
        case .update:
            let collection = try text("collection", "\"Invoice\"")
            let values = try values("{\"status\": \"overdue\"}")
            let (filter, keys) = try which("an update cannot change every record")
            return .update(RecordsNode(collection: collection, values: values, filter: filter, filterByTk: keys))
        case .destroy:
            let collection = try text("collection", "\"Task\"")
            let (filter, keys) = try which("a destroy cannot remove every record")
            return .destroy(RecordsNode(collection: collection, filter: filter, filterByTk: keys))
        case .sql:
            return .sql(datasource: try text("datasource", "\"main\""), sql: try text("sql", "\"SELECT COUNT(*) AS n FROM Deal\""))
        case .ask:
            let datasource = try text("datasource", "\"main\"")
            _ = try text("question", "\"how many deals were won this month\"")
            return .ask(datasource: datasource, question: config["question"]!)
        case .calculation:
            return .calculation(try Calculation(try text("expression", "\"{{$context.data.amount}} * 0.2\"")))
        case .request:
            let url = try text("url", "\"https://hooks.example.com/deal\"")
            let method = (config["method"]?.stringValue ?? "POST").uppercased()
            guard ["GET", "POST", "PUT", "PATCH", "DELETE"].contains(method) else {
                throw WorkflowError("\(path).method must be GET, POST, PUT, PATCH or DELETE")
            }
            var headers: JSONObject = [:]
            if let value = config["headers"], !value.isNull {
                // A stored header's value is sealed: {"$sealed": "..."} (`HeaderSecrets`).
                guard let object = value.objectValue, object.values.allSatisfy({ $0.stringValue != nil || $0["$sealed"]?.stringValue != nil }) else {
                    throw WorkflowError("\(path).headers must be an object of text values")
                }
                headers = object
            }
            return .request(RequestSpec(method: method, url: url, headers: headers, body: config["body"]))
        case .delay:
            guard let seconds = try require("seconds", "3600").doubleValue, seconds >= 0, seconds <= 366 * 86400 else {
                throw WorkflowError("\(path).seconds must be a number from 0 to a year (31,622,400)")
            }
            return .delay(seconds: seconds)
        case .end:
            let status = config["status"]?.stringValue ?? "resolved"
            guard status == "resolved" || status == "failed" else { throw WorkflowError("\(path).status is \"resolved\" or \"failed\"") }
            return .end(failed: status == "failed", message: config["message"])
        }
    }
}

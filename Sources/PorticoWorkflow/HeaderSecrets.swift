public import PorticoBase
import PorticoJSON

/// The headers of request nodes hold secrets (API tokens), so they are stored sealed with the
/// master key and never shown again: a stored value is `{"$sealed": "..."}`, shown as `[sealed]`,
/// and a node saved again with `[sealed]` keeps the value its previous version had.
public struct HeaderSecrets: Sendable {
    let masterKey: MasterKey?
    static let purpose = "workflow request header"
    public static let shown = "[sealed]"

    public init(masterKey: MasterKey?) {
        self.masterKey = masterKey
    }

    /// `nodes` with every request node's header values sealed; `[sealed]` takes the value of the
    /// same node's same header in `previous`.
    func seal(_ nodes: JSON, previous: JSON?) throws -> JSON {
        var kept: [String: [String: JSON]] = [:]
        Self.walk(previous ?? []) { node in
            guard let key = node["key"]?.stringValue, let headers = node["config"]?["headers"]?.objectValue else { return }
            kept[key] = Dictionary(headers.map { ($0.key, $0.value) }, uniquingKeysWith: { a, _ in a })
        }
        return try Self.map(nodes) { node throws -> JSON in
            guard node["type"]?.stringValue == "request", var config = node["config"]?.objectValue, let headers = config["headers"]?.objectValue
            else { return node }
            var sealed = JSONObject()
            for (name, value) in headers {
                if value.stringValue == Self.shown {
                    guard let old = kept[node["key"]?.stringValue ?? ""]?[name], old["$sealed"] != nil else {
                        throw WorkflowError("header '\(name)' of node '\(node["key"]?.stringValue ?? "")' is [sealed] but has no earlier value; give its value")
                    }
                    sealed[name] = old
                } else if let text = value.stringValue {
                    guard let masterKey else { throw WorkflowError("request headers are sealed with the master key, which this process has not loaded") }
                    sealed[name] = ["$sealed": .string(try masterKey.seal(Array(text.utf8), purpose: Self.purpose))]
                } else {
                    sealed[name] = value
                }
            }
            config["headers"] = .object(sealed)
            var object = node.objectValue ?? [:]
            object["config"] = .object(config)
            return .object(object)
        }
    }

    /// A header's value to send.
    func open(_ value: JSON) throws -> JSON {
        guard let sealed = value["$sealed"]?.stringValue else { return value }
        guard let masterKey else { throw WorkflowError("request headers are sealed with the master key, which this process has not loaded") }
        return .string(String(decoding: try masterKey.open(sealed, purpose: Self.purpose), as: UTF8.self))
    }

    /// `nodes` as shown: sealed values as `[sealed]`.
    static func redacted(_ nodes: JSON) -> JSON {
        (try? map(nodes) { node -> JSON in
            guard var config = node["config"]?.objectValue, var headers = config["headers"]?.objectValue else { return node }
            for (name, value) in headers where value["$sealed"] != nil { headers[name] = .string(shown) }
            config["headers"] = .object(headers)
            var object = node.objectValue ?? [:]
            object["config"] = .object(config)
            return .object(object)
        }) ?? nodes
    }

    /// `nodes` with `transform` applied to every node, branches included.
    static func map(_ nodes: JSON, _ transform: (JSON) throws -> JSON) throws -> JSON {
        guard case .array(let items) = nodes else { return nodes }
        return .array(
            try items.map { item in
                var node = try transform(item)
                guard var object = node.objectValue else { return node }
                for branch in ["then", "else"] where object[branch] != nil { object[branch] = try map(object[branch]!, transform) }
                if var config = object["config"]?.objectValue {
                    for branch in ["then", "else"] where config[branch] != nil { config[branch] = try map(config[branch]!, transform) }
                    object["config"] = .object(config)
                }
                node = .object(object)
                return node
            })
    }

    static func walk(_ nodes: JSON, _ body: (JSON) -> Void) {
        _ = try? map(nodes) { node in
            body(node)
            return node
        }
    }
}

import Foundation
public import PorticoAuth
public import PorticoData
import PorticoJSON
public import PorticoMCP

/// Package `data`: NocoBase's generic CRUD tools over collections, with NocoBase's names and
/// arguments, and result shapes that add `structuredContent` and a size budget.
public struct DataPackage: Sendable {
    let records: RecordService
    let policy: AccessPolicy

    public init(records: RecordService, policy: AccessPolicy = AccessPolicy()) {
        self.records = records
        self.policy = policy
    }

    /// Short guidance for the model about one app: what it holds and how to use the data tools.
    public static func instructions(app: String, catalogs: CatalogStore) async -> String {
        let names = (try? await catalogs.catalog(app: app).names) ?? []
        var text = "Portico serves the data of app '\(app)'."
        if !names.isEmpty { text += " Collections: \(names.joined(separator: ", "))." }
        text +=
            " Read with resource_list/resource_get (NocoBase filters; appends adds relations), aggregate with resource_query, write with resource_create/update/destroy. Association resources like Album.tracks take sourceId."
        return text
    }

    public var package: ToolPackage {
        ToolPackage(
            name: "data", summary: "Records of collections: list, get, create, update, destroy, aggregate",
            tools: [
                tool(
                    "resource_list", Schemas.list, output: Schemas.listOutput, .read,
                    "List records of a collection, paginated (page, pageSize ≤ 500) and filtered. Returns {data, meta:{count,page,pageSize,totalPage}}.",
                    write: false
                ) { s, a, c in
                    try await s.records.list(app: c.app, try Arguments.record(a), access: s.access(c))
                },
                tool(
                    "resource_get", Schemas.get, output: Schemas.getOutput, .read,
                    "Get one record by primary key (filterByTk) or filter. Returns {data: record or null}.", write: false
                ) { s, a, c in
                    try await s.records.get(app: c.app, try Arguments.record(a), access: s.access(c))
                },
                tool(
                    "resource_create", Schemas.create, output: Schemas.createOutput, ToolAnnotations(readOnly: false),
                    "Create a record from values; belongsTo fields take the target's key. Returns {data: record}.", write: true
                ) { s, a, c in
                    try await s.records.create(app: c.app, try Arguments.record(a), access: s.access(c))
                },
                tool(
                    "resource_update", Schemas.update, output: Schemas.updateOutput, ToolAnnotations(readOnly: false, idempotent: true),
                    "Update the records matched by filterByTk or filter (one is required). Returns {data: [records]}.", write: true
                ) { s, a, c in
                    try await s.records.update(app: c.app, try Arguments.record(a), access: s.access(c))
                },
                tool(
                    "resource_destroy", Schemas.destroy, output: Schemas.destroyOutput, ToolAnnotations(readOnly: false, destructive: true, idempotent: true),
                    "Delete the records matched by filterByTk or filter (one is required). Returns {data: number deleted}.", write: true
                ) { s, a, c in
                    try await s.records.destroy(app: c.app, try Arguments.record(a), access: s.access(c))
                },
                tool(
                    "resource_query", Schemas.query, output: Schemas.queryOutput, .read,
                    "Aggregate a collection: measures (sum|count|avg|min|max, distinct), dimensions (date format like \"YYYY-MM\"), orders, filter, having, limit, offset. Returns {data: rows keyed by alias}.",
                    write: false
                ) { s, a, c in
                    try await s.records.query(app: c.app, try Arguments.aggregate(a), access: s.access(c))
                },
            ])
    }

    func tool(
        _ name: String, _ input: JSON, output: JSON, _ annotations: ToolAnnotations, _ description: String, write: Bool,
        _ run: @escaping @Sendable (DataPackage, JSONObject, CallContext) async throws -> JSON
    ) -> Tool {
        let package = self
        return Tool(
            name: name, description: description, inputSchema: input, outputSchema: output, annotations: annotations,
            requiredScope: Scope(write ? .write : .read, .data), access: .data(write: write)
        ) { arguments, context in
            do {
                context.progress("running \(name) on \(arguments["resource"]?.stringValue ?? "?")")
                let result = try await run(package, arguments, context)
                return .structured(result)
            } catch let error as DataError {
                switch error.kind {
                case .forbidden: throw ToolError("Permission denied: \(error.message)")
                default: throw ToolError(error.message)
                }
            } catch let error as StoreError where error.kind != .cancelled {
                throw ToolError(error.guidance)
            }
        }
    }

    /// The role check for each collection and action, from the caller's role in this app.
    func access(_ context: CallContext) -> RecordAccess {
        let role = context.principal.role
        let policy = self.policy
        let app = context.app
        return RecordAccess { collection, action in
            let dataAction = DataAction(rawValue: action.rawValue) ?? .list
            if policy.allows(role, dataAction, collection: collection) { return nil }
            return "role '\(role?.name ?? "none")' in app '\(app)' may not \(action.rawValue) records of '\(collection)'"
        }
    }
}

/// Reads validated tool arguments into record requests.
enum Arguments {
    static func strings(_ value: JSON?) -> [String]? {
        switch value {
        case .array(let items)?: return items.compactMap(\.stringValue)
        case .string(let s)?: return s.split(separator: ",").map { $0.trimmingSpaces() }
        default: return nil
        }
    }

    static func int(_ value: JSON?, _ name: String) throws -> Int? {
        try ToolArguments.int(value, name)
    }

    static func record(_ a: JSONObject) throws -> RecordRequest {
        guard let resource = a["resource"]?.stringValue else { throw ToolError("resource is required") }
        if let dataSource = a["dataSource"]?.stringValue, dataSource != "main" {
            throw ToolError("dataSource '\(dataSource)' is not available to the CRUD tools; they work on this app's collections (dataSource \"main\")")
        }
        var r = RecordRequest(resource: resource)
        r.sourceId = a["sourceId"]
        r.filterByTk = a["filterByTk"]
        r.filter = a["filter"]
        r.fields = strings(a["fields"])
        r.appends = strings(a["appends"])
        r.except = strings(a["except"])
        r.sort = strings(a["sort"])
        r.page = try int(a["page"], "page")
        r.pageSize = try int(a["pageSize"], "pageSize")
        r.paginate = a["paginate"]?.boolValue
        r.values = a["values"]?.objectValue
        r.whitelist = strings(a["whitelist"])
        r.blacklist = strings(a["blacklist"])
        return r
    }

    static func aggregate(_ a: JSONObject) throws -> AggregateRequest {
        guard let resource = a["resource"]?.stringValue else { throw ToolError("resource is required") }
        var r = AggregateRequest(resource: resource)
        r.measures = a["measures"]?.arrayValue ?? []
        r.dimensions = a["dimensions"]?.arrayValue ?? []
        r.orders = a["orders"]?.arrayValue ?? []
        r.filter = a["filter"]
        r.having = a["having"]
        r.limit = try int(a["limit"], "limit")
        r.offset = try int(a["offset"], "offset")
        return r
    }
}

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
        ToolPackage.mapped(
            name: "data", summary: "Records of collections: list, get, create, update, destroy, aggregate",
            tools: [
                tool(
                    "resource_list", Schemas.list, output: Schemas.listOutput, .read,
                    "List records of a collection, paginated (page, pageSize ≤ 500) and filtered. Returns {data, meta:{count,page,pageSize,totalPage}}.",
                    action: .list
                ) { s, a, c in
                    try await s.records.list(app: c.app, try Arguments.record(a), access: s.access(c))
                },
                tool(
                    "resource_get", Schemas.get, output: Schemas.getOutput, .read,
                    "Get one record by primary key (filterByTk) or filter. Returns {data: record or null}.", action: .get
                ) { s, a, c in
                    try await s.records.get(app: c.app, try Arguments.record(a), access: s.access(c))
                },
                tool(
                    "resource_create", Schemas.create, output: Schemas.createOutput, ToolAnnotations(readOnly: false),
                    "Create a record from values; belongsTo fields take the target's key. Returns {data: record}.", action: .create
                ) { s, a, c in
                    try await s.records.create(app: c.app, try Arguments.record(a), access: s.access(c))
                },
                tool(
                    "resource_update", Schemas.update, output: Schemas.updateOutput, ToolAnnotations(readOnly: false, idempotent: true),
                    "Update the records matched by filterByTk or filter (one is required). Returns {data: [records]}.", action: .update
                ) { s, a, c in
                    try await s.records.update(app: c.app, try Arguments.record(a), access: s.access(c))
                },
                tool(
                    "resource_destroy", Schemas.destroy, output: Schemas.destroyOutput, ToolAnnotations(readOnly: false, destructive: true, idempotent: true),
                    "Delete the records matched by filterByTk or filter (one is required). Returns {data: number deleted}.", action: .destroy
                ) { s, a, c in
                    try await s.records.destroy(app: c.app, try Arguments.record(a), access: s.access(c))
                },
                tool(
                    "resource_query", Schemas.query, output: Schemas.queryOutput, .read,
                    "Aggregate a collection: measures (sum|count|avg|min|max, distinct), dimensions (date format like \"YYYY-MM\"), orders, filter, having, limit, offset. Returns {data: rows keyed by alias}.",
                    action: .query
                ) { s, a, c in
                    try await s.records.query(app: c.app, try Arguments.aggregate(a), access: s.access(c))
                },
            ])
    }

    func tool(
        _ name: String, _ input: JSON, output: JSON, _ annotations: ToolAnnotations, _ description: String, action: RecordAction,
        _ run: @escaping @Sendable (DataPackage, JSONObject, CallContext) async throws -> JSON
    ) -> Tool {
        let package = self
        return Tool(
            name: name, description: description, inputSchema: input, outputSchema: output, annotations: annotations,
            requiredScope: Scope(action.isRead ? .read : .write, .data), access: .data(action)
        ) { arguments, context in
            context.progress("running \(name) on \(arguments["resource"]?.stringValue ?? "?")")
            return .structured(try await run(package, arguments, context))
        }
    }

    /// The caller's rights over this app's records, from their role in it.
    func access(_ context: CallContext) -> RecordAccess {
        let principal = context.principal
        return policy.recordAccess(role: principal.role, app: context.app, caller: principal.caller)
    }
}

/// Reads validated tool arguments into record requests.
enum Arguments {
    static func record(_ arguments: JSONObject) throws -> RecordRequest {
        let a = ToolArguments(arguments)
        if let dataSource = try a.optionalString("dataSource"), dataSource != "main" {
            throw ToolError("dataSource '\(dataSource)' is not available to the CRUD tools; they work on this app's collections (dataSource \"main\")")
        }
        var r = RecordRequest(resource: try a.string("resource"))
        r.sourceId = a["sourceId"]
        r.filterByTk = a["filterByTk"]
        r.filter = a["filter"]
        r.fields = try a.optionalStrings("fields")
        r.appends = try a.optionalStrings("appends")
        r.except = try a.optionalStrings("except")
        r.sort = try a.optionalStrings("sort")
        r.page = try a.optionalInt("page")
        r.pageSize = try a.optionalInt("pageSize")
        r.paginate = try a.optionalBool("paginate")
        r.values = try a.optionalObject("values")
        r.whitelist = try a.optionalStrings("whitelist")
        r.blacklist = try a.optionalStrings("blacklist")
        return r
    }

    static func aggregate(_ arguments: JSONObject) throws -> AggregateRequest {
        let a = ToolArguments(arguments)
        var r = AggregateRequest(resource: try a.string("resource"))
        r.measures = a["measures"]?.arrayValue ?? []
        r.dimensions = a["dimensions"]?.arrayValue ?? []
        r.orders = a["orders"]?.arrayValue ?? []
        r.filter = a["filter"]
        r.having = a["having"]
        r.limit = try a.optionalInt("limit")
        r.offset = try a.optionalInt("offset")
        return r
    }
}

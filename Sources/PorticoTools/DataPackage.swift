import Foundation
public import PorticoAuth
import PorticoBase
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
    /// Written once per version of the app's catalog (every `initialize` and `server/discover`
    /// sends it).
    public static func instructions(app: String, catalogs: CatalogStore) async -> String {
        guard let catalog = try? await catalogs.catalog(app: app) else { return instructions(app: app, names: []) }
        if let written = writtenInstructions[app], written.version == catalog.version { return written.text }
        let text = instructions(app: app, names: catalog.names)
        writtenInstructions.store((catalog.version, text), for: app)
        return text
    }

    /// The instructions written lately, by app, with the version of the catalog they name.
    static let writtenInstructions = BoundedCache<String, (version: UInt64, text: String)>(limit: 1024)

    static func instructions(app: String, names: [String]) -> String {
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
                    .list, "resource_list", .read,
                    "List records of a collection, paginated (page, pageSize ≤ 500) and filtered. Returns {data, meta:{count,page,pageSize,totalPage}}."
                ) { s, request, c in
                    .structured(serialized: try await s.records.listResult(app: c.app, request, access: s.access(c)).serialized)
                },
                tool(.get, "resource_get", .read, "Get one record by primary key (filterByTk) or filter. Returns {data: record or null}.") {
                    s, request, c in
                    .structured(serialized: try await s.records.getResult(app: c.app, request, access: s.access(c)).serialized)
                },
                tool(
                    .create, "resource_create", ToolAnnotations(readOnly: false),
                    "Create a record from values; belongsTo fields take the target's key. Returns {data: record}."
                ) { s, request, c in
                    .structured(try await s.records.create(app: c.app, request, access: s.access(c)))
                },
                tool(
                    .update, "resource_update", ToolAnnotations(readOnly: false, idempotent: true),
                    "Update the records matched by filterByTk or filter (one is required). Returns {data: [records]}."
                ) { s, request, c in
                    .structured(try await s.records.update(app: c.app, request, access: s.access(c)))
                },
                destroyTool,
                Tool(
                    "resource_query",
                    "Aggregate a collection: measures (sum|count|avg|min|max, distinct), dimensions (date format like \"YYYY-MM\"), orders, filter, having, limit, offset. Returns {data: rows keyed by alias}.",
                    parameters: DataParameters.declared(for: .query), closed: true, output: DataParameters.output(for: .query), annotations: .read,
                    scope: Scope(.read, .data), access: .data(.query)
                ) { [self] input, context in
                    let request = try DataParameters.aggregate(input)
                    context.progress("running resource_query on \(request.resource)")
                    return .structured(try await records.query(app: context.app, request, access: access(context)))
                }.runningLong(),
            ])
    }

    /// A record tool: its parameters and output are the action's, its arguments read into a request.
    func tool(
        _ action: RecordAction, _ name: String, _ annotations: ToolAnnotations, _ description: String,
        _ run: @escaping @Sendable (DataPackage, RecordRequest, CallContext) async throws -> ToolResult
    ) -> Tool {
        let package = self
        return Tool(
            name, description, parameters: DataParameters.declared(for: action), closed: true, output: DataParameters.output(for: action),
            annotations: annotations, scope: Scope(action.isRead ? .read : .write, .data), access: .data(action)
        ) { input, context in
            let request = try DataParameters.record(input, action)
            context.progress("running \(name) on \(request.resource)")
            return try await run(package, request, context)
        }
    }

    /// `resource_destroy`: it asks first, naming how many records of which collection it would delete.
    var destroyTool: Tool {
        var tool = Tool(
            "resource_destroy",
            "Delete the records matched by filterByTk or filter (one is required); the user is asked first. Returns {data: number deleted}.",
            parameters: DataParameters.declared(for: .destroy), closed: true, output: DataParameters.output(for: .destroy),
            annotations: ToolAnnotations(readOnly: false, destructive: true, idempotent: true), scope: Scope(.write, .data), access: .data(.destroy)
        ) { [self] input, context in
            let request = try DataParameters.record(input, .destroy)
            context.progress("running resource_destroy on \(request.resource)")
            let access = access(context)
            let confirmed = try input[Confirmation.parameter] == true
            let asked = try await Confirmation.ask(tool: "resource_destroy", confirmed: confirmed, context: context) {
                let count = try await records.destroyCount(app: context.app, request, access: access)
                return count == 0 ? nil : "This deletes \(Confirmation.count(count, "record")) of collection '\(request.resource)'."
            }
            if let asked { return asked }
            return .structured(try await records.destroy(app: context.app, request, access: access))
        }
        tool.asksBack = true
        return tool
    }

    /// The caller's rights over this app's records, from their role in it.
    func access(_ context: CallContext) -> RecordAccess {
        let principal = context.principal
        return policy.recordAccess(role: principal.role, app: context.app, caller: principal.caller)
    }
}

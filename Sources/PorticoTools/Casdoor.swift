import Foundation
import PorticoAuth
import PorticoJSON
import PorticoMCP

extension CallContext {
    /// Who asks, for the rules of accounts and memberships: the user behind the call, or the application without one.
    var requester: Requester { principal.userID.map(Requester.user) ?? .application }
}

/// Casdoor's shapes shared by the users, applications and apikeys packages: `owner` is the app
/// of the endpoint, `id` is `owner/name`, results are `{data}` and operations say what changed.
enum Casdoor {
    static func owner(_ owner: String?, _ context: CallContext) throws -> String {
        let owner = owner ?? context.app
        guard owner == context.app else {
            throw ToolError("owner '\(owner)' is not this endpoint's app '\(context.app)'; use the MCP endpoint of app '\(owner)' (/api/__app/\(owner)/mcp)")
        }
        return owner
    }

    static func id(_ id: String?, _ context: CallContext) throws -> (String, String) {
        guard let id, let slash = id.firstIndex(of: "/") else { throw ToolError("id must be owner/name, e.g. \(context.app)/my-app") }
        return (try owner(String(id[..<slash]), context), String(id[id.index(after: slash)...]))
    }

    static func result(_ data: JSON) -> ToolResult {
        ToolResult(content: [["type": "text", "text": .string(data.prettyString)]], structuredContent: ["data": data])
    }

    /// Casdoor's operation messages: "Successfully added application", "No changes were made to ...".
    static func operation(_ operation: String, affected: Bool, resource: String = "application") -> ToolResult {
        let past = ["add": "added", "update": "updated", "delete": "deleted"][operation] ?? operation + "d"
        let text = affected ? "Successfully \(past) \(resource)" : "No changes were made to \(resource) (may already exist or not found)"
        return ToolResult(
            content: [["type": "text", "text": .string(text)]], structuredContent: ["status": .string(affected ? "ok" : "unchanged"), "msg": .string(text)])
    }
}

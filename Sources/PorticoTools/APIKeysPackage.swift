import Foundation
public import PorticoAuth
import PorticoData
import PorticoJSON
public import PorticoMCP
import PorticoStore

/// Package `apikeys`: the caller's own API keys. A new key can have at most the caller's scopes.
public struct APIKeysPackage: Sendable {
    let keys: APIKeyStore

    public init(keys: APIKeyStore) {
        self.keys = keys
    }

    static let name = Param.optionalString("name", required: true).constrained(["minLength": 1, "maxLength": 60]).or("mcp")
    static let scopes = Param.strings("scopes", "e.g. [\"read:data\"]; omit for everything you may do")
    static let expiresInDays = Param.int("expiresInDays", minimum: 1, maximum: 3650)
    static let id = Param.optionalString("id", required: true).or("")

    public var package: ToolPackage {
        ToolPackage.mapped(
            name: "apikeys", summary: "Your API keys",
            tools: [
                Tool.admin(
                    .apikeys, .apikey, "api_keys_list", "List your API keys (never their secrets).", [],
                    output: ["type": "object", "properties": ["data": ["type": "array", "items": ["type": "object"]]], "required": ["data"]], change: nil
                ) { _, context in
                    let userID = try Self.owner(context)
                    let now = keys.clock.seconds
                    return Casdoor.result(
                        .array(
                            try await keys.list(userID: userID).map { key in
                                [
                                    // null with unrestricted: true is a key that may do whatever its user's role allows;
                                    // [] is a key that may do nothing.
                                    "id": .string(key.id), "name": .string(key.name), "scopes": key.scopes.map { JSON($0.granted) } ?? .null,
                                    "unrestricted": .bool(key.scopes == nil),
                                    "createdAt": .int(key.createdAt), "expiresAt": key.expiresAt.map { .int($0) } ?? .null,
                                    "status": .string(key.status(at: now)), "app": .string(key.app),
                                ]
                            }))
                },
                Tool.admin(
                    .apikeys, .apikey, "api_keys_create",
                    "Create an API key for yourself on this app's endpoint (other apps refuse it); scopes at most your own. The key is shown once.",
                    [Self.name, Self.scopes, Self.expiresInDays], closed: true,
                    change: ToolAnnotations(readOnly: false)
                ) { input, context in
                    let userID = try Self.owner(context)
                    var scopes: ScopeSet? = nil
                    if let requested = try input[Self.scopes] {
                        let (parsed, unknown) = ScopeSet.parse(requested.joined(separator: " "))
                        guard unknown.isEmpty else { throw ToolError("unknown scope(s): \(unknown.joined(separator: ", "))") }
                        scopes = parsed
                    }
                    let (key, token) = try await keys.create(
                        userID: userID, name: try input[Self.name], scopes: scopes, expiresIn: try input[Self.expiresInDays].map { Int64($0) * 86400 },
                        app: context.app, within: context.principal.scopes)
                    return ToolResult(
                        content: [["type": "text", "text": .string("Created API key \(key.id); it is shown once: \(token)")]],
                        structuredContent: [
                            "id": .string(key.id), "key": .string(token), "scopes": key.scopes.map { JSON($0.granted) } ?? .null,
                            "unrestricted": .bool(key.scopes == nil), "expiresAt": key.expiresAt.map { .int($0) } ?? .null, "app": .string(key.app),
                        ])
                },
                Tool.admin(
                    .apikeys, .apikey, "api_keys_revoke", "Revoke one of your API keys by id.", [Self.id], closed: true,
                    change: ToolAnnotations(readOnly: false, destructive: true, idempotent: true)
                ) { input, context in
                    let revoked = try await keys.revoke(id: try input[Self.id], userID: try Self.owner(context))
                    return Casdoor.operation("revoke", affected: revoked, resource: "API key")
                },
            ])
    }

    /// The user whose keys these are: the caller's.
    static func owner(_ context: CallContext) throws -> Int64 {
        guard let userID = context.principal.userID else { throw ToolError("API keys belong to users; this credential has none") }
        return userID
    }
}

import Foundation
public import PorticoAuth
import PorticoData
import PorticoJSON
public import PorticoMCP

/// Package `apikeys`: the caller's own API keys. A new key can have at most the caller's scopes.
public struct APIKeysPackage: Sendable {
    let keys: APIKeyStore

    public init(keys: APIKeyStore) {
        self.keys = keys
    }

    public var package: ToolPackage {
        ToolPackage.mapped(
            name: "apikeys", summary: "Your API keys",
            tools: [
                Tool(
                    name: "api_keys_list", description: "List your API keys (never their secrets).",
                    inputSchema: ["type": "object", "properties": [:]],
                    outputSchema: ["type": "object", "properties": ["data": ["type": "array", "items": ["type": "object"]]], "required": ["data"]],
                    annotations: .read, requiredScope: Scope(.read, .apikey), access: .admin(.apikeys, write: false)
                ) { _, context in
                    guard let userID = context.principal.userID else { throw ToolError("API keys belong to users; this credential has none") }
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
                Tool(
                    name: "api_keys_create",
                    description:
                        "Create an API key for yourself on this app's endpoint (other apps refuse it); scopes at most your own. The key is shown once.",
                    inputSchema: [
                        "type": "object",
                        "properties": [
                            "name": ["type": "string", "minLength": 1, "maxLength": 60],
                            "scopes": ["type": "array", "items": ["type": "string"], "description": "e.g. [\"read:data\"]; omit for everything you may do"],
                            "expiresInDays": ["type": "integer", "minimum": 1, "maximum": 3650],
                        ], "required": ["name"], "additionalProperties": false,
                    ],
                    outputSchema: ["type": "object"],
                    annotations: ToolAnnotations(readOnly: false), requiredScope: Scope(.write, .apikey), access: .admin(.apikeys, write: true)
                ) { arguments, context in
                    guard let userID = context.principal.userID else { throw ToolError("API keys belong to users; this credential has none") }
                    let requested = arguments["scopes"]?.arrayValue?.compactMap(\.stringValue)
                    var scopes: ScopeSet? = nil
                    if let requested {
                        let (parsed, unknown) = ScopeSet.parse(requested.joined(separator: " "))
                        guard unknown.isEmpty else { throw ToolError("unknown scope(s): \(unknown.joined(separator: ", "))") }
                        scopes = parsed
                    }
                    let days = arguments["expiresInDays"]?.intValue
                    let (key, token) = try await keys.create(
                        userID: userID, name: try ToolArguments(arguments).optionalString("name") ?? "mcp", scopes: scopes, expiresIn: days.map { $0 * 86400 },
                        app: context.app, within: context.principal.scopes)
                    return ToolResult(
                        content: [["type": "text", "text": .string("Created API key \(key.id); it is shown once: \(token)")]],
                        structuredContent: [
                            "id": .string(key.id), "key": .string(token), "scopes": key.scopes.map { JSON($0.granted) } ?? .null,
                            "unrestricted": .bool(key.scopes == nil), "expiresAt": key.expiresAt.map { .int($0) } ?? .null, "app": .string(key.app),
                        ])
                },
                Tool(
                    name: "api_keys_revoke", description: "Revoke one of your API keys by id.",
                    inputSchema: ["type": "object", "properties": ["id": ["type": "string"]], "required": ["id"], "additionalProperties": false],
                    outputSchema: ["type": "object"],
                    annotations: ToolAnnotations(readOnly: false, destructive: true, idempotent: true), requiredScope: Scope(.write, .apikey),
                    access: .admin(.apikeys, write: true)
                ) { arguments, context in
                    guard let userID = context.principal.userID else { throw ToolError("API keys belong to users; this credential has none") }
                    let revoked = try await keys.revoke(id: try ToolArguments(arguments).optionalString("id") ?? "", userID: userID)
                    return Casdoor.operation("revoke", affected: revoked, resource: "API key")
                },
            ])
    }
}

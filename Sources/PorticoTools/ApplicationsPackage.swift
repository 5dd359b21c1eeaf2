import Foundation
public import PorticoAuth
import PorticoBase
import PorticoData
import PorticoJSON
public import PorticoMCP

/// Package `applications`: Casdoor's application tools over Portico's OAuth clients, with
/// Casdoor's names, arguments (`owner`, `id` = `owner/name`, `application`) and result texts.
public struct ApplicationsPackage: Sendable {
    let server: AuthorizationServer
    /// Registered applications per app; -1 for no limit (Casdoor's `quota.application`).
    let quota: Int

    public init(server: AuthorizationServer, quota: Int) {
        self.server = server
        self.quota = quota
    }

    static let applicationDescription =
        "Casdoor application: owner, name, displayName, description, homepageUrl, logo, redirectUris, grantTypes (authorization_code, refresh_token, client_credentials), scopes (allowed scopes, e.g. [\"read:data\"]), ipWhitelist (comma-separated IPs or CIDRs), expireInHours."
    static let owner = Param.optionalString("owner", "The owner of applications (the app, e.g. main)", required: true)
    static let describedID = Param.optionalString("id", "owner/name, e.g. main/my-app", required: true)
    static let id = Param.optionalString("id", required: true)
    static let application = Param.object("application", applicationDescription, required: true)
    static let applicationName = Param.object(
        "application", schema: ["properties": ["owner": ["type": "string"], "name": ["type": "string"]], "required": ["name"]], required: true)

    public var package: ToolPackage {
        ToolPackage.mapped(
            name: "applications", summary: "OAuth applications (Casdoor's tools)",
            tools: [
                Tool.admin(
                    .applications, .application, "get_applications", "Get all applications for a specific owner (app).", [Self.owner],
                    output: ["type": "object", "properties": ["data": ["type": "array", "items": ["type": "object"]]], "required": ["data"]], change: nil
                ) { input, context in
                    let owner = try Casdoor.owner(try input[Self.owner], context)
                    let apps = try await server.clients.list(owner: owner).filter { $0.kind == .registered }
                    return Casdoor.result(.array(apps.map { Self.json($0, secret: nil) }))
                },
                Tool.admin(
                    .applications, .application, "get_application", "Get details of a specific application by id (owner/name).", [Self.describedID],
                    output: ["type": "object", "properties": ["data": ["type": ["object", "null"]]], "required": ["data"]], change: nil
                ) { input, context in
                    let (owner, name) = try Casdoor.id(try input[Self.describedID], context)
                    let app = try await server.clients.find(owner: owner, name: name)
                    return Casdoor.result(app.map { Self.json($0, secret: nil) } ?? .null)
                },
                Tool.admin(
                    .applications, .application, "add_application", "Create a new application; the result shows its clientSecret once.", [Self.application],
                    change: ToolAnnotations(readOnly: false)
                ) { input, context in
                    try await add(try input[Self.application], context)
                },
                Tool.admin(
                    .applications, .application, "update_application", "Modify an existing application (id = owner/name).", [Self.id, Self.application],
                    change: ToolAnnotations(readOnly: false, idempotent: true)
                ) { input, context in
                    try await update(id: try input[Self.id], try input[Self.application], context)
                },
                Tool.admin(
                    .applications, .application, "delete_application", "Remove an application (by owner and name); tokens issued to it stop working.",
                    [Self.applicationName],
                    change: ToolAnnotations(readOnly: false, destructive: true, idempotent: true)
                ) { input, context in
                    let application = try input[Self.applicationName]
                    let owner = try Casdoor.owner(try application.optionalString("owner"), context)
                    guard let name = try application.optionalString("name"), let client = try await server.clients.find(owner: owner, name: name) else {
                        return Casdoor.operation("delete", affected: false)
                    }
                    try await server.deleteClient(clientID: client.clientID)
                    return Casdoor.operation("delete", affected: true)
                },
            ])
    }

    func add(_ application: ToolArguments, _ context: CallContext) async throws -> ToolResult {
        let owner = try Casdoor.owner(try application.optionalString("owner") ?? application.optionalString("organization"), context)
        guard let name = try application.optionalString("name") else {
            throw ToolError("application.name is required: 1 to 100 letters, digits, '.', '_' or '-'")
        }
        var draft = OAuthClient(
            clientID: "", owner: owner, name: name, displayName: name, secretHash: nil, redirectURIs: [], grantTypes: ["authorization_code", "refresh_token"],
            allowedScopes: nil, ipAllowlist: [], authMethod: "client_secret_basic", kind: .registered, createdBy: context.principal.userID, createdAt: 0,
            details: [:])
        try Self.apply(application, to: &draft)
        let (client, secret) = try await Self.casdoorErrors { try await server.createClient(draft, quota: quota) }
        let text = "Successfully added application"
        let created = Self.json(client, secret: secret)
        return ToolResult(
            content: [["type": "text", "text": .string(text + "\n" + created.serializedString)]],
            structuredContent: ["status": "ok", "msg": .string(text), "data": created])
    }

    func update(id: String?, _ application: ToolArguments, _ context: CallContext) async throws -> ToolResult {
        let (owner, name) = try Casdoor.id(id, context)
        guard var client = try await server.clients.find(owner: owner, name: name), client.kind == .registered else {
            return Casdoor.operation("update", affected: false)
        }
        let before = client
        if let newName = try application.optionalString("name"), newName != client.name {
            client.name = newName  // its rules (the characters, unique in the owner) are the server's
        }
        if let newOwner = try application.optionalString("owner"), newOwner != owner {
            throw ToolError("an application cannot move to another owner ('\(newOwner)'); create it there instead")
        }
        try Self.apply(application, to: &client)
        guard client != before else { return Casdoor.operation("update", affected: false) }
        try await Self.casdoorErrors { try await server.updateClient(client) }
        return Casdoor.operation("update", affected: true)
    }

    /// Copies Casdoor's fields onto a client, checking each.
    static func apply(_ a: ToolArguments, to client: inout OAuthClient) throws {
        if let v = try a.optionalString("displayName") { client.displayName = v }
        if let uris = try a.optionalStrings("redirectUris") { client.redirectURIs = uris }
        if let grants = try a.optionalStrings("grantTypes") { client.grantTypes = grants }
        if let raw = a["scopes"], !raw.isNull {
            let names: [String]
            switch raw {
            case .array(let items): names = items.compactMap { $0.stringValue ?? $0["name"]?.stringValue }
            case .string(let s): names = s.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
            default: throw ToolError("scopes must be an array of scope names such as [\"read:data\"]")
            }
            let (parsed, unknown) = ScopeSet.parse(names.joined(separator: " "))
            guard unknown.isEmpty else {
                throw ToolError("unknown scope(s): \(unknown.joined(separator: ", ")); known: \(Scope.all.map(\.name).joined(separator: " "))")
            }
            client.allowedScopes = names.isEmpty ? nil : parsed
        }
        if let raw = a["ipWhitelist"], !raw.isNull {
            let entries: [String] =
                raw.stringValue.map { $0.split(separator: ",").map { $0.trimmingSpaces() }.filter { !$0.isEmpty } }
                ?? (raw.arrayValue?.compactMap(\.stringValue) ?? [])
            client.ipAllowlist = entries
        }
        for key in ["description", "homepageUrl", "logo"] {
            if let v = a[key], !v.isNull {
                guard case .string = v else { throw ToolError("\(key) must be a string") }
                client.details[key] = v
            }
        }
        for key in OAuthClient.tokenHourSettings {
            if let v = a[key], !v.isNull { client.details[key] = v.doubleValue.map(JSON.double) ?? v }
        }
    }

    /// Runs `body`, wording a broken client rule in Casdoor's field names.
    static func casdoorErrors<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let violation as ClientRuleViolation {
            switch violation {
            case .grantTypes: throw ToolError("grantTypes may contain authorization_code, refresh_token and client_credentials")
            case .redirectURI(let uri, let problem): throw ToolError("redirectUris: '\(uri)': \(problem)")
            case .redirectURIsMissing:
                throw ToolError("redirectUris is required for the authorization_code grant (or set grantTypes to [\"client_credentials\"])")
            case .authMethod, .secretNeeded: throw ToolError("the application's client authentication method cannot be used with its grant types")
            case .quotaExceeded: throw ToolError("application quota is exceeded")
            case .name: throw ToolError("application.name must be 1 to 100 letters, digits, '.', '_' or '-'")
            case .nameTaken(let name): throw ToolError("an application named '\(name)' already exists in this app; choose another name")
            case .ipAllowlist(let entry): throw ToolError("ipWhitelist: '\(entry)' is not an IP address or CIDR range")
            case .tokenHours(let key): throw ToolError("\(key) must be a positive number of hours, at most a year")
            }
        }
    }

    /// Casdoor's application JSON; the secret appears only when given (at creation), masked otherwise.
    static func json(_ c: OAuthClient, secret: String?) -> JSON {
        var o: JSONObject = [
            "owner": .string(c.owner), "name": .string(c.name),
            "createdTime": .string(ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: TimeInterval(c.createdAt)))),
            "displayName": .string(c.displayName), "organization": .string(c.owner),
            "clientId": .string(c.clientID), "clientSecret": .string(secret ?? (c.isConfidential ? "***" : "")),
            "redirectUris": JSON(c.redirectURIs), "grantTypes": JSON(c.grantTypes),
            "scopes": JSON(c.allowedScopes?.granted ?? []), "ipWhitelist": .string(c.ipAllowlist.joined(separator: ",")),
            "tokenFormat": "JWT", "tokenSigningMethod": "ES256",
        ]
        for key in ["description", "homepageUrl", "logo"] + OAuthClient.tokenHourSettings { if let v = c.details[key] { o[key] = v } }
        return .object(o)
    }
}

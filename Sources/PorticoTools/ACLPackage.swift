import Foundation
public import PorticoAuth
public import PorticoData
import PorticoJSON
public import PorticoMCP
import PorticoStore

/// Package `acl`: an app's roles (NocoBase's ACL): the built-in `admin`, `member` and `viewer`,
/// custom roles with permissions per collection and action (fields, row filter), and who holds
/// which role. Only an app's administrators change them, and administrators hold every right,
/// so no grant can exceed its granter's.
public struct ACLPackage: Sendable {
    let roles: RoleStore
    let users: UserStore
    let catalogs: CatalogStore
    /// The app's record of every tool call, read by `audit_list`.
    let audit: AuditTrail?
    /// Which packages an app's endpoint offers, read and set by `app_packages_get` / `app_packages_set`.
    let packages: AppPackages?

    public struct AppPackages: Sendable {
        public var offered: @Sendable (_ app: String) async throws -> [String]?
        /// Stores what the app now offers (`nil`: every package), names checked against `ToolInventory`.
        public var set: @Sendable (_ app: String, _ packages: [String]?) async throws -> Void
        /// Turns the app's confirmations before a destroy on or off, read by `app_confirmations_set`.
        public var setConfirmations: (@Sendable (_ app: String, _ confirms: Bool) async throws -> Void)?

        public init(
            offered: @escaping @Sendable (_ app: String) async throws -> [String]?,
            set: @escaping @Sendable (_ app: String, _ packages: [String]?) async throws -> Void,
            setConfirmations: (@Sendable (_ app: String, _ confirms: Bool) async throws -> Void)? = nil
        ) {
            self.offered = offered
            self.set = set
            self.setConfirmations = setConfirmations
        }
    }
    public init(roles: RoleStore, users: UserStore, catalogs: CatalogStore, audit: AuditTrail? = nil, packages: AppPackages? = nil) {
        self.packages = packages
        self.roles = roles
        self.users = users
        self.catalogs = catalogs
        self.audit = audit
    }

    static let ruleSchema: JSON = [
        "type": "object",
        "properties": [
            "fields": ["type": "array", "items": ["type": "string"], "description": "Fields it may read (create/update: write); absent: all"],
            "filter": ["type": "object", "description": "NocoBase filter the rows must match; may use {{currentUser.id}}"],
        ],
        "additionalProperties": false,
    ]

    static let roleOutput: JSON = ["type": "object", "properties": ["data": ["type": "object"]], "required": ["data"]]

    static let name = Param.string("name")
    static let title = Param.optionalString("title")
    static let role = Param.string("role")
    static let collection = Param.string("collection")
    static let actions = Param.object(
        "actions",
        schema: [
            "properties": .object(JSONObject(uniqueKeysWithValues: RecordAction.allCases.map { ($0.rawValue, ruleSchema) })),
            "additionalProperties": false,
        ], required: true)
    static let user = Param.string("user")
    static let roles = Param.strings("roles", required: true, minItems: 1)
    static let packageNames = Param.strings("packages", required: true, nullable: true)
    static let confirm = Param.requiredBool("confirm", "true: destructive tools ask first (the default); false: they act at once")
    static let since = Param.json("since", schema: ["type": ["string", "integer"]])
    static let principal = Param.optionalString("principal")
    static let tool = Param.optionalString("tool")
    static let limit = Param.int("limit", minimum: 1, maximum: 1000).or(100)

    static let dataOutput: JSON = ["type": "object", "properties": ["data": ["type": "object"]], "required": ["data"]]

    public var package: ToolPackage {
        ToolPackage.mapped(
            name: "acl", summary: "Roles and what they may do with each collection", tools: roleTools + appTools + [auditTool])
    }

    /// The app's roles, what each may do with each collection, and who holds them.
    var roleTools: [Tool] {
        [
            Tool.admin(
                .acl, .acl, "roles_list", "The app's roles: built-in (admin, member, viewer) and custom, with how many users hold each.", [],
                output: ["type": "object", "properties": ["data": ["type": "array", "items": ["type": "object"]]], "required": ["data"]], change: nil
            ) { _, context in
                let list = try await roles.list(app: context.app)
                return .structured([
                    "data": .array(
                        list.map { role in
                            var compact = role
                            compact.permissions = nil
                            return compact.json
                        })
                ])
            },
            Tool.admin(
                .acl, .acl, "roles_get", "One role with its permissions: per collection, the granted actions with their fields and row filter.",
                [Self.name],
                output: Self.roleOutput, change: nil
            ) { input, context in
                .structured(["data": try await roles.require(app: context.app, name: try input[Self.name]).json])
            },
            Tool.admin(
                .acl, .acl, "roles_create", "Create a custom role. It may do nothing until roles_set_permissions grants it actions.",
                [Self.name, Self.title],
                output: Self.roleOutput, change: ToolAnnotations(readOnly: false)
            ) { input, context in
                .structured(["data": try await roles.create(app: context.app, name: try input[Self.name], title: try input[Self.title]).json])
            },
            Tool.admin(
                .acl, .acl, "roles_update", "Change a custom role's title.", [Self.name, Self.title], output: Self.roleOutput,
                change: ToolAnnotations(readOnly: false, idempotent: true)
            ) { input, context in
                .structured(["data": try await roles.update(app: context.app, name: try input[Self.name], title: try input[Self.title]).json])
            },
            Tool.destroying(
                .acl, .acl, "roles_destroy", "Remove a custom role that no user holds.", [Self.name],
                loss: { input, context in "This removes role '\(try input[Self.name])' of app '\(context.app)' and its permissions." }
            ) { input, context in
                let name = try input[Self.name]
                try await roles.destroy(app: context.app, name: name)
                return .structured(["data": ["name": .string(name), "destroyed": true]])
            },
            Tool.admin(
                .acl, .acl, "roles_set_permissions",
                "Set what a custom role may do with one collection ('*' for every collection without its own entry): actions maps list, get, create, update, destroy, query to {fields?, filter?}. An action left out is denied; fields absent means all; filter is a NocoBase filter and may use {{currentUser.id}}. Replaces the role's earlier permissions on that collection.",
                [Self.role, Self.collection, Self.actions], output: Self.roleOutput, change: ToolAnnotations(readOnly: false, idempotent: true)
            ) { input, context in
                try await setPermissions(role: try input[Self.role], collection: try input[Self.collection], actions: try input[Self.actions], context)
            },
            Tool.admin(
                .acl, .acl, "users_set_roles",
                "Give a user their role in this app (a user has one role per app). user is the user name. A user of other apps who is not in this one is invited, and joins when they accept in their console, unless an instance administrator (an admin of app main) asks.",
                [Self.user, Self.roles], output: ["type": "object"], change: ToolAnnotations(readOnly: false, idempotent: true)
            ) { input, context in
                let name = try input[Self.user]
                let names = try input[Self.roles] ?? []
                guard names.count == 1, let roleName = names.first else {
                    throw ToolError("roles must name exactly one role: a user has one role per app (got \(names.count))")
                }
                guard let user = try await users.find(name: name) else { throw ToolError("there is no user '\(name)'") }
                switch try await roles.assign(app: context.app, userID: user.id, name: roleName, by: context.requester) {
                case .assigned:
                    return .structured(["data": ["user": .string(user.name), "app": .string(context.app), "roles": [.string(roleName)]]])
                case .invited:
                    let text =
                        "'\(user.name)' belongs to other apps and not to '\(context.app)', so they were invited as \(roleName); they join when they accept in their console (/console)"
                    return ToolResult(
                        content: [["type": "text", "text": .string(text)]],
                        structuredContent: [
                            "data": ["user": .string(user.name), "app": .string(context.app), "roles": [], "invited": [.string(roleName)]]
                        ])
                }
            },
        ]
    }

    /// What the app's endpoint offers, and whether its destructive tools ask first.
    var appTools: [Tool] {
        [
            Tool.admin(
                .acl, .acl, "app_packages_get", "The tool packages this app's endpoint offers (x-mcp-packages and ?packages= only narrow them).", [],
                output: Self.dataOutput, change: nil
            ) { _, context in
                guard let packages else { throw ToolError("this server does not restrict packages per app") }
                let offered = try await packages.offered(context.app)
                return .structured([
                    "data": ["app": .string(context.app), "packages": JSON(offered ?? ToolInventory.names), "restricted": .bool(offered != nil)]
                ])
            },
            Tool.admin(
                .acl, .acl, "app_packages_set",
                "Restrict the tool packages this app's endpoint offers to every caller (packages: [names]), or offer them all again (packages: null). Keep acl, or this tool goes too.",
                [Self.packageNames], output: Self.dataOutput, change: ToolAnnotations(readOnly: false, idempotent: true)
            ) { input, context in
                guard let packages else { throw ToolError("this server does not restrict packages per app") }
                let names = try input[Self.packageNames]
                if names?.isEmpty == true { throw ToolError("packages is empty; give at least one, or null for all") }
                let chosen = try names.map { try ToolInventory.valid($0) }
                try await packages.set(context.app, chosen)
                return .structured(
                    ["data": ["app": .string(context.app), "packages": JSON(chosen ?? ToolInventory.names), "restricted": .bool(chosen != nil)]])
            },
            Tool.admin(
                .acl, .acl, "app_confirmations_set",
                "Whether this app's destructive tools ask the user before they act (confirm: true, the default) or act at once (confirm: false, for trusted automation).",
                [Self.confirm], output: Self.dataOutput, change: ToolAnnotations(readOnly: false, idempotent: true)
            ) { input, context in
                guard let set = packages?.setConfirmations else { throw ToolError("this server does not set confirmations per app") }
                let confirm = try input[Self.confirm]
                try await set(context.app, confirm)
                return .structured(["data": ["app": .string(context.app), "confirm": .bool(confirm)]])
            },
        ]
    }

    /// The app's record of every tool call.
    var auditTool: Tool {
        Tool.admin(
            .acl, .acl, "audit_list",
            "The app's audit trail, newest first: every tool call with its time (ms), principal, credential, client, tool, a digest of its arguments, outcome and duration. Filter by since (ISO date or ms), principal, tool; limit ≤ 1000.",
            [Self.since, Self.principal, Self.tool, Self.limit],
            output: ["type": "object", "properties": ["data": ["type": "array", "items": ["type": "object"]]], "required": ["data"]], change: nil
        ) { input, context in
            guard let audit else { throw ToolError("this server keeps no audit trail: it runs with --audit-retention-days 0") }
            var query = AuditTrail.Query(principal: try input[Self.principal], tool: try input[Self.tool], limit: try input[Self.limit])
            switch try input[Self.since] {
            case .int(let ms)?: query.since = ms
            case .string(let text)?:
                guard let date = AuditTrail.parseSince(text) else {
                    throw ToolError("since must be an ISO date such as 2026-11-23 or 2026-11-23T10:00:00Z, or milliseconds since 1970; got '\(text)'")
                }
                query.since = date
            default: break
            }
            // Calls of the last moments may still be on their way to the database.
            try await audit.flush()
            return .structured(["data": .array(try await audit.read(app: context.app, query).map(\.json))])
        }
    }

    func setPermissions(role roleName: String, collection collectionName: String, actions: ToolArguments, _ context: CallContext) async throws
        -> ToolResult
    {
        let catalog = try await catalogs.catalog(app: context.app)
        let collection: CollectionSchema? = collectionName == "*" ? nil : try catalog.collection(collectionName)
        var rules: [RecordAction: AccessRule] = [:]
        for name in actions.object.keys {
            guard let action = RecordAction(rawValue: name) else {
                throw ToolError("actions.\(name): unknown action; actions are \(RecordAction.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            let rule = try actions.object(name)
            let fields = try rule.optionalStrings("fields")
            let filter = rule["filter"].flatMap { $0.isNull ? nil : $0 }
            if collection == nil, fields != nil || filter != nil {
                throw ToolError("actions.\(name): fields and filter need one collection; set them per collection, not on '*'")
            }
            if let collection {
                for field in fields ?? [] where collection.field(field) == nil {
                    throw ToolError(
                        "actions.\(name).fields: '\(field)' is not a field of '\(collection.name)'; its fields are: \(collection.fields.map(\.name).joined(separator: ", "))"
                    )
                }
                if let filter {
                    guard action != .create else { throw ToolError("actions.create: a new record has no rows to filter; give create fields only") }
                    try Self.validate(filter, on: collection, catalog: catalog, path: "actions.\(name).filter")
                }
            }
            rules[action] = AccessRule(fields: fields, filter: filter)
        }
        let role = try await roles.setPermissions(app: context.app, name: roleName, collection: collectionName, actions: rules)
        return .structured(["data": role.json])
    }

    /// Compiles a row filter with stand-in values for its variables, so an unknown field, a
    /// wrong operator or an unknown variable is refused when the role is set, not when it is used.
    static func validate(_ filter: JSON, on collection: CollectionSchema, catalog: Catalog, path: String) throws {
        let standIns = Dictionary(
            uniqueKeysWithValues: RecordAccess.variableNames.map { ($0, $0.hasSuffix(".id") ? JSON.int(1) : JSON.string("user")) })
        do throws(DataError) {
            let bound = try RecordAccess.substitute(filter, variables: standIns, collection: collection.name)
            _ = try FilterCompiler(catalog: catalog, flavor: catalog.database.flavor).compile(bound, on: collection, alias: "t0")
        } catch {
            throw ToolError("\(path): \(error.message)")
        }
    }
}

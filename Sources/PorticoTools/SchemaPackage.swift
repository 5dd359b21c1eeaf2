import Foundation
public import PorticoAuth
import PorticoBase
public import PorticoData
import PorticoJSON
public import PorticoMCP

/// Package `schema`: NocoBase's collection and field management. Reads show what the caller's
/// role may see; changes (administrators) migrate the real tables and keep their data.
public struct SchemaPackage: Sendable {
    let schema: SchemaService
    let policy: AccessPolicy

    public init(schema: SchemaService, policy: AccessPolicy = AccessPolicy()) {
        self.schema = schema
        self.policy = policy
    }

    static let fieldSchema: JSON = [
        "type": "object",
        "description":
            "{name, type (string, text, integer, float, decimal, boolean, date, datetime, json, select, belongsTo, hasMany, belongsToMany), title?, required?, unique?, default?, options? (select), length?, scale?, target? and foreignKey? (relations), through? and otherKey? (belongsToMany)}",
        "properties": ["name": ["type": "string"], "type": ["type": "string"]],
        "required": ["name", "type"],
    ]
    static let dataOutput: JSON = ["type": "object", "properties": ["data": [:]], "required": ["data"]]

    static let name = Param.string("name")
    static let collection = Param.string("collection")
    static let title = Param.optionalString("title")
    static let description = Param.optionalString("description")

    public var package: ToolPackage {
        ToolPackage.mapped(
            name: "schema", summary: "Collections and their fields: read, create, change, remove",
            tools: [
                tool(
                    "collections_list", "The app's collections, compact: name, title, description and field count. search narrows the list.",
                    [Self.search], write: false
                ) { s, input, c in
                    let search = try input[Self.search]?.lowercased()
                    let catalog = try await s.visibleCatalog(c)
                    let rows = catalog.names.compactMap { name -> JSON? in
                        guard let collection = catalog.collections[name], catalog.isVisible(name) else { return nil }
                        if let search, !search.isEmpty,
                            ![collection.name, collection.title ?? "", collection.description ?? ""].contains(where: { $0.lowercased().includes(search) })
                        {
                            return nil
                        }
                        return [
                            "name": .string(collection.name), "title": collection.title.map(JSON.string) ?? .null,
                            "description": collection.description.map(JSON.string) ?? .null, "fieldCount": JSON(collection.fields.count),
                        ]
                    }
                    return ["data": .array(rows)]
                },
                tool(
                    "collections_get", "One collection with its fields: types, constraints, relations (target, keys, junction).", [Self.name], write: false
                ) { s, input, c in
                    let catalog = try await s.visibleCatalog(c)
                    let collection = try catalog.collection(try input[Self.name])
                    return ["data": Self.json(collection)]
                },
                tool(
                    "collections_create",
                    "Create a collection (a real table) with fields; id, createdAt, updatedAt, createdById and updatedById are added and kept by Portico. Relations: belongsTo (target, foreignKey), hasMany (target, foreignKey on the target), belongsToMany (target, through junction).",
                    [Self.name, Self.title, Self.description, Self.fields], write: true
                ) { s, input, c in
                    let fields = try input[Self.fields].enumerated().map { index, item in try Self.spec(item, at: "fields[\(index)]") }
                    let created = try await s.schema.createCollection(
                        app: c.app, name: try input[Self.name], title: try input[Self.title], description: try input[Self.description], fields: fields)
                    return ["data": Self.json(created)]
                },
                tool(
                    "collections_update", "Change a collection's title or description.", [Self.name, Self.newTitle, Self.newDescription], write: true,
                    idempotent: true
                ) { s, input, c in
                    let collection = try await s.schema.updateCollection(
                        app: c.app, name: try input[Self.name], title: try input[Self.newTitle], description: try input[Self.newDescription])
                    return ["data": Self.json(collection)]
                },
                destroying(
                    "collections_destroy",
                    "Remove a collection with all its records. Refused while other collections' relations point at it, unless cascade: true, which removes those relation fields too.",
                    [Self.name, Self.cascade],
                    loss: { s, input, c in
                        let name = try input[Self.name]
                        guard try await s.visibleCatalog(c).names.contains(name) else { return nil }
                        return
                            "This removes collection '\(name)' and every record in it\(try input[Self.cascade] ? ", and the relation fields of other collections that point at it" : "")."
                    }
                ) { s, input, c in
                    let name = try input[Self.name]
                    let removed = try await s.schema.destroyCollection(app: c.app, name: name, cascade: try input[Self.cascade])
                    return ["data": ["name": .string(name), "destroyed": true, "alsoRemoved": JSON(removed)]]
                },
                tool(
                    "fields_create",
                    "Add a field to a collection (a new column, or a relation with its key column or junction). A required field on a collection with records needs a default.",
                    [Self.collection, Self.field], write: true
                ) { s, input, c in
                    guard let item = try input[Self.field] else { throw ToolError("field is required") }
                    let field = try await s.schema.createField(app: c.app, collection: try input[Self.collection], field: try Self.spec(item, at: "field"))
                    return ["data": Self.json(field)]
                },
                tool(
                    "fields_update",
                    "Change a field: rename (field.name), title, required, options, length, default, or type when every stored value converts; the data is kept.",
                    [Self.collection, Self.name, Self.changes], write: true, idempotent: true
                ) { s, input, c in
                    let field = try await s.schema.updateField(
                        app: c.app, collection: try input[Self.collection], field: try input[Self.name], changes: try input[Self.changes] ?? [:])
                    return ["data": Self.json(field)]
                },
                destroying(
                    "fields_destroy", "Remove a field and its column's data.", [Self.collection, Self.name],
                    loss: { _, input, _ in
                        "This removes field '\(try input[Self.name])' of collection '\(try input[Self.collection])' and its value in every record."
                    }
                ) { s, input, c in
                    let collection = try input[Self.collection]
                    let name = try input[Self.name]
                    try await s.schema.destroyField(app: c.app, collection: collection, field: name)
                    return ["data": ["collection": .string(collection), "name": .string(name), "destroyed": true]]
                },
            ])
    }

    static let search = Param.optionalString("search", "Part of a name, title or description")
    static let fields = Param.array("fields", items: fieldSchema)
    static let newTitle = Param.nullableString("title")
    static let newDescription = Param.nullableString("description")
    static let cascade = Param.bool("cascade").or(false)
    static let field = Param.json("field", schema: fieldSchema, required: true)
    static let changes = Param.jsonObject("field", required: true)

    func tool(
        _ name: String, _ description: String, _ parameters: [any DeclaredParameter], write: Bool, idempotent: Bool = false, destructive: Bool = false,
        _ run: @escaping @Sendable (SchemaPackage, ToolInput, CallContext) async throws -> JSON
    ) -> Tool {
        let package = self
        return Tool.admin(
            .schema, .schema, name, description, parameters, output: Self.dataOutput,
            change: write ? ToolAnnotations(readOnly: false, destructive: destructive, idempotent: idempotent) : nil
        ) { input, context in
            .structured(try await run(package, input, context))
        }
    }

    /// A destructive schema tool that asks first (`Tool.destroying`).
    func destroying(
        _ name: String, _ description: String, _ parameters: [any DeclaredParameter],
        loss: @escaping @Sendable (SchemaPackage, ToolInput, CallContext) async throws -> String?,
        _ run: @escaping @Sendable (SchemaPackage, ToolInput, CallContext) async throws -> JSON
    ) -> Tool {
        let package = self
        return Tool.destroying(
            .schema, .schema, name, description, parameters, output: Self.dataOutput, loss: { input, context in try await loss(package, input, context) }
        ) { input, context in
            .structured(try await run(package, input, context))
        }
    }

    /// The catalog as the caller's role may see it: a custom role sees the collections and
    /// fields its `list` rule shows, and nothing of the others.
    func visibleCatalog(_ context: CallContext) async throws -> Catalog {
        try await visibleCatalog(app: context.app, principal: context.principal)
    }

    func visibleCatalog(app: String, principal: Principal) async throws -> Catalog {
        let catalog = try await schema.catalogs.catalog(app: app)
        let access = policy.recordAccess(role: principal.role, app: app, caller: principal.caller)
        if access.allowsInFull { return catalog }
        return try catalog.scoped(by: access, root: "", action: .list)
    }

    /// Each collection's schema as an MCP resource, `portico://<app>/collections/<name>`, as
    /// `collections_get` shows it to the same caller.
    public var resources: ResourceProvider {
        let package = self
        return ResourceProvider(
            package: "schema", requiredScope: Scope(.read, .schema),
            templates: [
                [
                    "uriTemplate": "portico://{app}/collections/{name}", "name": "collection", "title": "A collection's schema",
                    "description": "Fields with types, constraints and relations, as collections_get returns them", "mimeType": "application/json",
                ]
            ],
            list: { app, principal in
                guard package.policy.allows(principal.role, area: .schema, write: false) else { return [] }
                let catalog = try await package.visibleCatalog(app: app, principal: principal)
                return catalog.names.compactMap { name in
                    guard catalog.isVisible(name), let collection = catalog.collections[name] else { return nil }
                    return MCPResource(uri: Self.uri(app: app, collection: name), name: name, title: collection.title, description: collection.description)
                }
            },
            read: { app, principal, uri in
                let prefix = Self.uri(app: app, collection: "")
                guard uri.hasPrefix(prefix), package.policy.allows(principal.role, area: .schema, write: false) else { return nil }
                let name = String(uri.dropFirst(prefix.count)).removingPercentEncoding ?? ""
                let catalog = try await package.visibleCatalog(app: app, principal: principal)
                guard catalog.isVisible(name), let collection = catalog.collections[name] else { return nil }
                return [["uri": .string(uri), "mimeType": "application/json", "text": .string(Self.json(collection).serializedString)]]
            })
    }

    static func uri(app: String, collection: String) -> String {
        "portico://\(app)/collections/" + (collection.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? collection)
    }

    static let knownKeys: Set<String> = [
        "name", "type", "title", "required", "unique", "default", "options", "length", "scale", "target", "foreignKey", "through", "otherKey",
    ]
    /// NocoBase's keys for its own user interface, accepted and left aside.
    static let interfaceKeys: Set<String> = ["interface", "uiSchema", "description"]

    static func spec(_ json: JSON, at path: String) throws -> FieldSpec {
        guard case .object(let object) = json else { throw ToolError("\(path) must be an object such as {\"name\": \"title\", \"type\": \"string\"}") }
        if let unknown = object.keys.first(where: { !knownKeys.contains($0) && !interfaceKeys.contains($0) }) {
            throw ToolError("\(path).\(unknown) is not a field option; options are \(knownKeys.sorted().joined(separator: ", "))")
        }
        let a = ToolArguments(object, path: path)
        let typeName = try a.string("type")
        guard let type = FieldType(rawValue: typeName) else {
            throw ToolError("\(path).type: '\(typeName)' is not a field type; types are \(FieldType.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        var spec = FieldSpec(name: try a.string("name"), type: type)
        spec.title = try a.optionalString("title")
        spec.required = try a.optionalBool("required") ?? false
        spec.unique = try a.optionalBool("unique") ?? false
        spec.defaultValue = a["default"]
        spec.options = try a.optionalStrings("options")
        spec.length = try a.optionalInt("length")
        spec.scale = try a.optionalInt("scale")
        spec.target = try a.optionalString("target")
        spec.foreignKey = try a.optionalString("foreignKey")
        spec.through = try a.optionalString("through")
        spec.otherKey = try a.optionalString("otherKey")
        return spec
    }

    static func json(_ collection: CollectionSchema) -> JSON {
        [
            "name": .string(collection.name), "title": collection.title.map(JSON.string) ?? .null,
            "description": collection.description.map(JSON.string) ?? .null, "fields": .array(collection.fields.map(json)),
        ]
    }

    static func json(_ field: Field) -> JSON {
        var object: JSONObject = ["name": .string(field.name), "type": .string(field.type.rawValue)]
        if let title = field.title { object["title"] = .string(title) }
        if field.isColumn {
            object["required"] = .bool(!field.nullable)
            if field.primaryKey { object["primaryKey"] = true }
            if field.autoIncrement { object["autoIncrement"] = true }
            if field.unique { object["unique"] = true }
            if let value = field.defaultValue { object["default"] = value }
            if let length = field.length { object["length"] = JSON(length) }
            if let scale = field.scale { object["scale"] = JSON(scale) }
            if let options = field.options { object["options"] = JSON(options) }
            if let maintained = field.maintained { object["maintained"] = .string(maintained.rawValue) }
        }
        if let r = field.relation {
            var relation: JSONObject = ["target": .string(r.target), "foreignKey": .string(r.foreignKey), "targetKey": .string(r.targetKey)]
            if field.type != .belongsTo { relation["sourceKey"] = .string(r.sourceKey) }
            if let through = r.through { relation["through"] = .string(through) }
            if let otherKey = r.otherKey { relation["otherKey"] = .string(otherKey) }
            object["relation"] = .object(relation)
        }
        return .object(object)
    }
}

extension Catalog {
    /// Whether a caller may see the collection at all (a scoped catalog refuses the others).
    func isVisible(_ name: String) -> Bool { (try? collection(name)) != nil }
}

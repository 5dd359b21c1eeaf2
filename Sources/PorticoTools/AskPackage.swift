public import PorticoAsk
public import PorticoAuth
import PorticoData
import PorticoJSON
public import PorticoMCP

/// Package `ask`: the datasources of an app and read-only SQL on them. An agent that is itself a
/// model writes SQL from `datasource_describe` and runs it with `sql_query`, through the same
/// guard that every engine's SQL passes.
public struct AskPackage: Sendable {
    let datasources: DatasourceService
    let policy: AccessPolicy

    public init(datasources: DatasourceService, policy: AccessPolicy = AccessPolicy()) {
        self.datasources = datasources
        self.policy = policy
    }

    static let datasourceArgument: JSON = [
        "type": "string", "description": "Datasource name from datasources_list; \"main\" is the app's own collections (the default)",
    ]

    public var package: ToolPackage {
        ToolPackage(
            name: "ask", summary: "Datasources and read-only SQL on them",
            tools: [
                tool(
                    "datasources_list", "List the datasources of this app that questions and SQL can be run on.",
                    input: ["type": "object", "properties": [:]],
                    output: [
                        "type": "object",
                        "properties": [
                            "data": [
                                "type": "array",
                                "items": [
                                    "type": "object",
                                    "properties": ["name": ["type": "string"], "type": ["type": "string"], "description": ["type": ["string", "null"]]],
                                ],
                            ]
                        ], "required": ["data"],
                    ]
                ) { service, _, context in
                    let all = try await service.datasources.list(app: context.app)
                    return [
                        "data": .array(
                            all.map { ["name": .string($0.name), "type": .string($0.kind.rawValue), "description": $0.description.map(JSON.string) ?? .null] })
                    ]
                },
                tool(
                    "datasource_describe",
                    "The compact schema of a datasource: its tables, each column as \"name TYPE\" with PK and → target for keys, "
                        + "and sample values of text columns. Narrow it with tables. Write SQL for sql_query from it.",
                    input: [
                        "type": "object",
                        "properties": [
                            "datasource": Self.datasourceArgument,
                            "tables": ["type": "array", "items": ["type": "string"], "description": "Only these tables (names as listed)"],
                            "refresh": ["type": "boolean", "description": "Read the schema again instead of using the cached one"],
                        ],
                    ],
                    output: [
                        "type": "object",
                        "properties": ["datasource": ["type": "string"], "dialect": ["type": "string"], "tables": ["type": "array"]],
                        "required": ["datasource", "dialect", "tables"],
                    ]
                ) { service, arguments, context in
                    try await service.describe(arguments, context)
                },
                tool(
                    "sql_query",
                    "Run one read-only SELECT (or WITH … SELECT) on a datasource and get its columns and rows (at most 1,000; truncated "
                        + "says when more matched). Only the datasource's tables and common functions; anything that writes is refused.",
                    input: [
                        "type": "object",
                        "properties": [
                            "datasource": Self.datasourceArgument,
                            "sql": ["type": "string", "description": "One SELECT statement in the datasource's dialect (see datasource_describe)"],
                        ], "required": ["sql"],
                    ],
                    output: [
                        "type": "object",
                        "properties": [
                            "datasource": ["type": "string"], "sql": ["type": "string"], "columns": ["type": "array", "items": ["type": "string"]],
                            "rows": ["type": "array", "items": ["type": "array"]], "rowCount": ["type": "integer"], "truncated": ["type": "boolean"],
                        ],
                        "required": ["datasource", "sql", "columns", "rows", "rowCount", "truncated"],
                    ]
                ) { service, arguments, context in
                    try await service.query(arguments, context)
                },
            ])
    }

    func tool(
        _ name: String, _ description: String, input: JSON, output: JSON,
        _ run: @escaping @Sendable (AskPackage, ToolArguments, CallContext) async throws -> JSON
    ) -> Tool {
        let package = self
        return Tool(
            name: name, description: description, inputSchema: input, outputSchema: output, annotations: .read,
            requiredScope: Scope(.read, .datasource), access: .data(write: false)
        ) { arguments, context in
            do {
                return .structured(try await run(package, ToolArguments(arguments), context))
            } catch {
                throw ToolErrors.map(error)
            }
        }
    }

    func describe(_ arguments: ToolArguments, _ context: CallContext) async throws -> JSON {
        let name = try arguments.optionalString("datasource") ?? "main"
        let (datasource, tables) = try await datasources.schema(app: context.app, datasource: name, refresh: try arguments.optionalBool("refresh") ?? false)
        var shown = tables
        if let wanted = try arguments.optionalStrings("tables") {
            let byName = Dictionary(tables.map { ($0.name.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
            let unknown = wanted.filter { byName[$0.lowercased()] == nil }
            guard unknown.isEmpty else {
                throw ToolError("no table \(unknown.joined(separator: ", ")) in datasource '\(name)'; it has: \(tables.map(\.name).joined(separator: ", "))")
            }
            shown = wanted.compactMap { byName[$0.lowercased()] }
        }
        if name == "main" { shown = shown.filter { policy.allows(context.principal.role, .list, collection: $0.name) } }
        return [
            "datasource": .string(datasource.name), "dialect": .string(datasource.dialect.rawValue),
            "tables": .array(shown.map(Self.compact)),
        ]
    }

    /// One table in few tokens: `["AlbumId INTEGER PK", "ArtistId INTEGER → Artist.ArtistId"]`
    /// and, apart, a few values of each text column.
    static func compact(_ table: SourceTable) -> JSON {
        let keys = Dictionary(table.foreignKeys.map { ($0.column, $0) }, uniquingKeysWith: { first, _ in first })
        var object: JSONObject = ["name": .string(table.name)]
        if table.isView { object["view"] = true }
        object["columns"] = .array(
            table.columns.map { column in
                var text = column.type.isEmpty ? column.name : "\(column.name) \(column.type)"
                if column.primaryKey { text += " PK" }
                if column.notNull, !column.primaryKey { text += " NOT NULL" }
                if let key = keys[column.name] { text += " → \(key.table)" + (key.targetColumn.map { ".\($0)" } ?? "") }
                return .string(text)
            })
        let samples = table.columns.filter { !$0.samples.isEmpty }
        if !samples.isEmpty {
            object["samples"] = .object(JSONObject(uniqueKeysWithValues: samples.map { ($0.name, JSON.array($0.samples.map(JSON.string))) }))
        }
        return .object(object)
    }

    func query(_ arguments: ToolArguments, _ context: CallContext) async throws -> JSON {
        let name = try arguments.optionalString("datasource") ?? "main"
        let sql = try arguments.string("sql")
        let role = context.principal.role
        let policy = self.policy
        let app = context.app
        context.progress("running SQL on \(name)")
        let answer = try await datasources.query(app: app, datasource: name, sql: sql) { table in
            // On the app's own data the caller's role decides which collections can be read.
            guard name == "main", !policy.allows(role, .list, collection: table) else { return nil }
            return "role '\(role?.name ?? "none")' in app '\(app)' may not read '\(table)'"
        }
        return [
            "datasource": .string(answer.datasource), "sql": .string(answer.sql), "columns": .array(answer.columns.map(JSON.string)),
            "rows": .array(answer.rows.map { .array($0.map(\.json)) }), "rowCount": .int(Int64(answer.rows.count)), "truncated": .bool(answer.truncated),
        ]
    }
}

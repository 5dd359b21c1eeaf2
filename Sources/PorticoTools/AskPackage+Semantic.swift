import PorticoAsk
import PorticoAskEngine
import PorticoAuth
import PorticoData
import PorticoJSON
import PorticoMCP
import PorticoStore

/// The `ask` package's semantic layer: the model of a datasource (metrics, dimensions, segments,
/// relationships), read by anyone who may ask (only what their role could read), changed by an
/// app's administrators (`write:datasource`), and `query_metric`, which compiles a request for
/// metrics by name into SQL without any engine's guess. The rules live in `SemanticService`.
extension AskPackage {
    static let modelDatasource = Param.string("datasource", "Datasource name from datasources_list (main is the app's own collections)")
    static let definitionName = Param.string("name", "Its name, as people ask for it (\"revenue\", \"country\", \"active customers\")")
    static let namedOrID = Param.optionalString("name", "Which one: its name or a synonym (or give id)")
    static let definitionID = Param.int("id", "Which one, by its id from semantic_model_get (or give name)", minimum: 1)
    static let newName = Param.optionalString("new_name", "A new name")
    static let definitionSynonyms = Param.strings("synonyms", "Other words for it")
    static let definitionDescription = Param.optionalString("description", "What it means, in words (shown to LLMs and agents)")
    static let definitionTable = Param.optionalString("table", "The table it is defined over")
    static let metricSQL = Param.optionalString("sql", "An aggregate over the table's columns: SUM(UnitPrice * Quantity), COUNT(*), COUNT(DISTINCT CustomerId)")
    static let metricFilter = Param.optionalString("filter", "Only the rows of the table this condition keeps (Status = 'won'); empty removes it")
    static let derived = Param.optionalString(
        "derived", "Instead of table and sql: arithmetic over other metrics in braces, e.g. {won revenue} / {total amount}")
    static let format = Param.optionalString("format", "How its values read: currency, percent, a unit; free text")
    static let dimensionSQL = Param.optionalString("sql", "A column of the table, or an expression over its columns")
    static let isTime = Param.bool("time", "A date or time: queries bucket it by their grain (day, week, month, quarter, year)")
    static let segmentCondition = Param.optionalString(
        "condition",
        "SQL that keeps the table's rows it means; may use subqueries over other tables and aggregates, e.g. "
            + "EXISTS (SELECT 1 FROM Invoice i WHERE i.CustomerId = Customer.CustomerId AND i.InvoiceDate >= '2013-10-01')")
    static let relationshipFrom = Param.optionalString("from", "Table.column that points, e.g. Invoice.CustomerId")
    static let relationshipTo = Param.optionalString("to", "Table.column pointed at, e.g. Customer.CustomerId")
    static let relationshipKind = Param.optionalString("kind", "many_to_one (default) or one_to_one", values: ["many_to_one", "one_to_one"])

    static let queryMetrics = Param.strings("metrics", "Metric names or synonyms (semantic_model_get lists them)", required: true, minItems: 1)
    static let queryDimensions = Param.strings("dimensions", "Dimension names to break the metrics down by")
    static let grain = Param.optionalString("grain", "How a time dimension is bucketed", values: MetricQuery.Grain.allCases.map(\.rawValue))
    static let querySegments = Param.strings("segments", "Segment names: only their rows")
    static let filters = Param.array(
        "filters", "Conditions: {name (a dimension, or a metric asked for), op, value or values}",
        items: [
            "type": "object",
            "properties": [
                "name": ["type": "string"], "op": ["type": "string", "enum": JSON(MetricQuery.Filter.operators)], "value": [:],
                "values": ["type": "array"],
            ],
            "required": ["name", "op"], "additionalProperties": false,
        ])
    static let order = Param.array(
        "order", "Sort by metrics or dimensions asked for: [{name, direction: asc|desc}] (default: by the dimensions)",
        items: [
            "type": "object", "properties": ["name": ["type": "string"], "direction": ["type": "string", "enum": ["asc", "desc"]]], "required": ["name"],
            "additionalProperties": false,
        ])
    static let queryLimit = Param.int("limit", "At most this many rows (1 to 1000)", minimum: 1, maximum: 1000)
    static let drawChart = Param.bool("return_img", "Also draw the chart as a PNG and give its image_url (default false: the chart's spec only)").or(false)

    static let definitionOutput: JSON = ["type": "object", "properties": ["id": ["type": "integer"], "name": ["type": "string"]], "required": ["id", "name"]]

    var semanticTools: [Tool] {
        let package = self
        let semantic = asker.semantic
        let common: [any DeclaredParameter] = [Self.definitionSynonyms, Self.definitionDescription]
        let kinds: [(SemanticDefinition.Kind, [any DeclaredParameter], String)] = [
            (
                .metric, common + [Self.definitionTable, Self.metricSQL, Self.metricFilter, Self.derived, Self.format],
                "Declare a number of the business once: an aggregate over one table (table, sql, optional filter) or arithmetic over other "
                    + "metrics (derived). query_metric and both engines then compute it the same way for everyone."
            ),
            (
                .dimension, common + [Self.definitionTable, Self.dimensionSQL, Self.isTime],
                "Declare something metrics are broken down by: a column or expression of one table (time: true for a date, bucketed by grain)."
            ),
            (
                .segment, common + [Self.definitionTable, Self.segmentCondition],
                "Declare a named set of rows of one table (\"active customers\"): a condition that may read other tables and aggregates."
            ),
        ]
        var tools: [Tool] = [
            Tool.admin(
                .datasources, .datasource, "semantic_model_get",
                "The semantic model of a datasource: metrics (with their SQL), dimensions, segments, relationships and verified queries, as far "
                    + "as your role can read them. Ask for its metrics with query_metric.",
                [Self.modelDatasource],
                output: [
                    "type": "object",
                    "properties": [
                        "metrics": ["type": "array"], "dimensions": ["type": "array"], "segments": ["type": "array"], "relationships": ["type": "array"],
                        "verified_queries": ["type": "array"],
                    ],
                    "required": ["metrics", "dimensions", "segments", "relationships", "verified_queries"],
                ], change: nil
            ) { input, context in
                .structured(try await package.semanticModel(input, context))
            },
            tool(
                "query_metric",
                "Compute metrics of the semantic model by name, broken down by dimensions (a time dimension by grain), over segments and "
                    + "filters: compiled to SQL the same way every time, run through your role, with the SQL, rows, a chart and the definitions used.",
                [
                    Self.datasource, Self.queryMetrics, Self.queryDimensions, Self.grain, Self.querySegments, Self.filters, Self.order, Self.queryLimit,
                    Self.drawChart,
                ],
                output: [
                    "type": "object",
                    "properties": [
                        "datasource": ["type": "string"], "sql": ["type": "string"], "columns": ["type": "array", "items": ["type": "string"]],
                        "rows": ["type": "array", "items": ["type": "array"]], "truncated": ["type": "boolean"], "chart": ["type": "object"],
                        "image_url": ["type": ["string", "null"]], "definitions": ["type": "object"],
                    ],
                    "required": ["datasource", "sql", "columns", "rows", "truncated", "definitions"],
                ]
            ) { package, input, context in
                .structured(try await package.queryMetric(input, context))
            }.runningLong(),
        ]
        for (kind, parameters, description) in kinds {
            tools.append(
                Tool.admin(
                    .datasources, .datasource, "\(kind.plural)_create", description, [Self.modelDatasource, Self.definitionName] + parameters,
                    output: Self.definitionOutput, change: Self.changes
                ) { input, context in
                    let saved = try await semantic.create(
                        app: context.app, datasource: input[Self.modelDatasource], kind: kind, try Self.draft(input, name: Self.definitionName),
                        by: context.principal.userID)
                    return .structured(saved.json)
                })
            tools.append(
                Tool.admin(
                    .datasources, .datasource, "\(kind.plural)_update",
                    "Change a \(kind.rawValue), named by name or id: what is given replaces what was, the rest stays; it is checked and run again.",
                    [Self.modelDatasource, Self.namedOrID, Self.definitionID, Self.newName] + parameters, output: Self.definitionOutput,
                    change: Self.changes
                ) { input, context in
                    let saved = try await semantic.update(
                        app: context.app, datasource: input[Self.modelDatasource], kind: kind, named: try Self.which(input),
                        try Self.draft(input, name: Self.newName))
                    return .structured(saved.json)
                })
        }
        for kind in SemanticDefinition.Kind.allCases {
            tools.append(
                Tool.admin(
                    .datasources, .datasource, "\(kind.plural)_destroy", "Remove a \(kind.rawValue), named by name or id.",
                    [Self.modelDatasource, Self.namedOrID, Self.definitionID], output: Self.definitionOutput, change: Self.removes
                ) { input, context in
                    let removed = try await semantic.remove(app: context.app, datasource: input[Self.modelDatasource], kind: kind, named: try Self.which(input))
                    return .structured(["id": .int(removed.id), "name": .string(removed.name)])
                })
        }
        tools.append(
            Tool.admin(
                .datasources, .datasource, "relationships_create",
                "Declare how two tables relate: rows of from's table point at one row of to's (many_to_one) or one each way (one_to_one). "
                    + "It stands for every foreign key between those two tables when metrics are joined to dimensions and segments.",
                [Self.modelDatasource, Self.relationshipFrom, Self.relationshipTo, Self.relationshipKind], output: Self.definitionOutput,
                change: Self.changes
            ) { input, context in
                var draft = SemanticService.Draft()
                draft.from = try input[Self.relationshipFrom]
                draft.to = try input[Self.relationshipTo]
                draft.relationship = try input[Self.relationshipKind]
                let saved = try await semantic.create(
                    app: context.app, datasource: input[Self.modelDatasource], kind: .relationship, draft, by: context.principal.userID)
                return .structured(saved.json)
            })
        return tools
    }

    /// The definition a call names: by id, else by name.
    static func which(_ input: ToolInput) throws -> String {
        if let id = try input[Self.definitionID] { return String(id) }
        guard let name = try input[Self.namedOrID] else { throw ToolError("name which one: give its name or its id (semantic_model_get lists both)") }
        return name
    }

    static func draft(_ input: ToolInput, name: Parameter<String>) throws -> SemanticService.Draft {
        var draft = try draft(input, name: name.map { Optional($0) })
        draft.name = try input[name]
        return draft
    }

    /// What a create or update call gives; only the parameters its tool declared are read.
    static func draft(_ input: ToolInput, name: Parameter<String?>) throws -> SemanticService.Draft {
        var draft = SemanticService.Draft()
        let declared = Set(input.declared)
        draft.name = try input[name]
        draft.synonyms = try input[Self.definitionSynonyms]
        draft.description = try input[Self.definitionDescription]
        draft.table = try input[Self.definitionTable]
        if declared.contains("derived") {
            draft.sql = try input[Self.metricSQL]
            draft.filter = try input[Self.metricFilter]
            draft.derived = try input[Self.derived]
            draft.format = try input[Self.format]
        }
        if declared.contains("time") {
            draft.sql = try input[Self.dimensionSQL]
            draft.time = try input[Self.isTime]
        }
        if declared.contains("condition") { draft.condition = try input[Self.segmentCondition] }
        return draft
    }

    func semanticModel(_ input: ToolInput, _ context: CallContext) async throws -> JSON {
        let datasource = try input[Self.modelDatasource]
        let caller = try await caller(context)
        let model = try await asker.semantic.model(app: context.app, datasource: datasource, caller: caller)
        let examples = try await asker.knowledge.examples(app: context.app, datasource: datasource, caller: caller)
        var object: JSONObject = ["datasource": .string(datasource)]
        for kind in SemanticDefinition.Kind.allCases { object[kind.plural] = .array(model.all(kind).map(\.json)) }
        object["verified_queries"] = .array(examples.map(\.json))
        return .object(object)
    }

    func queryMetric(_ input: ToolInput, _ context: CallContext) async throws -> JSON {
        let datasource = try input[Self.datasource]
        var query = MetricQuery(metrics: try input[Self.queryMetrics] ?? [])
        query.dimensions = try input[Self.queryDimensions] ?? []
        query.grain = try input[Self.grain].flatMap(MetricQuery.Grain.init(rawValue:))
        query.segments = try input[Self.querySegments] ?? []
        query.limit = try input[Self.queryLimit]
        query.filters = try input[Self.filters].enumerated().map { i, item in
            guard let object = item.objectValue, let name = object["name"]?.stringValue, let op = object["op"]?.stringValue else {
                throw ToolError("filters[\(i)] is {name, op, value or values}")
            }
            var values = try (object["values"]?.arrayValue ?? []).map { try Self.sqlValue($0, at: "filters[\(i)].values") }
            if let value = object["value"] { values.insert(try Self.sqlValue(value, at: "filters[\(i)].value"), at: 0) }
            if object["value"]?.isNull == true, ["is null", "is not null"].contains(op.lowercased()) { values = [] }
            return MetricQuery.Filter(name: name, op: op, values: values)
        }
        query.order = try input[Self.order].enumerated().map { i, item in
            guard let name = item.objectValue?["name"]?.stringValue else { throw ToolError("order[\(i)] is {name, direction}") }
            return MetricQuery.Order(name: name, descending: item.objectValue?["direction"]?.stringValue?.lowercased() == "desc")
        }
        context.progress("computing \(query.metrics.joined(separator: ", ")) on \(datasource)")
        let result = try await asker.semantic.query(app: context.app, datasource: datasource, query, caller: try await caller(context))
        let compiled = result.compiled
        let overTime = query.grain != nil || compiled.dimensions.contains { if case .dimension(_, _, true) = $0.body { true } else { false } }
        let title =
            compiled.metrics.prefix(query.metrics.count).map(\.name).joined(separator: ", ")
            + (compiled.dimensions.isEmpty ? "" : " by " + compiled.dimensions.map(\.name).joined(separator: ", "))
        let (chart, image) = try await asker.chart(of: result.answer, title: title, overTime: overTime, draw: try input[Self.drawChart])
        return [
            "datasource": .string(result.answer.datasource), "sql": .string(result.answer.sql), "columns": .array(result.answer.columns.map(JSON.string)),
            "rows": .array(result.answer.rows.map { .array($0.map(\.json)) }), "truncated": .bool(result.answer.truncated), "chart": chart.json,
            "image_url": image.map { .string(imageBaseURL + $0) } ?? .null,
            "definitions": [
                "metrics": .array(compiled.metrics.map(\.json)), "dimensions": .array(compiled.dimensions.map(\.json)),
                "segments": .array(compiled.segments.map(\.json)), "relationships": .array(compiled.relationships.map(\.json)),
            ],
        ]
    }

    static func sqlValue(_ json: JSON, at path: String) throws -> SQLValue {
        switch json {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .double(let d): return .double(d)
        case .string(let s): return .text(s)
        default: throw ToolError("\(path) is a string, a number, true, false or null; got \(json.typeName)")
        }
    }
}

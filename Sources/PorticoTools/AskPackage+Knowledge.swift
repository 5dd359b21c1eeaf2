import PorticoAsk
import PorticoAskEngine
import PorticoAuth
import PorticoData
import PorticoJSON
import PorticoMCP

/// The `ask` package's tools for what teaches the engines: terms and examples. Anyone who may
/// ask reads them (only those their role could read the SQL of); an app's administrators
/// change them (`write:datasource`). The rules live in `KnowledgeService`.
extension AskPackage {
    static let termID = Param.int("id", "The term's id (terms_list gives it)", minimum: 1).map { id -> Int64 in
        guard let id else { throw ToolError("id is required: the term's id from terms_list") }
        return Int64(id)
    }
    static let exampleID = Param.int("id", "The example's id (examples_list gives it)", minimum: 1).map { id -> Int64 in
        guard let id else { throw ToolError("id is required: the example's id from examples_list") }
        return Int64(id)
    }
    static let knowledgeDatasource = Param.string("datasource", "Datasource name from datasources_list (main is the app's own collections)")
    static let term = Param.string("term", "The word or phrase, as people ask it (\"revenue\", \"active customer\")")
    static let newTerm = Param.optionalString("term", "The word or phrase")
    static let synonyms = Param.strings("synonyms", "Other words for it")
    static let termDescription = Param.optionalString("description", "What it means, in words (shown to LLMs)")
    static let column = Param.optionalString("column", "The column it names, written Table.Column")
    static let sqlOnTable: JSONObject = [
        "properties": ["table": ["type": "string"], "sql": ["type": "string"]], "required": ["table", "sql"], "additionalProperties": false,
    ]
    static let expression = Param.jsonObject(
        "expression", "What it computes per row of one table: {table, sql}, e.g. {\"table\": \"InvoiceLine\", \"sql\": \"UnitPrice * Quantity\"}",
        schema: sqlOnTable)
    static let condition = Param.jsonObject(
        "condition", "Which rows of one table it means: {table, sql}, e.g. {\"table\": \"Customer\", \"sql\": \"SupportRepId IS NOT NULL\"}",
        schema: sqlOnTable)
    static let exampleQuestion = Param.optionalString("question", "The question")
    static let exampleSQL = Param.optionalString("sql", "One SELECT that answers it, in the datasource's dialect")
    static let exampleDatasource = Param.optionalString("datasource", "Datasource name (with question and sql)")
    static let recordID = Param.int("record_id", "With chat_id: the record_id of an ask answer to save as an example", minimum: 1)

    static let termOutput: JSON = [
        "type": "object",
        "properties": [
            "id": ["type": "integer"], "datasource": ["type": "string"], "term": ["type": "string"],
            "synonyms": ["type": "array", "items": ["type": "string"]],
            "description": ["type": ["string", "null"]], "column": ["type": "string"], "expression": ["type": "object"], "condition": ["type": "object"],
        ],
        "required": ["id", "datasource", "term", "synonyms"],
    ]
    static let exampleOutput: JSON = [
        "type": "object",
        "properties": [
            "id": ["type": "integer"], "datasource": ["type": "string"], "question": ["type": "string"], "sql": ["type": "string"],
            "verified_by": ["type": ["integer", "null"]],
        ],
        "required": ["id", "datasource", "question", "sql"],
    ]

    static let changes = ToolAnnotations(readOnly: false, destructive: false, idempotent: false)
    static let removes = ToolAnnotations(readOnly: false, destructive: true, idempotent: true)

    var knowledgeTools: [Tool] {
        let knowledge = asker.knowledge
        let package = self
        return [
            Tool.admin(
                .datasources, .datasource, "terms_list",
                "The business terms of a datasource: each word, its synonyms, and the column, expression or condition it means. Both engines read them.",
                [Self.knowledgeDatasource],
                output: ["type": "object", "properties": ["data": ["type": "array", "items": Self.termOutput]], "required": ["data"]],
                change: nil
            ) { input, context in
                let terms = try await knowledge.terms(app: context.app, datasource: input[Self.knowledgeDatasource], caller: package.caller(context))
                return .structured(["data": .array(terms.map(\.json))])
            },
            Tool.admin(
                .datasources, .datasource, "terms_create",
                "Teach both engines a word of the business: give at most one of column (Table.Column), expression {table, sql} (computed per row) "
                    + "or condition {table, sql} (which rows it means). The names are checked against the datasource and the SQL runs once before it is saved.",
                [Self.knowledgeDatasource, Self.term, Self.synonyms, Self.termDescription, Self.column, Self.expression, Self.condition],
                output: Self.termOutput, change: Self.changes
            ) { input, context in
                let saved = try await knowledge.addTerm(
                    app: context.app, datasource: input[Self.knowledgeDatasource], term: input[Self.term], synonyms: input[Self.synonyms] ?? [],
                    description: input[Self.termDescription], meaning: try Self.meaning(input), by: context.principal.userID)
                return .structured(saved.json)
            },
            Tool.admin(
                .datasources, .datasource, "terms_update",
                "Change a term: what is given replaces what was (its meaning too: column, expression or condition); the rest stays.",
                [Self.termID, Self.newTerm, Self.synonyms, Self.termDescription, Self.column, Self.expression, Self.condition],
                output: Self.termOutput, change: Self.changes
            ) { input, context in
                var change = KnowledgeService.TermChange()
                change.term = try input[Self.newTerm]
                change.synonyms = try input[Self.synonyms]
                change.description = try input[Self.termDescription]
                change.meaning = try Self.meaning(input)
                let saved = try await knowledge.updateTerm(app: context.app, id: input[Self.termID], change, by: context.principal.userID)
                return .structured(saved.json)
            },
            Tool.admin(
                .datasources, .datasource, "terms_destroy", "Remove a term.", [Self.termID],
                output: ["type": "object", "properties": ["id": ["type": "integer"]], "required": ["id"]], change: Self.removes
            ) { input, context in
                let id = try input[Self.termID]
                try await knowledge.removeTerm(app: context.app, id: id)
                return .structured(["id": .int(id)])
            },
            Tool.admin(
                .datasources, .datasource, "examples_list",
                "The saved question → SQL examples of a datasource. A question with the same words and other values is answered from one by the "
                    + "built-in engine; an LLM is shown the most similar.",
                [Self.knowledgeDatasource],
                output: ["type": "object", "properties": ["data": ["type": "array", "items": Self.exampleOutput]], "required": ["data"]], change: nil
            ) { input, context in
                let examples = try await knowledge.examples(
                    app: context.app, datasource: input[Self.knowledgeDatasource], caller: package.caller(context))
                return .structured(["data": .array(examples.map(\.json))])
            },
            Tool.admin(
                .datasources, .datasource, "examples_create",
                "Save an example: {datasource, question, sql} (the SQL passes the guard and runs once), or {chat_id, record_id} to save an answer "
                    + "of your chat as verified by you.",
                [Self.exampleDatasource, Self.exampleQuestion, Self.exampleSQL, Self.chatID, Self.recordID], output: Self.exampleOutput,
                change: Self.changes
            ) { input, context in
                let saved = try await package.createExample(input, context)
                return .structured(saved.json)
            },
            Tool.admin(
                .datasources, .datasource, "examples_destroy", "Remove an example.", [Self.exampleID],
                output: ["type": "object", "properties": ["id": ["type": "integer"]], "required": ["id"]], change: Self.removes
            ) { input, context in
                let id = try input[Self.exampleID]
                try await knowledge.removeExample(app: context.app, id: id)
                return .structured(["id": .int(id)])
            },
        ]
    }

    /// The meaning a call gives, if any: at most one of column, expression and condition.
    static func meaning(_ input: ToolInput) throws -> KnowledgeService.MeaningDraft? {
        let column = try input[Self.column]
        let expression = try input[Self.expression]
        let condition = try input[Self.condition]
        guard [column != nil, expression != nil, condition != nil].filter({ $0 }).count <= 1 else {
            throw ToolError("give at most one of column, expression and condition: a term means one thing")
        }
        func part(_ object: JSONObject, _ name: String) throws -> (String, String) {
            guard let table = object["table"]?.stringValue, let sql = object["sql"]?.stringValue else {
                throw ToolError("\(name) is {\"table\": \"…\", \"sql\": \"…\"}")
            }
            return (table, sql)
        }
        if let column { return .column(column) }
        if let expression {
            let (table, sql) = try part(expression, "expression")
            return .expression(table: table, sql: sql)
        }
        if let condition {
            let (table, sql) = try part(condition, "condition")
            return .condition(table: table, sql: sql)
        }
        return nil
    }

    func createExample(_ input: ToolInput, _ context: CallContext) async throws -> Example {
        let chatID = try input[Self.chatID]
        let recordID = try input[Self.recordID]
        let question = try input[Self.exampleQuestion]
        let sql = try input[Self.exampleSQL]
        let datasource = try input[Self.exampleDatasource]
        if chatID != nil || recordID != nil {
            guard let chatID, let recordID, question == nil, sql == nil else {
                throw ToolError("save an answer with chat_id and record_id only, or give datasource, question and sql")
            }
            guard let userID = context.principal.userID else { throw ToolError("only a signed-in user has chats to save answers from") }
            return try await asker.knowledge.saveAnswer(
                app: context.app, chatID: Int64(chatID), recordID: Int64(recordID), userID: userID, caller: try await caller(context))
        }
        guard let datasource, let question, let sql else {
            throw ToolError("give datasource, question and sql (or chat_id and record_id of an answer to save)")
        }
        return try await asker.knowledge.addExample(
            app: context.app, datasource: datasource, question: question, sql: sql, by: context.principal.userID, caller: try await caller(context))
    }
}

import Foundation
public import PorticoAskEngine
import PorticoData
import PorticoJSON
import PorticoStore

/// The semantic layer's definitions, in `portico_semantic` of the app's own database beside its
/// terms and examples: a row per definition, its body as JSON.
extension KnowledgeStore {
    public func semanticDefinitions(app: String, datasource: String) async throws -> [SemanticDefinition] {
        try await rows(of: "portico_semantic", app: app, datasource: datasource).compactMap(Self.definition)
    }

    /// Stores a new definition; returns it with its id.
    public func insert(_ definition: SemanticDefinition, app: String) async throws -> SemanticDefinition {
        var insert = SQLFragment("INSERT INTO portico_semantic (app, datasource, kind, name, definition, created_by, created_at, updated_at) VALUES (")
        insert.append(
            joining: [
                .bind(.text(app)), .bind(.text(definition.datasource)), .bind(.text(definition.kind.rawValue)), .bind(.text(definition.name)),
                .bind(.text(Self.body(definition).serializedString)), .bind(definition.createdBy.map(SQLValue.int) ?? .null), .bind(.int(Self.now)),
                .bind(.int(Self.now)),
            ], separator: ", ")
        insert.append(") RETURNING id")
        var stored = definition
        stored.id = try await databases(app).query(insert).first?.int("id") ?? 0
        return stored
    }

    public func update(_ definition: SemanticDefinition, app: String) async throws {
        var update = SQLFragment("UPDATE portico_semantic SET name = ")
        update.append(bind: .text(definition.name))
        update.append(", definition = ")
        update.append(bind: .text(Self.body(definition).serializedString))
        update.append(", updated_at = ")
        update.append(bind: .int(Self.now))
        update.append(" WHERE app = ")
        update.append(bind: .text(app))
        update.append(" AND id = ")
        update.append(bind: .int(definition.id))
        try await databases(app).execute(update)
    }

    /// Whether there was such a definition.
    public func removeSemanticDefinition(app: String, id: Int64) async throws -> Bool {
        try await remove(from: "portico_semantic", app: app, id: id)
    }

    /// All but the id, the name and the kind, which have columns of their own.
    static func body(_ d: SemanticDefinition) -> JSON {
        var object: JSONObject = ["synonyms": .array(d.synonyms.map(JSON.string))]
        if let description = d.description { object["description"] = .string(description) }
        if let format = d.format { object["format"] = .string(format) }
        switch d.body {
        case .metric(let table, let sql, let filter):
            object["table"] = .string(table)
            object["sql"] = .string(sql)
            if let filter { object["filter"] = .string(filter) }
        case .derived(let expression):
            object["derived"] = .string(expression)
        case .dimension(let table, let sql, let time):
            object["table"] = .string(table)
            object["sql"] = .string(sql)
            object["time"] = .bool(time)
        case .segment(let table, let condition):
            object["table"] = .string(table)
            object["condition"] = .string(condition)
        case .relationship(let from, let to, let oneToOne):
            object["from"] = ["table": .string(from.table), "column": .string(from.column)]
            object["to"] = ["table": .string(to.table), "column": .string(to.column)]
            object["one_to_one"] = .bool(oneToOne)
        }
        return .object(object)
    }

    /// A row read back; `nil` for a row this version cannot read (a kind it does not know).
    static func definition(_ row: Row) -> SemanticDefinition? {
        guard let kind = row.string("kind").flatMap(SemanticDefinition.Kind.init(rawValue:)),
            let object = (try? JSONParser.parse(row.string("definition") ?? "{}"))?.objectValue
        else { return nil }
        let text = { (key: String) in object[key]?.stringValue }
        func reference(_ key: String) -> SemanticDefinition.ColumnReference? {
            guard let part = object[key]?.objectValue, let table = part["table"]?.stringValue, let column = part["column"]?.stringValue else { return nil }
            return .init(table: table, column: column)
        }
        let body: SemanticDefinition.Body
        switch kind {
        case .metric:
            if let derived = text("derived") {
                body = .derived(derived)
            } else {
                guard let table = text("table"), let sql = text("sql") else { return nil }
                body = .metric(table: table, sql: sql, filter: text("filter"))
            }
        case .dimension:
            guard let table = text("table"), let sql = text("sql") else { return nil }
            body = .dimension(table: table, sql: sql, time: object["time"]?.boolValue ?? false)
        case .segment:
            guard let table = text("table"), let condition = text("condition") else { return nil }
            body = .segment(table: table, condition: condition)
        case .relationship:
            guard let from = reference("from"), let to = reference("to") else { return nil }
            body = .relationship(from: from, to: to, oneToOne: object["one_to_one"]?.boolValue ?? false)
        }
        return SemanticDefinition(
            id: row.int("id") ?? 0, datasource: row.string("datasource") ?? "", name: row.string("name") ?? "",
            synonyms: object["synonyms"]?.arrayValue?.compactMap(\.stringValue) ?? [], description: text("description"), format: text("format"),
            body: body, createdBy: row.int("created_by"))
    }
}

import Foundation
public import PorticoAskEngine
import PorticoData
import PorticoJSON
public import PorticoStore

/// The terms, examples and instructions of each app, in the app's own database (`KnowledgeTables`).
public struct KnowledgeStore: Sendable {
    let databases: @Sendable (String) async throws -> any Database

    public init(databases: @escaping @Sendable (String) async throws -> any Database) {
        self.databases = databases
    }

    // MARK: Terms

    public func terms(app: String, datasource: String) async throws -> [Term] {
        try await rows(of: "portico_terms", app: app, datasource: datasource).map(Self.term)
    }

    public func term(app: String, id: Int64) async throws -> Term? {
        try await row(of: "portico_terms", app: app, id: id).map(Self.term)
    }

    /// Stores a new term; returns it with its id.
    public func insert(_ term: Term, app: String) async throws -> Term {
        var insert = SQLFragment(
            "INSERT INTO portico_terms (app, datasource, term, synonyms, description, meaning, target_table, target, created_by, created_at) VALUES (")
        insert.append(joining: [.bind(.text(app)), .bind(.text(term.datasource))] + Self.values(term) + [.bind(.int(Self.now))], separator: ", ")
        insert.append(") RETURNING id")
        var stored = term
        stored.id = try await databases(app).query(insert).first?.int("id") ?? 0
        return stored
    }

    public func update(_ term: Term, app: String) async throws {
        var update = SQLFragment("UPDATE portico_terms SET ")
        let columns = ["term", "synonyms", "description", "meaning", "target_table", "target", "created_by"]
        update.append(
            joining: zip(columns, Self.values(term)).map { column, value in
                var set = SQLFragment.identifier(column)
                set.append(" = ")
                set.append(value)
                return set
            }, separator: ", ")
        update.append(" WHERE app = ")
        update.append(bind: .text(app))
        update.append(" AND id = ")
        update.append(bind: .int(term.id))
        try await databases(app).execute(update)
    }

    /// Whether there was such a term.
    public func removeTerm(app: String, id: Int64) async throws -> Bool {
        try await remove(from: "portico_terms", app: app, id: id)
    }

    static func values(_ term: Term) -> [SQLFragment] {
        let text = { (value: String?) in SQLFragment.bind(value.map(SQLValue.text) ?? .null) }
        var target: (table: String?, text: String?) = (nil, nil)
        switch term.meaning {
        case .column(let table, let column)?: target = (table, column)
        case .expression(let table, let sql)?, .condition(let table, let sql)?: target = (table, sql)
        case nil: break
        }
        return [
            .bind(.text(term.term)), .bind(.text(JSON.array(term.synonyms.map(JSON.string)).serializedString)), text(term.description),
            text(term.meaning?.kind), text(target.table), text(target.text), .bind(term.createdBy.map(SQLValue.int) ?? .null),
        ]
    }

    static func term(_ row: Row) -> Term {
        let synonyms = (try? JSONParser.parse(row.string("synonyms") ?? "[]"))?.arrayValue?.compactMap(\.stringValue) ?? []
        let table = row.string("target_table") ?? ""
        let target = row.string("target") ?? ""
        let meaning: Term.Meaning? =
            switch row.string("meaning") {
            case "column"?: .column(table: table, column: target)
            case "expression"?: .expression(table: table, sql: target)
            case "condition"?: .condition(table: table, sql: target)
            default: nil
            }
        return Term(
            id: row.int("id") ?? 0, datasource: row.string("datasource") ?? "", term: row.string("term") ?? "", synonyms: synonyms,
            description: row.string("description"), meaning: meaning, createdBy: row.int("created_by"))
    }

    // MARK: Examples

    public func examples(app: String, datasource: String) async throws -> [Example] {
        try await rows(of: "portico_examples", app: app, datasource: datasource).map(Self.example)
    }

    public func example(app: String, id: Int64) async throws -> Example? {
        try await row(of: "portico_examples", app: app, id: id).map(Self.example)
    }

    public func insert(_ example: Example, app: String) async throws -> Example {
        let now = Self.now
        var insert = SQLFragment("INSERT INTO portico_examples (app, datasource, question, sql, verified_by, created_at) VALUES (")
        insert.append(
            joining: [
                .bind(.text(app)), .bind(.text(example.datasource)), .bind(.text(example.question)), .bind(.text(example.sql)),
                .bind(example.verifiedBy.map(SQLValue.int) ?? .null), .bind(.int(now)),
            ], separator: ", ")
        insert.append(") RETURNING id")
        var stored = example
        stored.id = try await databases(app).query(insert).first?.int("id") ?? 0
        stored.verifiedAt = now
        return stored
    }

    public func removeExample(app: String, id: Int64) async throws -> Bool {
        try await remove(from: "portico_examples", app: app, id: id)
    }

    static func example(_ row: Row) -> Example {
        Example(
            id: row.int("id") ?? 0, datasource: row.string("datasource") ?? "", question: row.string("question") ?? "", sql: row.string("sql") ?? "",
            verifiedBy: row.int("verified_by"), verifiedAt: row.int("created_at"))
    }

    // MARK: Instructions

    /// The free-text instructions for LLMs on a datasource, when there are any.
    public func instructions(app: String, datasource: String) async throws -> String? {
        var q = SQLFragment("SELECT text FROM portico_instructions WHERE app = ")
        q.append(bind: .text(app))
        q.append(" AND datasource = ")
        q.append(bind: .text(datasource))
        return try await databases(app).query(q).first?.string("text")
    }

    /// Replaces the instructions; `nil` or empty removes them.
    public func setInstructions(app: String, datasource: String, text: String?, by userID: Int64?) async throws {
        let database = try await databases(app)
        try await database.transaction { db in
            var delete = SQLFragment("DELETE FROM portico_instructions WHERE app = ")
            delete.append(bind: .text(app))
            delete.append(" AND datasource = ")
            delete.append(bind: .text(datasource))
            try await db.execute(delete)
            guard let text, !text.isEmpty else { return }
            var insert = SQLFragment("INSERT INTO portico_instructions (app, datasource, text, updated_by, updated_at) VALUES (")
            insert.append(
                joining: [.bind(.text(app)), .bind(.text(datasource)), .bind(.text(text)), .bind(userID.map(SQLValue.int) ?? .null), .bind(.int(Self.now))],
                separator: ", ")
            insert.append(")")
            try await db.execute(insert)
        }
    }

    // MARK: -

    /// The rows of `table` (terms, examples, semantic definitions) for one datasource of `app`, in the order they were made.
    func rows(of table: String, app: String, datasource: String) async throws -> [Row] {
        var q = SQLFragment("SELECT * FROM ")
        q.append(identifier: table)
        q.append(" WHERE app = ")
        q.append(bind: .text(app))
        q.append(" AND datasource = ")
        q.append(bind: .text(datasource))
        q.append(" ORDER BY id")
        return try await databases(app).query(q)
    }

    /// The row of `table` with `id` in `app`, if there is one.
    func row(of table: String, app: String, id: Int64) async throws -> Row? {
        try await databases(app).query(Self.byID("SELECT * FROM ", table, app: app, id: id)).first
    }

    func remove(from table: String, app: String, id: Int64) async throws -> Bool {
        var q = Self.byID("DELETE FROM ", table, app: app, id: id)
        q.append(" RETURNING id")
        return try await !databases(app).query(q).isEmpty
    }

    /// `start` on `table`, for the row of `app` with `id`.
    private static func byID(_ start: String, _ table: String, app: String, id: Int64) -> SQLFragment {
        var q = SQLFragment(start)
        q.append(identifier: table)
        q.append(" WHERE app = ")
        q.append(bind: .text(app))
        q.append(" AND id = ")
        q.append(bind: .int(id))
        return q
    }

    static var now: Int64 { Int64(Date().timeIntervalSince1970) }
}

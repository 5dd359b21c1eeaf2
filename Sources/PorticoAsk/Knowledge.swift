import Foundation
public import PorticoData
public import PorticoJSON

/// A word of the business and what it means in a datasource: SQLBot's terminology, WrenAI's
/// semantic model. Both engines read it: the built-in one as a column, a measure or a filter it
/// understands; an LLM in its prompt.
public struct Term: Sendable, Equatable {
    /// What the word stands for in SQL, on one table.
    public enum Meaning: Sendable, Equatable {
        /// `Table.Column`: another name for a column ("headcount" for `Employees`).
        case column(table: String, column: String)
        /// A per-row value computed from one table's columns (revenue = `UnitPrice * Quantity`).
        case expression(table: String, sql: String)
        /// Which rows of one table the word means ("active customer" = `SupportRepId IS NOT NULL`).
        case condition(table: String, sql: String)

        public var table: String {
            switch self {
            case .column(let table, _), .expression(let table, _), .condition(let table, _): table
            }
        }

        public var kind: String {
            switch self {
            case .column: "column"
            case .expression: "expression"
            case .condition: "condition"
            }
        }
    }

    public var id: Int64
    public var datasource: String
    public var term: String
    public var synonyms: [String]
    public var description: String?
    public var meaning: Meaning?
    /// Who saved it (a user id; `nil` from the command line).
    public var createdBy: Int64?

    public init(
        id: Int64 = 0, datasource: String, term: String, synonyms: [String] = [], description: String? = nil, meaning: Meaning? = nil,
        createdBy: Int64? = nil
    ) {
        self.id = id
        self.datasource = datasource
        self.term = term
        self.synonyms = synonyms
        self.description = description
        self.meaning = meaning
        self.createdBy = createdBy
    }

    /// The term and its synonyms: every phrase that means it.
    public var phrases: [String] { [term] + synonyms }

    /// The shape PRODUCT.md gives `terms_create`: at most one of column / expression / condition.
    public var json: JSON {
        var object: JSONObject = [
            "id": .int(id), "datasource": .string(datasource), "term": .string(term), "synonyms": .array(synonyms.map(JSON.string)),
            "description": description.map(JSON.string) ?? .null,
        ]
        switch meaning {
        case .column(let table, let column)?: object["column"] = .string("\(table).\(column)")
        case .expression(let table, let sql)?: object["expression"] = ["table": .string(table), "sql": .string(sql)]
        case .condition(let table, let sql)?: object["condition"] = ["table": .string(table), "sql": .string(sql)]
        case nil: break
        }
        object["created_by"] = createdBy.map(JSON.int) ?? .null
        return .object(object)
    }
}

/// A question and the SQL that answers it, checked by the guard when saved and verified by the
/// user who saved it.
public struct Example: Sendable, Equatable {
    public var id: Int64
    public var datasource: String
    public var question: String
    public var sql: String
    public var verifiedBy: Int64?

    public init(id: Int64 = 0, datasource: String, question: String, sql: String, verifiedBy: Int64? = nil) {
        self.id = id
        self.datasource = datasource
        self.question = question
        self.sql = sql
        self.verifiedBy = verifiedBy
    }

    public var json: JSON {
        [
            "id": .int(id), "datasource": .string(datasource), "question": .string(question), "sql": .string(sql),
            "verified_by": verifiedBy.map(JSON.int) ?? .null,
        ]
    }
}

/// The terms, examples and instructions of each app, in the app's own database (`KnowledgeTables`).
public struct KnowledgeStore: Sendable {
    let databases: @Sendable (String) async throws -> any Database

    public init(databases: @escaping @Sendable (String) async throws -> any Database) {
        self.databases = databases
    }

    // MARK: Terms

    public func terms(app: String, datasource: String) async throws -> [Term] {
        var q = SQLFragment("SELECT * FROM portico_terms WHERE app = ")
        q.append(bind: .text(app))
        q.append(" AND datasource = ")
        q.append(bind: .text(datasource))
        q.append(" ORDER BY id")
        return try await databases(app).query(q).map(Self.term)
    }

    public func term(app: String, id: Int64) async throws -> Term? {
        var q = SQLFragment("SELECT * FROM portico_terms WHERE app = ")
        q.append(bind: .text(app))
        q.append(" AND id = ")
        q.append(bind: .int(id))
        return try await databases(app).query(q).first.map(Self.term)
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
        var q = SQLFragment("SELECT * FROM portico_examples WHERE app = ")
        q.append(bind: .text(app))
        q.append(" AND datasource = ")
        q.append(bind: .text(datasource))
        q.append(" ORDER BY id")
        return try await databases(app).query(q).map(Self.example)
    }

    public func example(app: String, id: Int64) async throws -> Example? {
        var q = SQLFragment("SELECT * FROM portico_examples WHERE app = ")
        q.append(bind: .text(app))
        q.append(" AND id = ")
        q.append(bind: .int(id))
        return try await databases(app).query(q).first.map(Self.example)
    }

    public func insert(_ example: Example, app: String) async throws -> Example {
        var insert = SQLFragment("INSERT INTO portico_examples (app, datasource, question, sql, verified_by, created_at) VALUES (")
        insert.append(
            joining: [
                .bind(.text(app)), .bind(.text(example.datasource)), .bind(.text(example.question)), .bind(.text(example.sql)),
                .bind(example.verifiedBy.map(SQLValue.int) ?? .null), .bind(.int(Self.now)),
            ], separator: ", ")
        insert.append(") RETURNING id")
        var stored = example
        stored.id = try await databases(app).query(insert).first?.int("id") ?? 0
        return stored
    }

    public func removeExample(app: String, id: Int64) async throws -> Bool {
        try await remove(from: "portico_examples", app: app, id: id)
    }

    static func example(_ row: Row) -> Example {
        Example(
            id: row.int("id") ?? 0, datasource: row.string("datasource") ?? "", question: row.string("question") ?? "", sql: row.string("sql") ?? "",
            verifiedBy: row.int("verified_by"))
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

    func remove(from table: String, app: String, id: Int64) async throws -> Bool {
        var q = SQLFragment("DELETE FROM ")
        q.append(identifier: table)
        q.append(" WHERE app = ")
        q.append(bind: .text(app))
        q.append(" AND id = ")
        q.append(bind: .int(id))
        q.append(" RETURNING id")
        return try await !databases(app).query(q).isEmpty
    }

    static var now: Int64 { Int64(Date().timeIntervalSince1970) }
}

import Foundation
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
    /// When it was saved (and so verified), in seconds since 1970; `nil` before it is stored.
    public var verifiedAt: Int64?

    public init(id: Int64 = 0, datasource: String, question: String, sql: String, verifiedBy: Int64? = nil, verifiedAt: Int64? = nil) {
        self.id = id
        self.datasource = datasource
        self.question = question
        self.sql = sql
        self.verifiedBy = verifiedBy
        self.verifiedAt = verifiedAt
    }

    public var json: JSON {
        [
            "id": .int(id), "datasource": .string(datasource), "question": .string(question), "sql": .string(sql),
            "verified_by": verifiedBy.map(JSON.int) ?? .null,
            "verified_at": verifiedAt.map { .string(Date(timeIntervalSince1970: TimeInterval($0)).formatted(.iso8601)) } ?? .null,
        ]
    }
}

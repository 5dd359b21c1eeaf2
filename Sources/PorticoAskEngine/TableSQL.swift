import Foundation
import PorticoBase
public import PorticoStore

/// An SQL expression or condition over one table's columns, as a term defines it: checked to be
/// one value-level piece of SQL (no statement, no subquery, no aggregate), and split so that
/// each of the table's columns it names can be written qualified by the alias a query gives
/// the table (`t2."UnitPrice" * t2."Quantity"`), whatever else the query joins.
public struct TableSQL: Sendable, Equatable {
    package enum Piece: Sendable, Equatable {
        case text(String)
        case column(String)
    }

    package let pieces: [Piece]
    /// How its columns are quoted when written out (`"…"`, MySQL's `` `…` ``).
    package let dialect: SQLDialect
    /// A condition that reads other tables (a subquery, an aggregate): kept as written and
    /// applied as membership of the table's rows, by their key, in the rows it keeps, so that no
    /// name in it is confused with a joined table's.
    package let membership: Membership?

    package struct Membership: Sendable, Equatable {
        package let table: String
        package let key: String
        package let condition: String
    }

    /// Words that would make the piece more than an expression: a statement, a subquery, a clause.
    package static let clauseWords: Set<String> = [
        "SELECT", "FROM", "WHERE", "UNION", "INTERSECT", "EXCEPT", "WITH", "GROUP", "ORDER", "LIMIT", "OFFSET", "HAVING", "JOIN", "INTO",
        "RETURNING", "WINDOW", "OVER", "FETCH", "VALUES", "INSERT", "UPDATE", "DELETE", "PRAGMA", "ATTACH",
    ]
    /// Functions over many rows: the engines apply SUM, AVG and the like as the question asks.
    package static let aggregates: Set<String> = [
        "COUNT", "SUM", "AVG", "TOTAL", "GROUP_CONCAT", "STRING_AGG", "ARRAY_AGG", "JSON_GROUP_ARRAY", "JSON_AGG", "BOOL_AND", "BOOL_OR", "EVERY",
    ]
    package static let maxLength = 2000

    /// Splits `sql`, whose column names are `columns` (the table's), or says what is wrong with it.
    public init(_ sql: String, columns: [String], dialect: SQLDialect, what: String) throws(DatasourceError) {
        self.dialect = dialect
        membership = nil
        guard !sql.trimmingSpaces().isEmpty else { throw DatasourceError("the \(what) is empty; write SQL over the table's columns") }
        guard sql.utf8.count <= Self.maxLength else { throw DatasourceError("the \(what) is \(sql.utf8.count) bytes; write one of at most \(Self.maxLength)") }
        let tokens: [SQLToken]
        do { tokens = try SQLTokenizer.tokenize(sql, dialect: dialect) } catch { throw DatasourceError("the \(what) is not SQL: \(error.message)") }
        var depth = 0
        for (i, token) in tokens.enumerated() {
            if token.isPunctuation("(") { depth += 1 }
            if token.isPunctuation(")") { depth -= 1 }
            guard depth >= 0 else { throw DatasourceError("the \(what) closes a parenthesis it did not open") }
            if token.isPunctuation(";") { throw DatasourceError("the \(what) is one piece of SQL, without ';'") }
            if token.kind == .parameter { throw DatasourceError("the \(what) cannot take parameters ('\(token.text)'); write the value in it") }
            if Self.clauseWords.contains(token.keyword) {
                throw DatasourceError(
                    "the \(what) is one value over the table's columns, not a query: '\(token.text)' is not allowed (write e.g. UnitPrice * Quantity)")
            }
            if Self.aggregates.contains(token.keyword), i + 1 < tokens.count, tokens[i + 1].isPunctuation("(") {
                throw DatasourceError(
                    "the \(what) is computed for each row; leave out \(token.keyword)(…): the question decides whether it is summed, averaged or counted")
            }
        }
        guard depth == 0 else { throw DatasourceError("the \(what) leaves a parenthesis open") }
        let names = Dictionary(columns.map { ($0.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
        let utf8 = Array(sql.utf8)
        var pieces: [Piece] = []
        var at = tokens.first?.offset ?? 0
        for (i, token) in tokens.enumerated() {
            guard token.kind == .word || token.kind == .quotedIdentifier, let name = names[token.text.lowercased()] else { continue }
            // Not a function's name, not the second half of a qualified name.
            if token.kind == .word, i + 1 < tokens.count, tokens[i + 1].isPunctuation("(") { continue }
            if i > 0, tokens[i - 1].isPunctuation(".") {
                throw DatasourceError("the \(what) names columns of its own table only, without a table before them ('\(name)')")
            }
            if token.offset > at { pieces.append(.text(String(decoding: utf8[at..<token.offset], as: UTF8.self))) }
            pieces.append(.column(name))
            at = token.end(in: utf8)
        }
        let end = tokens.last.map { $0.end(in: utf8) } ?? utf8.count
        if end > at { pieces.append(.text(String(decoding: utf8[at..<end], as: UTF8.self))) }
        self.pieces = pieces
    }

    /// A condition on the rows of `table` that may read other tables in subqueries (checked by
    /// `checkCondition`), applied by the table's key `key`.
    public init(condition sql: String, table: String, key: String, dialect: SQLDialect) throws(DatasourceError) {
        try Self.checkCondition(sql, dialect: dialect)
        self.dialect = dialect
        pieces = []
        membership = Membership(table: table, key: key, condition: sql.trimmingSpaces())
    }

    /// Bytes a condition over other tables takes at most.
    package static let maxCondition = 4000

    /// One condition, which may hold subqueries in parentheses but no clause of its own around
    /// them: what a segment, or a term's condition over other tables, may be.
    public static func checkCondition(_ sql: String, dialect: SQLDialect) throws(DatasourceError) {
        guard !sql.trimmingSpaces().isEmpty else { throw DatasourceError("the condition is empty; write SQL that keeps the rows meant") }
        guard sql.utf8.count <= maxCondition else { throw DatasourceError("a condition is at most \(maxCondition) bytes") }
        let tokens: [SQLToken]
        do { tokens = try SQLTokenizer.tokenize(sql, dialect: dialect) } catch { throw DatasourceError("the condition is not SQL: \(error.message)") }
        var depth = 0
        for token in tokens {
            if token.isPunctuation("(") { depth += 1 }
            if token.isPunctuation(")") { depth -= 1 }
            guard depth >= 0 else { throw DatasourceError("the condition closes a parenthesis it did not open") }
            if token.isPunctuation(";") { throw DatasourceError("the condition is one piece of SQL, without ';'") }
            if token.kind == .parameter { throw DatasourceError("the condition cannot take parameters ('\(token.text)'); write the value in it") }
            if depth == 0, clauseWords.contains(token.keyword) {
                throw DatasourceError(
                    "the condition keeps rows of its table; '\(token.text)' belongs inside parentheses, as in EXISTS (SELECT 1 FROM … WHERE …)")
            }
        }
        guard depth == 0 else { throw DatasourceError("the condition leaves a parenthesis open") }
    }

    /// The SQL with each column written `alias."Column"` (or `"Column"` without an alias).
    public func render(alias: String?) -> String {
        if let membership {
            let key = ValueIndex.quote(membership.key, dialect)
            let table = ValueIndex.quote(membership.table, dialect)
            return "\(alias.map { "\($0).\(key)" } ?? key) IN (SELECT \(table).\(key) FROM \(table) WHERE (\(membership.condition)))"
        }
        return pieces.map { piece in
            switch piece {
            case .text(let text): return text
            case .column(let name):
                let quoted = ValueIndex.quote(name, dialect)
                return alias.map { "\($0).\(quoted)" } ?? quoted
            }
        }.joined()
    }

    /// The table's columns it reads.
    public var columns: Set<String> {
        Set(pieces.compactMap { if case .column(let name) = $0 { return name } else { return nil } })
    }
}

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

    /// The SQL with each column written `alias."Column"` (or `"Column"` without an alias).
    public func render(alias: String?) -> String {
        pieces.map { piece in
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

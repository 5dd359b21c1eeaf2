import Foundation
import PorticoAskEngine
import PorticoBase
import PorticoStore

/// A metric's aggregate over one table's columns (`SUM(UnitPrice * Quantity)`, `COUNT(DISTINCT
/// CustomerId)`): one value-level piece of SQL with at least one aggregate, every column inside
/// one, no subquery. Written out with its columns qualified by the table, and, for a metric
/// whose filter differs from the others' in one query, with the filter inside each aggregate
/// (`SUM(CASE WHEN … THEN x END)`), so several metrics share one scan.
struct AggregateSQL: Sendable, Equatable {
    enum Piece: Sendable, Equatable {
        case text(String)
        case column(String)
        /// Where an aggregate's argument starts (after `DISTINCT`) and ends: a filter wraps it.
        case argumentStart, argumentEnd
        /// `COUNT(*)`'s star: with a filter, `CASE WHEN … THEN 1 END`.
        case star
    }

    let pieces: [Piece]
    let dialect: SQLDialect

    static let functions: Set<String> = ["COUNT", "SUM", "AVG", "MIN", "MAX", "TOTAL"]

    init(_ sql: String, columns: [String], dialect: SQLDialect) throws(DatasourceError) {
        self.dialect = dialect
        let what = "metric's sql"
        guard !sql.trimmingSpaces().isEmpty else { throw DatasourceError("the \(what) is empty; write an aggregate such as SUM(Total)") }
        guard sql.utf8.count <= TableSQL.maxLength else { throw DatasourceError("the \(what) is \(sql.utf8.count) bytes; at most \(TableSQL.maxLength)") }
        let tokens: [SQLToken]
        do { tokens = try SQLTokenizer.tokenize(sql, dialect: dialect) } catch { throw DatasourceError("the \(what) is not SQL: \(error.message)") }
        let names = Dictionary(columns.map { ($0.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
        let utf8 = Array(sql.utf8)
        var pieces: [Piece] = []
        var at = tokens.first?.offset ?? 0
        func text(upTo offset: Int) {
            if offset > at { pieces.append(.text(String(decoding: utf8[at..<offset], as: UTF8.self))) }
            at = offset
        }
        // The depth of each open parenthesis, and which of them open an aggregate's argument.
        var open: [Bool] = []
        var aggregates = 0
        var i = 0
        while i < tokens.count {
            let token = tokens[i]
            if token.isPunctuation(";") { throw DatasourceError("the \(what) is one piece of SQL, without ';'") }
            if token.kind == .parameter { throw DatasourceError("the \(what) cannot take parameters ('\(token.text)'); write the value in it") }
            if TableSQL.clauseWords.contains(token.keyword) {
                throw DatasourceError("the \(what) is one aggregate over the table's columns, not a query: '\(token.text)' is not allowed")
            }
            let inside = open.contains(true)
            if Self.functions.contains(token.keyword), i + 1 < tokens.count, tokens[i + 1].isPunctuation("(") {
                guard !inside else { throw DatasourceError("the \(what) has an aggregate inside another ('\(token.text)'); write one level") }
                aggregates += 1
                var after = i + 2
                if after < tokens.count, ["DISTINCT", "ALL"].contains(tokens[after].keyword) { after += 1 }
                if after < tokens.count, tokens[after].kind == .symbol, tokens[after].text == "*", after + 1 < tokens.count,
                    tokens[after + 1].isPunctuation(")")
                {
                    text(upTo: tokens[after].offset)
                    pieces.append(.star)
                    at = tokens[after].end(in: utf8)
                    text(upTo: tokens[after + 1].end(in: utf8))
                    i = after + 2
                    continue
                }
                text(upTo: after < tokens.count ? tokens[after].offset : utf8.count)
                pieces.append(.argumentStart)
                open.append(true)
                i = after
                continue
            }
            if token.isPunctuation(","), open.last == true {
                throw DatasourceError("the \(what) gives an aggregate more than one argument; SUM, COUNT, AVG, MIN and MAX take one")
            }
            if token.isPunctuation("(") { open.append(false) }
            if token.isPunctuation(")") {
                guard let wasAggregate = open.popLast() else { throw DatasourceError("the \(what) closes a parenthesis it did not open") }
                if wasAggregate {
                    text(upTo: token.offset)
                    pieces.append(.argumentEnd)
                }
            }
            if token.kind == .word || token.kind == .quotedIdentifier, let name = names[token.text.lowercased()],
                !(token.kind == .word && i + 1 < tokens.count && tokens[i + 1].isPunctuation("("))
            {
                if i > 0, tokens[i - 1].isPunctuation(".") {
                    throw DatasourceError("the \(what) names columns of its own table only, without a table before them ('\(name)')")
                }
                guard inside else {
                    throw DatasourceError("the \(what) uses column '\(name)' outside an aggregate; every column goes inside SUM, COUNT, AVG, MIN or MAX")
                }
                text(upTo: token.offset)
                pieces.append(.column(name))
                at = token.end(in: utf8)
            }
            i += 1
        }
        guard open.isEmpty else { throw DatasourceError("the \(what) leaves a parenthesis open") }
        guard aggregates > 0 else { throw DatasourceError("the \(what) needs an aggregate: SUM, COUNT, AVG, MIN or MAX over the table's columns") }
        text(upTo: tokens.last.map { $0.end(in: utf8) } ?? utf8.count)
        self.pieces = pieces
    }

    /// The SQL with each column written `qualifier."Column"`, and `filter` (a condition already
    /// written out) inside each aggregate when given.
    func render(qualifier: String, filter: String?) -> String {
        var out = ""
        for piece in pieces {
            switch piece {
            case .text(let text): out += text
            case .column(let name): out += qualifier + "." + ValueIndex.quote(name, dialect)
            case .argumentStart: if let filter { out += "CASE WHEN \(filter) THEN " }
            case .argumentEnd: if filter != nil { out += " END" }
            case .star: out += filter.map { "CASE WHEN \($0) THEN 1 END" } ?? "*"
            }
        }
        return out
    }

    var columns: Set<String> { Set(pieces.compactMap { if case .column(let name) = $0 { return name } else { return nil } }) }
}

/// A derived metric's arithmetic over other metrics named in braces: numbers, `+ - * /`,
/// parentheses. Written out with each metric as a floating-point value and each divisor kept
/// from zero (`NULLIF(…, 0)`), so a ratio of two counts is not an integer division.
indirect enum DerivedExpression: Sendable, Equatable {
    case metric(String)
    case number(String)
    case negate(DerivedExpression)
    case binary(DerivedExpression, Character, DerivedExpression)

    static let maxLength = 1000

    init(_ text: String) throws(DatasourceError) {
        guard text.utf8.count <= Self.maxLength else { throw DatasourceError("a derived metric is at most \(Self.maxLength) bytes") }
        var parser = Parser(text: Array(text))
        self = try parser.sum()
        parser.skipSpaces()
        guard parser.at == parser.text.count else {
            throw DatasourceError("the derived metric '\(text)' has '\(String(parser.text[parser.at...]).prefix(20))' where an operator belongs")
        }
    }

    var metrics: [String] {
        switch self {
        case .metric(let name): [name]
        case .number: []
        case .negate(let e): e.metrics
        case .binary(let l, _, let r): l.metrics + r.metrics
        }
    }

    func render(_ metric: (String) throws(DatasourceError) -> String) throws(DatasourceError) -> String {
        switch self {
        case .metric(let name): return try metric(name)
        case .number(let n): return n
        case .negate(let e): return "-(" + (try e.render(metric)) + ")"
        case .binary(let l, "/", let r): return "(" + (try l.render(metric)) + ") / NULLIF(" + (try r.render(metric)) + ", 0)"
        case .binary(let l, let op, let r): return "(" + (try l.render(metric)) + " \(op) " + (try r.render(metric)) + ")"
        }
    }

    private struct Parser {
        let text: [Character]
        var at = 0
        var depth = 0

        mutating func skipSpaces() { while at < text.count, text[at].isWhitespace { at += 1 } }

        mutating func sum() throws(DatasourceError) -> DerivedExpression {
            var left = try product()
            while true {
                skipSpaces()
                guard at < text.count, text[at] == "+" || text[at] == "-" else { return left }
                let op = text[at]
                at += 1
                left = .binary(left, op, try product())
            }
        }

        mutating func product() throws(DatasourceError) -> DerivedExpression {
            var left = try unary()
            while true {
                skipSpaces()
                guard at < text.count, text[at] == "*" || text[at] == "/" else { return left }
                let op = text[at]
                at += 1
                left = .binary(left, op, try unary())
            }
        }

        mutating func unary() throws(DatasourceError) -> DerivedExpression {
            skipSpaces()
            guard at < text.count else { throw DatasourceError("the derived metric ends where a metric in braces or a number belongs") }
            switch text[at] {
            case "-":
                at += 1
                return .negate(try unary())
            case "(":
                depth += 1
                guard depth <= 20 else { throw DatasourceError("the derived metric nests parentheses too deep") }
                at += 1
                let inner = try sum()
                skipSpaces()
                guard at < text.count, text[at] == ")" else { throw DatasourceError("the derived metric leaves a parenthesis open") }
                at += 1
                depth -= 1
                return inner
            case "{":
                guard let close = text[at...].firstIndex(of: "}") else { throw DatasourceError("the derived metric leaves a '{' open") }
                let name = String(text[(at + 1)..<close]).split(whereSeparator: \.isWhitespace).joined(separator: " ")
                guard !name.isEmpty else { throw DatasourceError("the derived metric has '{}' with no metric's name in it") }
                at = close + 1
                return .metric(name)
            case let c where c.isASCII && (c.isNumber || c == "."):
                let start = at
                while at < text.count, text[at].isASCII, text[at].isNumber || text[at] == "." { at += 1 }
                let number = String(text[start..<at])
                guard Double(number) != nil else { throw DatasourceError("'\(number)' in the derived metric is not a number") }
                return .number(number)
            case let c:
                throw DatasourceError("the derived metric has '\(c)' where a metric in braces ({revenue}), a number or '(' belongs")
            }
        }
    }
}

/// A value written into compiled SQL as a literal (the compiler's SQL is text that passes the
/// guard like any other, so values are quoted here, never spliced).
enum SQLLiteral {
    static func render(_ value: SQLValue, dialect: SQLDialect) throws(DatasourceError) -> String {
        switch value {
        case .null: return "NULL"
        case .int(let i): return String(i)
        case .double(let d):
            guard d.isFinite else { throw DatasourceError("a filter's number must be finite") }
            return String(d)
        case .bool(let b): return dialect == .postgres ? (b ? "TRUE" : "FALSE") : (b ? "1" : "0")
        case .text(let s):
            guard !s.utf8.contains(0) else { throw DatasourceError("a filter's text cannot hold a NUL character") }
            var quoted = s.doubling("'")
            if dialect == .mysql { quoted = quoted.replacingOccurrences(of: "\\", with: "\\\\") }
            return "'" + quoted + "'"
        }
    }
}

import PorticoBase

/// A value bound into a statement. Values are always bound, never spliced into SQL text.
public enum SQLValue: Sendable, Hashable {
    case null
    case int(Int64)
    case double(Double)
    case text(String)
    case bool(Bool)
}

/// A piece of SQL assembled from text, quoted identifiers and bound values. Identifiers are
/// quoted by the database's dialect and values become placeholders, so a fragment carries no
/// user input as SQL text.
public struct SQLFragment: Sendable {
    package enum Part: Sendable {
        case text(String)
        case identifier(String)
        /// A table alias: quoted as an identifier, and renamed where a caller's SQL must not be
        /// able to name it (`renderedWithLiterals(aliasPrefix:schema:)`).
        case alias(String)
        /// A table's name: quoted as an identifier, and qualified with its schema where a caller's
        /// SQL must not be able to give the name another meaning (a WITH query of the same name).
        case table(String)
        case bind(SQLValue)
    }

    package var parts: [Part] = []

    /// Set for a statement whose text repeats call after call (a collection's create): PostgreSQL
    /// then parses and plans it once per connection and runs it by name after. It holds what the
    /// statement's result depends on beyond its text (the types of its table's columns), so that
    /// a statement prepared before its table changed is not run after the change.
    public var preparedShape: String?

    public init() {}

    public init(_ text: String) {
        // Room for a typical statement, so building one does not regrow the array part by part.
        parts.reserveCapacity(24)
        parts.append(.text(text))
    }

    public var isEmpty: Bool { parts.isEmpty }

    /// Appends SQL text written by Portico itself (keywords, operators, punctuation).
    public mutating func append(_ text: String) { parts.append(.text(text)) }

    public mutating func append(identifier: String) { parts.append(.identifier(identifier)) }

    /// A table's alias, quoted.
    public mutating func append(alias: String) { parts.append(.alias(alias)) }

    /// `"alias"."column"`
    public mutating func append(column: String, of alias: String) {
        parts.append(.alias(alias))
        parts.append(.text("."))
        parts.append(.identifier(column))
    }

    /// `"table" AS "alias"`
    public mutating func append(table: String, as alias: String) {
        parts.append(.table(table))
        parts.append(.text(" AS "))
        parts.append(.alias(alias))
    }

    /// `"alias"."column" = "otherAlias"."otherColumn"`: the condition that links two tables.
    public mutating func append(column: String, of alias: String, equals other: String, of otherAlias: String) {
        append(column: column, of: alias)
        parts.append(.text(" = "))
        append(column: other, of: otherAlias)
    }

    public mutating func append(bind value: SQLValue) { parts.append(.bind(value)) }

    public mutating func append(_ fragment: SQLFragment) { parts.append(contentsOf: fragment.parts) }

    /// Appends `items` separated by `separator`.
    public mutating func append(joining items: [SQLFragment], separator: String) {
        parts.reserveCapacity(parts.count + items.reduce(max(0, items.count - 1)) { $0 + $1.parts.count })
        for (index, item) in items.enumerated() {
            if index > 0 { append(separator) }
            append(item)
        }
    }

    /// Appends `"alias"."column"` for each column, separated by commas.
    public mutating func append(columns: [String], of alias: String) {
        parts.reserveCapacity(parts.count + columns.count * 4)
        for (index, column) in columns.enumerated() {
            if index > 0 { parts.append(.text(", ")) }
            append(column: column, of: alias)
        }
    }

    public static func column(_ name: String, of alias: String) -> SQLFragment {
        var f = SQLFragment()
        f.append(column: name, of: alias)
        return f
    }

    public static func bind(_ value: SQLValue) -> SQLFragment {
        var f = SQLFragment()
        f.append(bind: value)
        return f
    }

    public static func identifier(_ name: String) -> SQLFragment {
        var f = SQLFragment()
        f.append(identifier: name)
        return f
    }

    /// `(a) AND (b) AND ...`, or `nil` when there is nothing to combine.
    public static func all(_ conditions: [SQLFragment], _ op: String = "AND") -> SQLFragment? {
        guard !conditions.isEmpty else { return nil }
        if conditions.count == 1 { return conditions[0] }
        var f = SQLFragment()
        for (index, condition) in conditions.enumerated() {
            if index > 0 { f.append(" \(op) ") }
            f.append("(")
            f.append(condition)
            f.append(")")
        }
        return f
    }

    /// A double-quoted identifier with embedded quotes doubled: standard SQL, as SQLite and PostgreSQL read it.
    package static func quote(_ name: String) -> String {
        if !name.utf8.contains(UInt8(ascii: "\"")) { return "\"" + name + "\"" }
        return "\"" + name.doubling("\"") + "\""
    }

    /// The same SQL with its names written into the text around them (quoted as `rendered` quotes
    /// them) and its values still bound: fewer parts to render each time, for a fragment made once
    /// and used in every statement of a kind (a cached plan's head). Only for fragments that are
    /// rendered with placeholders: the names are no longer told apart from the text.
    package func compacted() -> SQLFragment {
        var compact = SQLFragment()
        var text = ""
        for part in parts {
            switch part {
            case .text(let piece): text += piece
            case .identifier(let name), .alias(let name), .table(let name): text += Self.quote(name)
            case .bind(let value):
                if !text.isEmpty { compact.parts.append(.text(text)) }
                text = ""
                compact.parts.append(.bind(value))
            }
        }
        if !text.isEmpty { compact.parts.append(.text(text)) }
        return compact
    }

    /// The SQL text with `?` placeholders and the values to bind, in order (SQLite's form),
    /// without boxing a bind on the hot path. The text is measured first and then written
    /// straight into one string.
    public func rendered() -> (sql: String, binds: [SQLValue]) {
        renderedWithQuestionMarks()
    }

    /// The SQL text with `$1`, `$2`, ... placeholders (PostgreSQL's form) when `numbered`, else `?`.
    public func rendered(numbered: Bool) -> (sql: String, binds: [SQLValue]) {
        numbered ? renderedPlainly(numbered: true) : renderedWithQuestionMarks()
    }

    /// The SQL text with every value written as a literal, for SQL that is run as text (a
    /// role's view of a table inside a datasource query). Text literals double their quotes;
    /// both dialects read a backslash in `'...'` as itself (PostgreSQL's
    /// `standard_conforming_strings`, on since 9.1).
    /// With `aliasPrefix`, every table alias starts with it: a caller who cannot know the prefix
    /// cannot write an alias of these, so a query plan tells their tables from the caller's own.
    /// With `schema`, every table is named in it.
    public func renderedWithLiterals(aliasPrefix: String = "", schema: String? = nil) -> String {
        var sql = ""
        for part in parts {
            switch part {
            case .text(let text): sql += text
            case .identifier(let name): sql += Self.quote(name)
            case .alias(let name): sql += Self.quote(aliasPrefix + name)
            case .table(let name): sql += (schema.map { Self.quote($0) + "." } ?? "") + Self.quote(name)
            case .bind(.null): sql += "NULL"
            case .bind(.int(let i)): sql += String(i)
            case .bind(.double(let d)): sql += d.isFinite ? "\(d)" : "NULL"
            case .bind(.bool(let b)): sql += b ? "TRUE" : "FALSE"
            case .bind(.text(let text)):
                sql += "'"
                for character in text where character != "\u{0}" {
                    if character == "'" { sql += "'" }
                    sql.append(character)
                }
                sql += "'"
            }
        }
        return sql
    }

    /// Rendering part by part, for numbered placeholders and for names with quotes in them
    /// (doubling quotes changes lengths, so the one-pass writer below does not apply).
    private func renderedPlainly(numbered: Bool) -> (sql: String, binds: [SQLValue]) {
        var sql = ""
        var binds: [SQLValue] = []
        for part in parts {
            switch part {
            case .text(let text): sql += text
            case .identifier(let name), .alias(let name), .table(let name): sql += Self.quote(name)
            case .bind(.null): sql += "NULL"
            case .bind(let value):
                binds.append(value)
                sql += numbered ? "$" + String(binds.count) : "?"
            }
        }
        return (sql, binds)
    }

    private func renderedWithQuestionMarks() -> (sql: String, binds: [SQLValue]) {
        var length = 0
        var bindCount = 0
        for part in parts {
            switch part {
            case .text(let text): length += text.utf8.count
            case .identifier(let name), .alias(let name), .table(let name): length += name.utf8.count + 2
            case .bind(.null): length += 4
            case .bind: bindCount += 1
            }
        }
        var binds: [SQLValue] = []
        binds.reserveCapacity(bindCount)
        // Names are copied whole; one with a quote in it (rare) is rendered the plain way, which doubles it.
        var quoteInName = false
        let sql = String(unsafeUninitializedCapacity: length + bindCount) { out in
            var at = 0
            let base = out.baseAddress!
            func write(_ text: String) {
                // One copy of the bytes (SQL text and names are native or small strings, so contiguous).
                let copied = text.utf8.withContiguousStorageIfAvailable { bytes -> Int in
                    if let from = bytes.baseAddress { (base + at).update(from: from, count: bytes.count) }
                    return bytes.count
                }
                if let copied {
                    at += copied
                } else {
                    for byte in text.utf8 {
                        out[at] = byte
                        at += 1
                    }
                }
            }
            func write(_ byte: UInt8) {
                out[at] = byte
                at += 1
            }
            for part in parts {
                switch part {
                case .text(let text): write(text)
                case .identifier(let name), .alias(let name), .table(let name):
                    write(UInt8(ascii: "\""))
                    let from = at
                    write(name)
                    if out[from..<at].contains(UInt8(ascii: "\"")) {
                        quoteInName = true
                        return 0
                    }
                    write(UInt8(ascii: "\""))
                case .bind(.null): write("NULL")
                case .bind(let value):
                    write(UInt8(ascii: "?"))
                    binds.append(value)
                }
            }
            return at
        }
        return quoteInName ? renderedPlainly(numbered: false) : (sql, binds)
    }
}

extension SQLFragment: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) { self.init(value) }
}

import Foundation
import PorticoBase

/// Why a piece of SQL was refused, in words that say what to change.
public struct SQLGuardError: Error, Sendable, CustomStringConvertible {
    public let message: String
    /// Whether the SQL is merely wrong (an unknown table) rather than not allowed: an engine may
    /// be told and try again; SQL that is not allowed is refused outright.
    public let isMistake: Bool

    public init(_ message: String, isMistake: Bool = false) {
        self.message = message
        self.isMistake = isMistake
    }

    public var description: String { message }
}

/// The SQL dialects Portico reads questions' SQL in.
public enum SQLDialect: String, Sendable {
    case sqlite
    case postgres
    /// MySQL and MariaDB, in the session modes Portico sets: backslash escapes in strings, `"…"`
    /// a string, `` `…` `` a name (no ANSI_QUOTES, no NO_BACKSLASH_ESCAPES).
    case mysql

    /// The database's name in OpenTelemetry's `db.system.name`.
    public var systemName: String {
        switch self {
        case .sqlite: "sqlite"
        case .postgres: "postgresql"
        case .mysql: "mysql"
        }
    }

    /// The database's name for people.
    public var displayName: String {
        switch self {
        case .sqlite: "SQLite"
        case .postgres: "PostgreSQL"
        case .mysql: "MySQL"
        }
    }
}

/// One lexical token of an SQL text. Comments and whitespace are dropped.
public struct SQLToken: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// A bare word: a keyword or an unquoted identifier.
        case word
        /// `"name"`, and in SQLite also `` `name` `` and `[name]`; `text` is the name without quotes.
        case quotedIdentifier
        /// `'…'`, `E'…'`, `X'…'`, `$tag$…$tag$`: a literal, whatever it contains.
        case string
        case number
        /// `?`, `?1`, `:name`, `@name`, `$name`, `$1`.
        case parameter
        /// `(`, `)`, `,`, `;`, `.`
        case punctuation
        /// Any other run of operator characters (`=`, `<>`, `||`, `::`, `->>`, …).
        case symbol
    }

    public let kind: Kind
    public let text: String
    /// Byte offset of the token in the SQL text.
    public let offset: Int

    /// The word in upper case (keywords are matched this way); empty for other kinds.
    public var keyword: String { kind == .word ? text.uppercased() : "" }

    package func isPunctuation(_ character: String) -> Bool { kind == .punctuation && text == character }
}

/// Splits SQL text into tokens by the lexical rules of its dialect: the quoting of strings and
/// identifiers, comments (PostgreSQL's nest), dollar quotes. A text that cannot be tokenized
/// (an unterminated string, quote or comment) is refused here, before anything reads it.
public enum SQLTokenizer {
    public static func tokenize(_ sql: String, dialect: SQLDialect) throws(SQLGuardError) -> [SQLToken] {
        let bytes = Array(sql.utf8)
        var tokens: [SQLToken] = []
        var i = 0
        func text(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }

        while i < bytes.count {
            let c = bytes[i]
            let next: UInt8 = i + 1 < bytes.count ? bytes[i + 1] : 0
            let start = i
            switch c {
            case 0x20, 0x09, 0x0A, 0x0D, 0x0C, 0x0B:
                i += 1
            case UInt8(ascii: "-") where next == UInt8(ascii: "-") && startsLineComment(bytes, at: i, dialect: dialect),
                UInt8(ascii: "#") where dialect == .mysql:
                while i < bytes.count, bytes[i] != 0x0A { i += 1 }
            case UInt8(ascii: "/") where next == UInt8(ascii: "*"):
                // MySQL runs the text of /*! … */ and MariaDB of /*M! … */: not a comment to skip. MySQL's
                // /*+ … */ hints are read too, and some (MAX_EXECUTION_TIME, SET_VAR) lift Portico's limits.
                if dialect == .mysql, i + 2 < bytes.count, bytes[i + 2] == UInt8(ascii: "!") || bytes[i + 2] == UInt8(ascii: "M") {
                    throw SQLGuardError("executable comments (/*! … */) are not accepted; write the SQL plainly")
                }
                if dialect == .mysql, i + 2 < bytes.count, bytes[i + 2] == UInt8(ascii: "+") {
                    throw SQLGuardError("optimizer hints (/*+ … */) are not accepted; write the query without them")
                }
                i = try skipBlockComment(bytes, from: i, nests: dialect == .postgres)
            case UInt8(ascii: "'"):
                i = try endOfQuoted(bytes, from: i, quote: c, backslashEscapes: dialect == .mysql, what: "string literal")
                tokens.append(SQLToken(kind: .string, text: text(start..<i), offset: start))
            case UInt8(ascii: "\"") where dialect == .mysql:
                // In MySQL's default modes "…" is a string.
                i = try endOfQuoted(bytes, from: i, quote: c, backslashEscapes: true, what: "string literal")
                tokens.append(SQLToken(kind: .string, text: text(start..<i), offset: start))
            case UInt8(ascii: "\""):
                i = try endOfQuoted(bytes, from: i, quote: c, backslashEscapes: false, what: "quoted identifier")
                tokens.append(SQLToken(kind: .quotedIdentifier, text: unquote(text(start + 1..<i - 1), quote: "\""), offset: start))
            case UInt8(ascii: "@") where dialect == .mysql:
                throw SQLGuardError("variables such as @name and @@name are not allowed (at character \(start + 1)); write the values into the SQL")
            case UInt8(ascii: "`") where dialect == .sqlite || dialect == .mysql:
                i = try endOfQuoted(bytes, from: i, quote: c, backslashEscapes: false, what: "quoted identifier")
                tokens.append(SQLToken(kind: .quotedIdentifier, text: unquote(text(start + 1..<i - 1), quote: "`"), offset: start))
            case UInt8(ascii: "[") where dialect == .sqlite:
                guard let close = bytes[i...].firstIndex(of: UInt8(ascii: "]")) else {
                    throw SQLGuardError("the SQL has an unterminated [identifier] starting at character \(start + 1)")
                }
                i = close + 1
                tokens.append(SQLToken(kind: .quotedIdentifier, text: text(start + 1..<close), offset: start))
            case UInt8(ascii: "$") where dialect == .postgres && !isDigit(next):
                // A dollar quote: $$…$$ or $tag$…$tag$.
                var j = i + 1
                while j < bytes.count, isWordByte(bytes[j]), !(j == i + 1 && isDigit(bytes[j])) { j += 1 }
                guard j < bytes.count, bytes[j] == UInt8(ascii: "$"), j - i <= 64 else {
                    throw SQLGuardError("the SQL has a stray '$' or a dollar-quote tag over 63 characters at character \(start + 1)")
                }
                let tag = Array(bytes[i...j])
                guard let end = find(tag, in: bytes, from: j + 1) else {
                    throw SQLGuardError("the SQL has an unterminated dollar-quoted string starting at character \(start + 1)")
                }
                i = end + tag.count
                tokens.append(SQLToken(kind: .string, text: text(start..<i), offset: start))
            case UInt8(ascii: "?"), UInt8(ascii: "$"):
                i += 1
                while i < bytes.count, isWordByte(bytes[i]) { i += 1 }
                tokens.append(SQLToken(kind: .parameter, text: text(start..<i), offset: start))
            case UInt8(ascii: ":") where dialect == .sqlite && isWordStart(next), UInt8(ascii: "@") where dialect == .sqlite && isWordStart(next):
                i += 1
                while i < bytes.count, isWordByte(bytes[i]) { i += 1 }
                tokens.append(SQLToken(kind: .parameter, text: text(start..<i), offset: start))
            case UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: ","), UInt8(ascii: ";"):
                i += 1
                tokens.append(SQLToken(kind: .punctuation, text: text(start..<i), offset: start))
            case UInt8(ascii: ".") where !isDigit(next):
                i += 1
                tokens.append(SQLToken(kind: .punctuation, text: ".", offset: start))
            case _ where isDigit(c) || c == UInt8(ascii: "."):
                i += 1
                while i < bytes.count {
                    let b = bytes[i]
                    if isWordByte(b) || b == UInt8(ascii: ".") {
                        i += 1
                    } else if (b == UInt8(ascii: "+") || b == UInt8(ascii: "-")), bytes[i - 1] | 0x20 == UInt8(ascii: "e"),
                        !text(start..<i).lowercased().hasPrefix("0x")
                    {
                        i += 1
                    } else {
                        break
                    }
                }
                let number = text(start..<i)
                // `1secret` is a name in MySQL and a number and an alias in older PostgreSQL: either
                // way not a number the guard may wave through without a look.
                guard isNumericLiteral(number) else {
                    throw SQLGuardError(
                        "'\(number.prefix(40))' at character \(start + 1) is neither a number nor a plain name; quote a name that starts with a digit")
                }
                tokens.append(SQLToken(kind: .number, text: number, offset: start))
            case UInt8(ascii: "{"), UInt8(ascii: "}"):
                // ODBC escapes such as MySQL's { OJ … } hide what is inside them from a reading by clauses.
                throw SQLGuardError("braces ({ … }) are not accepted (at character \(start + 1)); write the query in plain SQL")
            case _ where isWordStart(c):
                while i < bytes.count, isWordByte(bytes[i]) || (dialect != .sqlite && bytes[i] == UInt8(ascii: "$")) { i += 1 }
                let word = text(start..<i)
                // Prefixed string literals: E'…' (backslash escapes), X'…' / B'…' (bits, blobs), N'…', U&'…'.
                if i < bytes.count, bytes[i] == UInt8(ascii: "'"), ["E", "X", "B", "N"].contains(word.uppercased()) {
                    i = try endOfQuoted(
                        bytes, from: i, quote: UInt8(ascii: "'"), backslashEscapes: word.uppercased() == "E" || dialect == .mysql, what: "string literal")
                    tokens.append(SQLToken(kind: .string, text: text(start..<i), offset: start))
                } else if dialect == .postgres, word.uppercased() == "U", i + 1 < bytes.count, bytes[i] == UInt8(ascii: "&"),
                    bytes[i + 1] == UInt8(ascii: "'") || bytes[i + 1] == UInt8(ascii: "\"")
                {
                    let quote = bytes[i + 1]
                    i = try endOfQuoted(bytes, from: i + 1, quote: quote, backslashEscapes: false, what: "Unicode literal")
                    tokens.append(SQLToken(kind: quote == UInt8(ascii: "'") ? .string : .quotedIdentifier, text: text(start..<i), offset: start))
                } else {
                    tokens.append(SQLToken(kind: .word, text: word, offset: start))
                }
            default:
                i += 1
                while i < bytes.count, isSymbolByte(bytes[i]) {
                    // A comment start ends the operator.
                    if bytes[i] == UInt8(ascii: "-"), i + 1 < bytes.count, bytes[i + 1] == UInt8(ascii: "-"), startsLineComment(bytes, at: i, dialect: dialect)
                    {
                        break
                    }
                    if dialect == .mysql, bytes[i] == UInt8(ascii: "#") || bytes[i] == UInt8(ascii: "@") { break }
                    if bytes[i] == UInt8(ascii: "/"), i + 1 < bytes.count, bytes[i + 1] == UInt8(ascii: "*") { break }
                    i += 1
                }
                tokens.append(SQLToken(kind: .symbol, text: text(start..<i), offset: start))
            }
        }
        return tokens
    }

    /// Whether the `--` at `i` starts a comment: always in SQLite and PostgreSQL; in MySQL only when
    /// a space, a control character or the end follows (`1--1` is one minus minus one there).
    package static func startsLineComment(_ bytes: [UInt8], at i: Int, dialect: SQLDialect) -> Bool {
        guard dialect == .mysql else { return true }
        guard i + 2 < bytes.count else { return true }
        return bytes[i + 2] <= 0x20
    }

    package static func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }

    /// Whether a run that starts with a digit (or a point) is a numeric literal: digits (with `_`
    /// between them) and at most one point, then an optional exponent; or `0x…` hex, `0b…` bits.
    package static func isNumericLiteral(_ text: String) -> Bool {
        let bytes = Array(text.utf8.map { $0 | 0x20 == UInt8(ascii: "e") || $0 | 0x20 == UInt8(ascii: "x") || $0 | 0x20 == UInt8(ascii: "b") ? $0 | 0x20 : $0 })
        if bytes.count > 2, bytes[0] == UInt8(ascii: "0"), bytes[1] == UInt8(ascii: "x") || bytes[1] == UInt8(ascii: "b") {
            let digits = bytes[2...]
            return bytes[1] == UInt8(ascii: "x")
                ? digits.allSatisfy { isDigit($0) || ($0 | 0x20 >= UInt8(ascii: "a") && $0 | 0x20 <= UInt8(ascii: "f")) || $0 == UInt8(ascii: "_") }
                : digits.allSatisfy { $0 == UInt8(ascii: "0") || $0 == UInt8(ascii: "1") || $0 == UInt8(ascii: "_") }
        }
        var i = 0
        var digits = 0
        var point = false
        while i < bytes.count, isDigit(bytes[i]) || bytes[i] == UInt8(ascii: "_") || (bytes[i] == UInt8(ascii: ".") && !point) {
            if bytes[i] == UInt8(ascii: ".") { point = true } else if bytes[i] != UInt8(ascii: "_") { digits += 1 }
            i += 1
        }
        guard digits > 0 else { return false }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") {
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            let exponent = i
            while i < bytes.count, isDigit(bytes[i]) { i += 1 }
            guard i > exponent else { return false }
        }
        return i == bytes.count
    }
    package static func isWordStart(_ b: UInt8) -> Bool {
        (b | 0x20 >= UInt8(ascii: "a") && b | 0x20 <= UInt8(ascii: "z")) || b == UInt8(ascii: "_") || b >= 0x80
    }
    package static func isWordByte(_ b: UInt8) -> Bool { isWordStart(b) || isDigit(b) }
    package static func isSymbolByte(_ b: UInt8) -> Bool {
        "+-*/<>=~!@#%^&|`?:".utf8.contains(b)
    }

    /// The index just past the closing quote of the quoted text starting at `start`; a doubled
    /// quote stands for one.
    package static func endOfQuoted(_ bytes: [UInt8], from start: Int, quote: UInt8, backslashEscapes: Bool, what: String) throws(SQLGuardError) -> Int {
        var i = start + 1
        while i < bytes.count {
            if backslashEscapes, bytes[i] == UInt8(ascii: "\\") {
                i += 2
                continue
            }
            if bytes[i] == quote {
                if i + 1 < bytes.count, bytes[i + 1] == quote {
                    i += 2
                    continue
                }
                return i + 1
            }
            i += 1
        }
        throw SQLGuardError("the SQL has an unterminated \(what) starting at character \(start + 1)")
    }

    package static func skipBlockComment(_ bytes: [UInt8], from start: Int, nests: Bool) throws(SQLGuardError) -> Int {
        var depth = 0
        var i = start
        while i + 1 < bytes.count {
            if bytes[i] == UInt8(ascii: "/"), bytes[i + 1] == UInt8(ascii: "*") {
                depth = nests ? depth + 1 : 1
                i += 2
            } else if bytes[i] == UInt8(ascii: "*"), bytes[i + 1] == UInt8(ascii: "/") {
                depth -= 1
                i += 2
                if depth == 0 { return i }
            } else {
                i += 1
            }
        }
        throw SQLGuardError("the SQL has an unterminated /* comment starting at character \(start + 1)")
    }

    package static func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard needle.count <= bytes.count else { return nil }
        var i = start
        while i + needle.count <= bytes.count {
            if bytes[i] == needle[0], bytes[i..<i + needle.count].elementsEqual(needle) { return i }
            i += 1
        }
        return nil
    }

    package static func unquote(_ text: String, quote: Unicode.Scalar) -> String {
        text.undoubling(quote)
    }
}

extension SQLToken {
    /// The byte just past the token in the original text.
    package func end(in utf8: [UInt8]) -> Int {
        guard kind == .quotedIdentifier else { return offset + text.utf8.count }
        // The token's text is unquoted; find the closing quote in the original.
        var end = offset + 1
        let quote = utf8[offset] == UInt8(ascii: "[") ? UInt8(ascii: "]") : utf8[offset]
        while end < utf8.count {
            if utf8[end] == quote {
                if quote != UInt8(ascii: "]"), end + 1 < utf8.count, utf8[end + 1] == quote {
                    end += 2
                    continue
                }
                return end + 1
            }
            end += 1
        }
        return end
    }
}

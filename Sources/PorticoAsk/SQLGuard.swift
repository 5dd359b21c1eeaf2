import Foundation
public import PorticoAskEngine
import PorticoBase
import PorticoData

/// The first of the SQL guard's two layers: reads SQL from outside (a model, an agent, a
/// workflow) token by token and refuses anything that is not one read-only query over the
/// datasource's own tables with allowed functions. The second layer is the database itself: a
/// read-only connection that refuses writes, whatever got past this one (`SQLiteReadOnlySource`).
public struct SQLGuard: Sendable {
    public let dialect: SQLDialect
    /// The tables (and views) of the datasource, by lower-cased name.
    public let tables: Set<String>
    /// Schemas a table may be qualified with: SQLite's `main`, the datasource's PostgreSQL schema.
    public let schemas: Set<String>

    public init(dialect: SQLDialect, tables: some Sequence<String>, schemas: Set<String>? = nil) {
        self.dialect = dialect
        self.tables = Set(tables.map { $0.lowercased() })
        self.schemas = schemas ?? (dialect == .sqlite ? ["main"] : ["public"])
    }

    /// The checked statement: the SQL as given without a trailing semicolon, and the tables it reads.
    public struct Checked: Sendable, Equatable {
        public let sql: String
        public let tables: [String]
        /// Where each table is named in `sql`, in order: what a caller's view of a table replaces.
        public var references: [TableReference] = []
        /// The names the query's WITH clauses define (lower case).
        public var commonTableNames: Set<String> = []

        /// `sql` with each table reference for which `view` gives SQL replaced by it, as
        /// `(view) AS "table"` (or `(view) alias` where the query names an alias), so the rest of
        /// the query reads the view as it would the table.
        public func replacingTables(_ view: (String) throws -> String?) rethrows -> String {
            var utf8 = Array(sql.utf8)
            for reference in references.reversed() {
                guard let replacement = try view(reference.table) else { continue }
                var text = replacement
                if !reference.aliased { text += " AS \"" + reference.table.doubling("\"") + "\"" }
                utf8.replaceSubrange(reference.range, with: Array(text.utf8))
            }
            return String(decoding: utf8, as: UTF8.self)
        }
    }

    /// One table named in a query: its bytes in `Checked.sql` (with any schema) and whether an alias follows.
    public struct TableReference: Sendable, Equatable {
        public let table: String
        public let range: Range<Int>
        public let aliased: Bool
    }

    /// Words that may follow a table in FROM without being its alias.
    static let afterTable: Set<String> = [
        "WHERE", "JOIN", "INNER", "LEFT", "RIGHT", "FULL", "CROSS", "NATURAL", "ON", "USING", "GROUP", "ORDER", "LIMIT", "OFFSET", "UNION",
        "INTERSECT", "EXCEPT", "HAVING", "WINDOW", "FETCH", "FOR", "TABLESAMPLE", "INDEXED", "NOT", "OUTER", "STRAIGHT_JOIN",
    ]

    /// Bytes of SQL one check reads at most: a query is a few hundred; a megabyte is an attack.
    public static let maxLength = 100_000

    public func check(_ sql: String) throws(SQLGuardError) -> Checked {
        guard sql.utf8.count <= Self.maxLength else {
            throw SQLGuardError("the SQL is \(sql.utf8.count) bytes long; at most \(Self.maxLength) are accepted")
        }
        // The names of the views that stand in for a role's tables are Portico's: not to be written,
        // in any quoting (a WITH name, say, that took one's place).
        if sql.range(of: CollectionView.temporaryPrefix, options: .caseInsensitive) != nil {
            throw SQLGuardError("the SQL names '\(CollectionView.temporaryPrefix)…', which is Portico's own; use another name")
        }
        var tokens = try SQLTokenizer.tokenize(sql, dialect: dialect)
        while let last = tokens.last, last.isPunctuation(";") { tokens.removeLast() }
        guard let first = tokens.first(where: { !$0.isPunctuation("(") }) else {
            throw SQLGuardError("the SQL is empty: send one SELECT statement")
        }
        if let semicolon = tokens.first(where: { $0.isPunctuation(";") }) {
            throw SQLGuardError(
                "only one statement is allowed, and a second one starts after the ';' at character \(semicolon.offset + 1); send a single SELECT")
        }
        guard first.keyword == "SELECT" || first.keyword == "WITH" else {
            throw SQLGuardError("only a SELECT (or WITH … SELECT) query is allowed; this statement starts with '\(first.text)'")
        }
        let closing = Self.closingParentheses(tokens)
        let cteHeaders = Set(tokens.indices.filter { Self.isCommonTableExpression(tokens, at: $0, closing: closing) })
        let cteNames = Set(cteHeaders.map { tokens[$0].text.lowercased() })
        var tablesRead: [String] = []
        var references: [TableReference] = []
        let utf8 = Array(sql.utf8)
        // One entry per open parenthesis: whether it is a function's argument list, and whether
        // a FROM clause is open at that level.
        var levels: [(isCall: Bool, inFrom: Bool)] = [(false, false)]
        var expectTable = false
        // Whether the table expected is the right side of `x IN table`, which takes no alias.
        var afterIn = false
        // Where a PostgreSQL `ONLY` before the expected table starts: a view takes its place too.
        var onlyAt: Int?
        var index = 0
        while index < tokens.count {
            let token = tokens[index]
            let next = index + 1 < tokens.count ? tokens[index + 1] : nil
            let previous = index > 0 ? tokens[index - 1] : nil
            switch token.kind {
            case .parameter:
                throw SQLGuardError("parameters such as '\(token.text)' are not supported; write the values into the SQL")
            case .word, .quotedIdentifier, .string:
                // SQLite reads a single-quoted name where a table must be as the table's name; elsewhere a string is a value.
                if token.kind == .string, !expectTable || Self.tableName(token, dialect: dialect) == nil {
                    expectTable = false
                    break
                }
                let keyword = token.kind == .word ? token.keyword : ""
                if let refusal = Self.refusedKeywords[keyword] ?? (dialect == .mysql ? Self.mysqlRefusedKeywords[keyword] : nil),
                    !(keyword == "REPLACE" && next?.isPunctuation("(") == true)
                {
                    throw SQLGuardError("\(keyword) is not allowed: \(refusal). Send one read-only SELECT")
                }
                if token.kind == .word, previous?.isPunctuation(".") != true, previous?.keyword != "AS",
                    Self.accountWords(dialect).contains(keyword)
                {
                    throw SQLGuardError("\(keyword) names the database account Portico reads with, which is not part of the datasource")
                }
                if keyword == "FOR", let lock = next?.keyword, ["UPDATE", "SHARE", "NO", "KEY"].contains(lock) {
                    throw SQLGuardError("row locks (FOR \(lock) …) are not allowed: queries here only read")
                }
                if keyword == "FOR", previous?.keyword == "VALUE" {
                    throw SQLGuardError("sequences (NEXT VALUE FOR …) are not allowed: reading one moves it")
                }
                if token.kind == .quotedIdentifier, dialect == .postgres, token.text.hasPrefix("U&") || token.text.hasPrefix("u&") {
                    throw SQLGuardError("Unicode-escaped names such as \(token.text.prefix(20))… are not accepted; write the name plainly")
                }
                let name = (Self.tableName(token, dialect: dialect) ?? token.text).lowercased()
                if token.kind != .string, let reserved = Self.systemPrefixes.first(where: { name.hasPrefix($0) }) {
                    throw SQLGuardError("'\(token.text)' is not part of the datasource (names starting with \(reserved) are the database's or Portico's own)")
                }
                if expectTable, ["SELECT", "WITH", "VALUES"].contains(keyword) {
                    // A subquery in parentheses where a table could be: no FROM list at its level until its own FROM.
                    expectTable = false
                    levels[levels.count - 1].inFrom = false
                } else if expectTable, keyword == "ONLY" {
                    onlyAt = token.offset
                } else if expectTable, keyword != "LATERAL" {
                    expectTable = false
                    let rightOfIn = afterIn
                    let start = onlyAt ?? token.offset
                    afterIn = false
                    onlyAt = nil
                    if next?.isPunctuation("(") != true {
                        var table = Self.tableName(token, dialect: dialect) ?? token.text
                        var schema: String?
                        if next?.isPunctuation(".") == true, index + 2 < tokens.count {
                            schema = table
                            table = Self.tableName(tokens[index + 2], dialect: dialect) ?? tokens[index + 2].text
                            index += 2
                        }
                        try checkTable(table, schema: schema, cteNames: cteNames)
                        tablesRead.append(table)
                        if schema != nil || !cteNames.contains(table.lowercased()) {
                            let after = index + 1 < tokens.count ? tokens[index + 1] : nil
                            let aliased =
                                rightOfIn
                                || after.map {
                                    $0.kind == .quotedIdentifier || ($0.kind == .string && dialect == .sqlite)
                                        || ($0.kind == .word && !Self.afterTable.contains($0.keyword))
                                } ?? false
                            references.append(
                                TableReference(table: table, range: start..<tokens[index].end(in: utf8), aliased: aliased))
                        }
                        index += 1
                        continue
                    }
                }
                // A function's argument list is its own level; a keyword's parenthesis (`FROM (`,
                // `IN (`, `AS (`) is read below, after the keyword has had its say.
                if next?.isPunctuation("(") == true, try checkCall(tokens, at: index, previous: previous, cteHeaders: cteHeaders) {
                    levels.append((true, false))
                    index += 2
                    expectTable = false
                    continue
                }
                if token.kind == .word, keyword == "IN", !levels[levels.count - 1].isCall, next.map({ $0.kind != .punctuation }) ?? false {
                    // SQLite's `x IN table`.
                    expectTable = true
                    afterIn = true
                    index += 1
                    continue
                }
                if token.kind == .word, !levels[levels.count - 1].isCall {
                    switch keyword {
                    case "FROM":
                        levels[levels.count - 1].inFrom = true
                        expectTable = true
                    case "JOIN", "STRAIGHT_JOIN":
                        expectTable = levels[levels.count - 1].inFrom
                    case "WHERE", "GROUP", "HAVING", "ORDER", "LIMIT", "OFFSET", "UNION", "INTERSECT", "EXCEPT", "WINDOW", "FETCH", "SELECT", "ON",
                        "USING":
                        levels[levels.count - 1].inFrom = keyword == "ON" || keyword == "USING" ? levels[levels.count - 1].inFrom : false
                    default: break
                    }
                }
            case .punctuation:
                switch token.text {
                case "(":
                    // Where a table could be, a parenthesis opens a join of tables (or a subquery, whose SELECT ends that).
                    levels.append((false, expectTable))
                case ")":
                    if levels.count > 1 { levels.removeLast() }
                    expectTable = false
                case ",":
                    expectTable = levels[levels.count - 1].inFrom && !levels[levels.count - 1].isCall
                default: break
                }
            case .number, .symbol:
                expectTable = false
            }
            index += 1
        }
        var seen = Set<String>()
        // The text keeps what lies between its first and last token; references move with its start.
        let start = tokens.first?.offset ?? 0
        let moved = references.map {
            TableReference(table: $0.table, range: ($0.range.lowerBound - start)..<($0.range.upperBound - start), aliased: $0.aliased)
        }
        return Checked(
            sql: Self.trimmed(sql, tokens: tokens), tables: tablesRead.filter { seen.insert($0.lowercased()).inserted }, references: moved,
            commonTableNames: cteNames)
    }

    /// The name a token gives where a table is expected: a word or quoted name, or in SQLite a
    /// plain single-quoted string (which SQLite reads as a name there); `nil` for other strings.
    static func tableName(_ token: SQLToken, dialect: SQLDialect) -> String? {
        switch token.kind {
        case .word, .quotedIdentifier: return token.text
        case .string where dialect == .sqlite && token.text.hasPrefix("'") && token.text.count >= 2:
            return token.text.dropFirst().dropLast().undoubling("'")
        default: return nil
        }
    }

    func checkTable(_ table: String, schema: String?, cteNames: Set<String>) throws(SQLGuardError) {
        if let schema {
            guard schemas.contains(schema.lowercased()) else {
                throw SQLGuardError("'\(schema).\(table)' is outside the datasource; name its tables without a schema")
            }
        } else if cteNames.contains(table.lowercased()) {
            return
        }
        guard tables.contains(table.lowercased()) else {
            throw SQLGuardError("table '\(table)' is not in this datasource; datasource_describe lists its tables", isMistake: true)
        }
    }

    /// Checks the word before a `(`: a function must be on the dialect's list; keywords that
    /// take a parenthesis (`IN (`, `AS (`, `OVER (`…) and the column list of a common table
    /// expression pass. Returns whether the parenthesis opens a function's argument list.
    func checkCall(_ tokens: [SQLToken], at index: Int, previous: SQLToken?, cteHeaders: Set<Int>) throws(SQLGuardError) -> Bool {
        let token = tokens[index]
        if token.kind == .word, Self.parenthesisKeywords.contains(token.keyword) { return false }
        // A type with a size (`::numeric(10, 2)`, `CAST(x AS varchar(20))`) or a column definition list.
        if previous?.text == "::" || previous?.keyword == "AS" { return false }
        // `name (a, b) AS (…)`: a common table expression's columns.
        if cteHeaders.contains(index) { return false }
        if previous?.isPunctuation(".") == true {
            throw SQLGuardError("function '\(tokens[index - 2].text).\(token.text)' is not allowed: call functions without a schema")
        }
        let name = token.text.lowercased()
        let allowed =
            switch dialect {
            case .sqlite: Self.sqliteFunctions
            case .postgres: Self.postgresFunctions
            case .mysql: Self.mysqlFunctions
            }
        guard allowed.contains(name) else {
            throw SQLGuardError(
                "function '\(token.text)' is not allowed here; use the usual aggregate, text, date and math functions of \(dialect.displayName)")
        }
        return true
    }

    /// For each `(`, the index of its `)`, found in one pass (so no check is quadratic in the SQL).
    static func closingParentheses(_ tokens: [SQLToken]) -> [Int: Int] {
        var closing: [Int: Int] = [:]
        var open: [Int] = []
        for (i, token) in tokens.enumerated() {
            if token.isPunctuation("(") { open.append(i) }
            if token.isPunctuation(")"), let start = open.popLast() { closing[start] = i }
        }
        return closing
    }

    /// Whether the name at `i` starts a common table expression: after `WITH`, `RECURSIVE` or a
    /// comma, and followed by `[(columns)] AS [NOT] [MATERIALIZED] (`. (A table function's alias,
    /// `f(x) AS t`, has no parenthesis after `AS`.)
    static func isCommonTableExpression(_ tokens: [SQLToken], at i: Int, closing: [Int: Int]) -> Bool {
        guard i > 0, tokens[i].kind == .word || tokens[i].kind == .quotedIdentifier,
            tokens[i - 1].keyword == "WITH" || tokens[i - 1].keyword == "RECURSIVE" || tokens[i - 1].isPunctuation(",")
        else { return false }
        var j = i + 1
        if j < tokens.count, tokens[j].isPunctuation("(") {
            guard let close = closing[j] else { return false }
            j = close + 1
        }
        guard j < tokens.count, tokens[j].keyword == "AS" else { return false }
        j += 1
        while j < tokens.count, tokens[j].keyword == "NOT" || tokens[j].keyword == "MATERIALIZED" { j += 1 }
        return j < tokens.count && tokens[j].isPunctuation("(")
    }

    /// The text from the first token to the end of the last (comments and a ';' around it go).
    static func trimmed(_ sql: String, tokens: [SQLToken]) -> String {
        guard let first = tokens.first, let last = tokens.last else { return "" }
        let utf8 = Array(sql.utf8)
        return String(decoding: utf8[first.offset..<min(last.end(in: utf8), utf8.count)], as: UTF8.self)
    }

    /// Words that never belong in a read-only query, with why.
    static let refusedKeywords: [String: String] = {
        var words: [String: String] = [:]
        for w in ["INSERT", "UPDATE", "DELETE", "MERGE", "UPSERT", "REPLACE", "TRUNCATE", "RETURNING"] { words[w] = "it changes data" }
        for w in ["CREATE", "DROP", "ALTER", "REINDEX", "VACUUM", "GRANT", "REVOKE"] { words[w] = "it changes the database's structure or rights" }
        for w in ["ATTACH", "DETACH", "PRAGMA", "COPY", "INTO", "LOAD"] { words[w] = "it reaches outside the query (files, settings or other databases)" }
        for w in ["BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE", "SET", "RESET", "LOCK"] {
            words[w] = "transactions and session settings are Portico's"
        }
        // `TABLE t` (PostgreSQL, MySQL 8) reads a whole table with no FROM for the guard to find.
        words["TABLE"] = "write SELECT … FROM the table instead"
        return words
    }()

    /// MySQL's words that reach outside a read-only query (procedures, handlers, files), with why.
    static let mysqlRefusedKeywords: [String: String] = [
        "PROCEDURE": "it runs a procedure", "HANDLER": "it opens a table outside the query", "CALL": "it runs a procedure",
        "OUTFILE": "it writes a file", "DUMPFILE": "it writes a file", "DO": "it runs expressions outside a query", "KILL": "it stops other sessions",
        "SHUTDOWN": "it stops the server", "FLUSH": "it changes the server's state",
    ]

    /// Words that stand, unquoted and without parentheses, for the account a query runs as
    /// (`SELECT current_user`), refused like MySQL's `USER()`. PostgreSQL reads a bare `user` so
    /// too (a column of that name is written `"user"` there); MySQL reads it as a column.
    static func accountWords(_ dialect: SQLDialect) -> Set<String> {
        switch dialect {
        case .sqlite: []
        case .mysql: mysqlAccountWords
        case .postgres: postgresAccountWords
        }
    }

    static let mysqlAccountWords: Set<String> = ["CURRENT_USER", "SESSION_USER", "SYSTEM_USER", "CURRENT_ROLE"]
    static let postgresAccountWords: Set<String> = mysqlAccountWords.union(["USER", "CURRENT_CATALOG", "CURRENT_SCHEMA"])

    /// Prefixes of names that belong to the database system or to Portico itself.
    static let systemPrefixes = ["sqlite_", "portico_", "pg_", "information_schema", "performance_schema"]

    /// Keywords that may be followed by a parenthesis without being a function call.
    static let parenthesisKeywords: Set<String> = [
        "IN", "EXISTS", "AS", "VALUES", "OVER", "FILTER", "USING", "ON", "AND", "OR", "NOT", "WHEN", "THEN", "ELSE", "FROM", "JOIN", "WHERE",
        "SELECT", "ALL", "ANY", "SOME", "ARRAY", "ROW", "WITHIN", "LATERAL", "RECURSIVE", "MATERIALIZED", "BY", "IS", "LIKE", "ILIKE", "GLOB",
        "BETWEEN", "CASE", "DISTINCT", "UNION", "INTERSECT", "EXCEPT", "HAVING", "LIMIT", "OFFSET", "WINDOW", "PARTITION", "RANGE", "ROWS",
        "GROUPS", "ESCAPE", "END", "WITH", "ONLY", "NULLS", "ASC", "DESC", "CAST", "COLLATE",
    ]

    /// Functions a query may call on SQLite: aggregates, text, dates, math, JSON, window functions.
    static let sqliteFunctions: Set<String> = [
        "abs", "avg", "count", "sum", "total", "min", "max", "coalesce", "ifnull", "nullif", "iif", "length", "octet_length", "lower", "upper",
        "substr", "substring", "trim", "ltrim", "rtrim", "replace", "instr", "round", "strftime", "date", "time", "datetime", "julianday",
        "unixepoch", "timediff", "group_concat", "string_agg", "printf", "format", "typeof", "char", "unicode", "hex", "quote", "sign", "ceil",
        "ceiling", "floor", "trunc", "power", "pow", "sqrt", "exp", "ln", "log", "log10", "log2", "mod", "pi", "like", "glob", "concat",
        "concat_ws", "json", "json_extract", "json_array", "json_object", "json_array_length", "json_type", "json_valid", "json_each",
        "json_tree", "json_group_array", "json_group_object", "row_number", "rank", "dense_rank", "ntile", "lag", "lead", "first_value",
        "last_value", "nth_value", "percent_rank", "cume_dist", "cast", "radians", "degrees", "sin", "cos", "tan",
    ]

    /// Functions a query may call on MySQL and MariaDB: none that sleeps, locks, reads files or
    /// tells about the server (`SLEEP`, `BENCHMARK`, `GET_LOCK`, `LOAD_FILE`, `USER`, `VERSION`).
    static let mysqlFunctions: Set<String> = [
        "abs", "avg", "count", "sum", "min", "max", "coalesce", "ifnull", "nullif", "if", "greatest", "least", "length", "char_length",
        "character_length", "octet_length", "bit_length", "lower", "upper", "lcase", "ucase", "substr", "substring", "substring_index", "mid",
        "trim", "ltrim", "rtrim", "replace", "locate", "instr", "position", "left", "right", "concat", "concat_ws", "round", "truncate", "ceil",
        "ceiling", "floor", "power", "pow", "sqrt", "exp", "ln", "log", "log10", "log2", "mod", "sign", "pi", "radians", "degrees", "sin", "cos",
        "tan", "rand", "date", "time", "year", "month", "day", "dayofmonth", "dayofweek", "dayofyear", "dayname", "monthname", "hour", "minute",
        "second", "week", "weekday", "weekofyear", "quarter", "yearweek", "date_format", "time_format", "str_to_date", "date_add", "date_sub",
        "adddate", "subdate", "datediff", "timediff", "timestampdiff", "timestampadd", "last_day", "extract", "now", "curdate", "curtime",
        "current_date", "current_time", "current_timestamp", "utc_date", "utc_timestamp", "unix_timestamp", "from_unixtime", "makedate",
        "maketime", "to_days", "from_days", "group_concat", "std", "stddev", "stddev_pop", "stddev_samp", "variance", "var_pop", "var_samp",
        "bit_and", "bit_or", "bit_xor", "row_number", "rank", "dense_rank", "ntile", "lag", "lead", "first_value", "last_value", "nth_value",
        "percent_rank", "cume_dist", "cast", "convert", "format", "lpad", "rpad", "reverse", "strcmp", "field", "elt", "find_in_set",
        "json_extract", "json_unquote", "json_length", "json_object", "json_array", "json_arrayagg", "json_objectagg", "json_contains",
        "json_keys", "json_value", "regexp_replace", "regexp_substr", "regexp_instr", "hex", "unhex", "md5", "sha1", "sha2", "crc32",
        "ascii", "char", "ord", "space", "quote", "soundex", "conv", "bin", "oct", "isnull", "any_value", "median",
    ]

    /// Functions a query may call on PostgreSQL.
    static let postgresFunctions: Set<String> = [
        "abs", "avg", "count", "sum", "min", "max", "coalesce", "nullif", "greatest", "least", "length", "char_length", "character_length",
        "octet_length", "lower", "upper", "substr", "substring", "trim", "ltrim", "rtrim", "btrim", "replace", "position", "strpos", "left",
        "right", "concat", "concat_ws", "round", "trunc", "ceil", "ceiling", "floor", "power", "sqrt", "exp", "ln", "log", "mod", "sign", "div",
        "date_trunc", "date_part", "extract", "to_char", "to_date", "to_timestamp", "to_number", "age", "make_date", "now", "string_agg",
        "array_agg", "bool_and", "bool_or", "every", "stddev", "stddev_pop", "stddev_samp", "variance", "var_pop", "var_samp",
        "percentile_cont", "percentile_disc", "mode", "corr", "row_number", "rank", "dense_rank", "ntile", "lag", "lead", "first_value",
        "last_value", "nth_value", "percent_rank", "cume_dist", "split_part", "initcap", "lpad", "rpad", "reverse", "regexp_replace",
        "regexp_match", "regexp_matches", "unnest", "json_agg", "jsonb_agg", "json_build_object", "jsonb_build_object", "json_extract_path",
        "json_extract_path_text", "jsonb_extract_path", "jsonb_extract_path_text", "json_array_length", "jsonb_array_length", "array_length",
        "cardinality", "array_to_string", "cast", "pi", "radians", "degrees", "width_bucket", "md5", "format", "extract",
    ]
}

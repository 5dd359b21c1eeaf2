import Foundation

/// PostgreSQL folds unquoted names to lower case, so `SELECT Title FROM Album` cannot reach a
/// table created as `"Album"` with a column `"Title"` (Portico's collections on PostgreSQL, and
/// many databases made by tools). SQLite matches names without regard to case. So that the same
/// query works on both, as a person or a model would write it, an unquoted name that matches one
/// of the datasource's mixed-case tables or columns (and only one) is quoted in its exact case.
/// Function names, type names after `::`, the query's own aliases (`AS name`) and names in
/// quotes are left as written.
enum IdentifierCase {
    static func quotingMixedCase(_ sql: String, names: some Sequence<String>) -> String {
        var exact: [String: String?] = [:]
        for name in names where name != name.lowercased() {
            let key = name.lowercased()
            if let seen = exact[key], seen != name {
                exact[key] = .some(nil)  // two names differ only in case: ambiguous, leave it
            } else {
                exact[key] = name
            }
        }
        guard !exact.isEmpty, let tokens = try? SQLTokenizer.tokenize(sql, dialect: .postgres) else { return sql }
        // Names the query gives its own columns and tables (`AS revenue`) mean those where they are
        // written the same way (`ORDER BY revenue`); `AS genre` does not stop `JOIN Genre` from
        // naming the table.
        var aliases: Set<String> = []
        for (index, token) in tokens.enumerated() where token.keyword == "AS" && index + 1 < tokens.count && tokens[index + 1].kind == .word {
            aliases.insert(tokens[index + 1].text)
        }
        var out = ""
        var at = sql.utf8.startIndex
        var changed = false
        for (index, token) in tokens.enumerated() where token.kind == .word {
            let lowered = token.text.lowercased()
            guard let found = exact[lowered], let name = found, !aliases.contains(token.text) else { continue }
            let next = index + 1 < tokens.count ? tokens[index + 1] : nil
            let previous = index > 0 ? tokens[index - 1] : nil
            if next?.isPunctuation("(") == true { continue }
            if previous?.kind == .symbol, previous?.text == "::" { continue }
            let start = sql.utf8.index(sql.utf8.startIndex, offsetBy: token.offset)
            out += sql[at..<start]
            out += "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
            at = sql.utf8.index(start, offsetBy: token.text.utf8.count)
            changed = true
        }
        guard changed else { return sql }
        out += sql[at...]
        return out
    }
}

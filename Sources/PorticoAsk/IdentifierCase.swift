import Foundation
import PorticoAskEngine
import PorticoBase

/// PostgreSQL folds unquoted names to lower case, so `SELECT Title FROM Album` cannot reach a
/// table created as `"Album"` with a column `"Title"` (Portico's collections on PostgreSQL, and
/// many databases made by tools). SQLite matches names without regard to case. So that the same
/// query works on both, as a person or a model would write it, an unquoted name that matches one
/// of the datasource's mixed-case tables or columns is quoted in its exact case: the one written
/// exactly so, else the only one it can mean (a name in two cases, written in a third, is left).
/// Function names, type names after `::`, the query's own aliases (`AS name`) and names in
/// quotes are left as written.
enum IdentifierCase {
    static func quotingMixedCase(_ sql: String, names: some Sequence<String>) -> String {
        // Every name by its lower-case form: `name` may be a column of one table and `Name` of another.
        var byKey: [String: Set<String>] = [:]
        var mixed = false
        for name in names {
            byKey[name.lowercased(), default: []].insert(name)
            if name != name.lowercased() { mixed = true }
        }
        guard mixed, let tokens = try? SQLTokenizer.tokenize(sql, dialect: .postgres) else { return sql }
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
            guard let candidates = byKey[token.text.lowercased()], !aliases.contains(token.text) else { continue }
            // A name written exactly as one that exists means that one; otherwise the only one
            // it can mean. A lower-case name folds to itself and needs no quotes.
            let name: String
            if candidates.contains(token.text) {
                name = token.text
            } else if candidates.count == 1, let only = candidates.first {
                name = only
            } else {
                continue
            }
            if name == name.lowercased() { continue }
            let next = index + 1 < tokens.count ? tokens[index + 1] : nil
            let previous = index > 0 ? tokens[index - 1] : nil
            if next?.isPunctuation("(") == true { continue }
            if previous?.kind == .symbol, previous?.text == "::" { continue }
            let start = sql.utf8.index(sql.utf8.startIndex, offsetBy: token.offset)
            out += sql[at..<start]
            out += "\"" + name.doubling("\"") + "\""
            at = sql.utf8.index(start, offsetBy: token.text.utf8.count)
            changed = true
        }
        guard changed else { return sql }
        out += sql[at...]
        return out
    }
}

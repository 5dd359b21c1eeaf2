import Foundation
import PorticoBase
package import PorticoStore

/// The distinct values of a datasource's text columns, so a question's "Brazil", "rock" or
/// "Led Zeppelin" finds the column that holds it. Built once per datasource, on first use.
public struct ValueIndex: Sendable {
    package struct Entry: Sendable, Equatable {
        package let column: Int
        package let value: String
        package let words: [String]
    }

    /// At most this many distinct values are read per column.
    package static let perColumn = 5000

    package var entries: [Entry] = []
    /// Entries by their whole text, lower-cased, words joined by one space.
    package var exact: [String: [Int]] = [:]
    /// Entries by each of their words, for phrases inside longer values.
    package var byWord: [String: [Int]] = [:]
    /// Distinct values seen per column (capped at `perColumn + 1`).
    package var distinct: [Int: Int] = [:]
    /// The table and column each column number stands for (numbers are those of the schema the
    /// index was built from).
    package var names: [Int: (table: String, column: String)] = [:]
    /// Columns whose values are often lists ("Angus Young, Malcolm Young"): a name in them is
    /// matched inside the text.
    package var listColumns: Set<Int> = []
    /// Text columns that hold a yes or a no ('Y'/'N', 'yes'/'no', 'T'/'F'), with the spellings
    /// stored: "students on scholarship" is a condition on one, as on a boolean column.
    package var flags: [Int: (yes: String, no: String?)] = [:]
    /// Text columns whose every value is a number ('7', '12.5'): counts, amounts or years kept as
    /// text, which the engine totals and averages as numbers (`SchemaModel.Column.numberKeptAsText`).
    package var numbers: Set<Int> = []
    /// Of `numbers`, the columns whose every value is a whole number of the same count of digits
    /// ('31', '43'): the database orders their text as it would the numbers.
    package var numbersOfOneWidth: Set<Int> = []

    public init() {}

    /// Records `column` as holding numbers when all of its distinct values were read and each is
    /// one; not a code or an identifier written in digits (a zip code, a phone, an `apt_number`).
    package mutating func noteNumbers(column: Int, words: [String], values: [String], complete: Bool) {
        let identifiers: Set<String> = ["id", "code", "phone", "zip", "postcode", "postal", "fax", "isbn", "ssn", "tel", "number", "no", "num"]
        let count = words.count == 3 && ["number", "no"].contains(words[0]) && words[1] == "of"
        guard complete, !values.isEmpty, count || !words.contains(where: identifiers.contains) else { return }
        guard
            values.allSatisfy({ value in
                let trimmed = value.trimmingCharacters(in: .whitespaces)
                let leadingZero = trimmed.count > 1 && trimmed.hasPrefix("0") && !trimmed.hasPrefix("0.")
                return trimmed.count <= 18 && Double(trimmed)?.isFinite == true && !leadingZero
            })
        else { return }
        numbers.insert(column)
        let width = values[0].count
        if values.allSatisfy({ $0.count == width && $0.allSatisfy({ $0.isASCII && $0.isNumber }) }) { numbersOfOneWidth.insert(column) }
    }

    package static let yesWords: Set<String> = ["y", "yes", "t", "true"]
    package static let noWords: Set<String> = ["n", "no", "f", "false"]

    /// Records `column` as a yes/no column when its distinct `values` are one yes and at most one no.
    package mutating func noteFlag(column: Int, values: [String]) {
        guard (1...2).contains(values.count) else { return }
        let yes = values.filter { Self.yesWords.contains($0.lowercased()) }
        let no = values.filter { Self.noWords.contains($0.lowercased()) }
        guard yes.count == 1, yes.count + no.count == values.count else { return }
        flags[column] = (yes[0], no.first)
    }

    /// Records the words for the one-letter codes of a column named as a sex or gender ('F' and
    /// 'M'): "female students" is a condition on it, as "French students" is on a nationality.
    package mutating func noteSexCodes(column: Int, words: [String], values: [String]) {
        guard words.contains(where: { ["sex", "gender"].contains($0) }), values.count <= 3 else { return }
        for value in values {
            let names: [String]
            switch value.lowercased() {
            case "f": names = ["female", "woman"]
            case "m": names = ["male", "man"]
            default: continue
            }
            for name in names {
                exact[name, default: []].append(entries.count)
                entries.append(Entry(column: column, value: value, words: [name]))
            }
        }
    }

    /// Reads the values of `tables`' text columns with `query` (one `SELECT DISTINCT` per column).
    package static func build(_ schema: SchemaModel, dialect: SQLDialect = .sqlite, query: (String) async throws -> [[SQLValue]]) async throws -> ValueIndex {
        var index = ValueIndex()
        for (ci, column) in schema.columnList.enumerated() where column.kind == .text && column.references == nil {
            let table = schema.tables[column.table].name
            let name = quote(column.name, dialect), from = quote(table, dialect)
            let sql = "SELECT DISTINCT \(name) FROM \(from) WHERE \(name) IS NOT NULL LIMIT \(perColumn + 1)"
            let rows = try await query(sql)
            index.distinct[ci] = rows.count
            index.names[ci] = (table, column.name)
            let listy = rows.prefix(perColumn).filter { row in
                guard case .text(let text)? = row.first else { return false }
                return text.contains(",") || text.contains("/") || text.contains(";")
            }.count
            if rows.count >= 10, listy * 10 >= rows.count * 3 { index.listColumns.insert(ci) }
            for row in rows.prefix(perColumn) {
                guard case .text(let text)? = row.first, !text.isEmpty, text.count <= 120 else { continue }
                index.add(column: ci, value: text)
            }
            let texts = rows.compactMap { if case .text(let text)? = $0.first { text } else { nil } }
            index.noteFlag(column: ci, values: texts)
            index.noteSexCodes(column: ci, words: column.words, values: texts)
            index.noteNumbers(column: ci, words: column.words, values: texts, complete: rows.count <= perColumn)
        }
        return index
    }

    package static func quote(_ name: String, _ dialect: SQLDialect) -> String {
        dialect == .mysql
            ? "`" + name.doubling("`") + "`" : "\"" + name.doubling("\"") + "\""
    }

    package mutating func add(column: Int, value: String) {
        let words = ValueIndex.words(value)
        guard !words.isEmpty else { return }
        let i = entries.count
        entries.append(Entry(column: column, value: value, words: words))
        exact[words.joined(separator: " "), default: []].append(i)
        for word in Set(words) where word.count >= 2 { byWord[word, default: []].append(i) }
    }

    /// Lower-case words of a value or phrase (letters and digits; the rest separates).
    package static func words(_ text: String) -> [String] {
        text.lowercased().split(whereSeparator: { !($0.isLetter || $0.isNumber) }).map(String.init)
    }

    /// Entries whose whole value is `phrase` (the last word may be plural: "agents").
    package func whole(_ phrase: [String]) -> [Entry] {
        guard let last = phrase.last else { return [] }
        var found: [Int] = []
        for form in Lexicon.forms(last) {
            found += exact[(phrase.dropLast() + [form]).joined(separator: " ")] ?? []
        }
        return found.map { entries[$0] }
    }

    /// Entries that hold `phrase` as consecutive words inside a longer value.
    package func containing(_ phrase: [String]) -> [Entry] {
        guard let first = phrase.first, let candidates = byWord[first] else { return [] }
        return candidates.map { entries[$0] }.filter { entry in
            guard entry.words.count > phrase.count else { return false }
            return (0...(entry.words.count - phrase.count)).contains { Array(entry.words[$0..<($0 + phrase.count)]) == phrase }
        }
    }

    /// Entries whose whole value is within a typo or two of `phrase` ("Brasil" for "Brazil"):
    /// one edit for names up to 9 letters, two for longer; nothing for short words, where a typo
    /// is as likely to be another word.
    package func near(_ phrase: [String]) -> [Entry] {
        let text = phrase.joined(separator: " ")
        guard text.count >= 5 else { return [] }
        let allowed = text.count >= 10 ? 2 : 1
        let target = Array(text)
        var found: [Entry] = []
        for entry in entries where entry.words.count == phrase.count {
            let candidate = Array(entry.words.joined(separator: " "))
            guard abs(candidate.count - target.count) <= allowed, candidate.first == target.first else { continue }
            if Self.distance(candidate, target, limit: allowed) <= allowed { found.append(entry) }
        }
        return found
    }

    /// Edit distance, giving up past `limit`.
    package static func distance(_ a: [Character], _ b: [Character], limit: Int) -> Int {
        var previous = Array(0...b.count)
        for i in 1...max(1, a.count) where !a.isEmpty {
            var current = [i] + Array(repeating: 0, count: b.count)
            var best = current[0]
            for j in 1...max(1, b.count) where !b.isEmpty {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
                best = min(best, current[j])
            }
            if best > limit { return best }
            previous = current
        }
        return previous[b.count]
    }

    /// The index renumbered for another schema of the same datasource (one a role narrowed):
    /// values of tables that schema lacks are left out.
    package func renumbered(for schema: SchemaModel) -> ValueIndex {
        var number: [String: Int] = [:]
        for (ci, column) in schema.columnList.enumerated() where column.expression == nil {
            number[schema.tables[column.table].name.lowercased() + "\u{0}" + column.name.lowercased()] = ci
        }
        func renumber(_ ci: Int) -> Int? {
            names[ci].flatMap { number[$0.table.lowercased() + "\u{0}" + $0.column.lowercased()] }
        }
        var index = ValueIndex()
        // Entries keep their words: an entry may stand for a word other than its value ("female" for 'F').
        for entry in entries {
            guard let ci = renumber(entry.column) else { continue }
            index.exact[entry.words.joined(separator: " "), default: []].append(index.entries.count)
            for word in Set(entry.words) where word.count >= 2 { index.byWord[word, default: []].append(index.entries.count) }
            index.entries.append(Entry(column: ci, value: entry.value, words: entry.words))
        }
        for (ci, flag) in flags { if let n = renumber(ci) { index.flags[n] = flag } }
        for (ci, count) in distinct { if let n = renumber(ci) { index.distinct[n] = count } }
        for ci in listColumns { if let n = renumber(ci) { index.listColumns.insert(n) } }
        for ci in numbers { if let n = renumber(ci) { index.numbers.insert(n) } }
        for ci in numbersOfOneWidth { if let n = renumber(ci) { index.numbersOfOneWidth.insert(n) } }
        for (ci, name) in names { if let n = renumber(ci) { index.names[n] = name } }
        return index
    }
}

import Foundation
import PorticoAskEngine
import PorticoData
public import PorticoStore

/// A datasource's schema as a model reads it: one line per table with its columns, keys and a
/// few sample values; tables ranked by relevance to the question so a large schema stays within
/// the prompt's budget.
public enum SchemaText {
    /// Characters of schema a prompt carries at most (about 6,000 tokens).
    public static let defaultBudget = 24_000

    public static func render(_ tables: [SourceTable], question: String, budget: Int = defaultBudget) -> String {
        var out = ""
        for table in rank(tables, question: question) {
            let line = describe(table)
            if !out.isEmpty, out.utf8.count + line.utf8.count > budget { break }
            out += line
        }
        return out
    }

    static func describe(_ table: SourceTable) -> String {
        let keys = Dictionary(table.foreignKeys.map { ($0.column, $0) }, uniquingKeysWith: { first, _ in first })
        let columns = table.columns.map { column in
            var text = column.type.isEmpty ? column.name : "\(column.name) \(column.type)"
            if column.primaryKey { text += " PK" }
            if let key = keys[column.name] { text += " -> \(key.table)" + (key.targetColumn.map { ".\($0)" } ?? "") }
            return text
        }
        var line = "\(table.isView ? "VIEW" : "TABLE") \(table.name) (\(columns.joined(separator: ", ")))\n"
        var notes = table.comment.map { ["\(table.name): \($0)"] } ?? []
        notes += table.columns.compactMap { column in column.comment.map { "\(column.name): \($0)" } }
        if !notes.isEmpty { line += "  -- " + notes.joined(separator: "; ") + "\n" }
        let samples = table.columns.filter { !$0.samples.isEmpty }.map { column in
            "\(column.name): " + column.samples.map { "'" + $0.prefix(40).replacingOccurrences(of: "\n", with: " ") + "'" }.joined(separator: ", ")
        }
        if !samples.isEmpty { line += "  e.g. " + samples.joined(separator: "; ") + "\n" }
        return line
    }

    /// Tables in order of how many of the question's words their names, columns and sample values
    /// match; the tables they reference follow them, so joins stay possible. Ties keep the schema's order.
    public static func rank(_ tables: [SourceTable], question: String) -> [SourceTable] {
        let words = Set(Self.words(question))
        guard !words.isEmpty else { return tables }
        let scores = tables.map { table -> Int in
            var score = 0
            let name = Set(Self.words(table.name))
            score += 4 * name.intersection(words).count
            if let comment = table.comment { score += 2 * Set(Self.words(comment)).intersection(words).count }
            for column in table.columns {
                score += 2 * Set(Self.words(column.name)).intersection(words).count
                for sample in column.samples { score += Set(Self.words(sample)).intersection(words).count }
                if let comment = column.comment { score += Set(Self.words(comment)).intersection(words).count }
            }
            return score
        }
        let order = tables.indices.sorted { scores[$0] != scores[$1] ? scores[$0] > scores[$1] : $0 < $1 }
        var ranked: [Int] = []
        var placed = Set<Int>()
        let index = Dictionary(tables.indices.map { (tables[$0].name.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
        for i in order where !placed.contains(i) {
            ranked.append(i)
            placed.insert(i)
            guard scores[i] > 0 else { continue }
            for key in tables[i].foreignKeys {
                if let j = index[key.table.lowercased()], !placed.contains(j) {
                    ranked.append(j)
                    placed.insert(j)
                }
            }
        }
        return ranked.map { tables[$0] }
    }

    /// Lower-cased words of a name or question: camelCase and snake_case split, English plurals made singular.
    static func words(_ text: String) -> [String] {
        SchemaModel.words(text).map(singular).filter { $0.count >= 2 }
    }

    /// An English plural made singular (`categories` → `category`, `boxes` → `box`, `orders` → `order`).
    static func singular(_ word: String) -> String {
        var w = word
        if w.count > 4, w.hasSuffix("ies") {
            w.removeLast(3)
            w += "y"
        } else if w.count > 4, ["ses", "xes", "ches", "shes"].contains(where: { w.hasSuffix($0) }) {
            w.removeLast(2)
        } else if w.count > 3, w.hasSuffix("s"), !w.hasSuffix("ss") {
            w.removeLast()
        }
        return w
    }
}

import PorticoData
public import PorticoStore

/// Scores an answer against a gold query's rows, by the rule of `ask-dev.jsonl`: the answer's
/// rows hold every gold column's values, in the gold row order where the gold SQL orders.
/// Extra answer columns are fine; column names and order do not matter.
public enum EvalScorer {
    public static func isCorrect(answer: [[SQLValue]], gold: [[SQLValue]], goldSQL: String) -> Bool {
        guard answer.count == gold.count else { return false }
        guard let goldWidth = gold.first?.count else { return true }
        guard let answerWidth = answer.first?.count, answerWidth > 0 else { return false }
        let ordered = goldSQL.uppercased().contains("ORDER BY")
        // For each gold column, the answer columns holding the same values (as a multiset).
        var candidates: [[Int]] = []
        for g in 0..<goldWidth {
            let goldColumn = sortedKeys(gold.map { $0[g] })
            let found = (0..<answerWidth).filter { a in sortedKeys(answer.map { $0[a] }) == goldColumn }
            guard !found.isEmpty else { return false }
            candidates.append(found)
        }
        // Then the columns together, row by row, for one assignment of answer columns (a few tried).
        var tried = 0
        func search(_ column: Int, _ chosen: [Int]) -> Bool {
            if column == goldWidth {
                tried += 1
                let answerRows = answer.map { row in chosen.map { key(row[$0]) } }
                let goldRows = gold.map { row in (0..<goldWidth).map { key(row[$0]) } }
                return ordered ? answerRows == goldRows : answerRows.sorted(by: lexicographic) == goldRows.sorted(by: lexicographic)
            }
            for a in candidates[column] where tried < 256 {
                if search(column + 1, chosen + [a]) { return true }
            }
            return false
        }
        return search(0, [])
    }

    static func lexicographic(_ a: [String], _ b: [String]) -> Bool { a.lexicographicallyPrecedes(b) }

    static func sortedKeys(_ values: [SQLValue]) -> [String] { values.map(key).sorted() }

    /// A value as compared: numbers rounded to two decimals (an answer may round a sum), text as is.
    static func key(_ value: SQLValue) -> String {
        switch value {
        case .null: return "\u{0}null"
        case .bool(let b): return b ? "1" : "0"
        case .int(let i): return number(Double(i))
        case .double(let d): return number(d)
        case .text(let s): return Double(s).map(number) ?? s
        }
    }

    static func number(_ d: Double) -> String {
        let rounded = (d * 100).rounded() / 100
        return rounded == 0 ? "0" : String(rounded)
    }
}

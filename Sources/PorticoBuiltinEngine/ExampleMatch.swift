import Foundation
package import PorticoAskEngine
import PorticoBase

/// A question read as a pattern: its words, with the numbers, quoted texts and known values of
/// the datasource taken out as slots. Two questions with the same words and slots of the same
/// kinds ask the same thing of other values, so a saved example's SQL answers the new question
/// once its literals are replaced by the new values.
struct QuestionPattern: Equatable {
    enum Slot: Equatable {
        case number(Double)
        /// Quoted text, or a value of the datasource with the columns it was found in.
        case text(String, columns: Set<Int>?)

        func sameKind(as other: Slot) -> Bool {
            switch (self, other) {
            case (.number, .number): return true
            case (.text(_, let a?), .text(_, let b?)): return !a.isDisjoint(with: b)
            case (.text(_, nil), .text(_, nil)): return true
            default: return false
            }
        }
    }

    /// The question's words in order, each slot as a placeholder.
    var words: [String] = []
    var slots: [Slot] = []

    static let placeholder = "\u{1}"

    init(_ question: String, values: ValueIndex) {
        let tokens = QuestionReader(question).tokens
        var i = 0
        while i < tokens.count {
            let token = tokens[i]
            if token.quoted {
                // Quoted or not, a value of the datasource is known by its columns.
                let entries = values.whole(ValueIndex.words(token.text))
                words.append(Self.placeholder)
                slots.append(.text(entries.first?.value ?? token.text, columns: entries.isEmpty ? nil : Set(entries.map(\.column))))
                i += 1
                continue
            }
            if let n = token.number {
                words.append(Self.placeholder)
                slots.append(.number(n))
                i += 1
                continue
            }
            // A value written as a name: the longest run, from a capital, that is a whole value.
            var found = false
            if token.text.first?.isUppercase == true {
                for length in stride(from: min(4, tokens.count - i), through: 1, by: -1) {
                    let span = tokens[i..<(i + length)]
                    guard span.allSatisfy({ !$0.quoted && $0.number == nil }) else { continue }
                    let entries = values.whole(span.map(\.lower))
                    guard let first = entries.first else { continue }
                    words.append(Self.placeholder)
                    slots.append(.text(first.value, columns: Set(entries.map(\.column))))
                    i += length
                    found = true
                    break
                }
            }
            if !found {
                words.append(token.lower)
                i += 1
            }
        }
    }

    /// The example's SQL with its slots' values replaced by this question's; `nil` when the
    /// questions differ, or a value that changed cannot be found in the SQL as one literal.
    func adapt(_ example: QuestionPattern, sql: String, dialect: SQLDialect) -> String? {
        guard words == example.words, slots.count == example.slots.count, zip(slots, example.slots).allSatisfy({ $0.sameKind(as: $1) }) else {
            return nil
        }
        guard let tokens = try? SQLTokenizer.tokenize(sql, dialect: dialect) else { return nil }
        let utf8 = Array(sql.utf8)
        var replacements: [(range: Range<Int>, text: String)] = []
        for (new, old) in zip(slots, example.slots) where new != old {
            // Two slots with the same old value cannot be told apart in the SQL.
            guard example.slots.filter({ Self.value($0) == Self.value(old) }).count == 1 else { return nil }
            let places = tokens.filter { Self.literal($0, is: old) }
            guard !places.isEmpty else { return nil }
            for place in places {
                replacements.append((place.offset..<(place.offset + place.text.utf8.count), Self.literal(new)))
            }
        }
        var out = utf8
        for replacement in replacements.sorted(by: { $0.range.lowerBound > $1.range.lowerBound }) {
            out.replaceSubrange(replacement.range, with: Array(replacement.text.utf8))
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func value(_ slot: Slot) -> String {
        switch slot {
        case .number(let n): return "#\(n)"
        case .text(let text, _): return text.lowercased()
        }
    }

    /// Whether an SQL token is the literal of a slot's value.
    static func literal(_ token: SQLToken, is slot: Slot) -> Bool {
        switch (token.kind, slot) {
        case (.number, .number(let n)): return Double(token.text) == n
        case (.string, .text(let text, _)):
            guard token.text.count >= 2, token.text.first == "'", token.text.last == "'" else { return false }
            return token.text.dropFirst().dropLast().undoubling("'").lowercased() == text.lowercased()
        default: return false
        }
    }

    static func literal(_ slot: Slot) -> String {
        switch slot {
        case .number(let n): return n == n.rounded() && abs(n) < 1e15 ? String(Int64(n)) : String(n)
        case .text(let text, _): return "'" + text.doubling("'") + "'"
        }
    }
}

extension BuiltinEngine {
    /// The SQL of the first saved example the question matches, with the question's values.
    static func fromExamples(_ request: EngineRequest, values: ValueIndex) -> (sql: String, example: Example)? {
        guard !request.savedExamples.isEmpty else { return nil }
        let pattern = QuestionPattern(request.question, values: values)
        for example in request.savedExamples {
            if let sql = pattern.adapt(QuestionPattern(example.question, values: values), sql: example.sql, dialect: request.dialect) {
                return (sql, example)
            }
        }
        return nil
    }
}

extension BuiltinEngine {
    /// The SQL of the first saved example the question asks again with other values, for any
    /// engine: an answer adapted from a verified query comes before one generated.
    package static func savedExample(for request: EngineRequest, values: ValueIndex) -> (sql: String, example: Example)? {
        fromExamples(request, values: values)
    }
}

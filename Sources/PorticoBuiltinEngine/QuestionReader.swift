import Foundation
import PorticoAskEngine

/// A question as the built-in engine reads it: words, numbers and quoted text, in order, with
/// what each was taken to mean.
struct QuestionReader {
    struct Token: Sendable {
        var text: String
        var lower: String
        var number: Double?
        var quoted = false
        /// Written with a capital inside the sentence (a name, likely a value).
        var capitalized = false
        /// A comma follows it ("first, last name").
        var beforeComma = false
        /// A day written as YYYY-MM-DD ("before 2002-06-21").
        var day: String?
        /// A number written with a currency sign ("$20", "20 €"): an amount of money.
        var money = false
        var used = false
    }

    /// What a stretch of the question means.
    enum Item: Sendable, Equatable {
        case count
        case function(QueryPlan.Function)
        /// most/least/top/highest…, with the word that may say which column ("longest", "expensive").
        case superlative(descending: Bool, word: String)
        case top(Int)
        /// "per", "by", "grouped by"; `each` for "each", "every", "for each".
        case groupMarker(each: Bool)
        /// "corresponding" before a count: what comes before it is grouped by (`correspondingAsEach`).
        case correspondingMarker
        case bucket(QueryPlan.Bucket)
        case table(Int)
        case columns([Int])
        /// A verb that names a date column ("hired", "enrolled"): which date a year or month is about.
        case dateVerb([Int])
        case value([ValueIndex.Entry], phrase: String, partial: Bool)
        case year(Int)
        case month(Int, year: Int?)
        /// A day written YYYY-MM-DD.
        case day(String)
        case compare(QueryPlan.Comparison, word: String)
        /// "between 50000 and 70000": both bounds included.
        case range(Double, Double)
        case number(Double, unit: String?)
        case negation
        case textMatch(TextMatch)
        case text(String)
        case money
        case or
        case which
        case who
        case average
        /// "distinct", "different", "unique": each value once, or counted once.
        case distinct
        /// "ordered by", "sorted by": the column after it orders a list.
        case orderBy
        /// "in descending order", "from highest to lowest"; `ofAge` when the words were about age
        /// ("from the oldest to the youngest"), which runs the other way on a date.
        case direction(descending: Bool, ofAge: Bool)
        /// "alphabetically", "in alphabetical order".
        case alphabetical
    }

    enum TextMatch: Sendable, Equatable { case contains, starts, ends }

    static let largestNumber = 1e12

    var tokens: [Token] = []
    /// The terms' filters the question named (`SchemaModel.filters`), in order.
    var namedFilters: [Int] = []
    /// Letters outside the Latin alphabet, a sign of a language the engine does not read.
    var foreignLetters = 0
    var letters = 0

    init(_ question: String) {
        var current = ""
        var chars = Array(question)
        chars.append(" ")
        var i = 0
        var sentenceStart = true
        // A currency sign read before a number, for the number's token.
        var currency = false
        func flush() {
            guard !current.isEmpty else { return }
            var token = Token(text: current, lower: current.lowercased())
            defer { currency = false }
            let digits = current.replacingOccurrences(of: ",", with: "")
            // Numbers a question can mean; a larger one is not read as a number (it would overflow a limit or a
            // year, or print as "inf"), so the question is refused for a word the engine did not understand.
            if let n = Double(digits), digits.first?.isNumber == true || digits.first == "-" && digits.count > 1, n.isFinite,
                abs(n) <= Self.largestNumber
            {
                token.number = n
                token.money = currency
            }
            token.capitalized = !sentenceStart && (current.first?.isUppercase ?? false)
            tokens.append(token)
            sentenceStart = false
            current = ""
        }
        while i < chars.count {
            let c = chars[i]
            if c.isLetter {
                letters += 1
                if !c.isASCII { foreignLetters += 1 }
            }
            if c == "\"" || c == "“" || c == "'" && current.isEmpty && (i == 0 || !chars[i - 1].isLetter) {
                // A quoted phrase: everything up to the closing quote is one token.
                let close: Set<Character> = c == "'" ? ["'"] : ["\"", "”"]
                var j = i + 1
                var text = ""
                while j < chars.count - 1, !close.contains(chars[j]) || (c == "'" && j + 1 < chars.count && chars[j + 1].isLetter) {
                    text.append(chars[j])
                    j += 1
                }
                if j < chars.count - 1 {
                    flush()
                    var token = Token(text: text, lower: text.lowercased())
                    token.quoted = true
                    tokens.append(token)
                    sentenceStart = false
                    i = j + 1
                    continue
                }
            }
            if current.isEmpty, let day = Self.day(at: i, in: chars) {
                // "2002-06-21": one day, not the numbers 2002, 06 and 21.
                var token = Token(text: day, lower: day)
                token.day = day
                tokens.append(token)
                sentenceStart = false
                i += day.count
                continue
            }
            if c == "'" || c == "’" {
                // A possessive or contraction: "representative's" reads as "representative".
                if i + 1 < chars.count, chars[i + 1] == "s", i + 2 < chars.count, !chars[i + 2].isLetter {
                    flush()
                    i += 2
                    continue
                }
                i += 1
                continue
            }
            if "<>=!≤≥≠".contains(c) {
                // "salary > 80000", "age <= 30": a comparison written as a sign, one token ("!" alone ends a sentence).
                let sign = i + 1 < chars.count && "<>=".contains(chars[i + 1]) && c != "=" ? String([c, chars[i + 1]]) : String(c)
                flush()
                if sign != "!" { tokens.append(Token(text: sign, lower: sign)) }
                sentenceStart = sign == "!"
                i += sign.count
                continue
            }
            if current.isEmpty, "-−.".contains(c), i + 1 < chars.count, chars[i + 1].isNumber, i == 0 || !(chars[i - 1].isLetter || chars[i - 1].isNumber) {
                // "below -5", "over .5": the sign or point is the number's, never dropped.
                current = c == "." ? "0." : "-"
                i += 1
                continue
            }
            if "$€£¥".contains(c) {
                // "over $20": the sign says the number is money; "20 €" says it after.
                if current.isEmpty, i + 1 < chars.count, chars[i + 1].isNumber {
                    flush()
                    currency = true
                } else if current.first?.isNumber == true, !current.contains(where: \.isLetter) {
                    currency = true
                    flush()
                } else if let last = tokens.indices.last, current.isEmpty, tokens[last].number != nil {
                    tokens[last].money = true
                }
                i += 1
                continue
            }
            let inNumber = current.first?.isNumber == true || current.first == "-" && current.count > 1
            if c.isLetter || c.isNumber || (c == "." || c == ",") && inNumber && i + 1 < chars.count && chars[i + 1].isNumber {
                current.append(c)
            } else {
                flush()
                if c == ",", !tokens.isEmpty { tokens[tokens.count - 1].beforeComma = true }
                if c == "?" || c == "!" || c == ";" { sentenceStart = true }
            }
            i += 1
        }
        tokens = Self.writtenDays(tokens)
    }

    /// "June 21, 2002", "November 5th, 2007", "7th September, 1987": a day written in words, one
    /// token as if written 2002-06-21.
    static func writtenDays(_ tokens: [Token]) -> [Token] {
        func dayOfMonth(_ t: Token) -> Int? {
            let digits =
                t.lower.hasSuffix("st") || t.lower.hasSuffix("nd") || t.lower.hasSuffix("rd") || t.lower.hasSuffix("th")
                ? String(t.lower.dropLast(2)) : t.lower
            guard !t.quoted, digits.count <= 2, let d = Int(digits), (1...31).contains(d) else { return nil }
            return d
        }
        func month(_ t: Token) -> Int? { t.quoted || t.lower == "may" && !t.text.hasPrefix("M") ? nil : Lexicon.months[t.lower] }
        func year(_ t: Token) -> Int? { t.quoted ? nil : Int(t.lower).flatMap { (1000...2999).contains($0) ? $0 : nil } }
        var out: [Token] = []
        var i = 0
        while i < tokens.count {
            if i + 2 < tokens.count {
                let (a, b, c) = (tokens[i], tokens[i + 1], tokens[i + 2])
                let found: (Int, Int, Int)? =
                    if let m = month(a), let d = dayOfMonth(b), let y = year(c) { (y, m, d) } else if let d = dayOfMonth(a), let m = month(b), let y = year(c) {
                        (y, m, d)
                    } else { nil }
                if let (y, m, d) = found {
                    let text = String(format: "%04ld-%02ld-%02ld", y, m, d)
                    var token = Token(text: text, lower: text)
                    token.day = text
                    token.beforeComma = c.beforeComma
                    out.append(token)
                    i += 3
                    continue
                }
            }
            out.append(tokens[i])
            i += 1
        }
        return out
    }

    var isForeign: Bool { letters > 0 && foreignLetters * 3 > letters }

    /// The day written YYYY-MM-DD at `i`, with a month from 1 to 12 and a day from 1 to 31.
    static func day(at i: Int, in chars: [Character]) -> String? {
        guard i + 10 <= chars.count, i + 10 == chars.count || !chars[i + 10].isNumber, i == 0 || !chars[i - 1].isNumber else { return nil }
        let text = String(chars[i..<(i + 10)])
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2, parts.allSatisfy({ $0.allSatisfy(\.isNumber) }),
            let month = Int(parts[1]), (1...12).contains(month), let day = Int(parts[2]), (1...31).contains(day)
        else { return nil }
        return text
    }
}

extension QuestionReader.Item {
    var isGroupMarker: Bool { if case .groupMarker = self { true } else { false } }
    var isTable: Bool { if case .table = self { true } else { false } }
    var isDirection: Bool { if case .direction = self { true } else { false } }

    /// A number, a count or "most"/"fewest": what comes next is counted ("more than one record").
    var isCountedBefore: Bool {
        switch self {
        case .number, .count, .top: true
        case .superlative(_, let word): ["most", "fewest", "least"].contains(word)
        default: false
        }
    }
}

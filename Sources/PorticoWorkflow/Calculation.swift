import Foundation
import PorticoBase
import PorticoData
import PorticoJSON
import PorticoStore

/// The calculation node's language: arithmetic, comparisons, `&&` `||` `!`, text in quotes,
/// `{{variables}}`, and a fixed list of functions over numbers, text and dates. It is parsed into
/// a tree and evaluated over values; nothing in it can run code, read files or loop, and its size
/// and depth are bounded.
struct Calculation: Sendable {
    indirect enum Expression: Sendable {
        case literal(JSON)
        case variable(String)
        case unary(String, Expression)
        case binary(String, Expression, Expression)
        case call(String, [Expression])
    }

    static let maxLength = 4000
    static let maxDepth = 48
    static let maxTextBytes = 64 * 1024

    let root: Expression

    static let functions: [String: ClosedRange<Int>] = [
        "round": 1...2, "floor": 1...1, "ceil": 1...1, "abs": 1...1, "min": 1...32, "max": 1...32, "sum": 1...32, "avg": 1...32,
        "concat": 1...32, "upper": 1...1, "lower": 1...1, "trim": 1...1, "length": 1...1, "substring": 2...3, "contains": 2...2,
        "replace": 3...3, "if": 3...3, "coalesce": 1...32, "number": 1...1, "string": 1...1, "now": 0...0, "dateAdd": 3...3,
        "dateDiff": 3...3, "formatDate": 1...1,
    ]

    init(_ text: String) throws(WorkflowError) {
        guard text.utf8.count <= Self.maxLength else { throw WorkflowError("the expression is longer than \(Self.maxLength) characters") }
        var parser = Parser(tokens: try Self.tokenize(text))
        root = try parser.expression(depth: 0)
        guard parser.index == parser.tokens.count else {
            throw WorkflowError("the expression has '\(parser.tokens[parser.index].text)' where it should end")
        }
    }

    /// The variables the expression names.
    var variables: [String] {
        var names: [String] = []
        func walk(_ e: Expression) {
            switch e {
            case .literal: break
            case .variable(let name): names.append(name)
            case .unary(_, let inner): walk(inner)
            case .binary(_, let l, let r):
                walk(l)
                walk(r)
            case .call(_, let arguments): arguments.forEach(walk)
            }
        }
        walk(root)
        return names
    }

    func evaluate(_ variables: Variables) throws(WorkflowError) -> JSON {
        try Evaluator(variables: variables).value(root)
    }

    // MARK: Tokens

    struct Token: Sendable {
        enum Kind: Sendable { case number, text, name, variable, symbol }
        let kind: Kind
        let text: String
    }

    static func tokenize(_ source: String) throws(WorkflowError) -> [Token] {
        var tokens: [Token] = []
        let chars = Array(source.unicodeScalars)
        var i = 0
        let symbols = ["==", "!=", "<=", ">=", "&&", "||", "+", "-", "*", "/", "%", "(", ")", ",", "<", ">", "!"]
        while i < chars.count {
            let c = chars[i]
            if c.properties.isWhitespace {
                i += 1
                continue
            }
            if c == "{", i + 1 < chars.count, chars[i + 1] == "{" {
                var j = i + 2
                while j + 1 < chars.count, !(chars[j] == "}" && chars[j + 1] == "}") { j += 1 }
                guard j + 1 < chars.count else { throw WorkflowError("a variable opened with {{ is not closed with }}") }
                let name = String(String.UnicodeScalarView(chars[(i + 2)..<j])).trimmingCharacters(in: .whitespaces)
                _ = try VariablePath(name)
                tokens.append(Token(kind: .variable, text: name))
                i = j + 2
                continue
            }
            if c == "'" || c == "\"" {
                var j = i + 1
                var text = String.UnicodeScalarView()
                while j < chars.count, chars[j] != c {
                    if chars[j] == "\\", j + 1 < chars.count { j += 1 }
                    text.append(chars[j])
                    j += 1
                }
                guard j < chars.count else { throw WorkflowError("text opened with \(c) is not closed") }
                tokens.append(Token(kind: .text, text: String(text)))
                i = j + 1
                continue
            }
            if c.properties.numericType != nil || (c == "." && i + 1 < chars.count && chars[i + 1].properties.numericType != nil) {
                var j = i
                while j < chars.count, chars[j].properties.numericType != nil || chars[j] == "." { j += 1 }
                tokens.append(Token(kind: .number, text: String(String.UnicodeScalarView(chars[i..<j]))))
                i = j
                continue
            }
            if c.properties.isAlphabetic || c == "_" {
                var j = i
                while j < chars.count, chars[j].properties.isAlphabetic || chars[j].properties.numericType != nil || chars[j] == "_" { j += 1 }
                tokens.append(Token(kind: .name, text: String(String.UnicodeScalarView(chars[i..<j]))))
                i = j
                continue
            }
            let rest = String(String.UnicodeScalarView(chars[i..<min(chars.count, i + 2)]))
            guard let symbol = symbols.first(where: { rest.hasPrefix($0) }) else {
                throw WorkflowError("the expression has '\(c)', which is not part of the calculation language")
            }
            tokens.append(Token(kind: .symbol, text: symbol))
            i += symbol.unicodeScalars.count
        }
        return tokens
    }

    // MARK: Parsing (precedence climbing)

    struct Parser {
        let tokens: [Token]
        var index = 0

        static let precedence: [String: Int] = [
            "||": 1, "or": 1, "&&": 2, "and": 2, "==": 3, "!=": 3, "<": 4, "<=": 4, ">": 4, ">=": 4, "+": 5, "-": 5, "*": 6, "/": 6, "%": 6,
        ]

        mutating func expression(depth: Int, minimum: Int = 1) throws(WorkflowError) -> Expression {
            guard depth < Calculation.maxDepth else { throw WorkflowError("the expression is nested too deeply") }
            var left = try unary(depth: depth + 1)
            while index < tokens.count, tokens[index].kind == .symbol || tokens[index].kind == .name,
                let level = Self.precedence[tokens[index].text], level >= minimum
            {
                let op = tokens[index].text == "or" ? "||" : (tokens[index].text == "and" ? "&&" : tokens[index].text)
                index += 1
                let right = try expression(depth: depth + 1, minimum: level + 1)
                left = .binary(op, left, right)
            }
            return left
        }

        mutating func unary(depth: Int) throws(WorkflowError) -> Expression {
            guard index < tokens.count else { throw WorkflowError("the expression ends where a value should be") }
            let token = tokens[index]
            if token.kind == .symbol, token.text == "-" || token.text == "!" {
                index += 1
                return .unary(token.text, try unary(depth: depth + 1))
            }
            if token.kind == .name, token.text == "not" {
                index += 1
                return .unary("!", try unary(depth: depth + 1))
            }
            return try primary(depth: depth)
        }

        mutating func primary(depth: Int) throws(WorkflowError) -> Expression {
            let token = tokens[index]
            index += 1
            switch token.kind {
            case .number:
                if let i = Int64(token.text) { return .literal(.int(i)) }
                guard let d = Double(token.text) else { throw WorkflowError("'\(token.text)' is not a number") }
                return .literal(.double(d))
            case .text:
                return .literal(.string(token.text))
            case .variable:
                return .variable(token.text)
            case .name:
                switch token.text {
                case "true": return .literal(true)
                case "false": return .literal(false)
                case "null": return .literal(.null)
                default: break
                }
                guard let arity = Calculation.functions[token.text] else {
                    throw WorkflowError(
                        "unknown name '\(token.text)'; use a {{variable}}, text in quotes, or a function: \(Calculation.functions.keys.sorted().joined(separator: ", "))"
                    )
                }
                guard index < tokens.count, tokens[index].text == "(" else { throw WorkflowError("\(token.text) is a function: write \(token.text)(…)") }
                index += 1
                var arguments: [Expression] = []
                if index < tokens.count, tokens[index].text == ")" {
                    index += 1
                } else {
                    while true {
                        arguments.append(try expression(depth: depth + 1))
                        guard index < tokens.count else { throw WorkflowError("\(token.text)( is not closed") }
                        let next = tokens[index].text
                        index += 1
                        if next == ")" { break }
                        guard next == "," else { throw WorkflowError("expected , or ) in the arguments of \(token.text), got '\(next)'") }
                    }
                }
                guard arity.contains(arguments.count) else {
                    throw WorkflowError(
                        "\(token.text) takes \(arity.lowerBound == arity.upperBound ? "\(arity.lowerBound)" : "\(arity.lowerBound) to \(arity.upperBound)") arguments, got \(arguments.count)"
                    )
                }
                return .call(token.text, arguments)
            case .symbol:
                guard token.text == "(" else { throw WorkflowError("the expression has '\(token.text)' where a value should be") }
                let inner = try expression(depth: depth + 1)
                guard index < tokens.count, tokens[index].text == ")" else { throw WorkflowError("a ( is not closed") }
                index += 1
                return inner
            }
        }
    }
}

/// Evaluates a parsed calculation over an execution's variables.
struct Evaluator {
    let variables: Variables

    func value(_ expression: Calculation.Expression) throws(WorkflowError) -> JSON {
        switch expression {
        case .literal(let value): return value
        case .variable(let name): return try variables.value(name) ?? .null
        case .unary(let op, let inner):
            let v = try value(inner)
            if op == "!" { return .bool(!FilterMatcher.truthy(v)) }
            guard let n = FilterMatcher.number(v) else { throw WorkflowError("- needs a number, got \(v.typeName)") }
            if case .int(let i) = v, i != .min { return .int(-i) }
            return .double(-n)
        case .binary(let op, let l, let r):
            if op == "&&" || op == "||" {
                // Short-circuit: the right side is evaluated only when it decides.
                let left = FilterMatcher.truthy(try value(l))
                if op == "&&" ? !left : left { return .bool(left) }
                return .bool(FilterMatcher.truthy(try value(r)))
            }
            return try binary(op, try value(l), try value(r))
        case .call(let name, let arguments):
            if name == "if" { return FilterMatcher.truthy(try value(arguments[0])) ? try value(arguments[1]) : try value(arguments[2]) }
            var values: [JSON] = []
            for argument in arguments { values.append(try value(argument)) }
            return try call(name, values)
        }
    }

    func binary(_ op: String, _ a: JSON, _ b: JSON) throws(WorkflowError) -> JSON {
        switch op {
        case "==": return .bool(FilterMatcher.equal(a, b))
        case "!=": return .bool(!FilterMatcher.equal(a, b))
        case "<", "<=", ">", ">=":
            guard let order = FilterMatcher.compare(a, b) else { return .bool(false) }
            switch op {
            case "<": return .bool(order < 0)
            case "<=": return .bool(order <= 0)
            case ">": return .bool(order > 0)
            default: return .bool(order >= 0)
            }
        case "+" where a.stringValue != nil && FilterMatcher.number(a) == nil || b.stringValue != nil && FilterMatcher.number(b) == nil:
            return try text(Variables.text(a) + Variables.text(b))
        default:
            guard let x = FilterMatcher.number(a), let y = FilterMatcher.number(b) else {
                throw WorkflowError("\(op) needs numbers, got \(a.typeName) and \(b.typeName)")
            }
            if case .int(let i) = a, case .int(let j) = b {
                switch op {
                case "+":
                    let (r, o) = i.addingReportingOverflow(j)
                    if !o { return .int(r) }
                case "-":
                    let (r, o) = i.subtractingReportingOverflow(j)
                    if !o { return .int(r) }
                case "*":
                    let (r, o) = i.multipliedReportingOverflow(by: j)
                    if !o { return .int(r) }
                case "%":
                    guard j != 0 else { throw WorkflowError("% by zero") }
                    // Int64.min % -1 overflows in the machine, though its remainder is 0.
                    let (r, o) = i.remainderReportingOverflow(dividingBy: j)
                    return .int(o ? 0 : r)
                default: break
                }
            }
            switch op {
            case "+": return try Self.number(x + y)
            case "-": return try Self.number(x - y)
            case "*": return try Self.number(x * y)
            case "/":
                guard y != 0 else { throw WorkflowError("division by zero") }
                return try Self.number(x / y)
            case "%":
                guard y != 0 else { throw WorkflowError("% by zero") }
                return try Self.number(x.truncatingRemainder(dividingBy: y))
            default: throw WorkflowError("unknown operator \(op)")
            }
        }
    }

    func text(_ s: String) throws(WorkflowError) -> JSON {
        guard s.utf8.count <= Calculation.maxTextBytes else { throw WorkflowError("a text result is longer than \(Calculation.maxTextBytes / 1024) KiB") }
        return .string(s)
    }

    func numbers(_ name: String, _ values: [JSON]) throws(WorkflowError) -> [Double] {
        var result: [Double] = []
        for value in values {
            if case .array(let items) = value {
                result += try numbers(name, items)
                continue
            }
            guard let n = FilterMatcher.number(value) else { throw WorkflowError("\(name) needs numbers, got \(value.typeName)") }
            result.append(n)
        }
        return result
    }

    /// A result as a value: whole numbers within ±9e15 (exact in a double) as integers. A result
    /// past the doubles (1e308 * 10) is refused rather than stored as infinity.
    static func number(_ d: Double) throws(WorkflowError) -> JSON {
        guard d.isFinite else { throw WorkflowError("the result is too large to be a number (past ±1.8e308)") }
        return d == d.rounded() && abs(d) < 9e15 ? .int(Int64(d)) : .double(d)
    }

    /// A whole number from an argument, within `range`: the argument is checked as a double before
    /// it is converted, so no value (1e300, a huge integer, text) can make the conversion trap.
    static func whole(_ value: JSON, in range: ClosedRange<Int>) -> Int? {
        guard let d = FilterMatcher.number(value), d.isFinite, d >= Double(range.lowerBound), d <= Double(range.upperBound) else { return nil }
        return Int(d.rounded(.towardZero))
    }

    /// A position or a length in text of `count` characters: negative ones are 0, and ones past
    /// the end are the end.
    static func clamped(_ value: JSON, to count: Int) -> Int? {
        guard let d = FilterMatcher.number(value), !d.isNaN else { return nil }
        return Int(max(0, min(Double(count), d.rounded(.towardZero))))
    }

    func call(_ name: String, _ v: [JSON]) throws(WorkflowError) -> JSON {
        switch name {
        case "round":
            guard let x = FilterMatcher.number(v[0]), let digits = v.count > 1 ? Self.whole(v[1], in: 0...12) : 0 else {
                throw WorkflowError("round needs a number and 0 to 12 digits")
            }
            let scale = pow(10, Double(digits))
            // x * scale may pass the doubles where x does not (1e300, 12 digits): x is whole then.
            let scaled = x * scale
            return try Self.number(scaled.isFinite ? scaled.rounded() / scale : x)
        case "floor", "ceil", "abs":
            guard let x = FilterMatcher.number(v[0]) else { throw WorkflowError("\(name) needs a number, got \(v[0].typeName)") }
            return try Self.number(name == "floor" ? x.rounded(.down) : name == "ceil" ? x.rounded(.up) : abs(x))
        case "min", "max", "sum", "avg":
            let xs = try numbers(name, v)
            guard !xs.isEmpty else { return .null }
            switch name {
            case "min": return try Self.number(xs.min()!)
            case "max": return try Self.number(xs.max()!)
            case "sum": return try Self.number(xs.reduce(0, +))
            default:
                let total = xs.reduce(0, +)
                guard total.isFinite else { throw WorkflowError("the result is too large to be a number (past ±1.8e308)") }
                return .double(total / Double(xs.count))
            }
        case "concat": return try text(v.map(Variables.text).joined())
        case "upper": return .string(Variables.text(v[0]).uppercased())
        case "lower": return .string(Variables.text(v[0]).lowercased())
        case "trim": return .string(Variables.text(v[0]).trimmingCharacters(in: .whitespacesAndNewlines))
        case "length":
            if case .array(let items) = v[0] { return .int(Int64(items.count)) }
            return .int(Int64(Variables.text(v[0]).count))
        case "substring":
            let s = Array(Variables.text(v[0]))
            guard let start = Self.clamped(v[1], to: s.count), let length = v.count > 2 ? Self.clamped(v[2], to: s.count) : s.count else {
                throw WorkflowError("substring(text, start, length?) needs numbers for start and length")
            }
            // Both are within 0...count, so their sum cannot overflow.
            return .string(String(s[start..<min(s.count, start + length)]))
        case "contains": return .bool(Variables.text(v[0]).includes(Variables.text(v[1])))
        case "replace": return try replace(Variables.text(v[0]), Variables.text(v[1]), Variables.text(v[2]))
        case "coalesce": return v.first { !$0.isNull } ?? .null
        case "number":
            guard let n = FilterMatcher.number(v[0]) else { throw WorkflowError("number cannot read '\(Variables.text(v[0]).prefix(80))' as a number") }
            return try Self.number(n)
        case "string": return .string(Variables.text(v[0]))
        case "now": return .string(Self.format(variables.now))
        case "formatDate":
            guard let date = Self.date(v[0]) else { throw WorkflowError("formatDate needs a date, got '\(Variables.text(v[0]))'") }
            return .string(Self.format(date))
        case "dateAdd":
            guard let date = Self.date(v[0]), let amount = FilterMatcher.number(v[1]), let unit = Self.seconds(Variables.text(v[2])) else {
                throw WorkflowError("dateAdd(date, amount, unit) needs a date, a number and a unit: seconds, minutes, hours, days or weeks")
            }
            let moved = date.timeIntervalSince1970 + amount * unit
            guard Self.years.contains(moved) else { throw WorkflowError("dateAdd's result falls outside the years 1 to 9999") }
            return .string(Self.format(Date(timeIntervalSince1970: moved)))
        case "dateDiff":
            guard let a = Self.date(v[0]), let b = Self.date(v[1]), let unit = Self.seconds(Variables.text(v[2])) else {
                throw WorkflowError("dateDiff(later, earlier, unit) needs two dates and a unit: seconds, minutes, hours, days or weeks")
            }
            return try Self.number((a.timeIntervalSince(b) / unit).rounded(.towardZero))
        default:
            throw WorkflowError("unknown function \(name)")
        }
    }

    /// `replace` with its result's size known before it is made: 64 KiB of text with each of its
    /// characters replaced by 64 KiB would otherwise take 4 GiB before the size check. Text is found
    /// as Swift compares it (`replacingEvery`): Foundation's search traps on some text not in ASCII.
    func replace(_ text: String, _ target: String, _ replacement: String) throws(WorkflowError) -> JSON {
        guard !target.isEmpty else { return try self.text(text) }
        let grows = replacement.utf8.count - target.utf8.count
        if grows > 0 {
            // One occurrence past the most the limit allows is enough to refuse.
            let most = (Calculation.maxTextBytes - text.utf8.count) / grows
            guard most >= 0, text.occurrences(of: target, limit: most + 1) <= most else {
                throw WorkflowError("a text result is longer than \(Calculation.maxTextBytes / 1024) KiB")
            }
        }
        return try self.text(text.replacingEvery(target, with: replacement))
    }

    /// Seconds since 1970 of the years 0001 to 9999, the dates a calculation makes.
    static let years: ClosedRange<Double> = -62_135_596_800...253_402_300_799

    static func seconds(_ unit: String) -> Double? {
        switch unit.lowercased() {
        case "second", "seconds", "s": 1
        case "minute", "minutes", "m": 60
        case "hour", "hours", "h": 3600
        case "day", "days", "d": 86400
        case "week", "weeks", "w": 604_800
        default: nil
        }
    }

    /// A date from text: ISO 8601 with a time zone, or a date as records keep them (UTC).
    static func date(_ value: JSON) -> Date? {
        guard let text = value.stringValue else { return nil }
        return ISO8601DateFormatter().date(from: text) ?? UTCText.date(text)
    }

    static func format(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }
}

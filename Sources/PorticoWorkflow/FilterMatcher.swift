import Foundation
import PorticoBase
import PorticoData
import PorticoJSON

/// A NocoBase filter judged in memory, over an execution's variables rather than a table: what a
/// condition node and a trigger's condition test. A key is a field of the triggering record
/// (`status`, `owner.name`), or a variable path (`$jobsMapByNodeKey.q1.total`); values may be
/// variables too. The operators, and what each means, are the data tools' own (`FilterOperator`).
struct FilterMatcher {
    let variables: Variables

    /// Checks a filter's shape and operators without judging it (when a workflow is saved).
    static func check(_ filter: JSON, at path: String) throws(WorkflowError) {
        guard case .object(let object) = filter else {
            throw WorkflowError("\(path) must be an object, a NocoBase filter like {\"status\": {\"$eq\": \"won\"}}")
        }
        for (key, value) in object {
            if key == "$and" || key == "$or" {
                guard case .array(let items) = value else { throw WorkflowError("\(path).\(key) must be a list of filters") }
                for (index, item) in items.enumerated() { try check(item, at: "\(path).\(key)[\(index)]") }
                continue
            }
            if key.hasPrefix("$"), !key.hasPrefix("$context."), !key.hasPrefix("$jobsMapByNodeKey.") {
                throw WorkflowError("\(path) has '\(key)' where a field or $and/$or belongs")
            }
            if case .object(let ops) = value, let first = ops.keys.first, first.hasPrefix("$") {
                for op in ops.keys where FilterOperator(name: op) == nil {
                    throw WorkflowError("\(path).\(key) uses unknown operator '\(op)'; use one of \(FilterOperator.names.joined(separator: ", "))")
                }
            }
        }
    }

    func matches(_ filter: JSON) throws(WorkflowError) -> Bool {
        guard case .object(let object) = filter else { return false }
        for (key, value) in object {
            let holds: Bool
            switch key {
            case "$and":
                var all = true
                for item in value.arrayValue ?? [] where try !matches(item) {
                    all = false
                    break
                }
                holds = all
            case "$or":
                let items = value.arrayValue ?? []
                var any = items.isEmpty
                for item in items where try matches(item) {
                    any = true
                    break
                }
                holds = any
            default:
                let subject = try self.subject(key)
                if case .object(let ops) = value, let first = ops.keys.first, first.hasPrefix("$") {
                    var all = true
                    for (op, operand) in ops where try !apply(op, subject, try variables.resolve(operand)) {
                        all = false
                        break
                    }
                    holds = all
                } else {
                    holds = try apply("$eq", subject, try variables.resolve(value))
                }
            }
            if !holds { return false }
        }
        return true
    }

    /// The value a key names: a variable path, or a field (path) of `$context.data`.
    func subject(_ key: String) throws(WorkflowError) -> JSON {
        if key.hasPrefix("{{") { return try variables.value(String(key.dropFirst(2).dropLast(2))) ?? .null }
        if key.hasPrefix("$") { return try variables.value(key) ?? .null }
        return try variables.value("$context.data." + key) ?? .null
    }

    /// Whether `subject` satisfies `op` with `operand`, as the same filter over a table's rows
    /// would (the operators and their NULL rules are `FilterOperator`'s).
    func apply(_ name: String, _ subject: JSON, _ operand: JSON) throws(WorkflowError) -> Bool {
        guard let op = FilterOperator(name: name) else { throw WorkflowError("unknown operator '\(name)'") }
        switch op {
        case .eq:
            if case .array(let items) = operand { return items.contains { Self.equal(subject, $0) } }
            return Self.equal(subject, operand)
        case .ne:
            if case .array(let items) = operand { return !items.contains { Self.equal(subject, $0) } }
            return !Self.equal(subject, operand)
        case .in: return (operand.arrayValue ?? [operand]).contains { Self.equal(subject, $0) }
        case .notIn: return !(operand.arrayValue ?? [operand]).contains { Self.equal(subject, $0) }
        case .gt, .gte, .lt, .lte:
            guard let order = Self.compare(subject, operand) else { return false }
            switch op {
            case .gt: return order > 0
            case .gte: return order >= 0
            case .lt: return order < 0
            default: return order <= 0
            }
        case .between, .notBetween:
            guard let bounds = operand.arrayValue, bounds.count == 2 else { throw WorkflowError("\(name) takes [low, high]") }
            guard let low = Self.compare(subject, bounds[0]), let high = Self.compare(subject, bounds[1]) else { return false }
            let inside = low >= 0 && high <= 0
            return op == .between ? inside : !inside
        case .includes, .notIncludes, .startsWith, .notStartsWith, .endsWith, .notEndsWith:
            let (position, negated) = op.textMatch!
            if operand.isNull { return negated != subject.isNull }
            guard !subject.isNull else { return false }
            let text = Variables.text(subject).lowercased()
            let needles = (operand.arrayValue ?? [operand]).map { Variables.text($0).lowercased() }
            let found = needles.contains { needle in
                switch position {
                case .anywhere: text.includes(needle)
                case .start: text.hasPrefix(needle)
                case .end: text.hasSuffix(needle)
                }
            }
            return negated ? !found : found
        case .like, .notLike:
            guard case .string(let pattern) = operand else { throw WorkflowError("\(name) needs a LIKE pattern string, got \(operand.typeName)") }
            guard !subject.isNull else { return false }
            return FilterOperator.like(Variables.text(subject), pattern) == (op == .like)
        case .empty, .notEmpty:
            let empty: Bool
            switch subject {
            case .null: empty = true
            case .string(let s): empty = s.isEmpty
            case .array(let a): empty = a.isEmpty
            default: empty = false
            }
            return op == .empty ? empty : !empty
        case .exists, .notExists:
            return (op == .exists) == (operand.boolValue ?? true) ? !subject.isNull : subject.isNull
        case .isTruly, .isFalsy:
            let truly = Self.truthy(subject)
            return (op == .isTruly) == (operand.boolValue ?? true) ? truly : !truly
        case .dateOn, .dateNotOn, .dateBefore, .dateNotBefore, .dateAfter, .dateNotAfter, .dateBetween:
            let span: FilterOperator.DateSpan
            do { span = try op.dateSpan(operand, at: name)! } catch { throw WorkflowError(error.message) }
            guard !subject.isNull else { return false }
            return span.keeps(text: Variables.text(subject))
        }
    }

    static func truthy(_ value: JSON) -> Bool {
        switch value {
        case .null: false
        case .bool(let b): b
        case .int(let i): i != 0
        case .double(let d): d != 0
        case .string(let s): !s.isEmpty && s != "false" && s != "0"
        case .array, .object: true
        }
    }

    /// Equal as NocoBase compares a field with a filter's value: numbers by value (`1` = `1.0` =
    /// `"1"`), text exactly, booleans also as 1 and 0.
    static func equal(_ a: JSON, _ b: JSON) -> Bool {
        if a == b { return true }
        if let x = number(a), let y = number(b) { return x == y }
        if case .bool(let flag) = a, let y = number(b) { return (flag ? 1 : 0) == y }
        if case .bool(let flag) = b, let x = number(a) { return (flag ? 1 : 0) == x }
        return false
    }

    /// A value's number: its own, or text that is one. Text such as "nan", "inf" or "1e999" reads
    /// as a double that is not a number or not finite; it is text here, not a number.
    static func number(_ value: JSON) -> Double? {
        let d: Double?
        switch value {
        case .int(let i): d = Double(i)
        case .double(let x): d = x
        case .string(let s): d = Double(s.trimmingCharacters(in: .whitespaces))
        default: d = nil
        }
        guard let d, d.isFinite else { return nil }
        return d
    }

    /// -1, 0 or 1; numbers by value, other text in order (ISO dates compare as text).
    static func compare(_ a: JSON, _ b: JSON) -> Int? {
        if a.isNull || b.isNull { return nil }
        if let x = number(a), let y = number(b) { return x < y ? -1 : (x > y ? 1 : 0) }
        let x = Variables.text(a)
        let y = Variables.text(b)
        return x < y ? -1 : (x > y ? 1 : 0)
    }
}

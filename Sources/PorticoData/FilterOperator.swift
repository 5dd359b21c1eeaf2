import PorticoBase
public import PorticoJSON

/// The operators of NocoBase's filter language, declared once. The SQL compiler (`FilterCompiler`,
/// for the data tools) and the in-memory matcher (workflow conditions) each switch over this
/// enum, so neither can lack an operator the other has, and what an operator means beyond its
/// name (which text position it matches, which span of time it takes) is worked out here for both.
///
/// Where SQL's three-valued logic decides, it decides for both: a NULL field satisfies no
/// comparison, text match, LIKE or date condition, negated or not. `$ne` and `$notIn` say
/// otherwise on purpose (NULLs included, as NocoBase does), and `$isFalsy` counts NULL as false.
public enum FilterOperator: String, CaseIterable, Sendable {
    case eq = "$eq"
    case ne = "$ne"
    case `in` = "$in"
    case notIn = "$notIn"
    case gt = "$gt"
    case gte = "$gte"
    case lt = "$lt"
    case lte = "$lte"
    case between = "$between"
    case notBetween = "$notBetween"
    case includes = "$includes"
    case notIncludes = "$notIncludes"
    case startsWith = "$startsWith"
    case notStartsWith = "$notStartsWith"
    case endsWith = "$endsWith"
    case notEndsWith = "$notEndsWith"
    case like = "$like"
    case notLike = "$notLike"
    case empty = "$empty"
    case notEmpty = "$notEmpty"
    case exists = "$exists"
    case notExists = "$notExists"
    case isTruly = "$isTruly"
    case isFalsy = "$isFalsy"
    case dateOn = "$dateOn"
    case dateNotOn = "$dateNotOn"
    case dateBefore = "$dateBefore"
    case dateNotBefore = "$dateNotBefore"
    case dateAfter = "$dateAfter"
    case dateNotAfter = "$dateNotAfter"
    case dateBetween = "$dateBetween"

    /// NocoBase's older spellings, accepted as the same operators.
    static let aliases: [String: FilterOperator] = ["$endWith": .endsWith, "$notEndWith": .notEndsWith]

    /// The operator a filter key names, in either spelling.
    public init?(name: String) {
        if let op = FilterOperator(rawValue: name) ?? Self.aliases[name] { self = op } else { return nil }
    }

    /// Every spelling a filter may use, for error messages.
    public static let names: [String] = allCases.map(\.rawValue) + aliases.keys.sorted()

    /// `$dateOn` and its kin, which take whole spans of time.
    public var isDate: Bool { rawValue.hasPrefix("$date") }

    /// The operators a relation (rather than a column) takes directly: whether related records exist.
    public var appliesToRelations: Bool { [.exists, .notExists, .empty, .notEmpty].contains(self) }

    // MARK: Text

    /// Where a text operator looks for its text.
    public enum TextPosition: Sendable { case anywhere, start, end }

    /// For `$includes` and its kin: where the text must be found and whether the operator asks for its absence.
    public var textMatch: (position: TextPosition, negated: Bool)? {
        switch self {
        case .includes: (.anywhere, false)
        case .notIncludes: (.anywhere, true)
        case .startsWith: (.start, false)
        case .notStartsWith: (.start, true)
        case .endsWith: (.end, false)
        case .notEndsWith: (.end, true)
        default: nil
        }
    }

    /// Whether `text` matches a LIKE `pattern` as the filter language means it on every database:
    /// `%` is any run of characters, `_` one character, `\` makes the next one literal, and case is
    /// ignored. Linear in the text for each `%`, never exponential.
    public static func like(_ text: String, _ pattern: String) -> Bool {
        enum Token: Equatable {
            case any, one
            case literal(Character)
        }
        var tokens: [Token] = []
        var escaped = false
        for c in pattern.lowercased() {
            if escaped {
                tokens.append(.literal(c))
                escaped = false
            } else if c == "\\" {
                escaped = true
            } else {
                tokens.append(c == "%" ? .any : c == "_" ? .one : .literal(c))
            }
        }
        if escaped { tokens.append(.literal("\\")) }
        let chars = Array(text.lowercased())
        var t = 0
        var p = 0
        var star: Int? = nil
        var resume = 0
        while t < chars.count {
            if p < tokens.count, tokens[p] == .one || tokens[p] == .literal(chars[t]) {
                t += 1
                p += 1
            } else if p < tokens.count, tokens[p] == .any {
                star = p
                resume = t
                p += 1
            } else if let star {
                p = star + 1
                resume += 1
                t = resume
            } else {
                return false
            }
        }
        while p < tokens.count, tokens[p] == .any { p += 1 }
        return p == tokens.count
    }

    // MARK: Dates

    /// The span of time a date operator keeps: at or after `from`, before `until` (either may be
    /// open), or, when `outside`, everything not in it.
    public struct DateSpan: Sendable {
        package var from: TemporalValue?
        package var until: TemporalValue?
        public var outside: Bool

        /// Whether the instant `value` is kept.
        package func keeps(_ value: TemporalValue) -> Bool {
            let inside = (from.map { !value.starts(before: $0) } ?? true) && (until.map { value.starts(before: $0) } ?? true)
            return outside ? !inside : inside
        }

        /// Whether a field holding this text is kept; text that is not a date is not.
        public func keeps(text: String) -> Bool {
            guard let value = TemporalValue.parse(text) else { return false }
            return keeps(value)
        }
    }

    /// The span a date operator takes from its operand. `"2024"`, `"2024-05"` and `"2024-05-17"`
    /// are whole spans; `$dateBetween` takes two and includes all of the second.
    public func dateSpan(_ operand: JSON, at path: String) throws(DataError) -> DateSpan? {
        func parse(_ value: JSON, _ where_: String) throws(DataError) -> TemporalValue {
            guard case .string(let text) = value, let parsed = TemporalValue.parse(text) else {
                throw .invalid(
                    "\(where_): expected a date such as \"2024\", \"2024-05\", \"2024-05-17\" or \"2024-05-17 13:45:00\", got \(value.serializedString.prefix(40))"
                )
            }
            return parsed
        }
        if self == .dateBetween {
            let items: [JSON]
            switch operand {
            case .array(let array) where array.count == 2: items = array
            case .string(let s) where s.hasPrefix("[") && s.hasSuffix("]"):
                items = s.dropFirst().dropLast().split(separator: ",").map { .string($0.trimmingSpaces()) }
                guard items.count == 2 else { throw .invalid("\(path) needs two dates [start, end]") }
            default:
                throw .invalid("\(path) needs two dates [start, end], got \(operand.serializedString.prefix(60))")
            }
            return DateSpan(from: try parse(items[0], "\(path)[0]"), until: try parse(items[1], "\(path)[1]").end, outside: false)
        }
        guard isDate else { return nil }
        let span = try parse(operand, path)
        switch self {
        case .dateOn: return DateSpan(from: span, until: span.end, outside: false)
        case .dateNotOn: return DateSpan(from: span, until: span.end, outside: true)
        case .dateBefore: return DateSpan(from: nil, until: span, outside: false)
        case .dateNotBefore: return DateSpan(from: span, until: nil, outside: false)
        case .dateAfter: return DateSpan(from: span.end, until: nil, outside: false)
        default: return DateSpan(from: nil, until: span.end, outside: false)  // $dateNotAfter
        }
    }
}

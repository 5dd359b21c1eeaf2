public import Foundation

/// A five-field cron expression (minute, hour, day of month, month, day of week) in a time zone:
/// `*`, lists, ranges, steps and the English three-letter names, as crontab(5) reads them — a
/// day of month and a day of week both given match either.
public struct Cron: Sendable, Hashable {
    let minutes: Set<Int>
    let hours: Set<Int>
    let days: Set<Int>
    let months: Set<Int>
    let weekdays: Set<Int>
    let dayRestricted: Bool
    let weekdayRestricted: Bool
    public let timeZone: TimeZone

    public init(_ expression: String, timeZone name: String? = nil) throws(WorkflowError) {
        let fields = expression.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard fields.count == 5 else {
            throw WorkflowError(
                "cron '\(expression)' has \(fields.count) fields; it needs five: minute hour day-of-month month day-of-week, e.g. \"0 8 * * MON\"")
        }
        minutes = try Self.field(fields[0], 0...59, "minute", names: [:])
        hours = try Self.field(fields[1], 0...23, "hour", names: [:])
        days = try Self.field(fields[2], 1...31, "day of month", names: [:])
        let monthNames = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"]
        months = try Self.field(fields[3], 1...12, "month", names: Dictionary(uniqueKeysWithValues: monthNames.enumerated().map { ($1, $0 + 1) }))
        let dayNames = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"]
        weekdays = Set(
            try Self.field(fields[4], 0...7, "day of week", names: Dictionary(uniqueKeysWithValues: dayNames.enumerated().map { ($1, $0) })).map { $0 % 7 })
        dayRestricted = fields[2] != "*"
        weekdayRestricted = fields[4] != "*"
        guard let zone = name.map({ TimeZone(identifier: $0) }) ?? TimeZone(identifier: "UTC") else {
            throw WorkflowError("unknown time zone '\(name ?? "")'; use an IANA name such as Europe/Paris or UTC")
        }
        timeZone = zone
    }

    static func field(_ text: String, _ range: ClosedRange<Int>, _ name: String, names: [String: Int]) throws(WorkflowError) -> Set<Int> {
        var values = Set<Int>()
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            var body = Substring(part)
            var step = 1
            if let slash = part.firstIndex(of: "/") {
                guard let s = Int(part[part.index(after: slash)...]), s > 0 else { throw WorkflowError("the \(name) field '\(text)' has a bad step") }
                step = s
                body = part[..<slash]
            }
            func number(_ t: Substring) throws(WorkflowError) -> Int {
                if let n = Int(t), range.contains(n) { return n }
                if let n = names[t.uppercased()] { return n }
                throw WorkflowError("the \(name) field '\(text)' has '\(t)'; it takes \(range.lowerBound)-\(range.upperBound)")
            }
            let low: Int
            let high: Int
            if body == "*" {
                (low, high) = (range.lowerBound, range.upperBound)
            } else if let dash = body.firstIndex(of: "-") {
                low = try number(body[..<dash])
                high = try number(body[body.index(after: dash)...])
                guard low <= high else { throw WorkflowError("the \(name) field '\(text)' has a range that runs backwards") }
            } else {
                low = try number(body)
                high = step > 1 ? range.upperBound : low
            }
            values.formUnion(stride(from: low, through: high, by: step))
        }
        return values
    }

    /// Whether the minute that `date` falls in is one the expression names.
    public func matches(_ date: Date) -> Bool {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let c = calendar.dateComponents([.minute, .hour, .day, .month, .weekday], from: date)
        guard let minute = c.minute, let hour = c.hour, let day = c.day, let month = c.month, let weekday = c.weekday else { return false }
        guard minutes.contains(minute), hours.contains(hour), months.contains(month) else { return false }
        let dayOK = days.contains(day)
        let weekdayOK = weekdays.contains(weekday - 1)
        if dayRestricted && weekdayRestricted { return dayOK || weekdayOK }
        return dayOK && weekdayOK
    }
}

public import Foundation
import PorticoBase
import PorticoJSON
public import PorticoStore

/// A date or date-time written by a client, with the span it denotes ("2024" is a whole year).
package struct TemporalValue: Sendable, Equatable {
    enum Unit: Int, Sendable { case year, month, day, hour, minute, second }

    var year: Int, month = 1, day = 1, hour = 0, minute = 0, second = 0
    var unit: Unit

    /// Accepts `YYYY`, `YYYY-MM`, `YYYY-MM-DD`, `YYYY-MM-DD HH`, `YYYY-MM-DD HH:mm`, `YYYY-MM-DD HH:mm:ss`
    /// (with `T` instead of the space, fractional seconds and a trailing `Z` ignored).
    package static func parse(_ text: String) -> TemporalValue? {
        var s = Substring(text.trimmingSpaces())
        if s.hasSuffix("Z") { s = s.dropLast() }
        if let dot = s.firstIndex(of: "."), s.distance(from: s.startIndex, to: dot) >= 19 { s = s[..<dot] }
        let bytes = Array(s.utf8)
        func number(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= bytes.count else { return nil }
            var value = 0
            for b in bytes[from..<(from + count)] {
                guard b >= 0x30 && b <= 0x39 else { return nil }
                value = value * 10 + Int(b - 0x30)
            }
            return value
        }
        guard let year = number(0, 4) else { return nil }
        var value = TemporalValue(year: year, unit: .year)
        switch bytes.count {
        case 4: break
        case 7:
            guard bytes[4] == 0x2D, let m = number(5, 2) else { return nil }
            value.month = m; value.unit = .month
        case 10, 13, 16, 19:
            guard bytes[4] == 0x2D, bytes[7] == 0x2D, let m = number(5, 2), let d = number(8, 2) else { return nil }
            value.month = m; value.day = d; value.unit = .day
            if bytes.count >= 13 {
                guard bytes[10] == 0x20 || bytes[10] == 0x54, let h = number(11, 2) else { return nil }
                value.hour = h; value.unit = .hour
            }
            if bytes.count >= 16 {
                guard bytes[13] == 0x3A, let mi = number(14, 2) else { return nil }
                value.minute = mi; value.unit = .minute
            }
            if bytes.count == 19 {
                guard bytes[16] == 0x3A, let sec = number(17, 2) else { return nil }
                value.second = sec; value.unit = .second
            }
        default:
            return nil
        }
        guard (1...12).contains(value.month), (1...Self.daysIn(value.year, value.month)).contains(value.day),
            (0...23).contains(value.hour), (0...59).contains(value.minute), (0...59).contains(value.second)
        else { return nil }
        return value
    }

    /// Whether this span starts before `other` starts (how long each lasts does not matter).
    package func starts(before other: TemporalValue) -> Bool {
        (year, month, day, hour, minute, second) < (other.year, other.month, other.day, other.hour, other.minute, other.second)
    }

    static func daysIn(_ year: Int, _ month: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// The first instant after the span.
    package var end: TemporalValue {
        var v = self
        v.unit = .second
        switch unit {
        case .year: v.year += 1; v.month = 1; v.day = 1
        case .month: v.month += 1
        case .day: v.day += 1
        case .hour: v.hour += 1
        case .minute: v.minute += 1
        case .second: v.second += 1
        }
        v.normalize()
        return v
    }

    private mutating func normalize() {
        if second >= 60 { second -= 60; minute += 1 }
        if minute >= 60 { minute -= 60; hour += 1 }
        if hour >= 24 { hour -= 24; day += 1 }
        if month > 12 { month -= 12; year += 1 }
        if day > Self.daysIn(year, month) {
            day = 1
            month += 1
            if month > 12 { month = 1; year += 1 }
        }
    }

    /// The start of the span as stored: `YYYY-MM-DD` for dates, `YYYY-MM-DD HH:MM:SS` otherwise.
    func formatted(dateOnly: Bool) -> String {
        func pad(_ n: Int, _ width: Int) -> String {
            let s = String(n)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        let date = "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
        return dateOnly ? date : "\(date) \(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2))"
    }
}

extension UTCText {
    /// The moment text as Portico stores it names (`2026-11-23 15:04:05`, the day alone, or
    /// shorter, read as UTC), as the data tools read dates; `nil` for other text.
    public static func date(_ text: String) -> Date? {
        guard let value = TemporalValue.parse(text) else { return nil }
        var parts = tm()
        parts.tm_year = Int32(value.year - 1900)
        parts.tm_mon = Int32(value.month - 1)
        parts.tm_mday = Int32(value.day)
        parts.tm_hour = Int32(value.hour)
        parts.tm_min = Int32(value.minute)
        parts.tm_sec = Int32(value.second)
        return Date(timeIntervalSince1970: TimeInterval(timegm(&parts)))
    }
}

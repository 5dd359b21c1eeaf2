public import Foundation

/// Dates and times as Portico stores them, in UTC: `2026-11-23 15:04:05`, or the day alone.
public enum UTCText {
    public static func format(_ date: Date, dateOnly: Bool) -> String {
        var seconds = time_t(floor(date.timeIntervalSince1970))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ n: Int32, _ width: Int) -> String {
            let s = String(n)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        let day = "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))"
        return dateOnly ? day : "\(day) \(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2))"
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

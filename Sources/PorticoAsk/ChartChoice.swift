public import PorticoCharts
import PorticoData
public import PorticoJSON
public import PorticoStore

/// Picks the chart a result calls for, from the shape of its columns (or the engine's hint when
/// the data fits it): one category and numbers → bars, a date or time bucket → a line, a few
/// positive shares of a whole → a pie when asked for, anything else → a table.
public enum ChartChoice {
    /// Categories beyond which bars become unreadable; a line takes more points.
    static let maxBars = 30
    static let maxPoints = 400
    static let maxSlices = 10

    enum Role { case number, time, category }

    public static func choose(columns: [String], rows: [[SQLValue]], hint: String?, title: String) -> (spec: ChartSpec, data: ChartData?) {
        let table = ChartSpec(kind: .table, title: title)
        guard !rows.isEmpty, columns.count >= 2 else { return (table, nil) }
        let roles = columns.indices.map { role(of: $0, named: columns[$0], in: rows) }
        let numbers = roles.indices.filter { roles[$0] == .number }
        // A key shown beside a name tells rows apart; the name labels the chart.
        let allLabels = roles.indices.filter { roles[$0] != .number }
        let named = allLabels.filter { !isKeyName(columns[$0]) }
        let labels = named.isEmpty ? allLabels : named
        // A label column: a category or time; numeric ids as labels when there is no other.
        var x = labels.first
        var measures = numbers
        if x == nil, numbers.count >= 2, isTimeName(columns[numbers[0]]) || isKeyName(columns[numbers[0]]) {
            x = numbers[0]
            measures = Array(numbers.dropFirst())
        }
        guard var x, !measures.isEmpty else { return (table, nil) }
        var series: Int? = labels.count >= 2 ? labels[1] : nil
        if series != nil, measures.count > 1 { series = nil }
        if let other = series, Set(rows.map { label($0[x]) }).count == rows.count, Set(rows.map { label($0[other]) }).count == rows.count {
            // Two labels of one row each (a code and a name): no series; the longer labels the chart.
            func length(_ i: Int) -> Int { rows.reduce(0) { $0 + label($1[i]).count } }
            if length(other) > length(x) { x = other }
            series = nil
        }
        let isTime = roles[x] == .time || isTimeName(columns[x])
        var kind: ChartSpec.Kind = isTime ? .line : .column
        let hinted = hint.flatMap { ChartSpec.Kind(rawValue: $0 == "pie_chart" ? "pie" : $0) }
        if let hinted, hinted != .table { kind = hinted }
        if hinted == .table { return (table, nil) }
        // Long category names read better along bars than under columns.
        if kind == .column, series == nil, hinted == nil, rows.count > 12 || rows.contains(where: { label($0[x]).count > 14 }) { kind = .bar }
        if kind == .pie {
            let values = rows.map { $0[measures[0]].number ?? 0 }
            if series != nil || rows.count > maxSlices || values.contains(where: { $0 < 0 }) || measures.count > 1 { kind = .column }
        }
        let data: ChartData
        if let series {
            // Long form (x, series, value) turned into one line of values per series.
            var categories: [String] = []
            var names: [String] = []
            var cells: [String: [String: Double]] = [:]
            for row in rows {
                let category = label(row[x])
                let name = label(row[series])
                if !categories.contains(category) { categories.append(category) }
                if !names.contains(name) { names.append(name) }
                cells[name, default: [:]][category] = row[measures[0]].number
            }
            guard names.count <= 12 else { return (table, nil) }
            data = ChartData(categories: categories, series: names.map { name in (name, categories.map { cells[name]?[$0] ?? .nan }) })
        } else {
            data = ChartData(
                categories: rows.map { label($0[x]) }, series: measures.prefix(6).map { index in (columns[index], rows.map { $0[index].number ?? .nan }) })
        }
        let limit = kind == .line ? maxPoints : maxBars
        guard data.categories.count <= limit else { return (table, nil) }
        let spec = ChartSpec(
            kind: kind, title: title, x: .init(name: columns[x], value: columns[x]),
            y: measures.prefix(6).map { .init(name: columns[$0], value: columns[$0]) },
            series: series.map { .init(name: columns[$0], value: columns[$0]) })
        return (spec, data)
    }

    static func role(of index: Int, named name: String, in rows: [[SQLValue]]) -> Role {
        var numbers = 0
        var texts = 0
        var dates = 0
        for row in rows.prefix(200) {
            switch row[index] {
            case .int, .double: numbers += 1
            case .text(let text):
                texts += 1
                if looksLikeDate(text) { dates += 1 }
            case .bool: texts += 1
            case .null: break
            }
        }
        if texts > 0 { return dates == texts ? .time : .category }
        if numbers > 0 {
            // A key or a year is a label, not a measure.
            return isKeyName(name) ? .category : isTimeName(name) ? .time : .number
        }
        return .category
    }

    static func isKeyName(_ name: String) -> Bool {
        let lower = name.lowercased()
        return lower == "id" || lower.hasSuffix("_id") || (name.hasSuffix("Id") && name.count > 2)
    }

    static func isTimeName(_ name: String) -> Bool {
        let lower = name.lowercased()
        return ["year", "month", "day", "date", "week", "quarter", "period", "time"].contains { lower == $0 || lower.hasSuffix($0) || lower.hasPrefix($0) }
    }

    /// `2013`, `2013-05`, `2013-05-01`, `2013-05-01 10:00:00` and the like.
    static func looksLikeDate(_ text: String) -> Bool {
        let bytes = Array(text.utf8.prefix(19))
        guard bytes.count >= 7, bytes.count <= 19 || text.utf8.count <= 30 else { return false }
        func digits(_ range: Range<Int>) -> Bool { range.upperBound <= bytes.count && bytes[range].allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }
        return digits(0..<4) && bytes[4] == UInt8(ascii: "-") && digits(5..<7) && (bytes.count == 7 || (bytes.count >= 10 && bytes[7] == UInt8(ascii: "-")))
    }

    /// A value as a label: numbers without a needless fraction, text as is.
    public static func label(_ value: SQLValue) -> String {
        switch value {
        case .null: "(none)"
        case .int(let i): String(i)
        case .double(let d): d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(d)
        case .bool(let b): b ? "true" : "false"
        case .text(let s): s
        }
    }
}

extension SQLValue {
    var number: Double? {
        switch self {
        case .int(let i): Double(i)
        case .double(let d): d
        case .text(let s): Double(s)
        default: nil
        }
    }
}

extension ChartSpec {
    /// The spec as `ask` and SQLBot's answers carry it: `{type, title, axis: {x, y, series}}`.
    public var json: JSON {
        func field(_ f: ChartSpec.Field) -> JSON { ["name": .string(f.name), "value": .string(f.value)] }
        var axis: JSONObject = [:]
        if let x { axis["x"] = field(x) }
        if !y.isEmpty { axis["y"] = .array(y.map(field)) }
        if let series { axis["series"] = field(series) }
        return ["type": .string(kind.rawValue), "title": .string(title), "axis": .object(axis)]
    }
}

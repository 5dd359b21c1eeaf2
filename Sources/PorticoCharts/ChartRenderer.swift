import CCairo
import Foundation

/// Draws a chart as a PNG with Cairo: title, axes with rounded ticks and grid lines, labels that
/// fit (shortened or turned when crowded), values on bars, and a legend when there are several
/// series or slices. Latin text is set in DejaVu Sans, text with CJK or Hangul in WenQuanYi Micro
/// Hei, so zh-CN and ko-KR labels render.
public struct ChartRenderer: Sendable {
    public var width = 960
    public var height = 560

    public init() {}

    static let palette: [(Double, Double, Double)] = [
        (0.25, 0.47, 0.85), (0.95, 0.55, 0.20), (0.30, 0.69, 0.42), (0.86, 0.30, 0.33), (0.55, 0.42, 0.78),
        (0.20, 0.68, 0.75), (0.93, 0.76, 0.20), (0.60, 0.45, 0.33), (0.90, 0.45, 0.68), (0.50, 0.55, 0.60),
    ]

    /// The PNG, or `nil` for a table (nothing to draw) or data with nothing to plot.
    public func png(_ spec: ChartSpec, _ data: ChartData) -> [UInt8]? {
        guard spec.kind != .table, !data.categories.isEmpty, !data.series.isEmpty,
            data.series.contains(where: { $0.values.contains(where: \.isFinite) })
        else { return nil }
        guard let surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, Int32(width), Int32(height)) else { return nil }
        defer { cairo_surface_destroy(surface) }
        guard let cr = cairo_create(surface) else { return nil }
        defer { cairo_destroy(cr) }
        var canvas = Canvas(cr: cr, width: Double(width), height: Double(height))
        canvas.fill(0, 0, canvas.width, canvas.height, color: (1, 1, 1))
        canvas.text(spec.title, x: canvas.width / 2, y: 34, size: 20, bold: true, align: .center, maxWidth: canvas.width - 40)
        switch spec.kind {
        case .pie: drawPie(&canvas, data)
        case .line: drawCartesian(&canvas, data, spec: spec, line: true, horizontal: false)
        case .bar: drawCartesian(&canvas, data, spec: spec, line: false, horizontal: true)
        case .column, .table: drawCartesian(&canvas, data, spec: spec, line: false, horizontal: false)
        }
        cairo_surface_flush(surface)
        let sink = PNGSink()
        let status = cairo_surface_write_to_png_stream(
            surface,
            { closure, bytes, length in
                guard let closure, let bytes else { return CAIRO_STATUS_WRITE_ERROR }
                Unmanaged<PNGSink>.fromOpaque(closure).takeUnretainedValue().bytes.append(contentsOf: UnsafeBufferPointer(start: bytes, count: Int(length)))
                return CAIRO_STATUS_SUCCESS
            }, Unmanaged.passUnretained(sink).toOpaque())
        return status == CAIRO_STATUS_SUCCESS ? sink.bytes : nil
    }

    final class PNGSink {
        var bytes: [UInt8] = []
    }

    // MARK: - Bars, columns and lines

    func drawCartesian(_ canvas: inout Canvas, _ data: ChartData, spec: ChartSpec, line: Bool, horizontal: Bool) {
        let values = data.series.flatMap(\.values).filter(\.isFinite)
        let axis = NiceScale(min: min(0, values.min() ?? 0), max: max(0, values.max() ?? 0))
        let legendHeight: Double = data.series.count > 1 ? 30 : 0
        let categoryLabels = data.categories.map { Canvas.shorten($0, to: 28) }
        let tickLabels = axis.ticks.map(Self.format)
        // The plot area, inside room for the labels.
        var left =
            24
            + (horizontal
                ? min(220, categoryLabels.map { canvas.measure($0, size: 12) }.max() ?? 0) : tickLabels.map { canvas.measure($0, size: 12) }.max() ?? 0) + 12
        if spec.y.count == 1, !horizontal { left += 18 }
        let top = 60 + legendHeight
        let right = canvas.width - 30
        var bottom = canvas.height - 44
        let slot = (horizontal ? bottom - top : right - left) / Double(max(1, data.categories.count))
        let widest = categoryLabels.map { canvas.measure($0, size: 12) }.max() ?? 0
        let turned = !horizontal && widest > slot - 6
        if turned { bottom = canvas.height - min(170, widest * 0.6 + 40) }
        let plot = (left: left, top: top, right: right, bottom: bottom)
        func position(_ value: Double) -> Double {
            let t = (value - axis.min) / (axis.max - axis.min)
            return horizontal ? plot.left + t * (plot.right - plot.left) : plot.bottom - t * (plot.bottom - plot.top)
        }
        // Grid and value ticks.
        for (tick, label) in zip(axis.ticks, tickLabels) {
            let p = position(tick)
            if horizontal {
                canvas.line(p, plot.top, p, plot.bottom, color: (0.88, 0.88, 0.88), width: 1)
                canvas.text(label, x: p, y: plot.bottom + 18, size: 12, align: .center)
            } else {
                canvas.line(plot.left, p, plot.right, p, color: (0.88, 0.88, 0.88), width: 1)
                canvas.text(label, x: plot.left - 8, y: p + 4, size: 12, align: .right)
            }
        }
        let zero = position(0)
        if horizontal {
            canvas.line(zero, plot.top, zero, plot.bottom, color: (0.4, 0.4, 0.4), width: 1)
        } else {
            canvas.line(plot.left, zero, plot.right, zero, color: (0.4, 0.4, 0.4), width: 1)
        }
        // Axis titles.
        if let x = spec.x, !horizontal, !turned {
            canvas.text(x.name, x: (plot.left + plot.right) / 2, y: canvas.height - 12, size: 13, bold: true, align: .center)
        }
        if spec.y.count == 1, let y = spec.y.first, !horizontal {
            canvas.text(y.name, x: 18, y: (plot.top + plot.bottom) / 2, size: 13, bold: true, align: .center, angle: -.pi / 2)
        }
        let slotWidth = ((horizontal ? plot.bottom - plot.top : plot.right - plot.left)) / Double(data.categories.count)
        // Category labels, thinned out for long lines.
        let step = line ? max(1, Int((Double(data.categories.count) * (turned ? 16 : widest + 8) / (plot.right - plot.left)).rounded(.up))) : 1
        for (index, label) in categoryLabels.enumerated() where index % step == 0 {
            let center = (horizontal ? plot.top : plot.left) + slotWidth * (Double(index) + 0.5)
            if horizontal {
                canvas.text(label, x: plot.left - 8, y: center + 4, size: 12, align: .right, maxWidth: plot.left - 16)
            } else if turned {
                canvas.text(label, x: center + 4, y: plot.bottom + 10, size: 12, align: .right, angle: -.pi / 4)
            } else {
                canvas.text(label, x: center, y: plot.bottom + 18, size: 12, align: .center)
            }
        }
        let count = Double(data.series.count)
        for (seriesIndex, series) in data.series.enumerated() {
            let color = Self.palette[seriesIndex % Self.palette.count]
            if line {
                var points: [(Double, Double)] = []
                for (index, value) in series.values.enumerated() where value.isFinite {
                    points.append((plot.left + slotWidth * (Double(index) + 0.5), position(value)))
                }
                canvas.polyline(points, color: color, width: 2.5)
                if points.count <= 60 { for point in points { canvas.dot(point.0, point.1, radius: 3.5, color: color) } }
            } else {
                let band = slotWidth * 0.72
                let width = band / count
                for (index, value) in series.values.enumerated() where value.isFinite {
                    let start = (horizontal ? plot.top : plot.left) + slotWidth * Double(index) + (slotWidth - band) / 2 + width * Double(seriesIndex)
                    let end = position(value)
                    if horizontal {
                        canvas.fill(min(zero, end), start, abs(end - zero), width, color: color)
                        if data.categories.count <= 25 {
                            canvas.text(Self.format(value), x: max(zero, end) + 4, y: start + width / 2 + 4, size: 11, align: .left, color: (0.25, 0.25, 0.25))
                        }
                    } else {
                        canvas.fill(start, min(zero, end), width, abs(end - zero), color: color)
                        if data.categories.count * data.series.count <= 16 {
                            canvas.text(Self.format(value), x: start + width / 2, y: min(zero, end) - 5, size: 11, align: .center, color: (0.25, 0.25, 0.25))
                        }
                    }
                }
            }
        }
        if data.series.count > 1 { drawLegend(&canvas, names: data.series.map(\.name), top: 52) }
    }

    // MARK: - Pie

    func drawPie(_ canvas: inout Canvas, _ data: ChartData) {
        let values = data.series[0].values.map { $0.isFinite ? max(0, $0) : 0 }
        let total = values.reduce(0, +)
        guard total > 0 else { return }
        let radius = min(canvas.height - 110, canvas.width * 0.5) / 2
        let center = (x: 40 + radius + 10, y: 60 + (canvas.height - 60) / 2)
        var angle = -Double.pi / 2
        for (index, value) in values.enumerated() where value > 0 {
            let sweep = value / total * 2 * .pi
            canvas.wedge(center.x, center.y, radius: radius, from: angle, to: angle + sweep, color: Self.palette[index % Self.palette.count])
            if sweep > 0.25 {
                let middle = angle + sweep / 2
                canvas.text(
                    Self.percent(value / total), x: center.x + cos(middle) * radius * 0.65, y: center.y + sin(middle) * radius * 0.65 + 5, size: 13,
                    bold: true, align: .center, color: (1, 1, 1))
            }
            angle += sweep
        }
        // The legend, one line per slice, to the right.
        let x = center.x + radius + 40
        let lineHeight = min(26, (canvas.height - 100) / Double(max(1, values.count)))
        var y = center.y - lineHeight * Double(values.count) / 2
        for (index, name) in data.categories.enumerated() {
            canvas.fill(x, y - 10, 14, 14, color: Self.palette[index % Self.palette.count])
            canvas.text(
                "\(Canvas.shorten(name, to: 36))  \(Self.format(values[index])) (\(Self.percent(values[index] / total)))", x: x + 22, y: y + 2, size: 13,
                align: .left, maxWidth: canvas.width - x - 40)
            y += lineHeight
        }
    }

    func drawLegend(_ canvas: inout Canvas, names: [String], top: Double) {
        let labels = names.map { Canvas.shorten($0, to: 24) }
        let widths = labels.map { canvas.measure($0, size: 12) + 36 }
        var x = max(20, (canvas.width - widths.reduce(0, +)) / 2)
        for (index, label) in labels.enumerated() {
            canvas.fill(x, top - 9, 12, 12, color: Self.palette[index % Self.palette.count])
            canvas.text(label, x: x + 18, y: top + 2, size: 12, align: .left)
            x += widths[index]
        }
    }

    // MARK: - Numbers

    /// `1234.5` → "1,234.5", `2500000` → "2.5M": short, and exact where it matters.
    static func format(_ value: Double) -> String {
        let magnitude = abs(value)
        if magnitude >= 1_000_000_000 { return trimmed(value / 1_000_000_000) + "B" }
        if magnitude >= 1_000_000 { return trimmed(value / 1_000_000) + "M" }
        if magnitude >= 10_000 { return trimmed(value / 1000) + "k" }
        if value == value.rounded() { return grouped(Int64(value)) }
        return trimmed(value)
    }

    static func trimmed(_ value: Double) -> String {
        var text = String(format: "%.2f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }

    static func grouped(_ value: Int64) -> String {
        let digits = String(value.magnitude)
        var out = ""
        for (index, character) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(character)
        }
        return value < 0 ? "-" + out : out
    }

    static func percent(_ share: Double) -> String {
        share >= 0.1 ? String(format: "%.0f%%", share * 100) : String(format: "%.1f%%", share * 100)
    }
}

/// Axis bounds and ticks at round numbers (1, 2 or 5 times a power of ten).
struct NiceScale {
    let min: Double
    let max: Double
    let ticks: [Double]

    /// Values drawn, at most: past it the span, the step and the rounded bounds below pass the
    /// finite doubles, and a stride over an infinite or empty step never ends (or traps).
    static let limit = 1e300

    init(min low: Double, max high: Double, count: Int = 6) {
        var low = low.isFinite ? Swift.min(Swift.max(low, -Self.limit), Self.limit) : 0
        var high = high.isFinite ? Swift.min(Swift.max(high, -Self.limit), Self.limit) : 0
        if high <= low {
            high = low + (low == 0 ? 1 : abs(low))
        }
        let raw = (high - low) / Double(count - 1)
        let power = pow(10, floor(log10(raw)))
        let step = [1.0, 2, 2.5, 5, 10].map { $0 * power }.first { $0 >= raw } ?? raw
        // A span too small for a step (subnormal numbers), or too wide for its bounds: the ends alone.
        guard step > 0, step.isFinite, (high - low) / step <= 100, (ceil(high / step) * step).isFinite else {
            min = low
            max = high
            ticks = [low, high]
            return
        }
        low = floor(low / step) * step
        high = ceil(high / step) * step
        min = low
        max = high
        ticks = stride(from: low, through: high + step / 2, by: step).map { abs($0) < step / 1e6 ? 0 : $0 }
    }
}

/// Cairo's drawing calls, in the few shapes the charts use.
struct Canvas {
    enum Align { case left, center, right }

    let cr: OpaquePointer
    let width: Double
    let height: Double

    func fill(_ x: Double, _ y: Double, _ w: Double, _ h: Double, color: (Double, Double, Double)) {
        cairo_set_source_rgb(cr, color.0, color.1, color.2)
        cairo_rectangle(cr, x, y, w, h)
        cairo_fill(cr)
    }

    func line(_ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, color: (Double, Double, Double), width: Double) {
        polyline([(x1, y1), (x2, y2)], color: color, width: width)
    }

    func polyline(_ points: [(Double, Double)], color: (Double, Double, Double), width: Double) {
        guard let first = points.first else { return }
        cairo_set_source_rgb(cr, color.0, color.1, color.2)
        cairo_set_line_width(cr, width)
        cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND)
        cairo_move_to(cr, first.0, first.1)
        for point in points.dropFirst() { cairo_line_to(cr, point.0, point.1) }
        cairo_stroke(cr)
    }

    func dot(_ x: Double, _ y: Double, radius: Double, color: (Double, Double, Double)) {
        cairo_set_source_rgb(cr, color.0, color.1, color.2)
        cairo_arc(cr, x, y, radius, 0, 2 * .pi)
        cairo_fill(cr)
    }

    func wedge(_ x: Double, _ y: Double, radius: Double, from: Double, to: Double, color: (Double, Double, Double)) {
        cairo_set_source_rgb(cr, color.0, color.1, color.2)
        cairo_move_to(cr, x, y)
        cairo_arc(cr, x, y, radius, from, to)
        cairo_close_path(cr)
        cairo_fill_preserve(cr)
        cairo_set_source_rgb(cr, 1, 1, 1)
        cairo_set_line_width(cr, 1.5)
        cairo_stroke(cr)
    }

    /// The font for `text`: one with CJK and Hangul glyphs when the text needs them.
    func useFont(for text: String, size: Double, bold: Bool) {
        let needsCJK = text.unicodeScalars.contains { $0.value >= 0x2E80 }
        cairo_select_font_face(
            cr, needsCJK ? "WenQuanYi Micro Hei" : "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL)
        cairo_set_font_size(cr, size)
    }

    func measure(_ text: String, size: Double, bold: Bool = false) -> Double {
        useFont(for: text, size: size, bold: bold)
        var extents = cairo_text_extents_t()
        cairo_text_extents(cr, text, &extents)
        return extents.x_advance
    }

    func text(
        _ text: String, x: Double, y: Double, size: Double, bold: Bool = false, align: Align, maxWidth: Double? = nil, angle: Double = 0,
        color: (Double, Double, Double) = (0.15, 0.15, 0.15)
    ) {
        var shown = text
        if let maxWidth {
            while shown.count > 1, measure(shown, size: size, bold: bold) > maxWidth { shown = String(shown.dropLast(2)) + "…" }
        }
        let advance = measure(shown, size: size, bold: bold)
        cairo_save(cr)
        cairo_set_source_rgb(cr, color.0, color.1, color.2)
        cairo_translate(cr, x, y)
        cairo_rotate(cr, angle)
        let dx: Double =
            switch align {
            case .left: 0
            case .center: -advance / 2
            case .right: -advance
            }
        cairo_move_to(cr, dx, 0)
        cairo_show_text(cr, shown)
        cairo_restore(cr)
    }

    /// At most `limit` characters, the rest replaced by "…".
    static func shorten(_ text: String, to limit: Int) -> String {
        let single = text.replacingOccurrences(of: "\n", with: " ")
        return single.count <= limit ? single : String(single.prefix(limit - 1)) + "…"
    }
}

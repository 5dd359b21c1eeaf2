import PorticoAskEngine

/// A question that follows another ("and in 2019?", "only the ones in Lisbon") read with the
/// plan of the one before.
extension Interpreter {
    func isFollowUp(_ items: [Item], _ reader: QuestionReader) -> Bool {
        let first = reader.tokens.first?.lower ?? ""
        let opensAsFollowUp =
            ["and", "only", "but", "now", "instead", "also", "then", "by", "per"].contains(first)
            || reader.tokens.contains { ["instead", "rather"].contains($0.lower) }
            || reader.tokens.prefix(2).map(\.lower) == ["what", "about"] || reader.tokens.prefix(2).map(\.lower) == ["how", "about"]
        let hasSubject = items.contains { if case .table = $0 { return true } else { return false } } && items.contains { $0 == .count }
        return opensAsFollowUp || (!hasSubject && !items.contains { if case .table = $0 { return true } else { return false } })
    }

    /// The previous question's plan with this question's changes: a filter, a grouping, a limit.
    func followUp(_ previous: QueryPlan, _ items: [Item]) throws(NotUnderstood) -> Understood {
        var plan = previous
        var changed = false
        var k = 0
        while k < items.count {
            defer { k += 1 }
            switch items[k] {
            case .year(let year):
                guard let date = dateColumn(for: plan.root, plan: plan) else { continue }
                plan.conditions.removeAll { isDateCondition($0, date) }
                plan.conditions += yearRange(date, year)
                changed = true
            case .month(let month, let year):
                guard let date = dateColumn(for: plan.root, plan: plan), !schema.column(date).isYear, let year = year ?? previousYear(plan, date) else {
                    continue
                }
                plan.conditions.removeAll { isDateCondition($0, date) }
                plan.conditions += monthRange(date, year, month)
                changed = true
            case .value(let entries, _, let partial):
                let entry = preferred(entries, near: [plan.root] + tablesOf(plan))
                plan.conditions.removeAll {
                    if case .oneOf(let c, _) = $0 { return c == entry.column }
                    if case .like(let c, _) = $0 { return c == entry.column }
                    if case .notLike(let c, _) = $0 { return c == entry.column }
                    return false
                }
                plan.conditions.append(partial ? .like(entry.column, "%" + entry.value + "%") : .oneOf(entry.column, [entry.value]))
                changed = true
            case .groupMarker:
                if k + 1 < items.count, let grouping = groupingFor(items[k + 1], root: plan.root) {
                    if case .entity(let t)? = plan.grouping, case .entity(let u) = grouping, plan.root == t { plan.root = u }
                    plan.grouping = grouping
                    plan.shown = []
                    changed = true
                    k += 1
                }
            case .top(let n):
                plan.limit = n
                if plan.order.isEmpty, let m = plan.measures.first { plan.order = [(m, descending: true)] }
                changed = true
            case .superlative(let descending, _):
                if let m = plan.measures.first { plan.order = [(m, descending: descending)] }
                if plan.limit == nil { plan.limit = 1 }
                changed = true
            case .number(let n, nil) where n == n.rounded() && n > 0:
                plan.limit = Int(n)
                if plan.order.isEmpty, let m = plan.measures.first { plan.order = [(m, descending: true)] }
                changed = true
            default: continue
            }
        }
        guard changed else { throw NotUnderstood(message: "the built-in engine could not tell what to change in the previous question; ask it whole") }
        // How sure: read by BuiltinEngine from the risks of the whole chain's parts and plan.
        return Understood(plan: plan, confidence: 1, title: "")
    }

    func previousYear(_ plan: QueryPlan, _ date: Int) -> Int? {
        for c in plan.conditions {
            if case .compare(.column(date), .greaterOrEqual, .text(let from)) = c, let y = Int(from.prefix(4)) { return y }
        }
        return nil
    }

    func isDateCondition(_ c: QueryPlan.Condition, _ date: Int) -> Bool {
        switch c {
        case .compare(.column(date), _, _), .compare(.bucket(date, _), _, _): return true
        // "after 1961 or before 1959": either of two times is a time too.
        case .any(let cs), .all(let cs): return !cs.isEmpty && cs.allSatisfy { isDateCondition($0, date) }
        default: return false
        }
    }

    func tablesOf(_ plan: QueryPlan) -> [Int] {
        var out: [Int] = []
        if case .entity(let t)? = plan.grouping { out.append(t) }
        for m in plan.measures {
            if case .aggregate(_, .column(let c)) = m { out.append(schema.column(c).table) }
            if case .aggregate(_, .product(let c, _)) = m { out.append(schema.column(c).table) }
        }
        return out
    }

    func groupingFor(_ item: Item, root: Int) -> QueryPlan.Grouping? {
        switch item {
        case .table(let t): return .entity(t)
        case .columns(let cs): return pickColumn(cs, near: [root]).map { .column($0) }
        case .bucket(let b): return dateColumn(for: root, plan: nil).map { .bucket($0, b == .month ? .yearMonth : b) }
        default: return nil
        }
    }

    func yearRange(_ date: Int, _ year: Int) -> [QueryPlan.Condition] {
        if schema.column(date).isYear { return [.compare(.column(date), .equal, .number(Double(year)))] }
        return [.compare(.column(date), .greaterOrEqual, .text("\(year)-01-01")), .compare(.column(date), .less, .text("\(year + 1)-01-01"))]
    }

    func monthRange(_ date: Int, _ year: Int, _ month: Int) -> [QueryPlan.Condition] {
        let next = month == 12 ? (year + 1, 1) : (year, month + 1)
        func day(_ y: Int, _ m: Int) -> String { "\(y)-" + (m < 10 ? "0" : "") + "\(m)-01" }
        return [.compare(.column(date), .greaterOrEqual, .text(day(year, month))), .compare(.column(date), .less, .text(day(next.0, next.1)))]
    }
}

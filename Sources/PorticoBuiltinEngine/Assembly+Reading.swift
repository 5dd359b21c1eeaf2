import PorticoAskEngine

extension Interpreter.Assembly {
    /// Comparisons with an average ("earn more than the average salary", "above average"):
    /// the average here is a bound, not what is measured. Also the columns the question orders by.
    mutating func readComparisonsWithAverage() {
        for k in items.indices where !used.contains(k) {
            guard case .compare(let op, let word) = items[k], k + 1 < items.count, items[k + 1] == .average else { continue }
            used.formUnion([k, k + 1])
            var columns: [Int]?
            if let cs = isColumns(k + 2) {
                columns = cs
                used.insert(k + 2)
            } else if isTable(k + 2) != nil, let cs = isColumns(k + 3) {  // "longer than the average track length"
                columns = cs
                used.formUnion([k + 2, k + 3])
            } else if k > 0, !used.contains(k - 1), let cs = isColumns(k - 1) {  // "a salary above average"
                columns = cs
                used.insert(k - 1)
            }
            againstAverage.append((op, columns, word, k + 1))
        }
        // "sorted by salary", "by salary in descending order": an order, not a grouping.
        let asksOrder = items.contains { $0.isDirection || $0 == .alphabetical || $0 == .orderBy }
        let measures = items.contains {
            switch $0 {
            case .count, .function, .average, .money, .superlative, .top: return true
            default: return false
            }
        }
        // "ordered by descending market value", "by ascending order of age": the way between the two.
        func columnsAfter(_ k: Int) -> (columns: [Int], at: Int)? {
            if let cs = isColumns(k + 1) { return (cs, k + 1) }
            if k + 2 < items.count, case .direction = items[k + 1], let cs = isColumns(k + 2) { return (cs, k + 2) }
            // "ordered by album title": the table's own column.
            if k + 2 < items.count, let t = isTable(k + 1), let cs = isColumns(k + 2)?.filter({ schema.column($0).table == t }), !cs.isEmpty {
                used.insert(k + 1)
                return (cs, k + 2)
            }
            return nil
        }
        for (k, item) in items.enumerated() where !used.contains(k) && item == .orderBy {
            guard let (cs, at) = columnsAfter(k) else { continue }
            orderColumns.append((cs, at))
            used.formUnion([k, at])
            // "ordered by year and class": more columns at the end of the question order the ties.
            var next = at + 1
            while next < items.count, !used.contains(next), let more = isColumns(next),
                items[(next + 1)...].allSatisfy(\.isDirection)
            {
                orderColumns.append((more, next))
                used.insert(next)
                next += 1
            }
        }
        if asksOrder, !measures {
            for (k, item) in items.enumerated() where !used.contains(k) && item.isGroupMarker {
                guard let (cs, at) = columnsAfter(k), !cs.contains(where: { schema.column($0).isKey }) else { continue }
                orderColumns.append((cs, at))
                used.formUnion([k, at])
            }
        }
    }

    /// Grouping: "each X", "per X", "by X", "for each X", "yearly".
    mutating func readGrouping() {
        for (k, item) in items.enumerated() where item.isGroupMarker && !used.contains(k) {
            used.insert(k)
            guard k + 1 < items.count else { continue }
            switch items[k + 1] {
            case .table(let t):
                grouping = .entity(t)
                groupedByEach = item == .groupMarker(each: true)
                used.insert(k + 1)
            case .columns(let cs):
                guard let c = interpreter.pickColumn(cs, near: items.compactMap { if case .table(let t) = $0 { return t } else { return nil } }) else {
                    continue
                }
                let ranks = items.contains { if case .superlative = $0 { return true } else { return false } }
                let counts = items.contains { item in
                    switch item {
                    case .count, .function, .average, .money: return true
                    default: return false
                    }
                }
                if ranks, !counts, schema.column(c).kind == .number, !schema.column(c).isKey {
                    // "the top 5 flights by distance": rows ranked by their column, not groups.
                    rankedBy = k + 1
                    continue
                }
                if let target = schema.column(c).references {
                    grouping = .entity(target)
                    groupThrough.append(schema.column(c).table)
                } else {
                    grouping = .column(c)
                }
                used.insert(k + 1)
            case .bucket(let b):
                grouping = .bucket(-1, b)
                used.insert(k + 1)
            case .function, .average, .money, .superlative, .count:
                rankedBy = k + 1
            default: continue
            }
        }
        for (k, item) in items.enumerated() where !used.contains(k) {
            if case .bucket(let b) = item {
                grouping = .bucket(-1, b)
                used.insert(k)
            }
        }
    }

    /// The tables of the columns named after `k`, in order: "which zip code has the lowest average
    /// visibility" asks for the zip code of the table the visibility is in, where both tables have one.
    func tablesOfColumns(after k: Int) -> [Int] {
        var tables: [Int] = []
        for item in items[(k + 1)...] {
            guard case .columns(let cs) = item else { continue }
            for c in cs where !tables.contains(schema.column(c).table) { tables.append(schema.column(c).table) }
        }
        return tables
    }

    /// The thing asked about: after "which"/"who", a superlative or a number, or the first table.
    mutating func readSubject() {
        if let k = items.firstIndex(where: { $0 == .which || $0 == .who }), k > 0, let t = isTable(k - 1), !used.contains(k - 1) {
            // "the artists who have albums": a relative clause about the table before it.
            subject = t
            used.insert(k - 1)
        } else if let k = items.firstIndex(where: { $0 == .which || $0 == .who }) {
            var j = k + 1
            while j < items.count {
                if case .number(let n, nil) = items[j], n == n.rounded(), n > 0 {
                    limit = Int(n)
                    used.insert(j)
                    j += 1
                    continue
                }
                if case .top(let n) = items[j] {
                    limit = n
                    used.insert(j)
                }
                if case .superlative = items[j] {
                    j += 1
                    continue
                }
                if case .top = items[j] {
                    j += 1
                    continue
                }
                break
            }
            if let t = isTable(j), !used.contains(j) {
                subject = t
                used.insert(j)
            } else if let cs = isColumns(j), !used.contains(j), let c = interpreter.pickColumn(cs, near: tablesOfColumns(after: j)),
                // Not "who majored in 600": a column before its number is a condition.
                !(j + 1 < items.count && { if case .number(_, nil) = items[j + 1] { true } else { false } }())
            {
                if let target = schema.column(c).references {
                    subject = target
                    groupThrough.append(schema.column(c).table)
                } else {
                    subjectColumn = c
                    subject = schema.column(c).table
                }
                used.insert(j)
            }
        } else if let k = items.indices.dropFirst().first(where: { k in
            guard case .superlative(_, let word) = items[k] else { return false }
            if ["most", "fewest", "least"].contains(word) { return isTable(k + 1) != nil }
            // "the zip code with the lowest average visibility": a column ranked by a function of another.
            return k + 2 < items.count && (items[k + 1] == .average || { if case .function = items[k + 1] { true } else { false } }())
                && isColumns(k + 2) != nil && isColumns(k - 1) != nil
        }) {
            // "the advisor with the most students", "the status of the city that has hosted the most
            // competitions": what comes right before the ranking by a count is what is ranked, as after "which".
            if let t = isTable(k - 1), !used.contains(k - 1), t != isTable(k + 1) {
                subject = t
                used.insert(k - 1)
            } else if let cs = isColumns(k - 1), !used.contains(k - 1), let c = interpreter.pickColumn(cs, near: tablesOfColumns(after: k)),
                !schema.column(c).isKey,
                schema.column(c).references == nil
            {
                subjectColumn = c
                subject = schema.column(c).table
                used.insert(k - 1)
            }
        }
    }
}

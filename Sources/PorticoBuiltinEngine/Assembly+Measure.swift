import PorticoAskEngine

extension Interpreter.Assembly {
    /// What is measured: the limit a superlative or "top" sets, a count, an aggregate function and
    /// the column, money or table it applies to, and more functions of that column.
    mutating func readMeasure() throws(NotUnderstood) {
        readLimit()
        readCount()
        let countedByCount = counted
        readFunction()
        let measureAt = try readMeasured()
        if countedByCount != nil, superlative != nil, case .aggregate(let f, _)? = measure, f != .countDistinct {
            // "the number of companies for the industry with the highest total market value": a count
            // beside a ranked total, which the engine would answer with the total alone.
            throw NotUnderstood(
                message: "the built-in engine does not read a count beside a ranked total in one question; ask for the one ranked first, then its count")
        }
        readMoreFunctions(before: measureAt)
        readMoreMeasured(after: measureAt)
        if aggregateFunction != nil, measure == nil, counted == nil, !averageOfCount {
            throw NotUnderstood(message: "the built-in engine found nothing to \(functionIndex.map { describe(items[$0]) } ?? "aggregate"); name the column")
        }
    }

    /// "the 3 highest", "top 5": the superlative and how many rows it keeps.
    mutating func readLimit() {
        for (k, item) in items.enumerated() where !used.contains(k) {
            switch item {
            case .superlative(let d, let w):
                if superlative == nil { superlative = (d, w, k) }
                used.insert(k)
                if k > 0, !used.contains(k - 1), case .number(let n, nil) = items[k - 1], n == n.rounded(), n > 0 {
                    limit = Int(n)
                    used.insert(k - 1)
                } else if k > 1, !used.contains(k - 2), isTable(k - 1) != nil, case .number(let n, nil) = items[k - 2], n == n.rounded(), n > 0,
                    n < 1000, k == 2 || [.which, .who].contains(items[k - 3])
                {
                    // "the 3 counties that have the smallest population": the number before the rows ranked.
                    limit = Int(n)
                    used.insert(k - 2)
                }
                if k + 1 < items.count, case .top(let n) = items[k + 1] {
                    limit = n
                    used.insert(k + 1)
                }
            case .top(let n):
                limit = limit ?? n
                used.insert(k)
            default: break
            }
        }
    }

    /// "how many …": a count of rows, of distinct values, or a sum of a quantity counted.
    mutating func readCount() {
        guard let k = items.firstIndex(of: .count), !used.contains(k) else { return }
        used.insert(k)
        if k > 0, items[k - 1] == .average { averageOfCount = true; used.insert(k - 1) }
        // "how many track units": a numeric column right after the count is summed, unless it is compared.
        let quantity = [k + 1, k + 2].first { j in
            guard let cs = isColumns(j), interpreter.pickNumeric(cs, near: []) != nil else { return false }
            if j + 1 < items.count, case .compare = items[j + 1] { return false }
            if j + 1 < items.count, case .range = items[j + 1] { return false }
            if j + 1 < items.count, case .number = items[j + 1] { return false }
            return j == k + 1 || isTable(k + 1) != nil
        }
        let distinctAt = k + 1 < items.count && items[k + 1] == .distinct ? k + 1 : nil
        if let d = distinctAt, let cs = isColumns(d + 1), let c = interpreter.pickColumn(cs, near: []), schema.column(c).references == nil {
            // "how many different cities": each value once.
            measure = .aggregate(.countDistinct, .column(c))
            used.formUnion([d, d + 1])
        } else if let d = distinctAt, let t = isTable(d + 1), let cs = isColumns(d + 2),
            let c = interpreter.pickColumn(cs.filter { schema.column($0).table == t }, near: [t]), schema.column(c).references == nil,
            !schema.column(c).isKey
        {
            // "how many different captain ranks": the values of the table's column, each once.
            measure = .aggregate(.countDistinct, .column(c))
            subject = subject ?? t
            used.formUnion([d, d + 1, d + 2])
        } else if let j = quantity, let cs = isColumns(j), let c = interpreter.pickNumeric(cs, near: isTable(k + 1).map { [$0] } ?? []) {
            // "the average number of days stayed": the column's average, not a count.
            measure = .aggregate(averageOfCount ? .avg : .sum, .column(c))
            averageOfCount = false
            used.insert(j)
            if let t = isTable(k + 1) { used.insert(k + 1); subject = subject ?? t }
        } else if distinctAt == nil, !items.contains(where: { if case .compare = $0 { true } else { false } }), let cs = isColumns(k + 1),
            let c = interpreter.pickColumn(cs, near: []), schema.column(c).kind == .text,
            !schema.column(c).isKey, schema.column(c).references == nil, !schema.tables[schema.column(c).table].labels.contains(c)
        {
            // "how many schools are there in the department", of a school_code column: its values, each once
            // ("how many cities have more than 3 airports" counts groups instead).
            measure = .aggregate(.countDistinct, .column(c))
            used.insert(k + 1)
        } else if let subject, isTable(distinctAt.map { $0 + 1 } ?? k + 1) == subject {
            // "the number of artists who have volumes": the artists, already read as what the clause is about.
            counted = subject
            if let d = distinctAt { used.insert(d) }
        } else if let d = distinctAt, let t = isTable(d + 1), schema.tables[t].primaryKey.map({ schema.column($0).kind == .text }) ?? false,
            let same = schema.tables[t].columns.first(where: { c in
                !schema.column(c).isKey && schema.column(c).kind == .text && schema.column(c).words == schema.tables[t].words
            })
        {
            // "how many different allergy types", of a table keyed by the allergy whose column AllergyType
            // repeats: its values, each once (a table keyed by a number is named by such a column).
            measure = .aggregate(.countDistinct, .column(same))
            used.formUnion([d, d + 1])
        } else if let j = next(after: k, { if case .table = $0 { return true } else { return false } }), let t = isTable(j) {
            counted = t
            used.insert(j)
            if let d = distinctAt, d < j { used.insert(d) }  // "how many different genres": rows are counted once anyway
        } else if let j = next(after: k, { if case .columns = $0 { return true } else { return false } }), let cs = isColumns(j),
            let c = interpreter.pickNumeric(cs, near: [subject].compactMap { $0 })
        {
            // "the total number of credits": a sum of a numeric column.
            measure = .aggregate(.sum, .column(c))
            used.insert(j)
        } else if let j = next(after: k, { if case .columns = $0 { return true } else { return false } }), let cs = isColumns(j),
            let c = interpreter.pickColumn(cs, near: []), let target = schema.column(c).references
        {
            counted = target
            used.insert(j)
        }
    }

    /// An aggregate function ("average", "total", "maximum"); money alone is a sum.
    mutating func readFunction() {
        functionIndex = items.indices.first { k in
            guard !used.contains(k) else { return false }
            if case .function = items[k] { return true }
            return items[k] == .average
        }
        if let k = functionIndex {
            used.insert(k)
            if case .function(let f) = items[k] { aggregateFunction = f } else { aggregateFunction = .avg }
        }
        if aggregateFunction == nil, superlative == nil, rankedBy == nil, measure == nil, counted == nil,
            let k = items.firstIndex(of: .money), !used.contains(k)
        {
            // "the revenue for each genre", "monthly revenue": money alone is a sum.
            aggregateFunction = .sum
        }
    }

    /// The thing a function or superlative measures: money, a numeric column, or a table (counted).
    /// Returns where the measured column was named, when it was.
    mutating func readMeasured() throws(NotUnderstood) -> Int? {
        guard aggregateFunction != nil || superlative != nil || rankedBy != nil, measure == nil else { return nil }
        var measureAt: Int?
        // "the customer who spent the most": the money its verb names, just before "the most" and
        // nothing after it that could be ranked ("spent the most weeks on top").
        let spentMost = superlative.flatMap { s in
            s.at > 0 && ["most", "least"].contains(s.word) && items[s.at - 1] == .money && !used.contains(s.at - 1)
                && !items.indices.dropFirst(s.at + 1).contains { isTable($0) != nil || isColumns($0) != nil }
                ? s.at - 1 : nil
        }
        let start = functionIndex ?? rankedBy ?? spentMost ?? superlative?.at ?? 0
        // "the highest mountain" is the tallest; "the highest prominence of mountains" is never their
        // height, even when the column named cannot be ranked.
        let heightBesideAColumn =
            superlative.map { s in
                ["highest", "lowest"].contains(s.word) && items.indices.contains { $0 > s.at && isColumns($0) != nil }
            } ?? false
        for j in start..<items.count where !used.contains(j) {
            switch items[j] {
            case .money:
                used.insert(j)
                let around =
                    [grouping.flatMap(entityTable), subject, counted].compactMap { $0 }
                    + items.compactMap { if case .table(let t) = $0 { return t } else { return nil } }
                guard let money = interpreter.moneyMeasure(near: around) else { throw NotUnderstood(message: noMoney) }
                measure = .aggregate(aggregateFunction ?? .sum, money)
            case .columns(let cs):
                let near =
                    [subject, counted, grouping.flatMap(entityTable)].compactMap { $0 } + tablesBefore(j, items)
                    + items.compactMap { if case .table(let t) = $0 { return t } else { return nil } }
                // Numbers kept as text are totalled or averaged; ranked only when the database's order of
                // their text is their order as numbers (all of one width), and only as rows ranked.
                let totalled = aggregateFunction != nil && superlative == nil && rankedBy == nil
                guard
                    let c = totalled
                        ? interpreter.pickMeasured(cs, near: near)
                        : interpreter.pickNumeric(cs, near: near) ?? interpreter.pickOrderedAsText(cs, near: near)
                else { continue }
                // "the name of the airport with the highest elevation": a column of the same rows asked for first.
                let asksRowColumns = items[..<j].indices.contains { i in
                    !used.contains(i) && (isColumns(i)?.contains { schema.column($0).table == schema.column(c).table && $0 != c } ?? false)
                }
                // "the track with the highest unit price": the table just before the superlative names the rows ranked.
                let tableRanked = superlative.map { $0.at > 0 && $0.at + 1 == j && items[$0.at - 1] == .table(schema.column(c).table) } ?? false
                let rankedRows =
                    rankedBy == j && tablesBefore(j, items).contains(schema.column(c).table) || tableRanked && !items.contains(.count)
                if aggregateFunction == nil, superlative != nil, grouping == nil,
                    subject.map({ subjectColumn == nil && schema.column(c).table == $0 }) ?? (asksRowColumns || rankedRows || (limit ?? 1) > 1)
                {
                    // "which department has the largest budget": rows ranked by their own column; "the 3
                    // highest rates": more than one, so the rows' values, not their maximum.
                    used.insert(j)
                    measureAt = j
                    measure = .column(c)
                } else if schema.column(c).kind != .number && !totalled {
                    continue
                } else {
                    used.insert(j)
                    measureAt = j
                    let descending = superlative.map { interpreter.ranksDescending($0.word, $0.descending, column: c) } ?? true
                    measure = .aggregate(aggregateFunction ?? (descending ? .max : .min), .column(c))
                }
            case .table(let t) where aggregateFunction == nil && measure == nil:
                // "the most tracks": a count of a table, unless the table is what is asked about and an adjective says the column.
                if let superlative, !heightBesideAColumn, let column = interpreter.adjectiveColumn(superlative.word, in: t, ranked: true) {
                    if subject == nil { subject = t }
                    used.insert(j)
                    measure = .column(column)
                } else if subject != nil || grouping != nil || subjectColumn != nil,
                    !(superlative.map { Lexicon.dimensionWords.contains($0.word) } ?? false)
                {
                    // "the artist with the most songs" counts them; "the shortest song" does not.
                    counted = t
                    used.insert(j)
                    measure = .countRows
                } else {
                    continue
                }
            default: continue
            }
            if measure != nil { break }
        }
        if measure == nil, let superlative {
            // "the customer who started a policy most recently": the date its verb names, when it names one.
            if ["recently", "latest", "earliest", "newest"].contains(superlative.word), let date = dateHint(items).first {
                measure = .column(date)
                subject = subject ?? schema.column(date).table
            } else if superlative.word == "recently", let s = items.firstIndex(of: .superlative(descending: true, word: "recently")), s > 0,
                case .value(_, let phrase, _) = items[s - 1], phrase.hasSuffix("ed"), phrase == phrase.lowercased()
            {
                // "the order which is shipped most recently": the verb is the event whose date ranks, not a
                // status the rows hold, and no date column is named after it.
                throw NotUnderstood(message: "the built-in engine could not tell which date '\(phrase) most recently' is of; name the date column")
            }
            // "the longest tracks", "the 3 highest paid instructors": an adjective says the column.
            let candidates = [subject, counted].compactMap { $0 } + items.compactMap { if case .table(let t) = $0 { return t } else { return nil } }
            for t in candidates where measure == nil && !heightBesideAColumn {
                if let column = interpreter.adjectiveColumn(superlative.word, in: t, ranked: true) {
                    measure = .column(column)
                    subject = subject ?? t
                    break
                }
            }
        }
        if measure == nil, aggregateFunction != nil, let table = [subject, counted].compactMap({ $0 }).first ?? firstTable(items, used) {
            // "the total of invoices": the table's own money column.
            if let money = interpreter.moneyMeasure(near: [table]) {
                measure = .aggregate(aggregateFunction ?? .sum, money)
                // "the average invoice total": the word "total" named the amount, not a sum.
                for j in items.indices where !used.contains(j) && items[j] == .function(.sum) { used.insert(j) }
            }
        }
        return measureAt
    }

    /// "the average latitude and longitude", "the maximum price and score", "the average distance and
    /// average price": the columns of the measured one's table listed right after it, each under the
    /// function said before it or the one before the first; not a column a condition is about ("the
    /// average price for ratings above 4"), nor a year.
    mutating func readMoreMeasured(after measureAt: Int?) {
        guard let at = measureAt, superlative == nil, rankedBy == nil, moreFunctions.isEmpty, !averageOfCount,
            case .aggregate(let first, .column(let measured))? = measure, first != .countDistinct
        else { return }
        let table = schema.column(measured).table
        var j = at + 1
        while j < items.count, !used.contains(j) {
            var f = first
            var k = j
            if case .function(let g) = items[j] {
                f = g
                k = j + 1
            } else if items[j] == .average {
                f = .avg
                k = j + 1
            }
            guard k < items.count, !used.contains(k), let cs = isColumns(k),
                let c = interpreter.pickMeasured(cs.filter { schema.column($0).table == table && !schema.column($0).isYear }, near: [table]),
                c != measured
            else { break }
            if k + 1 < items.count {
                switch items[k + 1] {
                case .compare, .range, .number: return
                case .value(let entries, _, _) where entries.contains(where: { $0.column == c }): return
                default: break
                }
            }
            moreMeasured.append(.aggregate(f, .column(c)))
            used.formUnion([j, k])
            j = k + 1
        }
    }

    /// "the maximum and minimum salary", "average, lowest and highest age": several functions of one column.
    mutating func readMoreFunctions(before measureAt: Int?) {
        if let k = functionIndex, superlative == nil, case .aggregate = measure {
            let at = measureAt ?? items.count
            for j in (k + 1)..<at where !used.contains(j) {
                if case .function(let f) = items[j] {
                    moreFunctions.append(f)
                    used.insert(j)
                } else if items[j] == .average {
                    moreFunctions.append(.avg)
                    used.insert(j)
                }
            }
        }

    }
}

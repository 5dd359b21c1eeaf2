extension Interpreter {
    /// Builds the plan from what the question's parts mean, in the order they came.
    func assemble(_ items: [Item]) throws(NotUnderstood) -> Understood {
        var confidence = 1.0
        var used = Set<Int>()  // items already given a role
        func isTable(_ k: Int) -> Int? { if k < items.count, case .table(let t) = items[k] { return t } else { return nil } }
        func isColumns(_ k: Int) -> [Int]? { if k < items.count, case .columns(let cs) = items[k] { return cs } else { return nil } }
        func next(after k: Int, _ accept: (Item) -> Bool) -> Int? { ((k + 1)..<items.count).first { !used.contains($0) && accept(items[$0]) } }

        // 0. Comparisons with an average ("earn more than the average salary", "above average"):
        // the average here is a bound, not what is measured.
        var againstAverage: [(op: QueryPlan.Comparison, columns: [Int]?, word: String)] = []
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
            againstAverage.append((op, columns, word))
        }
        // "sorted by salary", "by salary in descending order": an order, not a grouping.
        let asksOrder = items.contains { if case .direction = $0 { return true } else { return $0 == .alphabetical || $0 == .orderBy } }
        let measures = items.contains {
            switch $0 {
            case .count, .function, .average, .money, .superlative, .top: return true
            default: return false
            }
        }
        var orderColumns: [(columns: [Int], at: Int)] = []
        for (k, item) in items.enumerated() where !used.contains(k) && item == .orderBy {
            guard let cs = isColumns(k + 1) else { continue }
            orderColumns.append((cs, k + 1))
            used.formUnion([k, k + 1])
        }
        if asksOrder, !measures {
            for (k, item) in items.enumerated() where !used.contains(k) && item == .groupMarker {
                guard let cs = isColumns(k + 1), !cs.contains(where: { schema.column($0).isKey }) else { continue }
                orderColumns.append((cs, k + 1))
                used.formUnion([k, k + 1])
            }
        }

        // 1. Grouping: "each X", "per X", "by X", "for each X", "yearly".
        var grouping: QueryPlan.Grouping?
        var rankedBy: Int?  // "by total spending": the ranking measure, not a grouping
        var groupThrough: [Int] = []
        for (k, item) in items.enumerated() where item == .groupMarker && !used.contains(k) {
            used.insert(k)
            guard k + 1 < items.count else { continue }
            switch items[k + 1] {
            case .table(let t):
                grouping = .entity(t)
                used.insert(k + 1)
            case .columns(let cs):
                guard let c = pickColumn(cs, near: items.compactMap { if case .table(let t) = $0 { return t } else { return nil } }) else { continue }
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

        // 2. The thing asked about: after "which"/"who", a superlative or a number, or the first table.
        var subject: Int?
        var subjectColumn: Int?  // "which country has the most customers": a column answers
        var limit: Int?
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
            } else if let cs = isColumns(j), !used.contains(j), let c = pickColumn(cs, near: []) {
                if let target = schema.column(c).references {
                    subject = target
                    groupThrough.append(schema.column(c).table)
                } else {
                    subjectColumn = c
                    subject = schema.column(c).table
                }
                used.insert(j)
            }
        }

        // 3. What is measured.
        var measure: QueryPlan.Expression?
        var counted: Int?
        var averageOfCount = false
        var aggregateFunction: QueryPlan.Function?
        var superlative: (descending: Bool, word: String, at: Int)?
        for (k, item) in items.enumerated() where !used.contains(k) {
            switch item {
            case .superlative(let d, let w):
                if superlative == nil { superlative = (d, w, k) }
                used.insert(k)
                if k > 0, !used.contains(k - 1), case .number(let n, nil) = items[k - 1], n == n.rounded(), n > 0 {
                    limit = Int(n)
                    used.insert(k - 1)
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
        if let k = items.firstIndex(of: .count), !used.contains(k) {
            used.insert(k)
            if k > 0, items[k - 1] == .average { averageOfCount = true; used.insert(k - 1) }
            // "how many track units": a numeric column right after the count is summed, unless it is compared.
            let quantity = [k + 1, k + 2].first { j in
                guard let cs = isColumns(j), pickNumeric(cs, near: []) != nil else { return false }
                if j + 1 < items.count, case .compare = items[j + 1] { return false }
                if j + 1 < items.count, case .range = items[j + 1] { return false }
                if j + 1 < items.count, case .number = items[j + 1] { return false }
                return j == k + 1 || isTable(k + 1) != nil
            }
            let distinctAt = k + 1 < items.count && items[k + 1] == .distinct ? k + 1 : nil
            if let d = distinctAt, let cs = isColumns(d + 1), let c = pickColumn(cs, near: []), schema.column(c).references == nil {
                // "how many different cities": each value once.
                measure = .aggregate(.countDistinct, .column(c))
                used.formUnion([d, d + 1])
            } else if let j = quantity, let cs = isColumns(j), let c = pickNumeric(cs, near: isTable(k + 1).map { [$0] } ?? []) {
                // "the average number of days stayed": the column's average, not a count.
                measure = .aggregate(averageOfCount ? .avg : .sum, .column(c))
                averageOfCount = false
                used.insert(j)
                if let t = isTable(k + 1) { used.insert(k + 1); subject = subject ?? t }
            } else if let j = next(after: k, { if case .table = $0 { return true } else { return false } }), let t = isTable(j) {
                counted = t
                used.insert(j)
                if let d = distinctAt, d < j { used.insert(d) }  // "how many different genres": rows are counted once anyway
            } else if let j = next(after: k, { if case .columns = $0 { return true } else { return false } }), let cs = isColumns(j),
                let c = pickNumeric(cs, near: [subject].compactMap { $0 })
            {
                // "the total number of credits": a sum of a numeric column.
                measure = .aggregate(.sum, .column(c))
                used.insert(j)
            } else if let j = next(after: k, { if case .columns = $0 { return true } else { return false } }), let cs = isColumns(j),
                let c = pickColumn(cs, near: []), let target = schema.column(c).references
            {
                counted = target
                used.insert(j)
            }
        }
        // An aggregate function and what it applies to.
        let functionIndex = items.indices.first { k in
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
        var measureAt: Int?
        if aggregateFunction != nil || superlative != nil || rankedBy != nil, measure == nil {
            let start = functionIndex ?? rankedBy ?? superlative?.at ?? 0
            // The measured thing: money, a numeric column, or a table (counted).
            for j in start..<items.count where !used.contains(j) {
                switch items[j] {
                case .money:
                    used.insert(j)
                    let around =
                        [grouping.flatMap(entityTable), subject, counted].compactMap { $0 }
                        + items.compactMap { if case .table(let t) = $0 { return t } else { return nil } }
                    guard let money = moneyMeasure(near: around) else { throw NotUnderstood(message: noMoney) }
                    measure = .aggregate(aggregateFunction ?? .sum, money)
                case .columns(let cs):
                    let near =
                        [subject, counted, grouping.flatMap(entityTable)].compactMap { $0 } + tablesBefore(j, items)
                        + items.compactMap { if case .table(let t) = $0 { return t } else { return nil } }
                    guard let c = pickNumeric(cs, near: near) else { continue }
                    used.insert(j)
                    measureAt = j
                    // "the name of the airport with the highest elevation": a column of the same rows asked for first.
                    let asksRowColumns = items[..<j].indices.contains { i in
                        !used.contains(i) && (isColumns(i)?.contains { schema.column($0).table == schema.column(c).table && $0 != c } ?? false)
                    }
                    let rankedRows = rankedBy == j && tablesBefore(j, items).contains(schema.column(c).table)
                    if aggregateFunction == nil, superlative != nil, grouping == nil,
                        subject.map({ subjectColumn == nil && schema.column(c).table == $0 }) ?? (asksRowColumns || rankedRows)
                    {
                        // "which department has the largest budget": rows ranked by their own column.
                        measure = .column(c)
                    } else {
                        measure = .aggregate(aggregateFunction ?? (superlative?.descending == false ? .min : .max), .column(c))
                    }
                case .table(let t) where aggregateFunction == nil && measure == nil:
                    // "the most tracks": a count of a table, unless the table is what is asked about and an adjective says the column.
                    if let superlative, let column = adjectiveColumn(superlative.word, in: t) {
                        if subject == nil { subject = t }
                        used.insert(j)
                        measure = .column(column)
                    } else if subject != nil || grouping != nil || subjectColumn != nil {
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
                // "the longest tracks", "the 3 highest paid instructors": an adjective says the column.
                let candidates = [subject, counted].compactMap { $0 } + items.compactMap { if case .table(let t) = $0 { return t } else { return nil } }
                for t in candidates {
                    if let column = adjectiveColumn(superlative.word, in: t) {
                        measure = .column(column)
                        subject = subject ?? t
                        break
                    }
                }
            }
            if measure == nil, aggregateFunction != nil, let table = [subject, counted].compactMap({ $0 }).first ?? firstTable(items, used) {
                // "the total of invoices": the table's own money column.
                if let money = moneyMeasure(near: [table]) {
                    measure = .aggregate(aggregateFunction ?? .sum, money)
                    // "the average invoice total": the word "total" named the amount, not a sum.
                    for j in items.indices where !used.contains(j) && items[j] == .function(.sum) { used.insert(j) }
                }
            }
        }

        // "the maximum and minimum salary", "average, lowest and highest age": several functions of one column.
        var moreFunctions: [QueryPlan.Function] = []
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

        if aggregateFunction != nil, measure == nil, counted == nil, !averageOfCount {
            throw NotUnderstood(message: "the built-in engine found nothing to \(functionIndex.map { describe(items[$0]) } ?? "aggregate"); name the column")
        }

        // 4. The root table.
        if subject == nil, let counted, grouping == nil { subject = counted }
        if subject == nil, let t = firstTable(items, used) {
            subject = t
            if let k = items.firstIndex(of: .table(t)) { used.insert(k) }
        }
        if subject == nil, counted == nil {
            // "Who is the general manager?": the table of a value.
            if let entries = items.lazy.compactMap({ if case .value(let e, _, _) = $0 { return e } else { return nil } }).first {
                subject = schema.column(entries[0].column).table
            } else if let cs = items.lazy.compactMap({ if case .columns(let cs) = $0 { return cs } else { return nil } }).first {
                subject = schema.column(cs[0]).table
            }
        }
        guard let root0 = grouping.flatMap(entityTable) ?? subject ?? counted ?? measureTable(measure) else {
            throw NotUnderstood(message: "the built-in engine could not tell which table the question is about; name it (datasource_describe lists them)")
        }
        var plan = QueryPlan(root: root0)
        plan.through = groupThrough + [counted, subject].compactMap { $0 }

        // 5. Filters: values, dates, comparisons, text matches, negations.
        let related = [root0, subject, counted, measureTable(measure)].compactMap { $0 }
        for bound in againstAverage {
            guard let c = bound.columns.flatMap({ pickNumeric($0, near: related) }) ?? adjectiveColumn(bound.word, in: root0) else {
                throw NotUnderstood(message: "the built-in engine could not tell which column's average '\(bound.word)' compares with; name the column")
            }
            plan.conditions.append(.comparedToAverage(c, bound.op))
        }
        var k = 0
        while k < items.count {
            defer { k += 1 }
            guard !used.contains(k) else { continue }
            switch items[k] {
            case .value(let entries, _, let partial):
                used.insert(k)
                var mentionedAt = k - 1
                if mentionedAt > 0, items[mentionedAt] == .groupMarker { mentionedAt -= 1 }  // "composed by Jimi Hendrix"
                var mentioned = mentionedAt >= 0 && !used.contains(mentionedAt) ? isColumns(mentionedAt) : nil
                // "a First class seat": the column named just after the value.
                if mentioned.map({ cs in !entries.contains { cs.contains($0.column) } }) ?? true, !used.contains(k + 1),
                    let after = isColumns(k + 1), entries.contains(where: { after.contains($0.column) })
                {
                    mentioned = after
                    mentionedAt = k + 1
                }
                var entry = preferred(entries, near: related, mentioned: mentioned, table: k > 0 ? isTable(k - 1) : nil)
                if let mentioned, mentioned.contains(entry.column) { used.insert(mentionedAt) }
                let valueTable = schema.column(entry.column).table
                if mentioned == nil, (schema.distance(root0, valueTable) ?? 99) >= 3, !items.contains(.table(valueTable)) {
                    // A value found only far from what the question is about ("customers in Brasil" and a track
                    // called Brasil): a close spelling next to it wins, else the engine is not sure.
                    let close = values.near(ValueIndex.words(entry.value)).filter { (schema.distance(root0, schema.column($0.column).table) ?? 99) <= 1 }
                    if let first = close.first, close.allSatisfy({ $0.value == first.value }) {
                        entry = first
                    } else {
                        confidence -= 0.5
                    }
                }
                if Set(entries.map { schema.column($0.column).table }).count > 1, mentioned == nil { confidence -= 0.1 }
                let condition: QueryPlan.Condition =
                    partial || isListColumn(entry.column, phrase: entry.value)
                    ? .like(entry.column, "%" + entry.value + "%") : .oneOf(entry.column, [entry.value])
                if k > 0, items[k - 1] == .or || k > 1 && items[k - 2] == .or && used.contains(k - 1), let last = plan.conditions.popLast() {
                    plan.conditions.append(merge(last, condition))
                } else {
                    plan.conditions.append(condition)
                }
            case .year(let year):
                used.insert(k)
                guard let date = dateColumn(for: measureTable(measure) ?? counted ?? root0, plan: plan, hint: dateHint(items)) else {
                    throw NotUnderstood(message: "the question names the year \(year), but the tables it is about have no date column")
                }
                if k > 0, case .compare(let op, _) = items[k - 1], schema.column(date).isYear {
                    used.insert(k - 1)
                    plan.conditions.append(.compare(.column(date), op, .number(Double(year))))
                } else if k > 0, case .compare(let op, _) = items[k - 1] {
                    used.insert(k - 1)
                    plan.conditions.append(
                        op == .greater
                            ? .compare(.column(date), .greaterOrEqual, .text("\(year + 1)-01-01"))
                            : .compare(.column(date), op == .less ? .less : .greaterOrEqual, .text("\(year)-01-01")))
                } else {
                    plan.conditions += yearRange(date, year)
                }
            case .month(let month, let year):
                used.insert(k)
                guard let date = dateColumn(for: measureTable(measure) ?? counted ?? root0, plan: plan, hint: dateHint(items)), let year else {
                    throw NotUnderstood(message: "name the year of the month too, e.g. \"in December 2024\"")
                }
                if schema.column(date).isYear {
                    throw NotUnderstood(message: "the tables the question is about keep years, not dates; ask by year")
                }
                plan.conditions += monthRange(date, year, month)
            case .compare(let op, let word):
                used.insert(k)
                guard k + 1 < items.count, case .number(let n, let unit) = items[k + 1] else {
                    if k + 1 < items.count, case .year = items[k + 1] { continue }
                    throw NotUnderstood(message: "'\(word)' needs a number after it")
                }
                used.insert(k + 1)
                // What is compared: the table counted after the number ("more than 25 tracks"), a column named
                // next to it, or the column an adjective names ("longer than 20 minutes").
                if let t = isTable(k + 2) {
                    used.insert(k + 2)
                    plan.having.append(.compare(.countRows, op, .number(n)))
                    plan.counted = plan.counted ?? t
                    if grouping == nil { grouping = .entity(root0) }
                    plan.through.append(t)
                } else if let cs = isColumns(k + 2) ?? (k > 0 ? isColumns(k - 1) : nil), let c = pickNumeric(cs, near: related) {
                    if let j = [k + 2, k - 1].first(where: { isColumns($0) != nil }) { used.insert(j) }
                    plan.conditions.append(.compare(.column(c), op, .number(n)))
                } else if let c = (tablesBefore(k, items) + [root0]).lazy.compactMap({ t in
                    adjectiveColumn(word, in: t) ?? unit.flatMap { self.adjectiveColumn($0, in: t) }
                }).first {
                    plan.conditions.append(.compare(.column(c), op, .number(convert(n, unit: unit, to: c))))
                } else {
                    throw NotUnderstood(message: "the built-in engine could not tell what '\(word) \(Int(n))' compares; name the column")
                }
            case .textMatch(let kind):
                used.insert(k)
                guard k + 1 < items.count, case .text(let text) = items[k + 1] else {
                    // "playlists that contain more than 100 tracks": a verb, not a text match.
                    if k + 1 < items.count, case .compare = items[k + 1] { continue }
                    if k + 1 < items.count, case .table = items[k + 1] { continue }
                    throw NotUnderstood(message: "put the text to match in quotes, e.g. containing 'love'")
                }
                used.insert(k + 1)
                let mentioned = (k > 0 ? isColumns(k - 1) : nil) ?? (k > 1 ? isColumns(k - 2) : nil)
                let column = mentioned.flatMap { pickText($0, near: related) } ?? schema.tables[root0].labels.first
                guard let column else { throw NotUnderstood(message: "name the column whose text should match '\(text)'") }
                if let m = [k - 1, k - 2].first(where: { $0 >= 0 && isColumns($0) != nil }) { used.insert(m) }
                let pattern: String
                switch kind {
                case .contains: pattern = "%" + text + "%"
                case .starts: pattern = text + "%"
                case .ends: pattern = "%" + text
                }
                plan.conditions.append(.like(column, pattern))
            case .text(let text):
                used.insert(k)
                // A quoted name: a value if one holds it, else the label of the subject.
                let words = ValueIndex.words(text)
                let found = values.whole(words)
                if !found.isEmpty {
                    let entry = preferred(found, near: related, table: k > 0 ? isTable(k - 1) : nil)
                    plan.conditions.append(.oneOf(entry.column, [entry.value]))
                } else {
                    throw NotUnderstood(message: "no value '\(text)' was found in the datasource; check the spelling")
                }
            case .negation:
                used.insert(k)
                if let c = isColumns(k + 1).flatMap({ cs in cs.first { schema.column($0).kind == .boolean } }) {
                    // "airlines that are not low cost".
                    used.insert(k + 1)
                    plan.conditions.append(.flag(c, false))
                } else if let t = isTable(k + 1) {
                    used.insert(k + 1)
                    // Directly, or through a table that links both ("products never ordered": no order line names them).
                    let bridges = schema.edges.filter { e in e.to == root0 && schema.edges.contains { $0.from == e.from && $0.to == t } }.map(\.from)
                    let direct = schema.edges.contains { $0.from == t && $0.to == root0 }
                    guard direct || Set(bridges).count == 1, let linked = direct ? t : bridges.first,
                        schema.edges.filter({ $0.from == linked && $0.to == root0 }).count == 1
                    else {
                        // Also two keys between them ("airports with no flights": leaving or arriving?).
                        throw NotUnderstood(message: "the built-in engine cannot tell how \(schema.tables[t].name) relates to \(schema.tables[root0].name)")
                    }
                    plan.conditions.append(.none(table: linked))
                    plan.through.removeAll { $0 == t }
                } else {
                    throw NotUnderstood(message: "the built-in engine does not handle this negation; rephrase without 'not' or 'no'")
                }
            case .or:
                used.insert(k)
            case .range(let low, let high):
                let around = [k - 1, k + 1].first { j in j >= 0 && !used.contains(j) && isColumns(j).flatMap { pickNumeric($0, near: related) } != nil }
                guard let j = around, let c = isColumns(j).flatMap({ pickNumeric($0, near: related) }) else {
                    throw NotUnderstood(
                        message:
                            "the built-in engine could not tell which column lies between \(numberText(low)) and \(numberText(high)); name it"
                    )
                }
                used.formUnion([k, j])
                plan.conditions += [.compare(.column(c), .greaterOrEqual, .number(low)), .compare(.column(c), .lessOrEqual, .number(high))]
            case .number(let n, nil):
                // "the wards on floor 2", "courses with 4 credits": a column equal to the number.
                let around = [k - 1, k + 1].first { j in j >= 0 && !used.contains(j) && isColumns(j).flatMap { pickNumeric($0, near: related) } != nil }
                guard let j = around, let c = isColumns(j).flatMap({ pickNumeric($0, near: related) }) else { continue }
                used.formUnion([k, j])
                plan.conditions.append(.compare(.column(c), .equal, .number(n)))
            default: continue
            }
        }

        // Two values of one column, both asked for ("took both Databases and Algorithms"): no single
        // row holds both, so each must hold for a related row; otherwise the question is refused.
        var byColumn: [Int: [Int]] = [:]
        for (i, c) in plan.conditions.enumerated() { if case .oneOf(let col, let v) = c, v.count == 1 { byColumn[col, default: []].append(i) } }
        for (column, indices) in byColumn where indices.count > 1 {
            let table = schema.column(column).table
            let root = plan.root
            let bridge =
                schema.edges.first { edge in edge.to == root && schema.edges.contains { $0.from == edge.from && $0.to == table } }?.from
                ?? (schema.edges.contains { $0.from == table && $0.to == root } ? table : nil)
            guard let bridge, table != plan.root, schema.edges.filter({ $0.from == bridge && $0.to == root }).count == 1 else {
                throw NotUnderstood(message: "the question asks for two values of \(schema.column(column).name) at once; ask for one, or use 'or'")
            }
            let wanted = indices.map { plan.conditions[$0] }
            plan.conditions = plan.conditions.enumerated().filter { !indices.contains($0.offset) }.map(\.element)
            plan.conditions += wanted.map { .some(table: bridge, $0) }
            plan.through.removeAll { $0 == table || $0 == bridge }
        }

        // 6. Columns named but not yet given a role.
        var shown: [Int] = []
        for (k, item) in items.enumerated() where !used.contains(k) {
            guard case .columns(let cs) = item else { continue }
            let named = Set(items.compactMap { if case .table(let t) = $0 { return t } else { return nil } } + [root0])
            if let t = isTable(k + 1), !cs.contains(where: { named.contains(schema.column($0).table) }),
                cs.allSatisfy({ ["name", "title"].contains(schema.column($0).words.last ?? "") && schema.column($0).words.count == 1 })
            {
                // "the names of passengers", who have a first and a last name: their labels.
                used.insert(k)
                shown += schema.tables[t].labels
                continue
            }
            guard let c = pickColumn(cs, near: related) else { continue }
            used.insert(k)
            // A key named where two keys join the same tables says which ("flights by destination airport").
            for key in cs where schema.column(key).references != nil {
                let edge = schema.edges.first { $0.fromColumn == key }
                if let edge, schema.edges.contains(where: { $0.from == edge.from && $0.to == edge.to && $0.fromColumn != key }) { plan.via.insert(key) }
            }
            if let target = schema.column(c).references, target == schema.column(c).table {
                // "the managers": rows that other rows of the same table point at; not modelled, so not guessed.
                throw NotUnderstood(message: "the built-in engine does not follow \(schema.column(c).name), a key to its own table; configure an LLM")
            }
            if schema.column(c).isKey || schema.column(c).kind == .date && isConditionColumn(c, plan) { continue }
            if schema.column(c).kind == .boolean {
                // "low cost airlines": a yes/no column named as an adjective is a filter.
                plan.conditions.append(.flag(c, true))
                continue
            }
            let article = k > 0 && [QuestionReader.Item.which].contains(items[k - 1])
            if measure == nil && counted != nil || (measure == .countRows), grouping == nil, let counted, schema.column(c).table != counted,
                schema.tables[schema.column(c).table].labels.contains(c)
            {
                // "the names of airlines and the number of flights they have": one count per airline.
                grouping = .entity(schema.column(c).table)
            } else if measure == nil && counted != nil || (measure == .countRows) {
                // "customers that work for a company": the column has a value.
                plan.conditions.append(.notNull(c))
            } else if !article {
                shown.append(c)
            }
        }
        // Tables named but not yet given a role are passed through ("tracks of each invoice").
        for (k, item) in items.enumerated() where !used.contains(k) {
            if case .table(let t) = item, t != root0 { plan.through.append(t) }
        }

        // 7. Put it together.
        if let counted, measure == nil, counted == root0, !plan.having.isEmpty {
            // "how many playlists contain more than 100 tracks": the groups that pass, counted.
            plan.countGroups = true
            plan.grouping = .entity(counted)
            return Understood(plan: plan, confidence: confidence, title: "")
        }
        if let counted, measure == nil || measure == .countRows {
            measure = .countRows
            plan.counted = counted
            if grouping == nil, subject != nil, subject != counted, subjectColumn == nil, superlative != nil { grouping = .entity(subject!) }
            if grouping == nil, let subjectColumn, subject == counted || subject == schema.column(subjectColumn).table { grouping = .column(subjectColumn) }
        }
        if let subjectColumn, grouping == nil, measure != nil, case .aggregate = measure! { grouping = .column(subjectColumn) }
        if case .bucket(-1, let b)? = grouping {
            guard let date = dateColumn(for: measureTable(measure) ?? counted ?? root0, plan: plan, hint: dateHint(items)) else {
                throw NotUnderstood(message: "the question asks per \(b == .year ? "year" : "month"), but its tables have no date column")
            }
            let hasYear = plan.conditions.contains { isDateCondition($0, date) }
            if schema.column(date).isYear {
                guard b == .year else { throw NotUnderstood(message: "the tables the question is about keep years, not dates; ask per year") }
                grouping = .column(date)
            } else {
                grouping = .bucket(date, b == .year ? .year : (hasYear ? .month : .yearMonth))
            }
        }
        if case .entity(let t)? = grouping, case .aggregate(let f, .column(let c))? = measure, f != .count, schema.column(c).table == t,
            !averageOfCount
        {
            // "the average quantity per order item": one row per group, so the average over all.
            grouping = nil
        }
        plan.grouping = grouping
        if case .entity(let t)? = grouping, t != plan.root { plan.root = t }

        switch measure {
        case .column(let c)?:
            // Rows ranked by a column of their own: "the 5 longest tracks".
            let asked = shown.filter { schema.column($0).table == schema.column(c).table && $0 != c }
            plan.shown = (asked.isEmpty ? schema.tables[schema.column(c).table].labels : asked) + [c]
            plan.order = [(.column(c), descending: superlative.map { ranksDescending($0.word, $0.descending, column: c) } ?? true)]
            plan.limit = limit ?? 1
            plan.root = schema.column(c).table
            if case .entity? = plan.grouping { plan.grouping = nil }
        case let m?:
            if averageOfCount {
                guard grouping != nil else { throw NotUnderstood(message: "say what the average is per, e.g. \"per invoice\"") }
                plan.measures = [m]
                plan.averageOverGroups = true
                // The groups need no labels; group by the key alone.
            } else {
                plan.measures = [m]
                if case .aggregate(_, let measured) = m { plan.measures += moreFunctions.map { .aggregate($0, measured) } }
                if let superlative {
                    if plan.grouping == nil, let subjectColumn { plan.grouping = .column(subjectColumn) }
                    if plan.grouping == nil, let subject, subject != measureTable(m) { plan.grouping = .entity(subject); plan.root = subject }
                    if plan.grouping != nil || rankedBy != nil {
                        plan.order = [(m, descending: superlative.descending)]
                        plan.limit = limit ?? 1
                    }
                } else if rankedBy != nil {
                    if plan.grouping == nil, let subject { plan.grouping = .entity(subject); plan.root = subject }
                    plan.order = [(m, descending: true)]
                    plan.limit = limit
                }
            }
            // Beside a grouped measure only columns of the grouped row itself can be shown.
            plan.shown = shown.filter { c in
                guard case .entity(let t)? = plan.grouping, schema.column(c).table == t else { return false }
                return !covers(.entity(t), c) && !isConditionColumn(c, plan) && !isMeasured(c, m)
            }
            if plan.grouping == nil { plan.shown = [] }
            // A column the question asked to see that this answer cannot show is not dropped silently.
            if let dropped = shown.first(where: { c in
                !plan.shown.contains(c) && !(plan.grouping.map { covers($0, c) } ?? false) && !isConditionColumn(c, plan) && !isMeasured(c, m)
            }) {
                throw NotUnderstood(
                    message:
                        "the built-in engine could not tell how \(schema.column(dropped).name) fits beside the \(plan.grouping == nil ? "total" : "groups"); rephrase it"
                )
            }
        case nil:
            // A list: the columns asked for, else the labels of what is listed.
            if let subjectColumn, shown.isEmpty {
                shown = [subjectColumn]
                plan.distinct = true
            }
            plan.shown = shown.isEmpty ? schema.tables[root0].labels : shown
            plan.root = shown.first.map { schema.column($0).table } ?? root0
            if case .entity? = plan.grouping, plan.having.isEmpty { plan.grouping = nil }
            if !plan.having.isEmpty, plan.grouping == nil { plan.grouping = .entity(root0) }
            if case .entity(let t)? = plan.grouping, !plan.having.isEmpty {
                if let c = shown.first, schema.column(c).table == t, !schema.column(c).isKey, shown.count == 1 {
                    // "the specialties that have more than 3 doctors": groups of the column's values.
                    plan.grouping = .column(c)
                }
                plan.shown = []
                plan.root = t
            }
            if items.contains(.distinct) {
                plan.distinct = true
                if let k = items.firstIndex(of: .distinct) { used.insert(k) }
            }
            if let limit { plan.limit = limit }
        }
        if plan.averageOverGroups, case .entity(let t)? = plan.grouping {
            // Averages over groups need no labels.
            plan.root = t
        }
        // 8. An order the question asked for: "ordered by salary", "in descending order", "alphabetically".
        let direction = items.indices.first { k in if case .direction = items[k] { return !used.contains(k) } else { return false } }
        var descending = false
        var ofAge = false
        if let d = direction, case .direction(let desc, let age) = items[d] {
            descending = desc
            ofAge = age
        }
        for (columns, at) in orderColumns {
            guard let c = pickColumn(columns, near: [plan.root] + related) else { continue }
            if plan.grouping != nil, !(plan.grouping.map { covers($0, c) } ?? false) {
                throw NotUnderstood(message: "the built-in engine can order grouped answers only by what they are grouped by; rephrase")
            }
            let down = ofAge && schema.column(c).kind == .date ? !descending : descending
            plan.order.append((.column(c), descending: down))
            // "the products sorted by price": the price is shown beside them; asked-for columns stay as asked.
            if plan.distinct || shown.isEmpty && plan.measures.isEmpty, !plan.shown.contains(c) { plan.shown.append(c) }
            used.insert(at)
            if let d = direction { used.insert(d) }
        }
        if let k = items.firstIndex(of: .alphabetical), !used.contains(k), plan.order.isEmpty, plan.measures.isEmpty {
            guard let c = (plan.shown.first { schema.column($0).kind == .text }) ?? schema.tables[plan.root].labels.first else {
                throw NotUnderstood(message: "the built-in engine could not tell what to put in alphabetical order; name the column")
            }
            plan.order = [(.column(c), descending: false)]
            used.insert(k)
        }
        if let d = direction, !used.contains(d), plan.order.count == 1 {
            // "the 5 most expensive tracks, in descending order": the ranking's own way, said again.
            if plan.order[0].descending == descending { used.insert(d) }
        }
        let rankedAsFunction =
            aggregateFunction == nil
            && plan.measures.contains {
                if case .aggregate(.max, _) = $0 { return true } else if case .aggregate(.min, _) = $0 { return true } else { return false }
            }
        if let superlative, plan.order.isEmpty, !rankedAsFunction {
            throw NotUnderstood(message: "the built-in engine could not tell what '\(superlative.word)' ranks by; name the column")
        }
        if let k = items.indices.first(where: { !used.contains($0) && mustBePlaced(items[$0]) }) {
            throw NotUnderstood(message: "the built-in engine could not tell how \(describe(items[k])) applies to the question; rephrase it or name the column")
        }

        // Rank ties and vague words cost certainty.
        if items.contains(.or), !plan.conditions.contains(where: { if case .oneOf(_, let v) = $0 { return v.count > 1 } else { return false } }) {
            confidence -= 0.3
        }
        guard confidence >= Self.threshold else {
            throw NotUnderstood(message: "the built-in engine is not sure enough what the question means; rephrase it, name the table, or configure an LLM")
        }
        return Understood(plan: plan, confidence: confidence, title: "")
    }

    /// Parts of a question that change its answer: when one was given no role, the answer would
    /// silently ignore it, so the engine refuses instead.
    func mustBePlaced(_ item: Item) -> Bool {
        switch item {
        case .count, .function, .average, .top, .number, .distinct, .orderBy, .direction, .alphabetical, .compare, .year, .month, .value, .text,
            .negation, .range:
            return true
        default:
            return false
        }
    }

    func describe(_ item: Item) -> String {
        switch item {
        case .count: return "a count"
        case .function(let f): return "'\(["SUM": "total", "MIN": "minimum", "MAX": "maximum", "AVG": "average"][f.rawValue] ?? "a count")'"
        case .average: return "'average'"
        case .top(let n): return "the top \(n)"
        case .number(let n, _): return "the number \(numberText(n))"
        case .distinct: return "'distinct'"
        case .orderBy, .direction, .alphabetical: return "the order asked for"
        case .compare(_, let word): return "'\(word)'"
        case .year(let y): return "the year \(y)"
        case .month: return "the month"
        case .value(_, let phrase, _): return "'\(phrase)'"
        case .text(let t): return "'\(t)'"
        case .negation: return "the negation"
        default: return "a word"
        }
    }

    func numberText(_ n: Double) -> String { n == n.rounded() && abs(n) < 1e15 ? String(Int64(n)) : String(n) }

    var noMoney: String {
        "the built-in engine found no amount to add up (a column such as total, amount or price × quantity); name the column"
    }

    func entityTable(_ g: QueryPlan.Grouping) -> Int? {
        if case .entity(let t) = g { return t }
        return nil
    }

    func firstTable(_ items: [Item], _ used: Set<Int>) -> Int? {
        for (k, item) in items.enumerated() where !used.contains(k) { if case .table(let t) = item { return t } }
        return nil
    }

    func tablesBefore(_ k: Int, _ items: [Item]) -> [Int] {
        items[..<k].reversed().compactMap { if case .table(let t) = $0 { return t } else { return nil } }
    }

    func measureTable(_ m: QueryPlan.Expression?) -> Int? {
        switch m {
        case .aggregate(_, .column(let c))?, .column(let c)?: return schema.column(c).table
        case .aggregate(_, .product(let c, _))?: return schema.column(c).table
        default: return nil
        }
    }

    func isMeasured(_ c: Int, _ m: QueryPlan.Expression) -> Bool {
        switch m {
        case .aggregate(_, .column(let x)), .column(let x): return x == c
        case .aggregate(_, .product(let a, let b)): return a == c || b == c
        default: return false
        }
    }

    func covers(_ g: QueryPlan.Grouping, _ c: Int) -> Bool {
        switch g {
        case .entity(let t): return schema.tables[t].labels.contains(c)
        case .column(let x), .bucket(let x, _): return x == c
        }
    }

    func isConditionColumn(_ c: Int, _ plan: QueryPlan) -> Bool {
        plan.conditions.contains {
            switch $0 {
            case .oneOf(let x, _), .like(let x, _), .notNull(let x), .comparedToAverage(let x, _), .flag(let x, _): return x == c
            case .compare(.column(let x), _, _): return x == c
            default: return false
            }
        }
    }

    func merge(_ a: QueryPlan.Condition, _ b: QueryPlan.Condition) -> QueryPlan.Condition {
        if case .oneOf(let c1, let v1) = a, case .oneOf(let c2, let v2) = b, c1 == c2 { return .oneOf(c1, v1 + v2) }
        return .any([a, b])
    }

    /// A verb of the question that names a date column ("hired", "admitted"), if any.
    func dateHint(_ items: [Item]) -> [Int] {
        items.flatMap { item -> [Int] in
            if case .columns(let cs) = item { return cs.filter { schema.column($0).kind == .date } }
            if case .dateVerb(let cs) = item { return cs }
            return []
        }
    }
}

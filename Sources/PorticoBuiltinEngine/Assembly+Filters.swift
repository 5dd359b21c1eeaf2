import PorticoAskEngine

extension Interpreter.Assembly {
    /// The root table.
    mutating func chooseRoot() throws(NotUnderstood) {
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
                // The table most of the named columns are in ("role codes, role names and role
                // descriptions": the roles, though employees have a role code too).
                let named = items.compactMap { if case .columns(let cs) = $0 { return Set(cs.map { schema.column($0).table }) } else { return nil } }
                // Else, of a key named in the table it identifies and in tables pointing at it ("all role
                // codes"), the table it identifies, whose rows are the codes there are; else the first.
                let model = schema
                let identified = cs.map { model.column($0).table }.first { t in
                    cs.contains { model.tables[t].primaryKey == $0 } && cs.contains { model.column($0).references == t }
                }
                let first = identified ?? schema.column(cs[0]).table
                let candidates = cs.map { schema.column($0).table }
                subject =
                    candidates.max { a, b in
                        let (na, nb) = (named.filter { $0.contains(a) }.count, named.filter { $0.contains(b) }.count)
                        return na != nb ? na < nb : (b == first && a != first)
                    } ?? first
            }
        }
        guard let root = grouping.flatMap(entityTable) ?? subject ?? counted ?? measureTable(measure) else {
            throw NotUnderstood(message: "the built-in engine could not tell which table the question is about; name it (datasource_describe lists them)")
        }
        root0 = root
        plan = QueryPlan(root: root0)
        plan.through = groupThrough + [counted, subject].compactMap { $0 }
    }

    /// Filters: values, dates, comparisons, text matches, negations, each item by a reader of its kind.
    mutating func readFilters() throws(NotUnderstood) {
        related = [root0, subject, counted, measureTable(measure)].compactMap { $0 }
        try compareWithAverages()
        // A comparison after 'or' ("over 1500 or less than 500", "after 1961 or before 1959"): either of
        // it and the one before, when the comparison (or the year right after it) is what it adds.
        var orFrom: (conditions: Int, at: Int)?
        for k in items.indices where !used.contains(k) {
            let before = plan.conditions.count
            defer {
                if case .compare = items[k], k > 0, items[k - 1] == .or, before > 0 { orFrom = (before, k) }
                if let from = orFrom, k == from.at || k == from.at + 1 && { if case .year = items[k] { true } else { false } }() {
                    if plan.conditions.count == from.conditions + 1 {
                        orFrom = nil
                        let (a, b) = (plan.conditions[from.conditions - 1], plan.conditions[from.conditions])
                        if case .compare(.column(let x), _, _) = a, case .compare(.column(let y), _, _) = b, x == y {
                            plan.conditions[from.conditions - 1] = merge(a, b)
                            plan.conditions.removeLast()
                        }
                    }
                } else {
                    orFrom = nil
                }
            }
            switch items[k] {
            case .value(let entries, _, let partial): try readValue(at: k, entries, partial: partial)
            case .year(let year): try readYear(at: k, year)
            case .month(let month, let year): try readMonth(at: k, month, year: year)
            case .compare(let op, let word): try readComparison(at: k, op, word: word)
            case .textMatch(let kind): try readTextMatch(at: k, kind)
            case .text(let text): try readQuoted(at: k, text)
            case .negation: try readNegation(at: k)
            case .or: used.insert(k)
            case .range(let low, let high): try readRange(at: k, low, high)
            case .number(let n, nil): try readNumber(at: k, n)
            default: continue
            }
        }
        try spreadValuesOfOneColumn()
        readValuesOnTheirReferences()
    }

    /// "instructors in the Physics department", "orders paid by MasterCard": a value of another
    /// table's key that the rows asked about point at by one column is read on that column, with no
    /// join for it.
    mutating func readValuesOnTheirReferences() {
        for (i, condition) in plan.conditions.enumerated() {
            guard case .oneOf(let c, let values) = condition, schema.column(c).isPrimary, schema.column(c).table != root0 else { continue }
            let t = schema.column(c).table
            let edges = schema.edges.filter { $0.from == root0 && $0.to == t }
            guard edges.count == 1, edges[0].toColumn.map({ $0 == c }) ?? (schema.tables[t].primaryKey == c) else { continue }
            // Not when the question names another column of that table ("the description of the type with code PUR").
            let namesItsColumns = items.contains { item in
                guard case .columns(let cs) = item else { return false }
                return cs.contains { schema.column($0).table == t && !schema.column($0).isKey }
            }
            if namesItsColumns { continue }
            plan.conditions[i] = .oneOf(edges[0].fromColumn, values)
            // "the Physics department": the table named for the value is read with it.
            plan.through.removeAll { $0 == t }
            for k in items.indices where items[k] == .table(t) { used.insert(k) }
        }
    }

    /// Two values of a column of the rows asked about, both asked for ("the colleges that have both
    /// midfielders and defenders"): no row holds both, so the one column asked for is read as the
    /// values that rows of each share; otherwise the question is refused.
    mutating func shareValues(counted: Bool) throws(NotUnderstood) {
        guard let (column, second) = sharedValues else { return }
        guard !counted, plan.measures.isEmpty, plan.grouping == nil, plan.shown.count == 1, case let shared = plan.shown[0], shared != column,
            schema.column(shared).table == schema.column(column).table, !schema.column(shared).isPrimary, schema.column(shared).expression == nil
        else {
            throw NotUnderstood(message: "the question asks for two values of \(schema.column(column).name) at once; ask for one, or use 'or'")
        }
        plan.conditions.append(.shares(shared, second))
        plan.distinct = true
    }

    /// "longer than the average": a column compared with its own average.
    mutating func compareWithAverages() throws(NotUnderstood) {
        for bound in againstAverage {
            guard let c = bound.columns.flatMap({ interpreter.pickNumeric($0, near: related) }) ?? interpreter.adjectiveColumn(bound.word, in: root0) else {
                throw NotUnderstood(message: "the built-in engine could not tell which column's average '\(bound.word)' compares with; name the column")
            }
            plan.conditions.append(.comparedToAverage(c, bound.op))
            // "less than the average salary of instructors in the Physics department": a condition right
            // after the average may be the average's own; without a new clause ("and who …") it is not read.
            for item in items[(bound.at + 1)...] {
                if item == .which || item == .who { break }
                switch item {
                case .value, .text, .year, .month, .compare, .range, .textMatch:
                    throw NotUnderstood(
                        message:
                            "the built-in engine cannot tell whether the condition after 'average' is on the average or on the rows compared with it; ask in two questions"
                    )
                default: continue
                }
            }
        }
    }

    /// Two values of one column, both asked for ("took both Databases and Algorithms"): no single
    /// row holds both, so each must hold for a related row; otherwise the question is refused.
    mutating func spreadValuesOfOneColumn() throws(NotUnderstood) {
        // One value named twice ("female students whose sex is F") is one condition.
        var seen: [(Int, String)] = []
        plan.conditions.removeAll { condition in
            guard case .oneOf(let column, let values) = condition, values.count == 1 else { return false }
            if seen.contains(where: { $0.0 == column && $0.1 == values[0] }) { return true }
            seen.append((column, values[0]))
            return false
        }
        var byColumn: [Int: [Int]] = [:]
        for (i, c) in plan.conditions.enumerated() { if case .oneOf(let col, let v) = c, v.count == 1 { byColumn[col, default: []].append(i) } }
        // In the order the question named them, and all moved at once: the indices are of the conditions as they are now.
        var moved = Set<Int>()
        var throughRelated: [QueryPlan.Condition] = []
        for (column, indices) in byColumn.filter({ $0.value.count > 1 }).sorted(by: { $0.value[0] < $1.value[0] }) {
            let table = schema.column(column).table
            let root = plan.root
            let bridge =
                schema.edges.first { edge in edge.to == root && schema.edges.contains { $0.from == edge.from && $0.to == table } }?.from
                ?? (schema.edges.contains { $0.from == table && $0.to == root } ? table : nil)
            guard let bridge, table != plan.root, schema.edges.filter({ $0.from == bridge && $0.to == root }).count == 1 else {
                // "the colleges that have both midfielders and defenders": read once the columns asked
                // for are known (`shareValues`).
                if table == root, indices.count == 2, sharedValues == nil {
                    sharedValues = (column, plan.conditions[indices[1]])
                    moved.insert(indices[1])
                    continue
                }
                throw NotUnderstood(message: "the question asks for two values of \(schema.column(column).name) at once; ask for one, or use 'or'")
            }
            throughRelated += indices.map { .some(table: bridge, plan.conditions[$0]) }
            moved.formUnion(indices)
            plan.through.removeAll { $0 == table || $0 == bridge }
        }
        if !moved.isEmpty { plan.conditions = plan.conditions.enumerated().filter { !moved.contains($0.offset) }.map(\.element) + throughRelated }
    }

    /// A value found in the data ("customers in Brazil"): the column it is in, chosen by what the question names near it.
    mutating func readValue(at k: Int, _ entries: [ValueIndex.Entry], partial: Bool) throws(NotUnderstood) {
        used.insert(k)
        // "the albums by Iron Maiden": a value after "by" is who made the rows named before it, not
        // one of their own names, when it is found elsewhere too.
        var entries = entries
        if k > 1, case .groupMarker(each: false) = items[k - 1], let rows = isTable(k - 2), isColumns(k + 1) == nil,
            case let elsewhere = entries.filter({ schema.column($0.column).table != rows }), !elsewhere.isEmpty
        {
            entries = elsewhere
        }
        var mentionedAt = k - 1
        if mentionedAt > 0, items[mentionedAt].isGroupMarker { mentionedAt -= 1 }  // "composed by Jimi Hendrix"
        var mentioned = mentionedAt >= 0 && !used.contains(mentionedAt) ? isColumns(mentionedAt) : nil
        // "a First class seat": the column named just after the value.
        if mentioned.map({ cs in !entries.contains { cs.contains($0.column) } }) ?? true, !used.contains(k + 1),
            let after = isColumns(k + 1), entries.contains(where: { after.contains($0.column) })
        {
            mentioned = after
            mentionedAt = k + 1
        }
        var entry = interpreter.preferred(entries, near: related, mentioned: mentioned, table: k > 0 ? isTable(k - 1) : nil)
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
        let condition: QueryPlan.Condition =
            partial || interpreter.isListColumn(entry.column, phrase: entry.value)
            ? .like(entry.column, "%" + entry.value + "%") : .oneOf(entry.column, [entry.value])
        if k > 0, items[k - 1] == .or || k > 1 && items[k - 2] == .or && used.contains(k - 1) || saidAgainAfterOr(k),
            let last = plan.conditions.popLast()
        {
            plan.conditions.append(merge(last, condition))
        } else {
            plan.conditions.append(condition)
        }
    }

    /// The table a year or month is of: what is measured or counted, else the table of the column
    /// asked for when it keeps a date or year ("the campus fee in 1996": the fees' year), else the
    /// table the question is about.
    var timedTable: Int {
        if let t = measureTable(measure) ?? counted { return t }
        let asked = items.lazy.compactMap { item -> Int? in
            guard case .columns(let cs) = item, let c = cs.first, !schema.column(c).isKey, schema.column(c).kind != .date else { return nil }
            return schema.column(c).table
        }.first
        if let asked, asked != root0,
            schema.tables[asked].columns.contains(where: { schema.column($0).kind == .date || schema.column($0).isYear })
        {
            return asked
        }
        return root0
    }

    /// A year, alone or compared ("after 2010"), on the date column of what is measured.
    mutating func readYear(at k: Int, _ year: Int) throws(NotUnderstood) {
        used.insert(k)
        guard let date = interpreter.dateColumn(for: timedTable, plan: plan, hint: dateHint(items)) else {
            throw NotUnderstood(message: "the question names the year \(year), but the tables it is about have no date column")
        }
        if k > 0, case .compare(let op, _) = items[k - 1], schema.column(date).isYear {
            used.insert(k - 1)
            plan.conditions.append(.compare(.column(date), op, .number(Double(year))))
        } else if k > 0, case .compare(let op, _) = items[k - 1] {
            used.insert(k - 1)
            // A year's bounds on a date: after 2000 is from 2001-01-01, through 2017 is before 2018-01-01.
            switch op {
            case .greater: plan.conditions.append(.compare(.column(date), .greaterOrEqual, .text("\(year + 1)-01-01")))
            case .greaterOrEqual: plan.conditions.append(.compare(.column(date), .greaterOrEqual, .text("\(year)-01-01")))
            case .less: plan.conditions.append(.compare(.column(date), .less, .text("\(year)-01-01")))
            case .lessOrEqual: plan.conditions.append(.compare(.column(date), .less, .text("\(year + 1)-01-01")))
            case .equal: plan.conditions += interpreter.yearRange(date, year)
            case .notEqual: throw NotUnderstood(message: "the built-in engine does not read 'not in \(year)'; ask for the years before and after it")
            }
        } else {
            plan.conditions += interpreter.yearRange(date, year)
        }
    }

    /// A month of a year.
    mutating func readMonth(at k: Int, _ month: Int, year: Int?) throws(NotUnderstood) {
        used.insert(k)
        guard let date = interpreter.dateColumn(for: timedTable, plan: plan, hint: dateHint(items)), let year else {
            throw NotUnderstood(message: "name the year of the month too, e.g. \"in December 2024\"")
        }
        if schema.column(date).isYear {
            throw NotUnderstood(message: "the tables the question is about keep years, not dates; ask by year")
        }
        plan.conditions += interpreter.monthRange(date, year, month)
    }

    /// "more than 25 tracks", "a price above 1", "longer than 20 minutes": what is compared with the number after it.
    mutating func readComparison(at k: Int, _ op: QueryPlan.Comparison, word: String) throws(NotUnderstood) {
        used.insert(k)
        if let cs = isColumns(k + 1), k + 2 < items.count, let c = interpreter.pickNumeric(cs, near: related) {
            // "under age 30", "after season 2007": the column between the comparison and its number.
            let bound: Double?
            switch items[k + 2] {
            case .number(let n, nil): bound = n
            case .year(let y): bound = Double(y)
            default: bound = nil
            }
            if let bound {
                used.formUnion([k + 1, k + 2])
                plan.conditions.append(.compare(.column(c), op, .number(bound)))
                return
            }
        }
        if k + 1 < items.count, case .day(let day) = items[k + 1] {
            // "reported before 1978-06-26": the date column of what is asked about.
            // "shipped after 2000-01-01", where Shipped is also a status: which date is meant is unclear.
            let afterValue = k > 0 && { if case .value = items[k - 1] { true } else { false } }()
            guard !afterValue, let date = interpreter.dateColumn(for: timedTable, plan: plan, hint: dateHint(items)), schema.column(date).kind == .date
            else {
                throw NotUnderstood(message: "the built-in engine could not tell which date '\(word) \(day)' compares; name the date column")
            }
            used.insert(k + 1)
            plan.conditions.append(.compare(.column(date), op, .text(day)))
            return
        }
        guard k + 1 < items.count, case .number(let n, let unit) = items[k + 1] else {
            if k + 1 < items.count, case .year = items[k + 1] { return }
            throw NotUnderstood(message: "'\(word)' needs a number after it")
        }
        used.insert(k + 1)
        if ["before", "after", "since", "earlier", "later"].contains(word) {
            // "founded before 1890": a time, never a count; on the year column of what is asked about.
            let year = Int(exactly: n)
            guard let year, (1000...2999).contains(year),
                let date = interpreter.dateColumn(for: timedTable, plan: plan, hint: dateHint(items)),
                schema.column(date).mayBeYear
            else {
                throw NotUnderstood(
                    message: "the built-in engine could not tell what '\(word) \(year.map(String.init) ?? "the number")' compares; name the date column")
            }
            plan.conditions.append(.compare(.column(date), op, .number(Double(year))))
            return
        }
        // What is compared: the table counted after the number ("more than 25 tracks"), a column named
        // next to it, or the column an adjective names ("longer than 20 minutes").
        if let t = isTable(k + 2), k > 0, let cs = isColumns(k - 1), case .aggregate(_, .column(let c))? = measure, cs.contains(c) {
            // "a total amount of more than 5000 in loans": the total compared, of the loans.
            used.insert(k + 2)
            plan.having.append(.compare(measure!, op, .number(n)))
            if grouping == nil { grouping = .entity(root0) }
            if !plan.through.contains(t), t != root0 { plan.through.append(t) }
        } else if k > 1, let cs = isColumns(k - 1), case .aggregate(.avg, .column(let c))? = measure, cs.contains(c),
            items[k - 2] == .average || items[k - 2] == .function(.avg), isTable(k + 2) == nil, counted == nil, root0 != schema.column(c).table
        {
            // "jobs with an average salary above 8000": the average of each job's rows compared.
            plan.having.append(.compare(measure!, op, .number(n)))
            if grouping == nil { grouping = .entity(root0) }
        } else if let t = isTable(k + 2) {
            used.insert(k + 2)
            plan.having.append(.compare(.countRows, op, .number(n)))
            plan.counted = plan.counted ?? t
            if grouping == nil { grouping = .entity(root0) }
            plan.through.append(t)
        } else if k > 0, items[k - 1] == .money, isTable(k + 2) == nil, let m = measure, case .aggregate(.sum, _) = m, let owner = measureTable(m),
            owner != root0
        {
            // "customers who have spent more than 45": the money of each one's rows (their invoices)
            // added up and compared, not any one row's.
            plan.having.append(.compare(m, op, .number(n)))
            if grouping == nil { grouping = .entity(root0) }
        } else if let cs = isColumns(k + 2) ?? (k > 0 ? isColumns(k - 1) : nil), let c = interpreter.pickCompared(cs, near: related) {
            if let j = [k + 2, k - 1].first(where: { isColumns($0) != nil }) { used.insert(j) }
            plan.conditions.append(.compare(.column(c), op, .number(n)))
        } else if !(k > 0 && isColumns(k - 1) != nil && !used.contains(k - 1)),
            let c = (tablesBefore(k, items) + [root0]).lazy.compactMap({ [interpreter] t in
                interpreter.adjectiveColumn(word, in: t) ?? unit.flatMap { interpreter.adjectiveColumn($0, in: t) }
            }).first
        {
            // Not after a column that holds no numbers ("a share count smaller than 50" of a text
            // share_count): the adjective would compare another column than the one named.
            plan.conditions.append(.compare(.column(c), op, .number(interpreter.convert(n, unit: unit, to: c))))
        } else if k > 0, items[k - 1] == .or,
            ["greater", "less", "more", "fewer", "over", "under", "above", "below"].contains(word) || pairedComparative(word, before: k - 1),
            case .compare(.column(let c), _, .number)? = plan.conditions.last
        {
            // "a height greater than 200 or less than 190", "a price higher than 1000 or lower than 500":
            // the column compared before the 'or' (not "longer than 3300 or higher than 100", where the
            // word may name another).
            plan.conditions.append(.compare(.column(c), op, .number(n)))
        } else if k > 0, items[k - 1] == .who || isTable(k - 1) != nil, isTable(k + 2) == nil, ["under", "over", "above", "below"].contains(word),
            unit == nil, n <= 120, let t = tablesBefore(k, items).first, let age = interpreter.ageColumn(in: t)
        {
            // "the students who are under 20", "students over 18": of people, a bare number (of years) is their age.
            plan.conditions.append(.compare(.column(age), op, .number(n)))
        } else {
            throw NotUnderstood(
                message:
                    "the built-in engine could not tell what '\(word) \(numberText(n))' compares; name the column"
            )
        }
    }

    /// "higher … or lower", "larger … or smaller": the comparison before `k` was said with the
    /// other word of the same pair as `word`.
    func pairedComparative(_ word: String, before k: Int) -> Bool {
        let pairs: [Set<String>] = [["higher", "lower"], ["larger", "smaller", "bigger"]]
        guard let pair = pairs.first(where: { $0.contains(word) }),
            let previous = items[..<k].reversed().lazy.compactMap({ item -> String? in if case .compare(_, let w) = item { w } else { nil } }).first
        else { return false }
        return pair.contains(previous)
    }

    /// "containing 'love'": a text column matched by the quoted text after it.
    mutating func readTextMatch(at k: Int, _ kind: QuestionReader.TextMatch) throws(NotUnderstood) {
        used.insert(k)
        guard k + 1 < items.count, case .text(let text) = items[k + 1] else {
            // "playlists that contain more than 100 tracks": a verb, not a text match.
            if k + 1 < items.count, case .compare = items[k + 1] { return }
            if k + 1 < items.count, case .table = items[k + 1] { return }
            throw NotUnderstood(message: "put the text to match in quotes, e.g. containing 'love'")
        }
        used.insert(k + 1)
        // The column named before ("whose name contains"), else after the text ("'Full' in their types").
        let before = [k - 1, k - 2].first { $0 >= 0 && isColumns($0) != nil }
        let at = before ?? (k + 2 < items.count && isColumns(k + 2) != nil ? k + 2 : nil)
        var mentioned = at.flatMap { isColumns($0) }
        // "locations whose names contain": the names of the table named just before.
        if let at, at > 0, let owner = isTable(at - 1), let named = mentioned {
            let own = named.filter { schema.column($0).table == owner }
            let lastWords = Set(named.compactMap { schema.column($0).words.last })
            let ending = schema.tables[owner].columns.filter { c in schema.column(c).words.last.map(lastWords.contains) ?? false }
            if !own.isEmpty { mentioned = own } else if !ending.isEmpty { mentioned = ending }
        }
        // "publishers whose name contains 'Murray'", "publishers with 'Murray' in their names": the
        // name of a column's value is the value.
        func isName(_ m: Int) -> Bool { isColumns(m).map { cs in cs.allSatisfy { schema.column($0).words.last == "name" } } ?? false }
        var namesAColumn = false
        if let at, at > 0, isName(at), let cs = isColumns(at - 1), cs.count == 1, schema.column(cs[0]).kind == .text, !schema.column(cs[0]).isKey {
            mentioned = cs
            namesAColumn = true
        }
        let column = mentioned.flatMap { interpreter.pickText($0, near: related) } ?? schema.tables[root0].labels.first
        guard let column else { throw NotUnderstood(message: "name the column whose text should match '\(text)'") }
        // "Show all official languages that contain 'English'": with no table and nothing counted, the
        // column is also what is listed.
        let listed =
            at == before && !namesAColumn
            && !items.contains { item in
                switch item {
                case .table, .count, .function: true
                default: false
                }
            }
        if let at, !listed { used.insert(at) }
        let pattern: String
        switch kind {
        case .contains: pattern = "%" + text + "%"
        case .starts: pattern = text + "%"
        case .ends: pattern = "%" + text
        }
        plan.conditions.append(.like(column, pattern))
    }

    /// A quoted name: a value if one holds it.
    mutating func readQuoted(at k: Int, _ text: String) throws(NotUnderstood) {
        used.insert(k)
        // A quoted name: a value if one holds it, else the label of the subject.
        let words = ValueIndex.words(text)
        let found = values.whole(words)
        if !found.isEmpty {
            // After an 'or', one more value of the column before it ("carrier "Sprint" or "TMobile"").
            if k > 0, items[k - 1] == .or || saidAgainAfterOr(k), let last = plan.conditions.last, case .oneOf(let column, _) = last,
                let entry = found.first(where: { $0.column == column })
            {
                plan.conditions[plan.conditions.count - 1] = merge(last, .oneOf(column, [entry.value]))
                return
            }
            // The column named just before the value, else just after it ("order status 'Shipped'",
            // "'Win' results"): which column holds it, and no column to show.
            let mentioned = [k - 1, k + 1].compactMap { m in
                m < 0 || used.contains(m) ? nil : isColumns(m).flatMap { cs in found.contains { cs.contains($0.column) } ? (m, cs) : nil }
            }.first
            let entry = interpreter.preferred(found, near: related, mentioned: mentioned?.1, table: k > 0 ? isTable(k - 1) : nil)
            if let (at, _) = mentioned { used.insert(at) }
            plan.conditions.append(.oneOf(entry.column, [entry.value]))
        } else if let (first, last) = splitName(words) {
            // "Linda Smith": a first and a last name, each found whole in a column of one table.
            plan.conditions += [.oneOf(first.column, [first.value]), .oneOf(last.column, [last.value])]
        } else {
            throw NotUnderstood(message: "no value '\(text)' was found in the datasource; check the spelling")
        }
    }

    /// A quoted name found in no column whole, split in two at the one place where each part is
    /// found whole in a different column of the same table (a first and a last name).
    func splitName(_ words: [String]) -> (ValueIndex.Entry, ValueIndex.Entry)? {
        guard words.count >= 2 else { return nil }
        var found: [(ValueIndex.Entry, ValueIndex.Entry)] = []
        for p in 1..<words.count {
            for a in values.whole(Array(words[..<p])) {
                for b in values.whole(Array(words[p...]))
                where a.column != b.column && schema.column(a.column).table == schema.column(b.column).table && isPersonName(a.column)
                    && isPersonName(b.column)
                {
                    found.append((a, b))
                }
            }
        }
        return found.count == 1 ? found[0] : nil
    }

    /// A column of a name: one of its table's labels, or named a name ("Fname", "last_name"),
    /// not a city beside a country ("Paris France" splits into no name).
    func isPersonName(_ c: Int) -> Bool {
        schema.tables[schema.column(c).table].labels.contains(c) || schema.column(c).words.contains("name")
    }

    /// "genre Rock or genre Jazz", "name 'Noel CV' or name 'King Book'": the table or column named
    /// before a value named again after an 'or', before the value's alternative (and read so).
    mutating func saidAgainAfterOr(_ k: Int) -> Bool {
        guard k > 3, items[k - 2] == .or, items[k - 1] == items[k - 4] else { return false }
        switch items[k - 1] {
        case .table, .columns:
            used.insert(k - 1)
            return true
        default: return false
        }
    }

    /// "between 10 and 20": the numeric column named next to it.
    mutating func readRange(at k: Int, _ low: Double, _ high: Double) throws(NotUnderstood) {
        let around = [k - 1, k + 1].first { j in
            j >= 0 && !used.contains(j) && isColumns(j).flatMap { interpreter.pickNumeric($0, near: related) } != nil
        }
        guard let j = around, let c = isColumns(j).flatMap({ interpreter.pickNumeric($0, near: related) }) else {
            throw NotUnderstood(
                message:
                    "the built-in engine could not tell which column lies between \(numberText(low)) and \(numberText(high)); name it"
            )
        }
        used.formUnion([k, j])
        plan.conditions += [.compare(.column(c), .greaterOrEqual, .number(low)), .compare(.column(c), .lessOrEqual, .number(high))]
    }

    /// "the wards on floor 2", "courses with 4 credits": a column equal to the number.
    mutating func readNumber(at k: Int, _ n: Double) throws(NotUnderstood) {
        // "of age either 24 or 25": one more value of the column equal to the number before the 'or'
        // (not "100 salary or 25 age", where another column follows).
        let otherColumnAfter =
            isColumns(k + 1).map { cs in
                guard case .compare(.column(let c), _, _)? = plan.conditions.last else { return true }
                return !cs.contains(c)
            } ?? false
        if k > 1, items[k - 1] == .or, { if case .number = items[k - 2] { true } else { false } }(), !otherColumnAfter, let last = plan.conditions.last {
            let equal: QueryPlan.Expression? =
                switch last {
                case .compare(let e, .equal, .number): e
                case .any(let either) where either.allSatisfy({ if case .compare(_, .equal, .number) = $0 { true } else { false } }):
                    if case .compare(let e, _, _) = either[0] { e } else { nil }
                default: nil
                }
            if let equal, case .column = equal {
                used.insert(k)
                plan.conditions[plan.conditions.count - 1] = merge(last, .compare(equal, .equal, .number(n)))
                return
            }
        }
        // "the wards on floor 2", "courses with 4 credits": a column equal to the number; "3 or 4
        // stars": the column after the numbers.
        let afterAlternative = k + 3 < items.count && items[k + 1] == .or && { if case .number(_, nil) = items[k + 2] { true } else { false } }() ? k + 3 : nil
        let around = [k - 1, k + 1, afterAlternative].compactMap { $0 }.first { j in
            j >= 0 && !used.contains(j) && isColumns(j).flatMap { interpreter.pickNumeric($0, near: related) } != nil
        }
        guard let j = around, let c = isColumns(j).flatMap({ interpreter.pickNumeric($0, near: related) }) else {
            // "room 112", "district 1", "the document with id 3": a key named right before its number.
            // Not "the department ids with 2 employees": a count of rows.
            guard k > 0, !used.contains(k - 1), n == n.rounded(), n >= 0, k + 1 >= items.count || isTable(k + 1) == nil,
                let c = isColumns(k - 1).flatMap({ cs in interpreter.pickColumn(cs.filter { schema.column($0).isKey }, near: related) })
            else { return }
            used.formUnion([k, k - 1])
            plan.conditions.append(.compare(.column(c), .equal, schema.column(c).kind == .number ? .number(n) : .text(numberText(n))))
            return
        }
        used.formUnion([k, j])
        plan.conditions.append(.compare(.column(c), .equal, .number(n)))
    }
}

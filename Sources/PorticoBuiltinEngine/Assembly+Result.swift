import PorticoAskEngine

extension Interpreter.Assembly {
    /// The table the columns named at `k` are of: the next item's ("the names of passengers"), or
    /// the one after the columns listed with them when each of those is a column of it ("the names
    /// and buildings of all departments").
    func tableOfList(at k: Int) -> Int? {
        var end = k + 1
        while isColumns(end) != nil { end += 1 }
        guard let t = isTable(end) else { return nil }
        let listed = (k + 1)..<end
        return listed.allSatisfy { j in isColumns(j)?.contains { schema.column($0).table == t } == true } ? t : nil
    }

    /// Columns named but not yet given a role.
    mutating func placeColumns() throws(NotUnderstood) {
        for (k, item) in items.enumerated() where !used.contains(k) {
            guard case .columns(let cs) = item else { continue }
            let named = Set(items.compactMap { if case .table(let t) = $0 { return t } else { return nil } } + [root0])
            if let t = tableOfList(at: k), !cs.contains(where: { named.contains(schema.column($0).table) }),
                cs.allSatisfy({ ["name", "title"].contains(schema.column($0).words.last ?? "") && schema.column($0).words.count == 1 })
            {
                // "the names of passengers", who have a first and a last name: their labels.
                used.insert(k)
                shown += schema.tables[t].labels
                continue
            }
            guard let c = interpreter.pickColumn(cs, near: related) else { continue }
            let labels = schema.tables[schema.column(c).table].labels
            if labels.count > 1, labels.allSatisfy(cs.contains) {
                // "the (full) names of students", who have a first and a last name: both.
                used.insert(k)
                shown += labels.filter { !shown.contains($0) }
                continue
            }
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
            // The date a condition is on is not shown, unless a verb said the condition and the date
            // was named apart from it ("the job id and date of hire of those hired after 2007-11-05").
            let verbSaysIt = items.contains { if case .dateVerb(let ds) = $0 { ds.contains(c) } else { false } }
            if schema.column(c).kind == .date && plan.hasCondition(on: c) && !verbSaysIt { continue }
            if schema.column(c).isKey, k > 0, items[k - 1] == .who || items[k - 1] == .which, !plan.via.contains(c),
                k + 1 == items.count || items[k + 1] == .orderBy || items[k + 1] == .alphabetical
                    || { if case .direction = items[k + 1] { true } else { false } }()
            {
                // "employees who are managers", read as a manager_id: a condition the engine cannot make.
                throw NotUnderstood(message: "the built-in engine could not tell what makes a row one of those named after 'who'; name the column and value")
            }
            if schema.column(c).isKey {
                // "the id and location of railways": a key asked for in a list is shown; elsewhere it
                // names the way to a table, or what is counted.
                // So is one asked for "of each" row listed ("the ids and names of each customer").
                if !plan.via.contains(c), measure == nil, counted == nil,
                    grouping == nil || grouping == .entity(root0) && (plan.having.isEmpty || schema.column(c).words.last == "id"),
                    schema.column(c).table == root0
                {
                    shown.append(c)
                }
                // "role codes with at least 3 employees": the code the rows counted are grouped by.
                // The one column named ("the codes of document types that have …" names others after it).
                if !plan.via.contains(c), measure == nil, !plan.having.isEmpty, shown.isEmpty, let rows = plan.counted,
                    !items[(k + 1)...].contains(where: { if case .columns = $0 { true } else { false } }),
                    grouping == nil || grouping == .entity(rows),
                    case let own = cs.filter({ schema.column($0).table == rows && schema.column($0).references != nil }), own.count == 1
                {
                    shown.append(own[0])
                }
                continue
            }
            if schema.column(c).kind == .boolean {
                // "low cost airlines": a yes/no column named as an adjective is a filter.
                plan.conditions.append(.flag(c, true))
                continue
            }
            if let flag = interpreter.values.flags[c] {
                // "students on scholarship", where it is a 'Y' or an 'N': the same, as stored.
                plan.conditions.append(.oneOf(c, [flag.yes]))
                continue
            }
            let article = k > 0 && [QuestionReader.Item.which].contains(items[k - 1])
            if measure == nil && counted != nil || (measure == .countRows), grouping == nil, let counted, schema.column(c).table != counted,
                schema.tables[schema.column(c).table].labels.contains(c)
            {
                // "the names of airlines and the number of flights they have": one count per airline.
                grouping = .entity(schema.column(c).table)
            } else if measure == nil && counted != nil, grouping == nil, let counted, case let j = countAfter(k, counted: counted), j + 1 < items.count,
                schema.column(c).table == counted || schema.edges.contains(where: { $0.from == counted && $0.to == schema.column(c).table }),
                items[j] == .count, items[j + 1] == .table(counted), !schema.column(c).isFreeText,
                !items[..<k].contains(where: { if case .columns = $0 { true } else if case .table = $0 { true } else { false } })
            {
                // "Show the transaction type and the number of transactions": a count for each type (of
                // the transaction, or of the card it was made with); "the industries ordered by the number
                // of companies" too, ordered by that count.
                grouping = .column(c)
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
    }

    /// Put it together: the measure, the grouping and what is shown. An answer comes back already
    /// when it counts the groups that pass a condition; `nil` otherwise.
    mutating func putTogether() throws(NotUnderstood) -> Understood? {
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
        if case .bucket(-1, let b)? = grouping { try groupByDate(b) }
        if case .entity(let t)? = grouping, case .aggregate(let f, .column(let c))? = measure, f != .count, schema.column(c).table == t,
            !averageOfCount
        {
            let summed = moreMeasured.compactMap { m -> Int? in if case .aggregate(.sum, .column(let x)) = m { x } else { nil } }
            if f == .sum, groupedByEach, moreFunctions.isEmpty, summed.count == moreMeasured.count, superlative == nil, rankedBy == nil,
                plan.having.isEmpty
            {
                // "the total revenue (and profit) of each manufacturer": each one's own, beside what names it.
                shown = (shown.isEmpty ? schema.tables[t].labels : shown) + [c] + summed
                measure = nil
                moreMeasured = []
            }
            // "the average quantity per order item": one row per group, so the average over all.
            grouping = nil
        }
        plan.grouping = grouping
        if case .entity(let t)? = grouping, t != plan.root { plan.root = t }

        switch measure {
        case .column(let c)?: rankRows(by: c)
        case let m?: try measureRows(m)
        case nil: listRows()
        }
        if plan.averageOverGroups, case .entity(let t)? = plan.grouping {
            // Averages over groups need no labels.
            plan.root = t
        }
        return nil
    }

    /// "per year", "each month": the date column of the measure's (or the counted) table, by its
    /// year, or its month (of the year asked about, else of each year).
    mutating func groupByDate(_ b: QueryPlan.Bucket) throws(NotUnderstood) {
        guard let date = interpreter.dateColumn(for: measureTable(measure) ?? counted ?? root0, plan: plan, hint: dateHint(items)) else {
            throw NotUnderstood(message: "the question asks per \(b == .year ? "year" : "month"), but its tables have no date column")
        }
        let hasYear = plan.conditions.contains { interpreter.isDateCondition($0, date) }
        if schema.column(date).isYear {
            guard b == .year else { throw NotUnderstood(message: "the tables the question is about keep years, not dates; ask per year") }
            grouping = .column(date)
        } else {
            grouping = .bucket(date, b == .year ? .year : (hasYear ? .month : .yearMonth))
        }
    }

    /// Rows ranked by a column of their own: "the 5 longest tracks".
    mutating func rankRows(by c: Int) {
        // "the customer who started a policy most recently": the subject's rows, ranked by a column of a
        // table next to theirs.
        // Only rows that point at the subject ("policies" of a customer): ranking the subject by a column of
        // a row it points at ties all the rows that share it ("the cities in the county with the most officers").
        let ranked = subject.flatMap { s in
            s != schema.column(c).table && schema.edges.contains(where: { $0.from == schema.column(c).table && $0.to == s }) ? s : nil
        }
        let owner = ranked ?? schema.column(c).table
        // "Give me the order id": a key of the rows ranked, asked for, is shown; so is "the id of the
        // trip with the shortest duration", a word naming keys of several tables before the rows it is of.
        let before = items.firstIndex { item in
            switch item {
            case .table(owner), .superlative: true
            default: false
            }
        }
        let askedKey = schema.tables[owner].primaryKey.flatMap { key in
            items.indices.contains(where: { j in
                guard case .columns(let cs) = items[j], cs.contains(key) else { return false }
                return ranked != nil || before.map { j < $0 } ?? false
            }) ? key : nil
        }
        let asked = ([askedKey].compactMap { $0 } + shown).filter { schema.column($0).table == owner && $0 != c }
        plan.shown = (asked.isEmpty ? schema.tables[owner].labels : asked) + [c]
        plan.order = [(.column(c), descending: superlative.map { interpreter.ranksDescending($0.word, $0.descending, column: c) } ?? true)]
        plan.limit = limit ?? 1
        plan.root = owner
        if case .entity? = plan.grouping { plan.grouping = nil }
    }

    /// A measure (a count, a total, an average), with the measures beside it, ranked when the
    /// question asks for the most or the least, and what can be shown beside it.
    mutating func measureRows(_ m: QueryPlan.Expression) throws(NotUnderstood) {
        if averageOfCount {
            guard grouping != nil else { throw NotUnderstood(message: "say what the average is per, e.g. \"per invoice\"") }
            plan.measures = [m]
            plan.averageOverGroups = true
            // The groups need no labels; group by the key alone.
        } else {
            plan.measures = [m]
            if case .aggregate(_, let measured) = m { plan.measures += moreFunctions.map { .aggregate($0, measured) } }
            plan.measures += moreMeasured
            // Not for "the total number of orders": one count, its "total" no sum beside it.
            let totalNumber = functionIndex.map { $0 + 1 < items.count && items[$0 + 1] == .count } ?? false
            if let counted, m != .countRows, !totalNumber, superlative == nil, rankedBy == nil {
                // "how many students live in each city and their average age": the count beside the average.
                guard counted == measureTable(m) else {
                    throw NotUnderstood(message: "the built-in engine could not tell how the count fits beside the other measure; ask for one at a time")
                }
                plan.measures.insert(.countRows, at: 0)
                plan.counted = counted
            }
            if let superlative {
                // "most recently" ranks by a date, never by a total.
                if superlative.word == "recently" {
                    throw NotUnderstood(message: "the built-in engine could not tell which date 'most recently' is of; name it")
                }
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
            return !covers(.entity(t), c) && !plan.hasCondition(on: c) && !isMeasured(c, m)
        }
        if plan.grouping == nil { plan.shown = [] }
        // A column the question asked to see that this answer cannot show is not dropped silently.
        if let dropped = shown.first(where: { c in
            !plan.shown.contains(c) && !(plan.grouping.map { covers($0, c) } ?? false) && !plan.hasCondition(on: c) && !isMeasured(c, m)
        }) {
            throw NotUnderstood(
                message:
                    "the built-in engine could not tell how \(schema.column(dropped).name) fits beside the \(plan.grouping == nil ? "total" : "groups"); rephrase it"
            )
        }
    }

    /// A list: the columns asked for, else the labels of what is listed.
    mutating func listRows() {
        if let subjectColumn, shown.isEmpty {
            shown = [subjectColumn]
            plan.distinct = true
        }
        plan.shown = shown.isEmpty ? schema.tables[root0].labels : shown
        plan.root = shown.first.map { schema.column($0).table } ?? root0
        if plan.root != root0, shown.contains(where: { schema.column($0).table == root0 }),
            shown.allSatisfy({ c in
                let t = schema.column(c).table
                // Not a key (a date may be one) nor a condition's column: those are not what is listed.
                return !(schema.column(c).isKey && schema.column(c).kind != .date) && !plan.hasCondition(on: c)
                    && (t == root0 || schema.edges.contains { $0.from == root0 && $0.to == t })
            })
        {
            // "the day number and date of all the documents": each document once, with what it points at.
            plan.root = root0
        }
        if case .entity(let t)? = plan.grouping, plan.having.isEmpty {
            // "the revenue of each manufacturer": each one's, beside what names it.
            let labels = schema.tables[t].labels
            if groupedByEach, !shown.isEmpty, plan.order.isEmpty, orderColumns.isEmpty,
                shown.allSatisfy({ schema.column($0).table == t && !labels.contains($0) && !schema.column($0).isKey })
            {
                plan.shown = labels + shown
            }
            plan.grouping = nil
        }
        if !plan.having.isEmpty, plan.grouping == nil { plan.grouping = .entity(root0) }
        if case .entity(let t)? = plan.grouping, !plan.having.isEmpty {
            // A row counted by itself is always one: "role codes with at least 3 employees" groups the
            // employees by their role code, a key to another table though it is.
            let ownRows = plan.counted == t
            // "the names of users who have more than one tweet": rows pointing at each user counted
            // per user, whom a name labels, not per name (two users may share one).
            let childrenOfEach = !ownRows && plan.counted.map { counted in schema.edges.contains { $0.from == counted && $0.to == t } } ?? false
            if let c = shown.first, schema.column(c).table == t, shown.count == 1,
                !schema.column(c).isKey || ownRows && schema.column(c).references != nil,
                !(childrenOfEach && schema.tables[t].labels.contains(c))
            {
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
        // "Show all majors", no table named: what values the column holds, each once (a table
        // named, "the majors of all students", lists its rows; names name rows and a row's own
        // text, "all investor details", is the row's).
        if plan.grouping == nil, plan.conditions.isEmpty, !shown.isEmpty,
            !items.contains(where: { if case .table = $0 { return true } else { return false } }),
            shown.allSatisfy({ c in
                let column = schema.column(c)
                return !column.isKey && !column.isFreeText && !column.words.contains { ["name", "names", "title"].contains($0) }
            })
        {
            plan.distinct = true
        }
        if let limit { plan.limit = limit }
    }

    /// Where a count after the item at `k` would be: right after it, or after an order asked for
    /// ("the industries ordered by the number of companies", "the industries of companies in
    /// descending order of the count of companies").
    func countAfter(_ k: Int, counted: Int) -> Int {
        var j = k + 1
        if j + 1 < items.count, items[j] == .table(counted), items[j + 1] == .orderBy || items[j + 1].isDirection { j += 1 }
        while j < items.count, !used.contains(j), items[j] == .orderBy || items[j].isDirection { j += 1 }
        return j
    }

    /// An order the question asked for: "ordered by salary", "in descending order", "alphabetically".
    mutating func readOrderAndFinish() throws(NotUnderstood) -> Understood {
        let direction = items.indices.first { k in if case .direction = items[k] { return !used.contains(k) } else { return false } }
        var descending = false
        var ofAge = false
        if let d = direction, case .direction(let desc, let age) = items[d] {
            descending = desc
            ofAge = age
        }
        for (columns, at) in orderColumns {
            guard let c = interpreter.pickColumn(columns, near: [plan.root] + related) else { continue }
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
        if let k = items.firstIndex(of: .alphabetical), !used.contains(k), plan.measures.isEmpty, plan.order.count == 1,
            case .column(let c) = plan.order[0].0, schema.column(c).kind == .text
        {
            // "sorted by county name in descending alphabetical order": the order named, said again.
            used.insert(k)
        }
        if let k = items.firstIndex(of: .alphabetical), !used.contains(k), plan.order.isEmpty, plan.measures.isEmpty {
            // The column asked for before the names shown beside it ("the team of each player, alphabetically").
            let texts = plan.shown.filter { schema.column($0).kind == .text }
            guard let c = shown.first(where: texts.contains) ?? texts.first ?? schema.tables[plan.root].labels.first else {
                throw NotUnderstood(message: "the built-in engine could not tell what to put in alphabetical order; name the column")
            }
            // "in descending alphabetical order": from Z to A.
            plan.order = [(.column(c), descending: direction.map { _ in descending } ?? false)]
            used.insert(k)
            if let d = direction { used.insert(d) }
        }
        if let d = direction, !used.contains(d), plan.order.count == 1 {
            // "the 5 most expensive tracks, in descending order": the ranking's own way, said again.
            if plan.order[0].descending == descending { used.insert(d) }
        }
        if let k = items.indices.first(where: { !used.contains($0) && items[$0] == .orderBy }), k + 1 < items.count, items[k + 1] == .count,
            !used.contains(k + 1) || plan.grouping != nil, plan.measures.count == 1, case .countRows = plan.measures[0],
            plan.order.isEmpty || plan.order.count == 1 && plan.order[0].0 == plan.measures[0]
        {
            // "each gender code and its count of guests, sorted by the count": by the count made.
            if plan.order.isEmpty { plan.order = [(plan.measures[0], descending: descending)] }
            used.formUnion([k, k + 1])
            if let d = direction { used.insert(d) }
        }
        if let d = direction, !used.contains(d), plan.order.isEmpty, plan.measures.isEmpty, plan.grouping == nil, plan.shown.count == 1,
            !items.contains(.orderBy)
        {
            // "the total points of gymnasts in descending order": the one column asked for, that way.
            plan.order = [(.column(plan.shown[0]), descending: descending)]
            used.insert(d)
        }
        let rankedAsFunction =
            aggregateFunction == nil
            && plan.measures.contains {
                if case .aggregate(.max, _) = $0 { return true } else if case .aggregate(.min, _) = $0 { return true } else { return false }
            }
        if let superlative, plan.order.isEmpty, !rankedAsFunction {
            throw NotUnderstood(message: "the built-in engine could not tell what '\(superlative.word)' ranks by; name the column")
        }
        for k in items.indices where items[k] == .distinct && !used.contains(k) && k + 1 < items.count && !plan.measures.isEmpty {
            // "the average base price for each different bed type", "the names of different tracks and
            // how many races each had": groups are different already.
            let grouped: Bool
            switch (items[k + 1], plan.grouping) {
            case (.columns(let cs), let g?): grouped = cs.contains { covers(g, $0) }
            case (.table(let t), .entity(let e)?): grouped = t == e
            default: grouped = false
            }
            if grouped { used.insert(k) }
        }
        if let k = items.indices.first(where: { !used.contains($0) && mustBePlaced(items[$0]) }) {
            throw NotUnderstood(message: "the built-in engine could not tell how \(describe(items[k])) applies to the question; rephrase it or name the column")
        }

        // Rank ties and vague words cost certainty.
        if items.contains(.or), !plan.conditions.contains(where: \.holdsAnAlternative) { confidence -= 0.3 }
        guard confidence >= Interpreter.threshold else {
            throw NotUnderstood(message: "the built-in engine is not sure enough what the question means; rephrase it, name the table, or configure an LLM")
        }
        return Understood(plan: plan, confidence: confidence, title: "")
    }
}

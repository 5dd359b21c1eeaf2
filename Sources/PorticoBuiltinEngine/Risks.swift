import PorticoAskEngine

/// What makes an understood question more likely to be answered wrong: kinds of reading that
/// were measured to go wrong more often than others (joins the question did not ask for, words
/// that named more than one column, a named column that got no role). Each lowers the answer's
/// confidence by its `weight`; `BuiltinEngine` refuses below `Interpreter.threshold`. The
/// weights come from how often answers with each risk were wrong on public benchmark databases
/// the engine was not written for (bench/NOTES.md has the figures): a risk alone refuses when
/// its weight is under the threshold, two or three together when their product is.
package enum Risk: String, Sendable, CaseIterable {
    /// A table joined only because a word named it, with nothing of it shown or filtered.
    case tableForAWord = "table-for-a-word"
    /// Such a table where the answer is not one row per entity: in "the number of tracks of each
    /// genre" the word names what each group counts; in a list or one figure it more often asked
    /// for a column of that table, or another count (47% wrong on Spider's training databases).
    case tableForAWordUngrouped = "table-for-a-word-ungrouped"
    /// Tables joined that the question did not name (the way between those it named).
    case bridge
    /// Two or more such tables.
    case longBridge = "long-bridge"
    /// The question named no table; the one it is about was taken from its columns.
    case noTableNamed = "no-table-named"
    /// The table the answer is about is not one the question named.
    case rootUnnamed = "root-unnamed"
    /// A word named more than one column and one was picked.
    case pickedColumn = "picked-column"
    /// Such a word where one of its columns is in a table the question named, and that one is read:
    /// alone it is as safe as no doubt (210 right of 215 on Spider's training set, against 15 of 19
    /// when none was), beside other doubts as doubtful as any pick (`weight(among:)`).
    case pickedInNamedTable = "picked-in-named-table"
    /// A value was found in more than one column.
    case valueInManyColumns = "value-in-many-columns"
    /// A value matched only in part.
    case partialValue = "partial-value"
    /// A column the question named has no part in the answer.
    case namedColumnUnused = "named-column-unused"
    /// Rows of one table counted per row of another.
    case countedAcross = "counted-across"
    case groupedByEntity = "grouped-by-entity"
    case groupedByColumn = "grouped-by-column"
    case groupedByTime = "grouped-by-time"
    case ranked
    case negation
    case semiJoin = "semi-join"
    case having
    case distinct
    case labelsChosen = "labels-chosen"
    case manyParts = "many-parts"
    /// Rows counted per row of their own table: every count is 1, never what was asked.
    case countsItsOwnRows = "counts-its-own-rows"
    /// A named column read as "has a value" rather than shown.
    case presence
    /// The question asks how many, and the plan counts nothing.
    case countLost = "count-lost"
    /// The question names a minimum, maximum or average the plan does not compute.
    case functionLost = "function-lost"
    /// The question says "or" and the plan holds no alternative.
    case orLost = "or-lost"
    /// Rows without related rows in a table the question did not name.
    case negationUnnamed = "negation-unnamed"
    /// One column shown twice where the question named two ("names of members and names of colleges").
    case shownTwice = "shown-twice"
    /// Rows without related rows in a table that is also joined for a word: the two contradict.
    case joinsWhatItNegates = "joins-what-it-negates"
    /// One column required to hold two values at once ("movies rated 3 stars and 4 stars").
    case contradiction
    /// Names asked for, and what is shown is no name or title.
    case nameNotShown = "name-not-shown"
    /// "each type": the column after "each" or "per" groups nothing.
    case groupingLost = "grouping-lost"
    /// "how many" answered with the sum of a column, and no "total" asked for it.
    case countReadAsSum = "count-read-as-sum"
    /// Rows counted where a column keeps that number ("the number of customers" and `no_of_customers`).
    case countOrColumn = "count-or-column"
    /// A total or average of a column the conditions fix to one value ("the sum of the year, where the year is 2002").
    case measuresAFixedColumn = "measures-a-fixed-column"
    /// A sum whose "total" was a word of the summed column's own name (`total_passengers`).
    case sumFromColumnName = "sum-from-column-name"
    /// "for each department", and one figure over all rows: the grouping the words ask for is not made.
    case eachLost = "each-lost"
    /// "the smallest salary for every department" read as the department with the smallest salary:
    /// a superlative inside groups is their minimum or maximum, not a top.
    case rankedWithinEach = "ranked-within-each"
    /// "oldest" or "youngest" applied to a number (an age), where they run the other way than on a date.
    case ageOnANumber = "age-on-a-number"
    /// "the total number of clubs" answered with a sum of a column.
    case rowsSummed = "rows-summed"
    /// "each type of product" with "type" given no part while a type column is there to read.
    case typeUnread = "type-unread"
    /// "the number of customers who have an account" counting the accounts: the table after "number
    /// of" is not the one counted.
    case countsAnotherTable = "counts-another-table"
    /// A value the question spelt otherwise ("Harford" taken for "Hartford"): a guess at what was
    /// meant, as a word naming two columns is (half such answers were wrong on Spider's training set).
    case respelled
    /// A word of the question read as the schema's word one letter away from it ("deparment").
    case respeltName = "respelt-name"
    /// A word of the question read as the schema's word the English lexicon links it to (a
    /// derived form, a synonym, an attribute, a more general word, a name run together).
    case lexiconWord = "lexicon-word"
    /// A verb that links to nothing in the schema, left out of a reading otherwise without doubt
    /// ("papers published"): 7 of 9 such answers were right on the studied folds, so they are offered
    /// to confirm, not run.
    case verbLeftOut = "verb-left-out"
    /// "the number of students of each allergy type": a count for every group, of rows reached through
    /// a table that only links the two, where its own rows (one per link, repeated links included) are
    /// as likely what is counted as the distinct rows at its far end (6 of 8 such answers were wrong on
    /// Spider's training set; a top or a condition on the count, "the playlist with the most tracks",
    /// is not this, nor a link table whose key is its two links, which holds each pair once).
    case countedThroughALink = "counted-through-a-link"
    /// Tables joined, where the join's ceiling, not a risk, bounds the confidence (joined answers
    /// otherwise without doubt were right 88% of the time). Added by `BuiltinEngine` after the fact.
    case joined
}

extension Risk {
    var weight: Double {
        switch self {
        case .countsItsOwnRows, .partialValue, .namedColumnUnused, .countLost, .functionLost, .orLost, .shownTwice, .joinsWhatItNegates,
            .contradiction, .nameNotShown, .groupingLost, .countReadAsSum, .countOrColumn, .measuresAFixedColumn, .sumFromColumnName, .eachLost,
            .rankedWithinEach, .ageOnANumber, .rowsSummed, .typeUnread, .countsAnotherTable:
            0.5
        case .pickedInNamedTable: 0.95
        case .presence, .longBridge: 0.7
        case .pickedColumn, .rootUnnamed, .bridge, .tableForAWordUngrouped, .respelled, .countedThroughALink, .verbLeftOut: 0.75
        case .ranked, .valueInManyColumns, .negationUnnamed: 0.8
        // Distinct values and conditions on related rows beside other doubts were right 22 times of 24
        // and 17 of 19 where 0.8 refused them (Spider train).
        case .noTableNamed, .manyParts, .respeltName, .distinct, .semiJoin, .lexiconWord: 0.9
        // A negation is named because eval and refusals tell such readings apart, but alone they were
        // right as often as readings without any doubt (33 of 33 on Spider's training set).
        case .tableForAWord, .groupedByTime, .groupedByEntity, .groupedByColumn, .countedAcross, .having, .labelsChosen, .negation, .joined: 1
        }
    }

    /// The weight beside `others`: a pick in a named table weighs as any pick when doubts about the
    /// reading's shape come with it (beside them such readings were right 79% of the time); beside an
    /// order, many parts, distinct values or an unnamed root alone it was right 36 times of 40 and
    /// keeps its own.
    func weight(among others: [Risk]) -> Double {
        // A table joined for a word, in an answer of many parts that is no count per entity: the
        // word more often asked for one of its columns (2 right of 7 on Spider's training set).
        if self == .tableForAWordUngrouped, others.contains(.manyParts) { return 0.65 }
        // A value spelt otherwise, and no table named: the word ("of all products" for a level 'Product')
        // more likely names the rows asked about than a value of theirs.
        if self == .respelled, others.contains(.noTableNamed) { return 0.6 }
        // A word naming several columns in a count per entity ("the customer with the most orders",
        // "the number of tracks of each genre"): most often which label of the entity is shown.
        if self == .pickedColumn, others.contains(.countedAcross), others.contains(.groupedByEntity) { return 0.85 }
        guard self == .pickedInNamedTable, others.contains(where: { $0 != self && $0.weight < 1 && !Self.besideAPick.contains($0) }) else {
            return weight
        }
        return Risk.pickedColumn.weight
    }

    /// The doubts beside which a pick in a named table keeps its own weight.
    static let besideAPick: Set<Risk> = [.ranked, .manyParts, .distinct, .rootUnnamed]

    /// The doubts about which column a word or value means: the ones asking the asker can settle.
    static let columnDoubts: Set<Risk> = [.pickedColumn, .pickedInNamedTable, .valueInManyColumns]

    /// Whether it lowers a reading's confidence: what a refusal or a confirmation names.
    package var isDoubt: Bool { weight < 1 || self == .joined }

    /// How sure a reading with `risks` is, from `base`.
    static func confidence(_ base: Double, _ risks: [Risk]) -> Double {
        risks.reduce(base) { $0 * $1.weight(among: risks) }
    }

    /// The risk in words, for a refusal.
    package var reason: String {
        switch self {
        case .tableForAWord, .tableForAWordUngrouped: "a table joined for one word"
        case .bridge, .longBridge: "tables joined that the question did not name"
        case .noTableNamed: "no table named"
        case .rootUnnamed: "the answer would be about a table the question did not name"
        case .pickedColumn, .pickedInNamedTable: "a word that names more than one column"
        case .valueInManyColumns: "a value found in more than one column"
        case .partialValue: "a value matched only in part"
        case .namedColumnUnused: "a column named but given no part in the answer"
        case .countedAcross: "rows of one table counted per row of another"
        case .groupedByEntity, .groupedByColumn, .groupedByTime: "a grouping"
        case .ranked: "an order or a top"
        case .negation: "a negation"
        case .semiJoin: "a condition on related rows"
        case .having: "a condition on a total"
        case .distinct: "distinct values"
        case .labelsChosen: "columns shown that the question did not name"
        case .manyParts: "many parts"
        case .countsItsOwnRows: "a count of each row by itself, always 1"
        case .presence: "a column read as 'has a value'"
        case .countLost: "a count asked for but not made"
        case .functionLost: "a minimum, maximum or average asked for but not computed"
        case .orLost: "an 'or' with no alternative in the answer"
        case .negationUnnamed: "a 'without' about a table the question did not name"
        case .shownTwice: "one column shown twice"
        case .joinsWhatItNegates: "a 'without' about rows that are also joined"
        case .contradiction: "one column asked to hold two values at once"
        case .nameNotShown: "names asked for, but the table has no name column"
        case .groupingLost: "an 'each' or 'per' that groups nothing"
        case .countReadAsSum: "'how many' read as the sum of a column"
        case .countOrColumn: "rows counted where a column keeps that number"
        case .measuresAFixedColumn: "a total or average of a column fixed to one value"
        case .sumFromColumnName: "a sum read from a column's name"
        case .eachLost: "an 'each' or 'per' with one figure over all rows"
        case .rankedWithinEach: "a top where 'each' asks for a minimum or maximum per group"
        case .ageOnANumber: "'oldest' or 'youngest' of a number"
        case .rowsSummed: "a number of rows answered with a sum"
        case .typeUnread: "a type named but not read"
        case .countsAnotherTable: "rows counted of another table than the one named"
        case .respelled: "a value spelt otherwise in the question than in the data"
        case .respeltName: "a word read as a name of the schema spelt otherwise"
        case .lexiconWord: "a word read as a name of the schema through the lexicon (another form, a synonym)"
        case .verbLeftOut: "a verb that names nothing in the data, left out"
        case .countedThroughALink: "rows counted through a table that links them to each group"
        case .joined: "tables joined"
        }
    }
}

extension Interpreter {
    /// The risks of an understood plan, read from the plan and the question's parts.
    /// A follow-up's `items` are those of its whole chain, which are many by nature.
    func risks(of plan: QueryPlan, items: [Item], joined: Int, followsUp: Bool = false, words: Set<String> = [], unread: Set<String> = []) -> [Risk] {
        let reading = Reading(plan: plan, items: items, joined: joined, schema: schema)
        var risks = joinRisks(reading) + partRisks(reading) + shapeRisks(reading) + conditionRisks(reading)
        if items.count >= 6, !followsUp { risks.append(.manyParts) }
        risks += lostParts(of: plan, items: items, words: words)
        if !followsUp { risks += groupingRisks(of: plan, items: items, words: words) }
        if typeUnread(reading, unread: unread) { risks.append(.typeUnread) }
        // One word picked outside the named tables makes every pick as doubtful as it.
        if risks.contains(.pickedColumn) { risks.removeAll { $0 == .pickedInNamedTable } }
        return risks.uniqued()
    }

    /// What the risk readers share: the plan, the question's parts, and what the plan reads.
    struct Reading {
        let plan: QueryPlan
        let items: [Item]
        /// Tables the compiled SQL reads, the root included.
        let joined: Int
        let namedTables: Set<Int>
        /// Columns the plan reads, and their tables.
        let used: Set<Int>
        let usedTables: Set<Int>

        init(plan: QueryPlan, items: [Item], joined: Int, schema: SchemaModel) {
            self.plan = plan
            self.items = items
            self.joined = joined
            namedTables = Set(items.compactMap { if case .table(let t) = $0 { return t } else { return nil } })
            used = plan.referencedColumns
            usedTables = Set(used.map { schema.column($0).table })
        }

        /// Tables joined for a word alone: nothing of theirs is read.
        var tablesForAWord: [Int] { plan.through.filter { $0 != plan.root && !usedTables.contains($0) } }
        /// Tables the question named or the plan reads directly.
        var direct: Set<Int> { namedTables.union(usedTables).union([plan.root]).union(plan.through) }
    }

    /// Joins: tables joined for a word, bridges the question did not name, which table the answer is about.
    private func joinRisks(_ r: Reading) -> [Risk] {
        var risks: [Risk] = []
        if !r.tablesForAWord.isEmpty {
            risks.append(.tableForAWord)
            if case .entity? = r.plan.grouping {} else { risks.append(.tableForAWordUngrouped) }
        }
        if let counted = r.plan.counted, case .entity(let group)? = r.plan.grouping, counted != group, r.plan.order.isEmpty, r.plan.having.isEmpty,
            let path = schema.path(from: group, to: counted),
            path.contains(where: { edge in
                [edge.from, edge.to].contains { $0 != group && $0 != counted && schema.linksOnly($0) && !schema.linksEachPairOnce($0) }
            })
        {
            risks.append(.countedThroughALink)
        }
        let bridges = max(0, r.joined - r.direct.count)
        if bridges >= 1 { risks.append(.bridge) }
        if bridges >= 2 { risks.append(.longBridge) }
        if r.namedTables.isEmpty {
            risks.append(.noTableNamed)
        } else if !r.namedTables.contains(r.plan.root), !countsNamedRowsByTheirParentsColumn(r) {
            risks.append(.rootUnnamed)
        }
        return risks
    }

    /// Rows of a named table counted by a column of the table they point at ("the most common
    /// hometown of gymnasts", "the city with the most customers"): that table is the root by
    /// construction, unnamed or not (right 12 times of 12 on Spider's training set).
    private func countsNamedRowsByTheirParentsColumn(_ r: Reading) -> Bool {
        let plan = r.plan
        guard let counted = plan.counted, counted != plan.root, r.namedTables.contains(counted), case .column(let c)? = plan.grouping,
            schema.column(c).table == plan.root
        else { return false }
        return schema.edges.contains { $0.from == counted && $0.to == plan.root }
    }

    /// The question's parts against the plan: columns named and not placed, values, names, "each".
    private func partRisks(_ r: Reading) -> [Risk] {
        let plan = r.plan
        var risks: [Risk] = []
        var planTables = r.direct
        if case .entity(let t)? = plan.grouping { planTables.insert(t) }
        var namedColumns = Set<Int>()
        for item in r.items {
            switch item {
            case .columns(let cs):
                if cs.count > 1 {
                    let inNamed = cs.filter { r.namedTables.contains(schema.column($0).table) }
                    risks.append(inNamed.count == 1 && r.used.contains(inNamed[0]) ? .pickedInNamedTable : .pickedColumn)
                }
                // A key that leads to another table named the way; "the names" of a table with a first
                // and a last name are its labels.
                let placed = cs.contains { c in
                    r.used.contains(c) || plan.grouping.map { covers($0, c) } == true
                        || schema.column(c).references.map { planTables.contains($0) && planTables.contains(schema.column(c).table) } == true
                        || !plan.shown.isEmpty && ["name", "title"].contains(schema.column(c).words.last ?? "") && schema.column(c).words.count == 1
                        // The verb of rows there must be none of ("cities that have not hosted a competition").
                        || plan.conditions.contains(.none(table: schema.column(c).table))
                }
                if !placed { risks.append(.namedColumnUnused) }
                namedColumns.formUnion(cs)
                // Not a name a condition is on ("the user named 'Mary'").
                if !plan.shown.isEmpty, cs.allSatisfy({ isNameWord(schema.column($0).words) }), !cs.contains(where: plan.hasCondition(on:)),
                    !plan.shown.contains(where: { isNameWord(Array(schema.column($0).words.suffix(1))) })
                {
                    risks.append(.nameNotShown)
                }
            case .value(let entries, let phrase, let partial):
                if Set(entries.map(\.column)).count > 1 { risks.append(.valueInManyColumns) }
                if partial { risks.append(.partialValue) }
                let asked = ValueIndex.words(phrase)
                // An entry's words are its value's, or the word it stands for ("female" for 'F').
                // A word that stands for a code may be said in the plural ("males" for 'M').
                let standsFor = { (e: ValueIndex.Entry) in
                    e.words != ValueIndex.words(e.value) && e.words.count == asked.count
                        && zip(asked, e.words).allSatisfy { Lexicon.forms($0).contains($1) }
                }
                if !partial, !entries.contains(where: { $0.words == asked || standsFor($0) }) { risks.append(.respelled) }
            default: break
            }
        }
        if plan.shown.contains(where: { !namedColumns.contains($0) }) { risks.append(.labelsChosen) }
        if Set(plan.shown).count < plan.shown.count { risks.append(.shownTwice) }
        for k in r.items.indices.dropLast() where r.items[k].isGroupMarker {
            guard case .columns(let cs) = r.items[k + 1] else { continue }
            // A key names its table's rows: "each support representative" groups the employees it points at.
            let grouped = cs.contains { c in
                r.used.contains(c) || plan.grouping.map { covers($0, c) } == true
                    || schema.column(c).references.map { plan.grouping == .entity($0) } == true
            }
            if !grouped { risks.append(.groupingLost) }
        }
        return risks
    }

    /// The plan's shape: grouping, counting, ranking, distinct values, totals of what is fixed.
    private func shapeRisks(_ r: Reading) -> [Risk] {
        let plan = r.plan
        var risks: [Risk] = []
        if let counted = plan.counted, counted != plan.root { risks.append(.countedAcross) }
        switch plan.grouping {
        case .entity?: risks.append(.groupedByEntity)
        case .column?: risks.append(.groupedByColumn)
        case .bucket?: risks.append(.groupedByTime)
        case nil: break
        }
        if case .entity(let t)? = plan.grouping {
            let expressions = plan.measures + plan.having.compactMap { if case .compare(let e, _, _) = $0 { return e } else { return nil } }
            let countsRows = expressions.contains(.countRows)
            let countsKey = schema.tables[t].primaryKey.map { expressions.contains(.aggregate(.countDistinct, .column($0))) } ?? false
            if countsKey || countsRows && (r.joined == 1 || plan.counted == t) { risks.append(.countsItsOwnRows) }
        }
        // The distinct values of the column grouped by, counted in each group: 1, always.
        if case .column(let c)? = plan.grouping, plan.measures.contains(.aggregate(.countDistinct, .column(c))) { risks.append(.countsItsOwnRows) }
        if plan.limit != nil || !plan.order.isEmpty { risks.append(.ranked) }
        if !plan.having.isEmpty { risks.append(.having) }
        // One attribute listed as the set of its values is the engine's own reading of a plain list, not a risk.
        let valuesOfOne = plan.shown.count == 1 && plan.measures.isEmpty && plan.grouping == nil && r.joined == 1
        if plan.distinct, !valuesOfOne { risks.append(.distinct) }
        var fixed = Set<Int>()
        for condition in plan.conditions {
            switch condition {
            case .oneOf(let c, let values) where values.count == 1: fixed.insert(c)
            case .compare(.column(let c), .equal, _): fixed.insert(c)
            default: break
            }
        }
        for case .aggregate(let f, .column(let c)) in plan.measures {
            if [.sum, .avg].contains(f), fixed.contains(c) { risks.append(.measuresAFixedColumn) }
            if f == .sum, schema.column(c).words.contains("total"), plan.measures.count > 1 { risks.append(.sumFromColumnName) }
        }
        return risks
    }

    /// The conditions: negations, related rows, presence, "or", contradictions.
    private func conditionRisks(_ r: Reading) -> [Risk] {
        let plan = r.plan
        var risks: [Risk] = []
        let negated = plan.conditions.compactMap { if case .none(let table) = $0 { return table } else { return nil } }
        if !negated.isEmpty { risks.append(.negation) }
        if negated.contains(where: { !r.namedTables.contains($0) }) { risks.append(.negationUnnamed) }
        if !negated.isEmpty, !r.tablesForAWord.isEmpty { risks.append(.joinsWhatItNegates) }
        if plan.conditions.contains(where: {
            switch $0 {
            case .some, .shares: return true
            default: return false
            }
        }) {
            risks.append(.semiJoin)
        }
        // A value required of the column the rows are grouped by leaves out only the group of none; of
        // a label of the rows others are counted per, the rows of no such row or of no label (as a
        // join with them would): neither is a reading of a column named (13 right, none wrong).
        if plan.conditions.contains(where: { if case .notNull(let c) = $0 { return !(plan.grouping.map { covers($0, c) } ?? false) } else { return false } }) {
            risks.append(.presence)
        }
        if r.items.contains(.or), !plan.conditions.contains(where: \.holdsAnAlternative), !plan.having.contains(where: \.holdsAnAlternative) {
            risks.append(.orLost)
        }
        if contradicts(plan.conditions) { risks.append(.contradiction) }
        return risks
    }

    /// Parts of the question the plan does not carry out: a count ("the total number of hours" is
    /// a sum, so any function carries it), a minimum, maximum or average ("total" is often a
    /// column's name, so a sum is not asked for).
    private func lostParts(of plan: QueryPlan, items: [Item], words: Set<String>) -> [Risk] {
        var expressions = plan.measures + plan.order.map(\.0)
        func note(_ c: QueryPlan.Condition) {
            switch c {
            case .compare(let e, _, _): expressions.append(e)
            case .any(let cs), .all(let cs): cs.forEach(note)
            case .some(_, let nested): note(nested)
            default: break
            }
        }
        plan.having.forEach(note)
        plan.conditions.forEach(note)
        let functions = Set(expressions.compactMap { if case .aggregate(let f, _) = $0 { return f } else { return nil } })
        let counts = expressions.contains(.countRows) || functions.contains(.count) || functions.contains(.countDistinct) || plan.countGroups
        var lost: [Risk] = []
        if items.contains(.count), !counts, functions.isEmpty { lost.append(.countLost) }
        if counts, items.contains(.count), keepsACount(words: words, tables: Set(plan.referencedColumns.map { schema.column($0).table }).union([plan.root])) {
            lost.append(.countOrColumn)
        }
        // "the total number of hours" sums hours; "how many weddings in 2016" does not sum the year.
        if items.contains(.count), !counts, functions.contains(.sum), words.isDisjoint(with: ["total", "sum", "altogether", "combined"]) {
            lost.append(.countReadAsSum)
        }
        let ranks = plan.limit != nil && !plan.order.isEmpty
        for case .function(let f) in items
        where f != .sum && !functions.contains(f) && !(ranks && (f == .max || f == .min)) && !(f == .avg && plan.averageOverGroups) {
            lost.append(.functionLost)
        }
        if items.contains(.average), !functions.contains(.avg), !plan.averageOverGroups,
            !plan.conditions.contains(where: { if case .comparedToAverage = $0 { return true } else { return false } })
        {
            lost.append(.functionLost)
        }
        return lost
    }

    /// What "each" and superlatives ask of groups, against the plan's grouping and order; and
    /// counts of rows answered with sums.
    private func groupingRisks(of plan: QueryPlan, items: [Item], words: Set<String>) -> [Risk] {
        var risks: [Risk] = []
        let grouped = plan.grouping != nil || plan.countGroups
        let eachWords: Set<String> = ["each", "per", "every"]
        // "per order item" of the order items' own rows is every row, not a grouping.
        let groupsSomething = items.indices.dropLast().contains { k in
            guard items[k].isGroupMarker else { return false }
            if case .table(let t) = items[k + 1], t == plan.root, k + 2 == items.count || !isColumnsItem(items[k + 2]) { return false }
            return true
        }
        if !grouped, !plan.measures.isEmpty, groupsSomething, !words.isDisjoint(with: eachWords) { risks.append(.eachLost) }
        // A superlative that names its column ("the highest price") inside groups is a function of each group.
        let superlativeOfColumn = items.indices.dropLast().contains { k in
            if case .superlative = items[k], case .columns = items[k + 1] { return true } else { return false }
        }
        if grouped, plan.limit != nil, superlativeOfColumn, !words.isDisjoint(with: eachWords) { risks.append(.rankedWithinEach) }
        // Two superlatives ("the lowest and highest rating") and fewer minimums and maximums computed.
        let superlatives = items.filter { if case .superlative = $0 { return true } else { return false } }.count
        let extremes = plan.measures.filter { if case .aggregate(let f, _) = $0 { return f == .min || f == .max } else { return false } }.count
        if superlatives >= 2, plan.order.isEmpty, extremes < superlatives { risks.append(.functionLost) }
        // "the oldest age": on a number the largest, not the smallest as on a date.
        for (k, item) in items.enumerated() {
            guard case .superlative(_, let word) = item, ["oldest", "youngest"].contains(word) else { continue }
            let named = k + 1 < items.count ? items[k + 1] : nil
            if case .columns(let cs)? = named, cs.contains(where: { schema.column($0).kind == .number && !schema.column($0).isYear }) {
                risks.append(.ageOnANumber)
            }
        }
        // "the total number of clubs": rows counted; a sum answers "the total number of hours".
        if let k = items.firstIndex(of: .count), k + 1 < items.count, case .table = items[k + 1], k + 2 == items.count || !isColumnsItem(items[k + 2]),
            plan.measures.contains(where: { if case .aggregate(.sum, _) = $0 { return true } else { return false } }),
            !plan.measures.contains(.countRows)
        {
            risks.append(.rowsSummed)
        }
        if plan.grouping == nil, !plan.countGroups, plan.measures.contains(.countRows), let k = items.firstIndex(of: .count), k + 1 < items.count,
            case .table(let named) = items[k + 1], (plan.counted ?? plan.root) != named
        {
            risks.append(.countsAnotherTable)
        }
        return risks
    }

    /// Whether "type" or "kind" was passed over while a table of the answer has a column of that
    /// word the plan does not read.
    private func typeUnread(_ r: Reading, unread: Set<String>) -> Bool {
        let kinds: [(Set<String>, String)] = [(["type", "types"], "type"), (["kind", "kinds"], "kind"), (["category", "categories"], "category")]
        let tables = r.usedTables.union([r.plan.root]).union(r.plan.through)
        return kinds.contains { forms, word in
            !unread.isDisjoint(with: forms)
                && tables.contains { t in schema.tables[t].columns.contains { !r.used.contains($0) && schema.column($0).words.contains(word) } }
        }
    }

    private func isColumnsItem(_ item: Item) -> Bool { if case .columns = item { return true } else { return false } }

    /// Whether a column of `tables` keeps a count of something the question names ("no_of_customers",
    /// "Number_cities", "num_employees" for "the number of customers, cities, employees").
    private func keepsACount(words: Set<String>, tables: Set<Int>) -> Bool {
        tables.contains { t in
            schema.tables[t].columns.contains { c in
                let names = schema.column(c).words
                // A table of degrees whose column Degrees keeps how many: "how many degrees" may be either.
                if schema.column(c).kind == .number, !schema.column(c).isKey, names == schema.tables[t].words, let last = names.last,
                    words.contains(where: { Lexicon.matches(question: $0, schema: last) })
                {
                    return true
                }
                guard schema.column(c).kind == .number, let first = names.first, ["no", "number", "num", "count"].contains(first), names.count >= 2 else {
                    return false
                }
                return names.dropFirst().contains { w in w != "of" && words.contains { Lexicon.matches(question: $0, schema: w) } }
            }
        }
    }

    private func isNameWord(_ words: [String]) -> Bool { words.count == 1 && ["name", "names", "title", "titles"].contains(words[0]) }

    /// Two conditions, both required, that one column cannot meet together.
    private func contradicts(_ conditions: [QueryPlan.Condition]) -> Bool {
        var equal: [Int: String] = [:]
        for case .oneOf(let c, let values) in conditions where values.count == 1 {
            if let seen = equal[c], seen != values[0] { return true }
            equal[c] = values[0]
        }
        var number: [Int: Double] = [:]
        var above: [Int: Double] = [:]
        var below: [Int: Double] = [:]
        for case .compare(.column(let c), let op, .number(let n)) in conditions {
            switch op {
            case .equal:
                if let seen = number[c], seen != n { return true }
                number[c] = n
            case .greater, .greaterOrEqual: above[c] = max(above[c] ?? -.infinity, n)
            case .less, .lessOrEqual: below[c] = min(below[c] ?? .infinity, n)
            case .notEqual: break
            }
        }
        // "more than 20 points and less than 10 points": no value lies between.
        return above.contains { c, low in below[c].map { $0 <= low } ?? false }
    }

    private func covers(_ grouping: QueryPlan.Grouping, _ c: Int) -> Bool {
        switch grouping {
        case .entity(let t): return schema.tables[t].labels.contains(c) || schema.tables[t].primaryKey == c
        case .column(let x), .bucket(let x, _): return x == c
        }
    }
}

extension QueryPlan {
    /// Every column the plan reads: shown, measured, filtered, grouped or ordered by.
    var referencedColumns: Set<Int> {
        var columns = Set(shown)
        func note(_ e: Expression) {
            switch e {
            case .column(let c), .bucket(let c, _), .aggregate(_, .column(let c)): columns.insert(c)
            case .aggregate(_, .product(let a, let b)): columns.formUnion([a, b])
            case .countRows: break
            }
        }
        func note(_ c: Condition) {
            switch c {
            case .compare(let e, _, _): note(e)
            case .oneOf(let col, _), .like(let col, _), .notLike(let col, _), .notNull(let col), .isNull(let col), .comparedToAverage(let col, _),
                .flag(let col, _):
                columns.insert(col)
            case .some(_, let nested): note(nested)
            case .shares(let col, let nested):
                columns.insert(col)
                note(nested)
            case .none, .named: break
            case .any(let cs), .all(let cs): cs.forEach(note)
            }
        }
        measures.forEach(note)
        conditions.forEach(note)
        having.forEach(note)
        order.forEach { note($0.0) }
        switch grouping {
        case .column(let c)?, .bucket(let c, _)?: columns.insert(c)
        case .entity?, nil: break
        }
        return columns
    }
}

extension Array where Element: Hashable {
    fileprivate func uniqued() -> [Element] {
        var seen = Set<Element>()
        return filter { seen.insert($0).inserted }
    }
}

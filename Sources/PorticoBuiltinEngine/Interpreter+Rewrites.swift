import PorticoAskEngine

/// Rewrites of the items a question was read as, before they are assembled: each turns one
/// way of saying a thing into the form the assembly reads ("the most common status" as a count
/// ranked, "corresponding" as "each").
extension Interpreter {
    /// "the chip model and screen mode of the phone", where chip_model and screen_mode are tables
    /// and the phone's keys to them are named the same: tables listed right before the table they
    /// are of are its columns.
    func tablesListedAsKeysOfTheirOwner(_ items: [Item]) -> [Item] {
        var items = items
        for k in items.indices {
            guard case .table(let owner) = items[k], k >= 2 else { continue }
            var listed: [(Int, Int)] = []
            var j = k - 1
            while j >= 0, case .table(let t) = items[j] {
                let key = schema.tables[owner].columns.first { c in
                    schema.column(c).references == t && schema.column(c).words == schema.tables[t].words
                }
                guard let key else { break }
                listed.append((j, key))
                j -= 1
            }
            // Two or more, as a list: one table before another is as likely what the other is of.
            guard listed.count >= 2 else { continue }
            for (at, key) in listed { items[at] = .columns([key]) }
        }
        return items
    }

    /// "the winning aircraft name": a key to another table named right before a word that names a
    /// column of that table (and others) is that table's column, reached through the key.
    func keyThenItsColumn(_ items: [Item]) -> [Item] {
        var items = items
        func target(_ k: Int) -> Int? {
            // Every column the word names is a key to the table or the table's own ("color code" of a product
            // and of the colours); "ids" naming the keys of several tables is none.
            guard case .columns(let keys) = items[k] else { return nil }
            let pointed = keys.map { c -> Int? in
                let column = schema.column(c)
                return column.references ?? (schema.tables[column.table].primaryKey == c ? column.table : nil)
            }
            guard pointed.allSatisfy({ $0 != nil }), Set(pointed).count == 1 else { return nil }
            let targets = Set(keys.compactMap { schema.column($0).references })
            return targets.count == 1 ? targets.first : nil
        }
        /// A name asked of a table with no name column: what names its rows ("the winning aircraft name").
        let tablesNamed = Set(items.compactMap { if case .table(let t) = $0 { t } else { nil } })
        /// `keys` of a table the question names that also owns one of the names: the name is that table's, beside
        /// its key ("the name and aircraft id of each pilot"), not the name of what the key points at.
        func siblings(_ cs: [Int], _ keys: [Int]) -> Bool {
            keys.contains { key in
                let owner = schema.column(key).table
                return tablesNamed.contains(owner) && cs.contains { schema.column($0).table == owner }
            }
        }
        func names(_ cs: [Int], of target: Int) -> [Int]? {
            guard cs.allSatisfy({ schema.column($0).words == ["name"] }), !cs.contains(where: { schema.column($0).table == target }),
                !schema.tables[target].labels.isEmpty
            else { return nil }
            return schema.tables[target].labels
        }
        for k in items.indices.dropLast() {
            if let target = target(k), case .columns(let cs) = items[k + 1] {
                let own = cs.filter { schema.column($0).table == target }
                if !own.isEmpty, own.count < cs.count {
                    items[k + 1] = .columns(own)
                } else if case .columns(let keys) = items[k], !siblings(cs, keys), let labels = names(cs, of: target) {
                    items[k + 1] = .columns(labels)
                }
            } else if case .columns(let cs) = items[k], let target = target(k + 1), case .columns(let keys) = items[k + 1], !siblings(cs, keys),
                let labels = names(cs, of: target)
            {
                // "the name of the winning aircraft".
                items[k] = .columns(labels)
            }
        }
        return items
    }

    /// "the highest, lowest and average GPA", "the highest and lowest salary": a highest and a lowest
    /// listed together (with functions or not) are the maximum and the minimum, not a ranking; "the
    /// highest average salary" stays a ranking of averages.
    func superlativesListedWithFunctions(_ items: [Item]) -> [Item] {
        let extremes = ["highest", "lowest", "largest", "smallest", "greatest", "maximum", "minimum"]
        func listed(_ item: Item) -> Bool {
            switch item {
            case .function, .average: true
            case .superlative(_, let word): extremes.contains(word)
            default: false
            }
        }
        var items = items
        var k = 0
        while k < items.count {
            guard listed(items[k]) else {
                k += 1
                continue
            }
            var end = k
            while end + 1 < items.count {
                if listed(items[end + 1]) {
                    end += 1
                } else if end + 3 < items.count, listed(items[end + 2]), case .columns(let cs) = items[end + 1], items[end + 3] == .columns(cs) {
                    // "the highest cost, lowest cost and average cost": the column said after each is said once.
                    items.remove(at: end + 1)
                } else {
                    break
                }
            }
            let directions = Set(items[k...end].compactMap { item -> Bool? in if case .superlative(let d, _) = item { d } else { nil } })
            if directions.count == 2 {
                for j in k...end { if case .superlative(let d, _) = items[j] { items[j] = .function(d ? .max : .min) } }
            }
            k = end + 1
        }
        return items
    }

    /// "the 3 most common cloud covers in zip code 94107", "the most common status across cities":
    /// read as "which 3 cloud covers have the most weather rows", "which status has the most cities",
    /// counting the rows of the table named right after it, else of the column's own table.
    func mostCommonAsCount(_ items: [Item]) -> [Item] {
        guard
            var i = items.firstIndex(of: .superlative(descending: true, word: "common"))
                ?? items.firstIndex(of: .superlative(descending: false, word: "common")),
            case .superlative(let descending, _) = items[i]
        else { return items }
        var items = items
        // "the most common allergy type" of a table Allergy_Type with a column AllergyType: a value is
        // common, a table is not; the table's column of its own name. Not a table after a column that
        // is common ("the platform most common among all devices").
        func isColumns(_ k: Int) -> Bool { if items.indices.contains(k), case .columns = items[k] { true } else { false } }
        for (k, other) in [(i + 1, i - 1), (i - 1, i + 1)] where items.indices.contains(k) && !isColumns(other) {
            guard case .table(let t) = items[k],
                let own = schema.tables[t].columns.first(where: { !schema.column($0).isKey && schema.column($0).words == schema.tables[t].words })
            else { continue }
            items[k] = .columns([own])
        }
        // "the most common apartment type code", "the type of document that is most common", "which
        // team city is most common": a column named with its table is the column of that table.
        func ofTable(_ c: Int, _ t: Int) -> [Int]? {
            guard c >= 0, t >= 0, t < items.count, c < items.count, case .columns(let cs) = items[c], case .table(let table) = items[t] else { return nil }
            let own = cs.filter { schema.column($0).table == table }
            return own.isEmpty ? nil : own
        }
        if let own = ofTable(i + 2, i + 1) {
            items.replaceSubrange((i + 1)...(i + 2), with: [.columns(own)])
        } else if i + 1 == items.count, let own = ofTable(i - 2, i - 1) ?? ofTable(i - 1, i - 2) {
            items.replaceSubrange((i - 2)...(i - 1), with: [.columns(own)])
            i -= 1
        }
        let columnAfter = i + 1 < items.count && { if case .columns = items[i + 1] { true } else { false } }()
        if !columnAfter, i > 0, case .columns = items[i - 1] {
            // "Which allergy type is most common (among students)?": the column named before it.
            items.swapAt(i - 1, i)
            i -= 1
        }
        guard i + 1 < items.count, case .columns(var cs) = items[i + 1], let column = pickColumn(cs, near: []) else { return items }
        var counted = schema.column(column).table
        var end = i + 1
        if i + 2 < items.count, case .table(let t) = items[i + 2] {
            counted = t
            end = i + 2
        } else if schema.column(column).isPrimary {
            // A key holds each value once: "the most common allergy" is the one most rows that point at it name.
            let pointing = schema.edges.filter { $0.to == counted && $0.toColumn == column }
            guard pointing.count == 1 else { return items }
            cs = [pointing[0].fromColumn]
            counted = pointing[0].from
        }
        var start = i
        var top: [Item] = []
        if i > 0, case .number(let n, nil) = items[i - 1], n == n.rounded(), n > 0, n < 100 {
            top = [.top(Int(n))]
            start = i - 1
        }
        let which: [Item] = items[..<start].contains(.which) ? [] : [.which]
        let reading: [Item] = which + [.columns(cs), .superlative(descending: descending, word: descending ? "most" : "least")] + top + [.table(counted)]
        return Array(items[..<start]) + reading + Array(items[(end + 1)...])
    }

    /// "the hometowns of gymnasts and the corresponding number of gymnasts": read as "the number of
    /// gymnasts for each hometown of gymnasts". The words before it from its first column on are
    /// what is grouped by; the count and the table right after it, what is counted.
    /// "the different statuses and the number of cities with each", "the average amount for
    /// different types": with a count or a function and no other grouping, the different values of a
    /// column are its groups. Not "how many different cities" (a count of distinct values).
    /// "the account with the most transactions", where "transactions" named transaction_id: the
    /// rows whose key it is are counted.
    func mostOfAKeyAsRows(_ items: [Item]) -> [Item] {
        var items = items
        for k in items.indices.dropLast() {
            guard case .superlative(_, let word) = items[k], ["most", "fewest", "least"].contains(word), case .columns(let cs) = items[k + 1] else { continue }
            let keys = cs.filter { schema.column($0).isPrimary }
            if keys.count == 1 { items[k + 1] = .table(schema.column(keys[0]).table) }
        }
        return items
    }

    /// "How many hosts does each nationality have? List the nationality and the count.": a count asked
    /// for per group, then said again where the answer's columns are listed, is one count.
    func countRestated(_ items: [Item]) -> [Item] {
        let counts = items.indices.filter { items[$0] == .count }
        guard counts.count == 2, let g = items.firstIndex(where: \.isGroupMarker), counts[0] < g, g < counts[1] else { return items }
        let second = counts[1]
        // Said again, it ends the question: "… and the count", "… and the number of coaches" (the table
        // counted, named again). Not "ordered by the count", "more than the average number of …", nor
        // "and how many coaches" (another table), nor "and how many of them joined after 2015".
        switch items[second - 1] {
        case .orderBy, .average, .compare, .function: return items
        default: break
        }
        var items = items
        if second + 1 < items.count {
            guard second + 2 == items.count, case .table(let t) = items[second + 1], items[counts[0] + 1] == .table(t) else { return items }
            items.remove(at: second + 1)
        }
        items.remove(at: second)
        return items
    }

    /// "the countries and the number of climbers from each country", "the name of track and the number
    /// of races in each track", "the destinations and the number of flights to each one": what is listed
    /// before the count is the groups, named again after "each" (or referred back to by "each one").
    func listedThenEach(_ items: [Item]) -> [Item] {
        guard let c = items.firstIndex(of: .count), (1...2).contains(c), case .columns(let listed) = items[0],
            let g = items.firstIndex(where: \.isGroupMarker), g > c + 1, !items[..<g].contains(where: \.isGroupMarker)
        else { return items }
        if c == 2 {
            // "the name of track": a column of the table named with it.
            guard case .table(let t) = items[1], listed.contains(where: { schema.column($0).table == t }) else { return items }
        }
        let counted = Array(items[c...])
        guard g + 1 < items.count else { return counted + Array(items[..<c]) }  // "each one"
        switch items[g + 1] {
        case .columns(let grouped) where !Set(grouped).isDisjoint(with: listed):
            // "the payment method codes and the number of orders for each code": the columns both name.
            var counted = counted
            counted[g - c + 1] = .columns(grouped.filter(listed.contains))
            return counted
        // "the name of track … in each track": the listed column names the grouped table's rows.
        case .table(let t) where listed.contains(where: { schema.tables[t].labels.contains($0) }): return counted
        default: return items
        }
    }

    func differentAsEach(_ items: [Item]) -> [Item] {
        guard
            let d = items.indices.dropLast().first(where: { k in
                guard items[k] == .distinct, case .columns = items[k + 1] else { return false }
                return true
            })
        else { return items }
        // "the different locations and the number of performances at each location": the groups are named twice.
        if let g = items.firstIndex(where: \.isGroupMarker) {
            // "What are the different ship flags, and how many ships have each?": the "each" at the end is of
            // the different values named first, the groups.
            if g == items.count - 1, g > d + 1, items[(d + 2)...].contains(where: { $0 == .count || $0 == .average }) {
                var items = items
                items.remove(at: g)
                items[d] = .groupMarker(each: true)
                return items
            }
            guard g > d + 1, g + 1 < items.count, case .columns(let grouped) = items[g + 1], case .columns(let listed) = items[d + 1],
                !Set(grouped).isDisjoint(with: listed)
            else { return items }
            var items = items
            items.remove(at: d)
            return items
        }
        guard
            d == 0 || items[d - 1] != .count,
            // A measure of its own, beside the column ("the different X and the number of Y", "the average
            // Z for different X"): not "total points" (often a column's name), nor "than the average age",
            // nor "the people with the maximum height".
            items.indices.contains(where: { k in
                guard k < d || k == d + 2 || (k == d + 3 && items[d + 2] == .correspondingMarker) else { return false }
                if k > 0, case .compare = items[k - 1] { return false }
                switch items[k] {
                case .count, .average, .function(.avg), .function(.min), .function(.max): return true
                default: return false
                }
            })
        else { return items }
        var items = items
        items[d] = .groupMarker(each: true)
        return items
    }

    func correspondingAsEach(_ items: [Item]) throws(NotUnderstood) -> [Item] {
        guard let g = items.firstIndex(of: .correspondingMarker) else { return items }
        guard let first = items[..<g].firstIndex(where: { if case .columns = $0 { true } else { false } }), g + 1 < items.count,
            items[g + 1] == .count
        else {
            throw NotUnderstood(message: "the built-in engine could not tell what the count corresponds to; ask for the number of each, e.g. 'for each city'")
        }
        var end = g + 1
        if end + 1 < items.count, case .table = items[end + 1] { end += 1 }
        return Array(items[..<first]) + Array(items[(g + 1)...end]) + [.groupMarker(each: true)] + Array(items[first..<g]) + Array(items[(end + 1)...])
    }
}

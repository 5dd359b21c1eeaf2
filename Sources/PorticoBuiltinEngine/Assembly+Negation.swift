import PorticoAskEngine

/// Negations: "not low cost", "products never ordered", "whose theme is not Aliens", "customers
/// with no company".
extension Interpreter.Assembly {
    /// The value right after a negation (found whole, or quoted), and its column; the column named
    /// before the negation wins ("whose status is not Village").
    mutating func negatedValue(after k: Int) -> (column: Int, value: String, at: Int)? {
        func entries(at j: Int) -> [ValueIndex.Entry] {
            guard j < items.count else { return [] }
            switch items[j] {
            case .value(let found, _, false): return found
            case .text(let text): return values.whole(ValueIndex.words(text))
            default: return []
            }
        }
        var found = entries(at: k + 1)
        var at = k + 1
        var mentionedAt = k - 1
        // "climbers not from the country of Switzerland", "artists that do not have the country 'United
        // States'": the column named between the negation and its value, when a table named is what is
        // negated of ("studios that never worked with the director X" asks for the studios none of
        // whose films had him, not the films of others).
        let namesATable = items.contains { if case .table = $0 { return true } else { return false } }
        if found.isEmpty, namesATable, let cs = isColumns(k + 1), case let after = entries(at: k + 2).filter({ cs.contains($0.column) }), !after.isEmpty {
            found = after
            at = k + 2
            mentionedAt = k + 1
        }
        guard !found.isEmpty else { return nil }
        let mentioned = mentionedAt >= 0 ? isColumns(mentionedAt) : nil
        let entry = interpreter.preferred(found, near: related, mentioned: mentioned)
        used.insert(at)
        if let mentioned, mentioned.contains(entry.column) { used.insert(mentionedAt) }
        return (entry.column, entry.value, at)
    }

    /// After a negation, a verb that named a column of a table whose rows point at the rows asked
    /// about ("cities that have not hosted a competition": Hosts of the competitions; "books that are
    /// not published": of the publications): that table, whose rows there must be none of. A table
    /// named right after it, the same one or one it links to, is part of the phrase.
    /// Of a word naming columns of several tables ("customers who never placed an order": the
    /// order_id of orders and of order lines), the one table whose rows point at them; a verb of a
    /// date ("students who never attended a course": date_of_attendance) names its table too.
    mutating func verbOfRelatedRows(after k: Int) -> Int? {
        let named: [Int]
        switch k + 1 < items.count ? items[k + 1] : nil {
        case .columns(let cs)?, .dateVerb(let cs)?: named = cs
        default: return nil
        }
        // A column of the rows asked about is theirs to lack ("students who did not register": a date of theirs).
        guard !named.contains(where: { schema.column($0).table == root0 }) else { return nil }
        let pointing = Set(named.map { schema.column($0).table }).filter { t in
            schema.edges.filter({ $0.from == t && $0.to == root0 }).count == 1
        }
        guard pointing.count == 1, let table = pointing.first else { return nil }
        if let after = isTable(k + 2), after == table || schema.edges.contains(where: { $0.from == table && $0.to == after }) { used.insert(k + 2) }
        return table
    }

    /// "not low cost", "products never ordered": a false flag, or no related row.
    mutating func readNegation(at k: Int) throws(NotUnderstood) {
        used.insert(k)
        if let c = isColumns(k + 1).flatMap({ cs in cs.first { schema.column($0).kind == .boolean } }) {
            // "airlines that are not low cost".
            used.insert(k + 1)
            plan.conditions.append(.flag(c, false))
        } else if let (c, no) = isColumns(k + 1).flatMap({ [flags = interpreter.values.flags] cs in
            cs.lazy.compactMap { c in flags[c]?.no.map { (c, $0) } }.first
        }) {
            // "students not on scholarship", where it is a 'Y' or an 'N'.
            used.insert(k + 1)
            plan.conditions.append(.oneOf(c, [no]))
        } else if k + 1 < items.count, case .textMatch(let kind) = items[k + 1] {
            // "employees without the letter M in their first names", "whose name does not contain 'x'".
            let before = plan.conditions.count
            try readTextMatch(at: k + 1, kind)
            guard plan.conditions.count == before + 1, case .like(let c, let pattern)? = plan.conditions.last else {
                throw NotUnderstood(message: "the built-in engine does not handle this negation; rephrase without 'not' or 'no'")
            }
            plan.conditions[plan.conditions.count - 1] = .notLike(c, pattern)
        } else if let t = isTable(k + 1) ?? verbOfRelatedRows(after: k) {
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
            // "artists who did not have an exhibition in 2004": a condition after the rows negated may
            // be on them (none in 2004) or on the rows asked about; the engine does not tell which.
            let after = items.indices.filter { $0 > k + 1 }.first { j in
                switch items[j] {
                case .year, .month, .compare, .range, .value, .text, .textMatch: true
                default: false
                }
            }
            if after != nil {
                throw NotUnderstood(
                    message:
                        "the built-in engine cannot tell whether the condition after 'not' is on the \(schema.tables[t].name) or on the \(schema.tables[root0].name); ask it in two questions"
                )
            }
            plan.conditions.append(.none(table: linked))
            plan.through.removeAll { $0 == t }
        } else if let (column, value, at) = negatedValue(after: k) {
            // "drivers who did not race in the Chinese Grand Prix": a value of rows each driver has many
            // of is no other value on one of them (that reads "raced somewhere else"), but none with it.
            let owner = schema.column(column).table
            // "customers without a credit card", read over the cards: the value's rows, named after it to
            // end the question, are what is lacked, not rows of another value (that reads "with a card that
            // is not credit"). Not when those rows were named before the negation ("customers who are not
            // Gold customers").
            if at + 2 == items.count, case .table(owner) = items[at + 1], owner == root0, !items[..<k].contains(.table(owner)) {
                throw NotUnderstood(
                    message:
                        "the built-in engine does not read rows without a \(schema.tables[owner].name) of '\(value)'; ask for those with it instead"
                )
            }
            if owner != root0, !schema.edges.contains(where: { $0.from == root0 && $0.to == owner }) {
                throw NotUnderstood(
                    message:
                        "the built-in engine does not read 'not \(value)' over the \(schema.tables[owner].name) of each \(schema.tables[root0].name); ask for those with '\(value)' instead"
                )
            }
            // "the courses of Statistics but not Psychology": rows already held to one value need no
            // other kept out; the asker means what is in one and not the other, which is not read here.
            if plan.conditions.contains(where: { if case .oneOf(column, _) = $0 { true } else { false } }) {
                throw NotUnderstood(
                    message:
                        "the built-in engine does not read 'in one but not the other' of \(schema.column(column).name); ask for each in a question of its own"
                )
            }
            // "whose theme is not Aliens", "the award that is not 'Tony Award'": any other value.
            plan.conditions.append(.compare(.column(column), .notEqual, .text(value)))
        } else if let c = lackedColumn(after: k) {
            // "customers with no company", "tracks without a composer": the column holds nothing;
            // unless it says so in words ("chip models that do not have wifi", where WiFi holds 'No').
            used.insert(k + 1)
            // A column of few values that writes the lack as "No" (not "NO", Norway's code).
            if let no = interpreter.values.whole(["no"]).first(where: { $0.column == c && ["No", "no"].contains($0.value) }),
                (interpreter.values.distinct[c] ?? .max) <= 20
            {
                plan.conditions.append(.compare(.column(c), .equal, .text(no.value)))
            } else {
                plan.conditions.append(.isNull(c))
            }
        } else if k > 0, k + 1 < items.count, case .number(let n, nil) = items[k + 1], let cs = isColumns(k - 1),
            let c = interpreter.pickNumeric(cs, near: related)
        {
            // "actors whose age is not 20".
            used.formUnion([k - 1, k + 1])
            plan.conditions.append(.compare(.column(c), .notEqual, .number(n)))
        } else {
            throw NotUnderstood(message: "the built-in engine does not handle this negation; rephrase without 'not' or 'no'")
        }
    }

    /// The one column of the rows asked about that a negation says they lack, the question's last
    /// words ("with no company", "that do not have a composer"): not a key (a missing link is a
    /// table's rows, read above), nor a yes/no or a value (read above).
    func lackedColumn(after k: Int) -> Int? {
        guard k > 0, k + 2 == items.count, let cs = isColumns(k + 1),
            case let own = cs.filter({ schema.column($0).table == root0 && !schema.column($0).isKey }), own.count == 1
        else { return nil }
        return own[0]
    }
}

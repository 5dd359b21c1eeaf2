import PorticoAskEngine

/// The tables, columns and values that words name.
extension Interpreter {
    /// Tables or columns that `words` name.
    func schemaItem(_ words: [String]) -> Item? {
        if let known = names.items[words] { return known }
        let item = readSchemaItem(words)
        names.items[words] = item
        return item
    }

    func readSchemaItem(_ words: [String]) -> Item? {
        let same = Self.same
        if let table = schema.tables.indices.first(where: { same(words, schema.tables[$0].words) || schema.tables[$0].written.map { same(words, $0) } == true })
        {
            return .table(table)
        }
        var (columns, wholeNames) = columnsNamed(by: words)
        // "the public schools" of a table with a School and a School_ID: the column named whole, not
        // the key its word also starts, in its table or in one pointing at it.
        let wholeTables = Set(wholeNames.map { schema.columnList[$0].table })
        if !wholeNames.isEmpty, wholeNames.count < columns.count,
            columns.allSatisfy({ c in
                let table = schema.columnList[c].table
                return wholeNames.contains(c)
                    || schema.columnList[c].isKey
                        && (wholeTables.contains(table) || schema.edges.contains { $0.from == table && wholeTables.contains($0.to) })
            }),
            wholeNames.allSatisfy({ !schema.columnList[$0].isKey })
        {
            columns = wholeNames
        }
        // "the invoice with the most transactions" of Financial_Transactions, not its transaction_id: a
        // plural that ends one table's name and names only id columns, that table's among them, is its rows.
        if words.count == 1, words[0].hasSuffix("s"), !words[0].hasSuffix("ss"), !words[0].hasSuffix("us"), !columns.isEmpty,
            columns.allSatisfy({ schema.columnList[$0].words.count == 2 && schema.columnList[$0].words.last == "id" }),
            case let owners = schema.tables.indices.filter({ t in
                let name = schema.tables[t].words
                return name.count > 1 && Lexicon.matches(question: words[0], schema: name[name.count - 1])
            }),
            owners.count == 1, columns.contains(where: { schema.columnList[$0].table == owners[0] })
        {
            return .table(owners[0])
        }
        // "the staff" of a table staff_member whose key is staff_no, "the items" of stock_item keyed
        // by item_no: the key of a table (and keys to it) named by the start or the end of the
        // table's own name is the table. Not a key that is itself the value ("allergy" of
        // Allergy_Type keyed by its allergy).
        if let first = columns.first, case let column = schema.column(first), column.words.count > words.count,
            case let t = column.references ?? column.table, let key = schema.tables[t].primaryKey,
            columns.allSatisfy({ $0 == key || schema.column($0).references == t }), case let table = schema.tables[t].words,
            words.count < table.count, same(words, Array(table.prefix(words.count))) || same(words, Array(table.suffix(words.count)))
        {
            return .table(t)
        }
        if !columns.isEmpty { return .columns(columns) }
        // A column named by its last words, or by a word for its kind of measure.
        if words.count == 1, let named = columnsNamedInPart(by: words[0]) { return .columns(named) }
        return nil
    }

    /// The columns `words` name whole (as the schema writes them, or without an id, a code or a
    /// yes/no column's verb), and of those the ones named by their full name; else in another
    /// order, run together, or as a table's word and "number".
    func columnsNamed(by words: [String]) -> (columns: [Int], whole: [Int]) {
        let same = Self.same
        var columns: [Int] = []
        var wholeNames: [Int] = []
        for (ci, column) in schema.columnList.enumerated() {
            var names = column.words
            if names.count > 1, ["id", "key", "on", "at", "no"].contains(names.last ?? "") { names.removeLast() }
            // "the city" of a student is its city_code, when no table of cities is there to point at.
            if names.count > 1, names.last == "code", !column.isKey { names.removeLast() }
            // "the category" for category_name (`SchemaModel.Column.namesThing`).
            if column.namesThing { names.removeLast() }
            // A yes/no column is named without its verb: "low cost" for is_low_cost.
            if column.kind == .boolean, names.count > 1, ["is", "has", "was", "can", "does"].contains(names[0]) { names.removeFirst() }
            let whole = same(words, column.words) || column.written.map { same(words, $0) } == true
            if whole || same(words, names) || column.withoutUnits.map({ same(words, $0) }) == true {
                columns.append(ci)
                if whole { wholeNames.append(ci) }
            } else if words.count > 1, let own = column.withoutTable, same(words, own) {
                // "first name" for customer_first_name of Customers.
                columns.append(ci)
            } else if let initialed = column.initialed, same(words, initialed) {
                columns.append(ci)
            }
        }
        // "first name" for Firstname: the words run together.
        if columns.isEmpty, words.count == 2 {
            let joined = Lexicon.forms(words.joined())
            columns = schema.columnList.indices.filter { schema.columnList[$0].words.count == 1 && joined.contains(schema.columnList[$0].words[0]) }
        }
        // "wifi" for WiFi, "zipcode" for zip_code: one word for a name's words run together.
        if columns.isEmpty, words.count == 1, words[0].count > 3 {
            let forms = Lexicon.forms(words[0])
            columns = schema.columnList.indices.filter { c in
                let names = schema.columnList[c].withoutTable ?? schema.columnList[c].words
                return names.count > 1 && forms.contains(names.joined())
            }
        }
        // "flight number" for flno, "room number" for room_no: a table's word and "number", and its
        // column whose name is the word (or its start) with no, num or nbr.
        if columns.isEmpty, words.count == 2, Lexicon.forms(words[1]).contains("number") {
            for t in schema.tables.indices {
                guard let word = schema.tables[t].words.last, Lexicon.matches(question: words[0], schema: word) else { continue }
                columns += schema.tables[t].columns.filter { c in
                    let name = String(schema.columnList[c].name.lowercased().filter { $0 != "_" })
                    return ["no", "num", "nbr"].contains { suffix in
                        guard name.hasSuffix(suffix) else { return false }
                        let start = String(name.dropLast(suffix.count))
                        return start.count >= 2 && (word.hasPrefix(start) || Lexicon.abbreviates(start, word))
                    }
                }
            }
        }
        // "first name" for forename, "last name" for surname.
        if columns.isEmpty, let others = Lexicon.namesOtherwise[words.map { Lexicon.forms($0).contains("name") ? "name" : $0 }] {
            columns = schema.columnList.indices.filter { c in others.contains { same($0, schema.columnList[c].withoutTable ?? schema.columnList[c].words) } }
        }
        // "the claimed amount" for Amount_Claimed: two words the other way round.
        if columns.isEmpty, words.count == 2, words[0].hasSuffix("ed") {
            columns = schema.columnList.indices.filter { same(words.reversed(), schema.columnList[$0].withoutTable ?? schema.columnList[$0].words) }
        }
        // "the latest logon date" for date_of_latest_logon: all of a column's words, in another order.
        if columns.isEmpty, (2...4).contains(words.count), Set(words).count == words.count {
            columns = schema.columnList.indices.filter { c in
                let names = (schema.columnList[c].withoutTable ?? schema.columnList[c].words).filter { $0 != "of" }
                return names.count == words.count && Set(names).count == names.count
                    && words.allSatisfy { w in names.contains { Lexicon.matches(question: w, schema: $0) } }
                    && names.allSatisfy { n in words.contains { Lexicon.matches(question: $0, schema: n) } }
            }
        }
        return (columns, wholeNames)
    }

    /// Whether question words name schema words one to one.
    static func same(_ q: [String], _ s: [String]) -> Bool {
        q.count == s.count && zip(q, s).allSatisfy { Lexicon.matches(question: $0, schema: $1) }
    }

    /// "country" for BillingCountry, "price" for UnitPrice: the columns one word names by their
    /// last word; else each table's key for "id", a date's verb ("hired" for hire_date), or a word
    /// for a kind of measure ("length" for a duration, "rooms" for room_count).
    func columnsNamedInPart(by word: String) -> [Int]? {
        let partial = schema.columnList.indices.filter { ci in
            let column = schema.columnList[ci]
            let names = column.initialed ?? column.words
            // "the dates of the notes" for date_of_notes: a date named by its first word.
            if names.count > 1, names[0] == "date", column.kind == .date, Lexicon.forms(word).contains("date") { return true }
            // A verb does not name a count of what was done: "play" is not Hours_Played.
            let last = names.last ?? ""
            if last.hasSuffix("ed"), !word.hasSuffix("ed"), !Lexicon.forms(word).contains(last) { return false }
            return names.count > 1 && Lexicon.matches(question: word, schema: last)
        }
        // Primary keys last: "the id of orders" is order_id when the orders are what is asked
        // about, a key to another table otherwise.
        // But "the ids of the order items" is their own key, order_item_id, not their order_id.
        let primaryFirst = Lexicon.forms(word).contains("id")
        let ordered =
            partial.filter { schema.columnList[$0].isPrimary == primaryFirst } + partial.filter { schema.columnList[$0].isPrimary != primaryFirst }
        if !ordered.isEmpty { return ordered }
        // "the ids of aircraft" for aid, eid: each table's own key, when no column is named id.
        if Lexicon.forms(word).contains("id") {
            let keys = schema.columnList.indices.filter { schema.columnList[$0].isPrimary }
            if !keys.isEmpty { return keys }
        }
        // A verb of a date or year column: "hired" for hire_date, "founded" for founded_year, "stored"
        // for date_stored, "joined" for date_joined_staff.
        let dated = schema.columnList.indices.filter { ci in
            let c = schema.columnList[ci]
            let dateWords = ["date", "year", "on", "at", "time", "yr"]
            guard c.kind == .date || c.isYear else { return false }
            if c.words.count == 2, dateWords.contains(c.words[1]) { return Lexicon.matches(question: word, schema: c.words[0]) }
            guard (2...3).contains(c.words.count), c.words[0] == "date", word.count > 3 else { return false }
            return Lexicon.matches(question: word, schema: c.words[1])
        }
        if !dated.isEmpty { return dated }
        // A word for a kind of measure: "length" for a duration column, "units" for a quantity.
        // "rooms" for room_count: a column that counts them.
        let counts = countColumns(of: word)
        if !counts.isEmpty { return counts }
        if let lexicon = Self.concepts[word] {
            let found = schema.columnList.indices.filter { ci in
                let c = schema.columnList[ci]
                // Exact words: "units" means a quantity, not a unit price.
                if lexicon == Lexicon.durationColumnWords { return c.kind == .number && !c.isKey && c.words.contains(where: Lexicon.isDuration) }
                return c.kind == .number && !c.isKey && c.words.contains { lexicon.contains($0) }
            }
            if !found.isEmpty { return found }
        }
        return nil
    }

    /// Whether these words name a table or column (never taken for a misspelt value).
    func schemaWords(_ words: [String]) -> Bool { schemaItem(words) != nil }

    /// `typos` counts down the lookups of misspelt names a question may make (each reads every value).
    func valueItem(_ words: [String], text: String, named: Bool, typos: inout Int, columnsNamed: Set<Int> = []) -> Item? {
        let valueWords = ValueIndex.words(text)
        guard !valueWords.isEmpty else { return nil }
        let whole = values.whole(valueWords)
        if !whole.isEmpty {
            // A lower-case single word is a value only in a column of few distinct values ("rock", "jazz").
            var kept = named || valueWords.count > 1 ? whole : whole.filter { (values.distinct[$0.column] ?? 0) <= 300 }
            // "in Sonoma County", where Sonoma is a county: the value of the column named after it,
            // even when "Sonoma County" is also a value of another column.
            if valueWords.count >= 2, let last = words.last, case .columns(let named)? = schemaItem([last]) {
                let shorter = values.whole(Array(valueWords.dropLast())).filter { named.contains($0.column) }
                // Unless the column that holds the whole phrase is named right before it ("the appellation Sonoma County").
                if !shorter.isEmpty, !kept.contains(where: { columnsNamed.contains($0.column) }) { kept = shorter }
            }
            if !kept.isEmpty { return .value(kept, phrase: text, partial: false) }
        }
        if named, valueWords.count >= 2 || (valueWords.first?.count ?? 0) >= 5 {
            let inside = values.containing(valueWords)
            if !inside.isEmpty { return .value(inside, phrase: text, partial: true) }
        }
        // A name written with a typo: taken only when every close value is the same one.
        if named, typos > 0, !schemaWords(valueWords) {
            typos -= 1
            let close = values.near(valueWords)
            if let first = close.first, close.allSatisfy({ $0.value == first.value }) { return .value(close, phrase: text, partial: false) }
        }
        return nil
    }
}

import PorticoBase
import PorticoLexicon
package import PorticoStore

/// A datasource's schema as the built-in engine reads it: tables and columns as words, the kind
/// of value each column holds, each table's label columns, and the foreign-key graph.
package struct SchemaModel: Sendable {
    package enum Kind: Sendable { case number, text, date, boolean, other }

    package struct Column: Sendable {
        package let table: Int
        package let name: String
        package let words: [String]
        /// The words as the name writes them, when they were read otherwise ("stockitem" read as
        /// stock item): a question may write them so too.
        package var written: [String]? = nil
        package let kind: Kind
        package let isPrimary: Bool
        /// The table this column references, when it is a foreign key.
        package var references: Int?
        /// A key (primary, foreign or named `…id`): never measured or shown as a value.
        package var isKey: Bool
        /// A date kept as ISO text (a text column named "…date"): bucketed by its characters.
        package var storedAsText = false
        /// Numbers kept as text ('7', '12.5'): totalled and averaged as numbers (cast); compared and
        /// ordered as the database compares the text, as before.
        package var numberKeptAsText = false
        /// Numbers kept as text of one width ('31', '43'), which the database orders as numbers:
        /// rows may be ranked by them.
        package var orderedAsNumbers = false
        /// What a term computes from its table's columns, for a column that is a term's expression
        /// (not one of the table's own, and not in `Table.columns`).
        package var expression: TableSQL? = nil
        /// The name read with its table's initial spelt out ("department name" for DName), when it
        /// starts with one (`SchemaModel.initialed`).
        package var initialed: [String]? = nil
        /// A name of a thing ("category name"), which the thing's word alone names ("the category").
        package var namesThing = false
        /// The words after the table's own at the start ("first name" of customer_first_name).
        package var withoutTable: [String]? = nil
        /// A number's name without the units that end it ("max temperature" of max_temperature_f).
        package var withoutUnits: [String]? = nil
        /// Text written for each row ("details", "description", "summary"), not a category.
        package var isFreeText: Bool { kind == .text && words.contains { SchemaModel.freeTextWords.contains($0) } }
        /// A whole number named "…year" ("Hire_Year", "release_yr"): a year without a date; or
        /// such numbers kept as text of one width ('2001').
        package var isYear: Bool { (kind == .number || orderedAsNumbers) && words.contains { SchemaModel.yearWords.contains($0) } }
        /// A year, or a whole number named "…date" ("Open_Date" of 1838), which a year before or
        /// after it compares as one.
        package var mayBeYear: Bool { isYear || kind == .number && !isKey && words.contains("date") }
    }

    /// Which rows of a table a term means ("active customers").
    package struct Filter: Sendable {
        package let table: Int
        package let sql: TableSQL
    }

    /// The words of a term and what they stand for: a column (the table's own or a term's
    /// expression) or a filter.
    package struct Phrase: Sendable {
        package enum Meaning: Sendable { case column(Int), filter(Int) }
        package let words: [String]
        package let meaning: Meaning
    }

    package struct Table: Sendable {
        package let name: String
        package let words: [String]
        /// The words as the name writes them, when they were read otherwise.
        package var written: [String]? = nil
        package var columns: [Int]
        package var primaryKey: Int?
        /// The columns that name one row: `name`, else first and last name, else `title`, else the first text column.
        package var labels: [Int]
        /// What orders the rows as the table keeps them (SQLite's rowid), where there is such a thing.
        package var storedOrder: StoredOrder? = nil
    }

    package struct Edge: Sendable, Hashable {
        /// The referencing side.
        package let from: Int
        package let fromColumn: Int
        /// The referenced side.
        package let to: Int
        package let toColumn: Int?
    }

    package static let freeTextWords: Set<String> = [
        "details", "detail", "description", "descriptions", "desc", "summary", "comment", "comments", "notes", "note", "text", "content",
    ]

    /// Column-name words of a whole-number year: "Hire_Year", "founded", "established".
    package static let yearWords: Set<String> = ["year", "yr", "founded", "established", "built", "opened", "launched", "started"]

    package var tables: [Table] = []
    package var columnList: [Column] = []
    package var edges: [Edge] = []
    package var filters: [Filter] = []
    /// The terms' phrases, longest first.
    package var phrases: [Phrase] = []

    package init(_ source: [SourceTable]) {
        var index: [String: Int] = [:]
        // Columns are numbered table by table, so a table's first column number locates any of its columns.
        var firstColumn: [Int] = []
        var count = 0
        for (t, table) in source.enumerated() {
            index[table.name.lowercased()] = t
            firstColumn.append(count)
            count += table.columns.count
        }
        // Tables by the name of their one key column, for links a database does not declare.
        var keyedBy: [String: [Int]] = [:]
        for (t, table) in source.enumerated() {
            let keys = table.columns.filter(\.primaryKey)
            if keys.count == 1 { keyedBy[keys[0].name.lowercased(), default: []].append(t) }
        }
        for (t, table) in source.enumerated() {
            var entry = Table(name: table.name, words: SchemaModel.readName(table.name), columns: [], primaryKey: nil, labels: [])
            if case let written = SchemaModel.writtenName(table.name), written != entry.words { entry.written = written }
            entry.storedOrder = table.storedOrder
            var foreign = Dictionary(table.foreignKeys.map { ($0.column.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
            // "customer_id" in a table that declares no key to the one table keyed by customer_id: a
            // link all the same, as the names say (many databases declare none).
            // A part of a key of several columns (a date beside an id) is a value, unless named as a key.
            let soleKey = table.columns.filter(\.primaryKey).count == 1
            let soleKeyName = soleKey ? table.columns.first(where: \.primaryKey)?.name.lowercased() : nil
            for column in table.columns where foreign[column.name.lowercased()] == nil && column.name.lowercased() != soleKeyName {
                let name = column.name.lowercased()
                let words = SchemaModel.writtenName(column.name)
                // Named for what it keys ("customer_id", not a bare "id" or "code"), and no key declared
                // between the two tables either way.
                guard let owners = keyedBy[name], owners.count == 1, owners[0] != t, words.count >= 2,
                    ["id", "key", "code"].contains(words.last ?? ""),
                    !table.foreignKeys.contains(where: { $0.table.lowercased() == source[owners[0]].name.lowercased() }),
                    !source[owners[0]].foreignKeys.contains(where: { $0.table.lowercased() == table.name.lowercased() })
                else { continue }
                foreign[name] = .init(column: column.name, table: source[owners[0]].name, targetColumn: column.name)
            }
            for column in table.columns {
                let words = SchemaModel.readName(column.name, table: entry.words)
                let key = foreign[column.name.lowercased()]
                let reference = key.flatMap { index[$0.table.lowercased()] }
                let named = words.last == "id" || words.last == "key" || column.name.lowercased() == "id"
                let ci = columnList.count
                var kind = SchemaModel.kind(column.type)
                // Dates declared as text (SQLite has no date type): ISO strings, compared and cut as text.
                // (Not an abbreviation's reading: "dob" is a birth date, but text of that name may be anything.)
                let written = SchemaModel.writtenName(column.name)
                let textDate =
                    kind == .text && words.contains { ["date", "datetime", "timestamp"].contains($0) }
                    && !written.contains { Lexicon.expansions[$0] != nil }
                if textDate { kind = .date }
                columnList.append(
                    Column(
                        table: t, name: column.name, words: words, written: written == words ? nil : written, kind: kind,
                        isPrimary: column.primaryKey,
                        references: reference, isKey: column.primaryKey && soleKey || reference != nil || named, storedAsText: textDate,
                        initialed: SchemaModel.initialed(column.name, table: entry.words), withoutTable: SchemaModel.withoutTable(words, entry.words),
                        withoutUnits: kind == .number ? SchemaModel.withoutUnits(words) : nil))
                entry.columns.append(ci)
                if column.primaryKey, entry.primaryKey == nil { entry.primaryKey = ci }
                if let reference, let key {
                    let target = source[reference].columns.firstIndex { $0.name.lowercased() == (key.targetColumn ?? "").lowercased() }
                    let primary = source[reference].columns.firstIndex { $0.primaryKey }
                    edges.append(Edge(from: t, fromColumn: ci, to: reference, toColumn: (target ?? primary).map { firstColumn[reference] + $0 }))
                }
            }
            tables.append(entry)
        }
        for t in tables.indices {
            if tables[t].primaryKey == nil {
                tables[t].primaryKey = tables[t].columns.first { columnList[$0].words == ["id"] }
            }
            tables[t].labels = labels(of: t)
        }
        // "the category" of an item is its category_name: a thing's name is named by the thing (a
        // word that is a noun far more often than not: not "first" or "full"), unless a table is named by that word
        // ("the parties" of party_name and a table Party).
        for c in columnList.indices {
            let words = columnList[c].words
            guard words.count == 2, words[1] == "name", columnList[c].kind == .text, !columnList[c].isKey, Self.isThing(words[0]),
                !tables.contains(where: { $0.words.contains { Lexicon.matches(question: words[0], schema: $0) } })
            else { continue }
            columnList[c].namesThing = true
        }
    }

    package func column(_ i: Int) -> Column { columnList[i] }

    /// Marks the text columns `numbers` (`ValueIndex.numbers`) as numbers kept as text.
    /// Of them, those `ofOneWidth` (`ValueIndex.numbersOfOneWidth`) are ordered as numbers.
    package mutating func keepNumbers(_ numbers: Set<Int>, ofOneWidth: Set<Int> = []) {
        for c in numbers where columnList.indices.contains(c) && columnList[c].kind == .text && !columnList[c].isKey {
            columnList[c].numberKeptAsText = true
            columnList[c].orderedAsNumbers = ofOneWidth.contains(c)
        }
    }

    /// Whether a table only links others: every column of it is a key.
    package func linksOnly(_ t: Int) -> Bool {
        tables[t].columns.allSatisfy { columnList[$0].isKey || columnList[$0].references != nil }
    }

    /// Whether a table that only links two others holds each pair once: its two columns, each a
    /// link, are its primary key (a playlist's track), so counting its rows counts the distinct
    /// rows they reach.
    package func linksEachPairOnce(_ t: Int) -> Bool {
        let columns = tables[t].columns
        return columns.count == 2 && columns.allSatisfy { columnList[$0].isPrimary && columnList[$0].references != nil }
    }

    /// The schema with what the terms say: their phrases as names of columns, of computed
    /// columns (after every column of the tables, so the values' numbering holds) and of filters.
    /// A term whose names or SQL no longer fit the schema is left out.
    package init(_ source: [SourceTable], terms: [Term], dialect: SQLDialect) {
        self.init(source)
        for term in terms {
            guard let meaning = term.meaning, let t = tables.firstIndex(where: { $0.name.lowercased() == meaning.table.lowercased() }) else { continue }
            let names = tables[t].columns.map { columnList[$0].name }
            let target: Phrase.Meaning
            switch meaning {
            case .column(_, let name):
                guard let c = tables[t].columns.first(where: { columnList[$0].name.lowercased() == name.lowercased() }) else { continue }
                target = .column(c)
            case .expression(_, let sql):
                guard let parsed = try? TableSQL(sql, columns: names, dialect: dialect, what: "expression") else { continue }
                columnList.append(
                    Column(
                        table: t, name: term.term, words: SchemaModel.words(term.term), kind: .number, isPrimary: false, references: nil, isKey: false,
                        expression: parsed, initialed: SchemaModel.initialed(term.term, table: tables[t].words),
                        withoutTable: SchemaModel.withoutTable(SchemaModel.words(term.term), tables[t].words),
                        withoutUnits: SchemaModel.withoutUnits(SchemaModel.words(term.term))))
                target = .column(columnList.count - 1)
            case .condition(_, let sql):
                // One over other tables too (a subquery, an aggregate) applies by the table's key.
                let keys = source.first { $0.name == tables[t].name }?.columns.filter(\.primaryKey) ?? []
                let key = keys.count == 1 ? keys[0].name : nil
                guard
                    let parsed = (try? TableSQL(sql, columns: names, dialect: dialect, what: "condition"))
                        ?? key.flatMap({ try? TableSQL(condition: sql, table: tables[t].name, key: $0, dialect: dialect) })
                else { continue }
                filters.append(Filter(table: t, sql: parsed))
                target = .filter(filters.count - 1)
            }
            for phrase in term.phrases {
                let words = ValueIndex.words(phrase)
                if !words.isEmpty { phrases.append(Phrase(words: words, meaning: target)) }
            }
        }
        phrases.sort { $0.words.count > $1.words.count }
    }

    /// Lower-case words of a name: camelCase and snake_case split; not a unit of three letters
    /// whose last is a capital ("RAM_MiB" is "ram mib", not "ram mi b").
    package static func words(_ name: String) -> [String] {
        var words: [String] = []
        var current = ""
        var previousLower = false
        let characters = Array(name)
        for (i, character) in characters.enumerated() {
            if character.isLetter || character.isNumber {
                if character.isUppercase, previousLower, !current.isEmpty, !endsAShortUnit(characters, at: i, current: current) {
                    words.append(current.lowercased())
                    current = ""
                }
                current.append(character)
                previousLower = character.isLowercase || character.isNumber
            } else {
                if !current.isEmpty { words.append(current.lowercased()) }
                current = ""
                previousLower = false
            }
        }
        if !current.isEmpty { words.append(current.lowercased()) }
        return words
    }

    /// Whether the capital at `i` is the last letter of a piece of three ("MiB", "KiB"), the rest
    /// of it `current`: a unit's spelling, not the start of another word.
    private static func endsAShortUnit(_ characters: [Character], at i: Int, current: String) -> Bool {
        let ends = i + 1 == characters.count || !(characters[i + 1].isLetter || characters[i + 1].isNumber)
        let starts = i < 3 || !(characters[i - 3].isLetter || characters[i - 3].isNumber)
        return ends && starts && current.count == 2
    }

    /// Whether a name's word (or what it abbreviates) is a thing, as "category" in category_name,
    /// not "first" or "full": a noun in more than three times as many senses as it is anything else
    /// ("company" is a verb in two of its eleven; "display", a verb in two of eight, is not).
    package static func isThing(_ word: String) -> Bool {
        let lemma = Lexicon.abbreviations[word] ?? word
        let english = WordNet.english
        let nouns = english.senseCount(ofLemma: lemma, as: .noun)
        let others = english.partsOfSpeech(of: lemma).filter { $0 != .noun }.reduce(0) { $0 + english.senseCount(ofLemma: lemma, as: $1) }
        return nouns > 3 * others
    }

    /// The kind of value a column of the declared type holds (types repeat: each is read once).
    package static func kind(_ type: String) -> Kind {
        if let known = kinds[type] { return known }
        let kind = readKind(type)
        kinds.store(kind, for: type)
        return kind
    }

    private static let kinds = BoundedCache<String, Kind>(limit: 1_000)

    private static func readKind(_ type: String) -> Kind {
        let t = type.lowercased()
        if t.contains("date") || t.contains("time") { return .date }
        if t.contains("bool") { return .boolean }
        if t.contains("int") || t.contains("real") || t.contains("num") || t.contains("dec") || t.contains("float") || t.contains("double")
            || t.contains("money")
        {
            return .number
        }
        if t.contains("char") || t.contains("text") || t.contains("clob") || t.isEmpty || t.contains("string") { return .text }
        return .other
    }

    /// The words of a column whose name starts with its table's initial as a capital of its own
    /// ("DName" of Department, "CName" of Course, "GName" of Video_Games): the table's word with
    /// that initial, then the rest of the name.
    package static func initialed(_ name: String, table: [String]) -> [String]? {
        let characters = Array(name)
        guard characters.count > 2, characters[0].isUppercase, characters[1].isUppercase, characters[2].isLowercase,
            let word = table.first(where: { $0.first == Character(characters[0].lowercased()) })
        else { return nil }
        return (table.count == 1 ? table : [word]) + SchemaModel.words(String(characters.dropFirst()))
    }

    /// A name's words without the units that end it, when any do (`Lexicon.unitWords`; "in" or "of"
    /// before them goes too: Sales_in_Billion).
    package static func withoutUnits(_ words: [String]) -> [String]? {
        var rest = words
        while rest.count > 1, let last = rest.last, Lexicon.unitWords.contains(last) { rest.removeLast() }
        if rest.count > 1, rest.count < words.count, ["in", "of"].contains(rest.last ?? "") { rest.removeLast() }
        return rest.count < words.count ? rest : nil
    }

    /// A column's words without its table's at their start, when more are left ("first name" of
    /// customer_first_name in Customers, of EMP_FNAME in Employee); nil when the name does not
    /// start with the table's words or an abbreviation of its last one.
    package static func withoutTable(_ words: [String], _ table: [String]) -> [String]? {
        guard words.count > table.count, !table.isEmpty else { return nil }
        if zip(words, table).allSatisfy({ w, t in w == t || Lexicon.forms(t).contains(w) || Lexicon.forms(w).contains(t) }) {
            return Array(words.dropFirst(table.count))
        }
        if let last = table.last, words.count > 1, Lexicon.abbreviates(words[0], last) { return Array(words.dropFirst()) }
        // booking_start_date of Apartment_Bookings: the table's last word alone.
        if table.count > 1, let last = table.last, words.count > 2, words[0] == last || Lexicon.forms(last).contains(words[0]) {
            return Array(words.dropFirst())
        }
        return nil
    }

    package func labels(of t: Int) -> [Int] {
        let cs = tables[t].columns.filter { !columnList[$0].isKey && columnList[$0].kind == .text }
        if let name = cs.first(where: { columnList[$0].words == ["name"] || columnList[$0].words == tables[t].words + ["name"] }) { return [name] }
        func own(_ c: Int) -> [String] { columnList[c].withoutTable ?? columnList[c].words }
        let first = cs.first { own($0) == ["first", "name"] || own($0) == ["firstname"] || own($0) == ["forename"] }
        let last = cs.first { own($0) == ["last", "name"] || own($0) == ["lastname"] || own($0) == ["surname"] }
        if let first, let last { return [first, last] }
        if let title = cs.first(where: { columnList[$0].words == ["title"] }) { return [title] }
        // "category name" of an item names its category, not the item: a name after a word that is
        // a thing (`isThing`) and not the table's names something else.
        func namesAnother(_ c: Int) -> Bool {
            let words = own(c)
            return words.count == 2 && !tables[t].words.contains(words[0]) && Self.isThing(words[0])
        }
        let named = cs.filter { columnList[$0].words.last?.hasSuffix("name") == true }
        if let name = named.first(where: { !namesAnother($0) }) { return [name] }
        // "item_desc" of Stock_Item: a text column named by the table's word and one more, what the row is called.
        if let last = tables[t].words.last, let described = cs.first(where: { columnList[$0].words.count == 2 && columnList[$0].words[0] == last }) {
            return [described]
        }
        if let name = named.first { return [name] }
        // A key that is itself the row's name ("dept_name", a person's "name"), or a column named as
        // its table (a player's "Player"): either tells rows apart better than the first text column
        // (a department's building).
        let key = tables[t].primaryKey.flatMap { columnList[$0].kind == .text && columnList[$0].references == nil ? $0 : nil }
        if let key, columnList[key].words.last == "name" || columnList[key].words == tables[t].words { return [key] }
        if let same = cs.first(where: { columnList[$0].words == tables[t].words }) { return [same] }
        // Else the row's key beside its first text column: an invoice is told by its number, not by its
        // billing address alone.
        return (tables[t].primaryKey.map { [$0] } ?? []) + (cs.first.map { [$0] } ?? [])
    }

    /// The shortest chain of foreign keys between two tables, either direction; `[]` for the
    /// same table, `nil` when they are not connected.
    package func path(from a: Int, to b: Int) -> [Edge]? {
        if a == b { return [] }
        var previous: [Int: (Int, Edge)] = [a: (a, Edge(from: a, fromColumn: 0, to: a, toColumn: nil))]
        var queue = [a]
        var head = 0
        while head < queue.count {
            let t = queue[head]
            head += 1
            for edge in edges where edge.from == t || edge.to == t {
                let next = edge.from == t ? edge.to : edge.from
                guard previous[next] == nil else { continue }
                previous[next] = (t, edge)
                if next == b {
                    var chain: [Edge] = []
                    var at = b
                    while at != a, let (back, e) = previous[at] {
                        chain.append(e)
                        at = back
                    }
                    return chain.reversed()
                }
                queue.append(next)
            }
        }
        return nil
    }

    package func distance(_ a: Int, _ b: Int) -> Int? { path(from: a, to: b)?.count }
}

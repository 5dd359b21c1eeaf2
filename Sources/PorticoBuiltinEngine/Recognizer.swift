import PorticoAskEngine

/// The recognition of one question: ordered passes, each reading some of the question's words
/// as items (a table, columns, a value, a number, a comparison, a count, an order…) and marking
/// them used, so that a later pass reads only what the earlier ones left. The order is the
/// engine's precedence: a term's phrase before a schema name, grammar before names, names and
/// values before the words left over. `Interpreter.recognize` runs them.
struct Recognizer {
    typealias Item = Interpreter.Item

    let interpreter: Interpreter
    /// The question's words, with the ones read so far marked used.
    var t: [QuestionReader.Token]
    /// What was read, each with the position of its first word.
    var items: [(Int, Item)] = []
    /// The terms' filters the question names, each with where.
    var filtersAt: [(filter: Int, at: Int)] = []

    init(_ interpreter: Interpreter, tokens: [QuestionReader.Token]) {
        self.interpreter = interpreter
        self.t = tokens
    }

    /// The items in the question's order.
    mutating func run() throws(Interpreter.NotUnderstood) -> [Item] {
        readNamesWithNumbers()
        readCapitalLettersOfAColumn()
        readTermPhrases()
        readMembersOfPeople()
        readCountingColumns()
        apply(interpreter.readColumnsNamedWithGrammar)
        readGrammar()
        apply(interpreter.readNamesSharingTheirLastWord)
        apply(interpreter.readColumnOfItsOwner)
        readValuesAndNames()
        readFirstOrLastOfADate()
        readCountedTables()
        readWordsEndingATable()
        readCountedKeysAsTables()
        readMoneyWords()
        readTradeAfterNegation()
        readBeginningVerbs()
        readWhen()
        nameFilteredTables()
        readNumericKeys()
        dropColumnsNamedAfterAValue()
        apply(interpreter.readTimesAsRows)
        try interpreter.refuseTwoCounts(Recognition(tokens: t, items: items))
        apply(interpreter.showTablesListedBesideTheirColumns)
        apply(interpreter.readTablesListedAmongColumns)
        apply(interpreter.readSuperlativesListedAfterAFunction)
        apply(interpreter.showTablesListedAsTheirs)
        return items.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// Runs one of the interpreter's passes over what is read so far.
    mutating func apply(_ pass: (inout Recognition) -> Void) {
        var recognition = Recognition(tokens: t, items: items)
        pass(&recognition)
        (t, items) = (recognition.tokens, recognition.items)
    }

    // MARK: - The schema and the interpreter's readings

    var schema: SchemaModel { interpreter.schema }
    var values: ValueIndex { interpreter.values }
    // The interpreter's readings of words, used by the passes as their own.
    func schemaItem(_ words: [String]) -> Item? { interpreter.schemaItem(words) }
    func schemaWords(_ words: [String]) -> Bool { interpreter.schemaWords(words) }
    func valueItem(_ words: [String], text: String, named: Bool, typos: inout Int, columnsNamed: Set<Int> = []) -> Item? {
        interpreter.valueItem(words, text: text, named: named, typos: &typos, columnsNamed: columnsNamed)
    }
    func agesOfNamedTables(_ tokens: [QuestionReader.Token]) -> [Int] { interpreter.agesOfNamedTables(tokens) }
    func tablesNamed(by tokens: [QuestionReader.Token]) -> Set<Int> { interpreter.tablesNamed(by: tokens) }
    func isPassiveVerb(at i: Int, of tokens: [QuestionReader.Token]) -> Bool { interpreter.isPassiveVerb(at: i, of: tokens) }
    func countColumns(of word: String) -> [Int] { interpreter.countColumns(of: word) }

    // MARK: - Reading words

    /// The word at `i`, lowercased, when it is there, unread and not quoted.
    func word(_ i: Int) -> String? { i < t.count && !t[i].used && !t[i].quoted ? t[i].lower : nil }

    /// Whether `words` are the unread words from `i` on.
    func phrase(_ i: Int, _ words: [String]) -> Bool {
        for (k, w) in words.enumerated() where word(i + k) != w { return false }
        return true
    }

    /// Whether a function word at `i` ("total", "average") starts the name of a column ("the total
    /// passengers" of Total_Passengers), to be read with the schema's words later.
    func startsAColumnName(_ i: Int) -> Bool {
        for n in [3, 2] where i + n <= t.count && (i..<(i + n)).allSatisfy({ word($0) != nil }) {
            let words = t[i..<(i + n)].map(\.lower)
            guard case .columns(let cs)? = schemaItem(words), cs.contains(where: { schema.column($0).words.first == words[0] }) else { continue }
            // Not when the words after it are the whole name of a column of numbers to total ("the total
            // salary of employees", with a salary column there and total_salary elsewhere).
            let rest = Array(words.dropFirst())
            return !schema.columnList.contains { c in
                c.kind == .number && (c.withoutTable ?? c.words).count == rest.count
                    && zip(c.withoutTable ?? c.words, rest).allSatisfy { Lexicon.matches(question: $1, schema: $0) }
            }
        }
        return false
    }

    /// The entries of the value at `i` in a text column named just before it.
    func valueOfATextColumnNamedBefore(_ i: Int) -> [ValueIndex.Entry]? {
        var b = i - 1
        // "grade of A"; not "of" before a number ("the rank of 3 players").
        while b >= 0, ["is", "was", "="].contains(t[b].lower) || t[b].lower == "of" && t[i].number == nil { b -= 1 }
        for n in [3, 2, 1] where b - n + 1 >= 0 {
            let span = t[(b - n + 1)...b]
            guard span.allSatisfy({ !$0.used && !$0.quoted && $0.number == nil }),
                case .columns(let cs)? = schemaItem(span.map(\.lower))
            else { continue }
            let entries = values.whole(ValueIndex.words(t[i].text)).filter { e in cs.contains(e.column) && schema.column(e.column).kind == .text }
            return entries.isEmpty ? nil : entries
        }
        return nil
    }

    /// Reads tokens `i..<i+n` as `item`.
    mutating func take(_ i: Int, _ n: Int, _ item: Item) {
        for k in i..<(i + n) { t[k].used = true }
        items.append((i, item))
    }

    /// "starting with A", "containing love": one unquoted word after a text match is the text.
    mutating func takeUnquotedText(_ j: Int, strict: Bool = false) {
        guard j < t.count, !t[j].used, !t[j].quoted, t[j].number == nil,
            !Lexicon.stopWords.contains(t[j].lower) || t[j].text.count == 1,
            !["more", "less", "fewer", "over", "under", "above", "below", "exactly", "no", "than", "most", "least"].contains(t[j].lower),
            !strict || t[j].capitalized || t[j].text.count == 1
        else { return }
        take(j, 1, .text(t[j].text))
    }

    /// "containing the letter a", "with the word 'court'": the kind of text named before it is
    /// read, and the position after it returned.
    mutating func afterTextKind(_ j: Int) -> Int {
        let k = ["the", "a"].contains(word(j) ?? "") ? j + 1 : j
        guard let kind = word(k), Lexicon.textKinds.contains(kind), k + 1 < t.count else { return j }
        for m in j...k { t[m].used = true }
        return k + 1
    }
}

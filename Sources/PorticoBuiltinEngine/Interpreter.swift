import PorticoAskEngine
import PorticoLexicon

/// Reads a question against a schema and its values and builds the query it asks for, with how
/// sure it is; or says what it did not understand. Rules are about kinds of questions (counts,
/// sums, groupings, rankings, filters, joins), never about one database's names.
struct Interpreter {
    let schema: SchemaModel
    let values: ValueIndex
    /// What each run of words names, read once for the question: the passes ask for the same words
    /// many times (every word's table, for each word).
    let names = NameMemo()
    /// Columns the asker chose when asked back: a word or value that names several columns means these.
    var chosen: Set<Int> = []

    struct Understood: Sendable {
        var plan: QueryPlan
        var confidence: Double
        var title: String
        /// The question's parts as read, for `risks(of:items:joined:)`.
        var items: [Item] = []
        /// Whether the question changed the one before it ("and in 2024?"), whose parts still count.
        var followsUp = false
        /// The question's words, lowercased, for the risks that turn on one ("total").
        var words: Set<String> = []
        /// Words the reading gave no part, lowercased ("type" in "each type of product").
        var unread: Set<String> = []
        /// Whether a word of the question was read as the schema's word one letter away ("deparment").
        var respelt = false
        /// Whether a word of the question was read as the schema's word the lexicon links it to.
        var linked = false
        /// Verbs that link to nothing in the schema, left out ("papers published").
        var verbsLeftOut: [String] = []
    }

    struct NotUnderstood: Error, Sendable {
        let message: String
    }

    typealias Item = QuestionReader.Item

    /// Bounds on the work one question can cause: its words are matched against every column
    /// name, and a misspelt name against every value.
    static let maxWords = 60
    static let maxTypoLookups = 4

    /// Below this, the engine refuses rather than guess.
    static let threshold = 0.6

    /// "the locations shared by more than two wrestlers", "the industry shared by the most companies":
    /// values held by a number of rows, said as "with"; not "shared by cities above 1500 and cities
    /// under 500", values common to two groups, which is not read.
    static func sharedByACount(at i: Int, of tokens: [QuestionReader.Token]) -> Bool {
        guard Lexicon.sharedWords.contains(tokens[i].lower), i + 2 < tokens.count, tokens[i + 1].lower == "by" else { return false }
        let j = tokens[i + 2].lower == "the" ? i + 3 : i + 2
        guard j < tokens.count else { return false }
        let next = tokens[j]
        return next.number != nil || Lexicon.numberWords[next.lower] != nil
            || ["more", "fewer", "less", "most", "greatest", "largest", "highest", "fewest", "least"].contains(next.lower)
            || next.lower == "at" && j + 1 < tokens.count && ["least", "most"].contains(tokens[j + 1].lower)
    }

    /// "papers written by …", "phones produced by …": a verb in the passive, its doer named after
    /// "by", says only that the two are linked, which the schema's keys or the value found say
    /// better. Not a verb that negates ("unaffected by").
    /// Not a verb that groups or orders ("categorized by department", "ranked by salary"), nor a
    /// word that only ends like a participle ("then", "Sweden"), nor one whose "by" names a column
    /// alone ("paid by department": a grouping).
    func isPassiveVerb(at i: Int, of tokens: [QuestionReader.Token]) -> Bool {
        let t = tokens[i]
        guard i + 1 < tokens.count, tokens[i + 1].lower == "by", !t.quoted, !t.capitalized, t.number == nil, !t.lower.hasPrefix("un"),
            !Lexicon.sharedWords.contains(t.lower), !Lexicon.groupingParticiples.contains(t.lower), !Lexicon.notParticiples.contains(t.lower)
        else { return false }
        guard t.lower.hasSuffix("ed") || t.lower.hasSuffix("en") || Lexicon.irregularParticiples.contains(t.lower) else { return false }
        // The doer: a table's rows or a name, not a column to group by.
        let j = Self.pastArticles(from: i + 2, in: tokens)
        guard j < tokens.count else { return false }
        // "used by grade 4": a column with its value is a doer too.
        let valued = j + 1 < tokens.count && (tokens[j + 1].number != nil || tokens[j + 1].capitalized || tokens[j + 1].quoted)
        if case .columns? = schemaItem([tokens[j].lower]), !tokens[j].capitalized, !tokens[j].quoted, !valued { return false }
        return true
    }

    /// `text` with each whole word `word` (a run of letters equal to it) replaced by `new`.
    static func replacingWord(_ word: String, with new: String, in text: String) -> String {
        var out = ""
        var run = ""
        for character in text + " " {
            if character.isLetter {
                run.append(character)
                continue
            }
            out += run == word ? new : run
            run = ""
            out.append(character)
        }
        return String(out.dropLast())
    }

    /// "drivers who once had a lap time under 93000", "the dates when the temperature was above 85":
    /// "once" (not "more than once") and "when" after a word of time say nothing the rest does not.
    static func addsNothing(at i: Int, of tokens: [QuestionReader.Token]) -> Bool {
        let before = i > 0 ? tokens[i - 1].lower : ""
        switch tokens[i].lower {
        case "once": return !["than", "least", "most"].contains(before)
        case "when": return ["date", "dates", "day", "days", "year", "years", "month", "months", "time", "times"].contains(before)
        case "result", "results", "output", "list": return namesTheAnswer(at: i, of: tokens)
        default: return false
        }
    }

    /// "sort the results by age", "order the result in descending order", "show the output
    /// alphabetically", "sort the list by name": the answer itself, named by a verb that shows or
    /// orders it, says nothing about which rows or columns it holds.
    static func namesTheAnswer(at i: Int, of tokens: [QuestionReader.Token]) -> Bool {
        guard i >= 2, ["the", "these", "your", "its"].contains(tokens[i - 1].lower) else { return false }
        let verb = tokens[i - 2].lower == "me" && i >= 3 ? tokens[i - 3].lower : tokens[i - 2].lower
        let shows = ["sort", "sorted", "order", "ordered", "arrange", "arranged", "rank", "ranked", "show", "display", "present", "return", "give", "list"]
        return shows.contains(verb) && (tokens[i].lower != "list" || ["sort", "sorted", "order", "ordered", "arrange", "arranged"].contains(verb))
    }

    /// "the snatch score" of Snatch, "the enrollment size" of Enrollment, "the phone numbers" of
    /// customer_phone: a word for a measure just after a column's name says nothing more.
    func namesItsColumnAgain(at i: Int, of tokens: [QuestionReader.Token]) -> Bool {
        let numeric = ["score", "scores", "size", "sizes", "value", "values", "amount", "amounts", "figure", "figures", "level", "levels"]
        let word = tokens[i].lower
        guard i > 0, numeric.contains(word) || ["number", "numbers"].contains(word) else { return false }
        for n in 1...min(3, i) {
            // Not after a function ("the average total score" of Total is no measure of it).
            guard tokens[i - n].used, !tokens[i - n].quoted, tokens[i - n].number == nil,
                !Lexicon.functionWords.contains(tokens[i - n].lower)
            else { return false }
            guard case .columns(let cs)? = schemaItem(tokens[(i - n)..<i].map(\.lower)) else { continue }
            return cs.allSatisfy { c in
                let column = schema.column(c)
                return !column.isKey && (numeric.contains(word) ? column.kind == .number : column.kind == .text && !column.words.contains("number"))
            }
        }
        return false
    }

    /// The age columns of the tables the question names ("students 18 years old"): never another
    /// table's ("departments 100 years old" is no head's age).
    func agesOfNamedTables(_ tokens: [QuestionReader.Token]) -> [Int] {
        tablesNamed(by: tokens).sorted().compactMap { ageColumn(in: $0) }
    }

    /// The tables single words of the question name.
    func tablesNamed(by tokens: [QuestionReader.Token]) -> Set<Int> {
        Set(tokens.compactMap { token -> Int? in if case .table(let t)? = schemaItem([token.lower]) { t } else { nil } })
    }

    /// The first position from `j` past "the", "a" and "an".
    static func pastArticles(from j: Int, in tokens: [QuestionReader.Token]) -> Int {
        var j = j
        while j < tokens.count, ["the", "a", "an"].contains(tokens[j].lower) { j += 1 }
        return j
    }

    /// Whether the linking verb at `i` has what it links to: something read after it ("played for
    /// teams"), a preposition ("the elections they participated in") or a name just before it ("the
    /// college that Charles attends"); "pupils who play" has none.
    static func linksSomething(at i: Int, of tokens: [QuestionReader.Token]) -> Bool {
        // Its object soon after it, a preposition, or a name before it.
        let object = tokens[(i + 1)..<min(tokens.count, i + 4)].contains { $0.used && !Lexicon.stopWords.contains($0.lower) }
        let preposition = i + 1 < tokens.count && ["in", "at", "for", "on", "to", "with"].contains(tokens[i + 1].lower)
        let name = i > 0 && tokens[i - 1].used && (tokens[i - 1].capitalized || tokens[i - 1].quoted)
        return object || preposition || name
    }

    func interpret(_ question: String, previous: QueryPlan? = nil, respelling: Bool = true) throws(NotUnderstood) -> Understood {
        var reader = try Self.reader(of: question)
        let items = narrowedToChoices(try rewritten(try recognize(&reader)))
        let unknownAt = wordsNotUnderstood(in: reader.tokens, items: items)
        if !unknownAt.isEmpty {
            return try readAgain(question, unknownAt: unknownAt, tokens: reader.tokens, previous: previous, respelling: respelling)
        }
        var understood: Understood
        if let previous, isFollowUp(items, reader) {
            understood = try followUp(previous, items)
            understood.followsUp = true
        } else {
            understood = try assembleAll(items, reader)
        }
        try refuseAnswersThatMiss(understood, reader)
        // The terms' filters hold whatever else the question asks.
        for f in reader.namedFilters where !understood.plan.conditions.contains(.named(f)) { understood.plan.conditions.append(.named(f)) }
        understood.items = items
        understood.words = Set(reader.tokens.map(\.lower))
        understood.unread = Set(reader.tokens.filter { !$0.used && !$0.quoted }.map(\.lower))
        return understood
    }

    /// The question's words, when it is one the engine reads: short enough, in English, and asking
    /// to read, not to change.
    static func reader(of question: String) throws(NotUnderstood) -> QuestionReader {
        let reader = QuestionReader(question)
        guard reader.tokens.count <= Self.maxWords else {
            throw NotUnderstood(message: "the built-in engine reads questions of at most \(Self.maxWords) words; ask a shorter one")
        }
        if reader.isForeign {
            throw NotUnderstood(message: "the built-in engine reads questions in English only; ask in English or configure an LLM with `portico llm add`")
        }
        if let write = reader.tokens.first(where: { Lexicon.writeVerbs.contains($0.lower) && !$0.quoted }) {
            throw NotUnderstood(message: "'\(write.text)' asks to change data; questions only read it, and nothing was run")
        }
        return reader
    }

    /// The items recognized, each way of saying a thing rewritten into the form the assembly reads.
    func rewritten(_ recognized: [Item]) throws(NotUnderstood) -> [Item] {
        try correspondingAsEach(
            differentAsEach(
                listedThenEach(
                    countRestated(
                        mostCommonAsCount(
                            superlativesListedWithFunctions(keyThenItsColumn(tablesListedAsKeysOfTheirOwner(mostOfAKeyAsRows(recognized)))))
                    ))))
    }

    /// What the asker chose narrows a word or a value that names several columns to the one meant.
    func narrowedToChoices(_ items: [Item]) -> [Item] {
        guard !chosen.isEmpty else { return items }
        return items.map { item in
            switch item {
            case .columns(let cs) where cs.count > 1 && cs.contains(where: chosen.contains):
                return .columns(cs.filter(chosen.contains))
            case .value(let entries, let phrase, let partial) where entries.contains(where: { chosen.contains($0.column) }):
                return .value(entries.filter { chosen.contains($0.column) }, phrase: phrase, partial: partial)
            default:
                return item
            }
        }
    }

    /// The positions of the words no pass read and that are not words that carry nothing here.
    func wordsNotUnderstood(in tokens: [QuestionReader.Token], items: [Item]) -> [Int] {
        // Words of the column a value was found in say nothing more ("a First class seat", seat_class = 'First').
        let valueColumnWords = Set(
            items.flatMap { item -> [String] in
                switch item {
                case .value(let entries, _, _): return entries.flatMap { schema.column($0.column).words }
                // "products in the category 'Spices'": a quoted value's column too.
                case .text(let text): return values.whole(ValueIndex.words(text)).flatMap { schema.column($0.column).words }
                default: return []
                }
            })
        let linkWords = wordsOfTheOnlyLink(between: items)
        return tokens.indices.filter { i in
            let t = tokens[i]
            if !t.used, Lexicon.forms(t.lower).contains(where: linkWords.contains) { return false }
            // "US" is a name written in capitals, not the word "us" (a first word is only shouted: "IN which year").
            let acronym = i > 0 && t.text.count >= 2 && t.text.allSatisfy(\.isUppercase)
            // "the names and types of the dorms": a kind listed among the columns asked for is one of them.
            let listed =
                ["type", "types", "kind", "kinds"].contains(t.lower)
                && (i > 1 && tokens[i - 1].lower == "and" && tokens[i - 2].used || i > 0 && tokens[i - 1].beforeComma && tokens[i - 1].used)
                && (i + 1 == tokens.count || t.beforeComma || ["of", "for"].contains(tokens[i + 1].lower))
            if !t.used && listed { return true }
            return !t.used && (!Lexicon.stopWords.contains(t.lower) || acronym) && !Lexicon.softWords.contains(t.lower)
                && !Lexicon.forms(t.lower).contains(where: valueColumnWords.contains) && !isPassiveVerb(at: i, of: tokens)
                && !(Lexicon.linkingVerbs.contains(t.lower) && Self.linksSomething(at: i, of: tokens)) && !Self.addsNothing(at: i, of: tokens)
                && !Self.sharedByACount(at: i, of: tokens) && !namesItsColumnAgain(at: i, of: tokens)
        }
    }

    /// The words of a key's name that are the only link between two tables the question names
    /// ("customers each employee supports", of Customer.SupportRepId): they say how the two are
    /// linked, which the join already says. Not its last word when it says "id", nor a word of
    /// either table's own name, nor where two keys link them (the word would choose between them).
    func wordsOfTheOnlyLink(between items: [Item]) -> Set<String> {
        let named = Set(items.compactMap { if case .table(let t) = $0 { return t } else { return nil } })
        guard named.count >= 2 else { return [] }
        var words = Set<String>()
        for edge in schema.edges where named.contains(edge.from) && named.contains(edge.to) && edge.from != edge.to {
            let between = schema.edges.filter { Set([$0.from, $0.to]) == Set([edge.from, edge.to]) }
            guard between.count == 1 else { continue }
            let own = Set(schema.tables[edge.from].words + schema.tables[edge.to].words)
            words.formUnion(schema.column(edge.fromColumn).words.filter { !["id", "no", "code", "key", "num", "number"].contains($0) && !own.contains($0) })
        }
        return words
    }

    /// A question with words not understood, read again with them respelt as the schema's words or
    /// linked to them through the lexicon; else the refusal that names them.
    func readAgain(
        _ question: String, unknownAt: [Int], tokens: [QuestionReader.Token], previous: QueryPlan?, respelling: Bool
    ) throws(NotUnderstood) -> Understood {
        let unknown = unknownAt.map { tokens[$0] }
        // "the deparment names": a word one letter off a word of the schema's names, when every
        // word not understood is one, is read as that word.
        let quoted = tokens.filter(\.quoted).map(\.lower)
        let respelt =
            respelling && !unknown.contains(where: { word in quoted.contains { $0.contains(word.lower) } })
            ? schemaWords(respelling: unknown.map(\.lower)) : nil
        if let respelt {
            var text = question
            for (token, word) in zip(unknown, respelt) { text = Self.replacingWord(token.text, with: word, in: text) }
            var understood = try interpret(text, previous: previous, respelling: false)
            understood.respelt = true
            return understood
        }
        // Words the schema does not use, read as the schema's words the English lexicon links them to.
        let linking = unknownAt.map { i in
            LinkedWord(word: tokens[i].lower, next: i + 1 < tokens.count ? tokens[i + 1].lower : nil)
        }
        if respelling, !unknown.contains(where: \.quoted), let linked = schemaWords(linking: linking, in: tokens.map(\.lower)) {
            var text = question
            for (token, word) in zip(unknown, linked) { text = Self.replacingWord(token.text, with: word, in: text) }
            if var understood = try? interpret(text, previous: previous, respelling: false) {
                understood.linked = true
                return understood
            }
        }
        // Verbs that link to nothing ("How many papers are published?"): the question read without them,
        // when the rest is read whole, and less surely (`Risk.verbLeftOut`).
        if respelling, unknownAt.allSatisfy({ isVerbThatMayGo(at: $0, of: tokens) }) {
            var text = question
            for token in unknown { text = Self.replacingWord(token.text, with: "", in: text) }
            if var understood = try? interpret(text, previous: previous, respelling: false) {
                understood.verbsLeftOut = unknown.map(\.text)
                return understood
            }
        }
        let words = unknown.map { "'\($0.text)'" }.joined(separator: ", ")
        throw NotUnderstood(message: "the built-in engine did not understand \(words): " + Self.nameOrRephrase)
    }

    /// What to do about words not understood.
    static let nameOrRephrase =
        "name a table or column of the datasource (datasource_describe lists them), rephrase, or configure an LLM with `portico llm add`"

    /// A participle or a gerund of a verb the lexicon knows ("published", "using", "won"), itself no
    /// noun, not quoted, not a name: a word that says what rows do rather than which rows. Not one
    /// that governs a number ("never reached 70", "relegated in 1990"), not an adjective in -ing ("by decreasing
    /// number"), and not one that ends the question after "are" ("users that are logged in"),
    /// where it is the condition itself.
    func isVerbThatMayGo(at i: Int, of tokens: [QuestionReader.Token]) -> Bool {
        let token = tokens[i]
        let word = token.lower
        guard !token.quoted, !token.capitalized, token.number == nil, word.count >= 3, word.allSatisfy(\.isLetter),
            word.hasSuffix("ed") || word.hasSuffix("ing") || Lexicon.irregularParticiples.contains(word)
        else { return false }
        let english = Self.english
        let kinds = english.partsOfSpeech(of: word)
        // A participle that is also a rare noun ("sent", a coin) is still the verb.
        let noun = kinds.contains(.noun) && !(Lexicon.irregularParticiples.contains(word) && english.senseCount(ofLemma: word, as: .noun) <= 1)
        guard !noun, !(word.hasSuffix("ing") && kinds.contains(.adjective)) else { return false }
        // "reached 70", "relegated in 1990": the verb says what the number is of.
        if tokens[(i + 1)..<min(tokens.count, i + 3)].contains(where: { $0.number != nil }) { return false }
        let rest = tokens[(i + 1)...].filter { !Lexicon.stopWords.contains($0.lower) }
        if rest.isEmpty, i > 0, ["is", "are", "was", "were", "be", "been"].contains(tokens[i - 1].lower) { return false }
        return english.baseForms(word).contains { $0 != word && english.partsOfSpeech(of: $0).contains(.verb) }
    }

    /// The plan of a question that follows none, with what its words ask of the whole rows.
    func assembleAll(_ items: [Item], _ reader: QuestionReader) throws(NotUnderstood) -> Understood {
        var understood = try assemble(items)
        // "all the information about the department Marketing", "all the data from the products":
        // every column of the rows listed.
        let plan = understood.plan
        let tokens = reader.tokens
        let everything = tokens.indices.contains { i in
            guard !tokens[i].used else { return false }
            if ["information", "info", "details"].contains(tokens[i].lower) { return true }
            // "all the data from the products", not "all the data analysts".
            let ends = i + 1 == tokens.count || ["from", "of", "about", "for", "on", "in"].contains(tokens[i + 1].lower)
            return tokens[i].lower == "data" && ends
                && (i >= 1 && tokens[i - 1].lower == "all" || i >= 2 && tokens[i - 2].lower == "all" && tokens[i - 1].lower == "the")
        }
        if everything, plan.measures.isEmpty,
            plan.grouping == nil, !plan.countGroups
        {
            understood.plan.shown = schema.tables[plan.root].columns
            understood.plan.distinct = false
        }
        // "Show all majors": one attribute listed (not what names a row, nor a row's own text)
        // is the set of its values.
        if plan.measures.isEmpty, plan.grouping == nil, !plan.countGroups, plan.limit == nil, plan.order.isEmpty, plan.shown.count == 1,
            plan.conditions.isEmpty, let c = plan.shown.first, schema.column(c).kind == .text, !schema.column(c).isKey,
            !schema.tables[schema.column(c).table].labels.contains(c), !schema.column(c).isFreeText
        {
            understood.plan.distinct = true
        }
        return understood
    }

    /// Refuses a plan that would not answer what the question asks: rows listed under a grouping,
    /// no place for "where", one row meeting "both" conditions, no amount for "how much".
    func refuseAnswersThatMiss(_ understood: Understood, _ reader: QuestionReader) throws(NotUnderstood) {
        // "films by each studio" with nothing to compute per studio: rows listed under a grouping
        // would show one arbitrary row of each group.
        if case .column(let g)? = understood.plan.grouping, understood.plan.measures.isEmpty, !understood.plan.countGroups,
            understood.plan.shown.contains(where: { $0 != g })
        {
            throw NotUnderstood(
                message:
                    "the built-in engine could not tell what to give for each \(schema.column(g).words.joined(separator: " ")); name a count, a total or an average"
            )
        }
        // "Where is the history department?": a place is asked for; an answer without one is no answer.
        if reader.tokens.contains(where: { $0.text == "Where" && !$0.capitalized }) {
            let plan = understood.plan
            let places = plan.shown + (plan.grouping.map { g in if case .column(let c) = g { [c] } else { [] } } ?? [])
            guard places.contains(where: { c in schema.column(c).words.contains(where: Lexicon.placeWords.contains) }) else {
                throw NotUnderstood(message: "the built-in engine could not tell which column says where; name it (datasource_describe lists them)")
            }
        }
        // "locations with both shops opened after 2012 and shops opened before 2008": two groups of rows
        // meeting in one value, not one row meeting both conditions; the engine would read the latter.
        if reader.tokens.contains(where: { $0.lower == "both" }) {
            let onRows = understood.plan.conditions.filter { condition in
                switch condition {
                case .compare(.column(let c), _, _), .oneOf(let c, _), .like(let c, _), .notLike(let c, _): schema.column(c).table == understood.plan.root
                default: false
                }
            }
            if onRows.count >= 2 {
                throw NotUnderstood(message: "the built-in engine does not read 'both … and …' over the same rows; ask for each group in a question of its own")
            }
        }
        // "How much is the track X?": an amount is asked for; a name is no answer.
        let lowered = reader.tokens.map(\.lower)
        if zip(lowered, lowered.dropFirst()).contains(where: { $0 == "how" && $1 == "much" }) {
            let plan = understood.plan
            guard !plan.measures.isEmpty || plan.shown.contains(where: { schema.column($0).kind == .number && !schema.column($0).isKey }) else {
                throw NotUnderstood(message: "the built-in engine could not tell which amount 'how much' asks for; name the column")
            }
        }
    }

    // MARK: - Recognition

    func recognize(_ reader: inout QuestionReader) throws(NotUnderstood) -> [Item] {
        var recognizer = Recognizer(self, tokens: reader.tokens)
        let items = try recognizer.run()
        reader.namedFilters = recognizer.filtersAt.map(\.filter)
        reader.tokens = recognizer.t
        return items
    }

    /// "larger than or equal to", "no less than": a bound that includes its number.
    static let inclusiveComparisons: [([String], QueryPlan.Comparison)] =
        ["more", "greater", "larger", "higher", "bigger"].map { ([$0, "than", "or", "equal", "to"], .greaterOrEqual) }
        + ["less", "fewer", "smaller", "lower"].map { ([$0, "than", "or", "equal", "to"], .lessOrEqual) }
        + [(["no", "less", "than"], .greaterOrEqual), (["no", "fewer", "than"], .greaterOrEqual)]

    /// Words that order a list, and which way.
    static let orderPhrases: [([String], Item)] =
        [
            // "in alphabetical order of theme" orders by the column after it.
            (["sorted", "by", "alphabetical", "order", "of"], .orderBy), (["ordered", "by", "alphabetical", "order", "of"], .orderBy),
            (["sorted", "by", "alphabetical", "order"], .alphabetical), (["ordered", "by", "alphabetical", "order"], .alphabetical),
            (["in", "ascending", "alphabetical", "order", "of"], .orderBy), (["in", "the", "alphabetical", "order", "of"], .orderBy),
            (["in", "alphabetical", "order", "of"], .orderBy), (["in", "ascending", "alphabetical", "order"], .alphabetical),
            (["in", "the", "alphabetical", "order"], .alphabetical), (["in", "an", "alphabetical", "order"], .alphabetical),
            (["by", "alphabetical", "order"], .alphabetical), (["in", "alphabetic", "order"], .alphabetical),
            (["ordered", "by"], .orderBy), (["sorted", "by"], .orderBy), (["order", "by"], .orderBy), (["sort", "by"], .orderBy),
            (["in", "order", "of"], .orderBy), (["in", "the", "order", "of"], .orderBy), (["arranged", "by"], .orderBy), (["ordered", "on"], .orderBy),
            (["sorted", "on"], .orderBy), (["sorted", "using"], .orderBy), (["ordered", "using"], .orderBy),
            (["in", "descending", "order"], .direction(descending: true, ofAge: false)),
            (["in", "ascending", "order"], .direction(descending: false, ofAge: false)),
            (["descending"], .direction(descending: true, ofAge: false)), (["ascending"], .direction(descending: false, ofAge: false)),
            (["desc"], .direction(descending: true, ofAge: false)), (["asc"], .direction(descending: false, ofAge: false)),
            (["in", "decreasing", "order"], .direction(descending: true, ofAge: false)),
            (["in", "increasing", "order"], .direction(descending: false, ofAge: false)),
            (["in", "alphabetical", "order"], .alphabetical), (["alphabetically"], .alphabetical),
        ] + fromToPhrases

    /// "from highest to lowest", "from the greatest to the least", "from youngest to oldest": the
    /// way of an order, from either end to the other.
    static let fromToPhrases: [([String], Item)] = {
        let high = ["highest", "greatest", "largest", "biggest", "most", "maximum", "high", "longest", "latest"]
        let low = ["lowest", "least", "smallest", "fewest", "minimum", "low", "shortest", "earliest"]
        var phrases: [([String], Item)] = []
        for (first, last, descending, ofAge) in high.flatMap({ h in low.map { (h, $0, true, false) } })
            + low.flatMap({ l in high.map { (l, $0, false, false) } }) + [("oldest", "youngest", true, true), ("youngest", "oldest", false, true)]
            // "from oldest to most recent": in time, earliest first.
            + ["newest", "latest", "recent"].flatMap({ [("oldest", $0, false, false), ($0, "oldest", true, false)] })
        {
            let way = Item.direction(descending: descending, ofAge: ofAge)
            // "recent" is said "most recent" or "most recently".
            func said(_ word: String) -> [[String]] { word == "recent" ? [["most", "recent"], ["most", "recently"]] : [[word]] }
            for (a, b) in [([], []), (["the"], ["the"]), (["the"], []), ([], ["the"])] as [([String], [String])] {
                for one in said(first) {
                    for other in said(last) { phrases.append((["from"] + a + one + ["to"] + b + other, way)) }
                }
            }
        }
        return phrases
    }()

    /// Words for what a column measures, and the column-name words that measure it.
    static let concepts: [String: [String]] = [
        "length": Lexicon.durationColumnWords, "duration": Lexicon.durationColumnWords, "long": Lexicon.durationColumnWords,
        "runtime": Lexicon.durationColumnWords, "unit": Lexicon.quantityColumnWords, "units": Lexicon.quantityColumnWords,
        "price": Lexicon.priceColumnWords, "cost": Lexicon.priceColumnWords, "pay": Lexicon.payColumnWords, "salary": Lexicon.payColumnWords,
        "wage": Lexicon.payColumnWords, "size": Lexicon.sizeColumnWords, "quantity": Lexicon.quantityColumnWords,
    ]
}

/// The tables or columns runs of words name, for one interpreter (one schema, one question).
final class NameMemo {
    var items: [[String]: Interpreter.Item?] = [:]
}

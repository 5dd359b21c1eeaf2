import PorticoLexicon

/// Words of a question the schema does not use, read through the English lexicon (WordNet): an
/// inflected or derived form of a schema word ("employed" for employee), a synonym ("clients"
/// for customers), a value of its attribute ("old" for age), or a name run together ("zipcode"
/// for zip_code). Each link is a scored
/// candidate; a word whose best candidates name different schema words links to none.
extension Interpreter {
    /// How a question word links to a schema word, strongest first.
    enum LexicalLink: Int, Comparable, Sendable {
        case attribute = 1, synonym, derived, inflected

        static func < (a: LexicalLink, b: LexicalLink) -> Bool { a.rawValue < b.rawValue }
    }

    static let english = WordNet.english

    /// For each word, the schema's word (or words, for a name run together) the lexicon links it
    /// to, when every word links to one; `nil` otherwise.
    func schemaWords(linking words: [String]) -> [String]? {
        guard !words.isEmpty, words.allSatisfy({ $0.count >= 3 && $0.allSatisfy(\.isLetter) }) else { return nil }
        var out: [String] = []
        for word in words {
            guard let linked = schemaWord(linking: word) else { return nil }
            out.append(linked)
        }
        return out
    }

    /// The schema word `word` links to most strongly, alone at that strength.
    func schemaWord(linking word: String) -> String? {
        if let glued = gluedName(word) { return glued }
        let english = Self.english
        // Words that can only be nouns: a verb or an adjective the engine did not read ("play",
        // "old", "open", "aged") is as often a condition it cannot see as a name.
        let forms = english.baseForms(word)
        guard !forms.isEmpty, forms.allSatisfy({ english.partsOfSpeech(of: $0).allSatisfy { $0 == .noun } }) else { return nil }
        let bases = Set(forms)
        var best: (link: LexicalLink, words: Set<String>)?
        for name in lexicalNames {
            guard let link = link(bases, to: name.bases, isTable: name.isTable) else { continue }
            if best.map({ link > $0.link }) ?? true {
                best = (link, [name.word])
            } else if best?.link == link {
                best?.words.insert(name.word)
            }
        }
        guard let best, best.words.count == 1 else { return nil }
        return best.words.first
    }

    /// How the base forms of a question word link to those of a schema word, at its strongest.
    func link(_ question: Set<String>, to schema: Set<String>, isTable: Bool) -> LexicalLink? {
        let english = Self.english
        if !question.isDisjoint(with: schema) { return .inflected }
        for base in question where !schema.isDisjoint(with: english.related(to: base)) { return .derived }
        for base in schema where !question.isDisjoint(with: english.related(to: base)) { return .derived }
        // The two most frequent senses only: rarer ones link ordinary words to anything.
        for base in question where !schema.isDisjoint(with: english.synonyms(of: base, senses: 2)) { return .synonym }
        for base in question where !schema.isDisjoint(with: english.attributes(of: base)) { return .attribute }
        // A more general word ("vehicles" for automobiles) is not a link: on the studied folds such
        // links were wrong as often as right (a word's many senses reach too far up).
        return nil
    }

    /// A name run together in the question ("zipcode"), as the words of the one schema name it
    /// spells ("zip code" for zip_code).
    func gluedName(_ word: String) -> String? {
        guard let parts = Self.english.split(word) else { return nil }
        let matches = Set(
            (schema.columnList.map(\.words) + schema.tables.map(\.words)).filter { words in
                words.count == parts.count && zip(words, parts).allSatisfy { Lexicon.matches(question: $1, schema: $0) }
            }.map { $0.joined(separator: " ") })
        return matches.count == 1 ? matches.first : nil
    }

    /// The words of the schema's names, each with its base forms (and what an abbreviation stands for).
    var lexicalNames: [(word: String, bases: Set<String>, isTable: Bool)] {
        let tableWords = Set(schema.tables.flatMap(\.words))
        let words = tableWords.union(schema.columnList.flatMap(\.words)).filter { $0.count >= 2 }
        return words.sorted().map { word in
            var bases = Set(Self.english.baseForms(word) + [word])
            if let expansion = Lexicon.abbreviations[word] { bases.insert(expansion) }
            return (word, bases, tableWords.contains(word))
        }
    }
}

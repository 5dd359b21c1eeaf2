import PorticoAskEngine
import PorticoLexicon

/// Words of a question the schema does not use, read through the English lexicon (WordNet): an
/// inflected or derived form of a schema word ("employed" for employee), a synonym ("clients"
/// for customers), a value of its attribute ("old" for age), or a name run together ("zipcode"
/// for zip_code). Each link is a scored candidate; a word whose best candidates name different
/// schema words links to none.
extension Interpreter {
    /// How a question word links to a schema word, strongest first.
    enum LexicalLink: Int, Comparable, Sendable {
        case attribute = 1, synonym, derived, inflected

        static func < (a: LexicalLink, b: LexicalLink) -> Bool { a.rawValue < b.rawValue }
    }

    static let english = WordNet.english

    /// A word of the question to link, with the word after it.
    struct LinkedWord {
        let word: String
        let next: String?
    }

    /// For each word, the schema's word (or words, for a name run together) the lexicon links it
    /// to, when every word links to one; `nil` otherwise. `question` is every word of the question.
    func schemaWords(linking words: [LinkedWord], in question: [String]) -> [String]? {
        guard !words.isEmpty, words.allSatisfy({ $0.word.count >= 3 && $0.word.allSatisfy(\.isLetter) }) else { return nil }
        let names = lexicalNames
        var out: [String] = []
        for word in words {
            guard let linked = gluedName(word.word) ?? schemaWord(linking: word, among: names, in: question) else { return nil }
            out.append(linked)
        }
        return out
    }

    /// The schema word `linked.word` links to most strongly, alone at that strength.
    func schemaWord(linking linked: LinkedWord, among names: [(word: String, bases: Set<String>, numeric: Bool)], in question: [String]) -> String? {
        let word = linked.word
        let english = Self.english
        // A word that can be a verb or an adjective ("play", "old", "open", "aged") is as often a
        // condition the engine cannot see as a name. It links only to a form of itself or a word
        // derived from it ("shipped" to shipment, "advises" to advisor), not to a synonym or an
        // attribute; not as an adjective before the word it describes ("aged players", "open
        // seating"); not to a number ("who play" is no count of games played, "costly" no cost);
        // and not, ending the question, to a word it already says ("how many players play?"),
        // where it says what they do, not which.
        let forms = english.baseForms(word)
        guard !forms.isEmpty else { return nil }
        let onlyNoun = forms.allSatisfy(english.isOnlyNoun)
        if !onlyNoun, english.partsOfSpeech(of: word).contains(.adjective), let next = linked.next, next.allSatisfy(\.isLetter),
            !Lexicon.stopWords.contains(next), !Self.comparisonWords.contains(next)
        {
            return nil
        }
        let neighbours = LexicalNeighbours(of: forms)
        let endsQuestion = linked.next.map { !$0.contains(where: \.isLetter) } ?? true
        var best: (link: LexicalLink, words: Set<String>)?
        for name in names {
            guard let link = neighbours.link(to: name.bases) else { continue }
            if !onlyNoun {
                guard link >= .derived, !name.numeric,
                    !endsQuestion || !question.contains(where: { $0 != word && Lexicon.matches(question: $0, schema: name.word) })
                else { continue }
            }
            if best.map({ link > $0.link }) ?? true {
                best = (link, [name.word])
            } else if best?.link == link {
                best?.words.insert(name.word)
            }
        }
        guard let best, best.words.count == 1 else { return nil }
        return best.words.first
    }

    /// A question word's base forms and the words the lexicon puts around them, looked up once
    /// and compared with every schema word.
    struct LexicalNeighbours {
        let bases: Set<String>
        let related: Set<String>
        let synonyms: Set<String>
        let attributes: Set<String>

        init(of forms: [String]) {
            let english = Interpreter.english
            bases = Set(forms)
            related = Set(forms.flatMap(english.related(to:)))
            // The two most frequent senses only: rarer ones link ordinary words to anything.
            synonyms = Set(forms.flatMap { english.synonyms(of: $0, senses: 2) })
            attributes = Set(forms.flatMap(english.attributes(of:)))
        }

        /// How these link to a schema word's base forms, at their strongest. A more general word
        /// ("vehicles" for automobiles) is not a link: on the studied folds such links were wrong
        /// as often as right (a word's many senses reach too far up).
        func link(to schema: Set<String>) -> LexicalLink? {
            if !bases.isDisjoint(with: schema) { return .inflected }
            if !related.isDisjoint(with: schema) || schema.contains(where: { !bases.isDisjoint(with: Interpreter.english.related(to: $0)) }) {
                return .derived
            }
            if !synonyms.isDisjoint(with: schema) { return .synonym }
            if !attributes.isDisjoint(with: schema) { return .attribute }
            return nil
        }
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

    /// Words that compare, after which a word is no adjective describing the next ("written more than").
    static let comparisonWords: Set<String> = ["more", "less", "fewer", "most", "least", "than", "over", "under", "above", "below"]

    /// The words of the schema's names, each with its base forms (and what an abbreviation stands
    /// for), and whether only number columns are named by it (no table, no other column).
    var lexicalNames: [(word: String, bases: Set<String>, numeric: Bool)] {
        var numeric: [String: Bool] = [:]
        for table in schema.tables { for word in table.words { numeric[word] = false } }
        for column in schema.columnList { for word in column.words { numeric[word] = (numeric[word] ?? true) && column.kind == .number } }
        return numeric.keys.filter { $0.count >= 2 }.sorted().map { word in
            var bases = Set(Self.english.baseForms(word) + [word])
            if let expansion = Lexicon.abbreviations[word] { bases.insert(expansion) }
            return (word, bases, numeric[word] ?? false)
        }
    }
}

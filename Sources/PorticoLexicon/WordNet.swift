internal import CLexicon

/// English as WordNet 3.0 knows it, read in place from the table compiled into the binary
/// (`scripts/make_lexicon.py`): words and their base forms, synonyms, derivationally related
/// forms, attributes and hypernyms. Nothing is parsed at start-up; a lookup is a binary search
/// over the sorted words.
public struct WordNet: Sendable {
    /// A word's part of speech (adjective satellites count as adjectives).
    public enum PartOfSpeech: UInt8, Sendable, CaseIterable {
        case noun, verb, adjective, adverb
    }

    /// The table compiled into this binary.
    public static let english = WordNet(table: Table(bytes: portico_lexicon_bytes(), count: Int(portico_lexicon_size())))

    /// WordNet's licence notice, which goes with every copy of its database.
    public static var notice: String { String(cString: portico_lexicon_notice()) }

    let table: Table

    init(table: Table) {
        self.table = table
    }

    /// Words in the lexicon.
    public var wordCount: Int { table.wordCount }
    /// Bytes of the table.
    public var size: Int { table.count }

    // MARK: Words

    /// Whether `word` (lower case; `_` or a space between the words of a collocation) is a lemma.
    public func contains(_ word: String) -> Bool { id(of: word) != nil }

    /// The parts of speech `word` is a lemma of, most frequent sense first.
    public func partsOfSpeech(of word: String) -> [PartOfSpeech] {
        guard let id = id(of: word) else { return [] }
        var out: [PartOfSpeech] = []
        for synset in table.senses(of: id) {
            let pos = table.partOfSpeech(synset)
            if !out.contains(pos) { out.append(pos) }
        }
        return out
    }

    /// How many senses the lemmas of `form` have together: a rough measure of how common a word is
    /// ("rate" has many, "lyrate" one).
    public func senseCount(of form: String) -> Int {
        baseForms(form).reduce(0) { count, lemma in count + (id(of: lemma).map { table.senses(of: $0).count } ?? 0) }
    }

    /// How many senses the lemma `word` itself has as `pos` ("sent" one as a noun, the Estonian coin).
    public func senseCount(ofLemma word: String, as pos: PartOfSpeech) -> Int {
        id(of: word).map { senses($0, pos: pos).count } ?? 0
    }

    /// Whether every sense of the lemma `word` is a noun ("category", not "first" or "open").
    public func isOnlyNoun(_ word: String) -> Bool {
        let parts = partsOfSpeech(of: word)
        return !parts.isEmpty && parts.allSatisfy { $0 == .noun }
    }

    /// The lemmas `form` is an inflection of (itself included when it is one), by WordNet's own
    /// rules (morphy): its irregular forms ("geese", "sold", "better"), then the regular endings
    /// of each part of speech ("companies" → company, "hired" → hire, "oldest" → old).
    public func baseForms(_ form: String) -> [String] {
        let form = Self.key(form)
        var out: [String] = []
        func add(_ word: String) { if !out.contains(word) { out.append(word) } }
        if contains(form) { add(form) }
        if let irregular = table.exception(form) { for id in irregular { add(table.word(id)) } }
        // An agent noun is not a comparative: "customer" and "owner" are not more "custom" or "own".
        let isNoun = partsOfSpeech(of: form).contains(.noun)
        for (pos, rules) in Self.endings where !(pos == .adjective && isNoun) {
            for (ending, replacement) in rules where form.hasSuffix(ending) && form.count > ending.count {
                let base = String(form.dropLast(ending.count)) + replacement
                if let id = id(of: base), table.senses(of: id).contains(where: { table.partOfSpeech($0) == pos }) { add(base) }
            }
        }
        return out
    }

    /// WordNet's detachment rules, by part of speech.
    static let endings: [(PartOfSpeech, [(String, String)])] = [
        (.noun, [("s", ""), ("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"), ("men", "man"), ("ies", "y")]),
        (.verb, [("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", "")]),
        (.adjective, [("er", ""), ("est", ""), ("er", "e"), ("est", "e")]),
    ]

    // MARK: Relations

    /// The other words of `word`'s synsets, in the order of its senses (most frequent first),
    /// from its first `senses` senses of `pos` (any part of speech when `nil`).
    public func synonyms(of word: String, pos: PartOfSpeech? = nil, senses limit: Int = .max) -> [String] {
        guard let id = id(of: word) else { return [] }
        var out: [String] = []
        for synset in senses(id, pos: pos).prefix(limit) {
            for member in table.members(of: synset) where member != id {
                let name = table.word(member)
                if !out.contains(name) { out.append(name) }
            }
        }
        return out
    }

    /// Words derivationally related to `word` across parts of speech ("employ" ↔ "employee",
    /// "employer", "employment"; "sell" ↔ "sale"), and the nouns its adjectives pertain to.
    public func related(to word: String) -> [String] {
        guard let id = id(of: word) else { return [] }
        return table.related(id).filter { $0 != id }.map(table.word)
    }

    /// The nouns an adjective is a value of, and the adjectives that are values of a noun
    /// ("heavy" ↔ "weight", "old" ↔ "age").
    public func attributes(of word: String) -> [String] {
        guard let id = id(of: word) else { return [] }
        return table.attributes(id).map(table.word)
    }

    /// The words of the synsets `word` is a kind of, up to `depth` steps up, from its first
    /// `senses` senses of `pos` ("car" → motor vehicle, self-propelled vehicle, …).
    public func hypernyms(of word: String, pos: PartOfSpeech? = .noun, senses limit: Int = .max, depth: Int = 1) -> [String] {
        guard let id = id(of: word) else { return [] }
        var out: [String] = []
        var level = Array(senses(id, pos: pos).prefix(limit))
        var seen = Set(level)
        for _ in 0..<depth where !level.isEmpty {
            var next: [Int] = []
            for synset in level {
                for parent in table.hypernyms(of: synset) where seen.insert(parent).inserted {
                    next.append(parent)
                    for member in table.members(of: parent) {
                        let name = table.word(member)
                        if !out.contains(name) { out.append(name) }
                    }
                }
            }
            level = next
        }
        return out
    }

    /// Whether some sense of `word` is, some steps up, a kind of some sense of `kind` (of `pos`
    /// only, when given).
    public func isKind(_ word: String, of kind: String, pos: PartOfSpeech? = nil, depth: Int = 6) -> Bool {
        guard let start = id(of: word), let target = id(of: kind) else { return false }
        let wanted = Set(senses(target, pos: pos))
        var level = senses(start, pos: pos)
        var seen = Set(level)
        for _ in 0..<depth where !level.isEmpty {
            var next: [Int] = []
            for synset in level {
                for parent in table.hypernyms(of: synset) {
                    if wanted.contains(parent) { return true }
                    if seen.insert(parent).inserted { next.append(parent) }
                }
            }
            level = next
        }
        return false
    }

    // MARK: Glued words

    /// The words a name runs together, when the lexicon can read all of it as words of at least
    /// two letters: "zipcode" → zip, code; "studentenrollments" → student, enrollments. Fewer,
    /// longer parts are preferred. `nil` when no reading uses only known words.
    public func split(_ glued: String) -> [String]? {
        split(glued) { part, _, _ in (part.count >= 3 || contains(part)) && !baseForms(part).isEmpty ? [part] : nil }
    }

    /// The words a name runs together, reading each part as `read` says: for the part that runs
    /// from letter `start` to letter `end` (exclusive), the words it stands for, or `nil` when it is
    /// no part. Of the readings that cover the whole name with two parts or more, the one with
    /// fewer, longer parts, then the one of commoner words (more senses: "hourly rate", not "hour
    /// lyrate"). `nil` when none covers it.
    public func split(_ glued: String, reading read: (_ part: String, _ start: Int, _ end: Int) -> [String]?) -> [String]? {
        let letters = Array(Self.key(glued))
        guard letters.count >= 4, letters.count <= 64, letters.allSatisfy({ $0.isLetter }) else { return nil }
        // best[i]: the best reading of the first i letters, scored by the sum of the squares of its
        // parts' lengths, then by their senses.
        var best: [(parts: [String], score: Int, senses: Int)?] = Array(repeating: nil, count: letters.count + 1)
        best[0] = ([], 0, 0)
        for end in 2...letters.count {
            for start in 0...(end - 2) {
                guard let before = best[start] else { continue }
                let part = String(letters[start..<end])
                guard let words = read(part, start, end) else { continue }
                let candidate = (parts: before.parts + words, score: before.score + part.count * part.count, senses: before.senses + senseCount(of: part))
                if best[end].map({ (candidate.score, candidate.senses) > ($0.score, $0.senses) }) ?? true { best[end] = candidate }
            }
        }
        guard let reading = best[letters.count], reading.parts.count >= 2 else { return nil }
        return reading.parts
    }

    // MARK: Lookup

    /// The lexicon's spelling of a word: lower case, `_` between the words of a collocation.
    static func key(_ word: String) -> String {
        word.lowercased().replacing(" ", with: "_")
    }

    func id(of word: String) -> Int? {
        table.find(Array(Self.key(word).utf8))
    }

    func senses(_ id: Int, pos: PartOfSpeech?) -> [Int] {
        let all = table.senses(of: id)
        guard let pos else { return all }
        return all.filter { table.partOfSpeech($0) == pos }
    }
}

/// The compiled table's sections, read in place (little-endian 32-bit numbers).
struct Table: Sendable {
    /// Where the bytes are: the binary's own read-only data, never written (kept as a number, which
    /// is Sendable, rather than as a pointer).
    let address: UInt
    let count: Int
    let wordCount: Int
    let synsetCount: Int
    let exceptionCount: Int
    let words: Int
    let senses: Int
    let synsets: Int
    let related: Int
    let attributes: Int
    let exceptions: Int

    var base: UnsafeRawPointer { UnsafeRawPointer(bitPattern: address)! }

    init(bytes: UnsafePointer<UInt8>, count: Int) {
        address = UInt(bitPattern: bytes)
        self.count = count
        let raw = UnsafeRawBufferPointer(start: UnsafeRawPointer(bytes), count: count)
        precondition(count > 68 && raw[0] == UInt8(ascii: "P") && raw[3] == UInt8(ascii: "1"), "the embedded WordNet table is not one make_lexicon.py writes")
        func header(_ index: Int) -> Int { Int(raw.load(fromByteOffset: 4 + index * 4, as: UInt32.self).littleEndian) }
        wordCount = header(0)
        synsetCount = header(1)
        exceptionCount = header(2)
        words = header(3)
        senses = header(4)
        synsets = header(5)
        related = header(6)
        attributes = header(7)
        exceptions = header(8)
    }

    @inline(__always) func u32(_ offset: Int, _ index: Int) -> Int {
        Int(base.load(fromByteOffset: offset + index * 4, as: UInt32.self).littleEndian)
    }

    /// A strings section: `count + 1` offsets, then the text (padded to four bytes).
    func string(_ section: Int, count: Int, _ index: Int) -> UnsafeRawBufferPointer {
        let text = section + (count + 1) * 4
        let start = u32(section, index)
        return UnsafeRawBufferPointer(start: base + text + start, count: u32(section, index + 1) - start)
    }

    func stringsEnd(_ section: Int, count: Int) -> Int {
        let length = u32(section, count)
        return section + (count + 1) * 4 + (length + 3) / 4 * 4
    }

    /// A lists section: `rows + 1` starts, then the items.
    func list(_ section: Int, rows: Int, _ row: Int) -> [Int] {
        let items = section + (rows + 1) * 4
        return (u32(section, row)..<u32(section, row + 1)).map { u32(items, $0) }
    }

    func listEnd(_ section: Int, rows: Int) -> Int {
        section + (rows + 1) * 4 + u32(section, rows) * 4
    }

    func word(_ id: Int) -> String {
        String(decoding: string(words, count: wordCount, id), as: UTF8.self)
    }

    func find(_ key: [UInt8]) -> Int? {
        Self.search(key, count: wordCount) { string(words, count: wordCount, $0) }
    }

    static func search(_ key: [UInt8], count: Int, _ item: (Int) -> UnsafeRawBufferPointer) -> Int? {
        var low = 0
        var high = count - 1
        while low <= high {
            let middle = (low + high) / 2
            let order = compare(item(middle), key)
            if order == 0 { return middle }
            if order < 0 { low = middle + 1 } else { high = middle - 1 }
        }
        return nil
    }

    static func compare(_ a: UnsafeRawBufferPointer, _ b: [UInt8]) -> Int {
        for index in 0..<min(a.count, b.count) where a[index] != b[index] { return a[index] < b[index] ? -1 : 1 }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }

    func senses(of word: Int) -> [Int] { list(senses, rows: wordCount, word) }

    /// The synsets section: part-of-speech bytes, then members, then hypernyms.
    var synsetMembers: Int { synsets + (synsetCount + 3) / 4 * 4 }
    var synsetHypernyms: Int { listEnd(synsetMembers, rows: synsetCount) }

    func partOfSpeech(_ synset: Int) -> WordNet.PartOfSpeech {
        WordNet.PartOfSpeech(rawValue: base.load(fromByteOffset: synsets + synset, as: UInt8.self)) ?? .noun
    }

    func members(of synset: Int) -> [Int] { list(synsetMembers, rows: synsetCount, synset) }
    func hypernyms(of synset: Int) -> [Int] { list(synsetHypernyms, rows: synsetCount, synset) }
    func related(_ word: Int) -> [Int] { list(related, rows: wordCount, word) }
    func attributes(_ word: Int) -> [Int] { list(attributes, rows: wordCount, word) }

    func exception(_ form: String) -> [Int]? {
        let key = Array(form.utf8)
        guard let index = Self.search(key, count: exceptionCount, { string(exceptions, count: exceptionCount, $0) }) else { return nil }
        return list(stringsEnd(exceptions, count: exceptionCount), rows: exceptionCount, index)
    }
}

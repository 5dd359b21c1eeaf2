import PorticoBase
import PorticoLexicon

/// How the built-in engine reads a table's or column's name as words: camelCase and snake_case
/// split, then each word that is no English word read through the lexicon, as a person reading the
/// schema would: a name run together ("stockitem" → stock item, "qtyonhand" → qty on hand), a name
/// that starts with an abbreviation of its own table ("suppname" of supplier → supplier name), an
/// abbreviation that stands for several words ("dob" → birth date, "fname" → first name).
extension SchemaModel {
    /// The words of `name`, a name of a column of the table named `table` (its words) or of a table.
    package static func readName(_ name: String, table: [String] = []) -> [String] {
        let key = table.isEmpty ? name : name + "\u{1F}" + table.joined(separator: " ")
        if let known = readNames[key] { return known }
        let words = words(name).flatMap { word in Lexicon.expansions[word] ?? unglued(word, table: table) ?? [word] }
        readNames.store(words, for: key)
        return words
    }

    /// The words of `name` as written (`words`), kept as `readName` keeps its reading.
    package static func writtenName(_ name: String) -> [String] {
        let key = "\u{1E}" + name
        if let known = readNames[key] { return known }
        let written = words(name)
        readNames.store(written, for: key)
        return written
    }

    /// Names already read, as read and as written: a schema is read again for every question, its
    /// names stay the same.
    private static let readNames = BoundedCache<String, [String]>(limit: 20_000)

    /// The words `word` runs together, when it is no word itself nor a word misspelt (one letter
    /// off), and every part of one reading (`WordNet.split`) is a word of the lexicon of three
    /// letters or more, a short word inside it ("on" in qtyonhand) or a key's ending ("id", "no"),
    /// an abbreviation the engine knows, or, first, its own table's word abbreviated ("supp", "wh").
    /// `nil` when none reads all of it.
    package static func unglued(_ word: String, table: [String]) -> [String]? {
        guard (4...40).contains(word.count), word.allSatisfy({ $0.isLetter && $0.isASCII }), !isWord(word), !isMisspelt(word) else { return nil }
        let count = word.count
        return WordNet.english.split(word) { part, start, end in
            if start == 0, end < count, let own = ownTable(abbreviated: part, table) { return [own] }
            if let expansion = Lexicon.expansions[part] { return expansion }
            let inside = start > 0 && end < count
            let known =
                part.count >= 3 ? isWord(part) : Lexicon.keyEndings.contains(part) && end == count || Lexicon.shortParts.contains(part) && inside
            return known ? [part] : nil
        }
    }

    /// Whether the lexicon or the engine knows `word` as it is (a word, one of its forms, or an abbreviation).
    package static func isWord(_ word: String) -> Bool {
        Lexicon.abbreviations[word] != nil || Lexicon.expansions[word] != nil || !WordNet.english.baseForms(word).isEmpty
    }

    /// Whether `word` is a word of the lexicon with one letter dropped, added, changed or two
    /// swapped ("appelation"): a misspelt word is not read as a name run together.
    package static func isMisspelt(_ word: String) -> Bool {
        let letters = Array(word)
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz")
        func known(_ candidate: [Character]) -> Bool { candidate.count >= 3 && WordNet.english.contains(String(candidate)) }
        for i in letters.indices {
            var dropped = letters
            dropped.remove(at: i)
            if known(dropped) { return true }
            if i + 1 < letters.count {
                var swapped = letters
                swapped.swapAt(i, i + 1)
                if swapped != letters, known(swapped) { return true }
            }
            for letter in alphabet where letter != letters[i] {
                var changed = letters
                changed[i] = letter
                if known(changed) { return true }
            }
        }
        for i in 0...letters.count {
            for letter in alphabet {
                var added = letters
                added.insert(letter, at: i)
                if known(added) { return true }
            }
        }
        return false
    }

    /// The word of its own table that `part` abbreviates at the start of a column's name: three
    /// letters or more as `Lexicon.abbreviates` says ("supp" of supplier, "emp" of employee), or
    /// two, the table's one word's first letter and one after it ("wh" of warehouse).
    private static func ownTable(abbreviated part: String, _ table: [String]) -> String? {
        guard part.count >= 2 else { return nil }
        if part.count >= 3 { return table.first { Lexicon.abbreviates(part, $0) } }
        guard table.count == 1, let word = table.first, word.count >= 6, word.first == part.first, let second = part.last else { return nil }
        return word.dropFirst().contains(second) ? word : nil
    }
}

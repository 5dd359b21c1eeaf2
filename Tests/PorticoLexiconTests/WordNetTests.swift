import Testing

@testable import PorticoLexicon

/// The compiled WordNet table, read as the engine reads it: base forms, synonyms, derivations,
/// attributes, hypernyms and glued words.
@Suite struct WordNetTests {
    let english = WordNet.english

    @Test func theTableIsTheWholeWordNet() {
        #expect(english.wordCount > 140_000)
        #expect(english.contains("customer") && english.contains("zip code") && english.contains("zip_code"))
        #expect(!english.contains("qzxv"))
        #expect(Set(english.partsOfSpeech(of: "employ")) == [.verb, .noun])
        #expect(WordNet.notice.contains("Princeton University"))
    }

    @Test func inflectionsMeetTheirLemma() {
        #expect(english.baseForms("companies").contains("company"))
        #expect(english.baseForms("hired").contains("hire"))
        #expect(english.baseForms("employed").contains("employ"))
        #expect(english.baseForms("oldest").contains("old"))
        #expect(english.baseForms("sold").contains("sell"), "an irregular form, from the exception lists")
        #expect(english.baseForms("geese") == ["goose"])
        #expect(english.baseForms("boxes").contains("box"))
        #expect(english.baseForms("customer") == ["customer"], "an agent noun is not a comparative")
        #expect(english.baseForms("older").contains("old"))
        #expect(english.baseForms("qzxvs").isEmpty)
    }

    @Test func synonymsComeFromTheWordsSenses() {
        #expect(english.synonyms(of: "automobile").contains("car"))
        #expect(english.synonyms(of: "client", pos: .noun).contains("customer"))
        #expect(english.synonyms(of: "shop", pos: .noun, senses: 1).contains("store"))
        #expect(!english.synonyms(of: "car", pos: .noun, senses: 1).contains("gondola"), "a rare sense is left out when asked for the first")
    }

    @Test func derivationsCrossPartsOfSpeech() {
        let employ = english.related(to: "employ")
        #expect(employ.contains("employee") && employ.contains("employer") && employ.contains("employment"), "\(employ)")
        #expect(english.related(to: "purchase").contains("purchaser"))
        #expect(!english.related(to: "sell").contains("sell"), "not itself")
        #expect(english.related(to: "arrive").contains("arrival"))
        #expect(english.attributes(of: "heavy").contains("weight"))
        #expect(english.attributes(of: "old").contains("age"))
    }

    @Test func hypernymsSayWhatAWordIsAKindOf() {
        #expect(english.hypernyms(of: "car", senses: 1).contains("motor_vehicle"))
        #expect(english.isKind("car", of: "vehicle"))
        #expect(english.isKind("dog", of: "animal"))
        #expect(!english.isKind("vehicle", of: "car"))
    }

    @Test func gluedNamesSplitIntoWords() {
        #expect(english.split("zipcode") == ["zip", "code"])
        #expect(english.split("studentenrollments") == ["student", "enrollments"])
        #expect(english.split("birthdate") == ["birth", "date"])
        #expect(english.split("customer") == nil, "a word is not split")
        #expect(english.split("qzxvbnm") == nil)
    }

    @Test func senseCountsTellCommonWordsFromRareOnes() {
        #expect(english.senseCount(of: "rate") > english.senseCount(of: "lyrate"))
        #expect(english.senseCount(of: "rates") >= english.senseCount(of: "rate"), "an inflection counts its lemma's senses")
        #expect(english.senseCount(of: "qzxvbnm") == 0)
    }
}

import Foundation

/// What a user name looks like, for telling apart names a person could mistake for one another:
/// `ADMIN` and `admin`, or `аdmin` with a Cyrillic а. Two names with the same skeleton are
/// confusable. In the spirit of Unicode's skeletons (UTS #39): case, width and accents folded,
/// compatibility forms composed, then the Cyrillic and Greek letters, digits and letter pairs that
/// pass for Latin letters read as those letters. Not the whole confusables table: the look-alikes
/// of the Latin letters that account names are written in.
enum NameSkeleton {
    static func of(_ name: String) -> String {
        let folded = name.precomposedStringWithCompatibilityMapping
            .folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
            .lowercased()
        var out = String.UnicodeScalarView()
        for scalar in folded.unicodeScalars {
            if let latin = lookalikes[scalar] { out.append(latin) } else { out.append(scalar) }
        }
        return String(out).replacingOccurrences(of: "rn", with: "m").replacingOccurrences(of: "vv", with: "w")
    }

    /// Lower-case letters of other scripts (and digits) that pass for a Latin letter.
    static let lookalikes: [Unicode.Scalar: Unicode.Scalar] = {
        let pairs: [(String, Character)] = [
            // Cyrillic
            ("а", "a"), ("в", "b"), ("ь", "b"), ("е", "e"), ("ё", "e"), ("к", "k"), ("м", "m"), ("н", "h"), ("һ", "h"), ("о", "o"), ("п", "n"),
            ("р", "p"), ("с", "c"), ("т", "t"), ("у", "y"), ("х", "x"), ("ѕ", "s"), ("ј", "j"), ("ԁ", "d"), ("ԛ", "q"),
            ("ԝ", "w"), ("ӏ", "l"), ("г", "r"),
            // Greek
            ("α", "a"), ("β", "b"), ("ε", "e"), ("ζ", "z"), ("η", "n"), ("κ", "k"), ("μ", "u"), ("ν", "v"), ("ο", "o"), ("ρ", "p"),
            ("τ", "t"), ("υ", "u"), ("χ", "x"), ("γ", "y"), ("ω", "w"),
            // Latin and digits
            // A capital I passes for an l, and case is folded first: i, l, 1 and | are one letter.
            ("ı", "l"), ("ɩ", "l"), ("ȷ", "j"), ("ɑ", "a"), ("ɡ", "g"), ("ℓ", "l"), ("0", "o"), ("1", "l"), ("|", "l"), ("i", "l"), ("і", "l"), ("ї", "l"),
            ("ι", "l"),
        ]
        var map: [Unicode.Scalar: Unicode.Scalar] = [:]
        for (other, latin) in pairs {
            for scalar in other.unicodeScalars { map[scalar] = latin.unicodeScalars.first! }
        }
        return map
    }()
}

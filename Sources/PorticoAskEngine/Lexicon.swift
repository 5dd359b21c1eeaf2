/// The built-in engine's English: how words are compared, and the words that carry grammar
/// rather than meaning. Nothing here names a table or column of any database: the vocabulary of
/// a datasource comes from its own schema and values (`SchemaModel`, `ValueIndex`).
package enum Lexicon {
    /// A word's possible singular forms (itself first), so "courses", "categories" and "boxes"
    /// meet "horse", "category" and "box" whichever side is plural.
    package static func forms(_ word: String) -> [String] {
        var out = [word]
        if let irregular = irregularPlurals[word] { out.append(irregular) }
        let count = word.count
        if count > 3, word.hasSuffix("s"), !word.hasSuffix("ss") { out.append(String(word.dropLast())) }
        if count > 4, word.hasSuffix("es") { out.append(String(word.dropLast(2))) }
        if count > 4, word.hasSuffix("ies") { out.append(String(word.dropLast(3)) + "y") }
        // Participles meet their verb and noun: "hired" → "hire", "enrolled" → "enroll".
        if count > 4, word.hasSuffix("ed") { out += [String(word.dropLast(2)), String(word.dropLast())] }
        if count > 5, word.hasSuffix("ing") { out += [String(word.dropLast(3)), String(word.dropLast(3)) + "e"] }
        return out
    }

    package static let irregularPlurals = ["people": "person", "men": "man", "women": "woman", "children": "child", "staff": "staff", "ids": "id"]

    /// Abbreviations in names that stand for several words: Fname is a first name, DOB a date of birth.
    package static let expansions = [
        "fname": ["first", "name"], "lname": ["last", "name"], "mname": ["middle", "name"], "dob": ["birth", "date"], "sqft": ["square", "feet"],
    ]

    /// Words of two letters that may be inside a name run together ("qtyonhand"), and those that
    /// may end one, as a key's name ends ("phoneno", "whid").
    package static let shortParts: Set<String> = ["on", "of", "in", "by", "to", "at"]
    package static let keyEndings: Set<String> = ["id", "no"]
    /// Other words for a first or a last name, as columns are named.
    package static let namesOtherwise: [[String]: [[String]]] = [
        ["first", "name"]: [["forename"], ["given", "name"]], ["last", "name"]: [["surname"], ["family", "name"]],
    ]

    /// Whether a question word means a schema word: the same up to plural, an abbreviation the
    /// schema uses ("rep" for "representative", "qty"), or another form of the same stem
    /// ("purchased" for "purchaser").
    package static func matches(question q: String, schema s: String) -> Bool {
        if q == s { return true }
        let qf = forms(q)
        let sf = forms(s)
        if qf.contains(where: sf.contains) { return true }
        if let expansion = abbreviations[s], qf.contains(expansion) { return true }
        // A schema abbreviation of at least three letters that starts the question's word.
        if s.count >= 3, q.count >= s.count + 3, q.hasPrefix(s), !notAbbreviations.contains(s) { return true }
        // Verb and noun of one stem: "purchased"/"purchaser", "employed"/"employer".
        let common = zip(q, s).prefix { $0 == $1 }.count
        if common >= 6 && max(q.count, s.count) - common <= 2 { return true }
        // A verb and the noun made from it: "departed"/"departure", "arrived"/"arrival", "booked"/"booking".
        if let synonym = synonyms[q], sf.contains(synonym) { return true }
        return qf.contains { stem in stem.count >= 4 && nounEndings.contains { s == stem + $0 || s == stem + "e" + $0 } }
    }

    /// Whether two words differ by one letter added, dropped or changed, or two neighbours swapped.
    package static func oneEditApart(_ a: String, _ b: String) -> Bool {
        let a = Array(a)
        let b = Array(b)
        guard a != b, abs(a.count - b.count) <= 1 else { return false }
        let start = zip(a, b).prefix { $0 == $1 }.count
        let end = zip(a.reversed(), b.reversed()).prefix { $0 == $1 }.count
        if a.count != b.count { return start + end >= max(a.count, b.count) - 1 }
        if start + end == a.count - 1 { return true }
        // A swap: "recieve" and "receive".
        return start + end == a.count - 2 && a[start] == b[start + 1] && a[start + 1] == b[start]
    }

    package static let nounEndings = ["ure", "al", "ment", "ing", "ion", "ance", "up"]

    /// Words that mean a schema word of another stem.
    package static let synonyms = ["born": "birth", "birthday": "birth", "died": "death", "dob": "birth", "gender": "sex"]

    /// Abbreviations common in column names, and what they stand for.
    package static let abbreviations = [
        "qty": "quantity", "amt": "amount", "num": "number", "no": "number", "desc": "description", "addr": "address",
        "prod": "product", "cat": "category", "dob": "birth", "dt": "date", "pct": "percent", "tel": "phone", "org": "organization",
        "mgr": "manager", "yr": "year", "mo": "month", "sec": "second", "lvl": "level", "dept": "department", "acct": "account",
        "qtr": "quarter",
    ]

    /// Whether `short` is a table's abbreviation of `word`, as a prefix of its columns' names: at
    /// least three letters, two shorter than the word, its first two letters and then the rest
    /// in order ("emp" and "employee", "stu" and "students", "dept" and "department").
    package static func abbreviates(_ short: String, _ word: String) -> Bool {
        guard short.count >= 3, short.count + 2 <= word.count, short.prefix(2) == word.prefix(2) else { return false }
        var rest = short.dropFirst(2)[...]
        for character in word.dropFirst(2) where character == rest.first {
            rest = rest.dropFirst()
            if rest.isEmpty { return true }
        }
        return rest.isEmpty
    }

    /// Short words that start longer, unrelated ones ("car" is not "cargo").
    package static let notAbbreviations: Set<String> = ["art", "car", "ban", "can", "con", "man", "pro", "pre", "per", "par", "ten", "tin", "cap", "bar"]

    /// Words of an aggregate function ("the average salary", "the total points").
    package static let functionWords: Set<String> = ["average", "avg", "mean", "total", "sum", "maximum", "max", "minimum", "min"]

    /// Words that carry grammar, politeness or a verb that adds nothing the schema does not say.
    package static let stopWords: Set<String> = [
        "the", "a", "an", "of", "in", "on", "at", "to", "for", "from", "with", "and", "is", "are", "was", "were", "be", "been", "being",
        "do", "does", "did", "have", "has", "had", "having", "there", "that", "which", "who", "what", "whose", "whom", "where", "all", "any",
        "their", "its", "his", "her", "them", "they", "it", "this", "these", "those", "please", "show", "list", "give", "get", "find", "tell", "retrieve",
        "me", "us", "display", "return", "as", "into", "about", "regarding", "also", "just", "can", "could", "would", "you", "i", "we", "my", "our", "your",
        "how", "many", "much", "whole", "overall", "altogether", "ever", "currently", "some", "then", "so", "far", "than", "if", "whether",
        "will", "should", "shall", "may", "might", "must", "out", "up", "s", "both", "either", "what's", "whats", "by", "per", "each", "every",
        "only", "among", "amongst", "between", "across", "within", "instead", "rather", "again", "but", "now", "too",
    ]

    /// Verbs of a place, a body or a work coming into being or out ("opened", "released"), whose
    /// year is the one year column of its table.
    package static let beginningVerbs: Set<String> = [
        "opened", "founded", "established", "started", "built", "launched", "formed", "constructed", "incorporated", "inaugurated",
        "released", "published", "issued", "introduced", "created",
    ]

    /// Words ignored when they name nothing in the schema (a column may be called `type` or `value`).
    package static let softWords: Set<String> = [
        "value", "values", "entry", "entries", "row", "rows", "record", "records", "item", "items", "detail", "details", "information",
        "info", "data", "database", "table", "kind", "kinds", "type", "types", "one", "number", "amount", "name", "names", "full", "exist", "exists",
        "existing",
        "recorded", "stored", "known", "individual", "separate", "registered", "available", "listed", "select", "compute", "output",
        "made", "make", "generate", "generated", "generating", "earn", "earns", "earned", "earning", "bring", "brought", "serve", "serves", "served", "sell",
        "sold", "buy", "bought", "purchase", "purchased", "issue", "issued", "place", "placed", "create", "created", "work", "works",
        "worked", "working", "live", "lives", "living", "located", "based", "belong", "belongs", "contain", "appear", "appears", "come",
        "comes", "offer", "offered", "take", "took", "taken", "teach", "teaches", "taught", "study", "studies", "given", "enrolled",
        "hired", "admitted", "total", "everything", "today", "found", "present", "included", "includes", "include",
        "assigned", "belonging", "related", "linked", "associated", "go", "goes", "went", "got", "gets", "spend", "spent", "need",
        "needs", "use", "used", "uses", "held", "holds", "hold", "ordered", "order", "orders", "operate", "operates", "operated",
        "operating", "run", "runs", "ran", "own", "owns", "owned", "record", "keep", "kept", "happen", "happened", "occur", "occurred",
        "called", "sorted", "arranged",
    ]

    /// Verbs that say only that rows are linked to what the question names after them ("played for
    /// teams from Lisbon"); with nothing named after them ("pupils who play") they are a condition
    /// the engine cannot read.
    package static let linkingVerbs: Set<String> = [
        "produce", "produces", "produced", "involved", "correspond", "corresponds", "participate", "participates", "participated",
        "participating", "receive", "receives", "received", "attend", "attends", "attended", "compete", "competes", "competed", "play",
        "plays", "played", "playing", "provide", "provides", "provided",
    ]

    /// Past participles that do not end in -ed or -en ("sung by", "shown by").
    package static let irregularParticiples: Set<String> = [
        "done", "led", "sung", "won", "held", "made", "paid", "sent", "built", "bought", "sold", "told", "taught", "caught", "brought",
        "read", "run", "met", "kept", "left", "lost", "found", "set", "put", "shot", "struck", "hit", "cut", "fed", "bred", "spent", "lent",
        "shown", "drawn", "known", "grown", "thrown", "flown",
    ]

    /// Participles whose "by" groups or orders ("categorized by department", "ranked by salary").
    package static let groupingParticiples: Set<String> = [
        "categorized", "categorised", "grouped", "listed", "ranked", "sorted", "ordered", "arranged", "broken", "classified", "split",
        "divided", "organized", "organised", "partitioned", "aggregated", "summarized", "summarised", "counted", "totaled", "totalled",
        "averaged", "paid", "given", "shown", "followed", "increased", "decreased", "multiplied",
    ]
    /// Words that end like a participle and are none.
    package static let notParticiples: Set<String> = [
        "then", "when", "even", "often", "seven", "eleven", "ten", "between", "open", "children", "women", "men", "garden", "token", "kitchen",
    ]

    /// "the status shared by cities above 1500 and cities under 500": a value common to two groups
    /// of rows, which the engine does not read; not a passive verb to pass over.
    package static let sharedWords: Set<String> = ["shared"]

    /// What a text match names before the text: "containing the word 'court'".
    package static let textKinds: Set<String> = ["letter", "word", "substring", "string", "phrase", "character", "characters", "letters"]

    /// "don't", "didn't" as the question reader spells them, apostrophe dropped: a "not".
    package static let negatedVerbs: Set<String> = [
        "dont", "doesnt", "didnt", "isnt", "arent", "wasnt", "werent", "havent", "hasnt", "hadnt", "cannot", "cant", "wont",
    ]

    /// Superlatives of a size, a time or a price: they rank by a column, never by a count of rows.
    package static let dimensionWords: Set<String> = [
        "longest", "shortest", "oldest", "youngest", "newest", "earliest", "latest", "recently", "tallest", "heaviest", "lightest",
        "cheapest", "expensive", "fastest", "slowest", "richest", "poorest", "hottest", "coldest", "warmest",
    ]

    /// Verbs that ask for a change: the engine only reads, so these are refused outright.
    package static let writeVerbs: Set<String> = [
        "delete", "remove", "drop", "update", "insert", "add", "create", "change", "modify", "truncate", "alter", "rename", "replace", "set",
        "erase", "wipe", "purge", "destroy", "grant", "revoke", "edit", "move", "merge", "upsert",
    ]

    package static let months = [
        "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7, "august": 8, "september": 9, "october": 10,
        "november": 11, "december": 12, "jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9, "oct": 10,
        "nov": 11, "dec": 12,
    ]

    package static let numberWords = [
        "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11,
        "twelve": 12, "fifteen": 15, "twenty": 20, "fifty": 50, "hundred": 100,
    ]

    /// Names of currencies, one of which is an amount ("more than a dollar"); not pounds, which weigh too.
    package static let moneyUnits: Set<String> = ["dollar", "dollars", "euro", "euros", "usd", "eur", "gbp", "bucks", "yen", "yuan"]

    /// Verbs of trade: after a negation, the rows of the sales that would name the rows asked about.
    package static let tradeVerbs: Set<String> = ["sold", "bought", "purchased", "ordered", "sell", "buy", "purchase", "order"]

    /// Words of a money measure: what a sale brought in.
    package static let moneyWords: Set<String> = [
        "revenue", "sale", "sales", "income", "spending", "spend", "spent", "earning", "earnings", "turnover", "money", "billed",
        "paid", "payment", "payments", "gross",
    ]

    /// Column-name words of a place: what a question that asks "where" must show.
    package static let placeWords: Set<String> = [
        "location", "locations", "address", "city", "place", "building", "room", "office", "country", "state", "located", "venue", "site",
        "hometown", "town", "region", "street", "area", "campus", "port", "airport", "station",
    ]

    /// Column-name words that hold a money amount of a sale, strongest first.
    package static let moneyColumnWords = ["total", "amount", "revenue", "sale", "sales", "price", "cost", "value", "paid", "payment", "subtotal"]
    package static let quantityColumnWords = ["quantity", "qty", "units"]
    /// Units that end a column's name after what it measures (`max_temperature_f`,
    /// `Damage_millions_USD`, `Sales_in_Billion`): the name without them is what a question says.
    package static let unitWords: Set<String> = [
        "f", "c", "fahrenheit", "celsius", "inch", "inches", "mph", "kph", "kmh", "usd", "eur", "gbp", "dollars", "thousand", "thousands",
        "million", "millions", "billion", "billions", "kb", "mb", "gb", "mib", "gib", "kg", "kgs", "lb", "lbs", "km", "cm", "mm", "ft", "feet",
        "miles", "meters", "metres",
    ]

    /// Words of grammar that are also words of some columns' names ("room count", "weeks on top",
    /// "max temperature"): a column named whole by them is read before the grammar is.
    package static let grammarInNames: Set<String> = [
        "count", "counts", "max", "maximum", "min", "minimum", "mean", "average", "avg", "total", "top", "highest", "lowest",
    ]

    package static let durationColumnWords = ["duration", "length", "runtime", "time", "elapsed"]
    package static let priceColumnWords = ["price", "cost", "fee", "rate", "amount", "total"]
    package static let payColumnWords = ["salary", "pay", "wage", "wages", "compensation", "income"]
    package static let sizeColumnWords = ["size", "weight", "area", "capacity", "volume"]

    /// Whether a column-name word says the column holds a duration: a word for one, or a time
    /// unit, with any prefix ("seconds", "duration_ms" reads as "ms" too short to tell).
    package static func isDuration(_ word: String) -> Bool {
        if durationColumnWords.contains(word) { return true }
        return forms(word).contains { form in ["second", "minute", "hour"].contains { form.hasSuffix($0) } }
    }
}

import PorticoAskEngine

extension Recognizer {
    /// Operators and grammar first: their words are never schema names here. Each word left
    /// unread is offered to each reading in turn, and the first that reads it wins.
    mutating func readGrammar() {
        for i in t.indices where !t[i].used {
            if readQuantity(at: i) { continue }
            if readOrder(at: i) { continue }
            if readComparison(at: i) { continue }
            if readCount(at: i) { continue }
            if readSuperlative(at: i) { continue }
            if readGrouping(at: i) { continue }
            _ = readTextMatchAndQuestionWords(at: i)
        }
    }

    /// Quoted text, dates, numbers and what bounds them, months and ages.
    mutating func readQuantity(at i: Int) -> Bool {
        if t[i].quoted {
            t[i].used = true
            items.append((i, .text(t[i].text)))
            return true
        }
        if phrase(i, ["as", "well", "as"]) {
            // "the average, as well as the total": an "and".
            for k in i..<(i + 3) { t[k].used = true }
            return true
        }
        if let day = t[i].day {
            take(i, 1, .day(day))
            return true
        }
        // "between 2009-01-01 and 2010-01-01": from the first day through the last.
        if t[i].lower == "between", i + 3 < t.count, let low = t[i + 1].day, t[i + 2].lower == "and", let high = t[i + 3].day {
            take(i, 1, .compare(.greaterOrEqual, word: "since"))
            take(i + 1, 1, .day(min(low, high)))
            take(i + 2, 1, .compare(.lessOrEqual, word: "until"))
            take(i + 3, 1, .day(max(low, high)))
            return true
        }
        if let n = t[i].number ?? (word(i).flatMap { Lexicon.numberWords[$0] }.map(Double.init)), n == n.rounded(),
            let bound = [
                ("more", QueryPlan.Comparison.greaterOrEqual), ("greater", .greaterOrEqual), ("above", .greaterOrEqual),
                ("higher", .greaterOrEqual), ("fewer", .lessOrEqual), ("less", .lessOrEqual), ("below", .lessOrEqual), ("lower", .lessOrEqual),
                ("after", .greaterOrEqual), ("later", .greaterOrEqual), ("before", .lessOrEqual), ("earlier", .lessOrEqual),
                ("older", .greaterOrEqual), ("younger", .lessOrEqual),
            ]
            .first(where: { phrase(i + 1, ["or", $0.0]) && (!["after", "later", "before", "earlier"].contains($0.0) || n >= 1000 && n <= 2999) }),
            // Not "greater than 200 or less than 190", "after 1961 or before 1959": a comparison of its own.
            !(word(i + 3) == "than" || t.indices.contains(i + 3) && t[i + 3].number != nil || word(i + 3) == "the" && word(i + 4) == "year")
        {
            // "3 or more actors": at least 3; the bound before its number, as "more than 3" reads.
            // "in 2005 or after": a year, from it on.
            let inTime = ["after", "later", "before", "earlier"].contains(bound.0)
            t[i + 1].used = true
            t[i + 2].used = true
            items.append((i, .compare(bound.1, word: bound.0)))
            take(i, 1, inTime ? .year(Int(n)) : .number(n, unit: nil))
            return true
        }
        if t[i].number != nil, !t[i].quoted, let entries = valueOfATextColumnNamedBefore(i) {
            // "the customer with account name 162", "whose tracking number is 3452": a value of the
            // text column named just before it.
            take(i, 1, .value(entries, phrase: t[i].text, partial: false))
            return true
        }
        if let n = t[i].number, t[i].money {
            // "$2000", "20 €": an amount of money, never a year. ("700 dollars" is left to the names:
            // a column may be named in dollars.)
            take(i, 1, .number(n, unit: "dollars"))
            return true
        }
        if let w = word(i), ["a", "one"].contains(w), let unit = word(i + 1), Lexicon.moneyUnits.contains(unit), !unit.hasSuffix("s") {
            // "more than a dollar": one of the currency.
            take(i, 2, .number(1, unit: "dollars"))
            return true
        }
        if let n = t[i].number {
            let next = word(i + 1)
            // "more than 2000 distance": a number before a column of numbers is not a year.
            let countsColumn: Bool = {
                guard let next, case .columns(let cs)? = schemaItem([next]) else { return false }
                return cs.allSatisfy { schema.column($0).kind == .number && !schema.column($0).isYear && !schema.column($0).isKey }
            }()
            if n == n.rounded(), n >= 1900, n <= 2100, !countsColumn,
                !(next.map { ["minute", "minutes", "second", "seconds", "ms"].contains($0) } ?? false)
            {
                take(i, 1, .year(Int(n)))
            } else {
                let units: Set<String> = ["minute", "minutes", "second", "seconds", "hour", "hours", "ms", "millisecond", "milliseconds", "day", "days"]
                let ages = agesOfNamedTables(t)
                if let next, units.contains(next) {
                    take(i, 2, .number(n, unit: next))
                } else if ["year", "years", "yrs"].contains(next ?? ""), word(i + 2) == "old", !ages.isEmpty {
                    // "20 years old": the number is an age.
                    take(i, 1, .number(n, unit: nil))
                    take(i + 1, 2, .columns(ages))
                } else {
                    take(i, 1, .number(n, unit: nil))
                }
            }
            return true
        }
        return false
    }

    /// Months, ages, and the words that order a list or ask for distinct values.
    mutating func readOrder(at i: Int) -> Bool {
        let w = t[i].lower
        if let month = Lexicon.months[w], w.count >= 3, !(w == "may" && t[i].capitalized == false && i > 0) {
            if let n = t.indices.contains(i + 1) ? t[i + 1].number : nil, n >= 1900, n <= 2100 {
                take(i, 2, .month(month, year: Int(n)))
            } else {
                take(i, 1, .month(month, year: nil))
            }
            return true
        }
        if w == "aged", let next = t.indices.contains(i + 1) ? t[i + 1] : nil,
            next.number != nil || ["either", "between", "over", "under", "above", "below", "from"].contains(next.lower),
            case let ages = agesOfNamedTables(t), !ages.isEmpty
        {
            // "the people aged 35 or 36", "pilots aged over 30": their age.
            take(i, 1, .columns(ages))
            return true
        }
        if let article = ([[], ["the"], ["a"], ["an"]] as [[String]]).first(where: { a in
            ["ascending", "descending", "increasing", "decreasing"].contains { phrase(i, ["in"] + a + [$0, "order", "of"]) }
        }) {
            // "in (the) descending order of population": the way, then what orders.
            let way = word(i + 1 + article.count)
            take(i, 3 + article.count, .direction(descending: way == "descending" || way == "decreasing", ofAge: false))
            take(i + 3 + article.count, 1, .orderBy)
            return true
        }
        if let way = ["descending", "reverse", "ascending"].first(where: { phrase(i, ["in", $0, "alphabetical", "order"]) }) {
            // "in descending alphabetical order", "in reverse alphabetical order (of name)": the way, then the order.
            take(i, 2, .direction(descending: way != "ascending", ofAge: false))
            if word(i + 4) == "of" { take(i + 2, 3, .orderBy) } else { take(i + 2, 2, .alphabetical) }
            return true
        }
        if let (words, item) = Interpreter.orderPhrases.first(where: { phrase(i, $0.0) }) {
            take(i, words.count, item)
            return true
        }
        if w == "report", schemaItem([w]) == nil,
            i == 0 || t[i].text.first?.isUppercase == true || t[i - 1].beforeComma
                || ["just", "please", "and", "also", "then", "only"].contains(t[i - 1].lower)
        {
            // "Report the name of all campuses", "Just report the room names": a request to show.
            t[i].used = true
            return true
        }
        if w == "sort", word(i + 1) != "by" {
            // "Sort the rooms by price", "Sort the names in descending order of …": a request to order,
            // ascending unless a way is said later.
            let wayLater = t[(i + 1)...].contains {
                ["ascending", "descending", "decreasing", "increasing", "alphabetical", "alphabetically"].contains($0.lower)
            }
            if wayLater {
                t[i].used = true
            } else {
                take(i, 1, .direction(descending: false, ofAge: false))
            }
            return true
        }
        if ["distinct", "different", "unique"].contains(w) {
            take(i, 1, .distinct)
            return true
        }
        return false
    }

    /// Comparatives that may have a column's name between them and "than".
    static let comparatives: [String: QueryPlan.Comparison] = [
        "more": .greater, "greater": .greater, "higher": .greater, "larger": .greater, "bigger": .greater, "longer": .greater,
        "less": .less, "fewer": .less, "lower": .less, "smaller": .less, "shorter": .less,
    ]

    /// How many words after `i` name a column of numbers, when "than" and a number follow them.
    func columnBeforeThanANumber(after i: Int) -> Int? {
        for n in 1...3 where i + n + 2 < t.count && word(i + n + 1) == "than" && t[i + n + 2].number != nil {
            let span = (i + 1)...(i + n)
            guard span.allSatisfy({ word($0) != nil && t[$0].number == nil && !Lexicon.stopWords.contains(t[$0].lower) }),
                case .columns(let cs)? = schemaItem(span.map { t[$0].lower }), cs.contains(where: { schema.column($0).kind == .number })
            else { continue }
            return n
        }
        return nil
    }

    /// Comparisons ("more than", "at least a"), and "corresponding" or "along with".
    mutating func readComparison(at i: Int) -> Bool {
        let w = t[i].lower
        let comparisons: [([String], QueryPlan.Comparison)] =
            Interpreter.inclusiveComparisons + [
                (["more", "than"], .greater), (["greater", "than"], .greater), (["higher", "than"], .greater), (["larger", "than"], .greater),
                (["bigger", "than"], .greater), (["longer", "than"], .greater), (["older", "than"], .greater), (["younger", "than"], .less),
                (["later", "than"], .greater), (["earlier", "than"], .less), (["at", "least"], .greaterOrEqual),
                (["less", "than"], .less), (["fewer", "than"], .less), (["lower", "than"], .less), (["smaller", "than"], .less),
                (["shorter", "than"], .less), (["cheaper", "than"], .less), (["at", "most"], .lessOrEqual), (["no", "more", "than"], .lessOrEqual),
                (["more", "expensive", "than"], .greater), (["less", "expensive", "than"], .less), (["over"], .greater), (["above"], .greater),
                (["exceeding"], .greater),
                (["under"], .less), (["below"], .less), (["after"], .greater), (["since"], .greaterOrEqual), (["before"], .less),
                (["exactly"], .equal), (["equal", "to"], .equal),
                ([">"], .greater), ([">="], .greaterOrEqual), (["≥"], .greaterOrEqual), (["=>"], .greaterOrEqual), (["<"], .less),
                (["<="], .lessOrEqual), (["≤"], .lessOrEqual), (["=<"], .lessOrEqual), (["="], .equal), (["=="], .equal),
                (["!="], .notEqual), (["<>"], .notEqual), (["≠"], .notEqual),
            ]
        if phrase(i, ["at", "least", "a"]) || phrase(i, ["at", "least", "an"]), i + 3 < t.count, t[i + 3].number == nil,
            !["hundred", "thousand", "million", "dozen", "few", "couple", "lot", "total"].contains(t[i + 3].lower)
        {
            // "clubs that have at least a member from …": at least one (not "at least a hundred").
            take(i, 2, .compare(.greaterOrEqual, word: "at"))
            take(i + 2, 1, .number(1, unit: nil))
            return true
        }
        if let op = Self.comparatives[w], let span = columnBeforeThanANumber(after: i) {
            // "a higher resolution than 720", "more total passengers than 10000000": the column named
            // between the comparative and "than" is compared, as in "resolution over 720".
            take(i, 1, .compare(op, word: w))
            t[i + span + 1].used = true
            return true
        }
        if let (words, op) = comparisons.first(where: { phrase(i, $0.0) }) {
            // "more expensive than 5000": a price compared, as "cheaper than" says.
            take(i, words.count, .compare(op, word: words.count == 3 && words[1] == "expensive" ? "expensive" : words[0]))
            return true
        }
        // "their respective …" says what "corresponding" says.
        let corresponding = w == "corresponding" || w == "respective" && i > 0 && ["their", "its"].contains(t[i - 1].lower)
        if corresponding, phrase(i + 1, ["number", "of"]) || word(i + 1) == "count" {
            // "all majors and the corresponding number of students" (`correspondingAsEach`).
            take(i, 1, .correspondingMarker)
            return true
        }
        // "together with" says what "along with" says.
        let alongWith = ["along", "together"].contains(w) && word(i + 1) == "with"
        if alongWith, phrase(i + 2, ["the", "number", "of"]) || phrase(i + 2, ["number", "of"]) {
            // "all the buildings along with the number of faculty members": the same.
            take(i, 2, .correspondingMarker)
            return true
        }
        if corresponding || alongWith {
            // "the room numbers and corresponding buildings", "each age along with …": an "and".
            t[i].used = true
            if alongWith { t[i + 1].used = true }
            return true
        }
        return false
    }

    /// Counts ("how many", "the number of") and the functions over a column ("average", "maximum").
    mutating func readCount(at i: Int) -> Bool {
        let w = t[i].lower
        if phrase(i, ["count", "the", "number", "of"]) || phrase(i, ["count", "the", "total", "number", "of"]) {
            take(i, phrase(i, ["count", "the", "number", "of"]) ? 4 : 5, .count)
            return true
        }
        if phrase(i, ["how", "many"]) || phrase(i, ["number", "of"]), let next = word(i + 2), schemaItem([next])?.isTable != true,
            case let cs = countColumns(of: next), !cs.isEmpty
        {
            // "the number of rooms of each apartment" where a column holds it (room_count): that column,
            // not a count of rows; "how many rooms (in total)": its sum, over one row or many.
            if w == "how" || phrase(i + 3, ["in", "total"]) {
                take(i, 1, .function(.sum))
                take(i + 1, 2, .columns(cs))
            } else {
                take(i, 3, .columns(cs))
            }
            return true
        }
        // "the numbers of roller coasters for each status": a count of each, said in the plural.
        // Its "each" soon after, in the same clause ("the numbers of the rooms that each guest booked" are not).
        let numbersOfEach =
            phrase(i, ["numbers", "of"])
            && t[(i + 2)..<min(t.count, i + 8)].prefix { !["that", "which", "who", "whose", "where"].contains($0.lower) }.contains {
                ["each", "per"].contains($0.lower)
            }
        if phrase(i, ["how", "many"]) || phrase(i, ["number", "of"]) || phrase(i, ["count", "of"]) || w == "count" || numbersOfEach {
            take(i, w == "count" ? 1 : 2, .count)
            return true
        }
        if phrase(i, ["in", "total"]) {
            take(i, 2, .groupMarker(each: false))
            items.removeLast()
            return true
        }
        if Lexicon.functionWords.contains(w), startsAColumnName(i) {
            // "the total passengers" of Total_Passengers, "the average attendance" of Average_Attendance:
            // the column's own name, read with the schema's words later.
            return true
        }
        if ["average", "avg", "mean"].contains(w) {
            take(i, 1, .average)
            return true
        }
        if w == "total", phrase(i + 1, ["number", "of"]) || word(i + 1) == "count", let noun = word(i + 3), schemaItem([noun])?.isTable == true,
            countColumns(of: noun).isEmpty
        {
            // "the total number of invoices": a count of rows, which "total" only stresses.
            t[i].used = true
            return true
        }
        if ["total", "sum"].contains(w) {
            take(i, 1, .function(.sum))
            return true
        }
        if ["maximum", "max", "minimum", "min"].contains(w), i > 0,
            ["with", "has", "have", "had"].contains(t[i - 1].lower == "the" && i > 1 ? t[i - 2].lower : t[i - 1].lower)
        {
            // "the aircraft with the maximum distance": the one ranked first, as "the longest".
            take(i, 1, .superlative(descending: w.hasPrefix("max"), word: w))
            return true
        }
        if ["maximum", "max"].contains(w) {
            take(i, 1, .function(.max))
            return true
        }
        if ["minimum", "min"].contains(w) {
            take(i, 1, .function(.min))
            return true
        }
        return false
    }

    /// Superlatives ("the most recently", "the most common", "the cheapest") and "top" or "bottom".
    mutating func readSuperlative(at i: Int) -> Bool {
        let w = t[i].lower
        if w == "most", word(i + 1) == "recently" {
            // "the most recently opened track": the latest of a date, as "the latest".
            take(i, 2, .superlative(descending: true, word: "recently"))
            return true
        }
        if ["most", "least"].contains(w), let next = word(i + 1), ["common", "frequent", "frequently", "often", "popular"].contains(next) {
            // "the most common status": the value most rows have (`mostCommonAsCount`).
            take(i, 2, .superlative(descending: w == "most", word: "common"))
            return true
        }
        if ["most", "least"].contains(w), word(i + 1) == "widely", ["used", "held", "spoken", "owned"].contains(word(i + 2) ?? "") {
            // "the flag most widely used among all ships": the most common.
            take(i, 3, .superlative(descending: w == "most", word: "common"))
            return true
        }
        if phrase(i, ["most", "expensive"]) || phrase(i, ["least", "expensive"]) || phrase(i, ["highest", "paid"])
            || phrase(i, ["lowest", "paid"]) || phrase(i, ["best", "paid"]) || phrase(i, ["most", "recent"])
        {
            take(i, 2, .superlative(descending: ["most", "highest", "best"].contains(w), word: t[i + 1].lower))
            return true
        }
        let descending = [
            "most", "highest", "largest", "biggest", "greatest", "longest", "top", "latest", "newest", "heaviest", "best", "oldest", "tallest",
        ]
        let ascending = ["least", "fewest", "lowest", "smallest", "shortest", "cheapest", "earliest", "bottom", "lightest", "worst", "youngest"]
        if ["top", "bottom"].contains(w) {
            // "the top three lowest distances": the superlative after it sets the order, "top" only the count.
            let n = t.indices.contains(i + 1) && !t[i + 1].used ? t[i + 1].number ?? word(i + 1).flatMap { Lexicon.numberWords[$0] }.map(Double.init) : nil
            if let next = word(n == nil ? i + 1 : i + 2), next != w, descending.contains(next) || ascending.contains(next) {
                t[i].used = true
                if let n, n == n.rounded(), n > 0, n < 10000 { take(i + 1, 1, .top(Int(n))) }
                return true
            }
        }
        if descending.contains(w) || ascending.contains(w) {
            // The oldest date is the smallest; the youngest birth date the largest.
            let isDescending = w == "oldest" ? false : w == "youngest" ? true : descending.contains(w)
            take(i, 1, .superlative(descending: isDescending, word: w))
            if let n = t.indices.contains(i + 1) ? t[i + 1].number : nil, n == n.rounded(), n > 0, n < 10000, !(n >= 1900 && n <= 2100) {
                take(i + 1, 1, .top(Int(n)))
            }
            return true
        }
        return false
    }

    /// Groupings ("for each", "per", "by") and time buckets ("yearly", "each month").
    mutating func readGrouping(at i: Int) -> Bool {
        let w = t[i].lower
        if phrase(i, ["for", "each"]) || phrase(i, ["in", "each"]) || phrase(i, ["for", "every"]) || phrase(i, ["grouped", "by"])
            || phrase(i, ["broken", "down", "by"]) || phrase(i, ["by", "each"]) || phrase(i, ["of", "each"])
        {
            let n = phrase(i, ["broken", "down", "by"]) ? 3 : 2
            take(i, n, .groupMarker(each: !phrase(i, ["grouped", "by"]) && !phrase(i, ["broken", "down", "by"])))
            return true
        }
        // "written by", "produced by": the doer follows, not a grouping (unless a column is named so).
        if w == "by", i > 0, !t[i - 1].used, isPassiveVerb(at: i - 1, of: t),
            !schema.columnList.contains(where: { $0.words.contains("by") })
        {
            t[i].used = true
            return true
        }
        if w == "year", i > 1, word(i - 1) == "the", ["before", "after", "since", "until"].contains(t[i - 2].lower),
            let n = t.indices.contains(i + 1) && t[i + 1].number != nil
                ? t[i + 1].number : (word(i + 1) == "of" && t.indices.contains(i + 2) ? t[i + 2].number : nil),
            n == n.rounded(), n >= 1000, n <= 2999
        {
            // "before the year of 2006": the year said, not a column named Year.
            t[i].used = true
            if word(i + 1) == "of" { t[i + 1].used = true }
            return true
        }
        if ["each", "per", "by", "every"].contains(w) {
            take(i, 1, .groupMarker(each: w == "each" || w == "every"))
            return true
        }
        if ["year", "years", "month", "months"].contains(w), items.last?.1.isGroupMarker == true {
            take(i, 1, .bucket(w.hasPrefix("year") ? .year : .month))
            return true
        }
        // "monthly rental" may be a column's name (monthly_rental), read with the schema's words later.
        let namesAColumn = word(i + 1).map { next in if case .columns? = schemaItem([w, next]) { return true } else { return false } } ?? false
        if ["yearly", "annual", "annually"].contains(w), !namesAColumn {
            take(i, 1, .bucket(.year))
            return true
        }
        if w == "monthly", !namesAColumn {
            take(i, 1, .bucket(.month))
            return true
        }
        return false
    }

    /// Text matches ("containing", "starting with"), ranges, negations, "or", question words and number words.
    mutating func readTextMatchAndQuestionWords(at i: Int) -> Bool {
        let w = t[i].lower
        if ["containing", "contains", "contain", "including", "includes", "include", "mentioning", "like"].contains(w) {
            take(i, 1, .textMatch(.contains))
            let j = afterTextKind(i + 1)
            takeUnquotedText(j, strict: w != "containing" && j == i + 1)
            return true
        }
        // "albums that have 'Greatest Hits' in the title", "with 'love' in their names": a quoted
        // text said to be in a column is part of its value, not all of it.
        if ["has", "have", "having", "with"].contains(w), i + 2 < t.count, t[i + 1].quoted, word(i + 2) == "in" {
            take(i, 1, .textMatch(.contains))
            return true
        }
        // "has the substring 'Ha'", "with the letter a in their names".
        let afterArticle = i > 1 && ["the", "a"].contains(t[i - 1].lower) ? i - 2 : i - 1
        if Lexicon.textKinds.contains(w), i + 1 < t.count, t[i + 1].quoted || (t[i + 1].text.count == 1 && t[i + 1].number == nil),
            afterArticle >= 0, ["has", "have", "having", "with", "without"].contains(t[afterArticle].lower), !schemaWords([w])
        {
            take(i, 1, .textMatch(.contains))
            takeUnquotedText(i + 1)
            return true
        }
        if phrase(i, ["starting", "with"]) || phrase(i, ["starts", "with"]) || phrase(i, ["beginning", "with"]) || phrase(i, ["begins", "with"])
            || phrase(i, ["start", "with"])
        {
            take(i, 2, .textMatch(.starts))
            takeUnquotedText(afterTextKind(i + 2))
            return true
        }
        if phrase(i, ["ending", "with"]) || phrase(i, ["ends", "with"]) || phrase(i, ["end", "with"]) {
            take(i, 2, .textMatch(.ends))
            takeUnquotedText(afterTextKind(i + 2))
            return true
        }
        if w == "between", i + 3 < t.count, let low = t[i + 1].number, word(i + 2) == "and", let high = t[i + 3].number,
            !(low >= 1900 && low <= 2100 && low == low.rounded())
        {
            take(i, 4, .range(min(low, high), max(low, high)))
            return true
        }
        if w == "between", i + 3 < t.count, let low = t[i + 1].number, word(i + 2) == "and", let high = t[i + 3].number,
            [low, high].allSatisfy({ $0 >= 1900 && $0 <= 2100 && $0 == $0.rounded() }), low <= high
        {
            // "between 2014 and 2017": from the first year through the last.
            take(i, 1, .compare(.greaterOrEqual, word: "between"))
            take(i + 1, 1, .year(Int(low)))
            take(i + 2, 1, .compare(.lessOrEqual, word: "and"))
            take(i + 3, 1, .year(Int(high)))
            return true
        }
        if phrase(i, ["out", "of"]) {
            // "out of stock": the yes/no column's no.
            take(i, 2, .negation)
            return true
        }
        if ["no", "without", "never", "none", "not"].contains(w) || Lexicon.negatedVerbs.contains(w) {
            take(i, 1, .negation)
            return true
        }
        if w == "or" {
            take(i, 1, .or)
            return true
        }
        if phrase(i, ["how", "old"]), case let ages = agesOfNamedTables(t), !ages.isEmpty {
            // "How old is each student?": their age.
            take(i, 2, .columns(ages))
            return true
        }
        if w == "which" || w == "what" && (word(i + 1).map { !["is", "was", "are", "were"].contains($0) } ?? false) {
            take(i, 1, .which)
            return true
        }
        if w == "who" || w == "whom" {
            take(i, 1, .who)
            return true
        }
        // "the one with the maximum price", "which one": a pronoun, not the number 1.
        let counted = ["than", "least", "most", "exactly"].contains(i > 0 ? t[i - 1].lower : "")
        let pronoun =
            w == "one" && !counted
            && (["the", "which", "each", "every", "any", "this", "that"].contains(i > 0 ? t[i - 1].lower : "")
                || ["with", "that", "which", "who", "whose", "where", "of", "in", "having"].contains(word(i + 1) ?? ""))
        if let n = Lexicon.numberWords[w], n > 1 || w == "one" && word(i + 1) != nil && !pronoun {
            take(i, 1, .number(Double(n), unit: nil))
            return true
        }
        return false
    }
}

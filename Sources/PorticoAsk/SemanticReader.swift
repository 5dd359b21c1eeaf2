import Foundation
import PorticoAskEngine
import PorticoLexicon
import PorticoStore

/// Reads a question as a metric query when every word of it is the semantic model's or a word
/// that says how to show it: "revenue by country", "monthly revenue for loyal customers", "the
/// top 5 countries by revenue". A question with any other word is left to the engine, which may
/// know it (a term, a value): an answer that may be wrong is worse than none, and the model's
/// numbers are defined exactly, so only a whole reading is taken.
struct SemanticReader {
    let model: SemanticModel
    /// The datasource's text values, when the caller may be matched against them: a value of a
    /// dimension's column ("in Canada", "for Rock") is a filter on that dimension.
    var values: ValueIndex? = nil
    /// What tells which dimensions the question's metrics reach (a value of a column they cannot
    /// be broken down by is no filter of theirs).
    var compiler: MetricCompiler? = nil

    /// Words that carry no meaning of their own in a question for figures.
    static let filler: Set<String> = [
        "a", "an", "the", "what", "which", "who", "how", "is", "are", "was", "were", "be", "been", "do", "doe", "did", "show", "me", "u", "give",
        "tell", "list", "get", "report", "compute", "calculate", "display", "find", "please", "our", "my", "their", "its", "of", "for", "by",
        "per", "each", "every", "in", "on", "from", "during", "within", "across", "and", "with", "over", "broken", "down", "split", "grouped", "group",
        "breakdown", "total",
        "overall", "all", "much", "many", "number", "count", "value", "figure", "s", "to", "date", "so", "far", "there", "we", "have", "has", "ha", "had",
        "trend", "time", "see", "let", "look", "at", "can", "you", "i", "would", "like", "want", "know",
    ]

    /// Grain words: `monthly`, `by month`, `per quarter`, `each year`.
    static let grains: [String: MetricQuery.Grain] = [
        "day": .day, "daily": .day, "week": .week, "weekly": .week, "month": .month, "monthly": .month, "quarter": .quarter, "quarterly": .quarter,
        "year": .year, "yearly": .year, "annual": .year, "annually": .year,
    ]

    static let lexicon = WordNet.english

    struct Match {
        let definition: SemanticDefinition
        let start: Int
        let end: Int
    }

    /// The metric query the question is, or `nil` when any word is neither the model's nor a word of showing.
    func read(_ question: String) -> MetricQuery? {
        let written = SchemaModel.words(question)
        let words = written.map(SchemaText.singular)
        guard !words.isEmpty, words.count <= 60 else { return nil }
        var covered = [Bool](repeating: false, count: words.count)
        // Longest phrases first, so "invoice total" is not read as a metric "invoices" and a leftover word.
        let phrases = model.definitions.filter { $0.kind != .relationship }
            .flatMap { d in d.phrases.map { (d, SchemaModel.words($0).map(SchemaText.singular)) } }
            .filter { !$0.1.isEmpty }
            .sorted { $0.1.count > $1.1.count }
        var matches: [Match] = []
        for (definition, phrase) in phrases {
            var i = 0
            while i + phrase.count <= words.count {
                if !covered[i..<(i + phrase.count)].contains(true), Array(words[i..<(i + phrase.count)]) == phrase {
                    for k in i..<(i + phrase.count) { covered[k] = true }
                    if !matches.contains(where: { $0.definition.id == definition.id }) {
                        matches.append(Match(definition: definition, start: i, end: i + phrase.count))
                    }
                    i += phrase.count
                } else {
                    i += 1
                }
            }
        }
        var query = MetricQuery(metrics: [])
        for match in matches.sorted(by: { $0.start < $1.start }) {
            switch match.definition.kind {
            case .metric: query.metrics.append(match.definition.name)
            case .dimension: query.dimensions.append(match.definition.name)
            case .segment: query.segments.append(match.definition.name)
            case .relationship: break
            }
        }
        // "How many large orders": a segment named by a metric's words (a segment "large orders", a
        // metric "orders" over the same table) asks for that metric over its rows.
        if query.metrics.isEmpty, query.segments.count == 1, let segment = model.find(.segment, query.segments[0]) {
            let words = SchemaModel.words(segment.name).map(SchemaText.singular)
            query.metrics = model.all(.metric).filter { metric in
                guard case .metric(let table, _, _) = metric.body, table.lowercased() == segment.body.table?.lowercased() else { return false }
                return metric.phrases.contains { phrase in
                    let named = SchemaModel.words(phrase).map(SchemaText.singular)
                    return !named.isEmpty && named.count < words.count && Array(words.suffix(named.count)) == named
                }
            }.prefix(1).map(\.name)
        }
        guard !query.metrics.isEmpty else { return nil }
        // "top 5", "bottom 3", "the 10 highest": the first metric ranks.
        for (i, word) in words.enumerated() where !covered[i] {
            if let grain = Self.grains[word] {
                guard query.grain == nil || query.grain == grain else { return nil }
                query.grain = grain
                covered[i] = true
            } else if ["top", "highest", "most", "best", "largest", "biggest"].contains(word)
                || ["bottom", "lowest", "least", "worst", "smallest"].contains(word)
            {
                let descending = ["top", "highest", "most", "best", "largest", "biggest"].contains(word)
                // "the most revenue … the top 3" ranks once; "the highest and lowest" is two questions.
                guard query.order.isEmpty || query.order[0].descending == descending else { return nil }
                query.order = [MetricQuery.Order(name: query.metrics[0], descending: descending)]
                covered[i] = true
            }
        }
        // "top 5", "the 3 countries with the highest": a small number beside a ranking is how many rows.
        if !query.order.isEmpty {
            let numbers = words.indices.filter { !covered[$0] && Int(words[$0]).map { (1...1000).contains($0) } == true }
            guard numbers.count <= 1 else { return nil }
            if let j = numbers.first {
                query.limit = Int(words[j])
                covered[j] = true
            }
        }
        // A year ("in 2013") bounds the time dimension: the one asked for, or the model's only one.
        var year: Int?
        for (i, word) in words.enumerated() where !covered[i] {
            guard word.count == 4, let n = Int(word), (1900...2100).contains(n) else { continue }
            guard year == nil else { return nil }
            year = n
            covered[i] = true
        }
        var filtered: [(dimension: SemanticDefinition, span: Range<Int>)] = []
        if let values {
            guard let found = valueFilters(values, written: written, matches: matches, covered: &covered, into: &query) else { return nil }
            filtered = found
        }
        // "for the artist Iron Maiden": a dimension's name beside a value of its own labels the value; it is no breakdown.
        for (dimension, span) in filtered {
            if let label = matches.first(where: { $0.definition.id == dimension.id && ($0.end == span.lowerBound || $0.start == span.upperBound) }) {
                query.dimensions.removeAll { $0 == label.definition.name }
            }
        }
        // A verb made from the words of a metric or of a filtered dimension says what it counts ("sell" of
        // sales, "billed" of a billing country).
        let named = query.metrics.compactMap { model.find(.metric, $0) } + filtered.map(\.dimension)
        let namedWords = Set(named.flatMap(\.phrases).flatMap { SchemaModel.words($0) }.flatMap(Self.lexicon.baseForms))
        for i in words.indices where !covered[i] && !Self.filler.contains(words[i]) {
            let verbs = Self.lexicon.baseForms(words[i]).filter { Self.lexicon.partsOfSpeech(of: $0).contains(.verb) }
            if verbs.contains(where: { verb in namedWords.contains(verb) || !namedWords.isDisjoint(with: Self.lexicon.related(to: verb)) }) {
                covered[i] = true
            }
        }
        if words.indices.contains(where: { !covered[$0] && !Self.filler.contains(words[$0]) }) { return nil }
        // A ranking without a breakdown ranks nothing.
        if !query.order.isEmpty, query.dimensions.isEmpty { return nil }
        // Without a number, "the country with the most customers" is one row; "the countries with the
        // most customers" says not how many, which is not for the reader to guess.
        if !query.order.isEmpty, query.limit == nil {
            guard let match = matches.first(where: { $0.definition.kind == .dimension }), written[match.end - 1] == words[match.end - 1] else { return nil }
            query.limit = 1
        }
        let times = model.all(.dimension).filter { if case .dimension(_, _, true) = $0.body { true } else { false } }
        if query.grain != nil, !query.dimensions.contains(where: { isTime($0) }) {
            guard times.count == 1 else { return nil }
            query.dimensions.insert(times[0].name, at: 0)
        }
        if let year {
            guard let time = query.dimensions.first(where: { isTime($0) }) ?? (times.count == 1 ? times[0].name : nil) else { return nil }
            query.filters += [
                MetricQuery.Filter(name: time, op: ">=", values: [.text("\(year)-01-01")]),
                MetricQuery.Filter(name: time, op: "<", values: [.text("\(year + 1)-01-01")]),
            ]
        }
        return query
    }

    /// Reads each longest run of words not yet read that is a value of one dimension's column, of
    /// those the metrics reach, as a filter on it; of several, the one a word of the question names
    /// by a form of its own ("billed to France" of a billing country). Otherwise a value of several
    /// is not guessed at (`nil`).
    func valueFilters(_ values: ValueIndex, written: [String], matches: [Match], covered: inout [Bool], into query: inout MetricQuery)
        -> [(dimension: SemanticDefinition, span: Range<Int>)]?
    {
        var read: [(dimension: SemanticDefinition, span: Range<Int>)] = []
        // The dimensions that are one column of their table, by that column's number in the index.
        var byColumn: [Int: SemanticDefinition] = [:]
        for dimension in model.all(.dimension) {
            guard case .dimension(let table, let sql, false) = dimension.body else { continue }
            let name = sql.trimmingCharacters(in: CharacterSet(charactersIn: " \"`[]"))
            for (column, names) in values.names where names.table.lowercased() == table.lowercased() && names.column.lowercased() == name.lowercased() {
                byColumn[column] = dimension
            }
        }
        guard !byColumn.isEmpty else { return read }
        for length in stride(from: min(4, written.count), through: 1, by: -1) {
            for start in 0...(written.count - length) {
                let span = start..<(start + length)
                guard !covered[span].contains(true), span.contains(where: { !Self.filler.contains(written[$0]) }),
                    let hits = values.exact[written[span].joined(separator: " ")]
                else { continue }
                let dimensions = Dictionary(
                    hits.compactMap { hit in byColumn[values.entries[hit].column].map { ($0.id, ($0, values.entries[hit].value)) } },
                    uniquingKeysWith: { first, _ in first }
                ).filter { _, found in
                    (try? compiler?.compile(MetricQuery(metrics: query.metrics, dimensions: [found.0.name]))) != nil || compiler == nil
                }
                var candidates = Array(dimensions.values)
                var namer: Int?
                if candidates.count > 1 {
                    let others = written.indices.filter { !covered[$0] && !span.contains($0) && !Self.filler.contains(written[$0]) }
                    // "North customers", "the customer North": the dimension's own name beside the value.
                    let labelled = candidates.filter { found in
                        matches.contains { $0.definition.id == found.0.id && ($0.end == span.lowerBound || $0.start == span.upperBound) }
                    }
                    let named = candidates.compactMap { found -> (SemanticDefinition, String, Int)? in
                        let forms = Set(SchemaModel.words(found.0.name).flatMap(Self.lexicon.baseForms))
                        return others.first { Self.names(written[$0], forms) }.map { (found.0, found.1, $0) }
                    }
                    if labelled.count == 1 {
                        candidates = labelled
                    } else {
                        guard named.count == 1 else { return nil }
                        candidates = [(named[0].0, named[0].1)]
                        namer = named[0].2
                    }
                }
                guard let (dimension, value) = candidates.first else { continue }
                query.filters.append(MetricQuery.Filter(name: dimension.name, op: "=", values: [.text(value)]))
                for k in span { covered[k] = true }
                if let namer { covered[namer] = true }
                read.append((dimension, span))
            }
        }
        return read
    }

    /// Whether `word` is a form of one of `forms` (base forms of a name's words), or derived from one.
    static func names(_ word: String, _ forms: Set<String>) -> Bool {
        lexicon.baseForms(word).contains { base in forms.contains(base) || !forms.isDisjoint(with: lexicon.related(to: base)) }
    }

    func isTime(_ name: String) -> Bool {
        if case .dimension(_, _, true)? = model.find(.dimension, name)?.body { return true }
        return false
    }
}

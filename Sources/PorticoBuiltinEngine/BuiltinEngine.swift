public import PorticoAskEngine

/// The offline engine: reads the question against the datasource's own schema and values and
/// writes one SELECT, deterministically, in milliseconds; refuses, saying why, when unsure.
public struct BuiltinEngine: AskEngine {
    /// The most an answer that joins tables can be sure of. Measured on Spider's training set (6,817
    /// questions on 137 databases no one here wrote): the joined answers the engine had no other
    /// doubt about were right 88% of the time, single-table ones 98%; a confidence says how often
    /// such answers are right.
    static let joinedCeiling = 0.89

    /// The most a join can be sure of when it counts one table's rows for each row of the table they
    /// belong to ("the number of tracks in each genre") and nothing else is in doubt: such answers
    /// were right 17 times of 17 on Spider's training set, and every time in Portico's own sets.
    static let countedPerEntityCeiling = 0.95

    /// How sure an answer that joins tables can be, given its risks.
    static func ceiling(joined: Int, risks: [Risk]) -> Double {
        guard joined > 1 else { return 1 }
        let risks = Set(risks)
        let countsPerEntity: Set<Risk> = [.countedAcross, .groupedByEntity]
        let harmless: Set<Risk> = countsPerEntity.union([.tableForAWord, .having, .manyParts])
        return risks.isSuperset(of: countsPerEntity) && risks.isSubset(of: harmless) ? countedPerEntityCeiling : joinedCeiling
    }

    /// The least confidence answered without asking the asker to confirm the reading: the band from
    /// it up holds the answers that were right 97% of the time or more on Spider's training set
    /// (98.2%; the band below it 89%). `portico eval` prints the bands.
    public static let sureConfidence = 0.9

    public var name: String { "builtin" }
    public var traits: EngineTraits { [.readsValues, .explainsRefusals, .calibratedConfidence] }

    public init() {}

    /// How sure an answer adapted from a saved example is: its SQL was verified by a person; only
    /// the values changed.
    package static let exampleConfidence = 0.95

    public func reply(to request: EngineRequest) async throws -> EngineReply {
        Self.answer(request)
    }

    static func answer(_ request: EngineRequest) -> EngineReply {
        guard let tables = request.tables else {
            return EngineReply(candidates: [], reason: "the built-in engine needs the datasource's schema")
        }
        var schema = SchemaModel(tables, terms: request.terms, dialect: request.dialect)
        // The index is numbered by the datasource's whole schema; a role may have narrowed this one.
        var values = request.values ?? ValueIndex()
        if let all = request.valueTables, all.count != tables.count { values = values.renumbered(for: schema) }
        schema.keepNumbers(values.numbers, ofOneWidth: values.numbersOfOneWidth)
        // A saved example that asks the same of other values answers, with the question's values.
        if let (sql, example) = fromExamples(request, values: values) {
            var reply = EngineReply(candidates: [sql], confidence: Self.exampleConfidence)
            reply.example = example.id
            return reply
        }
        var interpreter = Interpreter(schema: schema, values: values)
        // The keys (or columns) the asker chose when asked which one a question means.
        let chosen = Set(
            request.choices.compactMap { choice in
                schema.columnList.indices.first { c in
                    let column = schema.column(c)
                    return column.expression == nil && "\(schema.tables[column.table].name).\(column.name)".lowercased() == choice.lowercased()
                }
            })
        interpreter.chosen = chosen
        // A follow-up applies to the chat's last understood question, itself read as a follow-up of
        // the ones before it (the chat's last few turns are enough).
        // The parts of a follow-up's chain are read together for its risks ("only the top 3" names no table).
        var previous: QueryPlan?
        var previousItems: [Interpreter.Item] = []
        for turn in request.history.suffix(8) {
            if case .success(let understood) = interpreter.understand(turn.question, previous: previous) {
                previous = understood.plan
                previous?.via.formUnion(chosen)
                previousItems = understood.followsUp ? previousItems + understood.items : understood.items
            }
        }
        switch interpreter.understand(request.question, previous: previous) {
        case .failure(let refusal):
            return EngineReply(candidates: [], reason: refusal.message)
        case .success(var understood):
            if understood.followsUp { understood.items = previousItems + understood.items }
            understood.plan.via.formUnion(chosen)
            switch PlanCompiler(schema: schema, dialect: request.dialect).compileCounting(understood.plan) {
            case .success(let (sql, joined)):
                var risks = interpreter.risks(
                    of: understood.plan, items: understood.items, joined: joined, followsUp: understood.followsUp, words: understood.words,
                    unread: understood.unread)
                if understood.respelt { risks.append(.respeltName) }
                if understood.linked { risks.append(.lexiconWord) }
                if !understood.verbsLeftOut.isEmpty {
                    // Left out only from a reading otherwise without doubt: beside another doubt, such
                    // readings were wrong one time in three on the studied folds.
                    guard !risks.contains(where: \.isDoubt) else {
                        let words = understood.verbsLeftOut.map { "'\($0)'" }.joined(separator: ", ")
                        return EngineReply(candidates: [], reason: "the built-in engine did not understand \(words): " + Interpreter.nameOrRephrase)
                    }
                    risks.append(.verbLeftOut)
                }
                let (doubted, ceiling) = (Risk.confidence(understood.confidence, risks), Self.ceiling(joined: joined, risks: risks))
                let confidence = min(doubted, ceiling)
                if ceiling < doubted { risks.append(.joined) }  // named in a confirmation: what holds the reading below 0.9
                guard confidence >= Interpreter.threshold - 1e-9 else {
                    let reasons = Array(Set(risks.filter(\.isDoubt).map(\.reason))).sorted()
                    var reply = EngineReply(
                        candidates: [],
                        reason: "the built-in engine is not sure enough of its reading (\(reasons.joined(separator: "; "))) to answer; "
                            + "rephrase with the table and column names (datasource_describe lists them), or configure an LLM with `portico llm add`",
                        confidence: confidence, risks: risks.map(\.rawValue))
                    // When only which column a word or value means stands in the way, ask which.
                    let otherwise = Risk.confidence(understood.confidence, risks.filter { !Risk.columnDoubts.contains($0) })
                    if otherwise >= Interpreter.threshold - 1e-9 { reply.clarification = interpreter.clarification(understood.items) }
                    return reply
                }
                var reply = EngineReply(candidates: [sql], chart: understood.plan.chartHint, confidence: confidence, risks: risks.map(\.rawValue))
                // A reading below the sure band that picked one of several columns comes with the
                // others, for a confirmation to offer beside it.
                if confidence < Self.sureConfidence, risks.contains(where: Risk.columnDoubts.contains) {
                    reply.clarification = interpreter.otherColumns(understood.items, than: understood.plan.referencedColumns)
                }
                return reply
            case .failure(let unwritable):
                var reply = EngineReply(candidates: [], reason: unwritable.message)
                if unwritable.choices.count > 1 {
                    let options = unwritable.choices.map { c in
                        let column = schema.column(c)
                        return Clarification.Option(value: "\(schema.tables[column.table].name).\(column.name)", label: column.words.joined(separator: " "))
                    }
                    reply.clarification = Clarification(
                        message: "The question can be read through \(options.map { "\"\($0.label)\"" }.joined(separator: " or ")); which one is meant?",
                        options: options)
                }
                return reply
            }
        }
    }
}

extension Interpreter {
    /// The question back for the first word or value of `items` that names several columns.
    func clarification(_ items: [Item]) -> Clarification? {
        guard let (what, columns) = severalColumns(items).first(where: { $0.columns.count > 1 }) else { return nil }
        let options = columns.map(option)
        return Clarification(
            message: "\(what.prefix(1).uppercased() + what.dropFirst()): \(options.map { "\"\($0.label)\"" }.joined(separator: " or ")); which one is meant?",
            options: options)
    }

    /// For a reading that picked one of several columns for a word or value: the others, those
    /// a reading can be asked through (`message` says of which word or value).
    func otherColumns(_ items: [Item], than read: Set<Int>) -> Clarification? {
        for (what, columns) in severalColumns(items) where columns.contains(where: read.contains) {
            let others = columns.filter { !read.contains($0) }
            if !others.isEmpty { return Clarification(message: what, options: others.map(option)) }
        }
        return nil
    }

    /// The words and values of `items` that name several columns, each with those of its columns a
    /// choice can name (a term's computed column cannot be chosen).
    private func severalColumns(_ items: [Item]) -> [(what: String, columns: [Int])] {
        items.compactMap { item in
            let columns: [Int]
            let what: String
            switch item {
            case .columns(let cs) where cs.count > 1:
                columns = cs
                what = "a word of the question names \(cs.count) columns"
            case .value(let entries, let phrase, _) where Set(entries.map(\.column)).count > 1:
                columns = Array(Set(entries.map(\.column))).sorted()
                what = "'\(phrase)' is a value of \(columns.count) columns"
            default:
                return nil
            }
            let choosable = columns.filter { schema.column($0).expression == nil }.prefix(8)
            return choosable.isEmpty ? nil : (what, Array(choosable))
        }
    }

    private func option(_ c: Int) -> Clarification.Option {
        let column = schema.column(c)
        return Clarification.Option(
            value: "\(schema.tables[column.table].name).\(column.name)", label: "\(column.words.joined(separator: " ")) of \(schema.tables[column.table].name)")
    }

    func understand(_ question: String, previous: QueryPlan? = nil) -> Result<Understood, NotUnderstood> {
        do {
            return .success(try interpret(question, previous: previous))
        } catch {
            return .failure(error)
        }
    }
}

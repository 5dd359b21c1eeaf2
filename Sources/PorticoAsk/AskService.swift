public import AsyncHTTPClient
import Crypto
public import Foundation
public import PorticoAskEngine
import PorticoBase
import PorticoBuiltinEngine
public import PorticoCharts
public import PorticoData
public import PorticoStore

/// One question to answer.
public struct AskRequest: Sendable {
    public var app: String
    /// The asking user; `nil` (the command line) keeps no chat.
    public var userID: Int64?
    public var question: String
    public var datasource: String?
    /// An earlier chat to continue; without one a new chat is started for a user.
    public var chatID: Int64?
    public var lang: String
    /// `builtin`, `llm`, or the name (or model) of a configured LLM; `nil` picks as PRODUCT.md says.
    public var engine: String?
    public var drawImage: Bool
    /// Who asks: how their role may read each table of the app's own data, and their share of the datasource.
    public var caller: QueryCaller
    /// Readings chosen when asked back (`Table.Column` of a key, or `run:` and a reading's mark to run
    /// a reading the built-in engine asked to have confirmed); the chat keeps them for its next questions.
    public var choices: [String] = []
    /// Whether someone can pick a reading shown to run (a person or an agent). Where no one can (a
    /// workflow's `ask` node, SQLBot's API), a reading below the sure band is refused, and the refusal
    /// says how to have it answered: save it as an example.
    public var canPick = true

    public init(
        app: String, userID: Int64?, question: String, datasource: String? = nil, chatID: Int64? = nil, lang: String = "en", engine: String? = nil,
        drawImage: Bool = true, caller: QueryCaller = .operator
    ) {
        self.app = app
        self.userID = userID
        self.question = question
        self.datasource = datasource
        self.chatID = chatID
        self.lang = lang
        self.engine = engine
        self.drawImage = drawImage
        self.caller = caller
    }
}

/// An answered question.
public struct AskAnswer: Sendable {
    public let engine: String
    public let datasource: String
    public let title: String
    /// One line that says what the rows show.
    public let summary: String
    public let sql: String
    public let columns: [String]
    public let rows: [[SQLValue]]
    public let truncated: Bool
    public let chart: ChartSpec
    public let png: [UInt8]?
    /// The stored image's file name, when one was drawn and stored.
    public let imageName: String?
    public let chatID: Int64?
    public internal(set) var recordID: Int64?
    /// How long drawing the chart took, when one was drawn.
    public var chartTime: Duration? = nil
    /// How sure the engine was, when it said (the built-in engine does), and what lowered it.
    public var confidence: Double? = nil
    public var risks: [String] = []
    /// The saved example the SQL was adapted from, when it was.
    public var exampleID: Int64? = nil
    /// What the app taught that the answer used: the semantic model's definitions it was compiled
    /// from, the terms read in the question, the saved examples (verified queries) it was adapted
    /// from or an LLM was shown, the instructions an LLM was given.
    public var used: [Provenance] = []

    public struct Provenance: Sendable, Equatable {
        /// `metric`, `dimension`, `segment`, `relationship`, `term`, `example` or `instructions`.
        public let kind: String
        public let name: String
    }
}

/// A question no engine could answer, and why, in words that say what to do.
public struct AskRefusal: Error, Sendable, CustomStringConvertible {
    public let message: String
    public let engine: String?
    /// The SQL that was refused or failed, when there was one.
    public let sql: String?
    public var chatID: Int64?
    public var recordID: Int64?
    /// When the engine saw two readings: the question to ask back, with its choices.
    public var clarification: Clarification? = nil
    public var description: String { message }
}

/// The pipeline: question → engine → SQL → guard → read-only execution → rows → chart → answer,
/// with at most two corrections when the database rejects the SQL (from an engine that corrects
/// its SQL), and every question kept in its chat.
public struct AskService: Sendable {
    public let datasources: DatasourceService
    /// The apps' collections, whose tables a role narrows on the app's own datasource.
    public let catalogs: CatalogStore
    public let llms: LLMStore
    public let chats: ChatStore
    /// The terms, examples and instructions that teach the engines, per app and datasource.
    public let knowledge: KnowledgeService
    /// The metrics, dimensions, segments and relationships declared per datasource.
    public let semantic: SemanticService
    /// Where chart images are kept for their addresses; `nil` keeps none (the command line writes a
    /// chart where it is told).
    public var images: ImageStore?
    let client: HTTPClient
    let renderer = ChartRenderer()
    let environment: [String: String]
    /// Whether the built-in engine's readings it is less sure of than `BuiltinEngine.sureConfidence`
    /// are shown to the asker to run, rather than run at once. `portico serve` and the command line
    /// turn it on unless told otherwise (`--no-ask-sure-only`); `portico eval` scores every reading.
    public var sureOnly = false
    /// What `portico serve` and the command line's `ask` choose for `sureOnly` unless told otherwise.
    public static let sureOnlyByDefault = true

    /// What an engine's answer used of what the app taught: an LLM, what its prompt held of it (the
    /// terms, semantic definitions and examples like the question, the instructions); the built-in
    /// engine, the terms whose words the question holds (it reads them before anything else) and
    /// the example it adapted.
    static func provenance(_ request: EngineRequest, reply: EngineReply, readsSchemaText: Bool) -> [AskAnswer.Provenance] {
        var used: [AskAnswer.Provenance] = []
        if let example = reply.example { return [AskAnswer.Provenance(kind: "example", name: String(example))] }
        if readsSchemaText {
            used += Prompt.relevantDefinitions(request).map { AskAnswer.Provenance(kind: $0.kind.rawValue, name: $0.name) }
            used += Prompt.relevantTerms(request).map { AskAnswer.Provenance(kind: "term", name: $0.term) }
            used += Prompt.similarExamples(request).map { AskAnswer.Provenance(kind: "example", name: String($0.id)) }
            if let instructions = request.instructions, !instructions.isEmpty { used.append(AskAnswer.Provenance(kind: "instructions", name: "instructions")) }
            return used
        }
        let asked = SchemaModel.words(request.question).map(SchemaText.singular)
        for term in request.terms {
            let named = term.phrases.contains { phrase in
                let words = SchemaModel.words(phrase).map(SchemaText.singular)
                return !words.isEmpty && asked.count >= words.count
                    && (0...(asked.count - words.count)).contains { Array(asked[$0..<($0 + words.count)]) == words }
            }
            if named { used.append(AskAnswer.Provenance(kind: "term", name: term.term)) }
        }
        return used
    }

    /// What an answer computed from the semantic model names as its engine.
    public static let semanticEngine = "semantic model"
    /// What an answer adapted from a saved example, before an LLM was asked, names as its engine.
    public static let exampleEngine = "saved example"

    /// Corrections an engine gets after its SQL fails.
    public static let maxCorrections = 2

    public init(
        datasources: DatasourceService, catalogs: CatalogStore, llms: LLMStore, chats: ChatStore, knowledge: KnowledgeStore, images: ImageStore?,
        client: HTTPClient, environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        self.datasources = datasources
        self.catalogs = catalogs
        self.llms = llms
        self.chats = chats
        self.knowledge = KnowledgeService(store: knowledge, datasources: datasources, chats: chats)
        self.semantic = SemanticService(store: knowledge, datasources: datasources)
        self.images = images
        self.client = client
        self.environment = environment
    }

    public static let noEngine =
        "No LLM is configured. Add one with `portico llm add --name NAME --base-url URL --model MODEL --api-key-env VAR` "
        + "(any OpenAI-compatible chat API: OpenAI, DeepSeek, Qwen, Ollama, vLLM, llama.cpp), or ask the built-in engine (engine builtin). "
        + "An agent that writes SQL itself can use datasource_describe and sql_query instead."

    /// The engine a request asked for, or the one PRODUCT.md's order gives.
    public func engine(named name: String?) async throws(AskRefusal) -> any AskEngine {
        let providers: [LLMProvider]
        do { providers = try await llms.list() } catch { throw AskRefusal(message: "the LLM list could not be read: \(error)", engine: nil, sql: nil) }
        switch name?.lowercased() {
        case nil, "", "auto":
            guard let first = providers.first else { return BuiltinEngine() }
            return LLMEngine(provider: first, client: client, environment: environment)
        case "llm":
            guard let first = providers.first else { throw AskRefusal(message: Self.noEngine, engine: nil, sql: nil) }
            return LLMEngine(provider: first, client: client, environment: environment)
        case "builtin":
            return BuiltinEngine()
        default:
            let wanted = name ?? ""
            let wantedName = wanted.hasPrefix("llm:") ? String(wanted.dropFirst(4)) : wanted
            guard let provider = providers.first(where: { $0.name == wantedName }) ?? providers.first(where: { $0.model == wanted }) else {
                let known = providers.map(\.name)
                throw AskRefusal(
                    message: "no engine or model named '\(wanted)'; "
                        + (known.isEmpty ? Self.noEngine : "the configured models are: \(known.joined(separator: ", ")) (or builtin)"),
                    engine: nil, sql: nil)
            }
            return LLMEngine(provider: provider, client: client, environment: environment)
        }
    }

    /// Answers `request`, or throws `AskRefusal`. A chat is started for a user who named none;
    /// the answer (or the refusal) carries its id.
    public func ask(_ request: AskRequest, progress: @Sendable (String) -> Void = { _ in }) async throws -> AskAnswer {
        var chatID = request.chatID
        var datasource = request.datasource
        if let userID = request.userID {
            if let id = chatID {
                let chat = try await chats.owned(id, app: request.app, userID: userID)
                guard chat.exists else {
                    throw AskRefusal(message: "chat \(id) does not exist or is not yours; leave chat_id out to start a new chat", engine: nil, sql: nil)
                }
                datasource = datasource ?? chat.datasource
            } else {
                chatID = try await chats.create(app: request.app, userID: userID, datasource: datasource ?? "main")
            }
        }
        let datasourceName = datasource ?? "main"
        do {
            return try await record(
                try await answer(request, datasource: datasourceName, chatID: chatID, progress: progress), question: request.question,
                choices: request.choices)
        } catch var refusal as AskRefusal {
            refusal.chatID = chatID
            if let chatID {
                refusal.recordID = try await chats.append(
                    chatID, question: request.question, datasource: datasourceName, sql: refusal.sql, engine: refusal.engine, outcome: .refused,
                    message: refusal.message, chart: nil, choices: request.choices)
            }
            throw refusal
        }
    }

    func answer(_ request: AskRequest, datasource name: String, chatID: Int64?, progress: @Sendable (String) -> Void) async throws -> AskAnswer {
        let question = request.question.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !question.isEmpty else { throw AskRefusal(message: "the question is empty: ask something about the data", engine: nil, sql: nil) }
        guard question.utf8.count <= 4000 else {
            throw AskRefusal(message: "the question is \(question.utf8.count) bytes long; ask in at most 4,000", engine: nil, sql: nil)
        }
        let engine = try await engine(named: request.engine)
        progress("reading the schema of \(name)")
        let (source, allTables) = try await datasources.schema(app: request.app, datasource: name)
        let caller = name == "main" ? request.caller : QueryCaller(key: request.caller.key)
        let rights = caller.rights
        let tables = TableAccess.narrow(allTables, by: rights)
        // Where the role hides rows or fields, the engine gets no values read from the whole tables.
        let restricted = allTables.contains { rights($0.name) != .whole }
        if let chatID, request.chatID != nil, request.datasource != nil { try await chats.setDatasource(chatID, name) }
        var history: [EngineRequest.Turn] = []
        var choices = request.choices
        if let chatID {
            let records = try await chats.history(chatID).filter { $0.datasource == name || $0.datasource == nil }
            history = records.map { EngineRequest.Turn(question: $0.question, sql: $0.sql) }
            // What the asker chose before holds for the chat's next questions.
            for record in records { for choice in record.choices where !choices.contains(choice) { choices.append(choice) } }
        }
        var examples: [EngineRequest.Turn] = []
        if let userID = request.userID {
            examples = try await chats.examples(app: request.app, userID: userID, datasource: name, like: question, excludingChat: chatID)
        }
        // The schema as text, ranked for the question, only for an engine that reads it (a fifth of
        // the built-in engine's time per question went into rendering it, unread).
        let schema = engine.traits.contains(.readsSchemaText) ? SchemaText.render(tables, question: question) : ""
        var engineRequest = EngineRequest(
            question: question, lang: request.lang, dialect: source.dialect, schema: schema, examples: examples, history: history, corrections: [])
        // What the app taught about this datasource, as far as the caller's role may see it.
        let store = knowledge.store
        engineRequest.terms = KnowledgeService.visible(
            try await store.terms(app: request.app, datasource: name), tables: allTables, rights: rights, dialect: source.dialect)
        engineRequest.savedExamples = KnowledgeService.visible(
            try await store.examples(app: request.app, datasource: name), tables: allTables, rights: rights, dialect: source.dialect)
        engineRequest.instructions = try await store.instructions(app: request.app, datasource: name)
        engineRequest.choices = choices
        // A saved example the question asks again (with other values) is answered from it before an LLM
        // writes anything; the built-in engine does the same itself, with the values it reads.
        if !engine.traits.contains(.readsValues), !engineRequest.savedExamples.isEmpty {
            let values = restricted ? ValueIndex() : try await datasources.values(app: request.app, datasource: name, tables: allTables)
            if let (sql, example) = BuiltinEngine.savedExample(for: engineRequest, values: values) {
                progress("answering from saved example \(example.id)")
                var reply = EngineReply(candidates: [sql], confidence: BuiltinEngine.exampleConfidence)
                reply.example = example.id
                let used = [AskAnswer.Provenance(kind: "example", name: String(example.id))]
                return try await settled(
                    request, by: Self.exampleEngine, reply: reply, used: used, datasource: name, caller: caller, chatID: chatID, progress: progress)
            }
        }
        let model = SemanticModel(try await knowledge.store.semanticDefinitions(app: request.app, datasource: name))
        engineRequest.semantic = SemanticService.visible(model, tables: allTables, rights: rights, dialect: source.dialect)
        // A question that is wholly the semantic model's is computed from it, as `query_metric` would, before any engine guesses.
        let values = engineRequest.semantic.isEmpty || restricted ? nil : try await datasources.values(app: request.app, datasource: name, tables: allTables)
        let compiler = MetricCompiler(model: engineRequest.semantic, tables: allTables, dialect: source.dialect)
        if let query = SemanticReader(model: engineRequest.semantic, values: values, compiler: compiler).read(question),
            let compiled = try? compiler.compile(query)
        {
            progress("computing \(query.metrics.joined(separator: ", ")) from the semantic model")
            let overTime = compiled.dimensions.contains { if case .dimension(_, _, true) = $0.body { true } else { false } }
            let used = (compiled.metrics + compiled.dimensions + compiled.segments + compiled.relationships).map {
                AskAnswer.Provenance(kind: $0.kind.rawValue, name: $0.name)
            }
            return try await settled(
                request, by: Self.semanticEngine, reply: EngineReply(candidates: [compiled.sql], chart: overTime ? "line" : nil, confidence: 1),
                used: used, datasource: name, caller: caller, chatID: chatID, progress: progress)
        }
        if engine.traits.contains(.readsValues) {
            progress("reading the values of \(name)")
            engineRequest.tables = tables
            if !restricted {
                engineRequest.values = try await datasources.values(app: request.app, datasource: name, tables: allTables)
                engineRequest.valueTables = allTables
            }
        }
        for attempt in 0...Self.maxCorrections {
            progress(attempt == 0 ? "asking \(engine.name)" : "asking \(engine.name) to correct its SQL (\(attempt) of \(Self.maxCorrections))")
            let reply: EngineReply
            do { reply = try await engine.reply(to: engineRequest) } catch let error as EngineError {
                throw AskRefusal(message: error.message, engine: engine.name, sql: nil)
            }
            guard !reply.candidates.isEmpty else {
                // The built-in engine's reasons say themselves what it did not understand.
                let message =
                    engine.traits.contains(.explainsRefusals)
                    ? reply.reason ?? "the built-in engine could not answer"
                    : "\(engine.name) did not answer with SQL: \(reply.reason ?? "its reply held no query")"
                var refusal = AskRefusal(message: message, engine: engine.name, sql: nil)
                refusal.clarification = reply.clarification
                throw refusal
            }
            // With `sureOnly`, an answer is given at once only in the band whose answers are right 97% of
            // the time or more; below it, the asker is shown the reading and runs it by choosing it.
            if sureOnly, engine.traits.contains(.calibratedConfidence), reply.example == nil, let confidence = reply.confidence,
                confidence < BuiltinEngine.sureConfidence, let sql = reply.candidates.first, !choices.contains(Self.runChoice(sql))
            {
                throw Self.confirmation(
                    sql: sql, confidence: confidence, risks: reply.risks, engine: engine.name, canPick: request.canPick,
                    otherColumns: reply.clarification)
            }
            var failure: (sql: String, error: String)?
            for candidate in reply.candidates.prefix(3) {
                progress("running the SQL on \(name)")
                do {
                    let result = try await datasources.query(app: request.app, datasource: name, sql: candidate, caller: caller)
                    var answer = try await finish(request, engine: engine.name, reply: reply, result: result, chatID: chatID, progress: progress)
                    answer.used = Self.provenance(engineRequest, reply: reply, readsSchemaText: engine.traits.contains(.readsSchemaText))
                    return answer
                } catch let error as SQLGuardError where error.isMistake {
                    failure = failure ?? (candidate, error.message)
                } catch let error as SQLGuardError {
                    throw AskRefusal(message: "the SQL \(engine.name) wrote was refused and not run: \(error.message)", engine: engine.name, sql: candidate)
                } catch let error as StoreError where [.other, .tooComplex, .timeout].contains(error.kind) {
                    failure = failure ?? (candidate, error.kind == .timeout ? "the query ran past the time limit; write a cheaper one" : error.message)
                } catch let error as StoreError {
                    throw AskRefusal(message: "the database refused the SQL \(engine.name) wrote: \(error.message)", engine: engine.name, sql: candidate)
                } catch let error as DatasourceError {
                    throw AskRefusal(message: error.message, engine: engine.name, sql: candidate)
                }
            }
            guard let failure else { break }
            guard engine.traits.contains(.correctsItsSQL) else {
                throw AskRefusal(message: "the SQL \(engine.name) wrote failed: \(failure.error)", engine: engine.name, sql: failure.sql)
            }
            if attempt == Self.maxCorrections {
                throw AskRefusal(
                    message: "the SQL \(engine.name) wrote still failed after \(Self.maxCorrections) corrections: \(failure.error)", engine: engine.name,
                    sql: failure.sql)
            }
            engineRequest.corrections.append(failure)
        }
        throw AskRefusal(message: "\(engine.name) gave no usable SQL", engine: engine.name, sql: nil)
    }

    /// The choice that runs `sql`: `run:` and a mark of the statement, so a confirmation runs the
    /// reading that was shown and no other.
    static func runChoice(_ sql: String) -> String {
        "run:" + Hex.encode(Array(SHA256.hash(data: Array(sql.utf8)).prefix(8)))
    }

    /// The reading shown for the asker to run, when the built-in engine is less sure of it, beside
    /// the other columns a word or value of it may mean (`otherColumns`, whose message says which:
    /// choosing one asks again through it); where no one can pick, a refusal that says how to have
    /// it answered.
    static func confirmation(
        sql: String, confidence: Double, risks: [String], engine: String, canPick: Bool = true, otherColumns: Clarification? = nil
    ) -> AskRefusal {
        let reasons = Array(Set(risks.compactMap { Risk(rawValue: $0) }.filter(\.isDoubt).map(\.reason))).sorted()
        let why = reasons.isEmpty ? "" : " (\(reasons.joined(separator: "; ")))"
        let read =
            "The built-in engine read the question as `\(sql)` but is less sure of this reading\(why), at \(String(format: "%.2f", confidence)): "
            + "on databases it was not written for its answers below 0.90 were right 80-90% of the time, against 98% above, "
        guard canPick else {
            let message =
                read + "so where no one can confirm it, it is not run. "
                + "If it is what is meant, save it as an example (examples_create, or `portico example add`) and it will be answered from it; "
                + "otherwise rephrase with the table and column names, or configure an LLM with `portico llm add`."
            return AskRefusal(message: message, engine: engine, sql: sql)
        }
        var message = read + "so it asks before it runs it. Run it if it is what you meant; "
        var options = [Clarification.Option(value: runChoice(sql), label: "Run this reading")]
        if let otherColumns, !otherColumns.options.isEmpty {
            message +=
                "or read it through another column (\(otherColumns.message)): \(otherColumns.options.map { "\"\($0.label)\"" }.joined(separator: " or ")); "
            options += otherColumns.options.map { Clarification.Option(value: $0.value, label: "Read it with \($0.label)") }
        }
        message += "otherwise rephrase with the table and column names, or configure an LLM with `portico llm add`."
        var refusal = AskRefusal(message: message, engine: engine, sql: sql)
        refusal.clarification = Clarification(message: message, options: options)
        return refusal
    }

    /// An answer settled before any engine was asked (a saved example, the semantic model): its one
    /// SQL run as the caller, with what it used.
    func settled(
        _ request: AskRequest, by engine: String, reply: EngineReply, used: [AskAnswer.Provenance], datasource: String, caller: QueryCaller,
        chatID: Int64?, progress: @Sendable (String) -> Void
    ) async throws -> AskAnswer {
        let sql = reply.candidates[0]
        let result: QueryAnswer
        do {
            result = try await datasources.query(app: request.app, datasource: datasource, sql: sql, caller: caller)
        } catch let error as DatasourceError {
            throw AskRefusal(message: error.message, engine: engine, sql: sql)
        } catch let error as SQLGuardError {
            throw AskRefusal(message: "the SQL of the \(engine) was refused and not run: \(error.message)", engine: engine, sql: sql)
        } catch let error as StoreError {
            throw AskRefusal(message: "the database refused the SQL of the \(engine): \(error.message)", engine: engine, sql: sql)
        }
        var answer = try await finish(request, engine: engine, reply: reply, result: result, chatID: chatID, progress: progress)
        answer.used = used
        return answer
    }

    func finish(_ request: AskRequest, engine: String, reply: EngineReply, result: QueryAnswer, chatID: Int64?, progress: @Sendable (String) -> Void)
        async throws -> AskAnswer
    {
        let title = reply.title.map { String($0.prefix(120)) } ?? String(request.question.prefix(120))
        let (spec, data) = ChartChoice.choose(columns: result.columns, rows: result.rows, hint: reply.chart, title: title)
        var png: [UInt8]?
        var imageName: String?
        var chartTime: Duration?
        if request.drawImage, let data {
            progress("drawing the \(spec.kind.rawValue) chart")
            let started = ContinuousClock.now
            png = renderer.png(spec, data)
            chartTime = ContinuousClock.now - started
            if let png, let images { imageName = try await images.save(png: png) }
        }
        return AskAnswer(
            engine: engine, datasource: result.datasource, title: title, summary: Self.summary(result, spec: spec), sql: result.sql,
            columns: result.columns, rows: result.rows, truncated: result.truncated, chart: spec, png: png, imageName: imageName, chatID: chatID,
            recordID: nil, chartTime: chartTime, confidence: reply.confidence, risks: reply.risks, exampleID: reply.example)
    }

    /// Stores the answer in its chat and returns it with its record id.
    func record(_ answer: AskAnswer, question: String, choices: [String]) async throws -> AskAnswer {
        guard let chatID = answer.chatID else { return answer }
        var recorded = answer
        recorded.recordID = try await chats.append(
            chatID, question: question, datasource: answer.datasource, sql: answer.sql, engine: answer.engine, outcome: .answered, message: answer.summary,
            chart: answer.chart.kind.rawValue, choices: choices)
        return recorded
    }

    /// "5 rows; the first: USA (523.06 Total)" and the like.
    static func summary(_ result: QueryAnswer, spec: ChartSpec) -> String {
        let count = result.rows.count
        guard count > 0 else { return "No rows matched." }
        if count == 1, result.columns.count == 1 { return "\(result.columns[0]): \(ChartChoice.label(result.rows[0][0]))" }
        let rows = count == 1 ? "1 row" : "\(count)\(result.truncated ? "+" : "") rows"
        guard let x = spec.x, let y = spec.y.first, let xi = result.columns.firstIndex(of: x.value), let yi = result.columns.firstIndex(of: y.value) else {
            return rows + "."
        }
        let first = result.rows[0]
        return "\(rows); the first: \(ChartChoice.label(first[xi])) (\(y.name) \(ChartChoice.label(first[yi])))."
    }
}

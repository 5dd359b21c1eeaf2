import PorticoData

/// The offline engine: reads the question against the datasource's own schema and values and
/// writes one SELECT, deterministically, in milliseconds; refuses, saying why, when unsure.
public struct BuiltinEngine: AskEngine {
    public var name: String { "builtin" }

    public init() {}

    public func reply(to request: EngineRequest) async throws -> EngineReply {
        Self.answer(request)
    }

    static func answer(_ request: EngineRequest) -> EngineReply {
        guard let tables = request.tables else {
            return EngineReply(candidates: [], reason: "the built-in engine needs the datasource's schema")
        }
        let schema = SchemaModel(tables)
        // The index is numbered by the datasource's whole schema; a role may have narrowed this one.
        var values = request.values ?? ValueIndex()
        if let all = request.valueTables, all.count != tables.count { values = values.renumbered(for: schema) }
        let interpreter = Interpreter(schema: schema, values: values)
        // A follow-up applies to the chat's last understood question, itself read as a follow-up of
        // the ones before it (the chat's last few turns are enough).
        var previous: QueryPlan?
        for turn in request.history.suffix(8) {
            if case .success(let understood) = interpreter.understand(turn.question, previous: previous) { previous = understood.plan }
        }
        switch interpreter.understand(request.question, previous: previous) {
        case .failure(let refusal):
            return EngineReply(candidates: [], reason: refusal.message)
        case .success(let understood):
            switch PlanCompiler(schema: schema, dialect: request.dialect).compile(understood.plan) {
            case .success(let sql): return EngineReply(candidates: [sql], chart: understood.plan.chartHint)
            case .failure(let unwritable): return EngineReply(candidates: [], reason: unwritable.message)
            }
        }
    }
}

extension Interpreter {
    func understand(_ question: String, previous: QueryPlan? = nil) -> Result<Understood, NotUnderstood> {
        do {
            return .success(try interpret(question, previous: previous))
        } catch {
            return .failure(error)
        }
    }
}

import Foundation
public import PorticoAskEngine
import PorticoBase
public import PorticoCharts
import PorticoData
public import PorticoStore

/// The one place the semantic layer's definitions are checked, saved, shown and compiled: the
/// tools and the command line go through it. A definition's names are checked against the
/// datasource's schema and its SQL run once before it is saved; a caller sees, and may use,
/// only the definitions whose SQL reads nothing their role hides.
public struct SemanticService: Sendable {
    public let store: KnowledgeStore
    let datasources: DatasourceService

    public init(store: KnowledgeStore, datasources: DatasourceService) {
        self.store = store
        self.datasources = datasources
    }

    /// A definition as given to create or change one: `nil` keeps what was (or is missing).
    public struct Draft: Sendable, Equatable {
        public var name: String?
        public var synonyms: [String]?
        public var description: String?
        public var format: String?
        public var table: String?
        public var sql: String?
        public var filter: String?
        public var derived: String?
        public var time: Bool?
        public var condition: String?
        public var from: String?
        public var to: String?
        /// `many_to_one` or `one_to_one`.
        public var relationship: String?

        public init() {}
    }

    /// Definitions one datasource keeps at most.
    public static let maxPerDatasource = 1000
    static let maxFormat = 100

    // MARK: Changing the model

    public func create(app: String, datasource: String, kind: SemanticDefinition.Kind, _ draft: Draft, by userID: Int64?) async throws
        -> SemanticDefinition
    {
        let (source, tables) = try await datasources.schema(app: app, datasource: datasource)
        let existing = try await store.semanticDefinitions(app: app, datasource: datasource)
        guard existing.count < Self.maxPerDatasource else {
            throw DatasourceError("datasource '\(datasource)' has \(existing.count) semantic definitions, the most it keeps; remove some first")
        }
        var definition = try Self.definition(kind: kind, draft, datasource: datasource, tables: tables)
        definition.createdBy = userID
        try await check(&definition, app: app, others: existing, tables: tables, dialect: source.dialect)
        return try await store.insert(definition, app: app)
    }

    public func update(app: String, datasource: String, kind: SemanticDefinition.Kind, named: String, _ draft: Draft) async throws -> SemanticDefinition {
        let existing = try await store.semanticDefinitions(app: app, datasource: datasource)
        let old = try Self.find(kind, named, in: existing, datasource: datasource)
        return try await update(app: app, datasource: datasource, kind: kind, id: old.id, draft)
    }

    func update(app: String, datasource: String, kind: SemanticDefinition.Kind, id: Int64, _ draft: Draft) async throws -> SemanticDefinition {
        let (source, tables) = try await datasources.schema(app: app, datasource: datasource)
        let existing = try await store.semanticDefinitions(app: app, datasource: datasource)
        guard let old = existing.first(where: { $0.id == id && $0.kind == kind }) else {
            throw DatasourceError("datasource '\(datasource)' has no \(kind.rawValue) \(id)")
        }
        var merged = Self.draft(of: old)
        // Each part given replaces the one kept; an empty filter, description or format removes it.
        merged.name = draft.name ?? merged.name
        merged.synonyms = draft.synonyms ?? merged.synonyms
        if let text = draft.description { merged.description = text.isEmpty ? nil : text }
        if let text = draft.format { merged.format = text.isEmpty ? nil : text }
        if let text = draft.filter { merged.filter = text.isEmpty ? nil : text }
        if let derived = draft.derived {
            (merged.derived, merged.table, merged.sql, merged.filter) = (derived, nil, nil, nil)
        } else if draft.table != nil || draft.sql != nil {
            merged.derived = nil
        }
        merged.table = draft.table ?? merged.table
        merged.sql = draft.sql ?? merged.sql
        merged.time = draft.time ?? merged.time
        merged.condition = draft.condition ?? merged.condition
        merged.from = draft.from ?? merged.from
        merged.to = draft.to ?? merged.to
        merged.relationship = draft.relationship ?? merged.relationship
        var definition = try Self.definition(kind: kind, merged, datasource: datasource, tables: tables)
        definition.id = old.id
        definition.createdBy = old.createdBy
        try await check(&definition, app: app, others: existing.filter { $0.id != old.id }, tables: tables, dialect: source.dialect)
        // A metric renamed or moved is still what every derived metric made of it computes.
        if kind == .metric {
            let changed = SemanticModel(existing.map { $0.id == old.id ? definition : $0 })
            let compiler = MetricCompiler(model: changed, tables: tables, dialect: source.dialect)
            for derived in changed.all(.metric) where derived.id != old.id && !derived.referencedMetrics.isEmpty {
                do { _ = try compiler.compile(MetricQuery(metrics: [derived.name])) } catch {
                    throw DatasourceError("the derived metric '\(derived.name)' would no longer compute (\(error.message)); change it first")
                }
            }
        }
        try await store.update(definition, app: app)
        return definition
    }

    public func remove(app: String, datasource: String, kind: SemanticDefinition.Kind, named: String) async throws -> SemanticDefinition {
        let existing = try await store.semanticDefinitions(app: app, datasource: datasource)
        let old = try Self.find(kind, named, in: existing, datasource: datasource)
        if let user = existing.first(where: { $0.referencedMetrics.contains { old.isNamed($0) } }) {
            throw DatasourceError("the derived metric '\(user.name)' is made of '\(old.name)'; change or remove it first")
        }
        _ = try await store.removeSemanticDefinition(app: app, id: old.id)
        return old
    }

    /// The datasource's model as `caller` may see it.
    public func model(app: String, datasource: String, caller: QueryCaller) async throws -> SemanticModel {
        try await models(app: app, datasource: datasource, caller: caller).seen
    }

    /// The datasource's whole model and the part `caller` may see (a role narrows only the app's own data), with the schema.
    func models(app: String, datasource: String, caller: QueryCaller) async throws -> (
        all: SemanticModel, seen: SemanticModel, source: Datasource, tables: [SourceTable]
    ) {
        let (source, tables) = try await datasources.schema(app: app, datasource: datasource)
        let all = SemanticModel(try await store.semanticDefinitions(app: app, datasource: datasource))
        let seen = datasource == "main" ? Self.visible(all, tables: tables, rights: caller.rights, dialect: source.dialect) : all
        return (all, seen, source, tables)
    }

    // MARK: Querying

    public struct MetricAnswer: Sendable {
        public let compiled: CompiledMetricQuery
        public let answer: QueryAnswer
    }

    /// Compiles `query` over the model `caller` may see and runs it as the caller, through their role's views.
    public func query(app: String, datasource: String, _ query: MetricQuery, maxRows: Int? = nil, caller: QueryCaller) async throws -> MetricAnswer {
        let (all, seen, source, tables) = try await models(app: app, datasource: datasource, caller: caller)
        // Every declared relationship joins as it was declared; one the caller cannot read is refused below, not routed around.
        let model = SemanticModel(seen.definitions.filter { $0.kind != .relationship } + all.all(.relationship))
        let compiled = try MetricCompiler(model: model, tables: tables, dialect: source.dialect).compile(query)
        if let hidden = compiled.relationships.first(where: { r in !seen.definitions.contains { $0.id == r.id } }) {
            throw DatasourceError("the query joins through a relationship over tables or columns your role cannot read (\(hidden.name))")
        }
        let answer = try await datasources.query(app: app, datasource: datasource, sql: compiled.sql, maxRows: maxRows, caller: caller)
        return MetricAnswer(compiled: compiled, answer: answer)
    }

    // MARK: What a role may see

    /// The definitions whose SQL reads only what the rights let the caller read; a derived metric
    /// when all its parts are seen.
    public static func visible(_ model: SemanticModel, tables: [SourceTable], rights: @escaping (String) -> TableAccess, dialect: SQLDialect)
        -> SemanticModel
    {
        let readable = KnowledgeService.Readable(tables: tables, rights: rights, dialect: dialect)
        var seen = model.definitions.filter { d in
            if case .derived = d.body { return true }
            return probes(d, dialect: dialect).allSatisfy { readable($0) }
        }
        // A derived metric is seen when every part is, which may itself be derived.
        while true {
            let kept = SemanticModel(seen)
            let next = seen.filter { d in d.referencedMetrics.allSatisfy { kept.find(.metric, $0) != nil } }
            if next.count == seen.count { return kept }
            seen = next
        }
    }

    /// SQL that reads what a definition reads: checked when it is saved, and against a role's rights when it is shown.
    static func probes(_ d: SemanticDefinition, dialect: SQLDialect) -> [String] {
        let q = { ValueIndex.quote($0, dialect) }
        switch d.body {
        case .metric(let table, let sql, let filter):
            return ["SELECT \(sql) AS value FROM \(q(table))" + (filter.map { " WHERE (\($0))" } ?? "")]
        case .dimension(let table, let sql, _):
            return ["SELECT \(sql) AS value FROM \(q(table))"]
        case .segment(let table, let condition):
            return ["SELECT 1 AS found FROM \(q(table)) WHERE (\(condition))"]
        case .relationship(let from, let to, _):
            return ["SELECT \(q(from.column)) FROM \(q(from.table))", "SELECT \(q(to.column)) FROM \(q(to.table))"]
        case .derived:
            return []
        }
    }
}

extension AskService {
    /// The chart of a metric query's rows (a line over a time dimension), drawn and kept when
    /// asked to and there is a place to keep it: the spec, and the kept image's name.
    public func chart(of answer: QueryAnswer, title: String, overTime: Bool, draw: Bool) async throws -> (ChartSpec, String?) {
        let (spec, data) = ChartChoice.choose(columns: answer.columns, rows: answer.rows, hint: overTime ? "line" : nil, title: String(title.prefix(120)))
        guard draw, let data, let images, let png = renderer.png(spec, data) else { return (spec, nil) }
        return (spec, try await images.save(png: png))
    }
}

extension SemanticService {
    /// What an import did: definitions created and replaced, and each one it could not save, with why.
    public struct ImportReport: Sendable {
        public var created: [String] = []
        public var replaced: [String] = []
        public var examples = 0
        public var failed: [String] = []
        public var skipped: [String] = []
    }

    /// Saves what a file holds: each definition created, or replacing the one of its kind and
    /// name; each checked and run like one made by a tool. One that fails is reported, and the
    /// rest are still saved.
    public func importModel(app: String, datasource: String, _ parsed: SemanticFile.Parsed, knowledge: KnowledgeService, by userID: Int64?) async throws
        -> ImportReport
    {
        let tables = try await datasources.schema(app: app, datasource: datasource).1
        var existing = try await store.semanticDefinitions(app: app, datasource: datasource)
        var report = ImportReport(skipped: parsed.skipped)
        var seen = Set<String>()
        var pending = parsed.entries
        // A derived metric may name one later in the file: what failed for want of a part is tried once more.
        for round in 0..<2 {
            var retry: [SemanticFile.Entry] = []
            for entry in pending {
                let label = "\(entry.kind.rawValue) '\(entry.draft.name ?? "\(entry.draft.from ?? "?") -> \(entry.draft.to ?? "?")")'"
                do {
                    let probe = try Self.definition(kind: entry.kind, entry.draft, datasource: datasource, tables: tables)
                    guard round == 1 || seen.insert("\(entry.kind.rawValue)/\(probe.name.lowercased())").inserted else {
                        throw DatasourceError("the file names it twice; give each \(entry.kind.rawValue) a name of its own")
                    }
                    // Replaced only by its own name: a synonym of another definition is no claim on it.
                    if let k = existing.firstIndex(where: { $0.kind == entry.kind && $0.name.lowercased() == probe.name.lowercased() }) {
                        var replacing = entry.draft
                        replacing.name = nil
                        existing[k] = try await update(
                            app: app, datasource: datasource, kind: entry.kind, id: existing[k].id, Self.replacingWhole(replacing, kind: entry.kind))
                        report.replaced.append(label)
                    } else {
                        existing.append(try await create(app: app, datasource: datasource, kind: entry.kind, entry.draft, by: userID))
                        report.created.append(label)
                    }
                } catch let error as DatasourceError {
                    if round == 0, entry.draft.derived != nil, error.message.contains("there is no metric") {
                        retry.append(entry)
                    } else {
                        report.failed.append("\(label): \(error.message)")
                    }
                }
            }
            pending = retry
        }
        let examples = try await knowledge.store.examples(app: app, datasource: datasource)
        for (question, sql) in parsed.examples where !examples.contains(where: { $0.question.lowercased() == question.lowercased() }) {
            do {
                _ = try await knowledge.addExample(app: app, datasource: datasource, question: question, sql: sql, by: userID)
                report.examples += 1
            } catch let error as DatasourceError {
                report.failed.append("verified query '\(question.prefix(60))': \(error.message)")
            }
        }
        return report
    }

    /// A draft that replaces every part of a definition, so what the file leaves out is removed.
    static func replacingWhole(_ draft: Draft, kind: SemanticDefinition.Kind) -> Draft {
        var whole = draft
        whole.synonyms = draft.synonyms ?? []
        whole.description = draft.description ?? ""
        whole.format = draft.format ?? ""
        if kind == .metric, draft.derived == nil { whole.filter = draft.filter ?? "" }
        if kind == .dimension { whole.time = draft.time ?? false }
        if kind == .relationship { whole.relationship = draft.relationship ?? "many_to_one" }
        return whole
    }
}

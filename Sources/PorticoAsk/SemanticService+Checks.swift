import Foundation
import PorticoAskEngine
import PorticoBase
import PorticoStore

/// What a definition must be before it is saved: named once in its datasource, its tables and
/// columns those of the schema (spelt as the schema spells them), its SQL of the kind it
/// declares, and run once on the datasource.
extension SemanticService {
    /// The definition of `kind` named `named` (its name, a synonym, or its id).
    static func find(_ kind: SemanticDefinition.Kind, _ named: String, in definitions: [SemanticDefinition], datasource: String) throws(DatasourceError)
        -> SemanticDefinition
    {
        let text = named.trimmingSpaces()
        // A name first, then a synonym, then an id: a metric named "7" is not metric 7.
        if let found = definitions.first(where: { $0.kind == kind && $0.name.lowercased() == text.lowercased() })
            ?? definitions.first(where: { $0.kind == kind && $0.isNamed(text) }) ?? definitions.first(where: { $0.kind == kind && String($0.id) == text })
        {
            return found
        }
        let names = definitions.filter { $0.kind == kind }.map(\.name)
        throw DatasourceError(
            "datasource '\(datasource)' has no \(kind.rawValue) '\(text)'"
                + (names.isEmpty ? "" : "; its \(kind.plural) are: \(names.prefix(40).joined(separator: ", "))"))
    }

    /// A draft holding everything `d` says, to change some of it.
    static func draft(of d: SemanticDefinition) -> Draft {
        var draft = Draft()
        (draft.name, draft.synonyms, draft.description, draft.format) = (d.name, d.synonyms, d.description, d.format)
        switch d.body {
        case .metric(let table, let sql, let filter): (draft.table, draft.sql, draft.filter) = (table, sql, filter)
        case .derived(let expression): draft.derived = expression
        case .dimension(let table, let sql, let time): (draft.table, draft.sql, draft.time) = (table, sql, time)
        case .segment(let table, let condition): (draft.table, draft.condition) = (table, condition)
        case .relationship(let from, let to, let oneToOne):
            (draft.from, draft.to, draft.relationship) = (from.description, to.description, oneToOne ? "one_to_one" : "many_to_one")
        }
        return draft
    }

    /// The definition a draft describes, with its tables and columns spelt as the schema spells them.
    static func definition(kind: SemanticDefinition.Kind, _ draft: Draft, datasource: String, tables: [SourceTable]) throws(DatasourceError)
        -> SemanticDefinition
    {
        func required(_ value: String?, _ what: String) throws(DatasourceError) -> String {
            guard let value, !value.trimmingSpaces().isEmpty else { throw DatasourceError("a \(kind.rawValue) needs \(what)") }
            return value.trimmingSpaces()
        }
        func table(_ name: String) throws(DatasourceError) -> SourceTable {
            guard let found = tables.first(where: { $0.name.lowercased() == name.trimmingSpaces().lowercased() }) else {
                throw DatasourceError(
                    "datasource '\(datasource)' has no table '\(name)'; its tables are: \(tables.map(\.name).sorted().prefix(40).joined(separator: ", "))")
            }
            return found
        }
        func column(_ text: String, _ what: String) throws(DatasourceError) -> SemanticDefinition.ColumnReference {
            guard let dot = text.firstIndex(of: "."), dot != text.startIndex, text.index(after: dot) != text.endIndex else {
                throw DatasourceError("a relationship's \(what) is written Table.column; got '\(text)'")
            }
            let found = try table(String(text[..<dot]))
            let name = String(text[text.index(after: dot)...]).trimmingSpaces()
            guard let column = found.columns.first(where: { $0.name.lowercased() == name.lowercased() }) else {
                throw DatasourceError("table '\(found.name)' has no column '\(name)'; its columns are: \(found.columns.map(\.name).joined(separator: ", "))")
            }
            return .init(table: found.name, column: column.name)
        }
        let body: SemanticDefinition.Body
        var name = draft.name ?? ""
        switch kind {
        case .metric:
            if let derived = draft.derived {
                guard draft.table == nil, draft.sql == nil, draft.filter == nil else {
                    throw DatasourceError("a derived metric is made of other metrics only: give derived, or table and sql (and filter), not both")
                }
                body = .derived(try required(derived, "derived: arithmetic over other metrics in braces, e.g. {revenue} / {orders}"))
            } else {
                let on = try table(try required(draft.table, "its table (or derived, over other metrics)"))
                body = .metric(table: on.name, sql: try required(draft.sql, "sql: an aggregate over its table, e.g. SUM(Total)"), filter: draft.filter)
            }
        case .dimension:
            let on = try table(try required(draft.table, "its table"))
            body = .dimension(table: on.name, sql: try required(draft.sql, "sql: a column or an expression over its table"), time: draft.time ?? false)
        case .segment:
            let on = try table(try required(draft.table, "its table"))
            body = .segment(table: on.name, condition: try required(draft.condition, "condition: SQL that keeps the rows of its table it means"))
        case .relationship:
            let from = try column(try required(draft.from, "from: Table.column, the column that points"), "from")
            let to = try column(try required(draft.to, "to: Table.column, the column pointed at"), "to")
            let kindText = (draft.relationship ?? "many_to_one").lowercased()
            guard ["many_to_one", "one_to_one"].contains(kindText) else {
                throw DatasourceError("a relationship's kind is many_to_one or one_to_one; got '\(kindText)'")
            }
            body = .relationship(from: from, to: to, oneToOne: kindText == "one_to_one")
            name = "\(from) -> \(to)"
        }
        return SemanticDefinition(
            datasource: datasource, name: name, synonyms: kind == .relationship ? [] : draft.synonyms ?? [], description: draft.description,
            format: draft.format, body: body)
    }

    /// Cleans the definition's words and checks its SQL, running it once.
    func check(_ d: inout SemanticDefinition, app: String, others: [SemanticDefinition], tables: [SourceTable], dialect: SQLDialect) async throws {
        if d.kind == .relationship {
            if let same = others.first(where: { $0.kind == .relationship && $0.name.lowercased() == d.name.lowercased() }) {
                throw DatasourceError("relationship \(same.id) is already '\(same.name)'")
            }
        } else {
            d.name = try KnowledgeService.phrase(d.name, what: "\(d.kind.rawValue)'s name")
            var synonyms: [String] = []
            for synonym in d.synonyms {
                let cleaned = try KnowledgeService.phrase(synonym, what: "synonym")
                if cleaned.lowercased() != d.name.lowercased(), !synonyms.contains(where: { $0.lowercased() == cleaned.lowercased() }) {
                    synonyms.append(cleaned)
                }
            }
            guard synonyms.count <= KnowledgeService.maxSynonyms else {
                throw DatasourceError("a definition has at most \(KnowledgeService.maxSynonyms) synonyms; got \(synonyms.count)")
            }
            d.synonyms = synonyms
            for phrase in d.phrases {
                if let other = others.first(where: { $0.kind != .relationship && $0.isNamed(phrase) }) {
                    throw DatasourceError(
                        "'\(phrase)' already names the \(other.kind.rawValue) '\(other.name)' of datasource '\(d.datasource)'; "
                            + "metrics, dimensions and segments each need a name of their own")
                }
            }
        }
        if let text = d.description?.trimmingSpaces() {
            guard text.utf8.count <= KnowledgeService.maxDescription else {
                throw DatasourceError("the description is \(text.utf8.count) bytes; write one of at most \(KnowledgeService.maxDescription)")
            }
            d.description = text.isEmpty ? nil : text
        }
        if let text = d.format?.trimmingSpaces() {
            guard text.utf8.count <= Self.maxFormat else { throw DatasourceError("a format is at most \(Self.maxFormat) bytes") }
            d.format = text.isEmpty ? nil : text
        }
        try Self.checkSQL(d, tables: tables, dialect: dialect)
        try await run(d, app: app, others: others, tables: tables, dialect: dialect)
    }

    /// The SQL is of the kind the definition declares, over its table's columns.
    static func checkSQL(_ d: SemanticDefinition, tables: [SourceTable], dialect: SQLDialect) throws(DatasourceError) {
        let columns = { (name: String) in tables.first { $0.name == name }?.columns.map(\.name) ?? [] }
        switch d.body {
        case .metric(let table, let sql, let filter):
            _ = try AggregateSQL(sql, columns: columns(table), dialect: dialect)
            if let filter { _ = try TableSQL(filter, columns: columns(table), dialect: dialect, what: "filter") }
        case .derived(let expression):
            _ = try DerivedExpression(expression)
        case .dimension(let table, let sql, _):
            _ = try TableSQL(sql, columns: columns(table), dialect: dialect, what: "dimension")
        case .segment(_, let condition):
            try TableSQL.checkCondition(condition, dialect: dialect)
        case .relationship:
            break
        }
    }

    /// Runs the definition once on the datasource (a derived metric, compiled with its parts).
    func run(_ d: SemanticDefinition, app: String, others: [SemanticDefinition], tables: [SourceTable], dialect: SQLDialect) async throws {
        var probes = Self.probes(d, dialect: dialect)
        switch d.body {
        case .derived:
            let compiler = MetricCompiler(model: SemanticModel(others + [d]), tables: tables, dialect: dialect)
            probes = [try compiler.compile(MetricQuery(metrics: [d.name])).sql]
        case .dimension(let table, let sql, true):
            let compiler = MetricCompiler(model: SemanticModel(), tables: tables, dialect: dialect)
            probes.append("SELECT \(compiler.bucket("(\(sql))", .month)) AS value FROM \(ValueIndex.quote(table, dialect))")
        case .relationship, .metric, .dimension, .segment:
            break
        }
        for probe in probes {
            do {
                _ = try await datasources.query(app: app, datasource: d.datasource, sql: probe, maxRows: 1)
            } catch let error as SQLGuardError {
                throw DatasourceError("the \(d.kind.rawValue) '\(d.name)' was refused: \(error.message)")
            } catch let error as StoreError {
                throw DatasourceError("the \(d.kind.rawValue) '\(d.name)' does not run on '\(d.datasource)': \(error.message)")
            }
        }
    }
}

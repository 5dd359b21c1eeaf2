import Foundation
public import PorticoAskEngine
import PorticoBase
import PorticoData
public import PorticoStore

/// The one place terms and examples are checked, saved and shown: the tools, the command line
/// and the engines go through it, so each rule is written once. A term's names are checked
/// against the datasource's schema and its SQL run once before it is saved; an example's SQL
/// passes the guard and runs; and a caller never sees, nor has answered from, a term or example
/// that reads what their role hides.
public struct KnowledgeService: Sendable {
    public let store: KnowledgeStore
    let datasources: DatasourceService
    let chats: ChatStore

    public init(store: KnowledgeStore, datasources: DatasourceService, chats: ChatStore) {
        self.store = store
        self.datasources = datasources
        self.chats = chats
    }

    /// A term's meaning as given: names not yet checked against the schema.
    public enum MeaningDraft: Sendable, Equatable {
        /// `Table.Column`.
        case column(String)
        case expression(table: String, sql: String)
        case condition(table: String, sql: String)
    }

    /// What `updateTerm` changes; `nil` keeps the stored value.
    public struct TermChange: Sendable {
        public var term: String?
        public var synonyms: [String]?
        public var description: String?
        public var meaning: MeaningDraft?
        /// Makes the term a word with a description only.
        public var removesMeaning = false
        public init() {}
    }

    static let maxPhraseLength = 100
    static let maxSynonyms = 20
    static let maxDescription = 2000
    static let maxQuestion = 4000
    /// Terms and examples one datasource keeps at most: every question reads them.
    public static let maxPerDatasource = 1000

    // MARK: Terms

    public func addTerm(
        app: String, datasource: String, term: String, synonyms: [String] = [], description: String? = nil, meaning: MeaningDraft? = nil,
        by userID: Int64?
    ) async throws -> Term {
        // The datasource must exist, whether or not the term names anything in it.
        _ = try await datasources.schema(app: app, datasource: datasource)
        let existing = try await store.terms(app: app, datasource: datasource)
        guard existing.count < Self.maxPerDatasource else {
            throw DatasourceError("datasource '\(datasource)' has \(existing.count) terms, the most it keeps; remove some first")
        }
        var draft = Term(datasource: datasource, term: term, synonyms: synonyms, description: description, createdBy: userID)
        try await check(&draft, meaning: meaning, app: app, others: existing)
        return try await store.insert(draft, app: app)
    }

    public func updateTerm(app: String, id: Int64, _ change: TermChange, by userID: Int64?) async throws -> Term {
        guard var term = try await store.term(app: app, id: id) else { throw DatasourceError("there is no term \(id) in app '\(app)'; terms_list shows them") }
        if let text = change.term { term.term = text }
        if let synonyms = change.synonyms { term.synonyms = synonyms }
        if let description = change.description { term.description = description.isEmpty ? nil : description }
        if change.removesMeaning { term.meaning = nil }
        let others = try await store.terms(app: app, datasource: term.datasource).filter { $0.id != id }
        // A meaning kept as it was is checked again too: the schema may have changed under it.
        let meaning = change.meaning ?? (change.removesMeaning ? nil : term.meaning.map(Self.draft))
        try await check(&term, meaning: meaning, app: app, others: others)
        try await store.update(term, app: app)
        return term
    }

    public func removeTerm(app: String, id: Int64) async throws {
        guard try await store.removeTerm(app: app, id: id) else { throw DatasourceError("there is no term \(id) in app '\(app)'; terms_list shows them") }
    }

    /// The terms of a datasource that `caller` may see.
    public func terms(app: String, datasource: String, caller: QueryCaller) async throws -> [Term] {
        let (source, tables) = try await datasources.schema(app: app, datasource: datasource)
        let all = try await store.terms(app: app, datasource: datasource)
        return Self.visible(all, tables: tables, rights: datasource == "main" ? caller.rights : TableAccess.everything, dialect: source.dialect)
    }

    static func draft(_ meaning: Term.Meaning) -> MeaningDraft {
        switch meaning {
        case .column(let table, let column): .column("\(table).\(column)")
        case .expression(let table, let sql): .expression(table: table, sql: sql)
        case .condition(let table, let sql): .condition(table: table, sql: sql)
        }
    }

    /// Cleans the term's words and sets its meaning from `meaning`, checked against the schema and run once.
    func check(_ term: inout Term, meaning: MeaningDraft?, app: String, others: [Term]) async throws {
        term.term = try Self.phrase(term.term, what: "term")
        var synonyms: [String] = []
        for synonym in term.synonyms {
            let cleaned = try Self.phrase(synonym, what: "synonym")
            if cleaned.lowercased() != term.term.lowercased(), !synonyms.contains(where: { $0.lowercased() == cleaned.lowercased() }) {
                synonyms.append(cleaned)
            }
        }
        guard synonyms.count <= Self.maxSynonyms else { throw DatasourceError("a term has at most \(Self.maxSynonyms) synonyms; got \(synonyms.count)") }
        term.synonyms = synonyms
        if let description = term.description {
            let trimmed = description.trimmingSpaces()
            guard trimmed.utf8.count <= Self.maxDescription else {
                throw DatasourceError("the description is \(trimmed.utf8.count) bytes; write one of at most \(Self.maxDescription)")
            }
            term.description = trimmed.isEmpty ? nil : trimmed
        }
        for phrase in term.phrases {
            if let other = others.first(where: { $0.phrases.contains { $0.lowercased() == phrase.lowercased() } }) {
                throw DatasourceError(
                    "'\(phrase)' already names term \(other.id) ('\(other.term)') of datasource '\(term.datasource)'; change that one instead")
            }
        }
        guard let meaning else {
            term.meaning = nil
            return
        }
        term.meaning = try await resolve(meaning, app: app, datasource: term.datasource)
    }

    static func phrase(_ text: String, what: String) throws(DatasourceError) -> String {
        let cleaned = text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        guard !cleaned.isEmpty, cleaned.contains(where: { $0.isLetter || $0.isNumber }) else {
            throw DatasourceError("a \(what) needs at least one letter or digit; got '\(text)'")
        }
        guard cleaned.count <= maxPhraseLength else {
            throw DatasourceError("a \(what) is at most \(maxPhraseLength) characters; '\(cleaned.prefix(40))…' is longer")
        }
        return cleaned
    }

    /// The meaning with the schema's own spelling of its names, after its SQL ran once on the datasource.
    func resolve(_ draft: MeaningDraft, app: String, datasource: String) async throws -> Term.Meaning {
        let (source, tables) = try await datasources.schema(app: app, datasource: datasource)
        func table(_ name: String) throws(DatasourceError) -> SourceTable {
            guard let found = tables.first(where: { $0.name.lowercased() == name.trimmingSpaces().lowercased() }) else {
                throw DatasourceError(
                    "datasource '\(datasource)' has no table '\(name)'; its tables are: \(tables.map(\.name).sorted().prefix(40).joined(separator: ", "))")
            }
            return found
        }
        switch draft {
        case .column(let text):
            guard let dot = text.firstIndex(of: "."), dot != text.startIndex, text.index(after: dot) != text.endIndex else {
                throw DatasourceError("a term's column is written Table.Column; got '\(text)'")
            }
            let found = try table(String(text[..<dot]))
            let name = String(text[text.index(after: dot)...]).trimmingSpaces()
            guard let column = found.columns.first(where: { $0.name.lowercased() == name.lowercased() }) else {
                throw DatasourceError("table '\(found.name)' has no column '\(name)'; its columns are: \(found.columns.map(\.name).joined(separator: ", "))")
            }
            return .column(table: found.name, column: column.name)
        case .expression(let tableName, let sql), .condition(let tableName, let sql):
            let found = try table(tableName)
            let isExpression = if case .expression = draft { true } else { false }
            let what = isExpression ? "expression" : "condition"
            let parsed: TableSQL
            // A condition that reads other tables (a subquery, an aggregate) applies by the table's key.
            let keys = found.columns.filter(\.primaryKey)
            if !isExpression, (try? TableSQL(sql, columns: found.columns.map(\.name), dialect: source.dialect, what: what)) == nil, keys.count == 1,
                let key = keys.first
            {
                parsed = try TableSQL(condition: sql, table: found.name, key: key.name, dialect: source.dialect)
            } else {
                parsed = try TableSQL(sql, columns: found.columns.map(\.name), dialect: source.dialect, what: what)
            }
            let quoted = ValueIndex.quote(found.name, source.dialect)
            let probe =
                isExpression
                ? "SELECT \(parsed.render(alias: nil)) AS value FROM \(quoted) LIMIT 1"
                : "SELECT 1 AS found FROM \(quoted) WHERE (\(parsed.membership?.condition ?? parsed.render(alias: nil))) LIMIT 1"
            do {
                _ = try await datasources.query(app: app, datasource: datasource, sql: probe, maxRows: 1)
            } catch let error as SQLGuardError {
                throw DatasourceError("the \(what) was refused: \(error.message)")
            } catch let error as StoreError {
                throw DatasourceError("the \(what) does not run on \(found.name): \(error.message)")
            }
            let kept = sql.trimmingSpaces()
            return isExpression ? .expression(table: found.name, sql: kept) : .condition(table: found.name, sql: kept)
        }
    }

    // MARK: Examples

    /// Saves a question with the SQL that answers it, after the guard passed the SQL and it ran.
    public func addExample(app: String, datasource: String, question: String, sql: String, by userID: Int64?, caller: QueryCaller = .operator)
        async throws -> Example
    {
        let text = question.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        guard !text.isEmpty else { throw DatasourceError("an example needs its question") }
        guard text.utf8.count <= Self.maxQuestion else { throw DatasourceError("the question is \(text.utf8.count) bytes; at most \(Self.maxQuestion)") }
        let existing = try await store.examples(app: app, datasource: datasource)
        guard existing.count < Self.maxPerDatasource else {
            throw DatasourceError("datasource '\(datasource)' has \(existing.count) examples, the most it keeps; remove some first")
        }
        if let same = existing.first(where: { $0.question.lowercased() == text.lowercased() }) {
            throw DatasourceError("example \(same.id) already answers '\(same.question)'; remove it first to replace it")
        }
        let ran: QueryAnswer
        do {
            ran = try await datasources.query(app: app, datasource: datasource, sql: sql, maxRows: 1, caller: caller)
        } catch let error as SQLGuardError {
            throw DatasourceError("the example's SQL was refused: \(error.message)")
        } catch let error as StoreError {
            throw DatasourceError("the example's SQL does not run on '\(datasource)': \(error.message)")
        }
        return try await store.insert(Example(datasource: datasource, question: text, sql: ran.sql, verifiedBy: userID), app: app)
    }

    /// Saves an answered question of the user's chat as an example, verified by that user.
    public func saveAnswer(app: String, chatID: Int64, recordID: Int64, userID: Int64, caller: QueryCaller) async throws -> Example {
        guard let record = try await chats.record(recordID, chatID: chatID, app: app, userID: userID) else {
            throw DatasourceError("chat \(chatID) has no record \(recordID) of yours; the ask tool's answer gives both")
        }
        guard record.outcome == .answered, let sql = record.sql else {
            throw DatasourceError("record \(recordID) was not answered with SQL, so it cannot be an example")
        }
        return try await addExample(app: app, datasource: record.datasource ?? "main", question: record.question, sql: sql, by: userID, caller: caller)
    }

    public func removeExample(app: String, id: Int64) async throws {
        guard try await store.removeExample(app: app, id: id) else {
            throw DatasourceError("there is no example \(id) in app '\(app)'; examples_list shows them")
        }
    }

    /// The examples of a datasource that `caller` may see.
    public func examples(app: String, datasource: String, caller: QueryCaller) async throws -> [Example] {
        let (source, tables) = try await datasources.schema(app: app, datasource: datasource)
        let all = try await store.examples(app: app, datasource: datasource)
        return Self.visible(all, tables: tables, rights: datasource == "main" ? caller.rights : TableAccess.everything, dialect: source.dialect)
    }

    // MARK: What a role may see

    /// The terms whose table and columns the rights let the caller read.
    public static func visible(_ terms: [Term], tables: [SourceTable], rights: (String) -> TableAccess, dialect: SQLDialect) -> [Term] {
        withoutActuallyEscaping(rights) { rights in
            let readable = Readable(tables: tables, rights: rights, dialect: dialect)
            return terms.filter { term in
                // A condition over other tables is seen when all it reads is.
                if case .condition(let table, let sql)? = term.meaning, (try? TableSQL.checkCondition(sql, dialect: dialect)) != nil,
                    (try? SQLTokenizer.tokenize(sql, dialect: dialect))?.contains(where: { TableSQL.clauseWords.contains($0.keyword) }) == true
                {
                    return readable("SELECT 1 AS found FROM \(ValueIndex.quote(table, dialect)) WHERE (\(sql))")
                }
                return Self.visible(term, tables: tables, rights: rights, dialect: dialect)
            }
        }
    }

    static func visible(_ term: Term, tables: [SourceTable], rights: (String) -> TableAccess, dialect: SQLDialect) -> Bool {
        guard let meaning = term.meaning else { return true }
        guard let table = tables.first(where: { $0.name.lowercased() == meaning.table.lowercased() }) else { return false }
        let readable: Set<String>
        switch rights(table.name) {
        case .whole: readable = Set(table.columns.map { $0.name.lowercased() })
        case .refused: return false
        case .view(let view): readable = Set(view.columns.map { $0.lowercased() })
        }
        switch meaning {
        case .column(_, let column): return readable.contains(column.lowercased())
        case .expression(_, let sql), .condition(_, let sql):
            guard let parsed = try? TableSQL(sql, columns: table.columns.map(\.name), dialect: dialect, what: "") else { return false }
            return parsed.columns.allSatisfy { readable.contains($0.lowercased()) }
        }
    }

    /// The examples whose SQL reads only tables the caller may read, and none of their hidden columns.
    public static func visible(_ examples: [Example], tables: [SourceTable], rights: (String) -> TableAccess, dialect: SQLDialect) -> [Example] {
        withoutActuallyEscaping(rights) { rights in
            let readable = Readable(tables: tables, rights: rights, dialect: dialect)
            return examples.filter { readable($0.sql) }
        }
    }

    /// Whether SQL reads only tables a caller may read, and none of their hidden columns: what
    /// decides which examples and semantic definitions the caller sees.
    struct Readable {
        let guardian: SQLGuard
        let byName: [String: SourceTable]
        let rights: (String) -> TableAccess
        let dialect: SQLDialect

        init(tables: [SourceTable], rights: @escaping (String) -> TableAccess, dialect: SQLDialect) {
            guardian = SQLGuard(dialect: dialect, tables: tables.map(\.name))
            byName = Dictionary(tables.map { ($0.name.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
            self.rights = rights
            self.dialect = dialect
        }

        func callAsFunction(_ sql: String) -> Bool {
            guard let checked = try? guardian.check(sql), let tokens = try? SQLTokenizer.tokenize(sql, dialect: dialect) else { return false }
            var hidden = Set<String>()
            for name in checked.tables where !checked.commonTableNames.contains(name.lowercased()) {
                guard let table = byName[name.lowercased()] else { return false }
                switch rights(table.name) {
                case .whole: continue
                case .refused: return false
                case .view(let view):
                    let shown = Set(view.columns.map { $0.lowercased() })
                    hidden.formUnion(table.columns.map { $0.name.lowercased() }.filter { !shown.contains($0) })
                }
            }
            return !tokens.contains { ($0.kind == .word || $0.kind == .quotedIdentifier) && hidden.contains($0.text.lowercased()) }
        }
    }
}

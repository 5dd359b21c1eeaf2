import Foundation
public import PorticoStore

/// Everything an engine is given to write SQL for one question.
public struct EngineRequest: Sendable {
    public struct Turn: Sendable {
        public let question: String
        public let sql: String?

        public init(question: String, sql: String?) {
            self.question = question
            self.sql = sql
        }
    }

    public var question: String
    public var lang: String
    public var dialect: SQLDialect
    /// The compact schema, most relevant tables first, within the prompt's budget.
    public var schema: String
    /// Earlier questions of this datasource with the SQL that answered them.
    public var examples: [Turn]
    /// The chat so far, oldest first.
    public var history: [Turn]
    /// SQL that failed, with the database's error, for the engine to correct.
    public var corrections: [(sql: String, error: String)]
    /// The schema itself, for an engine that reads it rather than the text (the built-in one).
    public var tables: [SourceTable]? = nil
    /// The datasource's text values, for the built-in engine, numbered by the schema of `valueTables`.
    public var values: ValueIndex? = nil
    public var valueTables: [SourceTable]? = nil
    /// The datasource's terms the caller may see: words the built-in engine understands, a glossary for a model.
    public var terms: [Term] = []
    /// The datasource's saved examples the caller may see, most like the question first.
    public var savedExamples: [Example] = []
    /// What the datasource's administrators tell a model about it.
    public var instructions: String? = nil
    /// The datasource's semantic model as the caller may see it: metrics, dimensions, segments, relationships.
    public var semantic = SemanticModel()
    /// Readings the asker chose when asked back (`Table.Column` of a key), for this question and the chat's next.
    public var choices: [String] = []

    public init(
        question: String, lang: String, dialect: SQLDialect, schema: String, examples: [Turn], history: [Turn],
        corrections: [(sql: String, error: String)]
    ) {
        self.question = question
        self.lang = lang
        self.dialect = dialect
        self.schema = schema
        self.examples = examples
        self.history = history
        self.corrections = corrections
    }
}

/// A failure to get an answer from an engine (unreachable, refused the request, no key).
public struct EngineError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// An engine turns a question into SQL candidates.
public protocol AskEngine: Sendable {
    /// How the answer names it: `llm:NAME`, `builtin`.
    var name: String { get }
    /// What it does beyond writing SQL: the service treats an engine by these, not by its type.
    var traits: EngineTraits { get }
    func reply(to request: EngineRequest) async throws -> EngineReply
}

/// What an engine does beyond writing SQL for a question.
public struct EngineTraits: OptionSet, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Reads the datasource's values itself: it is given them with the tables.
    public static let readsValues = EngineTraits(rawValue: 1 << 0)
    /// Says in its own words what it did not understand when it writes no SQL.
    public static let explainsRefusals = EngineTraits(rawValue: 1 << 1)
    /// Gives each reading a confidence measured against the sure band (`BuiltinEngine.sureConfidence`).
    public static let calibratedConfidence = EngineTraits(rawValue: 1 << 2)
    /// Writes other SQL when told how its SQL failed; one that does not would write the same again,
    /// so its first failure is the answer.
    public static let correctsItsSQL = EngineTraits(rawValue: 1 << 3)
    /// Reads the schema as text (`EngineRequest.schema`, ranked for the question); one that reads
    /// the tables themselves is spared rendering it.
    public static let readsSchemaText = EngineTraits(rawValue: 1 << 4)
}

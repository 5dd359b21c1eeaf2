import Foundation

/// What a model's reply asked for: SQL candidates in the order to try them, and hints.
public struct EngineReply: Sendable, Equatable {
    public var candidates: [String]
    public var chart: String?
    public var title: String?
    /// The model's reason when it says the question cannot be answered from the schema.
    public var reason: String?
    /// How sure the engine is, from 0 to 1, when it can say (the built-in engine does).
    public var confidence: Double?
    /// What lowered the confidence (`Risk` names), for `portico eval`.
    public var risks: [String] = []
    /// The saved example the answer was adapted from, when it was.
    public var example: Int64?
    /// Two readings the engine cannot choose between: the question to ask back instead of refusing.
    public var clarification: Clarification?

    public init(candidates: [String], chart: String? = nil, title: String? = nil, reason: String? = nil, confidence: Double? = nil, risks: [String] = []) {
        self.candidates = candidates
        self.chart = chart
        self.title = title
        self.reason = reason
        self.confidence = confidence
        self.risks = risks
    }
}

/// A question back: which of a few readings was meant.
public struct Clarification: Sendable, Equatable {
    public struct Option: Sendable, Equatable {
        /// What names the choice in a retried `ask` (`choice`): a column, `Table.Column`.
        public let value: String
        /// The choice in words.
        public let label: String

        public init(value: String, label: String) {
            self.value = value
            self.label = label
        }
    }

    public let message: String
    public let options: [Option]

    public init(message: String, options: [Option]) {
        self.message = message
        self.options = options
    }
}

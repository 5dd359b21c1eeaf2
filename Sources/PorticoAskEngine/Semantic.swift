public import PorticoJSON

/// One definition of a datasource's semantic layer: a number the business names (a metric),
/// something its numbers are broken down by (a dimension), a named set of rows (a segment) or
/// how two tables relate. Declared once, it is compiled the same way for every caller
/// (`MetricCompiler`), so "revenue" is the same number whoever asks.
public struct SemanticDefinition: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        case metric, dimension, segment, relationship

        /// The plural the model's JSON and the tools use (`metrics`, …).
        public var plural: String { rawValue + "s" }
    }

    /// A column written `Table.column`.
    public struct ColumnReference: Sendable, Equatable, CustomStringConvertible {
        public var table: String
        public var column: String

        public init(table: String, column: String) {
            self.table = table
            self.column = column
        }

        public var description: String { "\(table).\(column)" }
    }

    public enum Body: Sendable, Equatable {
        /// An aggregate over the rows of `table` (`SUM(UnitPrice * Quantity)`), of the rows `filter` keeps.
        case metric(table: String, sql: String, filter: String?)
        /// Arithmetic over other metrics, each named in braces (`{won revenue} / {total amount}`).
        case derived(String)
        /// A value per row of `table`; a time dimension is bucketed by the grain a query asks for.
        case dimension(table: String, sql: String, time: Bool)
        /// A condition on the rows of `table`, which may read other tables and aggregates.
        case segment(table: String, condition: String)
        /// Rows of `from`'s table point at one row of `to`'s table (or exactly one each way).
        case relationship(from: ColumnReference, to: ColumnReference, oneToOne: Bool)

        public var kind: Kind {
            switch self {
            case .metric, .derived: .metric
            case .dimension: .dimension
            case .segment: .segment
            case .relationship: .relationship
            }
        }

        /// The table it is defined over (a relationship's, the one that points; a derived metric has none).
        public var table: String? {
            switch self {
            case .metric(let table, _, _), .dimension(let table, _, _), .segment(let table, _): table
            case .relationship(let from, _, _): from.table
            case .derived: nil
            }
        }
    }

    public var id: Int64
    public var datasource: String
    public var name: String
    public var synonyms: [String]
    public var description: String?
    /// How a metric's values are shown (`currency`, `percent`, a unit); free text.
    public var format: String?
    public var body: Body
    public var createdBy: Int64?

    public init(
        id: Int64 = 0, datasource: String, name: String, synonyms: [String] = [], description: String? = nil, format: String? = nil, body: Body,
        createdBy: Int64? = nil
    ) {
        self.id = id
        self.datasource = datasource
        self.name = name
        self.synonyms = synonyms
        self.description = description
        self.format = format
        self.body = body
        self.createdBy = createdBy
    }

    public var kind: Kind { body.kind }

    /// The name and its synonyms: every phrase that means it.
    public var phrases: [String] { [name] + synonyms }

    /// Whether `text` names it: its name or a synonym, in any case.
    public func isNamed(_ text: String) -> Bool {
        let wanted = text.split(whereSeparator: \.isWhitespace).joined(separator: " ").lowercased()
        return phrases.contains { $0.lowercased() == wanted }
    }

    /// The metrics a derived metric's expression names, in order, each once.
    public var referencedMetrics: [String] {
        guard case .derived(let expression) = body else { return [] }
        var names: [String] = []
        var rest = Substring(expression)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            let name = rest[rest.index(after: open)..<close].split(whereSeparator: \.isWhitespace).joined(separator: " ")
            if !names.contains(where: { $0.lowercased() == name.lowercased() }) { names.append(name) }
            rest = rest[rest.index(after: close)...]
        }
        return names
    }

    /// The shape `semantic_model_get` and the export give it (PRODUCT.md, "The semantic layer").
    public var json: JSON {
        var object: JSONObject = ["id": .int(id), "name": .string(name)]
        if kind != .relationship {
            object["synonyms"] = .array(synonyms.map(JSON.string))
            object["description"] = description.map(JSON.string) ?? .null
        }
        switch body {
        case .metric(let table, let sql, let filter):
            object["table"] = .string(table)
            object["sql"] = .string(sql)
            object["filter"] = filter.map(JSON.string) ?? .null
            object["format"] = format.map(JSON.string) ?? .null
        case .derived(let expression):
            object["derived"] = .string(expression)
            object["format"] = format.map(JSON.string) ?? .null
        case .dimension(let table, let sql, let time):
            object["table"] = .string(table)
            object["sql"] = .string(sql)
            object["time"] = .bool(time)
        case .segment(let table, let condition):
            object["table"] = .string(table)
            object["condition"] = .string(condition)
        case .relationship(let from, let to, let oneToOne):
            object["from"] = .string(from.description)
            object["to"] = .string(to.description)
            object["kind"] = .string(oneToOne ? "one_to_one" : "many_to_one")
        }
        return .object(object)
    }
}

/// A datasource's semantic layer as one value: what `semantic_model_get` shows and the compiler reads.
public struct SemanticModel: Sendable, Equatable {
    public var definitions: [SemanticDefinition]

    public init(_ definitions: [SemanticDefinition] = []) {
        self.definitions = definitions
    }

    public func all(_ kind: SemanticDefinition.Kind) -> [SemanticDefinition] { definitions.filter { $0.kind == kind } }

    /// The definition of `kind` that `text` names (its name or a synonym, in any case).
    public func find(_ kind: SemanticDefinition.Kind, _ text: String) -> SemanticDefinition? {
        definitions.first { $0.kind == kind && $0.isNamed(text) }
    }

    public var isEmpty: Bool { definitions.isEmpty }
}

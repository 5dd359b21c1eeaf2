import Foundation
public import PorticoAskEngine
import PorticoBase
import PorticoJSON
import Yams

/// A semantic model as a file: Portico's own YAML (what `portico semantic export` writes and
/// `import` reads back), and the models other tools keep — dbt MetricFlow's semantic models and
/// metrics (YAML), Snowflake Cortex Analyst's semantic model (YAML), WrenAI's MDL (JSON) — each
/// read into Portico's definitions, with what could not be taken named.
public enum SemanticFile {
    public enum Format: String, Sendable, CaseIterable { case portico, dbt, cortex, wren }

    /// One definition read from a file, to be created (or to replace the one of its name).
    public struct Entry: Sendable, Equatable {
        public var kind: SemanticDefinition.Kind
        public var draft: SemanticService.Draft
    }

    /// What a file holds: definitions in the order they can be saved (relationships, plain
    /// metrics, dimensions, segments, then derived metrics), verified queries, and what was left out, with why.
    public struct Parsed: Sendable, Equatable {
        public var entries: [Entry] = []
        public var examples: [(question: String, sql: String)] = []
        public var skipped: [String] = []

        public static func == (a: Parsed, b: Parsed) -> Bool {
            a.entries == b.entries && a.skipped == b.skipped && a.examples.map(\.question) == b.examples.map(\.question)
                && a.examples.map(\.sql) == b.examples.map(\.sql)
        }

        mutating func add(_ kind: SemanticDefinition.Kind, _ draft: SemanticService.Draft) { entries.append(Entry(kind: kind, draft: draft)) }

        /// Relationships first, derived metrics last: each after what it names.
        var ordered: Parsed {
            func rank(_ e: Entry) -> Int {
                switch e.kind {
                case .relationship: 0
                case .metric: e.draft.derived == nil ? 1 : 4
                case .dimension: 2
                case .segment: 3
                }
            }
            var copy = self
            copy.entries = entries.enumerated().sorted { (rank($0.element), $0.offset) < (rank($1.element), $1.offset) }.map(\.element)
            return copy
        }
    }

    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
        init(_ message: String) { description = message }
    }

    /// Files are read whole; a model is kilobytes.
    public static let maxBytes = 4 << 20

    public static func read(_ text: String, format: Format) throws -> Parsed {
        guard text.utf8.count <= maxBytes else { throw Invalid("the file is \(text.utf8.count) bytes; a semantic model file is at most \(maxBytes)") }
        let document: JSON
        if format == .wren {
            do { document = try JSONParser.parse(text) } catch { throw Invalid("the WrenAI MDL file is not JSON: \(error)") }
        } else {
            document = try yaml(text)
        }
        guard let root = document.objectValue else { throw Invalid("the file holds no mapping at its top; see the \(format.rawValue) format") }
        var parsed: Parsed
        switch format {
        case .portico: parsed = try portico(root)
        case .dbt: parsed = try dbt(root)
        case .cortex: parsed = try cortex(root)
        case .wren: parsed = try wren(root)
        }
        return parsed.ordered
    }

    /// YAML read into JSON values (Yams resolves scalars: numbers, booleans, null).
    static func yaml(_ text: String) throws -> JSON {
        let loaded: Any?
        do { loaded = try Yams.load(yaml: text) } catch { throw Invalid("the file is not YAML: \(error)") }
        func convert(_ value: Any?) -> JSON {
            switch value {
            case nil, is NSNull: return .null
            case let b as Bool: return .bool(b)
            case let i as Int: return .int(Int64(i))
            case let d as Double: return .double(d)
            case let s as String: return .string(s)
            case let a as [Any]: return .array(a.map(convert))
            case let m as [String: Any]: return .object(JSONObject(uniqueKeysWithValues: m.map { ($0.key, convert($0.value)) }))
            case let m as [AnyHashable: Any]: return .object(JSONObject(uniqueKeysWithValues: m.map { ("\($0.key)", convert($0.value)) }))
            case let other?: return .string("\(other)")
            }
        }
        return convert(loaded)
    }

    // MARK: Portico's own

    static func portico(_ root: JSONObject) throws -> Parsed {
        var parsed = Parsed()
        for (key, kind) in [("relationships", SemanticDefinition.Kind.relationship), ("metrics", .metric), ("dimensions", .dimension), ("segments", .segment)] {
            for (i, item) in (root[key]?.arrayValue ?? []).enumerated() {
                guard let object = item.objectValue else { throw Invalid("\(key)[\(i)] is not a mapping") }
                var draft = SemanticService.Draft()
                draft.name = object["name"]?.stringValue
                draft.synonyms = object["synonyms"]?.arrayValue?.compactMap(\.stringValue)
                draft.description = object["description"]?.stringValue
                draft.format = object["format"]?.stringValue
                draft.table = object["table"]?.stringValue
                draft.sql = object["sql"]?.stringValue
                draft.filter = object["filter"]?.stringValue
                draft.derived = object["derived"]?.stringValue
                draft.time = object["time"]?.boolValue
                draft.condition = object["condition"]?.stringValue
                draft.from = object["from"]?.stringValue
                draft.to = object["to"]?.stringValue
                draft.relationship = object["kind"]?.stringValue
                guard kind == .relationship || draft.name != nil else { throw Invalid("\(key)[\(i)] has no name") }
                parsed.add(kind, draft)
            }
        }
        for (i, item) in (root["verified_queries"]?.arrayValue ?? []).enumerated() {
            guard let question = item["question"]?.stringValue, let sql = item["sql"]?.stringValue else {
                throw Invalid("verified_queries[\(i)] needs question and sql")
            }
            parsed.examples.append((question, sql))
        }
        return parsed
    }

    /// Portico's YAML for a model, which `read(_:format: .portico)` takes back as it was.
    public static func write(_ model: SemanticModel, examples: [Example] = [], datasource: String) -> String {
        func text(_ s: String) -> String { JSON.string(s).serializedString }
        var out = "# Portico semantic model of datasource \(text(datasource)); `portico semantic import FILE --datasource NAME` reads it.\n"
        for kind in [SemanticDefinition.Kind.relationship, .metric, .dimension, .segment] {
            let all = model.all(kind)
            guard !all.isEmpty else { continue }
            out += "\(kind.plural):\n"
            for d in all {
                var lines: [(String, String)] = []
                if kind != .relationship { lines.append(("name", text(d.name))) }
                if !d.synonyms.isEmpty { lines.append(("synonyms", "[" + d.synonyms.map(text).joined(separator: ", ") + "]")) }
                if let description = d.description { lines.append(("description", text(description))) }
                switch d.body {
                case .metric(let table, let sql, let filter):
                    lines += [("table", text(table)), ("sql", text(sql))]
                    if let filter { lines.append(("filter", text(filter))) }
                case .derived(let expression): lines.append(("derived", text(expression)))
                case .dimension(let table, let sql, let time):
                    lines += [("table", text(table)), ("sql", text(sql))]
                    if time { lines.append(("time", "true")) }
                case .segment(let table, let condition): lines += [("table", text(table)), ("condition", text(condition))]
                case .relationship(let from, let to, let oneToOne):
                    lines += [("from", text(from.description)), ("to", text(to.description)), ("kind", oneToOne ? "one_to_one" : "many_to_one")]
                }
                if let format = d.format { lines.append(("format", text(format))) }
                for (i, (key, value)) in lines.enumerated() { out += (i == 0 ? "  - " : "    ") + "\(key): \(value)\n" }
            }
        }
        if !examples.isEmpty {
            out += "verified_queries:\n"
            for example in examples { out += "  - question: \(text(example.question))\n    sql: \(text(example.sql))\n" }
        }
        return out
    }
}

import Foundation
import PorticoAskEngine
import PorticoBase
import PorticoJSON

/// The models other tools keep, read into Portico's definitions. Each reader takes what has a
/// Portico equivalent and lists the rest in `skipped`, with why.
extension SemanticFile {
    // MARK: dbt MetricFlow

    /// `semantic_models` (a table each: entities, dimensions, measures) and `metrics` (simple,
    /// ratio, derived). Measures become metrics through the simple metrics that name them; a
    /// foreign entity of one model and the primary entity of the same name in another become a
    /// relationship.
    static func dbt(_ root: JSONObject) throws -> Parsed {
        var parsed = Parsed()
        guard let models = root["semantic_models"]?.arrayValue else { throw Invalid("a dbt MetricFlow file has semantic_models (and metrics)") }
        struct Measure {
            let model: String
            let table: String
            let sql: String
        }
        var measures: [String: Measure] = [:]
        /// `model/dimension` → the dimension's SQL, for filters written with `Dimension('entity__name')`;
        /// a primary entity → its model.
        var dimensionSQL: [String: String] = [:]
        var entityModel: [String: String] = [:]
        var primary: [String: (table: String, column: String)] = [:]
        var foreign: [(table: String, column: String, entity: String)] = []
        for (i, item) in models.enumerated() {
            guard let model = item.objectValue, let name = model["name"]?.stringValue else { throw Invalid("semantic_models[\(i)] has no name") }
            let table = Self.dbtTable(model["model"]?.stringValue ?? name)
            for entity in model["entities"]?.arrayValue ?? [] {
                guard let entityName = entity["name"]?.stringValue else { continue }
                let column = entity["expr"]?.stringValue ?? entityName
                switch entity["type"]?.stringValue?.lowercased() {
                case "primary"?, "unique"?:
                    primary[entityName.lowercased()] = (table, column)
                    entityModel[entityName.lowercased()] = name.lowercased()
                case "foreign"?: foreign.append((table, column, entityName.lowercased()))
                default: break
                }
            }
            for dimension in model["dimensions"]?.arrayValue ?? [] {
                guard let dimensionName = dimension["name"]?.stringValue else { continue }
                var draft = SemanticService.Draft()
                draft.name = dimensionName
                draft.description = dimension["description"]?.stringValue
                if let label = dimension["label"]?.stringValue, label.lowercased() != dimensionName.lowercased() { draft.synonyms = [label] }
                draft.table = table
                draft.sql = dimension["expr"]?.stringValue ?? dimensionName
                draft.time = dimension["type"]?.stringValue?.lowercased() == "time"
                dimensionSQL["\(name.lowercased())/\(dimensionName.lowercased())"] = draft.sql
                parsed.add(.dimension, draft)
            }
            for measure in model["measures"]?.arrayValue ?? [] {
                guard let measureName = measure["name"]?.stringValue else { continue }
                let expr = measure["expr"]?.stringValue ?? measureName
                guard measure["non_additive_dimension"] == nil else {
                    parsed.skipped.append("measure '\(measureName)': a non-additive dimension has no Portico equivalent")
                    continue
                }
                let sql: String? =
                    switch measure["agg"]?.stringValue?.lowercased() {
                    case "sum"?: "SUM(\(expr))"
                    case "max"?: "MAX(\(expr))"
                    case "min"?: "MIN(\(expr))"
                    case "count"?: expr == "1" || expr == "*" ? "COUNT(*)" : "COUNT(\(expr))"
                    case "count_distinct"?: "COUNT(DISTINCT \(expr))"
                    case "average"?, "avg"?: "AVG(\(expr))"
                    case "sum_boolean"?: "SUM(CASE WHEN \(expr) THEN 1 ELSE 0 END)"
                    default: nil
                    }
                guard let sql else {
                    parsed.skipped.append("measure '\(measureName)': aggregation '\(measure["agg"]?.stringValue ?? "none")' has no Portico equivalent")
                    continue
                }
                measures[measureName.lowercased()] = Measure(model: name.lowercased(), table: table, sql: sql)
                if measure["create_metric"]?.boolValue == true {
                    var draft = SemanticService.Draft()
                    (draft.name, draft.table, draft.sql, draft.description) = (measureName, table, sql, measure["description"]?.stringValue)
                    parsed.add(.metric, draft)
                }
            }
        }
        for (table, column, entity) in foreign {
            guard let target = primary[entity] else {
                parsed.skipped.append("foreign entity '\(entity)' of \(table): no semantic model has it as its primary entity")
                continue
            }
            var draft = SemanticService.Draft()
            (draft.from, draft.to) = ("\(table).\(column)", "\(target.table).\(target.column)")
            parsed.add(.relationship, draft)
        }
        /// `{{ Dimension('order__status') }}` written as the dimension's SQL, when it is a dimension of
        /// the measure's own model (a filter is a condition on the metric's table); a list of filters
        /// holds together. Anything else (another model's dimension, a time dimension's grain) is unreadable.
        func filter(_ json: JSON?, model: String) -> (sql: String?, unreadable: Bool) {
            guard let json, !json.isNull else { return (nil, false) }
            if let list = json.arrayValue {
                let parts = list.map { filter($0, model: model) }
                guard !parts.contains(where: \.unreadable), list.allSatisfy({ $0.stringValue != nil }) else { return (nil, true) }
                let kept = parts.compactMap(\.sql)
                return (kept.isEmpty ? nil : kept.map { "(\($0))" }.joined(separator: " AND "), false)
            }
            guard var text = json.stringValue else { return (nil, true) }
            guard !text.isEmpty else { return (nil, false) }
            for _ in 0..<100 {
                guard let open = text.range(of: "{{"), let close = text.range(of: "}}", range: open.upperBound..<text.endIndex) else { return (text, false) }
                let inner = text[open.upperBound..<close.lowerBound].trimmingCharacters(in: .whitespaces)
                guard inner.hasPrefix("Dimension("), let quoteOpen = inner.firstIndex(where: { $0 == "'" || $0 == "\"" }),
                    let quoteClose = inner[inner.index(after: quoteOpen)...].firstIndex(where: { $0 == "'" || $0 == "\"" })
                else { return (nil, true) }
                let parts = inner[inner.index(after: quoteOpen)..<quoteClose].lowercased().components(separatedBy: "__")
                guard parts.count == 2, entityModel[parts[0]] == model, let sql = dimensionSQL["\(model)/\(parts[1])"], !sql.contains("{{") else {
                    return (nil, true)
                }
                text.replaceSubrange(open.lowerBound..<close.upperBound, with: sql)
            }
            return (nil, true)
        }
        for (i, item) in (root["metrics"]?.arrayValue ?? []).enumerated() {
            guard let metric = item.objectValue, let name = metric["name"]?.stringValue else { throw Invalid("metrics[\(i)] has no name") }
            var draft = SemanticService.Draft()
            draft.name = name
            draft.description = metric["description"]?.stringValue
            if let label = metric["label"]?.stringValue, label.lowercased() != name.lowercased() { draft.synonyms = [label] }
            let params = metric["type_params"]?.objectValue ?? [:]
            switch metric["type"]?.stringValue?.lowercased() ?? "simple" {
            case "simple":
                let measureName = params["measure"]?.stringValue ?? params["measure"]?["name"]?.stringValue ?? ""
                guard let measure = measures[measureName.lowercased()] else {
                    parsed.skipped.append("metric '\(name)': its measure '\(measureName)' was not read")
                    continue
                }
                let filters = [metric["filter"], params["measure"]?["filter"]].map { filter($0, model: measure.model) }
                guard !filters.contains(where: \.unreadable) else {
                    parsed.skipped.append("metric '\(name)': its filter names something other than a dimension of a semantic model")
                    continue
                }
                let kept = filters.compactMap(\.sql)
                (draft.table, draft.sql) = (measure.table, measure.sql)
                draft.filter = kept.isEmpty ? nil : kept.map { "(\($0))" }.joined(separator: " AND ")
            case "ratio":
                guard params["numerator"]?["filter"] == nil, params["denominator"]?["filter"] == nil, metric["filter"] == nil else {
                    parsed.skipped.append("metric '\(name)': a ratio with filters on its parts has no Portico equivalent")
                    continue
                }
                guard let numerator = params["numerator"]?.stringValue ?? params["numerator"]?["name"]?.stringValue,
                    let denominator = params["denominator"]?.stringValue ?? params["denominator"]?["name"]?.stringValue
                else {
                    parsed.skipped.append("metric '\(name)': a ratio needs numerator and denominator")
                    continue
                }
                draft.derived = "{\(numerator)} / {\(denominator)}"
            case "derived":
                guard let expr = params["expr"]?.stringValue else {
                    parsed.skipped.append("metric '\(name)': a derived metric needs type_params.expr")
                    continue
                }
                let inputs = params["metrics"]?.arrayValue ?? []
                guard !inputs.contains(where: { $0["offset_window"] != nil || $0["offset_to_grain"] != nil || $0["filter"] != nil }), metric["filter"] == nil
                else {
                    parsed.skipped.append("metric '\(name)': inputs offset in time or filtered have no Portico equivalent")
                    continue
                }
                var names: [String: String] = [:]
                for part in inputs {
                    guard let partName = part["name"]?.stringValue ?? part.stringValue else { continue }
                    names[(part["alias"]?.stringValue ?? partName).lowercased()] = partName
                }
                draft.derived = Self.bracing(expr, names: names)
            case let other:
                parsed.skipped.append("metric '\(name)': \(other) metrics have no Portico equivalent")
                continue
            }
            parsed.add(.metric, draft)
        }
        return parsed
    }

    /// `ref('orders')` → `orders`; a plain name stays.
    static func dbtTable(_ text: String) -> String {
        guard let open = text.firstIndex(where: { $0 == "'" || $0 == "\"" }),
            let close = text[text.index(after: open)...].firstIndex(where: { $0 == "'" || $0 == "\"" })
        else { return text.trimmingSpaces() }
        return String(text[text.index(after: open)..<close])
    }

    /// An expression over metric names with each name in braces (`revenue - cost` → `{revenue} - {cost}`).
    static func bracing(_ expr: String, names: [String: String]) -> String {
        replacingWords(expr, names.mapValues { "{\($0)}" })
    }

    // MARK: Snowflake Cortex Analyst

    /// `tables` (base_table, dimensions, time_dimensions, facts or measures, metrics, filters),
    /// `relationships` and `verified_queries`. Logical table names become the base tables';
    /// a metric's expression may name the table's facts, which are written out.
    static func cortex(_ root: JSONObject) throws -> Parsed {
        var parsed = Parsed()
        guard let tables = root["tables"]?.arrayValue else { throw Invalid("a Cortex Analyst semantic model has tables") }
        var physical: [String: String] = [:]
        for (i, item) in tables.enumerated() {
            guard let table = item.objectValue, let logical = table["name"]?.stringValue else { throw Invalid("tables[\(i)] has no name") }
            let name = table["base_table"]?["table"]?.stringValue ?? logical
            physical[logical.lowercased()] = name
            func draft(_ item: JSON) -> SemanticService.Draft? {
                guard let itemName = item["name"]?.stringValue else { return nil }
                var draft = SemanticService.Draft()
                draft.name = itemName
                draft.synonyms = item["synonyms"]?.arrayValue?.compactMap(\.stringValue)
                draft.description = item["description"]?.stringValue
                draft.table = name
                return draft
            }
            for (key, time) in [("dimensions", false), ("time_dimensions", true)] {
                for item in table[key]?.arrayValue ?? [] {
                    guard var d = draft(item) else { continue }
                    d.sql = item["expr"]?.stringValue ?? d.name
                    d.time = time
                    parsed.add(.dimension, d)
                }
            }
            var facts: [String: String] = [:]
            for item in (table["facts"]?.arrayValue ?? []) + (table["measures"]?.arrayValue ?? []) {
                guard var d = draft(item), let factName = d.name else { continue }
                let expr = item["expr"]?.stringValue ?? factName
                facts[factName.lowercased()] = "(\(expr))"
                guard let aggregation = item["default_aggregation"]?.stringValue?.lowercased() else { continue }
                let functions = ["sum": "SUM", "avg": "AVG", "average": "AVG", "min": "MIN", "max": "MAX", "count": "COUNT", "count_distinct": "COUNT"]
                guard let function = functions[aggregation], !function.isEmpty else {
                    parsed.skipped.append("fact '\(factName)': aggregation '\(aggregation)' has no Portico equivalent")
                    continue
                }
                d.sql = aggregation == "count_distinct" ? "COUNT(DISTINCT \(expr))" : "\(function)(\(expr))"
                parsed.add(.metric, d)
            }
            for item in table["metrics"]?.arrayValue ?? [] {
                guard var d = draft(item), let expr = item["expr"]?.stringValue else { continue }
                d.sql = Self.replacingWords(expr, facts)
                parsed.add(.metric, d)
            }
            for item in table["filters"]?.arrayValue ?? [] {
                guard var d = draft(item), let expr = item["expr"]?.stringValue else { continue }
                d.condition = expr
                parsed.add(.segment, d)
            }
        }
        for (i, item) in (root["relationships"]?.arrayValue ?? []).enumerated() {
            guard let left = item["left_table"]?.stringValue, let right = item["right_table"]?.stringValue,
                let columns = item["relationship_columns"]?.arrayValue, columns.count == 1,
                let leftColumn = columns[0]["left_column"]?.stringValue, let rightColumn = columns[0]["right_column"]?.stringValue
            else {
                parsed.skipped.append("relationships[\(i)]: only relationships over one pair of columns are taken")
                continue
            }
            var draft = SemanticService.Draft()
            draft.from = "\(physical[left.lowercased()] ?? left).\(leftColumn)"
            draft.to = "\(physical[right.lowercased()] ?? right).\(rightColumn)"
            draft.relationship = item["relationship_type"]?.stringValue?.lowercased() == "one_to_one" ? "one_to_one" : "many_to_one"
            parsed.add(.relationship, draft)
        }
        for item in root["verified_queries"]?.arrayValue ?? [] {
            guard let question = item["question"]?.stringValue, let sql = item["sql"]?.stringValue else { continue }
            // Its SQL names logical tables as __name: the base tables' names stand in for them.
            let logical = Dictionary(physical.map { ("__" + $0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
            parsed.examples.append((question, Self.replacingWords(sql, logical)))
        }
        return parsed
    }

    /// `text` with each whole word that `replacements` holds (in lower case) replaced.
    static func replacingWords(_ text: String, _ replacements: [String: String]) -> String {
        var out = ""
        var word = ""
        func flush() {
            out += replacements[word.lowercased()] ?? word
            word = ""
        }
        for c in text {
            if c.isLetter || c.isNumber || c == "_" {
                word.append(c)
            } else {
                flush()
                out.append(c)
            }
        }
        flush()
        return out
    }

    // MARK: WrenAI MDL

    /// `models` (a table each by `tableReference`; calculated columns without aggregates become
    /// dimensions), `relationships` (`condition` "A.x = B.y" with a join type) and `metrics`
    /// (cubes: each measure a metric over the base object, each dimension a dimension).
    static func wren(_ root: JSONObject) throws -> Parsed {
        var parsed = Parsed()
        guard let models = root["models"]?.arrayValue else { throw Invalid("a WrenAI MDL has models") }
        var tables: [String: String] = [:]
        /// A model's columns as their physical expression, for expressions over them.
        var columnSQL: [String: [String: String]] = [:]
        for (i, item) in models.enumerated() {
            guard let model = item.objectValue, let name = model["name"]?.stringValue else { throw Invalid("models[\(i)] has no name") }
            guard let table = model["tableReference"]?["table"]?.stringValue else {
                parsed.skipped.append("model '\(name)': only models over a table (tableReference) are taken, not refSql")
                continue
            }
            tables[name.lowercased()] = table
            var physical: [String: String] = [:]
            for column in model["columns"]?.arrayValue ?? [] {
                guard let columnName = column["name"]?.stringValue, column["relationship"] == nil, column["isCalculated"]?.boolValue != true else { continue }
                physical[columnName.lowercased()] = column["expression"]?.stringValue ?? columnName
            }
            columnSQL[name.lowercased()] = physical
            for column in model["columns"]?.arrayValue ?? [] where column["isCalculated"]?.boolValue == true {
                guard let columnName = column["name"]?.stringValue, let expression = column["expression"]?.stringValue else { continue }
                let written = Self.replacingWords(expression, physical)
                guard !expression.contains("."), !TableSQL.aggregates.contains(where: { written.uppercased().contains($0 + "(") }) else {
                    parsed.skipped.append("calculated column '\(name).\(columnName)': it reads other models or aggregates")
                    continue
                }
                var draft = SemanticService.Draft()
                (draft.name, draft.table, draft.sql) = (columnName, table, written)
                draft.description = column["properties"]?["description"]?.stringValue
                let type = column["type"]?.stringValue?.lowercased() ?? ""
                draft.time = type.contains("date") || type.contains("time")
                parsed.add(.dimension, draft)
            }
        }
        for (i, item) in (root["relationships"]?.arrayValue ?? []).enumerated() {
            let name = item["name"]?.stringValue ?? "relationships[\(i)]"
            let sides = (item["condition"]?.stringValue ?? "").components(separatedBy: "=").map { $0.trimmingSpaces() }
            let parts = sides.map { $0.split(separator: ".", maxSplits: 1).map(String.init) }
            guard parts.count == 2, parts.allSatisfy({ $0.count == 2 }), let a = tables[parts[0][0].lowercased()],
                let b = tables[parts[1][0].lowercased()]
            else {
                parsed.skipped.append("relationship '\(name)': its condition is not Model.column = Model.column over two models read")
                continue
            }
            var left = "\(a).\(columnSQL[parts[0][0].lowercased()]?[parts[0][1].lowercased()] ?? parts[0][1])"
            var right = "\(b).\(columnSQL[parts[1][0].lowercased()]?[parts[1][1].lowercased()] ?? parts[1][1])"
            // The join type reads from the first model of `models` to the second, whichever side of the condition each is on.
            if let first = item["models"]?.arrayValue?.first?.stringValue, first.lowercased() == parts[1][0].lowercased() { swap(&left, &right) }
            var draft = SemanticService.Draft()
            switch item["joinType"]?.stringValue?.uppercased() {
            case "MANY_TO_ONE"?: (draft.from, draft.to) = (left, right)
            case "ONE_TO_MANY"?: (draft.from, draft.to) = (right, left)
            case "ONE_TO_ONE"?: (draft.from, draft.to, draft.relationship) = (left, right, "one_to_one")
            default:
                parsed.skipped.append("relationship '\(name)': join type \(item["joinType"]?.stringValue ?? "none") has no Portico equivalent")
                continue
            }
            parsed.add(.relationship, draft)
        }
        for (i, item) in (root["metrics"]?.arrayValue ?? []).enumerated() {
            let name = item["name"]?.stringValue ?? "metrics[\(i)]"
            guard let base = item["baseObject"]?.stringValue, let table = tables[base.lowercased()] else {
                parsed.skipped.append("metric '\(name)': its baseObject is not a model read")
                continue
            }
            let physical = columnSQL[base.lowercased()] ?? [:]
            for measure in item["measure"]?.arrayValue ?? [] {
                guard let measureName = measure["name"]?.stringValue, let expression = measure["expression"]?.stringValue else { continue }
                var draft = SemanticService.Draft()
                (draft.name, draft.table, draft.sql) = (measureName, table, Self.replacingWords(expression, physical))
                draft.description = item["properties"]?["description"]?.stringValue
                parsed.add(.metric, draft)
            }
            for dimension in item["dimension"]?.arrayValue ?? [] {
                guard let dimensionName = dimension["name"]?.stringValue else { continue }
                var draft = SemanticService.Draft()
                let expression = dimension["expression"]?.stringValue ?? dimensionName
                (draft.name, draft.table, draft.sql) = (dimensionName, table, Self.replacingWords(expression, physical))
                let type = dimension["type"]?.stringValue?.lowercased() ?? ""
                draft.time = type.contains("date") || type.contains("time")
                parsed.add(.dimension, draft)
            }
        }
        return parsed
    }
}

import PorticoBase
public import PorticoJSON
public import PorticoStore

/// A database opened for questions only, the guard's second layer: `SQLiteReadOnlySource` and
/// `PostgresReadOnlySource`.
public protocol ReadOnlySource: Sendable {
    /// Runs one query within `scope`: at most `maxRows` rows, stopped after `timeout`.
    func query(_ sql: String, maxRows: Int, timeout: Duration, scope: ReadScope) async throws -> QueryRows
    /// How many queries may run at once.
    var connections: Int { get }
    func introspect(samples: Int, only: Set<String>?) async throws -> [SourceTable]
    /// What the database would do to run one query within `scope`, without running it.
    func plan(_ sql: String, timeout: Duration, scope: ReadScope) async throws -> PlanReport
    func close() async
}

/// A query's plan, before it runs: SQLite's `EXPLAIN QUERY PLAN` lines, or PostgreSQL's
/// `EXPLAIN (FORMAT JSON)` with its estimates; and the tables it would read whole.
public struct PlanReport: Sendable {
    /// SQLite: one line per step, indented by depth. PostgreSQL: the JSON plan.
    public var lines: [String] = []
    public var json: JSON?
    public var estimatedRows: Double?
    public var estimatedCost: Double?
    /// Tables read from end to end (SQLite's SCAN without an index, PostgreSQL's Seq Scan), as the
    /// plan names them (SQLite names a table by the query's alias for it).
    public var fullScans: [String] = []

    public init() {}

    /// SQLite's `EXPLAIN QUERY PLAN` rows (id, parent, notused, detail) as lines and full scans.
    public init(sqliteRows rows: [[SQLValue]]) {
        var depth: [Int64: Int] = [0: -1]
        for row in rows where row.count >= 4 {
            guard case .int(let id) = row[0], case .int(let parent) = row[1], case .text(let detail) = row[3] else { continue }
            let level = (depth[parent] ?? -1) + 1
            depth[id] = level
            lines.append(String(repeating: "  ", count: level) + detail)
            // "SCAN t", "SCAN t USING INDEX …" (an index is read whole: still a scan of the table's rows).
            if detail.hasPrefix("SCAN "), !detail.contains("USING COVERING INDEX"), !detail.hasPrefix("SCAN CONSTANT ROW") {
                let name = detail.dropFirst(5).prefix { $0 != " " }
                if !name.isEmpty, !fullScans.contains(String(name)) { fullScans.append(String(name)) }
            }
        }
    }

    /// A planner's figure as text: whole when it fits (a cost can pass Int's range: 1e19 for a
    /// seven-way cross join), else as the double it is.
    public static func figure(_ value: Double) -> String {
        value.isFinite && abs(value) < 1e15 ? String(Int64(value.rounded())) : String(value)
    }

    /// The plan without the planner's estimates (rows, widths, costs), in the lines and the JSON.
    public func withoutFigures() -> PlanReport {
        var plain = self
        plain.estimatedRows = nil
        plain.estimatedCost = nil
        plain.json = json.map(Self.strippingFigures)
        // MySQL's lines end with "(~N rows)"; SQLite's carry none.
        plain.lines = lines.map { line in
            guard let open = line.lastIndex(of: "("), line[open...].hasPrefix("(~") else { return line }
            return String(line[..<open]).trimmingSpaces()
        }
        return plain
    }

    static let figureKeys: Set<String> = ["Startup Cost", "Total Cost", "Plan Rows", "Plan Width", "Rows Removed by Filter", "Actual Rows"]

    static func strippingFigures(_ json: JSON) -> JSON {
        switch json {
        case .object(let object):
            var kept = JSONObject()
            for (key, value) in object where !figureKeys.contains(key) { kept[key] = strippingFigures(value) }
            return .object(kept)
        case .array(let items): return .array(items.map(strippingFigures))
        default: return json
        }
    }

    /// PostgreSQL's `EXPLAIN (FORMAT JSON)` document.
    public init(postgresJSON document: JSON) {
        json = document
        guard let root = document.arrayValue?.first?["Plan"] else { return }
        estimatedCost = root["Total Cost"]?.doubleValue
        estimatedRows = root["Plan Rows"]?.doubleValue
        var stack = [root]
        while let node = stack.popLast() {
            if node["Node Type"]?.stringValue == "Seq Scan", let relation = node["Relation Name"]?.stringValue, !fullScans.contains(relation) {
                fullScans.append(relation)
            }
            stack += node["Plans"]?.arrayValue?.reversed() ?? []
        }
    }
}

extension SQLiteReadOnlySource: ReadOnlySource {
    public func introspect(samples: Int, only: Set<String>?) async throws -> [SourceTable] {
        try await introspect(samples: samples, only: only, timeout: .seconds(30))
    }

    /// `EXPLAIN QUERY PLAN` prepares the query under the same policy as running it would.
    public func plan(_ sql: String, timeout: Duration, scope: ReadScope) async throws -> PlanReport {
        PlanReport(sqliteRows: try await query("EXPLAIN QUERY PLAN " + sql, maxRows: 10_000, timeout: timeout, scope: scope).rows)
    }
}

/// What one query may read beyond its datasource's policy: the tables a caller's role hides, and
/// the views that stand in for them (SQLite: temporary views by name and SELECT; PostgreSQL: the
/// prefix of every alias inside the views written into the query, which the plan must show).
public struct ReadScope: Sendable {
    /// When set, the only tables that can be read (lower case).
    public var visibleTables: Set<String>?
    /// Tables (lower case) the query may read only through the views.
    public var protectedTables: Set<String>
    /// SQLite: the temporary views the query reads, by name, with their SELECT.
    public var views: [String: String]
    /// PostgreSQL: every table a view written into the query reads has an alias with this prefix.
    public var viewAliasPrefix: String?

    /// What a query that reads a protected table other than through its view is told, on either database.
    public static func readAroundView(_ table: String) -> String { SQLiteQueryPolicy.readAroundView(table) }
    /// The names the query's WITH clauses define, which are not tables.
    public var commonTableNames: Set<String>
    /// PostgreSQL: a query whose estimated cost is above this is refused before it runs.
    public var maxCost: Double?

    public init(
        visibleTables: Set<String>? = nil, protectedTables: Set<String> = [], views: [String: String] = [:], viewAliasPrefix: String? = nil,
        commonTableNames: Set<String> = []
    ) {
        self.visibleTables = visibleTables.map { Set($0.map { $0.lowercased() }) }
        self.protectedTables = Set(protectedTables.map { $0.lowercased() })
        self.views = views
        self.viewAliasPrefix = viewAliasPrefix
        self.commonTableNames = Set(commonTableNames.map { $0.lowercased() })
    }
}

/// The rows of a query, at most the cap asked for.
public struct QueryRows: Sendable {
    public let columns: [String]
    public let rows: [[SQLValue]]
    /// Whether more rows (or more bytes) were there than were returned.
    public let truncated: Bool

    public init(columns: [String], rows: [[SQLValue]], truncated: Bool) {
        self.columns = columns
        self.rows = rows
        self.truncated = truncated
    }
}

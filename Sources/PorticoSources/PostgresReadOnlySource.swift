import Foundation
public import Logging
import PorticoBase
import PorticoJSON
public import PorticoStore
import PostgresNIO

/// A PostgreSQL datasource: every statement runs inside `BEGIN READ ONLY` with a
/// `statement_timeout`, sent with the extended protocol (one statement per message, so stacked
/// statements are a syntax error, not a second statement), and is rolled back afterwards.
/// Rows are cut at the cap and at a byte budget; values become plain SQL values. A query whose
/// scope limits what it reads is planned first, and its plan checked (`checkPlan`).
public final class PostgresReadOnlySource: ReadOnlySource {
    let client: PostgresClient
    /// Stops the statement of a caller that went away (a cancelled tool call) at once.
    let statements: PostgresStatementCanceller
    let runner: Task<Void, Never>
    let logger: Logger
    /// Bytes of row data one query returns at most.
    let maxBytes: Int
    /// The schema the URL's `search_path` names (lower case), where an app's own tables are.
    let schema: String
    public let connections = 4

    public init(url: String, maxBytes: Int = 4 << 20, logger: Logger = Logger(label: "portico.datasource.postgres")) throws {
        var configuration: PostgresClient.Configuration
        do {
            configuration = try PostgresURL.configuration(url, what: "PostgreSQL datasource")
        } catch {
            throw DatasourceError(error.description)
        }
        configuration.options.maximumConnections = connections
        configuration.options.connectTimeout = .seconds(5)
        configuration.options.additionalStartupParameters.append(("application_name", "portico"))
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.client = client
        statements = PostgresStatementCanceller(client: client, logger: logger)
        self.logger = logger
        self.maxBytes = maxBytes
        schema = PostgresURL.searchPath(url)?.lowercased() ?? "public"
        runner = Task { await client.run() }
    }

    public func close() async {
        runner.cancel()
    }

    /// How long getting a connection may take before the datasource counts as unreachable (the
    /// pool would otherwise keep retrying while the caller waits).
    static let connectDeadline: Duration = .seconds(5)

    /// Runs `body` in a read-only transaction with the time limit, and always rolls it back; gives
    /// up when the server does not answer within the time limit and the connect deadline.
    func readOnly<T: Sendable>(timeout: Duration, _ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await self.transaction(timeout: timeout, body) }
            group.addTask {
                try await Task.sleep(for: timeout + Self.connectDeadline)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let result = first else {
                throw DatasourceError(
                    "the PostgreSQL datasource did not answer within \((timeout + Self.connectDeadline).components.seconds) s; check that its server is reachable"
                )
            }
            return result
        }
    }

    /// A pooled connection found closed when the transaction begins (the pool may hand out one that a
    /// statement stopped at its memory cap is closing): nothing ran on it, so another is taken.
    private struct ClosedBeforeBegin: Error {
        let error: PSQLError
    }

    func transaction<T: Sendable>(timeout: Duration, _ body: @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        do {
            return try await beginning(timeout: timeout, body)
        } catch is ClosedBeforeBegin {
            do {
                return try await beginning(timeout: timeout, body)
            } catch let again as ClosedBeforeBegin {
                throw Self.storeError(again.error)
            }
        }
    }

    private func beginning<T: Sendable>(timeout: Duration, _ body: @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        do {
            return try await client.withConnection { connection in
                do {
                    try await connection.query("BEGIN TRANSACTION READ ONLY", logger: logger)
                } catch let error as PSQLError where [.clientClosedConnection, .serverClosedConnection].contains(error.code) {
                    throw ClosedBeforeBegin(error: error)
                }
                do {
                    let milliseconds = max(1, timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
                    try await connection.query(PostgresQuery(unsafeSQL: "SET LOCAL statement_timeout = \(milliseconds)"), logger: logger)
                    // A caller that goes away (a cancelled tool call) stops the statement on the server
                    // at once, instead of when it ends or times out.
                    let result = try await statements.run(on: connection, body)
                    try await connection.query("ROLLBACK", logger: logger)
                    return result
                } catch {
                    _ = try? await connection.query("ROLLBACK", logger: logger)
                    throw error
                }
            }
        } catch let closed as ClosedBeforeBegin {
            throw closed
        } catch let error as PSQLError {
            throw Self.storeError(error)
        } catch is CancellationError {
            throw CancellationError()
        } catch let error as StoreError {
            throw error
        } catch {
            throw DatasourceError("the PostgreSQL datasource cannot be reached: \(error)")
        }
    }

    public func query(_ sql: String, maxRows: Int, timeout: Duration, scope: ReadScope) async throws -> QueryRows {
        let maxBytes = self.maxBytes
        let logger = self.logger
        let schema = self.schema
        return try await readOnly(timeout: timeout) { connection in
            if scope.visibleTables != nil || !scope.protectedTables.isEmpty {
                guard let check = Self.planCheck(sql, scope: scope, schema: schema) else {
                    throw StoreError(kind: .notAuthorized, message: "the SQL contains text Portico reserves for its own checks", sql: "")
                }
                try await connection.query(PostgresQuery(unsafeSQL: check), logger: logger)
            }
            if let maxCost = scope.maxCost {
                let plan = try await Self.explain(sql, on: connection, logger: logger)
                if let cost = plan.estimatedCost, cost > maxCost {
                    throw StoreError(
                        kind: .tooComplex,
                        message:
                            "PostgreSQL estimates this query's cost at \(PlanReport.figure(cost)), above this datasource's limit of \(PlanReport.figure(maxCost)); "
                            + "narrow it (filters on indexed columns, fewer joins, a LIMIT) or ask the operator to raise the limit",
                        sql: "")
                }
            }
            let rows = try await connection.query(PostgresQuery(unsafeSQL: Self.rowsAtMost(maxBytes, sql)), logger: logger)
            var columns: [String] = []
            var out: [[SQLValue]] = []
            var bytes = 0
            var truncated = false
            for try await row in rows {
                if columns.isEmpty { columns = row.map(\.columnName) }
                guard out.count < maxRows, bytes < maxBytes else {
                    truncated = true
                    break
                }
                let values = row.map { PostgresStore.value($0, numericAsDouble: true) }
                bytes += values.reduce(0) { $0 + $1.byteCount }
                out.append(values)
            }
            return QueryRows(columns: columns, rows: out, truncated: truncated)
        }
    }

    /// `EXPLAIN (FORMAT JSON)` in the same read-only transaction and checks a query would have.
    public func plan(_ sql: String, timeout: Duration, scope: ReadScope) async throws -> PlanReport {
        let logger = self.logger
        let schema = self.schema
        return try await readOnly(timeout: timeout) { connection in
            if scope.visibleTables != nil || !scope.protectedTables.isEmpty {
                guard let check = Self.planCheck(sql, scope: scope, schema: schema) else {
                    throw StoreError(kind: .notAuthorized, message: "the SQL contains text Portico reserves for its own checks", sql: "")
                }
                try await connection.query(PostgresQuery(unsafeSQL: check), logger: logger)
            }
            return try await Self.explain(sql, on: connection, logger: logger)
        }
    }

    static func explain(_ sql: String, on connection: PostgresConnection, logger: Logger) async throws -> PlanReport {
        let rows = try await connection.query(PostgresQuery(unsafeSQL: "EXPLAIN (FORMAT JSON) " + sql), logger: logger)
        var text = ""
        for try await row in rows {
            if let cell = row.first, case .text(let value) = PostgresStore.value(cell, numericAsDouble: true) { text = value }
        }
        return PlanReport(postgresJSON: (try? JSONParser.parse(text)) ?? .null)
    }

    public func introspect(samples: Int, only: Set<String>?) async throws -> [SourceTable] {
        let logger = self.logger
        return try await readOnly(timeout: .seconds(15)) { connection in
            var tables: [String: (isView: Bool, columns: [SourceTable.Column])] = [:]
            var order: [String] = []
            let columnRows = try await connection.query(
                """
                SELECT c.table_name::text, t.table_type::text, c.column_name::text, c.data_type::text, c.is_nullable::text
                FROM information_schema.columns c JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
                WHERE c.table_schema = current_schema() ORDER BY c.table_name, c.ordinal_position
                """, logger: logger)
            for try await (table, type, column, dataType, nullable) in columnRows.decode((String, String, String, String, String).self) {
                if let only, !only.contains(table.lowercased()) { continue }
                if tables[table] == nil {
                    order.append(table)
                    tables[table] = (type == "VIEW", [])
                }
                tables[table]?.columns.append(.init(name: column, type: dataType, notNull: nullable == "NO", primaryKey: false, samples: []))
            }
            var primary: Set<String> = []
            let keyRows = try await connection.query(
                """
                SELECT cl.relname::text, a.attname::text FROM pg_constraint con JOIN pg_class cl ON cl.oid = con.conrelid
                JOIN pg_namespace n ON n.oid = cl.relnamespace JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = ANY (con.conkey)
                WHERE con.contype = 'p' AND n.nspname = current_schema()
                """, logger: logger)
            for try await (table, column) in keyRows.decode((String, String).self) { primary.insert(table + "\u{0}" + column) }
            var foreign: [String: [SourceTable.ForeignKey]] = [:]
            let foreignRows = try await connection.query(
                """
                SELECT cl.relname::text, a.attname::text, rcl.relname::text, ra.attname::text FROM pg_constraint con
                JOIN pg_class cl ON cl.oid = con.conrelid JOIN pg_namespace n ON n.oid = cl.relnamespace
                CROSS JOIN LATERAL unnest(con.conkey, con.confkey) AS k(col, rcol)
                JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.col
                JOIN pg_class rcl ON rcl.oid = con.confrelid JOIN pg_attribute ra ON ra.attrelid = con.confrelid AND ra.attnum = k.rcol
                WHERE con.contype = 'f' AND n.nspname = current_schema()
                """, logger: logger)
            for try await (table, column, target, targetColumn) in foreignRows.decode((String, String, String, String).self) {
                foreign[table, default: []].append(.init(column: column, table: target, targetColumn: targetColumn))
            }
            // Comments on tables and columns, which say what a cryptic name means.
            var comments: [String: String] = [:]
            let commentRows = try await connection.query(
                """
                SELECT cl.relname::text, a.attname::text, d.description::text FROM pg_description d
                JOIN pg_class cl ON cl.oid = d.objoid AND d.classoid = 'pg_class'::regclass
                JOIN pg_namespace n ON n.oid = cl.relnamespace
                LEFT JOIN pg_attribute a ON a.attrelid = cl.oid AND a.attnum = d.objsubid AND d.objsubid > 0
                WHERE n.nspname = current_schema() AND (d.objsubid = 0 OR a.attname IS NOT NULL)
                """, logger: logger)
            for try await (table, column, text) in commentRows.decode((String, String?, String).self) {
                comments[table + "\u{0}" + (column ?? "")] = Self.shortComment(text)
            }
            var result: [SourceTable] = []
            for name in order {
                guard let entry = tables[name] else { continue }
                var columns = entry.columns.map { column in
                    SourceTable.Column(
                        name: column.name, type: column.type, notNull: column.notNull, primaryKey: primary.contains(name + "\u{0}" + column.name), samples: [])
                }
                for index in columns.indices { columns[index].comment = comments[name + "\u{0}" + columns[index].name] }
                if samples > 0 {
                    for index in columns.indices where ["text", "character varying", "character"].contains(columns[index].type) {
                        let sql =
                            "SELECT DISTINCT \(Self.quote(columns[index].name))::text FROM \(Self.quote(name)) WHERE \(Self.quote(columns[index].name)) IS NOT NULL LIMIT \(samples)"
                        for try await value in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger).decode(String.self) {
                            columns[index].samples.append(String(value.prefix(60)))
                        }
                    }
                }
                var table = SourceTable(name: name, isView: entry.isView, columns: columns, foreignKeys: foreign[name] ?? [])
                table.comment = comments[name + "\u{0}"]
                result.append(table)
            }
            return result
        }
    }

    /// `sql` refusing, on the server, any row larger than `bytes`: the driver reads a row whole
    /// before Portico can count it, so a value built on the server (a `string_agg` over a cross
    /// join, an `lpad` to a billion characters) must not be sent. The rows keep their order.
    static func rowsAtMost(_ bytes: Int, _ sql: String) -> String {
        "SELECT * FROM (\n\(sql)\n) AS portico_rows WHERE CAST(CASE WHEN pg_column_size(portico_rows) > \(bytes) THEN '\(rowTooLarge)' ELSE '1' END AS integer) = 1"
    }

    /// What the cast in `rowsAtMost` fails with, so its error can be told from the query's own.
    static let rowTooLarge = "portico: a row is over the limit"

    /// A block of PL/pgSQL that plans `sql` and fails unless the plan keeps to `scope`. Every table
    /// PostgreSQL reads shows in the plan with its schema and alias, however the SQL named it: on
    /// an app's own database (`visibleTables` set) it must be one of the app's collections in the
    /// app's schema, and a table the caller's role protects may be read only inside the views
    /// written into the query, whose aliases carry `viewAliasPrefix`. The plan is read on the
    /// server, because its size is the SQL's to choose (a constant folded into it can be a billion
    /// characters); only a failure's few words come back. `nil` when the SQL holds the quoting tag.
    static func planCheck(_ sql: String, scope: ReadScope, schema: String) -> String? {
        let tag = "$portico_" + Hex.encode((0..<8).map { _ in UInt8.random(in: 0...255) }) + "$"
        let query = tag.dropLast() + "_q$"
        guard !sql.contains(tag.dropLast()) else { return nil }
        func literal(_ text: String) -> String { "'" + text.doubling("'") + "'" }
        func array(_ names: Set<String>?) -> String {
            guard let names else { return "NULL::text[]" }
            return "ARRAY[" + names.sorted().map { literal($0.lowercased()) }.joined(separator: ", ") + "]::text[]"
        }
        return """
            DO \(tag)
            DECLARE
              plan json;
              node jsonb;
              visible text[] := \(array(scope.visibleTables));
              protected text[] := \(array(scope.protectedTables));
              prefix text := \(scope.viewAliasPrefix.map(literal) ?? "NULL");
              home text := \(literal(schema));
            BEGIN
              EXECUTE 'EXPLAIN (VERBOSE, FORMAT JSON) ' || \(query)\(sql)\(query) INTO plan;
              FOR node IN SELECT jsonb_path_query(plan::jsonb, 'strict $.** ? (exists (@."Alias"))') LOOP
                IF node->>'Relation Name' IS NULL THEN
                  -- The views alias tables only: one of their aliases on anything else (a WITH query's scan)
                  -- means a name in the view was taken by something of the SQL's.
                  IF prefix IS NOT NULL AND left(node->>'Alias', length(prefix)) = prefix THEN
                    RAISE EXCEPTION '\(planRefusal)the query gives another meaning to a table your role''s view reads (''%''); rename its WITH queries', node->>'Alias';
                  END IF;
                  CONTINUE;
                END IF;
                IF visible IS NOT NULL AND (NOT (lower(node->>'Relation Name') = ANY (visible)) OR lower(node->>'Schema') IS DISTINCT FROM home) THEN
                  RAISE EXCEPTION '\(planRefusal)''%'' is not part of this datasource', node->>'Relation Name';
                END IF;
                IF lower(node->>'Relation Name') = ANY (protected)
                  AND (prefix IS NULL OR left(node->>'Alias', length(prefix)) IS DISTINCT FROM prefix) THEN
                  RAISE EXCEPTION \(literal(planRefusal + ReadScope.readAroundView("%"))), node->>'Relation Name';
                END IF;
              END LOOP;
            END
            \(tag)
            """
    }

    /// How the plan check's refusals start, so they can be told from the query's own errors.
    static let planRefusal = "portico refused: "

    /// A comment on one line, at most 200 characters: enough to explain a name, not a document.
    static func shortComment(_ text: String) -> String {
        let line = text.split(whereSeparator: \.isNewline).joined(separator: " ")
        return line.count > 200 ? String(line.prefix(197)) + "..." : line
    }

    static func quote(_ identifier: String) -> String {
        "\"" + identifier.doubling("\"") + "\""
    }

    /// PostgreSQL's refusals in the store's terms, with its own message.
    static func storeError(_ error: PSQLError) -> any Error {
        let message = error.serverInfo?[.message] ?? "\(error.code)"
        switch error.serverInfo?[.sqlState] {
        case "25006"?: return StoreError(kind: .readOnly, message: "the datasource is read-only: \(message)", sql: "")
        case "57014"?: return StoreError(kind: .timeout, message: "the query ran past the time limit", sql: "")
        case "P0001"? where message.hasPrefix(planRefusal):
            return StoreError(kind: .notAuthorized, message: String(message.dropFirst(planRefusal.count)), sql: "")
        case "22P02"? where message.contains(rowTooLarge):
            return StoreError(kind: .tooComplex, message: "a row of the answer is larger than a query may return; select fewer or shorter columns", sql: "")
        case "42601"? where message.contains("multiple commands"):
            return StoreError(kind: .readOnly, message: "only one statement is allowed: \(message)", sql: "")
        case "42501"?: return StoreError(kind: .readOnly, message: "permission denied: \(message)", sql: "")
        case let state?: return StoreError(kind: .other, message: message + " (SQLSTATE \(state))", sql: "")
        case nil:
            return DatasourceError("the PostgreSQL datasource cannot be reached: \(error.code)")
        }
    }
}

extension SQLValue {
    var byteCount: Int {
        switch self {
        case .text(let s): s.utf8.count + 8
        default: 8
        }
    }
}

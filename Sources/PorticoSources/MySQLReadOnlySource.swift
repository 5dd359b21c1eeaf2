import CMariaDB
import Foundation
public import Logging
import PorticoBase
public import PorticoStore
import Synchronization

/// A MySQL or MariaDB datasource: every statement runs in a session made read-only at connect
/// (`SET SESSION TRANSACTION READ ONLY`) inside `START TRANSACTION READ ONLY`, with the server's
/// statement time limit (`max_statement_time` on MariaDB, `max_execution_time` on MySQL) and
/// `sql_select_limit` set to the row cap, one statement per call (multi-statements are off), and
/// is rolled back afterwards. Connector/C blocks: calls run on each connection's own thread, at
/// most `connections` at once; a query past its time is stopped on the server with `KILL QUERY`.
public final class MySQLReadOnlySource: ReadOnlySource {
    let url: MySQLURL
    let logger: Logger
    /// Bytes of row data one query returns at most.
    let maxBytes: Int
    public let connections = 4
    private let pool: MySQLPool

    /// - Parameter longestQuery: the longest a query may run here; a read from the server that waits
    ///   longer than that (and a margin) gives up, so a silent network cannot hold a connection's thread.
    public init(
        url text: String, maxBytes: Int = 4 << 20, longestQuery: Duration = .seconds(60), logger: Logger = Logger(label: "portico.datasource.mysql")
    ) throws {
        url = try MySQLURL(text)
        self.logger = logger
        self.maxBytes = maxBytes
        let readTimeout = UInt32(clamping: longestQuery.components.seconds + 30)
        pool = MySQLPool(url: url, size: connections, maxPacket: UInt(maxBytes + (64 << 10)), readTimeout: readTimeout)
    }

    public func close() async {
        await pool.close()
    }

    public func query(_ sql: String, maxRows: Int, timeout: Duration, scope: ReadScope) async throws -> QueryRows {
        if scope.visibleTables != nil || !scope.protectedTables.isEmpty || scope.maxCost != nil {
            // Only an app's own data (`main`, never on MySQL) and PostgreSQL's cost limit use these.
            throw DatasourceError("this MySQL datasource cannot apply a role's view or a cost limit")
        }
        let maxBytes = self.maxBytes
        return try await withConnection(timeout: timeout) { connection in
            try connection.runHere(sql, maxRows: maxRows, maxBytes: maxBytes)
        } limits: { connection in
            Self.limits(timeout: timeout, rows: maxRows + 1, mariaDB: connection.isMariaDB)
        }
    }

    public func plan(_ sql: String, timeout: Duration, scope: ReadScope) async throws -> PlanReport {
        let rows = try await withConnection(timeout: timeout) { connection in
            try connection.runHere("EXPLAIN " + sql, maxRows: 1000, maxBytes: 1 << 20)
        } limits: { connection in
            Self.limits(timeout: timeout, rows: 1001, mariaDB: connection.isMariaDB)
        }
        var report = PlanReport()
        let names = rows.columns.map { $0.lowercased() }
        var total = 1.0
        for row in rows.rows {
            func column(_ name: String) -> SQLValue? { names.firstIndex(of: name).map { row[$0] } }
            let table = column("table").flatMap { if case .text(let t) = $0 { t } else { nil } } ?? ""
            let access = column("type").flatMap { if case .text(let t) = $0 { t } else { nil } } ?? ""
            let estimate: Double? =
                switch column("rows") {
                case .int(let n)?: Double(n)
                case .double(let d)?: d
                case .text(let t)?: Double(t)
                default: nil
                }
            if let estimate { total *= max(1, estimate) }
            report.lines.append("\(table): \(access)" + (estimate.map { " (~\(PlanReport.figure($0)) rows)" } ?? ""))
            // EXPLAIN's ALL is a read of the whole table.
            if access == "ALL", !table.isEmpty, !report.fullScans.contains(table) { report.fullScans.append(table) }
        }
        report.estimatedRows = rows.rows.isEmpty ? nil : total
        return report
    }

    public func introspect(samples: Int, only: Set<String>?) async throws -> [SourceTable] {
        try await withConnection(timeout: .seconds(30)) { connection in
            let tables = try connection.runHere(
                "SELECT TABLE_NAME, TABLE_TYPE, TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME",
                maxRows: 100_000, maxBytes: 64 << 20)
            let columns = try connection.runHere(
                """
                SELECT TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, COLUMN_KEY, COLUMN_COMMENT, DATA_TYPE FROM information_schema.COLUMNS
                WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME, ORDINAL_POSITION
                """, maxRows: 1_000_000, maxBytes: 64 << 20)
            let keys = try connection.runHere(
                """
                SELECT TABLE_NAME, COLUMN_NAME, REFERENCED_TABLE_NAME, REFERENCED_COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE
                WHERE TABLE_SCHEMA = DATABASE() AND REFERENCED_TABLE_NAME IS NOT NULL ORDER BY TABLE_NAME, ORDINAL_POSITION
                """, maxRows: 1_000_000, maxBytes: 64 << 20)
            func text(_ value: SQLValue) -> String? { if case .text(let t) = value { t } else { nil } }
            var byTable: [String: [SourceTable.Column]] = [:]
            var textColumns: [String: Set<String>] = [:]
            for row in columns.rows {
                guard let table = text(row[0]), let name = text(row[1]) else { continue }
                var column = SourceTable.Column(
                    name: name, type: text(row[2]) ?? "", notNull: text(row[3]) == "NO", primaryKey: text(row[4]) == "PRI", samples: [])
                column.comment = text(row[5]).flatMap { $0.isEmpty ? nil : String($0.prefix(200)) }
                if let type = text(row[6]), ["char", "varchar", "text", "tinytext", "mediumtext", "enum"].contains(type.lowercased()) {
                    textColumns[table, default: []].insert(name)
                }
                byTable[table, default: []].append(column)
            }
            var foreign: [String: [SourceTable.ForeignKey]] = [:]
            for row in keys.rows {
                guard let table = text(row[0]), let column = text(row[1]), let target = text(row[2]) else { continue }
                foreign[table, default: []].append(.init(column: column, table: target, targetColumn: text(row[3])))
            }
            var result: [SourceTable] = []
            for row in tables.rows {
                guard let name = text(row[0]), only?.contains(name.lowercased()) ?? true else { continue }
                var columns = byTable[name] ?? []
                if samples > 0 {
                    for index in columns.indices where textColumns[name]?.contains(columns[index].name) == true {
                        let column = Self.quote(columns[index].name)
                        let values = try connection.runHere(
                            "SELECT DISTINCT \(column) FROM \(Self.quote(name)) WHERE \(column) IS NOT NULL LIMIT \(samples)", maxRows: samples,
                            maxBytes: 1 << 20)
                        columns[index].samples = values.rows.compactMap { $0.first.flatMap(text).map { String($0.prefix(60)) } }
                    }
                }
                var table = SourceTable(name: name, isView: text(row[1]) == "VIEW", columns: columns, foreignKeys: foreign[name] ?? [])
                table.comment = text(row[2]).flatMap { $0.isEmpty ? nil : String($0.prefix(200)) }
                result.append(table)
            }
            return result
        } limits: { connection in
            Self.limits(timeout: .seconds(30), rows: 1_000_001, mariaDB: connection.isMariaDB)
        }
    }

    /// The session settings of one call: the server's time limit and the row cap.
    static func limits(timeout: Duration, rows: Int, mariaDB: Bool) -> String {
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        let time = mariaDB ? "max_statement_time = \(max(0.001, seconds))" : "max_execution_time = \(max(1, Int(seconds * 1000)))"
        return "SET SESSION \(time), SESSION sql_select_limit = \(max(1, rows))"
    }

    static func quote(_ identifier: String) -> String {
        "`" + identifier.doubling("`") + "`"
    }

    /// Runs `body` on a pooled connection in a read-only transaction with `limits` set, and
    /// rolls back; a call that outlives its time (or whose caller went away) is killed on the server.
    func withConnection<T: Sendable>(
        timeout: Duration, _ body: @escaping @Sendable (MySQLConnection) throws -> T, limits: @escaping @Sendable (MySQLConnection) -> String
    ) async throws -> T {
        let connection = try await pool.acquire(within: timeout)
        let url = self.url
        // Written only by the task group's body, which runs in this task, before the defer reads it.
        var healthy = true
        defer {
            let keep = healthy && !connection.broken
            Task { await pool.release(connection, keep: keep) }
        }
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                try await connection.perform { connection in
                    _ = try connection.runHere(limits(connection), maxRows: 0, maxBytes: 0)
                    _ = try connection.runHere("START TRANSACTION READ ONLY", maxRows: 0, maxBytes: 0)
                    do {
                        let result = try body(connection)
                        _ = try connection.runHere("ROLLBACK", maxRows: 0, maxBytes: 0)
                        return result
                    } catch {
                        _ = try? connection.runHere("ROLLBACK", maxRows: 0, maxBytes: 0)
                        throw error
                    }
                }
            }
            group.addTask {
                // The server stops the statement at its limit; this is the backstop for one that does not.
                try await Task.sleep(for: timeout + .seconds(2))
                return nil
            }
            defer { group.cancelAll() }
            let first: T??
            do {
                first = try await group.next()
            } catch is CancellationError {
                // The caller went away: stop the statement now, or the group would wait for it to end.
                healthy = false
                await Self.kill(connection.threadID, url: url)
                throw CancellationError()
            }
            guard let first, let result = first else {
                healthy = false
                await Self.kill(connection.threadID, url: url)
                throw StoreError(kind: .timeout, message: "the query ran past its time limit and was stopped; narrow it", sql: "")
            }
            return result
        }
    }

    /// `KILL QUERY` from a connection of its own: the statement on `threadID` stops at once.
    static func kill(_ threadID: UInt, url: MySQLURL) async {
        guard let killer = try? await MySQLConnection.open(url, readTimeout: 5, maxPacket: 1 << 20) else { return }
        _ = try? await killer.perform { try $0.runHere("KILL QUERY \(threadID)", maxRows: 0, maxBytes: 0) }
    }
}

/// At most `size` connections, opened on demand and kept while healthy. Callers past the size
/// wait in turn, at most `maxWaiting` of them, each no longer than its query may run and no longer
/// than it is wanted (a cancelled caller leaves the line).
actor MySQLPool {
    let url: MySQLURL
    let size: Int
    let maxPacket: UInt
    let readTimeout: UInt32
    static let maxWaiting = 64
    private var idle: [MySQLConnection] = []
    private var open = 0
    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Bool, Never>
        let deadline: Task<Void, Never>
    }
    /// In the order they came; each is resumed once: `true` to try again, `false` when it gave up.
    private var waiting: [Waiter] = []
    private var nextWaiter: UInt64 = 0
    private var closed = false

    init(url: MySQLURL, size: Int, maxPacket: UInt, readTimeout: UInt32) {
        self.url = url
        self.size = size
        self.maxPacket = maxPacket
        self.readTimeout = readTimeout
    }

    func acquire(within wait: Duration) async throws -> MySQLConnection {
        let deadline = ContinuousClock.now + wait
        while true {
            if closed { throw DatasourceError("the MySQL datasource is closed") }
            try Task.checkCancellation()
            if let connection = idle.popLast() { return connection }
            if open < size {
                open += 1
                do {
                    return try await MySQLConnection.open(url, readTimeout: readTimeout, maxPacket: maxPacket)
                } catch {
                    open -= 1
                    wakeOne()
                    throw error
                }
            }
            guard waiting.count < Self.maxWaiting else {
                throw StoreError(
                    kind: .busy, message: "the MySQL datasource has \(waiting.count) queries waiting for its \(size) connections; try again shortly", sql: "")
            }
            let id = nextWaiter
            nextWaiter += 1
            let woken = await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let timer = Task { [weak self] in
                        try? await Task.sleep(until: deadline)
                        await self?.giveUp(id)
                    }
                    waiting.append(Waiter(id: id, continuation: continuation, deadline: timer))
                }
            } onCancel: {
                Task { await self.giveUp(id) }
            }
            if !woken {
                try Task.checkCancellation()
                throw StoreError(kind: .timeout, message: "every connection of the MySQL datasource stayed busy for the query's whole time; try again", sql: "")
            }
        }
    }

    func release(_ connection: MySQLConnection, keep: Bool) {
        if keep, !closed {
            idle.append(connection)
        } else {
            open -= 1
        }
        wakeOne()
    }

    func close() {
        closed = true
        idle.removeAll()
        for waiter in waiting { resume(waiter, true) }
        waiting.removeAll()
    }

    private func wakeOne() {
        if !waiting.isEmpty { resume(waiting.removeFirst(), true) }
    }

    /// A waiter whose time ran out or whose caller went away leaves the line (if it is still in it).
    private func giveUp(_ id: UInt64) {
        guard let index = waiting.firstIndex(where: { $0.id == id }) else { return }
        resume(waiting.remove(at: index), false)
    }

    private func resume(_ waiter: Waiter, _ goOn: Bool) {
        waiter.deadline.cancel()
        waiter.continuation.resume(returning: goOn)
    }
}

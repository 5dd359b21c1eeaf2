import Crypto
public import Foundation
public import Logging
import PorticoBase
public import PorticoJSON
import PorticoStore
import Synchronization

/// One `tools/call` as the audit trail keeps it: who called which tool of which app, from
/// which client, how it ended and how long it took. The arguments are kept only as a digest,
/// so no value a caller sent (a password, a key, a record) is stored.
public struct ToolCallRecord: Sendable, Equatable {
    /// Milliseconds since 1970.
    public var at: Int64
    public var app: String
    public var userID: Int64?
    /// The user's name, or the OAuth client's for client credentials; `anonymous` without one.
    public var principal: String
    /// Which credential: `key:<id>`, `oauth:<client>:<user>`, `client:<id>`, `user:<id>`.
    public var credential: String
    /// The client's own name and version (`clientInfo`), else its User-Agent.
    public var client: String
    public var tool: String
    /// SHA-256 of the arguments as sent, hex; the same arguments give the same digest.
    public var argumentsDigest: String
    /// `ok`, `tool_error`, `error`, `cancelled` or `timeout`.
    public var outcome: String
    public var durationMilliseconds: Int64

    public init(
        at: Int64, app: String, userID: Int64?, principal: String, credential: String, client: String, tool: String, argumentsDigest: String,
        outcome: String, durationMilliseconds: Int64
    ) {
        self.at = at
        self.app = app
        self.userID = userID
        self.principal = principal
        self.credential = credential
        self.client = client
        self.tool = tool
        self.argumentsDigest = argumentsDigest
        self.outcome = outcome
        self.durationMilliseconds = durationMilliseconds
    }

    public static func digest(_ arguments: JSONObject) -> String {
        var writer = JSONWriter(capacity: 128)
        writer.write(.object(arguments))
        return writer.withBytes { SHA256.hash(data: UnsafeRawBufferPointer($0)) }.withUnsafeBytes { Hex.encode($0) }
    }

    /// At most `limit` characters of text from outside, so a client cannot fill the trail.
    public static func clipped(_ text: String, _ limit: Int = 200) -> String {
        // Text has no more characters than UTF-8 bytes, so short text needs no counting of characters.
        text.utf8.count <= limit || text.count <= limit ? text : String(text.prefix(limit)) + "…"
    }
}

extension ToolCallRecord {
    /// The record as one line of a batch: a JSON array of its fields in a fixed order
    /// (`at`, user id, principal, credential, client, tool, digest, outcome, duration), then a newline.
    func writeLine(into writer: inout JSONWriter) {
        writer.appendLiteral("[")
        writer.writeInteger(at)
        writer.appendLiteral(",")
        if let userID { writer.writeInteger(userID) } else { writer.appendLiteral("null") }
        writer.appendLiteral(",")
        writer.writeString(principal)
        writer.appendLiteral(",")
        writer.writeString(credential)
        writer.appendLiteral(",")
        writer.writeString(client)
        writer.appendLiteral(",")
        writer.writeString(tool)
        writer.appendLiteral(",")
        writer.writeString(argumentsDigest)
        writer.appendLiteral(",")
        writer.writeString(outcome)
        writer.appendLiteral(",")
        writer.writeInteger(durationMilliseconds)
        writer.appendLiteral("]\n")
    }

    /// A record from one line of a batch of `app`; nil for a line that is not one.
    init?(line: some Collection<UInt8>, app: String) {
        guard case .array(let f)? = try? JSONParser.parse(line), f.count == 9, let at = f[0].intValue, let duration = f[8].intValue else { return nil }
        let texts = f[2...7].map { $0.stringValue ?? "" }
        self.init(
            at: at, app: app, userID: f[1].intValue, principal: texts[0], credential: texts[1], client: texts[2], tool: texts[3],
            argumentsDigest: texts[4], outcome: texts[5], durationMilliseconds: duration)
    }

    public var json: JSON {
        [
            "at": .int(at), "app": .string(app), "userId": userID.map(JSON.int) ?? .null, "principal": .string(principal),
            "credential": .string(credential), "client": .string(client), "tool": .string(tool), "argumentsDigest": .string(argumentsDigest),
            "outcome": .string(outcome), "durationMs": .int(durationMilliseconds),
        ]
    }
}

/// The audit trail: each app's `tools/call` records in the app's own database. A call is
/// recorded in memory at once, as one line appended to its app's pending batch; `flush`, off the
/// request path, writes each batch as one row of `portico_audit_batches` (its records as JSON
/// lines), so a call costs an append, not a row of its own. Records past `maxPending` (a database
/// that cannot keep up) are dropped and counted in the log rather than held without bound.
public final class AuditTrail: Sendable {
    public let databases: AppDatabases
    /// How long records are kept; older ones go at `prune`.
    public let retentionDays: Int
    let logger: Logger
    private let pending = Mutex(Pending())
    /// One flush at a time: a flush that finds another under way waits for it to commit, so a
    /// caller that flushes before it reads (`audit_list`) sees every call recorded before it asked,
    /// even those the background flush had taken but not yet written.
    private let flushing = WriteLease(queueDepth: "portico_audit_flush_queue_depth", waitSeconds: "portico_audit_flush_wait_seconds")
    public static let maxPending = 50_000
    /// Records a stored batch holds at most.
    static let batchLimit = 1_000

    /// Records of one app, as the lines of one row, written into it as they are recorded.
    final class Batch {
        var lines = JSONWriter(capacity: 16_384)
        var count = 0
        var firstAt = Int64.max
        var lastAt = Int64.min

        func add(_ record: ToolCallRecord) {
            record.writeLine(into: &lines)
            count += 1
            firstAt = min(firstAt, record.at)
            lastAt = max(lastAt, record.at)
        }

        func values(app: String) -> [SQLValue] {
            [.text(app), .int(firstAt), .int(lastAt), .int(Int64(count)), .text(lines.withBytes { String(decoding: $0, as: UTF8.self) })]
        }
    }

    /// An app's batches as the rows that store them.
    typealias Rows = (app: String, values: [[SQLValue]], count: Int)

    struct Pending {
        /// Each app's batches, oldest first.
        var batches: [String: [Batch]] = [:]
        /// What a flush could not write, for the next.
        var retry: [Rows] = []
        var count = 0
        var dropped = 0
    }

    public init(databases: AppDatabases, retentionDays: Int = 90, logger: Logger) {
        self.databases = databases
        self.retentionDays = retentionDays
        self.logger = logger
    }

    public func record(_ record: ToolCallRecord) {
        pending.withLock { pending in
            guard pending.count < Self.maxPending else {
                pending.dropped += 1
                return
            }
            pending.count += 1
            if let batch = pending.batches[record.app]?.last, batch.count < Self.batchLimit {
                batch.add(record)
            } else {
                let batch = Batch()
                batch.add(record)
                pending.batches[record.app, default: []].append(batch)
            }
        }
    }

    public var pendingCount: Int { pending.withLock { $0.count } }

    /// Writes what was recorded: each app's batches in one transaction of its own database.
    public func flush() async throws {
        try await flushing.acquire()
        defer { flushing.release() }
        // Each app's batches as rows, taken with what an earlier flush could not write (first).
        let (taken, dropped) = pending.withLock { pending in
            defer { pending = Pending() }
            var taken = pending.retry
            for (app, batches) in pending.batches {
                taken.append((app, batches.map { $0.values(app: app) }, batches.reduce(0) { $0 + $1.count }))
            }
            return (taken, pending.dropped)
        }
        if dropped > 0 { logger.error("the audit trail could not keep up; records were dropped", metadata: ["dropped": "\(dropped)"]) }
        var failed: [Rows] = []
        for rows in taken {
            do {
                try await databases.database(app: rows.app).insertMany(into: "portico_audit_batches", columns: Self.columns, rows: rows.values)
            } catch let error as DataError where error.kind == .notFound {
                continue  // the app was removed meanwhile: its trail went with it
            } catch {
                failed.append(rows)
                logger.warning("could not write the audit trail; will retry", metadata: ["app": "\(rows.app)", "error": "\(error)"])
            }
        }
        guard !failed.isEmpty else { return }
        pending.withLock { pending in
            // Kept for the next flush as far as the bound allows.
            for rows in failed {
                if pending.count + rows.count <= Self.maxPending {
                    pending.count += rows.count
                    pending.retry.append(rows)
                } else {
                    pending.dropped += rows.count
                }
            }
        }
    }

    static let columns = ["app", "first_at", "last_at", "count", "records"]

    /// Removes each app's records older than the retention (a batch goes once its newest is).
    public func prune(apps: [String], now: Date) async throws {
        let cutoff = Int64((now.timeIntervalSince1970 - Double(retentionDays) * 86400) * 1000)
        for app in apps {
            var q = SQLFragment("DELETE FROM portico_audit_batches WHERE last_at < ")
            q.append(bind: .int(cutoff))
            try await databases.database(app: app).execute(q)
        }
    }
    /// What to read of the trail.
    public struct Query: Sendable {
        /// Milliseconds since 1970.
        public var since: Int64?
        public var principal: String?
        public var tool: String?
        public var limit = 100

        public init(since: Int64? = nil, principal: String? = nil, tool: String? = nil, limit: Int = 100) {
            self.since = since
            self.principal = principal
            self.tool = tool
            self.limit = limit
        }
    }

    /// `2026-11-23`, `2026-11-23T10:00:00Z` (or with a space), or a count of milliseconds, as
    /// milliseconds since 1970 (UTC).
    public static func parseSince(_ text: String) -> Int64? {
        if let ms = Int64(text) { return ms }
        guard let value = TemporalValue.parse(text) else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = DateComponents(year: value.year, month: value.month, day: value.day, hour: value.hour, minute: value.minute, second: value.second)
        return calendar.date(from: parts).map { Int64($0.timeIntervalSince1970 * 1000) }
    }

    /// An app's records, newest first: batches are read newest first until no batch left can hold
    /// a record newer than the `limit`th found.
    public func read(app: String, _ query: Query) async throws -> [ToolCallRecord] {
        let limit = max(1, min(query.limit, 10_000))
        let database = try await databases.database(app: app)
        // Each record with what orders it: its time, then its batch and place in it (the order it was recorded in).
        var found: [(record: ToolCallRecord, batch: Int64, place: Int)] = []
        let page = 32
        // Where the last page ended: pages follow by key, so a batch written meanwhile moves none.
        var after: (lastAt: Int64, id: Int64)?
        while true {
            var q = SQLFragment("SELECT id, last_at, records FROM portico_audit_batches WHERE app = ")
            q.append(bind: .text(app))
            if let since = query.since {
                q.append(" AND last_at >= ")
                q.append(bind: .int(since))
            }
            if let after {
                q.append(" AND (last_at < ")
                q.append(bind: .int(after.lastAt))
                q.append(" OR (last_at = ")
                q.append(bind: .int(after.lastAt))
                q.append(" AND id < ")
                q.append(bind: .int(after.id))
                q.append("))")
            }
            q.append(" ORDER BY last_at DESC, id DESC LIMIT \(page)")
            let rows = try await database.query(q)
            for row in rows {
                let batch = row.int("id") ?? 0
                for (place, line) in (row.string("records") ?? "").utf8.split(separator: UInt8(ascii: "\n")).enumerated() {
                    guard let record = ToolCallRecord(line: line, app: app) else { continue }
                    if let since = query.since, record.at < since { continue }
                    if let principal = query.principal, record.principal != principal { continue }
                    if let tool = query.tool, record.tool != tool { continue }
                    found.append((record, batch, place))
                }
            }
            found.sort { a, b in
                a.record.at != b.record.at ? a.record.at > b.record.at : a.batch != b.batch ? a.batch > b.batch : a.place > b.place
            }
            if found.count > limit { found.removeLast(found.count - limit) }
            // Every batch not read yet ends no later than the last one read.
            guard rows.count == page, let oldest = rows.last?.int("last_at"), let id = rows.last?.int("id") else { break }
            if found.count == limit, let last = found.last, last.record.at > oldest { break }
            after = (oldest, id)
        }
        return found.map(\.record)
    }

    /// The table, in each app's own database and (by migration) in the instance's.
    static func createTable(flavor: SQLFlavor) -> [String] {
        [
            """
            CREATE TABLE IF NOT EXISTS portico_audit_batches (id \(flavor.autoIncrementPrimaryKey), app TEXT NOT NULL, first_at BIGINT NOT NULL,
              last_at BIGINT NOT NULL, count INTEGER NOT NULL, records TEXT NOT NULL)
            """,
            "CREATE INDEX IF NOT EXISTS portico_audit_batches_last_at ON portico_audit_batches (last_at)",
        ]
    }

    /// The table of a row per call that the trail was kept in before batches (migration 6 made it).
    static func rowTable(flavor: SQLFlavor) -> [String] {
        [
            """
            CREATE TABLE IF NOT EXISTS portico_audit (id \(flavor.autoIncrementPrimaryKey), at BIGINT NOT NULL, app TEXT NOT NULL, user_id BIGINT, principal TEXT NOT NULL,
              credential TEXT NOT NULL, client TEXT NOT NULL, tool TEXT NOT NULL, arguments_digest TEXT NOT NULL, outcome TEXT NOT NULL,
              duration_ms BIGINT NOT NULL)
            """,
            "CREATE INDEX IF NOT EXISTS portico_audit_at ON portico_audit (at)",
        ]
    }

    /// Moves the records of the table of a row per call into batches (one per app and minute), then drops it.
    static func batchesFromRows(flavor: SQLFlavor) -> [String] {
        let fields = "at, user_id, principal, credential, client, tool, arguments_digest, outcome, duration_ms"
        let lines =
            switch flavor {
            case .sqlite: "group_concat(json_array(\(fields)), char(10))"
            case .postgres: "string_agg(json_build_array(\(fields))::text, E'\\n' ORDER BY at, id)"
            }
        return [
            "INSERT INTO portico_audit_batches (app, first_at, last_at, count, records) SELECT app, MIN(at), MAX(at), COUNT(*), \(lines) FROM portico_audit GROUP BY app, at / 60000",
            "DROP TABLE portico_audit",
        ]
    }
}

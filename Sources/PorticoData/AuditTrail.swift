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
    /// The row's values, in the order of `AuditTrail.columns`.
    var values: [SQLValue] {
        [
            .int(at), .text(app), userID.map { .int($0) } ?? .null, .text(principal), .text(credential), .text(client), .text(tool),
            .text(argumentsDigest), .text(outcome), .int(durationMilliseconds),
        ]
    }

    public var json: JSON {
        [
            "at": .int(at), "app": .string(app), "userId": userID.map(JSON.int) ?? .null, "principal": .string(principal),
            "credential": .string(credential), "client": .string(client), "tool": .string(tool), "argumentsDigest": .string(argumentsDigest),
            "outcome": .string(outcome), "durationMs": .int(durationMilliseconds),
        ]
    }
}

/// The audit trail: each app's `tools/call` records in the app's own database
/// (`portico_audit`). Calls are recorded in memory at once and written in batches by `flush`,
/// off the request path; records past `maxPending` (a database that cannot keep up) are
/// dropped and counted in the log rather than held without bound.
public final class AuditTrail: Sendable {
    public let databases: AppDatabases
    /// How long records are kept; older ones go at `prune`.
    public let retentionDays: Int
    let logger: Logger
    private let pending = Mutex<(records: [ToolCallRecord], dropped: Int)>(([], 0))
    /// One flush at a time: a flush that finds another under way waits for it to commit, so a
    /// caller that flushes before it reads (`audit_list`) sees every call recorded before it asked,
    /// even those the background flush had taken but not yet written.
    private let flushing = WriteLease(queueDepth: "portico_audit_flush_queue_depth", waitSeconds: "portico_audit_flush_wait_seconds")
    public static let maxPending = 50_000

    public init(databases: AppDatabases, retentionDays: Int = 90, logger: Logger) {
        self.databases = databases
        self.retentionDays = retentionDays
        self.logger = logger
    }

    public func record(_ record: ToolCallRecord) {
        pending.withLock { pending in
            if pending.records.count >= Self.maxPending {
                pending.dropped += 1
            } else {
                pending.records.append(record)
            }
        }
    }

    public var pendingCount: Int { pending.withLock { $0.records.count } }

    /// Writes what was recorded, each app's records in transactions of its own database.
    public func flush() async throws {
        try await flushing.acquire()
        defer { flushing.release() }
        let (records, dropped) = pending.withLock { pending in
            defer {
                // The next batch is likely as long: its array is made once, not grown record by record
                // (at most a few thousand records kept ready, so a burst leaves no large array behind).
                let capacity = pending.records.count
                pending = ([], 0)
                pending.records.reserveCapacity(min(capacity, 4_096))
            }
            return (pending.records, pending.dropped)
        }
        if dropped > 0 { logger.error("the audit trail could not keep up; records were dropped", metadata: ["dropped": "\(dropped)"]) }
        guard let first = records.first else { return }
        var failed: [ToolCallRecord] = []
        // Most batches are of one app: grouped only when they are not.
        let byApp = records.allSatisfy { $0.app == first.app } ? [first.app: records] : Dictionary(grouping: records, by: \.app)
        for (app, entries) in byApp {
            do {
                try await databases.database(app: app).insertMany(into: "portico_audit", columns: Self.columns, rows: entries.map(\.values))
            } catch let error as DataError where error.kind == .notFound {
                continue  // the app was removed meanwhile: its trail went with it
            } catch {
                failed += entries
                logger.warning("could not write the audit trail; will retry", metadata: ["app": "\(app)", "error": "\(error)"])
            }
        }
        if !failed.isEmpty {
            pending.withLock { pending in
                let room = max(0, Self.maxPending - pending.records.count)
                pending.records = Array(failed.prefix(room)) + pending.records
            }
        }
    }

    static let columns = ["at", "app", "user_id", "principal", "credential", "client", "tool", "arguments_digest", "outcome", "duration_ms"]

    /// Removes each app's records older than the retention.
    public func prune(apps: [String], now: Date) async throws {
        let cutoff = Int64((now.timeIntervalSince1970 - Double(retentionDays) * 86400) * 1000)
        for app in apps {
            var q = SQLFragment("DELETE FROM portico_audit WHERE at < ")
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

    /// An app's records, newest first.
    public func read(app: String, _ query: Query) async throws -> [ToolCallRecord] {
        var q = SQLFragment(
            "SELECT at, app, user_id, principal, credential, client, tool, arguments_digest, outcome, duration_ms FROM portico_audit WHERE 1 = 1")
        if let since = query.since {
            q.append(" AND at >= ")
            q.append(bind: .int(since))
        }
        if let principal = query.principal {
            q.append(" AND principal = ")
            q.append(bind: .text(principal))
        }
        if let tool = query.tool {
            q.append(" AND tool = ")
            q.append(bind: .text(tool))
        }
        q.append(" ORDER BY at DESC, id DESC LIMIT ")
        q.append(bind: .int(Int64(max(1, min(query.limit, 10_000)))))
        return try await databases.database(app: app).query(q).map { row in
            ToolCallRecord(
                at: row.int("at") ?? 0, app: row.string("app") ?? app, userID: row.int("user_id"), principal: row.string("principal") ?? "",
                credential: row.string("credential") ?? "", client: row.string("client") ?? "", tool: row.string("tool") ?? "",
                argumentsDigest: row.string("arguments_digest") ?? "", outcome: row.string("outcome") ?? "",
                durationMilliseconds: row.int("duration_ms") ?? 0)
        }
    }

    /// The table, in each app's own database and (by migration) in the instance's.
    static func createTable(flavor: SQLFlavor) -> [String] {
        [
            """
            CREATE TABLE IF NOT EXISTS portico_audit (id \(flavor.autoIncrementPrimaryKey), at BIGINT NOT NULL, app TEXT NOT NULL, user_id BIGINT, principal TEXT NOT NULL,
              credential TEXT NOT NULL, client TEXT NOT NULL, tool TEXT NOT NULL, arguments_digest TEXT NOT NULL, outcome TEXT NOT NULL,
              duration_ms BIGINT NOT NULL)
            """,
            "CREATE INDEX IF NOT EXISTS portico_audit_at ON portico_audit (at)",
        ]
    }
}

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

    /// The digest the trail keeps of `arguments`: SHA-256 of their compact JSON, in hex.
    public static func digest(_ arguments: JSONObject) -> String {
        ToolCall.digest(arguments).withUnsafeBytes { Hex.encode($0) }
    }

    /// At most `limit` characters of text from outside, so a client cannot fill the trail.
    public static func clipped(_ text: String, _ limit: Int = 200) -> String {
        // Text has no more characters than UTF-8 bytes, so short text needs no counting of characters.
        text.utf8.count <= limit || text.count <= limit ? text : String(text.prefix(limit)) + "…"
    }
}

extension ToolCallRecord {
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

/// A `tools/call` as its caller hands it to the trail, in what the call already holds: the
/// arguments digested at once (while they are fresh in the cache), the names clipped as the record
/// keeps them (so a pending call is small whatever the request sent), no line made. The trail
/// writes the record's line later, off the request path, in a loop over many calls
/// (`AuditTrail.writeOut`).
public struct ToolCall: Sendable {
    /// Milliseconds since 1970.
    public var at: Int64
    public var app: String
    public var userID: Int64?
    /// The user's name, or the OAuth client's for client credentials; `anonymous` when nil.
    public var principal: String?
    public var credential: String
    /// The client's own name (its `clientInfo`), else its User-Agent or what made the call.
    public var client: String
    /// The client's version, from its `clientInfo`.
    public var clientVersion: String?
    public var tool: String
    var argumentsDigest: SHA256Digest
    public var outcome: String
    public var durationMilliseconds: Int64

    public init(
        at: Int64, app: String, userID: Int64?, principal: String?, credential: String, client: String, clientVersion: String? = nil,
        tool: String, arguments: JSONObject, outcome: String, durationMilliseconds: Int64
    ) {
        self.at = at
        self.app = app
        self.userID = userID
        self.principal = principal.map { ToolCallRecord.clipped($0, 100) }
        self.credential = credential
        self.client = client
        self.clientVersion = clientVersion
        self.tool = ToolCallRecord.clipped(tool, 100)
        self.argumentsDigest = Self.digest(arguments)
        self.outcome = outcome
        self.durationMilliseconds = durationMilliseconds
        // Kept apart while short, so consecutive calls of one client share their written name.
        if client.utf8.count + (clientVersion?.utf8.count ?? 0) >= 200 {
            self.client = ToolCallRecord.clipped(clientName)
            self.clientVersion = nil
        }
    }

    /// SHA-256 of the arguments' compact JSON.
    static func digest(_ arguments: JSONObject) -> SHA256Digest {
        var writer = JSONWriter(capacity: 256)
        writer.write(.object(arguments))
        return writer.withBytes { SHA256.hash(data: UnsafeRawBufferPointer($0)) }
    }

    /// The client as the record names it: `name/version` (at most 200 characters: see `init`).
    var clientName: String {
        clientVersion.map { client + "/" + $0 } ?? client
    }

    /// The record the trail keeps of this call.
    public var record: ToolCallRecord {
        ToolCallRecord(
            at: at, app: app, userID: userID, principal: principal ?? "anonymous", credential: credential, client: clientName, tool: tool,
            argumentsDigest: argumentsDigest.withUnsafeBytes { Hex.encode($0) },
            outcome: outcome, durationMilliseconds: durationMilliseconds)
    }

    /// Writes the record's line: a JSON array of its fields in a fixed order (`at`, user id,
    /// principal, credential, client, tool, digest, outcome, duration), then a newline. `client`
    /// is the client's name as written for the call before, kept when this call's is the same.
    func writeLine(into writer: inout JSONWriter, client: inout (name: String, version: String?, text: String)) {
        writer.appendASCII(UInt8(ascii: "["))
        writer.writeInteger(at)
        writer.appendASCII(UInt8(ascii: ","))
        if let userID { writer.writeInteger(userID) } else { writer.appendLiteral("null") }
        writer.appendASCII(UInt8(ascii: ","))
        writer.writeString(principal ?? "anonymous")
        writer.appendASCII(UInt8(ascii: ","))
        writer.writeString(credential)
        writer.appendASCII(UInt8(ascii: ","))
        // Compared as bytes: two spellings of one text that Swift holds equal must each be written as sent.
        if !client.name.utf8.elementsEqual(self.client.utf8) || !Self.sameBytes(client.version, clientVersion) {
            client = (self.client, clientVersion, clientName)
        }
        writer.writeString(client.text)
        writer.appendASCII(UInt8(ascii: ","))
        writer.writeString(tool)
        writer.appendASCII(UInt8(ascii: ","))
        argumentsDigest.withUnsafeBytes { writer.writeHexString($0) }
        writer.appendASCII(UInt8(ascii: ","))
        writer.writeString(outcome)
        writer.appendASCII(UInt8(ascii: ","))
        writer.writeInteger(durationMilliseconds)
        writer.appendLiteral("]\n")
    }

    private static func sameBytes(_ a: String?, _ b: String?) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case (let a?, let b?): a.utf8.elementsEqual(b.utf8)
        default: false
        }
    }
}

/// The audit trail: each app's `tools/call` records in the app's own database. A call is
/// recorded in memory at once, as it is (`ToolCall`, an append under a lock); a flush, off the
/// request path, writes the recorded calls as lines of their apps' batches and each batch as one
/// row of `portico_audit_batches`, so a call costs an append, not a row of its own. Records past
/// `maxPending` (a database that cannot keep up) are dropped and counted in the log rather than
/// held without bound.
public final class AuditTrail: Sendable {
    public let databases: AppDatabases
    /// How long records are kept; older ones go at `prune`.
    public let retentionDays: Int
    let logger: Logger
    /// Calls recorded and not yet written out, with the count of every record not yet stored.
    private let recorded = Mutex(Recorded())
    /// The batches written out and not yet stored. Only `writeOut` and `flush` take this lock.
    private let pending = Mutex(Pending())
    /// One flush at a time: a flush that finds another under way waits for it to commit, so a
    /// caller that flushes before it reads (`audit_list`) sees every call recorded before it asked,
    /// even those the background flush had taken but not yet written.
    private let flushing = WriteLease(queueDepth: "portico_audit_flush_queue_depth", waitSeconds: "portico_audit_flush_wait_seconds")
    public static let maxPending = 50_000
    /// Records a stored batch holds at most.
    static let batchLimit = 1_000

    /// Records of one app, as the lines of one row, written into it as they are written out.
    final class Batch {
        var lines = JSONWriter(capacity: 65_536)
        var count = 0
        var firstAt = Int64.max
        var lastAt = Int64.min

        func add(_ call: ToolCall, client: inout (name: String, version: String?, text: String)) {
            call.writeLine(into: &lines, client: &client)
            count += 1
            firstAt = min(firstAt, call.at)
            lastAt = max(lastAt, call.at)
        }

        func values(app: String) -> [SQLValue] {
            [.text(app), .int(firstAt), .int(lastAt), .int(Int64(count)), .text(lines.withBytes { String(decoding: $0, as: UTF8.self) })]
        }
    }

    /// An app's batches as the rows that store them.
    typealias Rows = (app: String, values: [[SQLValue]], count: Int)

    struct Recorded {
        var calls: [ToolCall] = []
        /// Records not yet stored: those in `calls`, in batches and in rows to retry.
        var count = 0
        var dropped = 0
    }

    struct Pending {
        /// Each app's batches, oldest first.
        var batches: [String: [Batch]] = [:]
        /// What a flush could not write, for the next.
        var retry: [Rows] = []
        /// The client named in the line written last.
        var client = (name: "", version: String?.none, text: "")
    }

    public init(databases: AppDatabases, retentionDays: Int = 90, logger: Logger) {
        self.databases = databases
        self.retentionDays = retentionDays
        self.logger = logger
    }

    /// Keeps `call` for the next `writeOut`: the request path pays for an append.
    public func record(_ call: ToolCall) {
        recorded.withLock { recorded in
            guard recorded.count < Self.maxPending else {
                recorded.dropped += 1
                return
            }
            recorded.count += 1
            recorded.calls.append(call)
        }
    }

    /// Records not yet stored.
    public var pendingCount: Int { recorded.withLock { $0.count } }

    /// Turns the calls recorded so far into lines of their apps' batches, many in one loop.
    func writeOut() {
        let calls = recorded.withLock { recorded in
            let calls = recorded.calls
            // Room for as many as came since the last time, so a busy trail's appends do not grow it.
            recorded.calls = []
            recorded.calls.reserveCapacity(min(calls.count, Self.batchLimit))
            return calls
        }
        guard !calls.isEmpty else { return }
        pending.withLock { pending in
            // The batch the last call went to: most calls follow one of the same app.
            var current: (app: String, batch: Batch)?
            for call in calls {
                let batch: Batch
                if let current, current.app == call.app, current.batch.count < Self.batchLimit {
                    batch = current.batch
                } else if let last = pending.batches[call.app]?.last, last.count < Self.batchLimit {
                    batch = last
                } else {
                    batch = Batch()
                    pending.batches[call.app, default: []].append(batch)
                }
                batch.add(call, client: &pending.client)
                current = (call.app, batch)
            }
        }
    }

    /// Writes what was recorded: each app's batches in one transaction of its own database.
    public func flush() async throws {
        try await flushing.acquire()
        defer { flushing.release() }
        writeOut()
        // Each app's batches as rows, taken with what an earlier flush could not write (first).
        let taken = pending.withLock { pending in
            var taken = pending.retry
            for (app, batches) in pending.batches {
                taken.append((app, batches.map { $0.values(app: app) }, batches.reduce(0) { $0 + $1.count }))
            }
            pending.retry = []
            pending.batches = [:]
            return taken
        }
        let dropped = recorded.withLock { recorded in
            defer { recorded.dropped = 0 }
            recorded.count -= taken.reduce(0) { $0 + $1.count }
            return recorded.dropped
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
        // Kept for the next flush as far as the bound allows.
        let kept = recorded.withLock { recorded in
            var kept: [Rows] = []
            for rows in failed {
                if recorded.count + rows.count <= Self.maxPending {
                    recorded.count += rows.count
                    kept.append(rows)
                } else {
                    recorded.dropped += rows.count
                }
            }
            return kept
        }
        pending.withLock { $0.retry.append(contentsOf: kept) }
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

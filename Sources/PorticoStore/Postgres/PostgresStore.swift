import Crypto
import Foundation
public import Logging
import Metrics
import NIOCore
import PorticoBase
import PorticoJSON
public import PostgresNIO
import Synchronization
import Tracing

/// Portico's stores on PostgreSQL, for replicas that share one database: a bounded pool of
/// connections per process, each statement sent with the extended protocol and its values bound,
/// a statement timeout set on every connection, and a deadline for getting a connection, so a
/// request made while the database is down fails within seconds with `StoreError.unavailable`
/// instead of waiting for it. Changes are announced to the other replicas with `NOTIFY` and heard
/// with `LISTEN` (`PostgresChangeListener`).
public final class PostgresStore: Database {
    public let flavor = SQLFlavor.postgres
    public let logger: Logger
    public let changes: ChangeSignal
    public let options: Options
    /// Where the store is, with its password hidden.
    public let location: String
    /// The URL it was opened with (for read-only datasources over the same database).
    public let url: String

    let client: PostgresClient
    /// Stops the statements of callers that went away.
    let statements: PostgresStatementCanceller
    private let runner: Task<Void, Never>
    /// Statements waiting for a connection (`portico_db_queue_depth{pool="postgres"}`), and how
    /// long they waited (`portico_db_queue_wait_seconds`).
    private let waiting = Atomic<Int>(0)
    /// Set when a statement found no connection within its deadline, cleared when one is had
    /// again: while it is set, statements wait only `downAcquireTimeout`, so requests made during
    /// an outage are answered within a fraction of a second, and the first after it succeeds.
    private let seemsDown = Atomic<Bool>(false)
    /// The callers waiting for a statement now, so they can be let go when the database goes away.
    private let running = Mutex<[Int: any Abandonable]>([:])
    private let nextRaceID = Atomic<Int>(0)
    private let depth = Gauge(label: "portico_db_queue_depth", dimensions: [("pool", "postgres")])
    private let wait = Metrics.Timer(label: "portico_db_queue_wait_seconds", dimensions: [("pool", "postgres")], preferredDisplayUnit: .seconds)
    /// Hears other replicas' changes; only the instance's own store listens (an app's store
    /// shares its signal).
    private let listener: PostgresChangeListener?
    /// The statements the store runs prepared, by connection.
    let prepared = PreparedStatements()

    public struct Options: Sendable {
        /// Connections this process opens at most (one of them listens for changes).
        public var poolSize = 12
        /// How long opening a connection may take.
        public var connectTimeout: Duration = .seconds(5)
        /// How long a statement may wait for a free connection (or for the database to come back)
        /// before it fails as unavailable.
        public var acquireTimeout: Duration = .seconds(5)
        /// The same while the database has just been found unreachable.
        public var downAcquireTimeout: Duration = .milliseconds(300)
        /// The longest one statement may run (PostgreSQL's `statement_timeout`).
        public var statementTimeout: Duration = .seconds(30)
        /// Rows one statement may return; a backstop behind the callers' own limits.
        public var maxRowsPerStatement = 200_000
        /// The schema plain table names resolve in (PostgreSQL's `search_path`); the URL's
        /// default when nil. An app's store names its own schema only.
        public var searchPath: String?

        public init() {}
    }

    /// The channel replicas announce changes on.
    static let channel = "portico_changes"

    /// Opens a pool on `url`. The instance's store listens for other replicas' changes; a store
    /// given `changes` (an app's, on its own schema) announces and hears through that signal.
    public init(url: String, options: Options = Options(), changes shared: ChangeSignal? = nil, logger: Logger) throws {
        var configuration: PostgresClient.Configuration
        do {
            configuration = try PostgresURL.configuration(url, what: "--database-url")
        } catch {
            throw StoreError(kind: .unavailable, message: error.description, sql: "")
        }
        configuration.options.maximumConnections = max(2, options.poolSize)
        configuration.options.connectTimeout = options.connectTimeout
        configuration.options.additionalStartupParameters += [
            ("application_name", "portico"),
            ("statement_timeout", "\(Self.milliseconds(options.statementTimeout))"),
            // Portico's tables are found by their plain names, and times are read as UTC.
            ("TimeZone", "UTC"),
        ]
        if let searchPath = options.searchPath {
            configuration.options.additionalStartupParameters.append(("search_path", SQLFragment.quote(searchPath)))
        }
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.client = client
        statements = PostgresStatementCanceller(client: client, logger: logger)
        self.logger = logger
        self.options = options
        self.url = url
        location = PostgresURL.redacted(url)
        runner = Task { await client.run() }
        if let shared {
            listener = nil
            changes = shared
            return
        }
        let listener = PostgresChangeListener(client: client, channel: Self.channel, logger: logger)
        self.listener = listener
        let lost = LostConnectionRelay()
        let changes = ChangeSignal(path: nil, remote: listener.heard, publish: { listener.publish($0) })
        self.changes = changes
        listener.onMessage = { changes.deliver(encoded: $0) }
        lost.store = self
        listener.onLost = { lost.store?.connectionLost() }
        listener.start()
    }

    /// Lets the listener tell the store without owning it.
    final class LostConnectionRelay: Sendable {
        private struct Target: Sendable { weak var store: PostgresStore? }
        private let target = Mutex(Target())

        var store: PostgresStore? {
            get { target.withLock { $0.store } }
            set { target.withLock { $0.store = newValue } }
        }
    }

    /// Stores on the same database that do not listen themselves (apps' schemas), told when this
    /// one hears that the database dropped its connections.
    private let followers = Mutex<[LostConnectionRelay]>([])

    /// Tells `store` of outages this store hears of, so its callers are let go as quickly.
    public func shareOutages(with store: PostgresStore) {
        let relay = LostConnectionRelay()
        relay.store = store
        followers.withLock { followers in
            followers.removeAll { $0.store == nil }
            followers.append(relay)
        }
    }

    /// Whether this process hears other replicas' changes as they happen (else caches re-read
    /// stored state every second until it does again).
    public var isListeningForChanges: Bool { listener?.listening.load(ordering: .acquiring) ?? false }

    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }

    // MARK: Database

    public func query(_ statement: SQLFragment) async throws -> [Row] {
        guard Traces.isOn, ServiceContext.current != nil else { return try await untracedQuery(statement) }
        return try await Traces.statement(statement, system: "postgresql") { try await untracedQuery(statement) }
    }

    private func untracedQuery(_ statement: SQLFragment) async throws -> [Row] {
        let (sql, binds) = statement.rendered(numbered: true)
        if let transaction = Self.currentTransaction, transaction.store === self {
            return try await transaction.run(sql, binds, preparedShape: statement.preparedShape)
        }
        let maxRows = options.maxRowsPerStatement
        let logger = self.logger
        let prepared = statement.preparedShape.map { (statements: self.prepared, shape: $0) }
        return try await withConnection { connection in
            try await Self.run(sql, binds, prepared: prepared, on: connection, maxRows: maxRows, logger: logger)
        }
    }

    public func transaction<T: Sendable>(_ body: @escaping @Sendable (any Database) async throws -> T) async throws -> T {
        if let transaction = Self.currentTransaction, transaction.store === self {
            return try await body(transaction)  // already inside one: join it
        }
        return try await withConnection { connection in
            let transaction = Transaction(store: self, connection: connection)
            _ = try await transaction.run("BEGIN", [])
            do {
                let result = try await Self.$currentTransaction.withValue(transaction) { try await body(transaction) }
                _ = try await transaction.run("COMMIT", [])
                return result
            } catch {
                _ = try? await transaction.run("ROLLBACK", [])
                throw error
            }
        }
    }

    public func close() async {
        await listener?.stop()
        runner.cancel()
    }

    /// `body` with a connection of the pool; fails as unavailable when none can be had within
    /// `acquireTimeout` (the database is down, or every connection is busy that long). The pool
    /// keeps trying to connect while the database is down and a request waiting for it is not
    /// always let go at once, so the caller does not wait for it: it is answered when the deadline
    /// passes, and `body` never runs once the caller has been answered.
    func withConnection<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        let race = AcquireRace<T>(body: body)
        let id = nextRaceID.add(1, ordering: .relaxed).newValue
        running.withLock { $0[id] = race }
        defer { _ = running.withLock { $0.removeValue(forKey: id) } }
        let started = ContinuousClock.now
        depth.record(waiting.add(1, ordering: .relaxed).newValue)
        let counted = Flag()
        let client = self.client
        let work = Task {
            do {
                // The caller is answered as soon as the body is done, not once the pool has taken the
                // connection back (which waits on a connection the database has just closed).
                try await client.withConnection { connection in
                    // The body is run (and let go of) inside `run` before the caller is answered:
                    // a transaction's body must not outlive the call that lent it.
                    guard let result = await self.run(race, on: connection, waitingSince: started, counted: counted) else { throw CancellationError() }
                    race.finish(result)
                }
            } catch {
                race.finish(.failure(Self.storeError(error, sql: "")))
            }
            self.stoppedWaiting(counted, after: nil)
        }
        let timeout = seemsDown.load(ordering: .relaxed) ? options.downAcquireTimeout : options.acquireTimeout
        let unavailable = StoreError(
            kind: .unavailable,
            message: "no database connection within \(timeout) (PostgreSQL at \(location) is unreachable or every connection is busy)",
            sql: "")
        let timer = Task {
            try await Task.sleep(for: timeout)
            if race.giveUp(unavailable) {
                self.seemsDown.store(true, ordering: .relaxed)
                work.cancel()
                return
            }
            // The statement is running. If the database is found gone meanwhile, a statement on a
            // connection it dropped may never end: its caller is let go within a second or two.
            var seenDown = 0
            while true {
                try await Task.sleep(for: .seconds(1))
                seenDown = self.seemsDown.load(ordering: .relaxed) ? seenDown + 1 : 0
                if seenDown >= 2 {
                    race.abandon(StoreError(kind: .unavailable, message: "the connection to PostgreSQL at \(self.location) was lost", sql: ""))
                    work.cancel()
                    return
                }
            }
        }
        defer { timer.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                race.start(continuation)
            }
        } onCancel: {
            // The caller is let go even if its statement is running: a statement on a connection
            // the database dropped may never end by itself.
            race.abandon(CancellationError())
            work.cancel()
        }
    }

    /// The database closed a connection of this process (it is shutting down or restarting):
    /// statements running on the others will fail or never end, so their callers are answered
    /// now as unavailable, and the next statements wait only briefly for a new connection.
    func connectionLost() {
        seemsDown.store(true, ordering: .relaxed)
        let races = running.withLock { Array($0.values) }
        let error = StoreError(kind: .unavailable, message: "the connection to PostgreSQL at \(location) was lost", sql: "")
        for race in races { race.abandon(error) }
        for follower in followers.withLock({ $0 }) { follower.store?.connectionLost() }
    }

    /// Runs the caller's body on the connection just acquired; nil when the caller was already answered.
    private func run<T: Sendable>(_ race: AcquireRace<T>, on connection: PostgresConnection, waitingSince started: ContinuousClock.Instant, counted: Flag)
        async -> Result<T, any Error>?
    {
        guard let body = race.claim() else { return nil }
        stoppedWaiting(counted, after: ContinuousClock.now - started)
        do {
            // A caller that goes away (cancelled, past its deadline) stops its statement on the
            // server, so abandoned statements do not hold connections until `statement_timeout`.
            let value = try await statements.run(on: connection, body)
            // A statement that ran to its end: the database is there.
            if seemsDown.load(ordering: .relaxed) { seemsDown.store(false, ordering: .relaxed) }
            return .success(value)
        } catch {
            return .failure(Self.storeError(error, sql: ""))
        }
    }

    /// Whichever comes first of a connection and the deadline (or the caller's cancellation)
    /// answers the caller, once.
    // Unchecked: every mutable field is read and written under `lock` only.
    final class AcquireRace<T: Sendable>: Abandonable, @unchecked Sendable {
        private let lock = NSLock()
        private var body: (@Sendable (PostgresConnection) async throws -> T)?
        private var continuation: CheckedContinuation<T, any Error>?
        /// An outcome that came before the caller started waiting.
        private var early: Result<T, any Error>?
        private var acquired = false
        private var answered = false

        init(body: @escaping @Sendable (PostgresConnection) async throws -> T) {
            self.body = body
        }

        func start(_ continuation: CheckedContinuation<T, any Error>) {
            lock.lock()
            if let early {
                lock.unlock()
                continuation.resume(with: early)
                return
            }
            self.continuation = continuation
            lock.unlock()
        }

        /// The body, for the connection just acquired; nil when the caller was already answered.
        func claim() -> (@Sendable (PostgresConnection) async throws -> T)? {
            lock.lock()
            defer { lock.unlock() }
            guard !answered else { return nil }
            acquired = true
            defer { body = nil }
            return body
        }

        /// Answers the caller with `error` unless a connection was acquired; whether it did.
        func giveUp(_ error: any Error) -> Bool {
            lock.lock()
            guard !acquired, !answered else {
                lock.unlock()
                return false
            }
            body = nil
            lock.unlock()
            answer(.failure(error))
            return true
        }

        func finish(_ result: Result<T, any Error>) {
            answer(result)
        }

        /// Answers the caller with `error` whether or not its statement is running.
        func abandon(_ error: any Error) {
            answer(.failure(error))
        }

        private func answer(_ result: Result<T, any Error>) {
            lock.lock()
            guard !answered else {
                lock.unlock()
                return
            }
            answered = true
            body = nil
            let continuation = self.continuation
            self.continuation = nil
            if continuation == nil { early = result }
            lock.unlock()
            continuation?.resume(with: result)
        }
    }

    /// A statement stopped waiting for a connection: it got one after `wait`, or gave up (nil).
    /// Counted once, whichever of the connection and the deadline comes first.
    private func stoppedWaiting(_ counted: Flag, after wait: Duration?) {
        guard !counted.value.exchange(true, ordering: .acquiringAndReleasing) else { return }
        depth.record(waiting.add(-1, ordering: .relaxed).newValue)
        if let wait {
            let (seconds, attoseconds) = wait.components
            self.wait.recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        }
    }

    protocol Abandonable: AnyObject, Sendable {
        func abandon(_ error: any Error)
    }

    final class Flag: Sendable {
        let value = Atomic<Bool>(false)
    }

    /// The transaction the current task runs in, so every statement of the task joins it.
    @TaskLocal static var currentTransaction: Transaction?

    /// One connection, held by one task from BEGIN to COMMIT or ROLLBACK.
    final class Transaction: Database, Sendable {
        let store: PostgresStore
        let connection: PostgresConnection
        var flavor: SQLFlavor { .postgres }
        var logger: Logger { store.logger }
        var changes: ChangeSignal { store.changes }

        init(store: PostgresStore, connection: PostgresConnection) {
            self.store = store
            self.connection = connection
        }

        func query(_ statement: SQLFragment) async throws -> [Row] {
            let (sql, binds) = statement.rendered(numbered: true)
            return try await run(sql, binds, preparedShape: statement.preparedShape)
        }

        func run(_ sql: String, _ binds: [SQLValue], preparedShape: String? = nil) async throws -> [Row] {
            do {
                return try await PostgresStore.run(
                    sql, binds, prepared: preparedShape.map { (store.prepared, $0) }, on: connection, maxRows: store.options.maxRowsPerStatement,
                    logger: store.logger)
            } catch {
                throw PostgresStore.storeError(error, sql: sql)
            }
        }

        func transaction<T: Sendable>(_ body: @escaping @Sendable (any Database) async throws -> T) async throws -> T {
            try await body(self)
        }

        func close() async {}
    }

    // MARK: Statements

    /// Runs `sql` with its values bound; `prepared` (when the statement is one to prepare, with its
    /// shape) runs it as a statement prepared once on `connection` and by name after.
    static func run(
        _ sql: String, _ binds: [SQLValue], prepared: (statements: PreparedStatements, shape: String)? = nil, on connection: PostgresConnection, maxRows: Int,
        logger: Logger
    ) async throws -> [Row] {
        var bindings = PostgresBindings(capacity: binds.count)
        for value in binds {
            switch value {
            case .null: bindings.appendNull()
            case .int(let i): bindings.append(i)
            case .double(let d): bindings.append(d)
            case .bool(let b): bindings.append(b)
            case .text(let s): bindings.append(UntypedText(s))
            }
        }
        // The types the unnamed statement would be parsed with, which a prepared one keeps.
        let types = prepared == nil ? [] : binds.map(parameterType)
        guard let prepared, let (name, ranBefore) = prepared.statements.name(sql: sql, types: types, shape: prepared.shape, on: connection) else {
            do {
                let stream = try await connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger)
                return try await rows(of: stream, sql: sql, maxRows: maxRows)
            } catch {
                throw storeError(error, sql: sql)
            }
        }
        do {
            let stream = try await RuntimePreparedStatement.$text.withValue(.init(name: name, sql: sql, types: types)) {
                try await connection.execute(RuntimePreparedStatement(bindings: bindings), logger: logger)
            }
            let rows = try await rows(of: stream, sql: sql, maxRows: maxRows)
            if !ranBefore { prepared.statements.ran(name, on: connection.id) }
            return rows
        } catch {
            prepared.statements.failed(name, ranBefore: ranBefore, error: error, on: connection.id)
            throw storeError(error, sql: sql)
        }
    }

    /// The type a value is bound with: its own for numbers and booleans, none for text and NULL
    /// (PostgreSQL infers it from where the value goes).
    static func parameterType(_ value: SQLValue) -> PostgresDataType {
        switch value {
        case .null, .text: .null
        case .int: Int64.psqlType
        case .double: Double.psqlType
        case .bool: Bool.psqlType
        }
    }

    /// The rows of `stream`, at most `maxRows`; the driver's errors as it threw them.
    static func rows<Rows: AsyncSequence>(of stream: Rows, sql: String, maxRows: Int) async throws -> [Row] where Rows.Element == PostgresRow {
        var rows: [Row] = []
        var columns: [String]?
        for try await row in stream {
            let names = columns ?? row.map(\.columnName)
            columns = names
            guard rows.count < maxRows else {
                throw StoreError(kind: .tooLarge, message: "the statement returned more than \(maxRows) rows", sql: sql)
            }
            var values: [SQLValue] = []
            values.reserveCapacity(names.count)
            for cell in row { values.append(value(cell)) }
            rows.append(Row(columns: names, values: values))
        }
        return rows
    }

    /// A cell as a plain value, as SQLite would give it back: integers, numbers, booleans and
    /// text as they are; dates as `YYYY-MM-DD`, times as `YYYY-MM-DD HH:MM:SS` (UTC); JSON as its
    /// text; anything else as its text form. A whole NUMERIC is an integer unless
    /// `numericAsDouble` (datasources give every NUMERIC as a number).
    public static func value(_ cell: PostgresCell, numericAsDouble: Bool = false) -> SQLValue {
        guard cell.bytes != nil else { return .null }
        switch cell.dataType {
        case .int2, .int4, .int8, .oid:
            return (try? cell.decode(Int64.self)).map(SQLValue.int) ?? .null
        case .float4, .float8:
            return (try? cell.decode(Double.self)).map(SQLValue.double) ?? .null
        case .numeric:
            guard let decimal = try? cell.decode(Decimal.self) else { return .null }
            let text = "\(decimal)"
            if !numericAsDouble, let integer = Int64(text) { return .int(integer) }
            return Double(text).map(SQLValue.double) ?? .text(text)
        case .bool:
            return (try? cell.decode(Bool.self)).map(SQLValue.bool) ?? .null
        case .date, .timestamp, .timestamptz:
            guard let date = try? cell.decode(Date.self) else { return .null }
            return .text(UTCText.format(date, dateOnly: cell.dataType == .date))
        case .uuid:
            return (try? cell.decode(UUID.self)).map { .text($0.uuidString.lowercased()) } ?? .null
        case .jsonb:
            // Binary JSONB is a version byte, then the JSON text.
            guard var bytes = cell.bytes, bytes.readInteger(as: UInt8.self) == 1 else { return .null }
            return .text(bytes.readString(length: bytes.readableBytes) ?? "")
        default:
            if let text = try? cell.decode(String.self) { return .text(text) }
            return .text("(a value of type \(cell.dataType))")
        }
    }

    /// A driver or server error in the store's terms: the kind from PostgreSQL's SQLSTATE, not
    /// from its message text.
    static func storeError(_ error: any Error, sql: String) -> any Error {
        if error is StoreError || error is CancellationError { return error }
        guard let error = error as? PSQLError else { return error }
        let message = error.serverInfo?[.message] ?? "\(error.code)"
        guard let state = error.serverInfo?[.sqlState] else {
            switch error.code {
            case .queryCancelled: return CancellationError()
            case .tooManyParameters: return StoreError(kind: .tooComplex, message: "too many bound values in one statement", sql: sql)
            default:
                return StoreError(kind: .unavailable, message: "the connection to PostgreSQL failed (\(error.code))", sql: sql)
            }
        }
        let detail = error.serverInfo?[.detail].map { message + " (" + $0 + ")" } ?? message
        // A unique violation names its columns only in the detail: `Key ("Title")=(...) already exists.`
        let keyColumn = error.serverInfo?[.detail].flatMap { detail -> String? in
            guard detail.hasPrefix("Key ("), let close = detail.firstIndex(of: ")") else { return nil }
            let columns = detail[detail.index(detail.startIndex, offsetBy: 5)..<close]
            return columns.split(separator: ",").first.map { String($0.trimmingSpaces()).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
        }
        switch state {
        case "23505": return StoreError(kind: .constraint, message: detail, sql: sql, constraint: .unique, column: keyColumn)
        case "23502": return StoreError(kind: .constraint, message: detail, sql: sql, constraint: .notNull, column: error.serverInfo?[.columnName])
        case "23503": return StoreError(kind: .constraint, message: detail, sql: sql, constraint: .foreignKey)
        case "23514": return StoreError(kind: .constraint, message: detail, sql: sql, constraint: .check)
        case let s where s.hasPrefix("23"): return StoreError(kind: .constraint, message: detail, sql: sql, constraint: .other)
        case "40001", "40P01", "55P03": return StoreError(kind: .busy, message: message, sql: sql)
        case "57014": return StoreError(kind: .timeout, message: "the statement ran past its time limit", sql: sql)
        case "54000", "54001", "54011", "54023": return StoreError(kind: .tooComplex, message: message, sql: sql)
        case "25006": return StoreError(kind: .readOnly, message: message, sql: sql)
        case let s where s.hasPrefix("08") || s.hasPrefix("57P") || s.hasPrefix("53"):
            return StoreError(kind: .unavailable, message: message, sql: sql)
        default: return StoreError(kind: .other, message: message + " (SQLSTATE \(state))", sql: sql)
        }
    }
}

/// Text whose type PostgreSQL infers from where it is used, as SQLite takes any value anywhere:
/// the same bound string fills a `TEXT`, `DATE`, `TIMESTAMP`, `NUMERIC` or `JSONB` column.
struct UntypedText: PostgresDynamicTypeEncodable {
    let text: String

    init(_ text: String) { self.text = text }

    var psqlType: PostgresDataType { PostgresDataType(0) }
    var psqlFormat: PostgresFormat { .text }

    func encode<JSONEncoder: PostgresJSONEncoder>(into byteBuffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        byteBuffer.writeString(text)
    }
}

/// The statements a store runs prepared (`SQLFragment.preparedShape`), by connection.
/// PostgresNIO keeps every statement a connection prepared, and a failed preparation for its name,
/// for as long as the connection lives; so a connection holds at most `perConnection` of them
/// (past that a statement runs unprepared there), and after a failure that may have been the
/// preparation's, or that says the table changed since, every name on that connection changes
/// (its salt), so nothing runs again under a name that failed that way.
final class PreparedStatements: Sendable {
    /// Statements one connection prepares at most.
    static let perConnection = 256

    private struct Held {
        var salt: Int
        /// Named on this connection, and of those, run there at least once.
        var named: Set<String> = []
        var ran: Set<String> = []
    }

    /// By open connection: a record goes when its connection closes.
    private let held = Mutex<[PostgresConnection.ID: Held]>([:])
    private let salts = Atomic<Int>(0)

    /// What to run `sql` as on `connection`: a name, and whether it ran there before; nil when
    /// the connection holds all it may. A name is a digest of the text, the parameter types and
    /// the shape, since PostgreSQL fixes a statement's parameter types and result when it
    /// prepares it (and tells names apart by their first 63 bytes only).
    func name(sql: String, types: [PostgresDataType], shape: String, on connection: PostgresConnection) -> (name: String, ran: Bool)? {
        var digest = SHA256()
        var head = ""
        for type in types { head += "\(type.rawValue)," }
        head += "|" + shape + "|"
        digest.update(data: Array(head.utf8))
        digest.update(data: Array(sql.utf8))
        let text = Hex.encode(digest.finalize().prefix(16))
        let id = connection.id
        let (named, isNew) = held.withLock { held -> ((name: String, ran: Bool)?, Bool) in
            let isNew = held[id] == nil
            var record = held[id] ?? Held(salt: salts.add(1, ordering: .relaxed).newValue)
            defer { held[id] = record }
            let name = "portico_\(record.salt)_" + text
            if record.ran.contains(name) { return ((name, true), isNew) }
            guard record.named.count < Self.perConnection || record.named.contains(name) else { return (nil, isNew) }
            record.named.insert(name)
            return ((name, false), isNew)
        }
        if isNew { connection.closeFuture.whenComplete { [weak self] _ in _ = self?.held.withLock { $0.removeValue(forKey: id) } } }
        return named
    }

    func ran(_ name: String, on connection: PostgresConnection.ID) {
        held.withLock { _ = $0[connection]?.ran.insert(name) }
    }

    /// After `name` failed on `connection`: its names change when the failure may have been its
    /// preparation's (it never ran there, and the failure is not one only running it raises: bad
    /// data, a constraint, a conflict), when the table changed since it was prepared (0A000, or a
    /// name or type that no longer fits: class 42), or when the server no longer has it (26000).
    func failed(_ name: String, ranBefore: Bool, error: any Error, on connection: PostgresConnection.ID) {
        let state = (error as? PSQLError)?.serverInfo?[.sqlState] ?? ""
        let changed = state == "0A000" || state == "26000" || state.hasPrefix("42")
        let whileRunning = state.hasPrefix("22") || state.hasPrefix("23") || state.hasPrefix("40")
        guard changed || !ranBefore && !whileRunning else { return }
        held.withLock { $0[connection]?.salt = salts.add(1, ordering: .relaxed).newValue }
    }
}

/// A statement built at run time, run as a prepared statement. PostgresNIO takes a prepared
/// statement's name, text and parameter types from its type (static properties, read by
/// `PostgresConnection.execute` before it returns, in the calling task), so this one reads them
/// from the task that runs it.
struct RuntimePreparedStatement: PostgresPreparedStatement {
    struct Text: Sendable {
        var name = ""
        var sql = ""
        var types: [PostgresDataType] = []
    }

    @TaskLocal static var text = Text()

    static var name: String {
        precondition(!text.name.isEmpty, "a runtime prepared statement is run inside RuntimePreparedStatement.$text.withValue")
        return text.name
    }
    static var sql: String { text.sql }
    static var bindingDataTypes: [PostgresDataType] { text.types }

    let bindings: PostgresBindings

    func makeBindings() -> PostgresBindings { bindings }
    func decodeRow(_ row: PostgresRow) -> PostgresRow { row }
}

import Foundation
public import Logging
import Metrics
import NIOCore
import PorticoJSON
import PostgresNIO
import Synchronization

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
    private let runner: Task<Void, Never>
    /// Statements waiting for a connection (`portico_db_queue_depth{pool="postgres"}`), and how
    /// long they waited (`portico_db_queue_wait_seconds`).
    private let waiting = Atomic<Int>(0)
    private let depth = Gauge(label: "portico_db_queue_depth", dimensions: [("pool", "postgres")])
    private let wait = Metrics.Timer(label: "portico_db_queue_wait_seconds", dimensions: [("pool", "postgres")], preferredDisplayUnit: .seconds)
    private let listener: PostgresChangeListener

    public struct Options: Sendable {
        /// Connections this process opens at most (one of them listens for changes).
        public var poolSize = 12
        /// How long opening a connection may take.
        public var connectTimeout: Duration = .seconds(5)
        /// How long a statement may wait for a free connection (or for the database to come back)
        /// before it fails as unavailable.
        public var acquireTimeout: Duration = .seconds(5)
        /// The longest one statement may run (PostgreSQL's `statement_timeout`).
        public var statementTimeout: Duration = .seconds(30)
        /// Rows one statement may return; a backstop behind the callers' own limits.
        public var maxRowsPerStatement = 200_000

        public init() {}
    }

    /// The channel replicas announce changes on.
    static let channel = "portico_changes"

    public init(url: String, options: Options = Options(), logger: Logger) throws {
        var configuration: PostgresClient.Configuration
        do {
            configuration = try PostgresURL.configuration(url, what: "--database-url")
        } catch {
            throw StoreError(kind: .unavailable, message: error.description, sql: "")
        }
        configuration.options.maximumConnections = max(2, options.poolSize)
        configuration.options.connectTimeout = options.connectTimeout
        configuration.options.additionalStartupParameters = [
            ("application_name", "portico"),
            ("statement_timeout", "\(Self.milliseconds(options.statementTimeout))"),
            // Portico's tables are found by their plain names, and times are read as UTC.
            ("TimeZone", "UTC"),
        ]
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.client = client
        self.logger = logger
        self.options = options
        self.url = url
        location = PostgresURL.redacted(url)
        runner = Task { await client.run() }
        let listener = PostgresChangeListener(client: client, channel: Self.channel, logger: logger)
        self.listener = listener
        changes = ChangeSignal(path: nil, remote: listener.heard, publish: { listener.publish() })
        listener.start()
    }

    /// Whether this process hears other replicas' changes as they happen (else caches re-read
    /// stored state every second until it does again).
    public var isListeningForChanges: Bool { listener.listening.load(ordering: .acquiring) }

    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }

    // MARK: Database

    public func query(_ statement: SQLFragment) async throws -> [Row] {
        let (sql, binds) = statement.rendered(numbered: true)
        if let transaction = Self.currentTransaction, transaction.store === self {
            return try await transaction.run(sql, binds)
        }
        let maxRows = options.maxRowsPerStatement
        let logger = self.logger
        return try await withConnection { connection in
            try await Self.run(sql, binds, on: connection, maxRows: maxRows, logger: logger)
        }
    }

    public func transaction<T: Sendable>(_ body: @Sendable (any Database) async throws -> T) async throws -> T {
        if let transaction = Self.currentTransaction, transaction.store === self {
            return try await body(transaction)  // already inside one: join it
        }
        return try await withoutActuallyEscaping(body) { body in
            let box = UncheckedBody(body: body)
            return try await withConnection { connection in
                let transaction = Transaction(store: self, connection: connection)
                _ = try await transaction.run("BEGIN", [])
                do {
                    let result = try await Self.$currentTransaction.withValue(transaction) { try await box.body(transaction) }
                    _ = try await transaction.run("COMMIT", [])
                    return result
                } catch {
                    _ = try? await transaction.run("ROLLBACK", [])
                    throw error
                }
            }
        }
    }

    public func close() async {
        await listener.stop()
        runner.cancel()
    }

    /// `body` with a connection of the pool; fails as unavailable when none can be had within
    /// `acquireTimeout` (the database is down, or every connection is busy that long).
    func withConnection<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        let acquired = Flag()
        let counted = Flag()
        let started = ContinuousClock.now
        depth.record(waiting.add(1, ordering: .relaxed).newValue)
        return try await withThrowingTaskGroup(of: Outcome<T>.self) { group in
            group.addTask {
                do {
                    return .done(
                        try await self.client.withConnection { connection in
                            acquired.value.store(true, ordering: .releasing)
                            self.stoppedWaiting(counted, after: ContinuousClock.now - started)
                            return try await body(connection)
                        })
                } catch {
                    self.stoppedWaiting(counted, after: nil)
                    throw Self.storeError(error, sql: "")
                }
            }
            group.addTask {
                try await Task.sleep(for: self.options.acquireTimeout)
                return .timer
            }
            defer { group.cancelAll() }
            while let outcome = try await group.next() {
                switch outcome {
                case .done(let value): return value
                case .timer where acquired.value.load(ordering: .acquiring): continue
                case .timer:
                    self.stoppedWaiting(counted, after: nil)
                    throw StoreError(
                        kind: .unavailable,
                        message: "no database connection within \(options.acquireTimeout.components.seconds) s (PostgreSQL at \(location) is unreachable or every connection is busy)",
                        sql: "")
                }
            }
            throw CancellationError()
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

    final class Flag: Sendable {
        let value = Atomic<Bool>(false)
    }

    enum Outcome<T: Sendable>: Sendable {
        case done(T)
        case timer
    }

    /// The transaction body, which runs before `transaction` returns, carried into the pool's closure.
    struct UncheckedBody<T>: @unchecked Sendable {
        let body: (any Database) async throws -> T
    }

    /// The transaction the current task runs in, so every statement of the task joins it.
    @TaskLocal static var currentTransaction: Transaction?

    /// One connection, held by one task from BEGIN to COMMIT or ROLLBACK.
    final class Transaction: Database, @unchecked Sendable {
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
            return try await run(sql, binds)
        }

        func run(_ sql: String, _ binds: [SQLValue]) async throws -> [Row] {
            do {
                return try await PostgresStore.run(sql, binds, on: connection, maxRows: store.options.maxRowsPerStatement, logger: store.logger)
            } catch {
                throw PostgresStore.storeError(error, sql: sql)
            }
        }

        func transaction<T: Sendable>(_ body: @Sendable (any Database) async throws -> T) async throws -> T {
            try await body(self)
        }

        func close() async {}
    }

    // MARK: Statements

    static func run(_ sql: String, _ binds: [SQLValue], on connection: PostgresConnection, maxRows: Int, logger: Logger) async throws -> [Row] {
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
        let stream: PostgresRowSequence
        do {
            stream = try await connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger)
        } catch {
            throw storeError(error, sql: sql)
        }
        var rows: [Row] = []
        var columns: [String]?
        do {
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
        } catch {
            throw storeError(error, sql: sql)
        }
        return rows
    }

    /// A cell as a plain value, as SQLite would give it back: integers, numbers, booleans and
    /// text as they are; dates as `YYYY-MM-DD`, times as `YYYY-MM-DD HH:MM:SS`; JSON as its text.
    static func value(_ cell: PostgresCell) -> SQLValue {
        guard cell.bytes != nil else { return .null }
        switch cell.dataType {
        case .int2, .int4, .int8, .oid:
            return (try? cell.decode(Int64.self)).map(SQLValue.int) ?? .null
        case .float4, .float8:
            return (try? cell.decode(Double.self)).map(SQLValue.double) ?? .null
        case .numeric:
            guard let decimal = try? cell.decode(Decimal.self) else { return .null }
            let text = "\(decimal)"
            if let integer = Int64(text) { return .int(integer) }
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
            if var bytes = cell.bytes, let text = bytes.readString(length: bytes.readableBytes) { return .text(text) }
            return .null
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

/// Dates and times as Portico stores them, in UTC.
enum UTCText {
    static func format(_ date: Date, dateOnly: Bool) -> String {
        var seconds = time_t(floor(date.timeIntervalSince1970))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ n: Int32, _ width: Int) -> String {
            let s = String(n)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        let day = "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))"
        return dateOnly ? day : "\(day) \(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2))"
    }
}

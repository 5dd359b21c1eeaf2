import CMariaDB
import Foundation
public import PorticoStore
import Synchronization

/// Where a MySQL or MariaDB datasource is: `mysql://user:password@host:port/database`.
public struct MySQLURL: Sendable, Equatable {
    public var host: String
    public var port: UInt32
    public var user: String
    public var password: String
    public var database: String

    public init(_ text: String) throws(DatasourceError) {
        guard let url = URLComponents(string: text), ["mysql", "mariadb"].contains(url.scheme ?? ""), let host = url.host, !host.isEmpty else {
            throw DatasourceError("a MySQL datasource needs a URL like mysql://user:password@host:3306/database")
        }
        let database = url.path.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        guard !database.isEmpty, !database.contains("/") else {
            throw DatasourceError("the MySQL URL must name its database, as in mysql://user:password@host:3306/database")
        }
        guard let user = url.user, !user.isEmpty else { throw DatasourceError("the MySQL URL must name its user, as in mysql://user:password@host/database") }
        self.host = host
        port = UInt32(url.port ?? 3306)
        self.user = user.removingPercentEncoding ?? user
        password = (url.password ?? "").removingPercentEncoding ?? (url.password ?? "")
        self.database = database.removingPercentEncoding ?? database
    }
}

/// One MariaDB Connector/C connection. Connector/C blocks, so every call runs on the
/// connection's own serial queue, never on a Swift executor or an event loop; the pool hands a
/// connection to one query at a time. The handle sits in a mutex all the same (never contended:
/// the queue already serialises its calls), so the compiler, not a comment, vouches for sharing it.
final class MySQLConnection: Sendable {
    private struct Handle {
        let pointer: UnsafeMutablePointer<MYSQL>
        /// Set once a call failed in a way that leaves the connection unusable; the pool drops it.
        var broken = false
    }

    private let handle: Mutex<Handle>
    private let queue: DispatchQueue
    /// The server's id for this connection, which `KILL QUERY` names.
    let threadID: UInt
    let isMariaDB: Bool
    var broken: Bool { handle.withLock { $0.broken } }

    /// Connector/C's global state, set up once before the first connection (not thread-safe itself).
    private static let library: Void = { _ = mysql_server_init(0, nil, nil) }()

    private init(handle pointer: sending UnsafeMutablePointer<MYSQL>, queue: DispatchQueue) {
        threadID = UInt(mysql_thread_id(pointer))
        isMariaDB = String(cString: mysql_get_server_info(pointer)).contains("MariaDB")
        handle = Mutex(Handle(pointer: pointer))
        self.queue = queue
    }

    deinit {
        // No call is queued any more: each holds the connection until it has run.
        handle.withLock { mysql_close($0.pointer) }
    }

    /// Connects (off the caller's thread) with time limits on connecting, reading and writing,
    /// utf8mb4, no `LOAD DATA LOCAL`, no multi-statements, and packets no larger than `maxPacket`
    /// bytes, then makes the session read-only with known SQL modes.
    static func open(_ url: MySQLURL, readTimeout: UInt32, maxPacket: UInt) async throws -> MySQLConnection {
        _ = library
        let queue = DispatchQueue(label: "portico.mysql")
        return try await withCheckedThrowingContinuation { continuation in
            queue.async {
                guard let handle = mysql_init(nil) else {
                    continuation.resume(throwing: DatasourceError("the MySQL client could not start (out of memory)"))
                    return
                }
                var connectTimeout: UInt32 = 5
                var readTimeout = readTimeout
                var writeTimeout = readTimeout
                var noLocalFiles: UInt32 = 0
                var packet = maxPacket
                mysql_options(handle, MYSQL_OPT_CONNECT_TIMEOUT, &connectTimeout)
                mysql_options(handle, MYSQL_OPT_READ_TIMEOUT, &readTimeout)
                mysql_options(handle, MYSQL_OPT_WRITE_TIMEOUT, &writeTimeout)
                mysql_options(handle, MYSQL_OPT_LOCAL_INFILE, &noLocalFiles)
                mysql_options(handle, MYSQL_OPT_MAX_ALLOWED_PACKET, &packet)
                mysql_options(handle, MYSQL_SET_CHARSET_NAME, "utf8mb4")
                guard mysql_real_connect(handle, url.host, url.user, url.password, url.database, url.port, nil, 0) != nil else {
                    let message = String(cString: mysql_error(handle))
                    mysql_close(handle)
                    continuation.resume(throwing: DatasourceError("the MySQL datasource cannot be reached: \(message)"))
                    return
                }
                let connection = MySQLConnection(handle: handle, queue: queue)
                // The session reads only, whatever a statement says; its modes are the ones the guard reads SQL by
                // (backslash escapes in strings, "…" a string, || an OR): no ANSI_QUOTES, no NO_BACKSLASH_ESCAPES.
                let modes = "SET SESSION sql_mode = 'STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION', SESSION time_zone = '+00:00'"
                do {
                    _ = try connection.runHere("SET SESSION TRANSACTION READ ONLY", maxRows: 0, maxBytes: 0)
                    _ = try connection.runHere(modes, maxRows: 0, maxBytes: 0)
                    // A read-only transaction does not stop SELECT … INTO OUTFILE: the FILE privilege would let SQL
                    // write files on the database server, so a user that has it is not used at all.
                    let file = try connection.runHere(
                        """
                        SELECT COUNT(*) FROM information_schema.USER_PRIVILEGES WHERE PRIVILEGE_TYPE IN ('FILE', 'SUPER') AND GRANTEE = CONCAT("'",
                        SUBSTRING_INDEX(CURRENT_USER(), '@', 1), "'@'", SUBSTRING_INDEX(CURRENT_USER(), '@', -1), "'")
                        """, maxRows: 1, maxBytes: 1024)
                    if file.rows.first?.first != .int(0) {
                        throw DatasourceError(
                            "the MySQL user \(url.user) has the FILE (or SUPER) privilege, which lets SQL read and write files on the database server; "
                                + "give Portico a user with SELECT only (GRANT SELECT ON \(url.database).* TO …)")
                    }
                    continuation.resume(returning: connection)
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    /// Runs statements on the connection's queue; `body` gets the connection there.
    func perform<T: Sendable>(_ body: @escaping @Sendable (MySQLConnection) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try body(self) })
            }
        }
    }

    /// One statement, on the queue (from `perform`): at most `maxRows` rows and `maxBytes` of
    /// values are kept, the rest read and dropped (`sql_select_limit` bounds how many there are).
    func runHere(_ sql: String, maxRows: Int, maxBytes: Int) throws -> QueryRows {
        try handle.withLock { handle throws -> QueryRows in try Self.run(sql, on: &handle, maxRows: maxRows, maxBytes: maxBytes) }
    }

    private static func run(_ sql: String, on connection: inout Handle, maxRows: Int, maxBytes: Int) throws -> QueryRows {
        let handle = connection.pointer
        let bytes = Array(sql.utf8)
        let status = bytes.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: max(1, buffer.count)) { mysql_real_query(handle, $0, UInt(buffer.count)) }
        }
        guard status == 0 else { throw error(&connection) }
        guard let result = mysql_use_result(handle) else {
            if mysql_field_count(handle) == 0 { return QueryRows(columns: [], rows: [], truncated: false) }
            throw error(&connection)
        }
        defer { mysql_free_result(result) }
        let count = Int(mysql_num_fields(result))
        let fields = mysql_fetch_fields(result)!
        var columns: [String] = []
        var types: [enum_field_types] = []
        var binary: [Bool] = []
        for index in 0..<count {
            let field = fields[index]
            columns.append(String(cString: field.name))
            types.append(field.type)
            binary.append(field.charsetnr == 63)
        }
        var rows: [[SQLValue]] = []
        var used = 0
        var truncated = false
        while let row = mysql_fetch_row(result) {
            guard rows.count < maxRows, used < maxBytes else {
                truncated = true
                continue  // read to the end: the connection must be drained before its next statement
            }
            let lengths = mysql_fetch_lengths(result)!
            var values: [SQLValue] = []
            values.reserveCapacity(count)
            for index in 0..<count {
                guard let pointer = row[index] else {
                    values.append(.null)
                    continue
                }
                let length = Int(lengths[index])
                let text = String(decoding: UnsafeRawBufferPointer(start: pointer, count: length), as: UTF8.self)
                values.append(Self.value(text, type: types[index], binary: binary[index]))
            }
            used += values.reduce(0) { $0 + $1.byteCount }
            rows.append(values)
        }
        if mysql_errno(handle) != 0 { throw error(&connection) }
        return QueryRows(columns: columns, rows: rows, truncated: truncated)
    }

    /// A value as the text protocol sends it, typed by its column: whole numbers, decimals and
    /// floats as numbers, the rest as text.
    static func value(_ text: String, type: enum_field_types, binary: Bool) -> SQLValue {
        switch type {
        case MYSQL_TYPE_TINY, MYSQL_TYPE_SHORT, MYSQL_TYPE_LONG, MYSQL_TYPE_LONGLONG, MYSQL_TYPE_INT24, MYSQL_TYPE_YEAR:
            return Int64(text).map(SQLValue.int) ?? Double(text).map(SQLValue.double) ?? .text(text)
        case MYSQL_TYPE_FLOAT, MYSQL_TYPE_DOUBLE, MYSQL_TYPE_DECIMAL, MYSQL_TYPE_NEWDECIMAL:
            return Double(text).map(SQLValue.double) ?? .text(text)
        case MYSQL_TYPE_BIT:
            return .text(text.utf8.map { byte in String(repeating: "0", count: byte.leadingZeroBitCount) + (byte == 0 ? "" : String(byte, radix: 2)) }.joined())
        case MYSQL_TYPE_TINY_BLOB, MYSQL_TYPE_MEDIUM_BLOB, MYSQL_TYPE_LONG_BLOB, MYSQL_TYPE_BLOB, MYSQL_TYPE_GEOMETRY:
            // The server marks dates, times and JSON "binary" too; only a BLOB's (not a TEXT's) bytes are held back.
            return binary ? .text("<\(text.utf8.count) bytes>") : .text(text)
        default:
            return .text(text)
        }
    }

    /// The connection's last error as a Swift error; a lost connection marks it broken.
    private static func error(_ connection: inout Handle) -> any Error {
        let handle = connection.pointer
        let code = mysql_errno(handle)
        let message = String(cString: mysql_error(handle))
        // CR_SERVER_GONE_ERROR, CR_SERVER_LOST, CR_CONNECTION_ERROR, CR_CONN_HOST_ERROR: the connection is gone.
        if (2000..<3000).contains(code) { connection.broken = true }
        switch code {
        case 1792, 1207:  // ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION, ER_READ_ONLY_TRANSACTION
            return StoreError(kind: .notAuthorized, message: "the datasource is read-only here: \(message)", sql: "")
        case 1969, 3024:  // MariaDB's ER_STATEMENT_TIMEOUT, MySQL's ER_QUERY_TIMEOUT
            return StoreError(kind: .timeout, message: "the query ran past its time limit and was stopped; narrow it", sql: "")
        case 1317:  // ER_QUERY_INTERRUPTED (KILL QUERY)
            return StoreError(kind: .cancelled, message: "the query was stopped", sql: "")
        case 1142, 1143, 1044, 1045, 1227:  // no privilege on a table, column or database
            return StoreError(kind: .notAuthorized, message: message, sql: "")
        case 2006, 2013:
            return DatasourceError("the MySQL datasource closed the connection (\(message)); try again")
        default:
            return StoreError(kind: .other, message: message, sql: "")
        }
    }
}

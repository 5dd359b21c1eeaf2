import PorticoStore

/// Tool calls that answered with a task (the MCP tasks extension): one row each in the app's
/// own database, so `tasks/get`, `tasks/update` and `tasks/cancel` work at any replica. A row
/// names its owner (the credential's binding key) and keeps the call's final result or error
/// until it expires; expired rows are removed as new tasks are made.
public struct TaskRecords: Sendable {
    /// Where a task stands (the extension's statuses; Portico's tasks never ask for input).
    public enum Status: String, Sendable {
        case working
        case completed
        case failed
        case cancelled
    }

    /// One stored task. Times are milliseconds since 1970.
    public struct Record: Sendable, Equatable {
        public var id: String
        public var app: String
        public var owner: String
        public var tool: String
        public var status: Status
        public var statusMessage: String?
        /// The call's result (a `CallToolResult`, serialised) once completed.
        public var result: String?
        /// The JSON-RPC error (serialised) once failed.
        public var error: String?
        public var createdAt: Int64
        public var updatedAt: Int64
        public var expiresAt: Int64
        /// When the replica running the task last said it still runs it (`touch`): a task working
        /// whose replica fell silent is lost.
        public var aliveAt: Int64

        public init(
            id: String, app: String, owner: String, tool: String, status: Status = .working, statusMessage: String? = nil, result: String? = nil,
            error: String? = nil, createdAt: Int64, updatedAt: Int64, expiresAt: Int64, aliveAt: Int64
        ) {
            self.id = id
            self.app = app
            self.owner = owner
            self.tool = tool
            self.status = status
            self.statusMessage = statusMessage
            self.result = result
            self.error = error
            self.createdAt = createdAt
            self.updatedAt = updatedAt
            self.expiresAt = expiresAt
            self.aliveAt = aliveAt
        }
    }

    /// `CREATE TABLE IF NOT EXISTS` for the table, in any flavor.
    public static let create = [
        """
        CREATE TABLE IF NOT EXISTS portico_tasks (id TEXT PRIMARY KEY, app TEXT NOT NULL, owner TEXT NOT NULL, tool TEXT NOT NULL,
          status TEXT NOT NULL, status_message TEXT, result TEXT, error TEXT, created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL,
          expires_at BIGINT NOT NULL, alive_at BIGINT NOT NULL)
        """,
        "CREATE INDEX IF NOT EXISTS portico_tasks_expires ON portico_tasks (expires_at)",
    ]

    let databases: AppDatabases

    public init(databases: AppDatabases) {
        self.databases = databases
    }

    /// Stores a new task, after removing the app's expired ones.
    public func create(_ task: Record) async throws {
        let database = try await databases.database(app: task.app)
        var purge = SQLFragment("DELETE FROM portico_tasks WHERE expires_at < ")
        purge.append(bind: .int(task.createdAt))
        try await database.execute(purge)
        var insert = SQLFragment(
            "INSERT INTO portico_tasks (id, app, owner, tool, status, status_message, result, error, created_at, updated_at, expires_at, alive_at) VALUES (")
        let values: [SQLValue] = [
            .text(task.id), .text(task.app), .text(task.owner), .text(task.tool), .text(task.status.rawValue),
            task.statusMessage.map(SQLValue.text) ?? .null, task.result.map(SQLValue.text) ?? .null, task.error.map(SQLValue.text) ?? .null,
            .int(task.createdAt), .int(task.updatedAt), .int(task.expiresAt), .int(task.aliveAt),
        ]
        insert.append(joining: values.map(SQLFragment.bind), separator: ", ")
        insert.append(")")
        try await database.execute(insert)
    }

    /// The app's task `id`, expired or not; `nil` when there is none.
    public func find(app: String, id: String) async throws -> Record? {
        let database = try await databases.database(app: app)
        var q = SQLFragment("SELECT * FROM portico_tasks")
        q.append(Self.naming(app: app, id: id))
        return try await database.query(q).first.flatMap(Self.record)
    }

    /// Ends a task still working with `status` (and its result or error); a task that already
    /// ended (cancelled meanwhile) keeps its end. Returns whether this call ended it.
    @discardableResult
    public func finish(
        app: String, id: String, status: Status, message: String?, result: String? = nil, error: String? = nil, now: Int64
    ) async throws -> Bool {
        let database = try await databases.database(app: app)
        var q = SQLFragment("UPDATE portico_tasks SET status = ")
        q.append(bind: .text(status.rawValue))
        q.append(", status_message = ")
        q.append(bind: message.map(SQLValue.text) ?? .null)
        q.append(", result = ")
        q.append(bind: result.map(SQLValue.text) ?? .null)
        q.append(", error = ")
        q.append(bind: error.map(SQLValue.text) ?? .null)
        q.append(", updated_at = ")
        q.append(bind: .int(now))
        q.append(Self.naming(app: app, id: id))
        q.append(" AND status = 'working' RETURNING id")
        return try await !database.query(q).isEmpty
    }

    /// Notes that the task's replica still runs it.
    public func touch(app: String, id: String, now: Int64) async throws {
        let database = try await databases.database(app: app)
        var q = SQLFragment("UPDATE portico_tasks SET alive_at = ")
        q.append(bind: .int(now))
        q.append(Self.naming(app: app, id: id))
        q.append(" AND status = 'working'")
        try await database.execute(q)
    }

    /// ` WHERE` the app's task `id`.
    static func naming(app: String, id: String) -> SQLFragment {
        var q = SQLFragment(" WHERE id = ")
        q.append(bind: .text(id))
        q.append(" AND app = ")
        q.append(bind: .text(app))
        return q
    }

    static func record(_ row: Row) -> Record? {
        guard let id = row.string("id"), let app = row.string("app"), let owner = row.string("owner"), let tool = row.string("tool"),
            let status = row.string("status").flatMap(Status.init(rawValue:)), let createdAt = row.int("created_at"),
            let updatedAt = row.int("updated_at"), let expiresAt = row.int("expires_at"), let aliveAt = row.int("alive_at")
        else { return nil }
        return Record(
            id: id, app: app, owner: owner, tool: tool, status: status, statusMessage: row.string("status_message"), result: row.string("result"),
            error: row.string("error"), createdAt: createdAt, updatedAt: updatedAt, expiresAt: expiresAt, aliveAt: aliveAt)
    }
}

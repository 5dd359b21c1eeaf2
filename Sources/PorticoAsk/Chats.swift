import Foundation
public import PorticoAskEngine
import PorticoData
public import PorticoStore

/// One question of a chat and what became of it.
public struct ChatRecord: Sendable {
    public enum Outcome: String, Sendable {
        case answered, refused, failed
    }

    public let id: Int64
    public let question: String
    public let datasource: String?
    public let sql: String?
    public let engine: String?
    public let outcome: Outcome
    public let message: String?
    public let chart: String?
    /// The readings the asker chose for this question (`Table.Column` of a key).
    public var choices: [String] = []
}

/// Multi-turn question sessions (SQLBot's chats): each belongs to one user in one app; its
/// questions and their SQL feed the next question.
public struct ChatStore: Sendable {
    let database: any Database

    public init(database: any Database) { self.database = database }

    /// How many earlier questions of a chat are given to an engine.
    public static let historyLength = 6

    public func create(app: String, userID: Int64, datasource: String? = nil) async throws -> Int64 {
        var insert = SQLFragment("INSERT INTO portico_chats (app, user_id, datasource, created_at) VALUES (")
        insert.append(
            joining: [
                .bind(.text(app)), .bind(.int(userID)), .bind(datasource.map(SQLValue.text) ?? .null), .bind(.int(Int64(Date().timeIntervalSince1970))),
            ], separator: ", ")
        insert.append(") RETURNING id")
        guard let id = try await database.query(insert).first?.int("id") else { throw DatasourceError("the chat could not be created") }
        return id
    }

    /// The chat's datasource when it is `userID`'s chat in `app`; a chat of someone else, or of
    /// another app, is reported as missing (its existence is not revealed).
    public func owned(_ chatID: Int64, app: String, userID: Int64) async throws -> (exists: Bool, datasource: String?) {
        var q = SQLFragment("SELECT datasource FROM portico_chats WHERE id = ")
        q.append(bind: .int(chatID))
        q.append(" AND app = ")
        q.append(bind: .text(app))
        q.append(" AND user_id = ")
        q.append(bind: .int(userID))
        guard let row = try await database.query(q).first else { return (false, nil) }
        return (true, row.string("datasource"))
    }

    public func setDatasource(_ chatID: Int64, _ datasource: String) async throws {
        var q = SQLFragment("UPDATE portico_chats SET datasource = ")
        q.append(bind: .text(datasource))
        q.append(" WHERE id = ")
        q.append(bind: .int(chatID))
        try await database.execute(q)
    }

    /// The last `limit` questions of the chat, oldest first.
    public func history(_ chatID: Int64, limit: Int = historyLength) async throws -> [ChatRecord] {
        var q = SQLFragment("SELECT id, question, datasource, sql, engine, outcome, message, chart, choices FROM portico_chat_records WHERE chat_id = ")
        q.append(bind: .int(chatID))
        q.append(" ORDER BY id DESC LIMIT ")
        q.append(bind: .int(Int64(limit)))
        return try await database.query(q).reversed().map(Self.record)
    }

    /// One question of `userID`'s chat in `app`; `nil` for a record of another chat, user or app.
    public func record(_ recordID: Int64, chatID: Int64, app: String, userID: Int64) async throws -> ChatRecord? {
        var q = SQLFragment(
            "SELECT r.id, r.question, r.datasource, r.sql, r.engine, r.outcome, r.message, r.chart, r.choices FROM portico_chat_records r "
                + "JOIN portico_chats c ON c.id = r.chat_id WHERE r.id = ")
        q.append(bind: .int(recordID))
        q.append(" AND r.chat_id = ")
        q.append(bind: .int(chatID))
        q.append(" AND c.app = ")
        q.append(bind: .text(app))
        q.append(" AND c.user_id = ")
        q.append(bind: .int(userID))
        return try await database.query(q).first.map(Self.record)
    }

    static func record(_ row: Row) -> ChatRecord {
        ChatRecord(
            id: row.int("id") ?? 0, question: row.string("question") ?? "", datasource: row.string("datasource"), sql: row.string("sql"),
            engine: row.string("engine"), outcome: ChatRecord.Outcome(rawValue: row.string("outcome") ?? "") ?? .failed,
            message: row.string("message"), chart: row.string("chart"),
            choices: (row.string("choices") ?? "").split(separator: "\n").map(String.init))
    }

    /// Stores one question's outcome; returns its record id (SQLBot's `record_id`).
    public func append(
        _ chatID: Int64, question: String, datasource: String?, sql: String?, engine: String?, outcome: ChatRecord.Outcome, message: String?,
        chart: String?, choices: [String] = []
    ) async throws -> Int64 {
        var insert = SQLFragment(
            "INSERT INTO portico_chat_records (chat_id, question, datasource, sql, engine, outcome, message, chart, choices, created_at) VALUES (")
        let text = { (value: String?) in SQLFragment.bind(value.map(SQLValue.text) ?? .null) }
        insert.append(
            joining: [
                .bind(.int(chatID)), .bind(.text(question)), text(datasource), text(sql), text(engine), .bind(.text(outcome.rawValue)), text(message),
                text(chart), text(choices.isEmpty ? nil : choices.joined(separator: "\n")), .bind(.int(Int64(Date().timeIntervalSince1970))),
            ], separator: ", ")
        insert.append(") RETURNING id")
        return try await database.query(insert).first?.int("id") ?? 0
    }
}

extension ChatStore {
    /// Questions this user had answered before on the datasource, most like `question` first:
    /// the examples an engine is shown.
    public func examples(app: String, userID: Int64, datasource: String, like question: String, excludingChat chatID: Int64?, limit: Int = 3)
        async throws -> [EngineRequest.Turn]
    {
        var q = SQLFragment(
            "SELECT r.question, r.sql FROM portico_chat_records r JOIN portico_chats c ON c.id = r.chat_id WHERE r.outcome = 'answered' AND c.app = ")
        q.append(bind: .text(app))
        q.append(" AND c.user_id = ")
        q.append(bind: .int(userID))
        q.append(" AND r.datasource = ")
        q.append(bind: .text(datasource))
        if let chatID {
            q.append(" AND r.chat_id <> ")
            q.append(bind: .int(chatID))
        }
        q.append(" ORDER BY r.id DESC LIMIT 200")
        let words = Set(SchemaText.words(question))
        let scored = try await database.query(q).compactMap { row -> (Int, EngineRequest.Turn)? in
            guard let text = row.string("question"), let sql = row.string("sql") else { return nil }
            let overlap = Set(SchemaText.words(text)).intersection(words).count
            return overlap > 0 ? (overlap, EngineRequest.Turn(question: text, sql: sql)) : nil
        }
        var seen = Set<String>()
        return scored.sorted { $0.0 > $1.0 }.map(\.1).filter { seen.insert($0.question.lowercased()).inserted }.prefix(limit).map { $0 }
    }
}

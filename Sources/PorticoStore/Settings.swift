/// Small server-wide values kept in the database, so every replica sees the same ones.
public struct Settings: Sendable {
    let database: any Database

    public init(database: any Database) {
        self.database = database
    }

    public func value(_ key: String) async throws -> String? {
        var q = SQLFragment("SELECT value FROM portico_settings WHERE key = ")
        q.append(bind: .text(key))
        return try await database.query(q).first?.string("value")
    }

    /// Stores `value` under `key`, or removes the key when `value` is `nil`.
    public func set(_ key: String, _ value: String?) async throws {
        guard let value else {
            var delete = SQLFragment("DELETE FROM portico_settings WHERE key = ")
            delete.append(bind: .text(key))
            try await database.execute(delete)
            return
        }
        var upsert = SQLFragment("INSERT INTO portico_settings (key, value) VALUES (")
        upsert.append(joining: [.bind(.text(key)), .bind(.text(value))], separator: ", ")
        upsert.append(") ON CONFLICT (key) DO UPDATE SET value = excluded.value")
        try await database.execute(upsert)
    }

    /// Returns the stored value, or stores `make()` if there is none. Replicas racing to create
    /// the same value all end up with the first one written.
    public func valueOrCreate(_ key: String, _ make: () throws -> String) async throws -> String {
        if let existing = try await value(key) { return existing }
        var insert = SQLFragment("INSERT INTO portico_settings (key, value) VALUES (")
        insert.append(joining: [.bind(.text(key)), .bind(.text(try make()))], separator: ", ")
        insert.append(") ON CONFLICT (key) DO NOTHING")
        try await database.execute(insert)
        guard let stored = try await value(key) else { throw StoreError(kind: .other, message: "setting \(key) could not be stored", sql: "") }
        return stored
    }
}

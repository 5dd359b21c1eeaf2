import PorticoStore

/// How a collection's table changes on one database: SQLite rebuilds a table to change a column,
/// PostgreSQL alters it in place. `SchemaService` decides what changes; this says how.
protocol TableMigrator: Sendable {
    /// Gives `old`'s table the columns of `schema`: `renames` maps a new column name to the old
    /// one it was; columns neither kept nor renamed go with their data. Values are carried as
    /// they are (the caller converts them after).
    func change(from old: CollectionSchema, to schema: CollectionSchema, renames: [String: String], db: any Database) async throws
    /// Drops a collection's table, with what depends on it.
    func dropTable(_ table: String, db: any Database) async throws
}

extension SQLFlavor {
    var tableMigrator: any TableMigrator {
        switch self {
        case .sqlite: SQLiteTableMigrator()
        case .postgres: PostgresTableMigrator()
        }
    }
}

/// A new table filled from the old one, which then takes its name: the way SQLite changes a column.
struct SQLiteTableMigrator: TableMigrator {
    func change(from old: CollectionSchema, to schema: CollectionSchema, renames: [String: String], db: any Database) async throws {
        let q = SQLFragment.quote
        let oldColumns = Dictionary(old.columns.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        let temporary = "__portico_new_" + old.tableName
        var staged = schema
        staged.tableName = temporary
        let statements = DDL.createTable(staged, flavor: .sqlite)
        try await db.execute(statements[0])
        let kept = schema.columns.compactMap { column -> (String, String)? in
            let source = renames[column.name] ?? column.name
            return oldColumns[source] == nil ? nil : (column.name, source)
        }
        if !kept.isEmpty {
            try await db.execute(
                "INSERT INTO \(q(temporary)) (\(kept.map { q($0.0) }.joined(separator: ", "))) SELECT \(kept.map { q($0.1) }.joined(separator: ", ")) FROM \(q(old.tableName))"
            )
        }
        try await db.execute("DROP TABLE \(q(old.tableName))")
        try await db.execute("ALTER TABLE \(q(temporary)) RENAME TO \(q(old.tableName))")
        for statement in DDL.createTable(schema, flavor: .sqlite).dropFirst() { try await db.execute(statement) }
    }

    func dropTable(_ table: String, db: any Database) async throws {
        try await db.execute("DROP TABLE \(SQLFragment.quote(table))")
    }
}

/// ALTER TABLE, column by column.
struct PostgresTableMigrator: TableMigrator {
    func change(from old: CollectionSchema, to schema: CollectionSchema, renames: [String: String], db: any Database) async throws {
        let q = SQLFragment.quote
        let oldColumns = Dictionary(old.columns.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        let table = q(old.tableName)
        for column in old.columns {
            let renamed = renames.first { $0.value == column.name }?.key ?? column.name
            if schema.field(renamed) == nil || schema.field(renamed)?.isColumn == false {
                try await db.execute("ALTER TABLE \(table) DROP COLUMN \(q(column.name)) CASCADE")
                continue
            }
            if renamed != column.name { try await db.execute("ALTER TABLE \(table) RENAME COLUMN \(q(column.name)) TO \(q(renamed))") }
            let now = schema.field(renamed)!
            if now.type != column.type || now.length != column.length || now.scale != column.scale {
                // SchemaService rewrites the values after; the cast only has to carry them as text.
                try await db.execute(
                    "ALTER TABLE \(table) ALTER COLUMN \(q(renamed)) TYPE \(db.flavor.columnType(for: now)) USING NULLIF(\(q(renamed))::text, '')::text::\(db.flavor.columnType(for: now).split(separator: "(").first!)"
                )
            }
            if now.nullable != column.nullable {
                try await db.execute("ALTER TABLE \(table) ALTER COLUMN \(q(renamed)) \(now.nullable ? "DROP" : "SET") NOT NULL")
            }
            if now.defaultValue != column.defaultValue {
                if let value = now.defaultValue, let bound = try? ValueCoercion.coerce(value, to: now, at: "default") {
                    try await db.execute("ALTER TABLE \(table) ALTER COLUMN \(q(renamed)) SET DEFAULT \(SQLFragment.bind(bound).renderedWithLiterals())")
                } else {
                    try await db.execute("ALTER TABLE \(table) ALTER COLUMN \(q(renamed)) DROP DEFAULT")
                }
            }
        }
        for column in schema.columns where oldColumns[renames[column.name] ?? column.name] == nil {
            try await SchemaService.addColumn(column, to: schema, db: db)
        }
        // A belongsTo removed while its key column stays: the column keeps its values and loses
        // its foreign key, as the rebuilt table does on SQLite.
        for field in old.fields where field.type == .belongsTo {
            guard let key = field.relation?.foreignKey else { continue }
            let column = renames.first { $0.value == key }?.key ?? key
            let stillLinked = schema.fields.contains { $0.type == .belongsTo && $0.relation?.foreignKey == column }
            guard !stillLinked, schema.field(column)?.isColumn == true else { continue }
            try await Self.dropForeignKeys(table: old.tableName, column: column, db: db)
        }
    }

    func dropTable(_ table: String, db: any Database) async throws {
        try await db.execute("DROP TABLE \(SQLFragment.quote(table)) CASCADE")
    }

    /// Drops the foreign-key constraints on one column of a PostgreSQL table in the current schema.
    static func dropForeignKeys(table: String, column: String, db: any Database) async throws {
        var find = SQLFragment(
            """
            SELECT con.conname AS name FROM pg_constraint con
            JOIN pg_class rel ON rel.oid = con.conrelid
            JOIN pg_namespace ns ON ns.oid = rel.relnamespace
            JOIN pg_attribute att ON att.attrelid = rel.oid AND att.attnum = ANY (con.conkey)
            WHERE con.contype = 'f' AND ns.nspname = current_schema() AND rel.relname =
            """)
        find.append(" ")
        find.append(bind: .text(table))
        find.append(" AND att.attname = ")
        find.append(bind: .text(column))
        for row in try await db.query(find) {
            guard let name = row.string("name") else { continue }
            try await db.execute("ALTER TABLE \(SQLFragment.quote(table)) DROP CONSTRAINT \(SQLFragment.quote(name))")
        }
    }
}

// What the read-only sources (PorticoSources) report and what the question engines read: a
// datasource's tables as introspection found them, and the words a refusal is given in. Values
// only, so the engines need no database driver.

/// A table of a datasource, as introspection found it.
public struct SourceTable: Sendable {
    public struct Column: Sendable {
        public let name: String
        public let type: String
        public let notNull: Bool
        public let primaryKey: Bool
        /// A few distinct values, for text columns.
        public var samples: [String]
        /// The database's comment on the column (PostgreSQL's `COMMENT ON COLUMN`), if any.
        public var comment: String?

        public init(name: String, type: String, notNull: Bool, primaryKey: Bool, samples: [String]) {
            self.name = name
            self.type = type
            self.notNull = notNull
            self.primaryKey = primaryKey
            self.samples = samples
        }
    }

    public struct ForeignKey: Sendable {
        public let column: String
        public let table: String
        public let targetColumn: String?

        public init(column: String, table: String, targetColumn: String?) {
            self.column = column
            self.table = table
            self.targetColumn = targetColumn
        }
    }

    public let name: String
    public let isView: Bool
    public var columns: [Column]
    public var foreignKeys: [ForeignKey]
    /// The database's comment on the table (PostgreSQL's `COMMENT ON TABLE`), if any.
    public var comment: String?
    /// What orders the rows as the table keeps them, where the database has such a thing (SQLite's
    /// rowid): rows that tie in an order are put in it rather than by their key.
    public var storedOrder: StoredOrder?

    public init(name: String, isView: Bool, columns: [Column], foreignKeys: [ForeignKey]) {
        self.name = name
        self.isView = isView
        self.columns = columns
        self.foreignKeys = foreignKeys
    }
}

/// The name under which SQLite reads a table's rowid: the first of these no column of the table hides.
public enum StoredOrder: String, Sendable, CaseIterable {
    case rowid
    case rowidAlias = "_rowid_"
    case oid
}

/// Refusals of the datasource registry and of queries, in words the caller can act on.
public struct DatasourceError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

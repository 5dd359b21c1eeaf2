public import PorticoJSON

/// The type of a collection field (NocoBase's field types).
public enum FieldType: String, Sendable, CaseIterable {
    case string, text, integer, float, decimal, boolean, date, datetime, json, select
    case belongsTo, hasMany, belongsToMany

    public var isRelation: Bool {
        switch self {
        case .belongsTo, .hasMany, .belongsToMany: true
        default: false
        }
    }

    public var isNumeric: Bool {
        switch self {
        case .integer, .float, .decimal: true
        default: false
        }
    }

    public var isTextual: Bool {
        switch self {
        case .string, .text, .select: true
        default: false
        }
    }

    public var isTemporal: Bool { self == .date || self == .datetime }
}

/// How a relation field links two collections.
public struct Relation: Sendable, Hashable {
    /// The collection on the other side.
    public var target: String
    /// belongsTo: the column on this collection; hasMany: the column on the target.
    public var foreignKey: String
    /// belongsTo: the target's referenced column; hasMany/belongsToMany: this collection's referenced column.
    public var sourceKey: String
    /// The column the relation points at on the target (belongsTo: targetKey; belongsToMany: the target's key).
    public var targetKey: String
    /// belongsToMany only: the junction collection and its column pointing at the target.
    public var through: String?
    public var otherKey: String?

    public init(target: String, foreignKey: String, sourceKey: String, targetKey: String, through: String? = nil, otherKey: String? = nil) {
        self.target = target
        self.foreignKey = foreignKey
        self.sourceKey = sourceKey
        self.targetKey = targetKey
        self.through = through
        self.otherKey = otherKey
    }
}

/// A named field of a collection: a column, or a relation to another collection.
public struct Field: Sendable, Hashable {
    public var name: String
    public var type: FieldType
    public var title: String?
    public var nullable: Bool
    public var primaryKey: Bool
    public var autoIncrement: Bool
    /// For strings: the maximum length. For decimals: precision.
    public var length: Int?
    public var scale: Int?
    /// For `select` fields: the allowed values.
    public var options: [String]?
    public var relation: Relation?
    /// No two records may hold the same value.
    public var unique: Bool = false
    /// The value a new record gets when it gives none.
    public var defaultValue: JSON?
    /// Set by Portico on every write, never by the caller (NocoBase's system fields).
    public var maintained: Maintained?

    /// Values Portico keeps for each record of a collection made with `collections_create`.
    public enum Maintained: String, Sendable, Hashable, CaseIterable {
        case createdAt, updatedAt, createdBy, updatedBy

        /// The field Portico keeps for this value on every collection it creates.
        public var field: Field {
            var field: Field
            switch self {
            case .createdAt: field = Field(name: "createdAt", type: .datetime, title: "Created at")
            case .updatedAt: field = Field(name: "updatedAt", type: .datetime, title: "Updated at")
            case .createdBy: field = Field(name: "createdById", type: .integer, title: "Created by (user id)")
            case .updatedBy: field = Field(name: "updatedById", type: .integer, title: "Updated by (user id)")
            }
            field.maintained = self
            return field
        }
    }

    public init(
        name: String, type: FieldType, title: String? = nil, nullable: Bool = true, primaryKey: Bool = false,
        autoIncrement: Bool = false, length: Int? = nil, scale: Int? = nil, options: [String]? = nil, relation: Relation? = nil
    ) {
        self.name = name
        self.type = type
        self.title = title
        self.nullable = nullable
        self.primaryKey = primaryKey
        self.autoIncrement = autoIncrement
        self.length = length
        self.scale = scale
        self.options = options
        self.relation = relation
    }

    /// Whether this field is a column of the collection's table.
    public var isColumn: Bool { !type.isRelation }

    /// For a relation: the column of this field's own collection that it links on (the foreign
    /// key of a belongsTo, the source key otherwise).
    public var localKey: String? {
        guard let relation else { return nil }
        return type == .belongsTo ? relation.foreignKey : relation.sourceKey
    }
}

/// A data table Portico manages: its fields and the SQL table behind it.
public struct CollectionSchema: Sendable, Hashable {
    public var name: String
    public var title: String?
    public var description: String?
    public var tableName: String
    public var fields: [Field] {
        didSet { (columns, primaryKey) = Self.derived(fields) }
    }
    /// The column fields and the key's, kept with `fields`: every call reads them, so they are
    /// not filtered out of the fields again each time.
    public private(set) var columns: [Field]
    public private(set) var primaryKey: [Field]

    public init(name: String, title: String? = nil, tableName: String, fields: [Field]) {
        self.name = name
        self.title = title
        self.tableName = tableName
        self.fields = fields
        (columns, primaryKey) = Self.derived(fields)
    }

    static func derived(_ fields: [Field]) -> (columns: [Field], primaryKey: [Field]) {
        (fields.filter(\.isColumn), fields.filter(\.primaryKey))
    }

    public func field(_ name: String) -> Field? {
        fields.first { $0.name == name }
    }

    /// The type of the field named `name`, read in place (`field(name)?.type` copies the field).
    public func fieldType(_ name: String) -> FieldType? {
        fields.firstIndex { $0.name == name }.map { fields[$0].type }
    }

    public var relations: [Field] { fields.filter { $0.type.isRelation } }

    /// Names of the column fields, for error messages that list what exists.
    public var columnList: String { columns.map(\.name).joined(separator: ", ") }

    /// Looks up a column field by name, or explains which columns exist.
    public func column(_ name: String, purpose: String) throws(DataError) -> Field {
        guard let field = field(name) else {
            throw .invalid("unknown field '\(name)' in \(purpose) of collection '\(self.name)'; its fields are: \(fields.map(\.name).joined(separator: ", "))")
        }
        guard field.isColumn else {
            throw .invalid(
                "'\(name)' in \(purpose) is a \(field.type.rawValue) relation of '\(self.name)', not a column; name one of its fields, like '\(name).<field>'")
        }
        return field
    }
}

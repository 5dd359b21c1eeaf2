import Crypto
import PorticoJSON
import Synchronization

/// The collections of one app at one moment, as the data layer resolves names against them.
public struct Catalog: Sendable {
    public let app: String
    public let collections: [String: CollectionSchema]
    /// The app's database, where these collections' tables are.
    public let database: any Database
    /// Different for every catalog made, so what is derived from one can be kept against it.
    public let version: UInt64
    /// Collections a scoped catalog names but refuses, with the reason (naming the action).
    let refusals: [String: String]
    /// Conditions (on `RecordService.rootAlias`) a scoped catalog's rows must meet, by collection.
    let rowFilters: [String: SQLFragment]
    /// Every collection in full, for the junction tables of belongsToMany relations.
    let unscoped: [String: CollectionSchema]
    /// Whether this catalog was made by `scoped(by:root:action:)`.
    let isScoped: Bool

    private static let versions = Atomic<UInt64>(0)

    /// The collections by name (a later one of the same name wins).
    static func byName(_ collections: [CollectionSchema]) -> [String: CollectionSchema] {
        Dictionary(collections.map { ($0.name, $0) }, uniquingKeysWith: { _, last in last })
    }

    public init(app: String, collections: [CollectionSchema], database: any Database) {
        self.app = app
        self.database = database
        version = Self.versions.add(1, ordering: .relaxed).newValue
        let byName = Self.byName(collections)
        self.collections = byName
        refusals = [:]
        rowFilters = [:]
        unscoped = byName
        isScoped = false
    }

    /// `base` as one caller may see it (`scoped(by:root:action:)`).
    init(scoping base: Catalog, collections: [CollectionSchema], refusals: [String: String], rowFilters: [String: SQLFragment]) {
        app = base.app
        database = base.database
        version = Self.versions.add(1, ordering: .relaxed).newValue
        self.collections = Self.byName(collections)
        self.refusals = refusals
        self.rowFilters = rowFilters
        unscoped = base.unscoped
        isScoped = true
    }

    public var names: [String] { collections.keys.sorted() }

    /// Finds a collection or explains which ones exist.
    public func collection(_ name: String) throws(DataError) -> CollectionSchema {
        if let reason = refusals[name] { throw DataError(.forbidden, reason) }
        if let collection = collections[name] { return collection }
        let known = names
        let hint = known.first { $0.lowercased() == name.lowercased() }.map { " Did you mean '\($0)'?" } ?? ""
        throw .notFound("unknown collection '\(name)' in app '\(app)'.\(hint) Collections: \(known.joined(separator: ", "))")
    }

    /// The collection a relation field points at.
    public func target(of field: Field, in collection: CollectionSchema) throws(DataError) -> CollectionSchema {
        guard let relation = field.relation else {
            throw .invalid("'\(field.name)' of '\(collection.name)' is not a relation")
        }
        return try self.collection(relation.target)
    }

    /// This catalog before any scoping: every collection, in full.
    var unscopedCatalog: Catalog {
        isScoped ? Catalog(app: app, collections: Array(unscoped.values), database: database) : self
    }

    /// The junction table of a belongsToMany relation. It holds only the links; the rows on
    /// either side keep their own rules.
    func junction(_ name: String) throws(DataError) -> CollectionSchema {
        guard let junction = unscoped[name] else { throw .invalid("the junction collection '\(name)' does not exist in app '\(app)'") }
        return junction
    }

    /// `"table" AS "alias"`, or, where this catalog filters the collection's rows,
    /// `(SELECT * FROM "table" AS "t0" WHERE <row filter>) AS "alias"`: every read of a
    /// collection's table is written with this, so a row filter holds on every path.
    public func from(_ collection: CollectionSchema, as alias: String) -> SQLFragment {
        var f = SQLFragment()
        guard let condition = rowFilters[collection.name] else {
            f.append(table: collection.tableName, as: alias)
            return f
        }
        f.append("(SELECT * FROM ")
        f.append(table: collection.tableName, as: RecordService.rootAlias)
        f.append(" WHERE ")
        f.append(condition)
        f.append(") AS ")
        f.append(alias: alias)
        return f
    }

    /// `SELECT <the columns it may see> FROM "table" AS "t0" WHERE <row filter>`: what a caller's
    /// SQL reads in place of the collection's table. `nil` when this catalog shows the collection in full.
    public func view(of name: String) throws(DataError) -> CollectionView? {
        let collection = try self.collection(name)
        let full = unscoped[name] ?? collection
        let condition = rowFilters[name]
        guard condition != nil || collection.fields.count != full.fields.count else { return nil }
        var columns = collection.columns.map(\.name)
        // A relation the caller may follow needs its key column to join on.
        for relation in collection.relations {
            if let key = relation.localKey, full.field(key)?.isColumn == true, !columns.contains(key) { columns.append(key) }
        }
        var f = SQLFragment("SELECT ")
        f.append(columns: columns, of: RecordService.rootAlias)
        f.append(" FROM ")
        f.append(table: collection.tableName, as: RecordService.rootAlias)
        if let condition {
            f.append(" WHERE ")
            f.append(condition)
        }
        return CollectionView(select: f, columns: columns)
    }

    /// The collection whose table is `table` (compared without case, as SQL names are).
    public func collection(table: String) -> String? {
        let lowered = table.lowercased()
        return unscoped.values.first { $0.tableName.lowercased() == lowered }?.name
    }

    /// The row filter on `collection` as a condition on `RecordService.rootAlias`, for the
    /// statements that cannot read a derived table (UPDATE, DELETE).
    func rowCondition(of collection: CollectionSchema) -> SQLFragment? { rowFilters[collection.name] }

    /// `(SELECT "alias"."column" FROM <collection's rows> WHERE "alias"."key" = value)`.
    func lookup(_ column: String, in collection: CollectionSchema, as alias: String, where key: String, equals value: SQLFragment) -> SQLFragment {
        var f = SQLFragment("(SELECT ")
        f.append(column: column, of: alias)
        f.append(" FROM ")
        f.append(from(collection, as: alias))
        f.append(" WHERE ")
        f.append(column: key, of: alias)
        f.append(" = ")
        f.append(value)
        f.append(")")
        return f
    }
}

/// A caller's view of a collection's table: the SELECT of the columns and rows it may read, as SQL
/// text with its values written in, for SQL that is run as text (a datasource query).
public struct CollectionView: Sendable, Equatable {
    let select: SQLFragment
    /// The columns it shows.
    public let columns: [String]
    /// The SELECT's text, with the aliases Portico wrote.
    public let sql: String

    init(select: SQLFragment, columns: [String]) {
        self.select = select
        self.columns = columns
        sql = select.renderedWithLiterals()
    }

    /// The SELECT's text with every table alias in it starting with `aliasPrefix`, and every
    /// table named in `schema` when given.
    public func sql(aliasPrefix: String, schema: String? = nil) -> String { select.renderedWithLiterals(aliasPrefix: aliasPrefix, schema: schema) }

    /// A name for this view as a temporary view of an SQLite connection, from a keyed digest of
    /// its text: two views share a name only when they are the same view, and no caller can work
    /// out the name to write it themselves.
    public var temporaryName: String {
        Self.temporaryPrefix
            + HMAC<SHA256>.authenticationCode(for: Array(sql.utf8), using: Self.nameKey).withUnsafeBytes {
                Hex.encode(UnsafeRawBufferPointer(rebasing: $0.prefix(16)))
            }
    }

    /// How every temporary view's name starts; SQL from outside that contains it is refused.
    public static let temporaryPrefix = "portico_view_"
    static let nameKey = SymmetricKey(size: .bits256)

    public static func == (a: CollectionView, b: CollectionView) -> Bool { a.sql == b.sql && a.columns == b.columns }
}

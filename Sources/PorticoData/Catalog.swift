import Crypto
import PorticoBase
import PorticoJSON
public import PorticoStore
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
    /// Conditions (on `RecordService.rootAlias`) a scoped catalog's rows must meet, by collection:
    /// the call's own action's rule for its collection, the related action's for the others. Read
    /// here only, by the statements below, so no other code writes a row rule into SQL.
    private let rowFilters: [String: SQLFragment]
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

// MARK: - Writes

/// The write half of the choke point: every statement that changes a collection's records or
/// checks a record a write names is built here, with the rule of the caller's role applied, so a
/// writer (a tool, a workflow, an import) cannot leave it out. Statements use
/// `RecordService.rootAlias` for the collection acted on; `condition`s are the call's own (its
/// key, filter and association scope), to which the rule is added.
extension Catalog {
    /// The row rule on `collection` as a condition on `RecordService.rootAlias`, for statements
    /// that cannot read a derived table (UPDATE, DELETE).
    private func rowCondition(of collection: CollectionSchema) -> SQLFragment? { rowFilters[collection.name] }

    /// `condition AND <the rows this call may act on>`.
    private func writable(_ collection: CollectionSchema, _ condition: SQLFragment?) -> SQLFragment? {
        SQLFragment.all([condition, rowCondition(of: collection)].compactMap { $0 })
    }

    /// `SELECT <columns, or *> FROM <collection> AS t0 WHERE condition`, over the rows this call may
    /// act on: what an update that changes no column returns, and what a destroy removes.
    func select(_ collection: CollectionSchema, columns: [String]? = nil, where condition: SQLFragment?) -> SQLFragment {
        var q = SQLFragment("SELECT ")
        if let columns { q.append(columns: columns, of: RecordService.rootAlias) } else { q.append("*") }
        q.append(" FROM ")
        q.append(table: collection.tableName, as: RecordService.rootAlias)
        if let condition = writable(collection, condition) {
            q.append(" WHERE ")
            q.append(condition)
        }
        return q
    }

    /// `UPDATE <collection> AS t0 SET ... WHERE condition RETURNING *`, within the rows this call may update.
    func update(_ collection: CollectionSchema, set columns: [String: SQLValue], where condition: SQLFragment?) -> SQLFragment {
        var q = SQLFragment("UPDATE ")
        q.append(table: collection.tableName, as: RecordService.rootAlias)
        q.append(" SET ")
        q.append(
            joining: columns.map { name, value in
                var f = SQLFragment.identifier(name)
                f.append(" = ")
                f.append(bind: value)
                return f
            }, separator: ", ")
        if let condition = writable(collection, condition) {
            q.append(" WHERE ")
            q.append(condition)
        }
        q.append(" RETURNING *")
        return q
    }

    /// `DELETE FROM <collection> AS t0 WHERE condition RETURNING 1 AS deleted`, within the rows
    /// this call may destroy.
    func delete(_ collection: CollectionSchema, where condition: SQLFragment?) -> SQLFragment {
        var q = SQLFragment("DELETE FROM ")
        q.append(table: collection.tableName, as: RecordService.rootAlias)
        if let condition = writable(collection, condition) {
            q.append(" WHERE ")
            q.append(condition)
        }
        q.append(" RETURNING 1 AS deleted")
        return q
    }

    /// Refuses (inside the update's transaction, which it then rolls back) an update that moved
    /// records out of the rows the role may update, as NocoBase's filter on update does: a role
    /// limited to its own or its region's records cannot hand them to someone else's. Judged once
    /// the links are in too: a rule may be on a relation ("its members contain me").
    func requireStillInside(_ collection: CollectionSchema, rows: [Row], db: any Database) async throws {
        guard let rule = rowCondition(of: collection), !rows.isEmpty else { return }
        let keys = collection.primaryKey.map(\.name)
        guard !keys.isEmpty else {
            throw DataError(
                .forbidden,
                "'\(collection.name)' has no primary key, so Portico cannot check that the change keeps its records inside this role's rows; nothing was changed"
            )
        }
        let perStatement = max(1, RecordService.keysPerStatement / keys.count)
        for start in stride(from: 0, to: rows.count, by: perStatement) {
            let chunk = rows[start..<min(rows.count, start + perStatement)]
            var q = SQLFragment("SELECT COUNT(*) AS n FROM ")
            q.append(table: collection.tableName, as: RecordService.rootAlias)
            q.append(" WHERE (")
            q.append(
                joining: chunk.map { row in
                    SQLFragment.all(keys.map { key in RecordService.binary(.column(key, of: RecordService.rootAlias), "=", row[key] ?? .null) })!
                }, separator: " OR ")
            q.append(") AND (")
            q.append(rule)
            q.append(")")
            let inside = try await db.query(q).first?.int("n") ?? 0
            guard inside == Int64(chunk.count) else {
                throw DataError(
                    .forbidden,
                    "the change would move \(Int64(chunk.count) - inside) record(s) of '\(collection.name)' out of the rows this role may update; nothing was changed. Leave the fields its filter is on as they are"
                )
            }
        }
    }

    /// Refuses keys a write names (`path`) that are not all records of `target` this caller can
    /// see: a link to a hidden record would tell which of its keys exist.
    func requireVisible(_ target: CollectionSchema, keyColumn: String, keys: [SQLValue], path: String, db: any Database) async throws {
        guard rowFilters[target.name] != nil, !keys.isEmpty else { return }
        var q = SQLFragment("SELECT COUNT(DISTINCT ")
        q.append(column: keyColumn, of: "v")
        q.append(") AS n FROM ")
        q.append(from(target, as: "v"))
        q.append(" WHERE ")
        q.append(RecordService.isIn(.column(keyColumn, of: "v"), keys))
        let found = try await db.query(q).first?.int("n") ?? 0
        guard found == Int64(Set(keys).count) else {
            throw DataError.notFound("values.\(path) names a \(target.name) record that does not exist or that this role may not see")
        }
    }

    /// The condition that an association's parent (`key` = `value` of `parent`) is one of the
    /// caller's rows; `nil` when the caller sees every row of it.
    func parentCondition(_ parent: CollectionSchema, key: String, equals value: SQLValue) -> SQLFragment? {
        guard rowFilters[parent.name] != nil else { return nil }
        var f = SQLFragment("EXISTS ")
        f.append(lookup(key, in: parent, as: "p", where: key, equals: .bind(value)))
        return f
    }

    /// Refuses a create under an association whose parent the caller cannot see.
    func requireParent(_ association: RecordService.Association, db: any Database) async throws {
        var q = SQLFragment("SELECT 1 AS found FROM ")
        q.append(from(association.parent, as: "p"))
        q.append(" WHERE ")
        q.append(column: association.parent.primaryKey[0].name, of: "p")
        q.append(" = ")
        q.append(bind: association.sourceId)
        guard try await !db.query(q).isEmpty else {
            throw DataError.notFound(
                "there is no \(association.parent.name) with \(association.parent.primaryKey[0].name) \(association.sourceId.json.serializedString) that this caller can see"
            )
        }
    }

    /// Which of a hasMany target's records a caller may move by linking them: linking sets their
    /// foreign key, so it is an update of them, under the target's update rule.
    struct LinkScope: Sendable {
        fileprivate let condition: SQLFragment?
    }

    /// The records of `target` that `access` may update; throws when it may update none.
    func linkScope(_ target: CollectionSchema, access: RecordAccess) throws(DataError) -> LinkScope {
        let rooted = try unscopedCatalog.scoped(by: access, root: target.name, action: .update)
        return LinkScope(condition: rooted.rowCondition(of: target))
    }

    /// `UPDATE target SET foreignKey = source WHERE targetKey IN (keys)`, limited to the records `scope` allows.
    func link(_ target: CollectionSchema, keys: [SQLValue], on targetKey: String, setting foreignKey: String, to source: SQLValue, within scope: LinkScope)
        -> SQLFragment
    {
        var q = SQLFragment("UPDATE ")
        q.append(identifier: target.tableName)
        q.append(" SET ")
        q.append(identifier: foreignKey)
        q.append(" = ")
        q.append(bind: source)
        q.append(" WHERE ")
        q.append(RecordService.isIn(.identifier(targetKey), keys))
        if let condition = scope.condition {
            // Records outside the rule stay where they are.
            q.append(" AND ")
            q.append(identifier: targetKey)
            q.append(" IN (SELECT ")
            q.append(column: targetKey, of: RecordService.rootAlias)
            q.append(" FROM ")
            q.append(table: target.tableName, as: RecordService.rootAlias)
            q.append(" WHERE ")
            q.append(condition)
            q.append(")")
        }
        return q
    }

    /// `DELETE FROM through WHERE foreignKey = source`: a record's belongsToMany links, except
    /// those to records of `target` the caller cannot see, which are not the caller's to remove.
    func unlink(through: String, foreignKey: String, source: SQLValue, otherKey: String, target: CollectionSchema, targetKey: String) -> SQLFragment {
        var q = SQLFragment("DELETE FROM ")
        q.append(identifier: through)
        q.append(" WHERE ")
        q.append(identifier: foreignKey)
        q.append(" = ")
        q.append(bind: source)
        if rowFilters[target.name] != nil {
            q.append(" AND ")
            q.append(identifier: otherKey)
            q.append(" IN (SELECT ")
            q.append(column: targetKey, of: "v")
            q.append(" FROM ")
            q.append(from(target, as: "v"))
            q.append(")")
        }
        return q
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

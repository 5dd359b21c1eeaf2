import Foundation
import PorticoBase
public import PorticoJSON
public import PorticoStore
import Synchronization

/// Caps on what one call returns, so an agent's context is never flooded.
public struct ResultBudget: Sendable {
    public var defaultPageSize = 20
    public var maxPageSize = 500
    /// Rows returned by one unpaginated list or aggregate query.
    public var maxRows = 1000
    /// Related rows attached to one record by `appends`, per relation.
    public var maxAppendedRows = 100
    /// Related rows attached by `appends` in one call, across every record and relation.
    public var maxAttachedRows = 2000
    /// Highest page number: far beyond any real collection, and its offset cannot overflow.
    public var maxPage = 10_000_000
    /// Serialised size of one result's rows.
    public var maxBytes = 256 * 1024

    public init() {}
}

/// Arguments of a record request that names its rows (NocoBase's resource parameters).
public struct RecordRequest: Sendable {
    public var resource: String
    public var sourceId: JSON?
    public var filterByTk: JSON?
    public var filter: JSON?
    public var fields: [String]?
    public var appends: [String]?
    public var except: [String]?
    public var sort: [String]?
    public var page: Int?
    public var pageSize: Int?
    public var paginate: Bool?
    public var values: JSONObject?
    public var whitelist: [String]?
    public var blacklist: [String]?

    public init(resource: String) { self.resource = resource }
}

/// NocoBase's record actions over a collection's SQL table.
public struct RecordService: Sendable {
    public let catalogs: CatalogStore
    /// The SQL dialect of every app's database.
    let flavor: SQLFlavor
    public let budget: ResultBudget
    /// Select plans by catalog and request shape.
    private let plans = BoundedCache<PlanKey, SelectPlan>(limit: 512)
    /// Catalogs scoped for callers, by catalog, rules, collection and action.
    private let scopes = BoundedCache<ScopeKey, Catalog>(limit: 1024)

    /// The time `createdAt` and `updatedAt` are set to.
    let clock: WallClock
    /// What hears every write inside its transaction (the workflows' triggers).
    public let hooks: RecordHooks

    public init(catalogs: CatalogStore, budget: ResultBudget = ResultBudget(), clock: WallClock = .system, hooks: RecordHooks = RecordHooks()) {
        flavor = catalogs.databases.primary.flavor
        self.catalogs = catalogs
        self.budget = budget
        self.clock = clock
        self.hooks = hooks
    }

    /// The plan for reading `collection` as `request` asks (its fields, appends, except and
    /// sort), made once per catalog and request shape: agents repeat the same shapes.
    func plan(_ request: RecordRequest, collection: CollectionSchema, catalog: Catalog) throws(DataError) -> SelectPlan {
        let key = PlanKey(
            catalog: catalog.version, collection: collection.name, fields: request.fields, appends: request.appends, except: request.except,
            sort: request.sort)
        if let plan = plans[key] { return plan }
        let plan = try SelectPlan(request: request, collection: collection, catalog: catalog, flavor: flavor)
        plans.store(plan, for: key)
        return plan
    }

    static let rootAlias = "t0"

    // MARK: list / get

    public func list(app: String, _ request: RecordRequest, access: RecordAccess) async throws -> JSON {
        try await listResult(app: app, request, access: access).json
    }

    public func get(app: String, _ request: RecordRequest, access: RecordAccess) async throws -> JSON {
        try await getResult(app: app, request, access: access).json
    }

    /// A list's result, its records kept as rows until written (see `RecordResult`).
    public func listResult(app: String, _ request: RecordRequest, access: RecordAccess) async throws -> RecordResult {
        let (catalog, target) = try await resolve(app: app, request, access: access, for: .list)
        let plan = try self.plan(request, collection: target.collection, catalog: catalog)
        let condition = try conditions(request, target: target, catalog: catalog)
        let paginate = request.paginate ?? true
        var pageSize = request.pageSize ?? budget.defaultPageSize
        guard pageSize >= 1 else { throw DataError.invalid("pageSize must be at least 1, got \(pageSize)") }
        let page = request.page ?? 1
        guard page >= 1, page <= budget.maxPage else {
            throw DataError.invalid("page must be between 1 and \(budget.maxPage), got \(page)")
        }
        var notes: [String] = []
        if pageSize > budget.maxPageSize {
            notes.append("pageSize was limited to \(budget.maxPageSize)")
            pageSize = budget.maxPageSize
        }
        let limit = paginate ? pageSize : budget.maxRows + 1
        // page ≤ maxPage and pageSize ≤ maxPageSize, so this cannot overflow.
        let offset = paginate ? (page - 1) * pageSize : 0
        // Past the first page the count is needed whatever the page holds: it comes with the page.
        let counted = paginate && page > 1
        let statement =
            counted
            ? plan.countedSelect(where: condition, limit: limit, offset: offset, flavor: flavor)
            : plan.select(where: condition, limit: limit, offset: offset, flavor: flavor)
        let rows = try await catalog.database.query(statement)
        var truncated = false
        var shown = rows[...]
        if !paginate, rows.count > budget.maxRows {
            shown = rows.prefix(budget.maxRows)
            truncated = true
            notes.append("more than \(budget.maxRows) records match; use pagination or a narrower filter")
        }
        let meter = ResultMeter(budget: budget)
        let records = plan.appends.isEmpty ? plan.recordsWithoutAppends(Array(shown), meter: meter) : try await plan.records(from: Array(shown), meter: meter)
        if meter.cutByBytes {
            truncated = true
            notes.append(
                "the result was cut to \(records.count) records to stay under \(budget.maxBytes / 1024) KiB; ask for fewer fields, fewer appends or a smaller pageSize"
            )
        }
        if !meter.cutInAll.isEmpty { truncated = true }
        notes += meter.notes(maxBytes: budget.maxBytes)
        var meta: JSONObject?
        if paginate {
            // A short first page already says how many match, and a later page brought its count
            // with it; otherwise (a first page that is full, a page past the end) ask. A window
            // count would make SQLite materialise every matching row.
            let count: Int64
            if page == 1 && rows.count < pageSize {
                count = Int64(rows.count)
            } else if counted, case .int(let n)? = rows.first?.values.last {
                count = n
            } else {
                count = try await self.count(target.collection, where: condition, in: catalog)
            }
            var pageMeta: JSONObject = [
                "count": .int(count), "page": JSON(page), "pageSize": JSON(pageSize),
                "totalPage": .int((count + Int64(pageSize) - 1) / Int64(pageSize)),
            ]
            if truncated { pageMeta["truncated"] = true }
            if !notes.isEmpty { pageMeta["notes"] = JSON(notes) }
            meta = pageMeta
        } else if truncated || !notes.isEmpty {
            meta = ["truncated": .bool(truncated), "notes": JSON(notes)]
        }
        return RecordResult(records: records, single: false, meta: meta)
    }

    /// A get's result, its record kept as a row until written (see `RecordResult`).
    public func getResult(app: String, _ request: RecordRequest, access: RecordAccess) async throws -> RecordResult {
        let (catalog, target) = try await resolve(app: app, request, access: access, for: .get)
        let plan = try self.plan(request, collection: target.collection, catalog: catalog)
        let condition = try conditions(request, target: target, catalog: catalog)
        let rows = try await catalog.database.query(plan.select(where: condition, limit: 1, offset: 0, flavor: flavor))
        let meter = ResultMeter(budget: budget)
        let records = plan.appends.isEmpty ? plan.recordsWithoutAppends(rows, meter: meter) : try await plan.records(from: rows, meter: meter)
        if records.count == 0, !rows.isEmpty {
            throw DataError.invalid(
                "the record is larger than \(budget.maxBytes / 1024) KiB with the fields and appends asked for; ask for fewer fields (fields, except) or fewer appends"
            )
        }
        let notes = meter.notes(maxBytes: budget.maxBytes)
        return RecordResult(records: records, single: true, meta: notes.isEmpty ? nil : ["truncated": true, "notes": JSON(notes)])
    }

    func count(_ collection: CollectionSchema, where condition: SQLFragment?, in catalog: Catalog) async throws -> Int64 {
        var q = SQLFragment("SELECT COUNT(*) AS n FROM ")
        q.append(catalog.from(collection, as: Self.rootAlias))
        if let condition {
            q.append(" WHERE ")
            q.append(condition)
        }
        return try await catalog.database.query(q).first?.int("n") ?? 0
    }

    // MARK: Resolving the resource

    /// The rows a request acts on: a collection, optionally narrowed to one record's association.
    struct Target {
        var collection: CollectionSchema
        var scope: SQLFragment?
        var association: Association?
    }

    struct Association {
        var parent: CollectionSchema
        var field: Field
        var sourceKeyValue: SQLFragment
        var sourceId: SQLValue
    }

    /// The app's catalog as the caller may see it for this call, and the request's target.
    func resolve(app: String, _ request: RecordRequest, access: RecordAccess, for action: RecordAction) async throws -> (Catalog, Target) {
        let full = try await catalogs.catalog(app: app)
        // The target of an association is the call's own collection; its parent is a related one.
        let catalog = try scoped(full, by: access, root: Self.rootCollection(request.resource, in: full), action: action)
        return (catalog, try resolve(request, catalog: catalog))
    }

    /// The collection a resource acts on (`Album.tracks` → `Track`), when its names resolve.
    static func rootCollection(_ resource: String, in catalog: Catalog) -> String {
        // A collection's own name (most calls) needs no splitting.
        guard resource.utf8.contains(UInt8(ascii: ".")) else { return resource }
        let parts = resource.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return resource }
        return catalog.collections[String(parts[0])]?.field(String(parts[1]))?.relation?.target ?? resource
    }

    /// `catalog` scoped by `access` for one call, kept while the catalog and the rules are the same.
    func scoped(_ catalog: Catalog, by access: RecordAccess, root: String, action: RecordAction) throws(DataError) -> Catalog {
        if access.allowsInFull { return try catalog.scoped(by: access, root: root, action: action) }
        let key = ScopeKey(catalog: catalog.version, access: access.key, root: root, action: action)
        if let scoped = scopes[key] { return scoped }
        let scoped = try catalog.scoped(by: access, root: root, action: action)
        scopes.store(scoped, for: key)
        return scoped
    }

    func resolve(_ request: RecordRequest, catalog: Catalog) throws(DataError) -> Target {
        let parts =
            request.resource.utf8.contains(UInt8(ascii: "."))
            ? request.resource.split(separator: ".", omittingEmptySubsequences: false).map(String.init) : [request.resource]
        guard !parts.isEmpty, !parts.contains(where: \.isEmpty), parts.count <= 2 else {
            throw .invalid("resource must be a collection name such as 'Album', or an association such as 'Album.tracks'; got '\(request.resource)'")
        }
        let collection = try catalog.collection(parts[0])
        if parts.count == 1 {
            if let sourceId = request.sourceId, !sourceId.isNull {
                throw .invalid("sourceId applies to association resources like '\(collection.name).<relation>'; '\(collection.name)' is a collection")
            }
            return Target(collection: collection)
        }
        guard let field = collection.field(parts[1]), field.type.isRelation, let relation = field.relation else {
            throw .invalid(
                "'\(parts[1])' is not a relation of '\(collection.name)'; its relations are: \(collection.relations.map(\.name).joined(separator: ", "))")
        }
        guard let sourceIdJSON = request.sourceId, !sourceIdJSON.isNull else {
            throw .invalid(
                "'\(request.resource)' is an association resource: pass sourceId, the \(collection.name) record's \(collection.primaryKey.first?.name ?? "key")"
            )
        }
        guard let pk = collection.primaryKey.first, collection.primaryKey.count == 1 else {
            throw .invalid("'\(collection.name)' has a composite key, so its associations cannot be addressed by sourceId")
        }
        let sourceId = try ValueCoercion.coerce(sourceIdJSON, to: pk, at: "sourceId")
        let target = try catalog.target(of: field, in: collection)
        // The value of the parent's key column that the relation links on.
        let linkColumn = field.localKey!
        let sourceKeyValue: SQLFragment =
            linkColumn == pk.name
            ? .bind(sourceId)
            : catalog.lookup(linkColumn, in: collection, as: "p", where: pk.name, equals: .bind(sourceId))
        var scope = SQLFragment()
        if linkColumn == pk.name, let parent = catalog.parentCondition(collection, key: pk.name, equals: sourceId) {
            // The parent must be one of the caller's rows, even when its key alone links.
            scope.append(parent)
            scope.append(" AND ")
        }
        switch field.type {
        case .hasMany, .belongsTo:
            scope.append(column: field.type == .hasMany ? relation.foreignKey : relation.targetKey, of: Self.rootAlias)
            scope.append(" = ")
            scope.append(sourceKeyValue)
        case .belongsToMany:
            guard let through = relation.through, let otherKey = relation.otherKey else { throw .invalid("relation '\(field.name)' has no junction") }
            let junction = try catalog.junction(through)
            scope.append("EXISTS (SELECT 1 FROM ")
            scope.append(table: junction.tableName, as: "j")
            scope.append(" WHERE ")
            scope.append(column: otherKey, of: "j", equals: relation.targetKey, of: Self.rootAlias)
            scope.append(" AND ")
            scope.append(column: relation.foreignKey, of: "j")
            scope.append(" = ")
            scope.append(sourceKeyValue)
            scope.append(")")
        default:
            throw .invalid("'\(field.name)' is not a relation")
        }
        return Target(
            collection: target, scope: scope, association: Association(parent: collection, field: field, sourceKeyValue: sourceKeyValue, sourceId: sourceId))
    }

    /// The WHERE condition of a request: association scope, primary key and filter.
    func conditions(_ request: RecordRequest, target: Target, catalog: Catalog) throws(DataError) -> SQLFragment? {
        var parts: [SQLFragment] = []
        if let scope = target.scope { parts.append(scope) }
        if let tk = request.filterByTk, !tk.isNull {
            parts.append(try keyCondition(tk, collection: target.collection))
        }
        let compiler = FilterCompiler(catalog: catalog, flavor: flavor)
        if let filter = try compiler.compile(request.filter, on: target.collection, alias: Self.rootAlias) {
            parts.append(filter)
        }
        return SQLFragment.all(parts)
    }

    /// `filterByTk`: a key value, an array of them, or for composite keys an object of key columns.
    func keyCondition(_ value: JSON, collection: CollectionSchema) throws(DataError) -> SQLFragment {
        let pk = collection.primaryKey
        guard !pk.isEmpty else { throw .invalid("collection '\(collection.name)' has no primary key, so filterByTk cannot address its records; use filter") }
        if pk.count == 1 {
            let column = SQLFragment.column(pk[0].name, of: Self.rootAlias)
            if case .array(let items) = value {
                guard !items.isEmpty else { throw .invalid("filterByTk is an empty array") }
                guard items.count <= 1000 else { throw .invalid("filterByTk has more than 1000 keys") }
                var f = column
                f.append(" IN (")
                for (index, item) in items.enumerated() {
                    if index > 0 { f.append(", ") }
                    f.append(bind: try ValueCoercion.coerce(item, to: pk[0], at: "filterByTk[\(index)]"))
                }
                f.append(")")
                return f
            }
            guard !value.isNull else { throw .invalid("filterByTk must not be null") }
            var f = column
            f.append(" = ")
            f.append(bind: try ValueCoercion.coerce(value, to: pk[0], at: "filterByTk"))
            return f
        }
        let keys = pk.map(\.name).joined(separator: ", ")
        let objects: [JSON] = value.arrayValue ?? [value]
        guard objects.count <= 1000 else { throw .invalid("filterByTk has more than 1000 keys") }
        var alternatives: [SQLFragment] = []
        for (index, item) in objects.enumerated() {
            guard case .object(let object) = item else {
                throw .invalid(
                    "'\(collection.name)' has a composite key (\(keys)): filterByTk must be an object like {\(pk.map { "\"\($0.name)\": ..." }.joined(separator: ", "))}"
                )
            }
            var parts: [SQLFragment] = []
            for field in pk {
                guard let v = object[field.name] else {
                    throw .invalid("filterByTk[\(index)] is missing key column '\(field.name)' of \(collection.name) (\(keys))")
                }
                var f = SQLFragment.column(field.name, of: Self.rootAlias)
                f.append(" = ")
                f.append(bind: try ValueCoercion.coerce(v, to: field, at: "filterByTk.\(field.name)"))
                parts.append(f)
            }
            alternatives.append(SQLFragment.all(parts)!)
        }
        return SQLFragment.all(alternatives, "OR")!
    }
}

/// What a scoped catalog is kept against.
struct ScopeKey: Hashable, Sendable {
    var catalog: UInt64
    var access: String
    var root: String
    var action: RecordAction
}

/// What a select plan is kept against: the catalog and the request's shape.
struct PlanKey: Hashable, Sendable {
    var catalog: UInt64
    var collection: String
    var fields: [String]?
    var appends: [String]?
    var except: [String]?
    var sort: [String]?
}

import Foundation
public import PorticoJSON
import PorticoStore

extension RecordService {
    /// Inserts one record (`values`), linking relations given by key; returns `{data: record}`.
    public func create(app: String, _ request: RecordRequest, access: RecordAccess) async throws -> JSON {
        let (catalog, target) = try await resolve(app: app, request, access: access, for: .create)
        guard let values = request.values else { throw DataError.invalid("values is required: the new record's fields, such as {\"Title\": \"...\"}") }
        var draft = try Assignment(
            values: values, collection: target.collection, catalog: catalog, access: access, whitelist: request.whitelist, blacklist: request.blacklist)
        if let association = target.association {
            switch association.field.type {
            case .hasMany:
                let fk = association.field.relation!.foreignKey
                if let given = draft.columns[fk], given != association.sourceId,
                    association.field.relation!.sourceKey == association.parent.primaryKey.first?.name
                {
                    throw DataError.invalid(
                        "values.\(fk) is \(given) but the record is created under \(association.parent.name) \(association.sourceId); leave \(fk) out")
                }
                draft.columnExpressions[fk] = association.sourceKeyValue
                draft.columns[fk] = nil
            case .belongsToMany:
                break  // linked through the junction after the insert
            default:
                throw DataError.invalid(
                    "'\(request.resource)' is a belongsTo association; create the \(target.collection.name) record directly and set \(association.parent.name).\(association.field.relation!.foreignKey)"
                )
            }
        }
        let collection = target.collection
        for (name, value) in try maintainedValues(of: collection, catalog: catalog, access: access, creating: true) { draft.columns[name] = value }
        let assignment = draft
        // The collection with every column, whatever the caller's role may read.
        let stored = catalog.unscoped[collection.name] ?? collection
        // What the create returns: its columns, and the keys the links it makes are made by.
        var linkKeys = assignment.links.map { $0.field.relation!.sourceKey }
        if let association = target.association, association.field.type == .belongsToMany { linkKeys.append(association.field.relation!.targetKey) }
        let returned = stored.columns.map(\.name) + Set(linkKeys).subtracting(stored.columns.map(\.name)).sorted()
        let observer = try await hooks.observer(app: app, collection: collection.name, action: .create)
        var given = RecordWrite(app: app, collection: collection.name, action: .create, caller: access.caller, values: values)
        // On PostgreSQL what the create starts is written by its own statement, from its row.
        var withRow: [SQLFragment] = []
        if let observer, catalog.database.flavor == .postgres {
            let started = try await observer.startsWithRow(given, record: RowMapping.storedRecord(of: stored))
            withRow = started.map(\.statement)
            given.startedWithRow = Set(started.map(\.name))
        }
        let (write, statements) = (given, withRow)
        let created: JSONObject = try await writing(collection, access) {
            try await catalog.database.transaction { db in
                _ = try await observer?.before(write, records: [], db: db)
                // The parent must be one of the caller's rows (its role may filter them).
                if let association = target.association { try await catalog.requireParent(association, db: db) }
                try await assignment.requireVisibleTargets(catalog: catalog, db: db)
                var q = SQLFragment(statements.isEmpty ? "INSERT INTO " : "WITH \(RowMapping.writtenRow) AS (INSERT INTO ")
                q.append(identifier: collection.tableName)
                // In the order of their names, so the same fields give the same text every time.
                let valued = assignment.columns.sorted { $0.key < $1.key }
                let computed = assignment.columnExpressions.sorted { $0.key < $1.key }
                if valued.isEmpty && computed.isEmpty {
                    q.append(" DEFAULT VALUES")
                } else {
                    q.append(" (")
                    q.append(joining: (valued.map(\.key) + computed.map(\.key)).map { SQLFragment.identifier($0) }, separator: ", ")
                    q.append(") VALUES (")
                    q.append(joining: valued.map { .bind($0.value) } + computed.map(\.value), separator: ", ")
                    q.append(")")
                }
                // The columns by name rather than `*`, so a column added since does not change
                // what a statement prepared before it returns.
                q.append(" RETURNING ")
                q.append(joining: returned.map { SQLFragment.identifier($0) }, separator: ", ")
                if !statements.isEmpty {
                    q.append(")")
                    for (i, statement) in statements.enumerated() {
                        q.append(", started\(i) AS (")
                        q.append(statement)
                        q.append(")")
                    }
                    q.append(" SELECT * FROM \(RowMapping.writtenRow)")
                }
                // Every create of a collection repeats one of a few texts: prepared once per
                // connection, each is parsed and planned once.
                q.preparedShape = stored.columns.map { "\($0.name) \(db.flavor.columnType(for: $0))" }.joined(separator: ",")
                guard let row = try await db.query(q).first else { throw DataError.invalid("the database did not return the new record") }
                if let key = collection.fields.first(where: { $0.primaryKey && $0.autoIncrement }), assignment.columns[key.name] != nil,
                    let catchUp = db.flavor.keyCatchUp(table: collection.tableName, column: key.name)
                {
                    try await db.execute(catchUp)
                }
                try await assignment.linkRelations(of: row, collection: collection, catalog: catalog, db: db)
                if let association = target.association, association.field.type == .belongsToMany {
                    try await Self.linkJunction(association, targetRow: row, catalog: catalog, db: db)
                }
                if let observer {
                    let record = Self.fullRecords([row], of: collection, catalog: catalog)[0]
                    try await observer.after(write, changes: [RecordChange(record: record, changed: Array(values.keys))], db: db)
                }
                return RowMapping.records([row], collection: collection, columns: Self.readableColumns(of: collection, catalog: catalog, access: access))[0]
            }
        }
        return ["data": .object(created)]
    }

    /// Updates the records named by `filterByTk` and/or `filter`; returns `{data: [records]}`.
    public func update(app: String, _ request: RecordRequest, access: RecordAccess) async throws -> JSON {
        let (catalog, target) = try await resolve(app: app, request, access: access, for: .update)
        guard let values = request.values, !values.isEmpty else {
            throw DataError.invalid("values is required: the fields to change, such as {\"Title\": \"...\"}")
        }
        guard Self.hasSelector(request) else {
            throw DataError.invalid("an update needs filterByTk or a non-empty filter, so it cannot change every record by accident")
        }
        var draft = try Assignment(
            values: values, collection: target.collection, catalog: catalog, access: access, whitelist: request.whitelist, blacklist: request.blacklist)
        if !draft.columns.isEmpty || !draft.links.isEmpty {
            for (name, value) in try maintainedValues(of: target.collection, catalog: catalog, access: access, creating: false) {
                draft.columns[name] = value
            }
        }
        let assignment = draft
        for key in target.collection.primaryKey where assignment.columns[key.name] != nil {
            throw DataError.invalid("values.\(key.name) is the primary key of '\(target.collection.name)' and cannot be changed")
        }
        guard !assignment.columns.isEmpty || !assignment.links.isEmpty else { throw DataError.invalid("values names no field to change") }
        let condition = try conditions(request, target: target, catalog: catalog)
        let collection = target.collection
        let observer = try await hooks.observer(app: app, collection: collection.name, action: .update)
        let write = RecordWrite(app: app, collection: collection.name, action: .update, caller: access.caller, values: values)
        let rows: [Row] = try await writing(collection, access) {
            try await catalog.database.transaction { db in
                // What the records were, for the observer to judge them and to tell which fields the
                // update changed; locked on PostgreSQL, so what is judged is what is written.
                let previous = observer == nil ? [] : try await db.query(Self.locking(catalog.select(collection, where: condition), db))
                let judged = try await observer?.before(
                    write, records: Self.readableRecords(previous, of: collection, catalog: catalog, access: access), db: db)
                try await assignment.requireVisibleTargets(catalog: catalog, db: db)
                let rows = try await db.query(
                    assignment.columns.isEmpty
                        ? catalog.select(collection, where: condition) : catalog.update(collection, set: assignment.columns, where: condition))
                for row in rows {
                    try await assignment.linkRelations(of: row, collection: collection, catalog: catalog, db: db)
                }
                try await catalog.requireStillInside(collection, rows: rows, db: db)
                if judged == true { try Self.requireJudged(rows, previous, of: collection, catalog: catalog) }
                if let observer, !rows.isEmpty {
                    try await observer.after(write, changes: Self.changes(from: previous, to: rows, of: collection, catalog: catalog), db: db)
                }
                return rows
            }
        }
        let columns = Self.readableColumns(of: collection, catalog: catalog, access: access)
        let records = RowMapping.records(rows.prefix(budget.maxRows), collection: collection, columns: columns).map { JSON.object($0) }
        var result: JSONObject = ["data": .array(Array(records))]
        if rows.count > budget.maxRows {
            result["meta"] = [
                "count": JSON(rows.count), "truncated": true, "notes": JSON(["\(rows.count) records were updated; the first \(budget.maxRows) are shown"]),
            ]
        }
        return .object(result)
    }

    /// How many records a destroy of `request` would delete now, as the caller may see them (what a
    /// confirmation names before the destroy runs).
    public func destroyCount(app: String, _ request: RecordRequest, access: RecordAccess) async throws -> Int64 {
        let (catalog, target) = try await resolve(app: app, request, access: access, for: .destroy)
        guard Self.hasSelector(request) else {
            throw DataError.invalid("a destroy needs filterByTk or a non-empty filter; Portico refuses to delete every record of '\(target.collection.name)'")
        }
        return try await count(target.collection, where: try conditions(request, target: target, catalog: catalog), in: catalog)
    }

    /// Deletes the records named by `filterByTk` and/or `filter`; returns `{data: count}`.
    public func destroy(app: String, _ request: RecordRequest, access: RecordAccess) async throws -> JSON {
        let (catalog, target) = try await resolve(app: app, request, access: access, for: .destroy)
        guard Self.hasSelector(request) else {
            throw DataError.invalid("a destroy needs filterByTk or a non-empty filter; Portico refuses to delete every record of '\(target.collection.name)'")
        }
        let condition = try conditions(request, target: target, catalog: catalog)
        let collection = target.collection
        let links = try Self.junctionLinks(to: collection, in: catalog)
        if let observer = try await hooks.observer(app: app, collection: collection.name, action: .destroy) {
            // Heard in one transaction with the records as they were, whatever the links.
            let write = RecordWrite(app: app, collection: collection.name, action: .destroy, caller: access.caller, values: nil)
            let count: Int = try await writing(collection, access) {
                try await catalog.database.transaction { db in
                    let rows = try await db.query(Self.locking(catalog.select(collection, where: condition), db))
                    let judged = try await observer.before(
                        write, records: Self.readableRecords(rows, of: collection, catalog: catalog, access: access), db: db)
                    guard !rows.isEmpty else { return 0 }
                    let count =
                        links.isEmpty
                        ? try await db.query(catalog.delete(collection, where: condition)).count
                        : try await Self.destroyWithLinks(collection, where: condition, links: links, catalog: catalog)
                    if judged, count > rows.count { throw Self.changedMeanwhile(collection) }
                    let removed = Self.fullRecords(rows, of: collection, catalog: catalog).map { RecordChange(record: $0, changed: []) }
                    try await observer.after(write, changes: removed, db: db)
                    return count
                }
            }
            return ["data": JSON(count)]
        }
        let count: Int = try await writing(collection, access) {
            guard !links.isEmpty else { return try await catalog.database.query(catalog.delete(collection, where: condition)).count }
            return try await Self.destroyWithLinks(collection, where: condition, links: links, catalog: catalog)
        }
        return ["data": JSON(count)]
    }

    /// A junction column that points at records of a collection: `column` of `junction` holds
    /// values of the collection's `key`.
    struct JunctionLink: Equatable {
        let junction: CollectionSchema
        let column: String
        let key: String
    }

    /// Every belongsToMany junction that links records of `collection`: its own relations'
    /// (through `foreignKey`) and other collections' relations to it (through `otherKey`).
    static func junctionLinks(to collection: CollectionSchema, in catalog: Catalog) throws(DataError) -> [JunctionLink] {
        var links: [JunctionLink] = []
        for source in catalog.unscoped.values.sorted(by: { $0.name < $1.name }) {
            for field in source.fields where field.type == .belongsToMany {
                guard let relation = field.relation, let through = relation.through else { continue }
                var found: [JunctionLink] = []
                if source.name == collection.name {
                    found.append(JunctionLink(junction: try catalog.junction(through), column: relation.foreignKey, key: relation.sourceKey))
                }
                if relation.target == collection.name, let otherKey = relation.otherKey {
                    found.append(JunctionLink(junction: try catalog.junction(through), column: otherKey, key: relation.targetKey))
                }
                for link in found where !links.contains(link) { links.append(link) }
            }
        }
        return links
    }

    /// Keys to a statement, so a destroy of many records never binds more values than a database allows.
    static let keysPerStatement = 500

    static func binary(_ left: SQLFragment, _ op: String, _ value: SQLValue) -> SQLFragment {
        var f = left
        f.append(" \(op) ")
        f.append(bind: value)
        return f
    }

    /// Deletes the records `condition` selects and, first, their rows in the junctions that link
    /// them (a link belongs to its relation, not to either record, as in NocoBase). In one
    /// transaction: the records are read, their links removed, then exactly those records deleted.
    static func destroyWithLinks(_ collection: CollectionSchema, where condition: SQLFragment?, links: [JunctionLink], catalog: Catalog) async throws -> Int {
        let primary = collection.primaryKey.map(\.name)
        guard !primary.isEmpty else { throw DataError.invalid("'\(collection.name)' has no primary key, so its records cannot be told apart for deletion") }
        var keyColumns = primary
        for link in links where !keyColumns.contains(link.key) { keyColumns.append(link.key) }
        return try await catalog.database.transaction { [keyColumns] db in
            let rows: [Row]
            do {
                rows = try await db.query(catalog.select(collection, columns: keyColumns, where: condition))
            } catch let error as StoreError where error.kind == .tooLarge {
                throw DataError.invalid(
                    "this destroy selects too many records of '\(collection.name)' to remove their belongsToMany links in one call (\(error.message)); narrow the filter and destroy them in parts"
                )
            }
            guard !rows.isEmpty else { return 0 }
            for link in links {
                let values = Array(
                    Set(
                        rows.compactMap { row -> SQLValue? in
                            guard let value = row[link.key], value != .null else { return nil }
                            return value
                        }))
                for start in stride(from: 0, to: values.count, by: keysPerStatement) {
                    var q = SQLFragment("DELETE FROM ")
                    q.append(identifier: link.junction.tableName)
                    q.append(" WHERE ")
                    q.append(Self.isIn(.identifier(link.column), values[start..<min(values.count, start + keysPerStatement)]))
                    try await db.execute(q)
                }
            }
            var deleted = 0
            // Exactly the records read, by key (a single key column, or the whole key per record).
            let chunk = primary.count == 1 ? keysPerStatement : max(1, keysPerStatement / primary.count)
            for start in stride(from: 0, to: rows.count, by: chunk) {
                var q = SQLFragment("DELETE FROM ")
                q.append(table: collection.tableName, as: rootAlias)
                q.append(" WHERE ")
                let part = rows[start..<min(rows.count, start + chunk)]
                if primary.count == 1 {
                    q.append(Self.isIn(.column(primary[0], of: rootAlias), part.map { $0[primary[0]] ?? .null }))
                } else {
                    let matches = part.map { row in
                        SQLFragment.all(
                            primary.map { name in
                                var f = SQLFragment.column(name, of: rootAlias)
                                f.append(" = ")
                                f.append(bind: row[name] ?? .null)
                                return f
                            })!
                    }
                    q.append("(")
                    q.append(joining: matches, separator: ") OR (")
                    q.append(")")
                }
                q.append(" RETURNING 1 AS deleted")
                deleted += try await db.query(q).count
            }
            return deleted
        }
    }

    /// `column IN (v1, v2, ...)`, each value bound.
    static func isIn(_ column: SQLFragment, _ values: some Collection<SQLValue>) -> SQLFragment {
        var f = column
        f.append(" IN (")
        f.append(joining: values.map { SQLFragment.bind($0) }, separator: ", ")
        f.append(")")
        return f
    }

    /// What Portico keeps for each record: `createdAt` and `updatedAt` (now), `createdById` and
    /// `updatedById` (the caller, whatever its role).
    func maintainedValues(of collection: CollectionSchema, catalog: Catalog, access: RecordAccess, creating: Bool) throws(DataError) -> [String: SQLValue] {
        var values: [String: SQLValue] = [:]
        let now = UTCText.format(clock.date, dateOnly: false)
        for field in (catalog.unscoped[collection.name] ?? collection).columns {
            switch field.maintained {
            case .createdAt? where creating, .updatedAt?:
                values[field.name] = try ValueCoercion.coerce(.string(now), to: field, at: field.name)
            case .createdBy? where creating, .updatedBy?:
                values[field.name] = try ValueCoercion.coerce(access.caller.userID.map { .int($0) } ?? .null, to: field, at: field.name)
            default:
                break
            }
        }
        return values
    }

    /// Whether a request names specific records (a key or a filter with at least one condition).
    static func hasSelector(_ request: RecordRequest) -> Bool {
        if let tk = request.filterByTk, !tk.isNull { return true }
        guard let filter = request.filter, !filter.isNull else { return false }
        return Self.hasCondition(filter)
    }

    static func hasCondition(_ filter: JSON) -> Bool {
        switch filter {
        case .object(let object):
            return object.contains { key, value in
                if key == "$and" || key == "$or" { return value.arrayValue?.contains(where: hasCondition) ?? false }
                return true
            }
        default:
            return false
        }
    }

    /// Written records with every column, for the observer of writes (workflows read what their owner's nodes then may).
    static func fullRecords(_ rows: [Row], of collection: CollectionSchema, catalog: Catalog) -> [JSONObject] {
        let full = catalog.unscoped[collection.name] ?? collection
        return RowMapping.records(rows, collection: full, columns: full.columns.map(\.name))
    }

    /// The records as the writer may read them (its `get` rule), for the rules that judge a write.
    static func readableRecords(_ rows: [Row], of collection: CollectionSchema, catalog: Catalog, access: RecordAccess) -> [JSONObject] {
        RowMapping.records(
            rows, collection: catalog.unscoped[collection.name] ?? collection, columns: readableColumns(of: collection, catalog: catalog, access: access))
    }

    /// `select` with its rows locked until the transaction ends, where the database has such locks
    /// (PostgreSQL; SQLite's writer already holds the whole database).
    static func locking(_ select: SQLFragment, _ db: any Database) -> SQLFragment {
        guard db.flavor == .postgres else { return select }
        var q = select
        q.append(" FOR UPDATE")
        return q
    }

    /// Refuses an update that wrote a record its rules did not judge: one another writer made
    /// match its condition between the rules' reading and the update (PostgreSQL's read committed).
    static func requireJudged(_ rows: [Row], _ judged: [Row], of collection: CollectionSchema, catalog: Catalog) throws {
        let keys = (catalog.unscoped[collection.name] ?? collection).primaryKey.map(\.name)
        let seen = Set(judged.map { row in keys.map { row[$0] ?? .null } })
        if rows.contains(where: { row in !seen.contains(keys.map { row[$0] ?? .null }) }) { throw changedMeanwhile(collection) }
    }

    static func changedMeanwhile(_ collection: CollectionSchema) -> DataError {
        DataError(
            .conflict, "records of '\(collection.name)' changed while this write was being judged by its before-action rules; send it again")
    }

    /// Each updated record with the fields whose values the update changed, matched to what it
    /// was by its primary key.
    static func changes(from previous: [Row], to rows: [Row], of collection: CollectionSchema, catalog: Catalog) -> [RecordChange] {
        let keys = (catalog.unscoped[collection.name] ?? collection).primaryKey.map(\.name)
        func key(_ record: JSONObject) -> [JSON] { keys.map { record[$0] ?? .null } }
        let before = Dictionary(
            Self.fullRecords(previous, of: collection, catalog: catalog).map { (key($0), $0) }, uniquingKeysWith: { first, _ in first })
        return Self.fullRecords(rows, of: collection, catalog: catalog).map { record in
            guard let old = before[key(record)] else { return RecordChange(record: record, changed: Array(record.keys)) }
            return RecordChange(record: record, changed: record.keys.filter { old[$0] != record[$0] })
        }
    }

    /// The columns of a written record the caller may read back (its `get` rule; the key alone when it may not get).
    static func readableColumns(of collection: CollectionSchema, catalog: Catalog, access: RecordAccess) -> [String] {
        let full = catalog.unscoped[collection.name] ?? collection
        switch access.decision(collection.name, .get) {
        case .allow(let rule):
            guard let fields = rule.fields else { return full.columns.map(\.name) }
            return full.columns.filter { $0.primaryKey || fields.contains($0.name) }.map(\.name)
        case .deny:
            return full.primaryKey.map(\.name)
        }
    }

    static func linkJunction(_ association: Association, targetRow: Row, catalog: Catalog, db: any Database) async throws {
        let relation = association.field.relation!
        guard let through = relation.through, let otherKey = relation.otherKey, let targetValue = targetRow[relation.targetKey] else { return }
        try await db.execute(junctionInsert(through, relation.foreignKey, otherKey, source: association.sourceKeyValue, target: targetValue))
    }

    /// `INSERT INTO through (foreignKey, otherKey) VALUES (source, target)`: one belongsToMany link.
    static func junctionInsert(_ through: String, _ foreignKey: String, _ otherKey: String, source: SQLFragment, target: SQLValue) -> SQLFragment {
        var q = SQLFragment("INSERT INTO ")
        q.append(identifier: through)
        q.append(" (")
        q.append(identifier: foreignKey)
        q.append(", ")
        q.append(identifier: otherKey)
        q.append(") VALUES (")
        q.append(source)
        q.append(", ")
        q.append(bind: target)
        q.append(")")
        return q
    }

    /// Runs a write and turns database constraint failures into messages about the collection's fields.
    func writing<T: Sendable>(_ collection: CollectionSchema, _ access: RecordAccess, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as StoreError where error.kind == .constraint {
            throw DataError(.conflict, Self.explain(error, collection: collection, readsEveryRow: access.readsEveryRow(of: collection.name)))
        } catch let error as StoreError where error.kind == .readOnly {
            throw DataError(.forbidden, "the database is read-only: \(error.message)")
        }
    }

    /// A constraint failure in the collection's words, naming the field when the database named its
    /// column. To a caller whose role hides some rows, a unique value taken is not said to exist:
    /// the row that holds it may be one they cannot see, and "already exists" would tell them so.
    static func explain(_ error: StoreError, collection: CollectionSchema, readsEveryRow: Bool = true) -> String {
        let field = error.column.flatMap { collection.field($0)?.name }
        switch error.constraint {
        case .unique? where !readsEveryRow:
            return
                "the '\(collection.name)' record cannot be written with these values: the key, or a value of a field kept unique, cannot be used; choose other values"
        case .notNull?:
            return "'\(field ?? "a required field")' of '\(collection.name)' is required and cannot be null"
        case .unique?:
            return "a '\(collection.name)' record with this \(field ?? "key") already exists"
        case .foreignKey?:
            let links = collection.relations.filter { $0.type == .belongsTo }.map { "\($0.relation!.foreignKey) → \($0.relation!.target)" }
            return
                "the change would break a link between records: a belongsTo value must name an existing record (\(links.joined(separator: ", "))), and a record that others still point to cannot be deleted until they are removed or relinked"
        default:
            return "the database refused the change: \(error.message)"
        }
    }
}

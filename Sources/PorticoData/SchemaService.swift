import Foundation
import PorticoBase
public import PorticoJSON
import PorticoStore

/// A field as `collections_create` and `fields_create` describe it (NocoBase's field options).
public struct FieldSpec: Sendable {
    public var name: String
    public var type: FieldType
    public var title: String?
    public var required = false
    public var unique = false
    public var defaultValue: JSON?
    /// For `select`: the allowed values.
    public var options: [String]?
    /// For strings: the maximum length; for decimals: the precision.
    public var length: Int?
    public var scale: Int?
    /// For relations: the collection on the other side.
    public var target: String?
    /// belongsTo: the column on this collection (default `<name>Id`); hasMany: the column on the
    /// target (default `<collection>Id`); belongsToMany: the junction's column for this side.
    public var foreignKey: String?
    /// belongsToMany: the junction collection (default `<collection>_<target>`) and its column
    /// for the target's side (default `<target>Id`).
    public var through: String?
    public var otherKey: String?

    public init(name: String, type: FieldType) {
        self.name = name
        self.type = type
    }
}

/// Changes an app's collections and fields. Every change is a migration of the real tables in
/// one transaction of the app's database, with the definitions beside them, so a failed change
/// leaves the tables and definitions as they were; data is kept (columns are added, renamed,
/// converted where every value converts, or dropped only when asked).
public struct SchemaService: Sendable {
    public let catalogs: CatalogStore
    /// Told the app's name after each change that committed (MCP's resource list changes).
    let changed: @Sendable (String) -> Void

    public init(catalogs: CatalogStore, changed: @escaping @Sendable (String) -> Void = { _ in }) {
        self.catalogs = catalogs
        self.changed = changed
    }

    /// The fields Portico adds to every collection it creates, as NocoBase does.
    public static let systemFieldNames: Set<String> = ["id", "createdAt", "updatedAt", "createdById", "updatedById"]
    static let reservedPrefixes = ["portico_", "sqlite_", "pg_", "__"]

    // MARK: Collections

    public func createCollection(app: String, name: String, title: String?, description: String?, fields specs: [FieldSpec]) async throws
        -> CollectionSchema
    {
        let catalog = try await catalogs.catalog(app: app)
        try Self.validateName(name, kind: "collection")
        try Self.requireNew(name, in: catalog)
        guard specs.count <= 200 else { throw DataError.invalid("fields: at most 200 per collection, got \(specs.count)") }
        var collection = CollectionSchema(name: name, title: title, tableName: name, fields: [])
        collection.description = description
        let id = Field(name: "id", type: .integer, title: "ID", nullable: false, primaryKey: true, autoIncrement: true)
        collection.fields.append(id)
        var plan = Plan()
        for (index, spec) in specs.enumerated() {
            guard !Self.systemFieldNames.contains(spec.name) else {
                throw DataError.invalid("fields[\(index)]: '\(spec.name)' is kept by Portico on every collection it creates; leave it out")
            }
            try add(spec, to: &collection, catalog: catalog, plan: &plan, at: "fields[\(index)]")
        }
        collection.fields += Field.Maintained.allCases.map(\.field)
        let created = collection
        let work = plan
        try await change(app: app) { db in
            for statement in DDL.createTable(created, flavor: db.flavor) { try await db.execute(statement) }
            try await CatalogStore.insertDefinition(created, app: app, db: db)
            try await work.apply(app: app, db: db)
        }
        return collection
    }

    public func updateCollection(app: String, name: String, title: String??, description: String??) async throws -> CollectionSchema {
        var collection = try await catalogs.catalog(app: app).collection(name)
        if let title { collection.title = title }
        if let description { collection.description = description }
        let changed = collection
        try await change(app: app) { db in
            var q = SQLFragment("UPDATE portico_collections SET title = ")
            q.append(bind: changed.title.map { .text($0) } ?? .null)
            q.append(", description = ")
            q.append(bind: changed.description.map { .text($0) } ?? .null)
            q.append(" WHERE app = ")
            q.append(bind: .text(app))
            q.append(" AND name = ")
            q.append(bind: .text(name))
            try await db.execute(q)
        }
        return collection
    }

    /// Drops a collection with its rows. Refused while other collections' relations point at
    /// it, unless `cascade`, which removes those relation fields (and junctions) too; the other
    /// collections keep their columns.
    public func destroyCollection(app: String, name: String, cascade: Bool) async throws -> [String] {
        let catalog = try await catalogs.catalog(app: app)
        let collection = try catalog.collection(name)
        let referencing = catalog.collections.values.filter { $0.name != name }.flatMap { other in
            other.relations.filter { $0.relation?.target == name || $0.relation?.through == name }.map { (other, $0) }
        }
        if !referencing.isEmpty, !cascade {
            throw DataError(
                .conflict,
                "'\(name)' is referenced by \(referencing.map { "\($0.0.name).\($0.1.name)" }.joined(separator: ", ")); remove those fields first, or pass cascade: true to remove them with it"
            )
        }
        // Junctions of this collection's own belongsToMany relations go with it.
        let junctions = collection.relations.compactMap { $0.type == .belongsToMany ? $0.relation?.through : nil }.filter { catalog.collections[$0] != nil }
        let referencingJunctions = referencing.compactMap { $0.1.type == .belongsToMany ? $0.1.relation?.through : nil }
        let ownJunctions = Set(junctions + referencingJunctions).filter { $0 != name }
        let removed = referencing.map { "\($0.0.name).\($0.1.name)" } + ownJunctions.sorted()
        try await change(app: app) { db in
            // Other collections lose their relation fields to it; their tables lose the constraint.
            var touched: [String: CollectionSchema] = [:]
            for (other, field) in referencing {
                var schema = touched[other.name] ?? other
                schema.fields.removeAll { $0.name == field.name }
                touched[other.name] = schema
            }
            for junction in ownJunctions {
                guard let j = catalog.collections[junction] else { continue }
                try await Self.dropTable(j, app: app, db: db)
                touched[junction] = nil
            }
            // hasMany keys this collection put on its targets stay as plain columns (they hold data).
            for (otherName, schema) in touched {
                try await Self.rebuild(from: catalog.collections[otherName]!, to: schema, renames: [:], app: app, db: db, removedTarget: name)
                try await CatalogStore.writeFields(schema, app: app, db: db)
            }
            try await Self.dropTable(collection, app: app, db: db)
        }
        return removed
    }

    // MARK: Fields

    public func createField(app: String, collection name: String, field spec: FieldSpec) async throws -> Field {
        let catalog = try await catalogs.catalog(app: app)
        var collection = try catalog.collection(name)
        let before = collection
        var plan = Plan()
        let field = try add(spec, to: &collection, catalog: catalog, plan: &plan, at: "field")
        let after = collection
        let work = plan
        try await change(app: app) { db in
            for column in after.columns where before.field(column.name) == nil {
                try await Self.addColumn(column, to: after, db: db)
            }
            try await CatalogStore.writeFields(after, app: app, db: db)
            try await work.apply(app: app, db: db)
        }
        return field
    }

    /// Renames a field (`field.name`), changes its title, or changes its type when every stored
    /// value converts (the first that does not is named, and nothing changes).
    public func updateField(app: String, collection name: String, field fieldName: String, changes spec: JSONObject) async throws -> Field {
        let catalog = try await catalogs.catalog(app: app)
        var collection = try catalog.collection(name)
        guard let index = collection.fields.firstIndex(where: { $0.name == fieldName }) else {
            throw DataError.notFound("'\(name)' has no field '\(fieldName)'; its fields are: \(collection.fields.map(\.name).joined(separator: ", "))")
        }
        let old = collection.fields[index]
        var new = old
        let allowed: Set<String> = ["name", "title", "type", "required", "options", "length", "scale", "default"]
        if let unknown = spec.keys.first(where: { !allowed.contains($0) }) {
            throw DataError.invalid("field.\(unknown) cannot be changed here; fields_update changes \(allowed.sorted().joined(separator: ", "))")
        }
        if let newName = spec["name"]?.stringValue, newName != old.name {
            guard old.maintained == nil, !old.primaryKey else { throw DataError.invalid("'\(old.name)' is kept by Portico and cannot be renamed") }
            try Self.validateName(newName, kind: "field")
            guard collection.field(newName) == nil, !collection.fields.contains(where: { $0.name.lowercased() == newName.lowercased() }) else {
                throw DataError(.conflict, "'\(name)' already has a field '\(newName)'")
            }
            new.name = newName
        }
        if let title = spec["title"] { new.title = title.stringValue }
        if let required = spec["required"]?.boolValue { new.nullable = !required }
        if let options = spec["options"] { new.options = options.arrayValue?.compactMap(\.stringValue) }
        if let length = spec["length"]?.intValue { new.length = Int(length) }
        if let scale = spec["scale"]?.intValue { new.scale = Int(scale) }
        if let value = spec["default"] { new.defaultValue = value.isNull ? nil : value }
        if let typeName = spec["type"]?.stringValue {
            guard let type = FieldType(rawValue: typeName), !type.isRelation else {
                throw DataError.invalid("field.type: '\(typeName)' is not a column type; column types are \(Self.columnTypes)")
            }
            guard !old.type.isRelation else { throw DataError.invalid("'\(old.name)' is a relation; remove it and create the field anew") }
            new.type = type
        }
        guard !old.type.isRelation || (new.type == old.type && new.nullable == old.nullable) else {
            throw DataError.invalid("of a relation only the name and title can change")
        }
        let structural =
            new.type != old.type || new.nullable != old.nullable || new.length != old.length || new.scale != old.scale
            || new.options != old.options || new.defaultValue != old.defaultValue
        if structural, old.primaryKey || old.maintained != nil || collection.relations.contains(where: { $0.localKey == old.name && $0.type == .belongsTo }) {
            throw DataError.invalid("'\(old.name)' is a key or kept by Portico; only its title can change")
        }
        collection.fields[index] = new
        // Relations that name the renamed column follow it.
        if new.name != old.name, old.isColumn {
            for (i, field) in collection.fields.enumerated() where field.type == .belongsTo && field.relation?.foreignKey == old.name {
                collection.fields[i].relation?.foreignKey = new.name
                collection.fields[i].relation?.sourceKey = new.name
            }
        }
        let before = catalog.collections[name]!
        let after = collection
        let changed = new
        try await change(app: app) { db in
            if structural {
                try await Self.convert(old, to: changed, in: before, db: db)
                try await Self.rebuild(from: before, to: after, renames: [changed.name: old.name], app: app, db: db)
            } else if changed.name != old.name, old.isColumn {
                let q = SQLFragment.quote
                try await db.execute("ALTER TABLE \(q(after.tableName)) RENAME COLUMN \(q(old.name)) TO \(q(changed.name))")
            }
            try await CatalogStore.writeFields(after, app: app, db: db)
        }
        return new
    }

    /// Removes a field and its column with the column's data; a relation's key column stays
    /// unless it is the field itself.
    public func destroyField(app: String, collection name: String, field fieldName: String) async throws {
        let catalog = try await catalogs.catalog(app: app)
        var collection = try catalog.collection(name)
        guard let field = collection.field(fieldName) else {
            throw DataError.notFound("'\(name)' has no field '\(fieldName)'; its fields are: \(collection.fields.map(\.name).joined(separator: ", "))")
        }
        guard !field.primaryKey, field.maintained == nil else { throw DataError.invalid("'\(fieldName)' is kept by Portico and cannot be removed") }
        if field.isColumn, let user = collection.relations.first(where: { $0.localKey == fieldName }) {
            throw DataError(.conflict, "the relation '\(user.name)' links on '\(fieldName)'; remove '\(user.name)' first")
        }
        let inverse = catalog.collections.values.flatMap { other in
            other.relations.filter { $0.relation?.target == name && $0.type == .hasMany && $0.relation?.foreignKey == fieldName }.map {
                "\(other.name).\($0.name)"
            }
        }
        guard inverse.isEmpty else { throw DataError(.conflict, "\(inverse.joined(separator: ", ")) links on '\(fieldName)'; remove it first") }
        let before = collection
        collection.fields.removeAll { $0.name == fieldName }
        let after = collection
        let junction = field.type == .belongsToMany ? field.relation?.through.flatMap { catalog.collections[$0] } : nil
        try await change(app: app) { db in
            if field.isColumn || field.type == .belongsTo {
                try await Self.rebuild(from: before, to: after, renames: [:], app: app, db: db)
            }
            try await CatalogStore.writeFields(after, app: app, db: db)
            if let junction,
                !catalog.collections.values.contains(where: { c in
                    c.relations.contains { $0.relation?.through == junction.name && !(c.name == name && $0.name == fieldName) }
                })
            {
                try await Self.dropTable(junction, app: app, db: db)
            }
        }
    }

    // MARK: Building fields

    /// What a change does beyond its own table: columns added to relation targets, junctions.
    struct Plan {
        var targetColumns: [(collection: CollectionSchema, field: Field)] = []
        var junctions: [CollectionSchema] = []

        func apply(app: String, db: any Database) async throws {
            for (collection, field) in targetColumns {
                var updated = collection
                updated.fields.append(field)
                try await addColumn(field, to: updated, db: db)
                let q = SQLFragment.quote
                try await db.execute("CREATE INDEX \(q("idx_\(collection.tableName)_\(field.name)")) ON \(q(collection.tableName)) (\(q(field.name)))")
                try await CatalogStore.writeFields(updated, app: app, db: db)
            }
            for junction in junctions {
                for statement in DDL.createTable(junction, flavor: db.flavor) { try await db.execute(statement) }
                try await CatalogStore.insertDefinition(junction, app: app, db: db)
            }
        }
    }

    static let columnTypes = FieldType.allCases.filter { !$0.isRelation }.map(\.rawValue).joined(separator: ", ")

    /// Adds `spec` (and the columns a relation needs) to `collection`; work on other tables goes to `plan`.
    @discardableResult
    func add(_ spec: FieldSpec, to collection: inout CollectionSchema, catalog: Catalog, plan: inout Plan, at path: String) throws(DataError) -> Field {
        try Self.validateName(spec.name, kind: "field", at: path)
        guard !collection.fields.contains(where: { $0.name.lowercased() == spec.name.lowercased() }) else {
            throw DataError(.conflict, "\(path): '\(collection.name)' already has a field '\(spec.name)'")
        }
        var field = Field(name: spec.name, type: spec.type, title: spec.title, nullable: !spec.required, length: spec.length, scale: spec.scale)
        if spec.type == .select {
            guard let options = spec.options, !options.isEmpty else { throw .invalid("\(path): a select field needs options, the values it allows") }
            field.options = options
        } else if spec.options != nil {
            throw .invalid("\(path): options apply to select fields only")
        }
        guard spec.type.isRelation || spec.target == nil else { throw .invalid("\(path): target applies to relations only") }
        if !spec.type.isRelation {
            field.unique = spec.unique
            if let value = spec.defaultValue, !value.isNull {
                _ = try ValueCoercion.coerce(value, to: field, at: "\(path).default")
                field.defaultValue = value
            }
            if spec.required, spec.defaultValue == nil || spec.defaultValue?.isNull == true, catalog.collections[collection.name] != nil {
                throw .invalid("\(path): a required field added to an existing collection needs a default, the value its records get")
            }
            collection.fields.append(field)
            return field
        }
        guard let targetName = spec.target, !targetName.isEmpty else {
            throw .invalid("\(path): a \(spec.type.rawValue) field needs target, the collection it links to")
        }
        let isSelf = targetName == collection.name
        guard isSelf || catalog.collections[targetName] != nil else {
            throw .notFound("\(path).target: there is no collection '\(targetName)'; collections: \(catalog.names.joined(separator: ", "))")
        }
        let target = isSelf ? collection : catalog.collections[targetName]!
        guard let targetKey = target.primaryKey.first, target.primaryKey.count == 1 else {
            throw .invalid("\(path).target: '\(targetName)' has no single-column key to link to")
        }
        let sourceKey = collection.primaryKey.first?.name ?? "id"
        switch spec.type {
        case .belongsTo:
            let foreignKey = spec.foreignKey ?? spec.name + "Id"
            try Self.validateName(foreignKey, kind: "field", at: "\(path).foreignKey")
            if let existing = collection.field(foreignKey) {
                guard existing.type == targetKey.type || (existing.type == .integer && targetKey.type == .integer) else {
                    throw .invalid(
                        "\(path).foreignKey: '\(foreignKey)' is a \(existing.type.rawValue); it must be a \(targetKey.type.rawValue) like \(targetName).\(targetKey.name)"
                    )
                }
            } else {
                collection.fields.append(Field(name: foreignKey, type: targetKey.type, title: spec.title.map { "\($0) (key)" }, nullable: !spec.required))
            }
            field.relation = Relation(target: targetName, foreignKey: foreignKey, sourceKey: foreignKey, targetKey: targetKey.name)
        case .hasMany:
            let foreignKey = spec.foreignKey ?? Self.lowerFirst(collection.name) + "Id"
            try Self.validateName(foreignKey, kind: "field", at: "\(path).foreignKey")
            if isSelf {
                if collection.field(foreignKey) == nil { collection.fields.append(Field(name: foreignKey, type: .integer)) }
            } else if target.field(foreignKey) == nil {
                plan.targetColumns.append((target, Field(name: foreignKey, type: .integer, title: "\(collection.name) (key)")))
            }
            field.relation = Relation(target: targetName, foreignKey: foreignKey, sourceKey: sourceKey, targetKey: targetKey.name)
        case .belongsToMany:
            let through = spec.through ?? "\(collection.name)_\(targetName)"
            try Self.validateName(through, kind: "collection", at: "\(path).through")
            let foreignKey = spec.foreignKey ?? Self.lowerFirst(collection.name) + "Id"
            var otherKey = spec.otherKey ?? Self.lowerFirst(targetName) + "Id"
            if otherKey == foreignKey { otherKey += "2" }
            if let existing = catalog.collections[through] {
                guard existing.field(foreignKey) != nil, existing.field(otherKey) != nil else {
                    throw .invalid("\(path).through: '\(through)' exists but lacks \(foreignKey) and \(otherKey); name another junction")
                }
            } else {
                guard !plan.junctions.contains(where: { $0.name == through }) else { throw .invalid("\(path).through: '\(through)' is named twice") }
                try Self.requireNew(through, in: catalog)
                plan.junctions.append(
                    CollectionSchema(
                        name: through, title: "\(collection.name) ↔ \(targetName)", tableName: through,
                        fields: [
                            Field(name: foreignKey, type: .integer, nullable: false, primaryKey: true),
                            Field(name: otherKey, type: targetKey.type, nullable: false, primaryKey: true),
                        ]))
            }
            field.relation = Relation(
                target: targetName, foreignKey: foreignKey, sourceKey: sourceKey, targetKey: targetKey.name, through: through, otherKey: otherKey)
        default:
            break
        }
        collection.fields.append(field)
        return field
    }

    static func lowerFirst(_ name: String) -> String { name.prefix(1).lowercased() + name.dropFirst() }

    public static func validateName(_ name: String, kind: String, at path: String? = nil) throws(DataError) {
        let label = path.map { "\($0): " } ?? ""
        guard (1...63).contains(name.utf8.count), let first = name.unicodeScalars.first, first.properties.isAlphabetic, first.isASCII,
            name.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") })
        else {
            throw .invalid("\(label)a \(kind) name is 1 to 63 ASCII letters, digits or '_', starting with a letter; got '\(name)'")
        }
        if let prefix = reservedPrefixes.first(where: { name.lowercased().hasPrefix($0) }) {
            throw .invalid("\(label)\(kind) names starting with '\(prefix)' are reserved for Portico and the database")
        }
    }

    static func requireNew(_ name: String, in catalog: Catalog) throws(DataError) {
        if let existing = catalog.collections.values.first(where: {
            $0.name.lowercased() == name.lowercased() || $0.tableName.lowercased() == name.lowercased()
        }) {
            throw DataError(.conflict, "app '\(catalog.app)' already has a collection '\(existing.name)'")
        }
    }

    // MARK: Migrations of the real tables

    /// Runs `body` in one transaction of the app's database, then drops cached catalogs everywhere.
    func change(app: String, _ body: @escaping @Sendable (any Database) async throws -> Void) async throws {
        do {
            try await catalogs.databases.database(app: app).schemaTransaction(body)
        } catch let error as StoreError where error.kind == .constraint {
            throw DataError(.conflict, "the change conflicts with the stored records: \(error.message); nothing was changed")
        }
        catalogs.invalidate(app: app)
        catalogs.databases.primary.changes.announce()
        changed(app)
    }

    static func addColumn(_ field: Field, to collection: CollectionSchema, db: any Database) async throws {
        let q = SQLFragment.quote
        try await db.execute("ALTER TABLE \(q(collection.tableName)) ADD COLUMN \(q(field.name)) \(DDL.columnDefinition(field, flavor: db.flavor))")
    }

    static func dropTable(_ collection: CollectionSchema, app: String, db: any Database) async throws {
        try await db.flavor.tableMigrator.dropTable(collection.tableName, db: db)
        var q = SQLFragment("DELETE FROM portico_collections WHERE app = ")
        q.append(bind: .text(app))
        q.append(" AND name = ")
        q.append(bind: .text(collection.name))
        try await db.execute(q)
        var f = SQLFragment("DELETE FROM portico_fields WHERE app = ")
        f.append(bind: .text(app))
        f.append(" AND collection = ")
        f.append(bind: .text(collection.name))
        try await db.execute(f)
    }

    /// Checks that every stored value of `old` converts to `new`, naming the first that does
    /// not; then (after the table is rebuilt) the values are rewritten converted.
    static func convert(_ old: Field, to new: Field, in collection: CollectionSchema, db: any Database) async throws {
        guard old.isColumn else { return }
        let q = SQLFragment.quote
        if !new.nullable, old.nullable {
            let nulls =
                try await db.query(SQLFragment("SELECT COUNT(*) AS n FROM \(q(collection.tableName)) WHERE \(q(old.name)) IS NULL")).first?.int("n") ?? 0
            if nulls > 0 { throw DataError.invalid("'\(old.name)' is empty in \(nulls) record(s); fill them before making it required") }
        }
        guard new.type != old.type || new.options != old.options || new.length != old.length else { return }
        let values = try await db.query(SQLFragment("SELECT DISTINCT \(q(old.name)) AS v FROM \(q(collection.tableName)) WHERE \(q(old.name)) IS NOT NULL"))
        for row in values {
            guard let value = row["v"] else { continue }
            let json = Self.storedValue(value, becoming: new.type)
            do {
                let converted = try ValueCoercion.coerce(json, to: new, at: new.name)
                if case .text(let text) = converted, let length = new.length, new.type == .string, text.count > length {
                    throw DataError.invalid("'\(text.prefix(40))' is longer than \(length) characters")
                }
            } catch let error as DataError {
                throw DataError.invalid(
                    "'\(old.name)' cannot become \(new.type.rawValue): the stored value \(json.serializedString.prefix(60)) does not convert (\(error.message)); nothing was changed"
                )
            }
        }
    }

    /// A stored value as a written one, for converting it by the rules written values follow
    /// (text bound for a number or a boolean loses its surrounding spaces).
    static func storedValue(_ value: SQLValue, becoming type: FieldType) -> JSON {
        switch value {
        case .null: .null
        case .int(let i): .int(i)
        case .double(let d): .double(d)
        case .bool(let b): .bool(b)
        case .text(let s): .string(type.isNumeric || type == .boolean ? s.trimmingSpaces() : s)
        }
    }

    /// Makes `to`'s table from `from`'s, the way the database's `TableMigrator` changes a table;
    /// values of a column whose type changed are then rewritten converted.
    static func rebuild(
        from old: CollectionSchema, to new: CollectionSchema, renames: [String: String], app: String, db: any Database, removedTarget: String? = nil
    ) async throws {
        let q = SQLFragment.quote
        var schema = new
        // A belongsTo to a collection being dropped leaves its column as a plain one.
        if let removedTarget { schema.fields.removeAll { $0.type == .belongsTo && $0.relation?.target == removedTarget } }
        let oldColumns = Dictionary(old.columns.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        try await db.flavor.tableMigrator.change(from: old, to: schema, renames: renames, db: db)
        // Converted values, written with the new column's own type.
        for column in schema.columns {
            let source = renames[column.name] ?? column.name
            guard let was = oldColumns[source], was.type != column.type else { continue }
            let values = try await db.query(SQLFragment("SELECT DISTINCT \(q(column.name)) AS v FROM \(q(old.tableName)) WHERE \(q(column.name)) IS NOT NULL"))
            for row in values {
                guard let value = row["v"] else { continue }
                let converted = try ValueCoercion.coerce(Self.storedValue(value, becoming: column.type), to: column, at: column.name)
                guard converted != value else { continue }
                var update = SQLFragment("UPDATE ")
                update.append(identifier: old.tableName)
                update.append(" SET ")
                update.append(identifier: column.name)
                update.append(" = ")
                update.append(bind: converted)
                update.append(" WHERE ")
                update.append(identifier: column.name)
                update.append(" = ")
                update.append(bind: value)
                try await db.execute(update)
            }
        }
    }
}

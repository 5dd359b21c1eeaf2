import Foundation
import Logging
import PorticoBase
import PorticoJSON
public import PorticoStore

/// Reads and writes collection definitions, each app's in its own database, and keeps each
/// app's catalog in memory until a change is announced (`ChangeSignal`: a schema change or an
/// app created or removed, in this process, from the command line or on another replica).
public final class CatalogStore: Sendable {
    public let databases: AppDatabases
    private let cache = LockedValue<[String: (catalog: Catalog, stamp: ChangeSignal.Stamp)]>([:])

    public init(databases: AppDatabases) {
        self.databases = databases
    }

    /// A store whose apps all keep their collections in `database` (tests and tools of one app).
    public convenience init(database: any Database) {
        self.init(databases: AppDatabases(primary: database, layout: .shared, logger: database.logger))
    }

    /// The app's collections, loaded once and kept until a change is announced.
    public func catalog(app: String) async throws -> Catalog {
        let stamp = databases.primary.changes.stamp()
        if let cached = cache.withLock({ $0[app] }), cached.stamp == stamp { return cached.catalog }
        let catalog = try await load(app: app)
        cache.withLock { $0[app] = (catalog, stamp) }
        return catalog
    }

    public func invalidate(app: String) {
        cache.withLock { _ = $0.removeValue(forKey: app) }
    }

    func load(app: String) async throws -> Catalog {
        var collectionsQuery = SQLFragment("SELECT name, title, description, table_name FROM portico_collections WHERE app = ")
        collectionsQuery.append(bind: .text(app))
        collectionsQuery.append(" ORDER BY name")
        var fieldsQuery = SQLFragment("SELECT collection, name, definition FROM portico_fields WHERE app = ")
        fieldsQuery.append(bind: .text(app))
        fieldsQuery.append(" ORDER BY collection, position")
        let database = try await databases.database(app: app)
        let collectionRows = try await database.query(collectionsQuery)
        let fieldRows = try await database.query(fieldsQuery)
        var fieldsByCollection: [String: [Field]] = [:]
        for row in fieldRows {
            guard let collection = row.string("collection"), let name = row.string("name"), let definition = row.string("definition") else { continue }
            let field = try FieldCodec.decode(name: name, definition: definition)
            fieldsByCollection[collection, default: []].append(field)
        }
        let collections = collectionRows.compactMap { row -> CollectionSchema? in
            guard let name = row.string("name"), let table = row.string("table_name") else { return nil }
            var collection = CollectionSchema(name: name, title: row.string("title"), tableName: table, fields: fieldsByCollection[name] ?? [])
            collection.description = row.string("description")
            return collection
        }
        return Catalog(app: app, collections: collections, database: database)
    }

    /// Collections made before Portico kept `updatedById` (those that keep `createdById`) gain
    /// it: the column, and its definition after their other fields. Runs when a database is
    /// opened, inside the caller's transaction; the second time there is nothing to do.
    public static func addUpdatedBy(db: any Database) async throws {
        let rows = try await db.query(
            """
            SELECT c.app, c.name AS collection, c.table_name, f.name, f.definition FROM portico_collections AS c
              JOIN portico_fields AS f ON f.app = c.app AND f.collection = c.name ORDER BY c.app, c.name, f.position
            """)
        var collections: [(app: String, schema: CollectionSchema)] = []
        for row in rows {
            guard let app = row.string("app"), let name = row.string("collection"), let table = row.string("table_name"),
                let field = row.string("name"), let definition = row.string("definition")
            else { continue }
            if collections.last.map({ $0.app != app || $0.schema.name != name }) ?? true {
                collections.append((app, CollectionSchema(name: name, tableName: table, fields: [])))
            }
            collections[collections.count - 1].schema.fields.append(try FieldCodec.decode(name: field, definition: definition))
        }
        let updatedBy = Field.Maintained.updatedBy.field
        for (app, var collection) in collections
        where collection.fields.contains(where: { $0.maintained == .createdBy }) && !collection.fields.contains(where: { $0.name == updatedBy.name }) {
            try await SchemaService.addColumn(updatedBy, to: collection, db: db)
            collection.fields.append(updatedBy)
            try await writeFields(collection, app: app, db: db)
            db.logger.info("collection gained updatedById", metadata: ["app": "\(app)", "collection": "\(collection.name)"])
        }
    }

    /// Creates collections (their tables, indexes and metadata) in one transaction, in an order
    /// that satisfies their foreign keys, and announces the change (a caller that runs this inside
    /// a transaction of its own announces again once that one commits).
    public func create(app: String, collections: [CollectionSchema]) async throws {
        let ordered = Self.dependencyOrder(collections)
        try await databases.database(app: app).transaction { db in
            for collection in ordered {
                for statement in DDL.createTable(collection, flavor: db.flavor) { try await db.execute(statement) }
                try await Self.insertDefinition(collection, app: app, db: db)
            }
        }
        invalidate(app: app)
        databases.primary.changes.announce()
    }

    /// Writes a collection's definition and its fields' (its table is made by the caller).
    static func insertDefinition(_ collection: CollectionSchema, app: String, db: any Database) async throws {
        var insert = SQLFragment("INSERT INTO portico_collections (app, name, title, description, table_name, created_at) VALUES (")
        insert.append(
            joining: [
                .bind(.text(app)), .bind(.text(collection.name)), .bind(collection.title.map { .text($0) } ?? .null),
                .bind(collection.description.map { .text($0) } ?? .null), .bind(.text(collection.tableName)),
                .bind(.int(Int64(Date().timeIntervalSince1970))),
            ], separator: ", ")
        insert.append(")")
        try await db.execute(insert)
        try await writeFields(collection, app: app, db: db)
    }

    /// Replaces the stored field definitions of `collection` with its fields, in order.
    static func writeFields(_ collection: CollectionSchema, app: String, db: any Database) async throws {
        var clear = SQLFragment("DELETE FROM portico_fields WHERE app = ")
        clear.append(bind: .text(app))
        clear.append(" AND collection = ")
        clear.append(bind: .text(collection.name))
        try await db.execute(clear)
        for (position, field) in collection.fields.enumerated() {
            var f = SQLFragment("INSERT INTO portico_fields (app, collection, name, position, definition) VALUES (")
            f.append(
                joining: [
                    .bind(.text(app)), .bind(.text(collection.name)), .bind(.text(field.name)),
                    .bind(.int(Int64(position))), .bind(.text(FieldCodec.encode(field))),
                ], separator: ", ")
            f.append(")")
            try await db.execute(f)
        }
    }

    /// Creates the tables of the app's stored collections (their definitions already in
    /// `portico_collections` and `portico_fields`, as after an import), in this database's flavor.
    public func createTables(app: String) async throws {
        let catalog = try await load(app: app)
        try await databases.database(app: app).transaction { db in
            for collection in Self.dependencyOrder(Array(catalog.collections.values)) {
                for statement in DDL.createTable(collection, flavor: db.flavor) { try await db.execute(statement) }
            }
        }
        invalidate(app: app)
    }

    /// Collections sorted so that each comes after the ones its belongsTo fields point at.
    public static func dependencyOrder(_ collections: [CollectionSchema]) -> [CollectionSchema] {
        var remaining = collections
        var ordered: [CollectionSchema] = []
        var placed = Set<String>()
        let names = Set(collections.map(\.name))
        while !remaining.isEmpty {
            let index =
                remaining.firstIndex { c in
                    c.fields.allSatisfy { f in
                        guard f.type == .belongsTo, let target = f.relation?.target, target != c.name, names.contains(target) else { return true }
                        return placed.contains(target)
                    }
                } ?? 0
            let next = remaining.remove(at: index)
            ordered.append(next)
            placed.insert(next.name)
        }
        return ordered
    }
}

/// Field definitions as stored in `portico_fields.definition`.
enum FieldCodec {
    static func encode(_ field: Field) -> String {
        var object: JSONObject = ["type": .string(field.type.rawValue)]
        if let title = field.title { object["title"] = .string(title) }
        if !field.nullable { object["nullable"] = false }
        if field.primaryKey { object["primaryKey"] = true }
        if field.autoIncrement { object["autoIncrement"] = true }
        if let length = field.length { object["length"] = JSON(length) }
        if let scale = field.scale { object["scale"] = JSON(scale) }
        if let options = field.options { object["options"] = JSON(options) }
        if field.unique { object["unique"] = true }
        if let value = field.defaultValue, !value.isNull { object["default"] = value }
        if let maintained = field.maintained { object["maintained"] = .string(maintained.rawValue) }
        if let r = field.relation {
            var relation: JSONObject = [
                "target": .string(r.target), "foreignKey": .string(r.foreignKey),
                "sourceKey": .string(r.sourceKey), "targetKey": .string(r.targetKey),
            ]
            if let through = r.through { relation["through"] = .string(through) }
            if let otherKey = r.otherKey { relation["otherKey"] = .string(otherKey) }
            object["relation"] = .object(relation)
        }
        return JSON.object(object).serializedString
    }

    static func decode(name: String, definition: String) throws -> Field {
        let json = try JSONParser.parse(definition)
        guard let typeName = json["type"]?.stringValue, let type = FieldType(rawValue: typeName) else {
            throw StateError("the stored definition of field \(name) cannot be read")
        }
        var relation: Relation?
        if let r = json["relation"], let target = r["target"]?.stringValue, let fk = r["foreignKey"]?.stringValue,
            let sk = r["sourceKey"]?.stringValue, let tk = r["targetKey"]?.stringValue
        {
            relation = Relation(
                target: target, foreignKey: fk, sourceKey: sk, targetKey: tk, through: r["through"]?.stringValue, otherKey: r["otherKey"]?.stringValue)
        }
        var field = Field(
            name: name, type: type, title: json["title"]?.stringValue, nullable: json["nullable"]?.boolValue ?? true,
            primaryKey: json["primaryKey"]?.boolValue ?? false, autoIncrement: json["autoIncrement"]?.boolValue ?? false,
            length: json["length"]?.intValue.map(Int.init), scale: json["scale"]?.intValue.map(Int.init),
            options: json["options"]?.arrayValue?.compactMap(\.stringValue), relation: relation)
        field.unique = json["unique"]?.boolValue ?? false
        field.defaultValue = json["default"]
        field.maintained = json["maintained"]?.stringValue.flatMap(Field.Maintained.init(rawValue:))
        return field
    }
}

/// `CREATE TABLE` and index statements for a collection.
enum DDL {
    /// A column's type and constraints after its name: `TEXT NOT NULL UNIQUE DEFAULT 'x'`.
    static func columnDefinition(_ field: Field, flavor: SQLFlavor) -> String {
        var line = flavor.columnType(for: field)
        if !field.nullable || field.primaryKey { line += " NOT NULL" }
        if field.unique, !field.primaryKey { line += " UNIQUE" }
        if let value = field.defaultValue, !value.isNull, let bound = try? ValueCoercion.coerce(value, to: field, at: "default") {
            line += " DEFAULT " + SQLFragment.bind(bound).renderedWithLiterals()
        }
        return line
    }

    static func createTable(_ collection: CollectionSchema, flavor: SQLFlavor) -> [String] {
        let q = SQLFragment.quote
        let pk = collection.primaryKey
        var lines: [String] = []
        for field in collection.columns {
            var line = q(field.name) + " "
            if pk.count == 1, field.primaryKey, field.type == .integer, field.autoIncrement {
                line += flavor.autoIncrementPrimaryKey
            } else {
                line += columnDefinition(field, flavor: flavor)
                if pk.count == 1, field.primaryKey { line += " PRIMARY KEY" }
            }
            lines.append(line)
        }
        if pk.count > 1 {
            lines.append("PRIMARY KEY (\(pk.map { q($0.name) }.joined(separator: ", ")))")
        }
        var indexes: [String] = []
        for field in collection.relations where field.type == .belongsTo {
            guard let r = field.relation else { continue }
            lines.append("FOREIGN KEY (\(q(r.foreignKey))) REFERENCES \(q(r.target)) (\(q(r.targetKey)))")
            indexes.append("CREATE INDEX \(q("idx_\(collection.tableName)_\(r.foreignKey)")) ON \(q(collection.tableName)) (\(q(r.foreignKey)))")
        }
        return ["CREATE TABLE \(q(collection.tableName)) (\n  " + lines.joined(separator: ",\n  ") + "\n)"] + indexes
    }
}

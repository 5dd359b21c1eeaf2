import Foundation
import PorticoJSON
import PorticoStore

/// The column values and relation links of a create or update.
struct Assignment: Sendable {
    var columns: [String: SQLValue] = [:]
    var columnExpressions: [String: SQLFragment] = [:]
    /// hasMany / belongsToMany fields set to a list of target keys.
    var links: [(field: Field, keys: [SQLValue])] = []
    /// Keys that must name records the caller can see: a belongsTo (by the relation or by its
    /// foreign key column) and the foreign key of a hasMany that points here.
    var namedTargets: [(path: String, target: CollectionSchema, keyColumn: String, key: SQLValue)] = []
    /// For each hasMany link: the target's rows the caller may move.
    var linkScopes: [String: Catalog.LinkScope] = [:]

    init(
        values: JSONObject, collection: CollectionSchema, catalog: Catalog, access: RecordAccess, whitelist: [String]?, blacklist: [String]?
    ) throws(DataError) {
        for (name, list) in [("whitelist", whitelist), ("blacklist", blacklist)] where (list?.count ?? 0) > 200 {
            throw .invalid("\(name) has \(list!.count) entries; at most 200")
        }
        for (name, value) in values {
            if let whitelist, !whitelist.contains(name) { continue }
            if let blacklist, blacklist.contains(name) { continue }
            guard let field = collection.field(name) else {
                if catalog.unscoped[collection.name]?.field(name) != nil {
                    throw DataError(
                        .forbidden,
                        "this role may not set field '\(name)' of '\(collection.name)'; it may set: \(collection.fields.map(\.name).joined(separator: ", "))")
                }
                throw .invalid(
                    "values: unknown field '\(name)' of '\(collection.name)'; its fields are: \(collection.fields.map(\.name).joined(separator: ", "))")
            }
            if field.maintained != nil {
                throw .invalid("values.\(name): '\(name)' is kept by Portico (\(field.maintained!.rawValue)); leave it out")
            }
            switch field.type {
            case .belongsTo:
                let relation = field.relation!
                let target = try catalog.target(of: field, in: collection)
                // Writing the relation writes its foreign key, whether or not the key is a field the role names.
                guard let fkField = (catalog.unscoped[collection.name] ?? collection).field(relation.foreignKey) else { continue }
                var key = value
                if case .object(let object) = value {
                    guard let k = object[relation.targetKey] else {
                        throw .invalid(
                            "values.\(name): pass the \(target.name)'s \(relation.targetKey), as \(relation.targetKey) or {\"\(relation.targetKey)\": ...}")
                    }
                    key = k
                }
                let value = try ValueCoercion.coerce(key, to: fkField, at: "values.\(name)")
                columns[relation.foreignKey] = value
                if value != .null { namedTargets.append((name, target, relation.targetKey, value)) }
            case .hasMany, .belongsToMany:
                let relation = field.relation!
                let target = try catalog.target(of: field, in: collection)
                guard let keyField = target.field(relation.targetKey) ?? target.primaryKey.first else { continue }
                guard case .array(let items) = value else {
                    throw .invalid("values.\(name): a \(field.type.rawValue) relation takes an array of \(target.name) keys, such as [1, 2]")
                }
                guard items.count <= 1000 else { throw .invalid("values.\(name): at most 1000 keys per call, got \(items.count)") }
                var keys: [SQLValue] = []
                for (index, item) in items.enumerated() {
                    var key = item
                    if case .object(let object) = item, let k = object[keyField.name] { key = k }
                    keys.append(try ValueCoercion.coerce(key, to: keyField, at: "values.\(name)[\(index)]"))
                }
                if field.type == .hasMany {
                    // Linking moves the target's records: that is an update of them.
                    linkScopes[field.name] = try catalog.linkScope(target, access: access)
                }
                links.append((field, keys))
            default:
                if field.primaryKey && field.autoIncrement && value.isNull { continue }
                let coerced = try ValueCoercion.coerce(value, to: field, at: "values.\(name)")
                columns[name] = coerced
                if coerced != .null { try linkThroughKeyColumn(name, key: coerced, collection: collection, catalog: catalog) }
            }
        }
    }

    /// A column that holds another collection's key links the record as its relation does, so the
    /// record it names must be one the caller may see: otherwise setting the raw column (a
    /// belongsTo's foreign key, or the foreign key of another collection's hasMany) would link to
    /// hidden rows and tell which of their keys exist.
    mutating func linkThroughKeyColumn(_ column: String, key: SQLValue, collection: CollectionSchema, catalog: Catalog) throws(DataError) {
        let full = catalog.unscoped[collection.name] ?? collection
        for relationField in full.fields where relationField.type == .belongsTo && relationField.relation?.foreignKey == column {
            let target = try catalog.target(of: relationField, in: full)
            namedTargets.append((column, target, relationField.relation!.targetKey, key))
        }
        for source in catalog.unscoped.values.sorted(by: { $0.name < $1.name }) {
            for relationField in source.fields {
                guard let relation = relationField.relation else { continue }
                // Whose key the column holds: a hasMany's source, or one side of a junction's link.
                var holder: (collection: String, key: String)?
                if relationField.type == .hasMany, relation.target == collection.name, relation.foreignKey == column {
                    holder = (source.name, relation.sourceKey)
                } else if relationField.type == .belongsToMany, relation.through == collection.name {
                    if relation.foreignKey == column { holder = (source.name, relation.sourceKey) }
                    if relation.otherKey == column { holder = (relation.target, relation.targetKey) }
                }
                guard let holder else { continue }
                let owner = try catalog.collection(holder.collection)
                namedTargets.append((column, owner, holder.key, key))
            }
        }
    }

    /// Refuses a belongsTo key or a belongsToMany link that names a record outside the caller's rows.
    func requireVisibleTargets(catalog: Catalog, db: any Database) async throws {
        for (path, target, keyColumn, key) in namedTargets {
            try await catalog.requireVisible(target, keyColumn: keyColumn, keys: [key], path: path, db: db)
        }
        for (field, keys) in links where field.type == .belongsToMany {
            let target = try catalog.collection(field.relation!.target)
            let keyColumn = (target.field(field.relation!.targetKey) ?? target.primaryKey[0]).name
            try await catalog.requireVisible(target, keyColumn: keyColumn, keys: keys, path: field.name, db: db)
        }
    }

    /// Points the listed related records at `row` (hasMany) or replaces the junction rows (belongsToMany).
    func linkRelations(of row: Row, collection: CollectionSchema, catalog: Catalog, db: any Database) async throws {
        for (field, keys) in links {
            let relation = field.relation!
            guard let source = row[relation.sourceKey] else { continue }
            let target = try catalog.target(of: field, in: collection)
            if field.type == .hasMany {
                guard !keys.isEmpty, let scope = linkScopes[field.name] else { continue }
                try await db.execute(
                    catalog.link(target, keys: keys, on: relation.targetKey, setting: relation.foreignKey, to: source, within: scope))
            } else if let through = relation.through, let otherKey = relation.otherKey {
                try await db.execute(
                    catalog.unlink(
                        through: through, foreignKey: relation.foreignKey, source: source, otherKey: otherKey, target: target, targetKey: relation.targetKey))
                for key in keys {
                    try await db.execute(RecordService.junctionInsert(through, relation.foreignKey, otherKey, source: .bind(source), target: key))
                }
            }
        }
    }
}

public import Foundation
public import Logging
import PorticoBase
public import PorticoData
import PorticoStore

/// The Chinook sample (MIT licence, `chinook/LICENSE.md` beside this file) as collections of the `main` app,
/// keeping its table and column names so questions about it read naturally.
public enum DemoData {
    /// Relation names for Chinook's foreign keys: (collection, column) → (belongsTo name, hasMany name on the target).
    static let relationNames: [String: (String, String)] = [
        "Album.ArtistId": ("artist", "albums"),
        "Track.AlbumId": ("album", "tracks"),
        "Track.GenreId": ("genre", "tracks"),
        "Track.MediaTypeId": ("mediaType", "tracks"),
        "Customer.SupportRepId": ("supportRep", "customers"),
        "Employee.ReportsTo": ("manager", "reports"),
        "Invoice.CustomerId": ("customer", "invoices"),
        "InvoiceLine.InvoiceId": ("invoice", "invoiceLines"),
        "InvoiceLine.TrackId": ("track", "invoiceLines"),
        "PlaylistTrack.PlaylistId": ("playlist", "playlistTracks"),
        "PlaylistTrack.TrackId": ("track", "playlistTracks"),
    ]

    /// Whether the demo collections are already in the app (a second `--demo` start reuses them).
    public static func isInstalled(catalogs: CatalogStore, app: String = "main") async throws -> Bool {
        try await catalogs.catalog(app: app).collections["Album"] != nil
    }

    /// The bundled script.
    public static func scriptURL() -> URL? {
        Bundle.module.url(forResource: "Chinook_Sqlite", withExtension: "sql", subdirectory: "chinook")
    }

    /// Creates the Chinook collections in the app and loads their rows in one transaction.
    public static func install(app: String = "main", catalogs: CatalogStore, logger: Logger) async throws {
        guard let url = scriptURL() else { throw StateError("the Chinook script is missing from the resource bundle") }
        let script = try ChinookScript(text: String(contentsOf: url, encoding: .utf8))
        let collections = schemas(from: script)
        try await catalogs.create(app: app, collections: collections)
        let database = try await catalogs.databases.database(app: app)
        let started = Date()
        var total = 0
        try await database.transaction { db in
            for collection in CatalogStore.dependencyOrder(collections) {
                guard let data = script.rows[collection.name] else { continue }
                let perStatement = max(1, 500 / max(1, data.columns.count))
                var index = 0
                while index < data.values.count {
                    let batch = data.values[index..<min(index + perStatement, data.values.count)]
                    var q = SQLFragment("INSERT INTO ")
                    q.append(identifier: collection.tableName)
                    q.append(" (")
                    q.append(joining: data.columns.map { .identifier($0) }, separator: ", ")
                    q.append(") VALUES ")
                    q.append(
                        joining: batch.map { tuple in
                            var t = SQLFragment("(")
                            t.append(joining: tuple.map { .bind($0) }, separator: ", ")
                            t.append(")")
                            return t
                        }, separator: ", ")
                    try await db.execute(q)
                    index += perStatement
                }
                if let key = collection.fields.first(where: { $0.primaryKey && $0.autoIncrement }),
                    let catchUp = db.flavor.keyCatchUp(table: collection.tableName, column: key.name)
                {
                    try await db.execute(catchUp)
                }
            }
            return ()
        }
        for collection in collections { total += script.rows[collection.name]?.values.count ?? 0 }
        logger.info(
            "imported the Chinook sample",
            metadata: [
                "app": "\(app)", "collections": "\(collections.count)", "rows": "\(total)",
                "seconds": "\(String(format: "%.2f", Date().timeIntervalSince(started)))",
            ])
    }

    static func schemas(from script: ChinookScript) -> [CollectionSchema] {
        var collections: [String: CollectionSchema] = [:]
        for table in script.tables {
            var fields: [Field] = []
            for column in table.columns {
                var field = Field(name: column.name, type: .string, nullable: !column.notNull, primaryKey: table.primaryKey.contains(column.name))
                let type = column.type.uppercased()
                if type.hasPrefix("INTEGER") {
                    field.type = .integer
                    field.autoIncrement = field.primaryKey && table.primaryKey.count == 1
                } else if type.hasPrefix("NUMERIC") || type.hasPrefix("DECIMAL") {
                    field.type = .decimal
                    let digits = type.drop { $0 != "(" }.dropFirst().prefix { $0 != ")" }.split(separator: ",").compactMap { Int($0) }
                    field.length = digits.first ?? 10
                    field.scale = digits.count > 1 ? digits[1] : 2
                } else if type.hasPrefix("DATETIME") {
                    field.type = .datetime
                } else if type.hasPrefix("NVARCHAR") || type.hasPrefix("VARCHAR") {
                    field.length = Int(type.drop { $0 != "(" }.dropFirst().prefix { $0 != ")" })
                }
                fields.append(field)
            }
            collections[table.name] = CollectionSchema(name: table.name, tableName: table.name, fields: fields)
        }
        // Foreign keys become belongsTo fields here and hasMany fields on the target.
        for table in script.tables {
            for fk in table.foreignKeys {
                let names =
                    relationNames["\(table.name).\(fk.column)"]
                    ?? (Self.lowerFirst(fk.column.hasSuffix("Id") ? String(fk.column.dropLast(2)) : fk.column), Self.lowerFirst(table.name) + "s")
                collections[table.name]?.fields.append(
                    Field(
                        name: names.0, type: .belongsTo,
                        relation: Relation(target: fk.target, foreignKey: fk.column, sourceKey: fk.column, targetKey: fk.targetColumn)))
                collections[fk.target]?.fields.append(
                    Field(
                        name: names.1, type: .hasMany,
                        relation: Relation(
                            target: table.name, foreignKey: fk.column, sourceKey: fk.targetColumn,
                            targetKey: table.primaryKey.count == 1 ? table.primaryKey[0] : fk.column)))
            }
        }
        // PlaylistTrack joins playlists and tracks.
        collections["Playlist"]?.fields.append(
            Field(
                name: "tracks", type: .belongsToMany,
                relation: Relation(
                    target: "Track", foreignKey: "PlaylistId", sourceKey: "PlaylistId", targetKey: "TrackId", through: "PlaylistTrack", otherKey: "TrackId")))
        collections["Track"]?.fields.append(
            Field(
                name: "playlists", type: .belongsToMany,
                relation: Relation(
                    target: "Playlist", foreignKey: "TrackId", sourceKey: "TrackId", targetKey: "PlaylistId", through: "PlaylistTrack", otherKey: "PlaylistId"))
        )
        return script.tables.compactMap { collections[$0.name] }
    }

    static func lowerFirst(_ s: String) -> String {
        s.prefix(1).lowercased() + s.dropFirst()
    }
}

import Foundation
import Logging
import PorticoJSON
import PorticoStore
import PorticoTestSupport

@testable import PorticoData

/// A temporary database with two small related collections.
struct Fixture {
    let directory: URL
    let store: any Database
    let catalogs: CatalogStore
    let records: RecordService

    static func make(_ backend: Backend = .sqlite) async throws -> Fixture {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("portico-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let store = try await backend.makeStore(in: directory)
        try await Migrator().migrate(store)
        let catalogs = CatalogStore(database: store)
        let author = CollectionSchema(
            name: "Author", tableName: "Author",
            fields: [
                Field(name: "id", type: .integer, nullable: false, primaryKey: true, autoIncrement: true),
                Field(name: "name", type: .string, nullable: false, length: 100),
                Field(name: "active", type: .boolean),
                Field(name: "posts", type: .hasMany, relation: Relation(target: "Post", foreignKey: "authorId", sourceKey: "id", targetKey: "id")),
            ])
        let post = CollectionSchema(
            name: "Post", tableName: "Post",
            fields: [
                Field(name: "id", type: .integer, nullable: false, primaryKey: true, autoIncrement: true),
                Field(name: "title", type: .string, nullable: false),
                Field(name: "score", type: .decimal, length: 10, scale: 2),
                Field(name: "published", type: .datetime),
                Field(name: "authorId", type: .integer),
                Field(name: "author", type: .belongsTo, relation: Relation(target: "Author", foreignKey: "authorId", sourceKey: "authorId", targetKey: "id")),
            ])
        try await catalogs.create(app: "main", collections: [post, author])
        try await store.execute("INSERT INTO \"Author\" (id, name, active) VALUES (1, 'Ada', TRUE), (2, 'Brian', FALSE), (3, 'Chen_%', NULL)")
        try await store.execute(
            """
            INSERT INTO "Post" (id, title, score, published, "authorId") VALUES
            (1, 'Hello world', 4.5, '2024-01-15 10:00:00', 1),
            (2, 'Second post', 3.0, '2024-02-01 00:00:00', 1),
            (3, 'Brian writes', NULL, '2023-12-31 23:59:59', 2),
            (4, '100% sure', 5.0, NULL, 3),
            (5, 'orphan', 1.0, '2024-03-03 12:00:00', NULL)
            """)
        for (table, key) in [("Author", "id"), ("Post", "id")] {
            if let catchUp = store.flavor.keyCatchUp(table: table, column: key) { try await store.execute(catchUp) }
        }
        return Fixture(directory: directory, store: store, catalogs: catalogs, records: RecordService(catalogs: catalogs))
    }

    func list(_ resource: String = "Post", filter: JSON? = nil, sort: [String]? = nil, configure: (inout RecordRequest) -> Void = { _ in }) async throws
        -> [JSON]
    {
        var request = RecordRequest(resource: resource)
        request.filter = filter
        request.sort = sort
        request.pageSize = 100
        configure(&request)
        let result = try await records.list(app: "main", request, access: .unrestricted)
        return result["data"]?.arrayValue ?? []
    }

    func ids(_ resource: String = "Post", filter: JSON?) async throws -> [Int64] {
        try await list(resource, filter: filter).compactMap { $0["id"]?.intValue }
    }

    func close() async {
        await store.close()
        try? FileManager.default.removeItem(at: directory)
    }
}

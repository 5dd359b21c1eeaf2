import Foundation
import PorticoJSON
import PorticoStore
import PorticoTestSupport
import Testing

@testable import PorticoData

/// Destroying a record removes its rows in the belongsToMany junctions that link it, from
/// either side of the relation, and nothing else; a record that a belongsTo still points at
/// is refused as before.
@Suite struct JunctionLinkTests {
    /// The fixture's posts and authors, plus tags linked to posts through `PostTag`.
    func make(_ backend: Backend) async throws -> Fixture {
        let f = try await Fixture.make(backend)
        let tag = CollectionSchema(
            name: "Tag", tableName: "Tag",
            fields: [
                Field(name: "id", type: .integer, nullable: false, primaryKey: true, autoIncrement: true),
                Field(name: "label", type: .string, nullable: false),
                Field(
                    name: "posts", type: .belongsToMany,
                    relation: Relation(target: "Post", foreignKey: "tagId", sourceKey: "id", targetKey: "id", through: "PostTag", otherKey: "postId")),
            ])
        let postTag = CollectionSchema(
            name: "PostTag", tableName: "PostTag",
            fields: [
                Field(name: "id", type: .integer, nullable: false, primaryKey: true, autoIncrement: true),
                Field(name: "postId", type: .integer, nullable: false),
                Field(name: "tagId", type: .integer, nullable: false),
            ])
        try await f.catalogs.create(app: "main", collections: [tag, postTag])
        var catalog = try await f.catalogs.catalog(app: "main")
        var post = catalog.collections["Post"]!
        post.fields.append(
            Field(
                name: "tags", type: .belongsToMany,
                relation: Relation(target: "Tag", foreignKey: "postId", sourceKey: "id", targetKey: "id", through: "PostTag", otherKey: "tagId")))
        try await CatalogStore.writeFields(post, app: "main", db: f.store)
        f.catalogs.invalidate(app: "main")
        catalog = try await f.catalogs.catalog(app: "main")
        #expect(catalog.collections["Post"]?.field("tags") != nil)
        try await f.store.execute("INSERT INTO \"Tag\" (id, label) VALUES (1, 'red'), (2, 'blue'), (3, 'green')")
        try await f.store.execute(
            "INSERT INTO \"PostTag\" (\"postId\", \"tagId\") VALUES (1, 1), (1, 2), (2, 1), (3, 2), (3, 3), (4, 3)")
        return f
    }

    func links(_ f: Fixture) async throws -> [String] {
        try await f.store.query("SELECT \"postId\", \"tagId\" FROM \"PostTag\" ORDER BY \"postId\", \"tagId\"").map {
            "\($0.int("postId") ?? 0)-\($0.int("tagId") ?? 0)"
        }
    }

    @Test(arguments: Backend.available) func aDestroyedRecordTakesItsLinksWithIt(_ backend: Backend) async throws {
        let f = try await make(backend)
        defer { Task { await f.close() } }
        var byKey = RecordRequest(resource: "Post")
        byKey.filterByTk = .int(1)
        #expect(try await f.records.destroy(app: "main", byKey, access: .unrestricted)["data"] == .int(1))
        #expect(try await links(f) == ["2-1", "3-2", "3-3", "4-3"], "post 1's two links went with it; the others stayed")

        // From the other side, by a filter that selects two tags.
        var byFilter = RecordRequest(resource: "Tag")
        byFilter.filter = ["label": ["$in": ["red", "green"]]]
        #expect(try await f.records.destroy(app: "main", byFilter, access: .unrestricted)["data"] == .int(2))
        #expect(try await links(f) == ["3-2"])
        #expect(try await f.store.query("SELECT label FROM \"Tag\"").map { $0.string("label") } == ["blue"])

        // A filter that selects nothing deletes nothing.
        var none = RecordRequest(resource: "Post")
        none.filter = ["title": "no such post"]
        #expect(try await f.records.destroy(app: "main", none, access: .unrestricted)["data"] == .int(0))
        #expect(try await links(f) == ["3-2"])
    }

    @Test(arguments: Backend.available) func aRowFilterLimitsWhichRecordsAndLinksGo(_ backend: Backend) async throws {
        let f = try await make(backend)
        defer { Task { await f.close() } }
        // A role that may destroy only posts by author 1 (posts 1 and 2), asked to destroy every post with a score.
        let access = RecordAccess(key: "own", allowsInFull: false) { collection, _ in
            collection == "Post" ? .allow(AccessRule(filter: ["authorId": 1])) : .allow(.everything)
        }
        var request = RecordRequest(resource: "Post")
        request.filter = ["score": ["$gt": 0]]
        #expect(try await f.records.destroy(app: "main", request, access: access)["data"] == .int(2))
        #expect(try await links(f) == ["3-2", "3-3", "4-3"], "only the links of the posts the role could destroy went")
        #expect(try await f.store.query("SELECT id FROM \"Post\" ORDER BY id").map { $0.int("id") } == [3, 4, 5])
    }

    /// A junction's rows are links: written directly, they must name records the role may see
    /// on both sides, as linking through the relation must.
    @Test(arguments: Backend.available) func aJunctionRowWrittenDirectlyLinksOnlyVisibleRecords(_ backend: Backend) async throws {
        let f = try await make(backend)
        defer { Task { await f.close() } }
        let access = RecordAccess(key: "linker", caller: Caller(userID: 1, userName: nil), allowsInFull: false) { collection, action in
            switch (collection, action) {
            case ("PostTag", _): .allow(.everything)
            case ("Post", .list): .allow(AccessRule(filter: ["authorId": ["$eq": "{{currentUser.id}}"]]))
            case ("Tag", .list): .allow(AccessRule(filter: ["label": ["$ne": "green"]]))
            default: .deny("may not \(action.rawValue) \(collection)")
            }
        }
        for (post, tag, hidden) in [(3, 1, "Post"), (1, 3, "Tag")] {
            var create = RecordRequest(resource: "PostTag")
            create.values = ["postId": .int(Int64(post)), "tagId": .int(Int64(tag))]
            await #expect("post \(post), tag \(tag)") {
                _ = try await f.records.create(app: "main", create, access: access)
            } throws: { error in
                (error as? DataError)?.message.contains("names a \(hidden) record that does not exist or that this role may not see") == true
            }
        }
        var create = RecordRequest(resource: "PostTag")
        create.values = ["postId": 2, "tagId": 2]
        _ = try await f.records.create(app: "main", create, access: access)
        #expect(try await links(f) == ["1-1", "1-2", "2-1", "2-2", "3-2", "3-3", "4-3"])
        // A rule on a relation is judged after the links change: the red posts' editor cannot unpaint one.
        let painter = RecordAccess(key: "painter", allowsInFull: false) { collection, action in
            switch (collection, action) {
            case ("Post", .update): .allow(AccessRule(fields: ["tags"], filter: ["tags": ["label": "red"]]))
            case (_, .list): .allow(.everything)
            default: .deny("may not \(action.rawValue) \(collection)")
            }
        }
        var repaint = RecordRequest(resource: "Post")
        repaint.filterByTk = .int(1)
        repaint.values = ["tags": [2]]
        await #expect(throws: DataError.self) { _ = try await f.records.update(app: "main", repaint, access: painter) }
        #expect(try await links(f) == ["1-1", "1-2", "2-1", "2-2", "3-2", "3-3", "4-3"], "nothing changed")
        repaint.values = ["tags": [1]]
        _ = try await f.records.update(app: "main", repaint, access: painter)
        #expect(try await links(f) == ["1-1", "2-1", "2-2", "3-2", "3-3", "4-3"])
    }
}

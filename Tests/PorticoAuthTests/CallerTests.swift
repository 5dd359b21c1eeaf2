import Foundation
import PorticoData
import PorticoJSON
import PorticoStore
import PorticoTestSupport
import Testing

@testable import PorticoAuth

/// Who writes a record is kept on it for every role, and a role's row rule holds on every write
/// path: the access the tools build from a principal, driven through the data layer's seam.
@Suite struct CallerTests {
    struct Setup {
        let fixture: AuthFixture
        let records: RecordService

        static func make(_ backend: Backend) async throws -> Setup {
            let fixture = try await AuthFixture.make(backend)
            let catalogs = CatalogStore(database: fixture.store)
            let schema = SchemaService(catalogs: catalogs)
            var title = FieldSpec(name: "title", type: .string)
            title.required = true
            let owner = FieldSpec(name: "owner", type: .integer)
            _ = try await schema.createCollection(app: "main", name: "tasks", title: nil, description: nil, fields: [title, owner])
            return Setup(fixture: fixture, records: RecordService(catalogs: catalogs))
        }

        /// The access a tool call of user `id` (named `name`) with `role` gets.
        func access(_ role: Role, _ id: Int64) -> RecordAccess {
            AccessPolicy().recordAccess(role: role, app: "main", caller: Caller(userID: id, userName: "user\(id)"))
        }

        func create(_ title: String, owner: Int64, as access: RecordAccess) async throws -> JSON {
            var request = RecordRequest(resource: "tasks")
            request.values = ["title": .string(title), "owner": .int(owner)]
            return try await records.create(app: "main", request, access: access)["data"] ?? .null
        }

        /// Every task as the admin sees it, by id.
        func all() async throws -> [JSON] {
            var request = RecordRequest(resource: "tasks")
            request.sort = ["id"]
            request.pageSize = 100
            return try await records.list(app: "main", request, access: access(.admin, 0))["data"]?.arrayValue ?? []
        }
    }

    /// A role that may update and destroy only the tasks it owns (`owner` = its user).
    static func ownTasks() -> Role {
        let own: JSON = ["owner": ["$eq": "{{currentUser.id}}"]]
        let rules: [RecordAction: AccessRule] = [
            .list: .everything, .get: .everything, .create: .everything, .update: AccessRule(filter: own), .destroy: AccessRule(filter: own),
        ]
        return Role(name: "own", permissions: RolePermissions(collections: ["tasks": rules]))
    }

    @Test(arguments: Backend.available) func everyCreatorIsKeptWhateverItsRole(_ backend: Backend) async throws {
        let s = try await Setup.make(backend)
        defer { Task { await s.fixture.close() } }
        let byAdmin = try await s.create("by admin", owner: 1, as: s.access(.admin, 1))
        let byMember = try await s.create("by member", owner: 2, as: s.access(.member, 2))
        let byCustom = try await s.create("by own", owner: 3, as: s.access(Self.ownTasks(), 3))
        #expect([byAdmin, byMember, byCustom].map { [$0["createdById"], $0["updatedById"]] } == [[1, 1], [2, 2], [3, 3]])
        // An update keeps the creator and records who changed it.
        var update = RecordRequest(resource: "tasks")
        update.filterByTk = byAdmin["id"]
        update.values = ["title": "changed by member"]
        _ = try await s.records.update(app: "main", update, access: s.access(.member, 2))
        let first = try await s.all()[0]
        #expect(first["createdById"] == 1 && first["updatedById"] == 2)
        // The caller cannot write either itself.
        update.values = ["createdById": 9]
        await #expect(throws: DataError.self) { _ = try await s.records.update(app: "main", update, access: s.access(.admin, 1)) }
    }

    @Test(arguments: Backend.available) func aCollectionMadeBeforeUpdatedByGainsIt(_ backend: Backend) async throws {
        let s = try await Setup.make(backend)
        defer { Task { await s.fixture.close() } }
        // A collection as Portico made them before it kept `updatedById`.
        let old = CollectionSchema(
            name: "notes", tableName: "notes",
            fields: [Field(name: "id", type: .integer, nullable: false, primaryKey: true, autoIncrement: true), Field(name: "text", type: .string)]
                + [Field.Maintained.createdAt, .updatedAt, .createdBy].map(\.field))
        let catalogs = CatalogStore(database: s.fixture.store)
        try await catalogs.create(app: "main", collections: [old])
        for _ in 0..<2 { try await s.fixture.store.transaction { db in try await CatalogStore.addUpdatedBy(db: db) } }
        catalogs.invalidate(app: "main")
        let fields = try await catalogs.catalog(app: "main").collection("notes").fields.map(\.name)
        #expect(fields == ["id", "text", "createdAt", "updatedAt", "createdById", "updatedById"])
        // The tasks collection, made with it, is left as it was.
        #expect(try await catalogs.catalog(app: "main").collection("tasks").fields.filter { $0.name == "updatedById" }.count == 1)
        let records = RecordService(catalogs: catalogs)
        var create = RecordRequest(resource: "notes")
        create.values = ["text": "first"]
        let made = try await records.create(app: "main", create, access: s.access(.member, 2))["data"] ?? .null
        #expect(made["createdById"] == 2 && made["updatedById"] == 2)
        var update = RecordRequest(resource: "notes")
        update.filterByTk = made["id"]
        update.values = ["text": "second"]
        _ = try await records.update(app: "main", update, access: s.access(.admin, 1))
        var get = RecordRequest(resource: "notes")
        get.filterByTk = made["id"]
        let changed = try await records.get(app: "main", get, access: s.access(.admin, 1))["data"] ?? .null
        #expect(changed["createdById"] == 2 && changed["updatedById"] == 1)
    }

    @Test(arguments: Backend.available) func aRowRuleHoldsOnEveryWritePath(_ backend: Backend) async throws {
        let s = try await Setup.make(backend)
        defer { Task { await s.fixture.close() } }
        for (title, owner) in [("mine", 3), ("theirs", 4), ("theirs too", 4)] { _ = try await s.create(title, owner: Int64(owner), as: s.access(.admin, 1)) }
        let own = s.access(Self.ownTasks(), 3)
        // By key and by filter, an update reaches only the role's rows.
        var update = RecordRequest(resource: "tasks")
        update.filterByTk = [1, 2]
        update.values = ["title": "taken"]
        #expect(try await s.records.update(app: "main", update, access: own)["data"]?.arrayValue?.count == 1)
        update.filterByTk = nil
        update.filter = ["title": ["$startsWith": "theirs"]]
        #expect(try await s.records.update(app: "main", update, access: own)["data"]?.arrayValue == [])
        // Nor can an update hand its own row to someone else.
        update.filter = ["id": 1]
        update.values = ["owner": 4]
        await #expect(throws: DataError.self) { _ = try await s.records.update(app: "main", update, access: own) }
        // A destroy, by key or by filter, removes the role's rows only.
        var destroy = RecordRequest(resource: "tasks")
        destroy.filter = ["title": ["$startsWith": "theirs"]]
        #expect(try await s.records.destroy(app: "main", destroy, access: own)["data"] == 0)
        destroy.filter = nil
        destroy.filterByTk = [1, 2, 3]
        #expect(try await s.records.destroy(app: "main", destroy, access: own)["data"] == 1)
        let left = try await s.all()
        #expect(left.map { $0["title"] } == ["theirs", "theirs too"] && left.map { $0["owner"] } == [4, 4])
    }
}

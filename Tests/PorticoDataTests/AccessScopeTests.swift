import Foundation
import PorticoJSON
import PorticoTestSupport
import Testing

@testable import PorticoData

/// The choke point: a role's refusals, field lists and row filters hold on every path that
/// reaches a table — lists, gets, fields, appends, filters and sorts across relations,
/// association resources, aggregates and writes that link records.
@Suite struct AccessScopeTests {
    /// Ada (user 1) may list and update her own posts without their score, and see active authors.
    static func author(_ userID: Int64?) -> RecordAccess {
        let own: JSON = ["authorId": ["$eq": "{{currentUser.id}}"]]
        let rules: [String: [RecordAction: AccessRule]] = [
            "Post": [
                .list: AccessRule(fields: ["title", "author", "authorId", "published"], filter: own),
                .get: AccessRule(fields: ["title"], filter: own),
                .update: AccessRule(fields: ["title", "author"], filter: own),
                .create: AccessRule(fields: ["title", "author"]),
                .query: AccessRule(fields: ["title", "authorId"], filter: own),
            ],
            "Author": [.list: AccessRule(fields: ["name", "posts"], filter: ["active": true]), .query: AccessRule(filter: ["active": true])],
        ]
        return access(rules, userID: userID)
    }

    static func access(_ rules: [String: [RecordAction: AccessRule]], userID: Int64?) -> RecordAccess {
        RecordAccess(
            key: "test/\(rules.keys.sorted())/\(userID ?? -1)", caller: Caller(userID: userID, userName: nil), allowsInFull: false
        ) { collection, action in
            rules[collection]?[action].map { .allow($0) } ?? .deny("role 'author' may not \(action.rawValue) records of '\(collection)'")
        }
    }

    func list(_ f: Fixture, _ access: RecordAccess, _ resource: String = "Post", _ configure: (inout RecordRequest) -> Void = { _ in }) async throws -> [JSON] {
        var request = RecordRequest(resource: resource)
        request.pageSize = 100
        configure(&request)
        return try await f.records.list(app: "main", request, access: access)["data"]?.arrayValue ?? []
    }

    func refused(_ body: () async throws -> Void, saying text: String) async {
        await #expect {
            try await body()
        } throws: { error in
            guard let error = error as? DataError else { return false }
            return error.message.contains(text)
        }
    }

    @Test(arguments: Backend.available) func rowsAndFieldsOfTheRoleOnly(_ backend: Backend) async throws {
        let f = try await Fixture.make(backend)
        defer { Task { await f.close() } }
        let posts = try await list(f, Self.author(1))
        #expect(posts.compactMap { $0["id"]?.intValue } == [1, 2])
        #expect(posts.allSatisfy { $0["score"] == nil && $0["title"] != nil })
        // The count of a page is the role's count too.
        var request = RecordRequest(resource: "Post")
        request.pageSize = 1
        #expect(try await f.records.list(app: "main", request, access: Self.author(1))["meta"]?["count"] == 2)
        // get has its own rule: title only, and another author's post is not there.
        request = RecordRequest(resource: "Post")
        request.filterByTk = 1
        let one = try await f.records.get(app: "main", request, access: Self.author(1))["data"]
        #expect(one?.objectValue?.keys.sorted() == ["id", "title"])
        request.filterByTk = 3
        #expect(try await f.records.get(app: "main", request, access: Self.author(1))["data"] == .null)
    }

    @Test(arguments: Backend.available) func aHiddenFieldCannotBeNamedAnywhere(_ backend: Backend) async throws {
        let f = try await Fixture.make(backend)
        defer { Task { await f.close() } }
        let access = Self.author(1)
        await refused({ _ = try await list(f, access) { $0.fields = ["score"] } }, saying: "unknown field 'score'")
        await refused({ _ = try await list(f, access) { $0.filter = ["score": ["$gt": 4]] } }, saying: "unknown field 'score'")
        await refused({ _ = try await list(f, access) { $0.sort = ["-score"] } }, saying: "unknown field 'score'")
        await refused({ _ = try await list(f, access, "Author") { $0.filter = ["active": false] } }, saying: "unknown field 'active'")
        // Across a relation: the author's hidden field is as unknown as the post's own.
        await refused({ _ = try await list(f, access) { $0.filter = ["author.active": false] } }, saying: "unknown field 'active'")
        await refused({ _ = try await list(f, access) { $0.sort = ["author.active"] } }, saying: "unknown field 'active'")
        var query = AggregateRequest(resource: "Post")
        query.measures = [["field": "score", "aggregation": "sum", "alias": "s"]]
        await refused({ _ = try await f.records.query(app: "main", query, access: access) }, saying: "unknown field 'score'")
    }

    @Test(arguments: Backend.available) func relatedRowsKeepTheirOwnRules(_ backend: Backend) async throws {
        let f = try await Fixture.make(backend)
        defer { Task { await f.close() } }
        // Every post, but only active authors (Ada): Brian's and Chen's posts cannot be found through them.
        let everyPost = Self.access(
            [
                "Post": [.list: .everything, .query: .everything],
                "Author": [.list: AccessRule(filter: ["active": true]), .query: AccessRule(filter: ["active": true])],
            ],
            userID: 1)
        let byName = try await list(f, everyPost) { $0.filter = ["author.name": "Brian"] }
        #expect(byName.isEmpty, "Brian is not an active author, so no post is found by his name")
        let appended = try await list(f, everyPost) { $0.appends = ["author"] }
        #expect(appended.first { $0["id"] == 3 }?["author"] == .null)
        #expect(appended.first { $0["id"] == 1 }?["author"]?["name"] == "Ada")
        // A sort through the relation sees no hidden name: Brian's post sorts as if it had no author.
        let sorted = try await list(f, everyPost) {
            $0.sort = ["author.name"]; $0.fields = ["id"]
        }
        #expect(sorted.prefix(2).compactMap { $0["id"]?.intValue } == [1, 2])
        // The parent of an association resource must be visible, even when its key alone links.
        let brians = try await list(f, everyPost, "Author.posts") { $0.sourceId = 2 }
        #expect(brians.isEmpty)
        #expect(try await list(f, everyPost, "Author.posts") { $0.sourceId = 1 }.count == 2)
        // An aggregate joins only the rows the role sees.
        var query = AggregateRequest(resource: "Post")
        query.measures = [["field": "id", "aggregation": "count", "alias": "n"]]
        query.dimensions = [["field": "author.name", "alias": "author"]]
        let groups = try await f.records.query(app: "main", query, access: everyPost)["data"]?.arrayValue ?? []
        #expect(!groups.contains { $0["author"] == "Brian" })
        // A collection the role may not list is refused wherever it is reached, naming it and the action.
        let postsOnly = Self.access(["Post": [.list: .everything]], userID: 1)
        await refused({ _ = try await list(f, postsOnly) { $0.appends = ["author"] } }, saying: "may not list records of 'Author'")
        await refused({ _ = try await list(f, postsOnly) { $0.filter = ["author.name": "Ada"] } }, saying: "may not list records of 'Author'")
        await refused({ _ = try await list(f, postsOnly) { $0.sort = ["author.name"] } }, saying: "may not list records of 'Author'")
        await refused({ _ = try await list(f, postsOnly, "Author.posts") { $0.sourceId = 1 } }, saying: "may not list records of 'Author'")
        await refused({ _ = try await list(f, postsOnly, "Author") }, saying: "may not list records of 'Author'")
    }

    @Test(arguments: Backend.available) func writesStayInsideTheRole(_ backend: Backend) async throws {
        let f = try await Fixture.make(backend)
        defer { Task { await f.close() } }
        let access = Self.author(1)
        // Another author's post is not updated; the own one is.
        var update = RecordRequest(resource: "Post")
        update.filterByTk = [1, 3]
        update.values = ["title": "Mine"]
        let updated = try await f.records.update(app: "main", update, access: access)["data"]?.arrayValue ?? []
        #expect(updated.compactMap { $0["id"]?.intValue } == [1])
        #expect(updated.first?.objectValue?.keys.sorted() == ["id", "title"], "what comes back is what the role may get")
        #expect(try await f.list(filter: ["id": 3]).first?["title"] == "Brian writes")
        // A field outside the write list is refused by name.
        update.filterByTk = 1
        update.values = ["score": 1]
        await refused({ _ = try await f.records.update(app: "main", update, access: access) }, saying: "may not set field 'score'")
        // A belongsTo link must name a record the role can see.
        update.values = ["author": 2]
        await refused({ _ = try await f.records.update(app: "main", update, access: access) }, saying: "may not see")
        var create = RecordRequest(resource: "Post")
        create.values = ["title": "New", "author": 2]
        await refused({ _ = try await f.records.create(app: "main", create, access: access) }, saying: "may not see")
        create.values = ["title": "New", "author": 1]
        #expect(try await f.records.create(app: "main", create, access: access)["data"]?["title"] == "New")
        // An action the role lacks is refused, naming the collection and the action.
        var destroy = RecordRequest(resource: "Post")
        destroy.filterByTk = 1
        await refused({ _ = try await f.records.destroy(app: "main", destroy, access: access) }, saying: "may not destroy records of 'Post'")
        #expect(try await f.list(filter: ["id": 1]).count == 1)
        // A record created under an association needs a parent the role can see.
        let underActive = Self.access(
            ["Post": [.create: .everything, .list: .everything], "Author": [.list: AccessRule(filter: ["active": true])]], userID: 1)
        var child = RecordRequest(resource: "Author.posts")
        child.sourceId = 2
        child.values = ["title": "Under Brian"]
        await refused({ _ = try await f.records.create(app: "main", child, access: underActive) }, saying: "no Author with id 2")
        child.sourceId = 1
        let made = try await f.records.create(app: "main", child, access: underActive)["data"]?["id"]
        #expect(try await f.list(filter: ["title": "Under Brian"]).map { $0["authorId"] } == [1] && made != nil)
        // hasMany links move records only where the target's update rule allows.
        let linker = Self.access(
            ["Author": [.update: .everything, .list: .everything], "Post": [.update: AccessRule(filter: ["authorId": 1]), .list: .everything]], userID: 1)
        var link = RecordRequest(resource: "Author")
        link.filterByTk = 3
        link.values = ["posts": [1, 3]]
        _ = try await f.records.update(app: "main", link, access: linker)
        let moved = try await f.list(filter: ["authorId": 3]).compactMap { $0["id"]?.intValue }.sorted()
        #expect(moved == [1, 4], "post 1 (Ada's, updatable) moved; post 3 (Brian's) did not")
    }

    /// A key taken by a row the role cannot see is refused in the same words as one it can: never
    /// "already exists", which would tell that the hidden row is there. A role that reads every
    /// row is told what the value collides with.
    @Test(arguments: Backend.available) func aHiddenRowsKeyIsNotSaidToExist(_ backend: Backend) async throws {
        let f = try await Fixture.make(backend)
        defer { Task { await f.close() } }
        let writer = Self.access(
            ["Post": [.create: .everything, .list: AccessRule(filter: ["authorId": 1]), .get: AccessRule(filter: ["authorId": 1])]], userID: 1)
        func refusal(_ id: Int64, _ access: RecordAccess) async -> String {
            var create = RecordRequest(resource: "Post")
            create.values = ["id": .int(id), "title": "taken?"]
            do {
                _ = try await f.records.create(app: "main", create, access: access)
                return "created"
            } catch {
                return (error as? DataError)?.message ?? "\(error)"
            }
        }
        let hidden = await refusal(3, writer)  // Brian's post
        let visible = await refusal(1, writer)  // Ada's own
        #expect(hidden == visible, "the same words whether the row is hidden or not")
        #expect(!hidden.contains("exist") && hidden.contains("cannot be used"), "\(hidden)")
        let told = await refusal(3, .unrestricted)
        #expect(told.contains("already exists"), "a role that sees every row is told")
    }

    /// A link written through the raw foreign-key column is checked as the relation is, and an
    /// update cannot move a record out of the rows the role may update.
    @Test(arguments: Backend.available) func rawKeysAndMovesStayInsideTheRole(_ backend: Backend) async throws {
        let f = try await Fixture.make(backend)
        defer { Task { await f.close() } }
        let own: JSON = ["authorId": ["$eq": "{{currentUser.id}}"]]
        let access = Self.access(
            [
                "Post": [
                    .create: AccessRule(fields: ["title", "authorId"]), .update: AccessRule(fields: ["title", "authorId"], filter: own),
                    .list: .everything,
                ],
                "Author": [.list: AccessRule(filter: ["active": true])],
            ], userID: 1)
        // Author 2 exists but is hidden from the role, author 99 does not exist: the same answer for both.
        for hidden in [2, 99] {
            var create = RecordRequest(resource: "Post")
            create.values = ["title": "Linked around", "authorId": .int(Int64(hidden))]
            await refused(
                { _ = try await f.records.create(app: "main", create, access: access) },
                saying: "values.authorId names a Author record that does not exist or that this role may not see")
        }
        #expect(try await f.list(filter: ["title": "Linked around"]).isEmpty)
        var create = RecordRequest(resource: "Post")
        create.values = ["title": "Linked to Ada", "authorId": 1]
        _ = try await f.records.create(app: "main", create, access: access)
        #expect(try await f.list(filter: ["title": "Linked to Ada"]).map { $0["authorId"] } == [1])
        // Handing an own post to someone else moves it out of the rows the role may update: refused, and nothing changes.
        let visibleToAll = Self.access(
            ["Post": [.update: AccessRule(fields: ["title", "authorId"], filter: own), .list: .everything], "Author": [.list: .everything]], userID: 1)
        var update = RecordRequest(resource: "Post")
        update.filterByTk = [1, 2]
        update.values = ["authorId": 2, "title": "Given away"]
        await refused({ _ = try await f.records.update(app: "main", update, access: visibleToAll) }, saying: "out of the rows this role may update")
        #expect(try await f.list(filter: ["id": ["$in": [1, 2]]]).map { $0["authorId"] } == [1, 1])
        #expect(try await f.list(filter: ["title": "Given away"]).isEmpty)
        update.values = ["title": "Still mine"]
        #expect(try await f.records.update(app: "main", update, access: visibleToAll)["data"]?.arrayValue?.count == 2)
    }

    @Test(arguments: Backend.available) func aRowFilterNeedsItsVariables(_ backend: Backend) async throws {
        let f = try await Fixture.make(backend)
        defer { Task { await f.close() } }
        await refused({ _ = try await list(f, Self.author(nil)) }, saying: "depend on {{currentUser.id}}")
        // Aggregates see the same rows: Ada's two posts.
        var query = AggregateRequest(resource: "Post")
        query.measures = [["field": "id", "aggregation": "count", "alias": "n"]]
        #expect(try await f.records.query(app: "main", query, access: Self.author(1))["data"]?.arrayValue?.first?["n"] == 2)
    }
}

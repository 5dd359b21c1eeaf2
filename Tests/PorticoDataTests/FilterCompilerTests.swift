import PorticoJSON
import PorticoStore
import PorticoTestSupport
import Testing

@testable import PorticoData

@Suite struct FilterCompilerTests {
    @Test(arguments: Backend.available) func operatorsSelectTheRightRows(_ backend: Backend) async throws {
        let f = try await Fixture.make(backend)
        defer { Task { await f.close() } }
        #expect(try await f.ids(filter: ["title": "Hello world"]) == [1])
        #expect(try await f.ids(filter: ["id": ["$in": [2, 4]]]) == [2, 4])
        #expect(try await f.ids(filter: ["id": [1, 3]]) == [1, 3])
        #expect(try await f.ids(filter: ["score": ["$gt": 3, "$lte": 5]]) == [1, 4])
        #expect(try await f.ids(filter: ["score": ["$ne": 3]]) == [1, 3, 4, 5], "$ne keeps NULLs, as NocoBase does")
        #expect(try await f.ids(filter: ["score": nil]) == [3])
        #expect(try await f.ids(filter: ["score": ["$empty": true]]) == [3])
        #expect(try await f.ids(filter: ["title": ["$includes": "POST"]]) == [2], "case-insensitive")
        #expect(try await f.ids(filter: ["title": ["$includes": "%"]]) == [4], "% is a literal, not a wildcard")
        #expect(try await f.ids(filter: ["title": ["$startsWith": ["he", "se"]]]) == [1, 2])
        #expect(try await f.ids(filter: ["title": ["$endWith": "post"]]) == [2])
        #expect(try await f.ids(filter: ["title": ["$notIncludes": "o"]]) == [3, 4])
        #expect(try await f.ids(filter: ["$or": [["id": 1], ["id": 5]]]) == [1, 5])
        #expect(try await f.ids(filter: ["$and": [["score": ["$gte": 3]], ["$or": [["id": 1], ["id": 4]]]]]) == [1, 4])
        #expect(try await f.ids(filter: ["id": ["$between": [2, 3]]]) == [2, 3])
        #expect(try await f.ids(filter: ["id": ["$notIn": [1, 2, 3]]]) == [4, 5])
    }

    @Test(arguments: Backend.available) func dateOperatorsUseWholeSpans(_ backend: Backend) async throws {
        let f = try await Fixture.make(backend)
        defer { Task { await f.close() } }
        #expect(try await f.ids(filter: ["published": ["$dateOn": "2024-01-15"]]) == [1])
        #expect(try await f.ids(filter: ["published": ["$dateOn": "2024"]]) == [1, 2, 5])
        #expect(try await f.ids(filter: ["published": ["$dateOn": "2024-02"]]) == [2])
        #expect(try await f.ids(filter: ["published": ["$dateBefore": "2024-01-01"]]) == [3])
        #expect(try await f.ids(filter: ["published": ["$dateAfter": "2024-02"]]) == [5])
        #expect(try await f.ids(filter: ["published": ["$dateBetween": ["2023-12-31", "2024-01-31"]]]) == [1, 3])
    }

    @Test(arguments: Backend.available) func relationPathsBecomeSubqueries(_ backend: Backend) async throws {
        let f = try await Fixture.make(backend)
        defer { Task { await f.close() } }
        #expect(try await f.ids(filter: ["author.name": "Ada"]) == [1, 2])
        #expect(try await f.ids(filter: ["author": ["name": ["$startsWith": "B"]]]) == [3])
        #expect(try await f.ids(filter: ["author": ["$exists": true]]) == [1, 2, 3, 4])
        #expect(try await f.ids(filter: ["author": ["$notExists": true]]) == [5])
        #expect(try await f.ids("Author", filter: ["posts.score": ["$gte": 4]]) == [1, 3])
        // Conditions on one relation share one subquery: the same post must match both.
        #expect(try await f.ids("Author", filter: ["posts.title": "Second post", "posts.score": ["$gt": 4]]) == [])
        #expect(try await f.ids("Author", filter: ["posts": ["$empty": true]]) == [])
    }

    static let badFilters: [(String, String)] = [
        (#"{"title\" OR 1=1 --": "x"}"#, "unknown field"),
        (#"{"title": {"$eq; DROP TABLE \"Post\"": 1}}"#, "unknown operator"),
        (#"{"title": {"$regexp": ".*"}}"#, "unknown operator"),
        (#"{"$where": "1=1"}"#, "must follow a field name"),
        (#"{"author.name\" OR \"1\"=\"1": "x"}"#, "unknown field"),
        (#"{"score": {"$gt": "lots"}}"#, "decimal field"),
        (#"{"id": {"$in": ["a"]}}"#, "integer field"),
        (#"{"published": {"$dateOn": "yesterday-ish"}}"#, "expected a date"),
        (#"{"id": {"$between": [1]}}"#, "two values"),
        (#"{"$and": "x"}"#, "must be an array"),
        (#"{"author": "Ada"}"#, "relation to 'Author'"),
        (#"{"title": {"$isTruly": true}}"#, "boolean fields"),
    ]

    @Test(arguments: badFilters)
    func refusesBadFiltersWithPreciseErrors(text: String, mention: String) async throws {
        let filter = try JSONParser.parse(text)
        let f = try await Fixture.make()
        defer { Task { await f.close() } }
        await #expect {
            _ = try await f.ids(filter: filter)
        } throws: { error in
            guard let error = error as? DataError else { return false }
            return error.message.contains(mention)
        }
    }

    @Test(arguments: Backend.available) func valuesAreBoundNeverSpliced(_ backend: Backend) async throws {
        let f = try await Fixture.make(backend)
        defer { Task { await f.close() } }
        let hostile = "x' OR '1'='1"
        #expect(try await f.ids(filter: ["title": .string(hostile)]) == [])
        #expect(try await f.ids(filter: ["title": ["$includes": "'); DROP TABLE \"Post\"; --"]]) == [])
        #expect(try await f.ids(filter: nil).count == 5, "the table is intact")
        let catalog = try await f.catalogs.catalog(app: "main")
        let sql = try FilterCompiler(catalog: catalog, flavor: .sqlite)
            .compile(.object(["title": .string(hostile), "author.name": ["$includes": "a"]]), on: catalog.collection("Post"), alias: "t0")!
        let text = serialize(sql)
        #expect(!text.contains("OR '1'"))
        #expect(text.contains("?"))
    }

    func serialize(_ fragment: SQLFragment) -> String {
        fragment.rendered().sql
    }

    @Test(arguments: Backend.available) func sortFieldsAndAppendsAreChecked(_ backend: Backend) async throws {
        let f = try await Fixture.make(backend)
        defer { Task { await f.close() } }
        let sorted = try await f.list(sort: ["-score", "title"]).compactMap { $0["id"]?.intValue }
        #expect(sorted == [4, 1, 2, 5, 3], "descending with NULLs last, id breaks ties")
        let byAuthor = try await f.list(sort: ["author.name", "-id"]).compactMap { $0["id"]?.intValue }
        #expect(byAuthor == [2, 1, 3, 4, 5])
        await #expect(throws: DataError.self) { _ = try await f.list(sort: ["title; DROP TABLE Post"]) }
        await #expect(throws: DataError.self) { _ = try await f.list { $0.fields = ["title\" FROM x --"] } }
        await #expect(throws: DataError.self) { _ = try await f.list { $0.appends = ["nope"] } }
        await #expect(throws: DataError.self) { _ = try await f.list("Post\"; --") }
        let withAuthor = try await f.list(filter: ["id": 1]) {
            $0.appends = ["author"]; $0.fields = ["title"]
        }
        #expect(withAuthor.first == ["title": "Hello world", "author": ["id": 1, "name": "Ada", "active": true]])
    }
}

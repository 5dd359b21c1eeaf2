import Foundation
import PorticoJSON
import PorticoStore
import PorticoTestSupport
import Testing

@testable import PorticoData

/// Every request has bounded work: deep or wide appends, huge pages and wide filters are refused
/// or cut with a note, and results are measured while they are built.
@Suite struct BoundedWorkTests {
    func service(_ f: Fixture, _ configure: (inout ResultBudget) -> Void) -> RecordService {
        var budget = ResultBudget()
        configure(&budget)
        return RecordService(catalogs: f.catalogs, budget: budget)
    }

    @Test(arguments: Backend.available) func appendsDeeperThanThreeRelationsAreRefused(_ backend: Backend) async throws {
        let f = try await Fixture.make(backend)
        defer { Task { await f.close() } }
        let three = try await f.list("Author") { $0.appends = ["posts.author.posts"] }
        #expect(three.first?["posts"]?.arrayValue?.first?["author"]?["posts"]?.arrayValue?.isEmpty == false)
        await #expect { _ = try await f.list("Author") { $0.appends = ["posts.author.posts.author"] } } throws: {
            ($0 as? DataError)?.message.contains("at most 3") == true
        }
        let hundred = Array(repeating: "posts.author", count: 50).joined(separator: ".")
        let start = ContinuousClock.now
        await #expect(throws: DataError.self) { _ = try await f.list("Author") { $0.appends = [hundred] } }
        #expect(ContinuousClock.now - start < .seconds(5), "refused before the work, not after it")
    }

    @Test(arguments: Backend.available) func attachedRecordsAreCappedPerParentAndInAll(_ backend: Backend) async throws {
        let f = try await Fixture.make(backend)
        defer { Task { await f.close() } }
        var request = RecordRequest(resource: "Author")
        request.appends = ["posts"]
        let perParent = try await service(f) { $0.maxAppendedRows = 1 }.list(app: "main", request, access: .unrestricted)
        let ada = perParent["data"]?.arrayValue?.first { $0["name"] == "Ada" }
        #expect(ada?["posts"]?.arrayValue?.map { $0["id"] } == [1], "Ada has two posts; one is shown, the lowest key")
        #expect(perParent["meta"]?["notes"]?.serializedString.contains("limited to 1 related records each") == true)

        let inAll = try await service(f) { $0.maxAttachedRows = 2 }.list(app: "main", request, access: .unrestricted)
        let attached = inAll["data"]?.arrayValue?.reduce(0) { $0 + ($1["posts"]?.arrayValue?.count ?? 0) }
        #expect(attached == 2)
        #expect(inAll["meta"]?["truncated"] == true)
        #expect(inAll["meta"]?["notes"]?.serializedString.contains("stopped at 2 related records in all") == true)
    }

    @Test(arguments: Backend.available) func resultsStopAtTheByteBudgetCountingAppends(_ backend: Backend) async throws {
        let f = try await Fixture.make(backend)
        defer { Task { await f.close() } }
        var request = RecordRequest(resource: "Author")
        request.appends = ["posts"]
        let full = try await f.records.list(app: "main", request, access: .unrestricted)
        let fullSize = full["data"]!.serialized.count
        let cut = try await service(f) { $0.maxBytes = fullSize - 20 }.list(app: "main", request, access: .unrestricted)
        let kept = cut["data"]?.arrayValue ?? []
        #expect(kept.count < 3 && !kept.isEmpty)
        #expect(cut["data"]!.serialized.count <= fullSize - 20)
        #expect(cut["meta"]?["truncated"] == true)
        #expect(kept.allSatisfy { $0["posts"]?.arrayValue != nil }, "every kept record has its appends")
    }

    @Test(arguments: Backend.available) func pagesPastTheLimitAreRefusedNotOverflowed(_ backend: Backend) async throws {
        let f = try await Fixture.make(backend)
        defer { Task { await f.close() } }
        await #expect {
            _ = try await f.list {
                $0.page = 36_028_797_018_963_968; $0.pageSize = 500
            }
        } throws: {
            ($0 as? DataError)?.message.contains("page must be between 1 and") == true
        }
        await #expect(throws: DataError.self) { _ = try await f.list { $0.page = Int.max } }
        let last = try await f.list {
            $0.page = 10_000_000; $0.pageSize = 500
        }
        #expect(last.isEmpty)
    }

    @Test(arguments: Backend.available) func wideFiltersAreRefusedWithWhatToChange(_ backend: Backend) async throws {
        let f = try await Fixture.make(backend)
        defer { Task { await f.close() } }
        let wideOr: JSON = ["$or": .array((0..<101).map { ["id": .int(Int64($0))] })]
        await #expect { _ = try await f.list(filter: wideOr) } throws: { ($0 as? DataError)?.message.contains("use $in") == true }
        var nested: JSON = ["title": "x"]
        for _ in 0..<6 { nested = ["$and": .array(Array(repeating: nested, count: 3))] }
        await #expect { _ = try await f.list(filter: nested) } throws: { ($0 as? DataError)?.message.contains("more than 500 conditions") == true }
        let manyIn: JSON = ["id": ["$in": .array((0..<1001).map { .int(Int64($0)) })]]
        await #expect(throws: DataError.self) { _ = try await f.list(filter: manyIn) }
        await #expect(throws: DataError.self) { _ = try await f.list { $0.fields = Array(repeating: "title", count: 201) } }
    }

    @Test func sqliteLimitsBecomeGuidance() async throws {
        let f = try await Fixture.make()
        defer { Task { await f.close() } }
        // Five nested $or of 99 conditions each pass Portico's caps (100 items, 500 conditions)
        // but chain into an expression deeper than SQLite's limit (250).
        var or: JSON = ["id": 1]
        for level in 0..<5 {
            or = ["$or": .array([or] + (0..<99).map { i in ["title": .string("t\(level)-\(i)")] })]
        }
        do {
            _ = try await f.list(filter: or)
            Issue.record("expected SQLite's expression depth limit")
        } catch let error as StoreError {
            #expect(error.kind == .tooComplex)
            #expect(error.guidance.contains("fewer conditions"))
        }
    }
}

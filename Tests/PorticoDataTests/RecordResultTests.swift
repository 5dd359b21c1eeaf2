import PorticoJSON
import PorticoStore
import PorticoTestSupport
import Testing

@testable import PorticoData

/// A list or get written straight from its rows must be the bytes of the value it stands for.
@Suite struct RecordResultTests {
    /// The result's own bytes against the serialisation of its value tree.
    func expectSameBytes(_ result: RecordResult, _ comment: Comment? = nil) {
        #expect(String(decoding: result.serialized, as: UTF8.self) == result.json.serializedString, comment)
    }

    @Test(arguments: Backend.available) func listsAndGetsWriteTheBytesOfTheirValue(_ backend: Backend) async throws {
        let f = try await Fixture.make(backend)
        defer { Task { await f.close() } }
        let shapes: [(String, (inout RecordRequest) -> Void)] = [
            ("Post", { _ in }),
            ("Post", { $0.fields = ["title", "score"] }),
            ("Post", { $0.except = ["published"] }),
            ("Post", { $0.appends = ["author"] }),
            ("Post", { ($0.page, $0.pageSize) = (2, 2) }),
            ("Post", { ($0.page, $0.pageSize) = (9, 2) }),
            ("Post", { $0.paginate = false }),
            ("Author", { $0.appends = ["posts"] }),
            ("Author", { $0.filter = ["name": ["$eq": "nobody"]] }),
        ]
        for (resource, shape) in shapes {
            var request = RecordRequest(resource: resource)
            shape(&request)
            let result = try await f.records.listResult(app: "main", request, access: .unrestricted)
            expectSameBytes(result, "list \(resource) \(request)")
            #expect(result.json == (try await f.records.list(app: "main", request, access: .unrestricted)))
        }
        for key in [1, 3, 99] {
            var request = RecordRequest(resource: "Post")
            request.filterByTk = .int(Int64(key))
            expectSameBytes(try await f.records.getResult(app: "main", request, access: .unrestricted), "get \(key)")
            request.appends = ["author"]
            expectSameBytes(try await f.records.getResult(app: "main", request, access: .unrestricted), "get \(key) with its author")
        }
        // Cut by the byte budget: fewer records and a note.
        var budget = ResultBudget()
        budget.maxBytes = 200
        let small = RecordService(catalogs: f.catalogs, budget: budget)
        let cut = try await small.listResult(app: "main", RecordRequest(resource: "Post"), access: .unrestricted)
        #expect(cut.json["meta"]?["truncated"] == true)
        expectSameBytes(cut, "cut by bytes")
    }

    @Test(arguments: Backend.available) func everyPageCountsWhatMatchesInAll(_ backend: Backend) async throws {
        // Past the first page the count is read by the page's own statement; a page past the end
        // has no row to carry it and asks on its own.
        let f = try await Fixture.make(backend)
        defer { Task { await f.close() } }
        for filter: JSON? in [nil, ["authorId": ["$eq": 1]], ["title": ["$includes": "o"]], ["id": ["$gt": 100]]] {
            var all = RecordRequest(resource: "Post")
            all.filter = filter
            all.paginate = false
            let total = (try await f.records.list(app: "main", all, access: .unrestricted))["data"]?.arrayValue?.count ?? -1
            var seen: [JSON] = []
            for page in 1...4 {
                var request = RecordRequest(resource: "Post")
                (request.filter, request.page, request.pageSize) = (filter, page, 2)
                let result = try await f.records.list(app: "main", request, access: .unrestricted)
                #expect(result["meta"]?["count"]?.intValue == Int64(total), "\(filter?.serializedString ?? "all"), page \(page)")
                #expect(result["meta"]?["totalPage"]?.intValue == Int64((total + 1) / 2))
                let records = result["data"]?.arrayValue ?? []
                #expect(records.allSatisfy { $0.objectValue?.keys.elements == ["id", "title", "score", "published", "authorId"] })
                seen += records
            }
            #expect(seen.count == total)
        }
    }

    @Test func everyFieldTypeAndStorageClassIsWrittenAsItsValue() async throws {
        // SQLite keeps what a column is given, so one column holds values of several kinds:
        // each (value, field type) pair must write what `RowMapping.json` makes of it.
        let f = try await Fixture.make(.sqlite)
        defer { Task { await f.close() } }
        let kinds = CollectionSchema(
            name: "Kinds", tableName: "Kinds",
            fields: [
                Field(name: "id", type: .integer, nullable: false, primaryKey: true, autoIncrement: true),
                Field(name: "s", type: .string), Field(name: "t", type: .text), Field(name: "i", type: .integer),
                Field(name: "f", type: .float), Field(name: "d", type: .decimal, length: 10, scale: 2), Field(name: "b", type: .boolean),
                Field(name: "j", type: .json), Field(name: "dt", type: .datetime), Field(name: "sel", type: .select),
            ])
        try await f.catalogs.create(app: "main", collections: [kinds])
        try await f.store.execute(
            """
            INSERT INTO "Kinds" (id, s, t, i, f, d, b, j, dt, sel) VALUES
            (1, 'quote " back \\ tab \t end', 'line
            two', 12, 1.5, 3, 1, '{"a":[1,2.5,"x"]}', '2024-01-15 10:00:00', 'red'),
            (2, 'é 😀', '', '12', 3, 2.25, 0, '[true,null]', NULL, NULL),
            (3, NULL, NULL, 'twelve', 'n/a', 'n/a', 'true', 'not json', 'soon', 'x'),
            (4, 7, 8.5, 2.0, -0.0, 1e300, 't', 42, 9, 10),
            (5, X'00', 'ctl ' || char(1), 9223372036854775807, 1e-7, -12, 2, '"s"', '', '')
            """)
        let result = try await f.records.listResult(app: "main", RecordRequest(resource: "Kinds"), access: .unrestricted)
        expectSameBytes(result)
        let rows = result.json["data"]?.arrayValue ?? []
        #expect(rows.count == 5)
        #expect(rows.first?["j"] == ["a": [1, 2.5, "x"]])
        #expect(rows.first?["b"] == true)
        for id in 1...5 {
            var request = RecordRequest(resource: "Kinds")
            request.filterByTk = .int(Int64(id))
            expectSameBytes(try await f.records.getResult(app: "main", request, access: .unrestricted), "Kinds \(id)")
        }
    }
}

import Foundation
import Logging
import PorticoData
import PorticoJSON
import PorticoStore
import PorticoTestSupport
import Testing

@testable import PorticoWorkflow

/// One filter language, two interpreters: the SQL compiler behind the data tools and the matcher
/// behind workflow conditions. Every operator runs both ways over the same records (NULLs,
/// empty text, LIKE wildcards, whole date spans among them) and must keep the same ones.
@Suite struct FilterAgreementTests {
    static let rows: [JSONObject] = [
        ["title": "Hello World", "qty": 5, "price": 4.5, "done": true, "due": "2024-01-15", "at": "2024-01-15 10:00:00"],
        ["title": "second post", "qty": 3, "price": 3.0, "done": false, "due": "2024-02-01", "at": "2024-02-01 00:00:00"],
        ["title": "50% off_sale", "qty": nil, "price": nil, "done": nil, "due": "2023-12-31", "at": "2023-12-31 23:59:59"],
        ["title": "", "qty": 0, "price": -1.25, "done": true, "due": nil, "at": nil],
        ["title": nil, "qty": 10, "price": 100, "done": false, "due": "2024-03-03", "at": "2024-03-03 12:00:00"],
        ["title": "hello again", "qty": 5, "price": 4.5, "done": nil, "due": "2024-01-01", "at": "2024-01-01 00:00:00"],
        ["title": "back\\slash", "qty": 7, "price": 0.5, "done": true, "due": "2025-06-30", "at": "2025-06-30 18:30:00"],
    ]

    /// (field, operator, operand): each operator on the fields it is meant for.
    static let cases: [(String, String, JSON)] = [
        ("title", "$eq", "Hello World"), ("qty", "$eq", 5), ("qty", "$eq", nil), ("done", "$eq", true), ("title", "$eq", ["Hello World", "hello again"]),
        ("title", "$ne", "Hello World"), ("qty", "$ne", 5), ("qty", "$ne", nil), ("qty", "$ne", [3, 5]),
        ("qty", "$in", [3, 5]), ("title", "$in", ["second post", "nothing"]), ("qty", "$in", []),
        ("qty", "$notIn", [3, 5]), ("title", "$notIn", ["second post"]),
        ("qty", "$gt", 3), ("price", "$gt", 4.5), ("qty", "$gte", 5), ("price", "$gte", 4.5), ("qty", "$lt", 5), ("price", "$lt", 0),
        ("qty", "$lte", 3), ("price", "$lte", 3), ("title", "$gt", "s"),
        ("qty", "$between", [3, 7]), ("price", "$between", [0, 4.5]), ("qty", "$notBetween", [3, 7]), ("price", "$notBetween", [0, 4.5]),
        ("title", "$includes", "hello"), ("title", "$includes", "%"), ("title", "$includes", "_"), ("title", "$includes", ["post", "WORLD"]),
        ("title", "$includes", nil), ("qty", "$includes", "0"), ("title", "$notIncludes", "o"), ("title", "$notIncludes", ["post", "world"]),
        ("title", "$notIncludes", nil), ("title", "$startsWith", "HE"), ("title", "$startsWith", ["se", "50%"]), ("title", "$notStartsWith", "h"),
        ("title", "$endsWith", "d"), ("title", "$endWith", "SALE"), ("title", "$notEndsWith", "n"), ("title", "$notEndWith", "d"),
        ("title", "$like", "h%o%"), ("title", "$like", "%\\%%"), ("title", "$like", "_ello%"), ("title", "$like", "%"), ("title", "$like", "%\\\\%"),
        ("title", "$notLike", "%o%"), ("title", "$notLike", "_%"),
        ("title", "$empty", true), ("qty", "$empty", true), ("title", "$notEmpty", true), ("qty", "$notEmpty", true),
        ("qty", "$exists", true), ("title", "$exists", false), ("qty", "$notExists", true), ("title", "$notExists", false),
        ("done", "$isTruly", true), ("done", "$isTruly", false), ("done", "$isFalsy", true), ("done", "$isFalsy", false),
        ("due", "$dateOn", "2024"), ("due", "$dateOn", "2024-01"), ("due", "$dateOn", "2024-01-15"), ("at", "$dateOn", "2024-01-15"),
        ("at", "$dateOn", "2024-01-15 10"), ("due", "$dateNotOn", "2024"), ("at", "$dateNotOn", "2024-01"),
        ("due", "$dateBefore", "2024-01-15"), ("at", "$dateBefore", "2024"), ("due", "$dateNotBefore", "2024-01-15"), ("at", "$dateNotBefore", "2024-02"),
        ("due", "$dateAfter", "2024-01"), ("at", "$dateAfter", "2024-01-15"), ("due", "$dateNotAfter", "2024-01"), ("at", "$dateNotAfter", "2023"),
        ("due", "$dateBetween", ["2023-12-31", "2024-01-31"]), ("at", "$dateBetween", ["2024-01-15", "2024-02"]),
    ]

    @Test func everyOperatorIsExercised() {
        let named = Set(Self.cases.compactMap { FilterOperator(name: $0.1) })
        #expect(named == Set(FilterOperator.allCases), "missing: \(Set(FilterOperator.allCases).subtracting(named).map(\.rawValue).sorted())")
        #expect(Self.cases.allSatisfy { FilterOperator(name: $0.1) != nil })
    }

    @Test(arguments: Backend.available) func theSQLCompilerAndTheMatcherKeepTheSameRecords(_ backend: Backend) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("filter-agreement-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let logger = Logger(label: "test")
        let store = try await backend.makeStore(in: directory, logger: logger)
        defer { Task { await store.close() } }
        try await Migrator().migrate(store)
        let catalogs = CatalogStore(databases: AppDatabases(primary: store, layout: .shared, logger: logger))
        let records = RecordService(catalogs: catalogs)
        let fields: [(String, FieldType)] = [
            ("title", .string), ("qty", .integer), ("price", .float), ("done", .boolean), ("due", .date), ("at", .datetime),
        ]
        _ = try await SchemaService(catalogs: catalogs).createCollection(
            app: "main", name: "Item", title: nil, description: nil, fields: fields.map { FieldSpec(name: $0.0, type: $0.1) })
        for row in Self.rows {
            var request = RecordRequest(resource: "Item")
            request.values = row
            _ = try await records.create(app: "main", request, access: .unrestricted)
        }
        func list(_ filter: JSON?) async throws -> [JSON] {
            var request = RecordRequest(resource: "Item")
            request.filter = filter
            request.paginate = false
            return try await records.list(app: "main", request, access: .unrestricted)["data"]?.arrayValue ?? []
        }
        let all = try await list(nil)
        #expect(all.count == Self.rows.count)
        var disagreements: [String] = []
        var keptSome = 0
        for (field, op, operand) in Self.cases {
            let filter: JSON = [field: .object([op: operand])]
            let bySQL = Set(try await list(filter).compactMap { $0["id"]?.intValue })
            var inMemory = Set<Int64>()
            for record in all {
                let matcher = FilterMatcher(variables: Variables(context: ["data": record], now: Date()))
                if try matcher.matches(filter), let id = record["id"]?.intValue { inMemory.insert(id) }
            }
            if bySQL != inMemory {
                disagreements.append("\(filter.serializedString): SQL keeps \(bySQL.sorted()), the matcher \(inMemory.sorted())")
            }
            if !bySQL.isEmpty && bySQL.count < all.count { keptSome += 1 }
        }
        #expect(disagreements.isEmpty, "\(disagreements.joined(separator: "\n"))")
        #expect(keptSome > Self.cases.count * 3 / 4, "most cases keep some records and drop others, so they can tell the two apart")
    }
}

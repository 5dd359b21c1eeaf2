import Logging
import PorticoAsk
import PorticoAuth
import PorticoData
import PorticoJSON
import PorticoMCP
import Testing

@testable import PorticoTools

@Suite struct ToolArgumentsTests {
    let arguments = ToolArguments([
        "name": "ana", "count": 3, "ratio": 1.5, "flag": true, "tags": ["a", "b"], "list": "x, y,,z", "user": ["email": 7],
        "empty": "",
    ])

    @Test func readsEachKindAndNamesTheWrongOne() throws {
        #expect(try arguments.string("name") == "ana")
        #expect(try arguments.optionalInt("count") == 3)
        #expect(try arguments.optionalBool("flag") == true)
        #expect(try arguments.optionalStrings("tags") == ["a", "b"])
        #expect(try arguments.optionalStrings("list") == ["x", "y", "z"])
        #expect(try arguments.optionalString("missing") == nil)
        #expect(throws: ToolError.self) { try arguments.string("empty") }
        let wrongType = #expect(throws: ToolError.self) { try arguments.optionalString("count") }
        #expect(wrongType?.message == "count must be a string, got integer")
        let fraction = #expect(throws: ToolError.self) { try arguments.optionalInt("ratio") }
        #expect(fraction?.message.hasPrefix("ratio must be a whole number") == true)
    }

    @Test func nestedObjectsNameTheirPath() throws {
        let user = try arguments.object("user")
        let error = #expect(throws: ToolError.self) { try user.optionalString("email") }
        #expect(error?.message == "user.email must be a string, got integer")
        let missing = #expect(throws: ToolError.self) { try arguments.object("application").string("name") }
        #expect(missing?.message == "application.name is required")
        #expect(throws: ToolError.self) { try arguments.object("name") }
    }
}

@Suite struct ToolErrorsTests {
    static func context() -> CallContext {
        CallContext(
            app: "main", principal: .anonymous, requestID: .int(1), protocolVersion: "2025-06-18", clientCapabilities: [:],
            logger: Logger(label: "test"), progressToken: nil, logLevel: nil, sink: nil)
    }

    static func failing(_ error: any Error) -> ToolPackage {
        ToolPackage.mapped(
            name: "t", summary: "t",
            tools: [
                Tool(name: "fails", description: "", inputSchema: ["type": "object"], annotations: .read, requiredScope: .mcp, access: .open) { _, _ in
                    throw error
                }
            ], titles: ["fails": "Fail"])
    }

    @Test func errorsFromBelowBecomeToolErrorsInOnePlace() async throws {
        let cases: [(any Error, String)] = [
            (DataError(.forbidden, "role 'viewer' may not create records of 'Album'"), "Permission denied: role 'viewer' may not create records of 'Album'"),
            (DataError(.invalidArgument, "pageSize must be at most 1000"), "pageSize must be at most 1000"),
            (SQLBotError(401, "the token has expired; call mcp_start again"), "the token has expired; call mcp_start again"),
        ]
        for (error, message) in cases {
            let tool = try #require(Self.failing(error).tools.first)
            let thrown = await #expect(throws: (any Error).self) { _ = try await tool.handler([:], Self.context()) }
            let mapped = try #require(thrown.flatMap { tool.mapError?($0) } as? ToolError)
            #expect(mapped.message == message)
        }
        let cancelled = try #require(Self.failing(CancellationError()).tools.first)
        #expect(cancelled.mapError?(CancellationError()) is CancellationError)
    }
}

@Suite struct ToolInventoryTests {
    @Test func onePlaceNamesThePackagesAndTheDefaults() throws {
        #expect(ToolInventory.defaults == ["data", "schema", "ask"])
        #expect(try ToolInventory.valid(["ask", "data"]) == ["data", "ask"], "in listing order")
        #expect(throws: DataError.self) { try ToolInventory.valid(["data", "sqlbot"]) }
        #expect(throws: DataError.self) { try ToolInventory.valid([]) }
        #expect(!ToolInventory.names.contains(ToolInventory.sqlbot))
    }
}

@Suite struct ToolDeclarationTests {
    static let name = Param.string("name", "Who")
    static let title = Param.nullableString("title")
    static let tags = Param.strings("tags", minItems: 1)
    static let limit = Param.int("limit", minimum: 1, maximum: 10).or(5)
    static let color = Param.optionalString("color", values: ["red", "blue"])

    static func tool(closed: Bool = false) -> Tool {
        Tool(
            "t", "A test tool", parameters: [name, title, tags, limit, color], closed: closed, annotations: .read, scope: .mcp, access: .open
        ) { input, _ in
            let title = try input[title]
            return .structured([
                "name": .string(try input[name]), "limit": .int(Int64(try input[limit])), "tags": JSON(try input[tags] ?? []),
                "title": title.map { $0.map(JSON.string) ?? "null-given" } ?? "absent",
            ])
        }
    }

    @Test func theSchemaIsMadeFromTheDeclarations() throws {
        let schema = try #require(Self.tool(closed: true).inputSchema.objectValue)
        #expect(schema["required"] == ["name"])
        #expect(schema["additionalProperties"] == false)
        let properties = try #require(schema["properties"]?.objectValue)
        #expect(Set(properties.keys) == ["name", "title", "tags", "limit", "color"])
        #expect(properties["name"] == ["type": "string", "description": "Who"])
        #expect(properties["title"] == ["type": ["string", "null"]])
        #expect(properties["tags"] == ["type": "array", "items": ["type": "string"], "minItems": 1])
        #expect(properties["limit"] == ["type": "integer", "minimum": 1, "maximum": 10])
        #expect(properties["color"] == ["type": "string", "enum": ["red", "blue"]])
        #expect(Self.tool().inputSchema.objectValue?["additionalProperties"] == nil)
    }

    @Test func theHandlerReadsTypedValuesWithTheirDefaults() async throws {
        let context = ToolErrorsTests.context()
        let tool = Self.tool()
        let read = try await tool.handler(["name": "ana", "tags": "a, b", "title": nil], context).structuredContent
        #expect(read == ["name": "ana", "limit": 5, "tags": ["a", "b"], "title": "null-given"])
        let given = try await tool.handler(["name": "bo", "limit": 3, "title": "Dr"], context).structuredContent
        #expect(given == ["name": "bo", "limit": 3, "tags": [], "title": "Dr"])
        let absent = try await tool.handler(["name": "cy"], context).structuredContent
        #expect(absent?["title"] == "absent")
        let wrong = await #expect(throws: ToolError.self) { _ = try await tool.handler(["name": "ana", "limit": "many"], context) }
        #expect(wrong?.message.hasPrefix("limit must be a whole number") == true)
        let missing = await #expect(throws: ToolError.self) { _ = try await tool.handler(["name": ""], context) }
        #expect(missing?.message == "name is required")
    }

    @Test func aHandlerCannotReadWhatItsToolDidNotDeclare() async {
        await #expect(processExitsWith: .failure) {
            let undeclared = Param.string("secret")
            _ = try? ToolInput(["secret": "x"], declared: ["name"])[undeclared]
        }
    }
}

@Suite struct ToolPresentationTests {
    static func package() -> ToolPackage {
        ToolPackage(name: "p", summary: "p", tools: [ToolDeclarationTests.tool()])
    }

    @Test func aTitleAndThePackageIconAreListedWithTheTool() throws {
        let tool = try #require(Self.package().titled(["t": "Test things"]).withIcon(baseURL: "https://example.test/icons/").tools.first)
        let listed = try #require(tool.definition.objectValue)
        #expect(listed["title"] == "Test things")
        #expect(listed["annotations"]?.objectValue?["title"] == "Test things")
        #expect(listed["icons"] == [["src": "https://example.test/icons/p.svg", "mimeType": "image/svg+xml", "sizes": ["any"]]])
        #expect(listed["inputSchema"] == ToolDeclarationTests.tool().inputSchema, "the rest of the definition is unchanged")
    }

    @Test func aToolWithoutATitleStopsTheStart() async {
        await #expect(processExitsWith: .failure) {
            _ = ToolPresentationTests.package().titled(["other": "Other"])
        }
    }
}

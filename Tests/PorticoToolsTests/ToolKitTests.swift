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
            ])
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

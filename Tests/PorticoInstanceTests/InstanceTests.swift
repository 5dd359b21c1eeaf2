import Foundation
import HTTPTypes
import Logging
import PorticoAuth
import PorticoBase
import PorticoData
import PorticoInstance
import PorticoJSON
import PorticoMCP
import PorticoTestSupport
import ServiceLifecycle
import Testing

/// An instance opened from a configuration on each database, without HTTP: the composition
/// root the server and the command line share, driven as a client would drive its endpoint.
@Suite struct InstanceTests {
    static func withInstance(
        _ backend: Backend, configure: (inout InstanceConfiguration) -> Void = { _ in }, _ body: (PorticoInstance) async throws -> Void
    ) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("portico-instance-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = InstanceConfiguration()
        configuration.dataDirectory = directory
        configuration.demo = true
        if backend == .postgres { configuration.databaseURL = try await Backend.freshPostgresDatabase() }
        configure(&configuration)
        var logger = Logger(label: "portico.tests")
        logger.logLevel = .critical
        let instance = try await PorticoInstance.open(configuration, logger: logger)
        do {
            try await body(instance)
        } catch {
            await instance.close()
            throw error
        }
        await instance.close()
    }

    /// A `tools/call` of the 2026-07-28 era, as an agent sends it.
    static func call(_ tool: String, _ arguments: JSON, on endpoint: MCPEndpoint, auth: AuthOutcome) async throws -> JSON {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        headers[.accept] = "application/json, text/event-stream"
        headers[HTTPField.Name("MCP-Protocol-Version")!] = "2026-07-28"
        headers[HTTPField.Name("Mcp-Method")!] = "tools/call"
        headers[HTTPField.Name("Mcp-Name")!] = tool
        let body: JSON = [
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": [
                "name": .string(tool), "arguments": arguments,
                "_meta": ["io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": [:]],
            ],
        ]
        let response = await endpoint.handle(
            MCPHTTPRequest(
                method: .post, headers: headers, body: Array(body.serializedString.utf8), app: "main", packagesQuery: nil,
                resourceMetadataURL: "http://127.0.0.1/.well-known/oauth-protected-resource/api/mcp", auth: auth, logger: Logger(label: "test")))
        guard case .json(let status, _, let bytes) = response else { throw TestFailure("expected a JSON response, got \(response)") }
        #expect(status == .ok)
        return try JSONParser.parse(bytes)
    }

    @Test(arguments: Backend.available) func anInstanceAnswersAToolCallWithoutHTTP(_ backend: Backend) async throws {
        try await Self.withInstance(backend) { instance in
            let key = try #require(instance.demo?.apiKey, "a first demo start creates a key")
            let auth = await instance.authenticator.authenticate(RequestCredentials(authorization: "Bearer \(key)"), app: "main")
            let reply = try await Self.call("resource_get", ["resource": "Album", "filterByTk": 1], on: instance.endpoint, auth: auth)
            #expect(reply["result"]?["isError"]?.boolValue != true, "\(reply.serializedString)")
            #expect(reply["result"]?["structuredContent"]?["data"]?["Title"]?.stringValue == "For Those About To Rock We Salute You")
            // The call is in the audit trail once it is flushed.
            try await instance.audit?.flush()
            let calls = try await instance.audit?.read(app: "main", .init(limit: 10)) ?? []
            #expect(calls.contains { $0.tool == "resource_get" })
        }
    }

    @Test(arguments: Backend.available) func aWrongKeyIsRefusedAndNothingRuns(_ backend: Backend) async throws {
        try await Self.withInstance(backend) { instance in
            let auth = await instance.authenticator.authenticate(RequestCredentials(authorization: "Bearer pk_not_a_key"), app: "main")
            guard case .authenticated = auth else { return }
            Issue.record("a made-up key signed in")
        }
    }

    @Test func theInstanceRunsItsBackgroundWorkAroundTheListeners() async throws {
        struct Listener: Service {
            func run() async throws {}
        }
        try await Self.withInstance(.sqlite, configure: { $0.sqlbotPort = 8001 }) { instance in
            let main = Listener()
            let sqlbot = Listener()
            let services = instance.services(listener: main, sqlbotListener: sqlbot)
            // The audit trail's writer first (it stops last), then the revocation sync, the main listener and its endpoint, ...
            #expect(services.count == 9)
            #expect(services[2] is Listener)
            #expect(services[7] is Listener)
            #expect(instance.sqlbot != nil)
            let withoutAudit = try await Self.services(auditDays: 0)
            #expect(withoutAudit == 6, "no audit writer and no SQLBot listener")
        }
    }

    static func services(auditDays: Int) async throws -> Int {
        var count = 0
        try await withInstance(.sqlite, configure: { $0.auditRetentionDays = auditDays }) { instance in
            struct Listener: Service {
                func run() async throws {}
            }
            count = instance.services(listener: Listener(), sqlbotListener: nil).count
        }
        return count
    }

    @Test func theMasterKeyIsLoadedAsTheCommandsLoadIt() async throws {
        try await Self.withInstance(.sqlite) { instance in
            // Without PORTICO_MASTER_KEY the instance made a key file; the configuration loads the same key.
            let again = try instance.configuration.loadMasterKey()
            let sealed = try instance.masterKey.seal(Array("x".utf8), purpose: "test")
            #expect(try again.open(sealed, purpose: "test") == Array("x".utf8))
        }
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

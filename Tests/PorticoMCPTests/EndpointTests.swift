import HTTPTypes
import Logging
import PorticoAuth
import PorticoBase
import PorticoData
import PorticoJSON
import Synchronization
import Testing

@testable import PorticoMCP

/// Ended sessions kept in memory, for tests.
final class MemoryLedger: SessionLedger {
    let ended = Mutex<Set<String>>([])
    func isEnded(_ nonce: String) -> Bool { ended.withLock { $0.contains(nonce) } }
    func end(_ session: MCPSession, expiresAt: Int64) async throws { _ = ended.withLock { $0.insert(session.nonce) } }
}

/// Records what a slow tool saw.
final class Probe: Sendable {
    let started = Mutex(false)
    let cancelled = Mutex(false)
}

@Suite struct EndpointTests {
    let probe = Probe()

    func endpoint() -> MCPEndpoint {
        let probe = self.probe
        let slow = Tool(
            name: "slow", description: "waits until cancelled", inputSchema: ["type": "object"], annotations: .read,
            requiredScope: Scope(.read, .data), access: .data(.list)
        ) { _, context in
            probe.started.withLock { $0 = true }
            context.progress("started")
            do {
                try await Task.sleep(for: .seconds(120))
            } catch {
                probe.cancelled.withLock { $0 = true }
                throw error
            }
            return .error("not cancelled")
        }
        let echo = Tool(
            name: "echo", description: "echoes", inputSchema: ["type": "object", "properties": ["n": ["type": "integer"]], "required": ["n"]],
            annotations: .read, requiredScope: Scope(.read, .data), access: .data(.list)
        ) { arguments, _ in .structured(["n": arguments["n"]!]) }
        let registry = ToolRegistry(packages: [ToolPackage(name: "data", summary: "", tools: [slow, echo])], defaultPackages: ["data"])
        return MCPEndpoint(
            configuration: .init(
                identity: ServerIdentity(name: "t", title: "T", version: "1"), allowedOrigins: ["http://localhost"], instructions: { _ in "test" }),
            registry: registry, signer: SessionSigner(secret: [1, 2, 3]), ledger: MemoryLedger())
    }

    let principal = Principal(userID: 1, userName: "u", credential: .apiKey(id: "k"), scopes: nil, role: .member)

    func request(_ body: String, headers: [(HTTPField.Name, String)] = [], method: HTTPRequest.Method = .post, auth: AuthOutcome? = nil) -> MCPHTTPRequest {
        var fields = HTTPFields()
        fields[.contentType] = "application/json"
        for (name, value) in headers { fields.append(HTTPField(name: name, value: value)) }
        return MCPHTTPRequest(
            method: method, headers: fields, body: Array(body.utf8), app: "main", packagesQuery: nil,
            resourceMetadataURL: "http://localhost/.well-known/oauth-protected-resource/api/mcp",
            auth: auth ?? .authenticated(principal), logger: Logger(label: "test"))
    }

    func json(_ response: MCPHTTPResponse) throws -> (HTTPResponse.Status, JSON) {
        guard case .json(let status, _, let body) = response else { throw TestFailure("expected a JSON response, got \(response)") }
        return (status, try JSONParser.parse(body))
    }

    struct TestFailure: Error, CustomStringConvertible {
        var description: String
        init(_ d: String) { description = d }
    }

    @Test func cancelledNotificationStopsTheNamedRequest() async throws {
        let endpoint = endpoint()
        let initialize = await endpoint.handle(request(#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#))
        guard case .json(_, let headers, _) = initialize, let session = headers[.mcpSessionID] else { throw TestFailure("no session") }
        let call = Task {
            await endpoint.handle(
                request(#"{"jsonrpc":"2.0","id":"slow-1","method":"tools/call","params":{"name":"slow"}}"#, headers: [(.mcpSessionID, session)]))
        }
        while !probe.started.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
        let clock = ContinuousClock()
        let start = clock.now
        let ack = await endpoint.handle(
            request(
                #"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow-1","reason":"user"}}"#, headers: [(.mcpSessionID, session)]))
        #expect(ack.status == .accepted)
        let (_, body) = try json(await call.value)
        #expect(clock.now - start < .seconds(5))
        #expect(body["error"]?["code"] == .int(-32800))
        #expect(body["id"] == .string("slow-1"))
        #expect(probe.cancelled.withLock { $0 })
    }

    @Test func aCancellationSentToAnotherReplicaStopsTheCallWhereItRuns() async throws {
        // Two replicas: same session secret, cancellations they cannot act on relayed to both.
        let a = endpoint(), b = endpoint()
        for replica in [a, b] { replica.relayToPeers { message in for other in [a, b] { other.receivedFromPeer(message) } } }
        let initialize = await a.handle(request(#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#))
        guard case .json(_, let headers, _) = initialize, let session = headers[.mcpSessionID] else { throw TestFailure("no session") }
        let call = Task {
            await a.handle(request(#"{"jsonrpc":"2.0","id":"slow-2","method":"tools/call","params":{"name":"slow"}}"#, headers: [(.mcpSessionID, session)]))
        }
        while !probe.started.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
        let start = ContinuousClock.now
        let ack = await b.handle(
            request(#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow-2"}}"#, headers: [(.mcpSessionID, session)]))
        #expect(ack.status == .accepted)
        let (_, body) = try json(await call.value)
        // The tool sleeps two minutes: well under that, the cancellation reached it.
        #expect(ContinuousClock.now - start < .seconds(30))
        #expect(body["error"]?["code"] == .int(-32800))
        #expect(probe.cancelled.withLock { $0 })
    }

    @Test func aSessionsLogLevelSetOnOneReplicaHoldsOnAnother() async throws {
        let a = endpoint(), b = endpoint()
        for replica in [a, b] { replica.relayToPeers { message in for other in [a, b] { other.receivedFromPeer(message) } } }
        let initialize = await a.handle(request(#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#))
        guard case .json(_, let headers, _) = initialize, let session = headers[.mcpSessionID] else { throw TestFailure("no session") }
        let set = await a.handle(
            request(#"{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"warning"}}"#, headers: [(.mcpSessionID, session)]))
        #expect(set.status == .ok)
        #expect(b.sessionLogLevels.values == [.warning], "replica b knows the session's level")
        // A message not meant for the endpoint, or malformed, changes nothing.
        b.receivedFromPeer(.toolsListChanged(userID: 1))
        b.receivedFromPeer(.logLevel(session: "x", level: "loudest"))
        #expect(b.sessionLogLevels.count == 1)
    }

    @Test func cancellationFromAnotherSessionDoesNothing() async throws {
        let endpoint = endpoint()
        let call = Task { await endpoint.handle(request(#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}"#)) }
        while !probe.started.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
        let stranger = Principal(userID: 2, userName: "x", credential: .apiKey(id: "other"), scopes: nil, role: .member)
        _ = await endpoint.handle(request(#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#, auth: .authenticated(stranger)))
        try await Task.sleep(for: .milliseconds(200))
        #expect(!probe.cancelled.withLock { $0 })
        // The caller itself can still cancel it.
        _ = await endpoint.handle(request(#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#))
        let (_, body) = try json(await call.value)
        #expect(body["error"]?["code"] == .int(-32800))
    }

    @Test func closingAModernStreamCancelsTheWork() async throws {
        let endpoint = endpoint()
        let body =
            #"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#
        let response = await endpoint.handle(request(body, headers: [(.mcpProtocolVersion, "2026-07-28"), (.mcpMethod, "tools/call"), (.mcpName, "slow")]))
        guard case .stream(let headers, let events) = response else { throw TestFailure("expected an event stream") }
        #expect(headers[.contentType] == "text/event-stream")
        var iterator = events.frames.makeAsyncIterator()
        let first = await iterator.next()
        #expect(first.map { String(decoding: $0, as: UTF8.self) }?.contains("notifications/progress") == true)
        events.cancel()
        for _ in 0..<100 where !probe.cancelled.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(20)) }
        #expect(probe.cancelled.withLock { $0 })
    }

    @Test func argumentsAreValidatedAgainstTheInputSchema() async throws {
        let endpoint = endpoint()
        let (status, body) = try json(
            await endpoint.handle(request(#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"n":"x"}}}"#)))
        #expect(status == .ok)
        #expect(body["error"]?["code"] == .int(-32602))
        #expect(body["error"]?["data"]?["problem"] == .string("arguments.n: expected integer, got string \"x\""))
        let (_, ok) = try json(await endpoint.handle(request(#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"n":3}}}"#)))
        #expect(ok["result"]?["structuredContent"] == ["n": 3])
    }

    @Test func missingClientCapabilityHasItsOwnStatus() {
        let error = RPCError.missingClientCapability(["sampling": [:]])
        #expect(error.code == -32021)
        #expect(error.data?["requiredCapabilities"]?["sampling"] == .object([:]))
        #expect(MCPEndpoint.status(for: error, modern: true) == .badRequest)
    }

    @Test func publicDiscoveryListsToolsWithoutCredentialsButNeverCallsThem() async throws {
        var configuration = endpoint().configuration
        configuration.publicDiscovery = true
        let open = MCPEndpoint(configuration: configuration, registry: endpoint().registry, signer: SessionSigner(secret: [1]), ledger: MemoryLedger())
        let (status, body) = try json(await open.handle(request(#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#, auth: .anonymous)))
        #expect(status == .ok)
        #expect(body["result"]?["tools"]?.arrayValue?.count == 2)
        let (callStatus, _) = try json(
            await open.handle(request(#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"n":1}}}"#, auth: .anonymous)))
        #expect(callStatus == .unauthorized)
    }
}

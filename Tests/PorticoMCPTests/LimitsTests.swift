import HTTPTypes
import Logging
import PorticoAuth
import PorticoJSON
import Synchronization
import Testing

@testable import PorticoMCP

/// Requests have bounded work and bounded resources: a deadline per request, caps on batches
/// and on event streams per credential.
@Suite struct LimitsTests {
    let base = EndpointTests()

    func endpoint(_ configure: (inout MCPEndpoint.Configuration) -> Void) -> MCPEndpoint {
        let template = base.endpoint()
        var configuration = template.configuration
        configure(&configuration)
        return MCPEndpoint(configuration: configuration, registry: template.registry, signer: SessionSigner(secret: [1, 2, 3]), ledger: MemoryLedger())
    }

    @Test func aCallPastTheRequestDeadlineIsStoppedWithAToolError() async throws {
        let endpoint = endpoint { $0.requestTimeout = .milliseconds(300) }
        let deadlines = Task { await endpoint.enforceDeadlines(every: .milliseconds(20)) }
        defer { deadlines.cancel() }
        let start = ContinuousClock.now
        let (status, body) = try base.json(await endpoint.handle(base.request(#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}"#)))
        // Stopped at the deadline, not run out: the tool sleeps for two minutes.
        #expect(ContinuousClock.now - start < .seconds(60))
        #expect(status == .ok)
        #expect(body["result"]?["isError"] == true)
        #expect(body["result"]?["content"]?.serializedString.contains("ran past") == true)
        #expect(base.probe.cancelled.withLock { $0 })
        #expect(endpoint.callsInProgress == 0)
    }

    @Test func aBatchOverTheMessageCapIsRefusedWhole() async throws {
        let endpoint = endpoint { $0.maxBatchEntries = 3 }
        let initialize = await endpoint.handle(base.request(#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#))
        guard case .json(_, let headers, _) = initialize, let session = headers[.mcpSessionID] else { throw EndpointTests.TestFailure("no session") }
        let four =
            "["
            + (1...4).map { #"{"jsonrpc":"2.0","id":\#($0),"method":"tools/call","params":{"name":"echo","arguments":{"n":\#($0)}}}"# }.joined(separator: ",")
            + "]"
        let (status, body) = try base.json(await endpoint.handle(base.request(four, headers: [(.mcpSessionID, session)])))
        #expect(status == .contentTooLarge)
        #expect(body["error"]?["data"]?.stringValue?.contains("at most 3") == true)
        let three =
            "["
            + (1...3).map { #"{"jsonrpc":"2.0","id":\#($0),"method":"tools/call","params":{"name":"echo","arguments":{"n":\#($0)}}}"# }.joined(separator: ",")
            + "]"
        let (okStatus, ok) = try base.json(await endpoint.handle(base.request(three, headers: [(.mcpSessionID, session)])))
        #expect(okStatus == .ok)
        #expect(ok.arrayValue?.count == 3)
    }

    @Test func entriesPastTheBatchByteBudgetAreAnsweredNotRun() async throws {
        let endpoint = endpoint { $0.maxBatchResponseBytes = 250 }
        let initialize = await endpoint.handle(base.request(#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#))
        guard case .json(_, let headers, _) = initialize, let session = headers[.mcpSessionID] else { throw EndpointTests.TestFailure("no session") }
        let batch =
            "["
            + (1...6).map { #"{"jsonrpc":"2.0","id":\#($0),"method":"tools/call","params":{"name":"echo","arguments":{"n":\#($0)}}}"# }.joined(separator: ",")
            + "]"
        let (_, body) = try base.json(await endpoint.handle(base.request(batch, headers: [(.mcpSessionID, session)])))
        let responses = body.arrayValue ?? []
        #expect(responses.count == 6, "every request gets an answer")
        #expect(responses.first?["result"] != nil)
        let refused = responses.filter { $0["error"]?["code"] == .int(Int64(RPCError.batchBudgetCode)) }
        #expect(!refused.isEmpty && refused.count < 6)
        #expect(responses.last?["error"]?["data"]?.stringValue?.contains("was not run") == true)
    }

    @Test func eventStreamsPerCredentialAreCapped() async throws {
        let endpoint = endpoint { $0.maxStreamsPerCredential = 2 }
        let initialize = await endpoint.handle(base.request(#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#))
        guard case .json(_, let headers, _) = initialize, let session = headers[.mcpSessionID] else { throw EndpointTests.TestFailure("no session") }
        func open() async -> MCPHTTPResponse {
            await endpoint.handle(base.request("", headers: [(.mcpSessionID, session), (.accept, "text/event-stream")], method: .get))
        }
        var streams: [EventStream] = []
        for _ in 0..<2 {
            guard case .stream(_, let events) = await open() else { throw EndpointTests.TestFailure("expected a stream") }
            streams.append(events)
        }
        let third = await open()
        #expect(third.status == .tooManyRequests)
        #expect(endpoint.openStreams == 2)
        streams[0].cancel()
        for _ in 0..<50 where endpoint.openStreams > 1 { try await Task.sleep(for: .milliseconds(10)) }
        guard case .stream(_, let again) = await open() else { throw EndpointTests.TestFailure("a closed stream frees its place") }
        again.cancel()
        streams[1].cancel()
    }
}

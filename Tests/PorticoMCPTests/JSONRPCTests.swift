import PorticoJSON
import Testing

@testable import PorticoMCP

@Suite struct JSONRPCTests {
    func decode(_ text: String) throws -> Result<IncomingMessage, IdentifiedError> {
        IncomingMessage.decode(try JSONParser.parse(text))
    }

    @Test func readsRequestsAndNotifications() throws {
        guard case .success(.request(let request)) = try decode(#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#) else {
            Issue.record("expected a request"); return
        }
        #expect(request.id == .string("a"))
        guard case .success(.notification(let method, _)) = try decode(#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#) else {
            Issue.record("expected a notification"); return
        }
        #expect(method == "notifications/initialized")
        guard case .success(.response) = try decode(#"{"jsonrpc":"2.0","id":4,"result":{}}"#) else {
            Issue.record("expected a response"); return
        }
    }

    @Test(arguments: [
        (#"{"id":1,"method":"ping"}"#, "jsonrpc", Optional(RequestID.int(1))),
        (#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#, "2.0", .int(1)),
        (#"{"jsonrpc":"2.0","id":1}"#, "method", .int(1)),
        (#"{"jsonrpc":"2.0","id":1,"method":5}"#, "non-empty string", .int(1)),
        (#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#, "string or an integer", nil),
        (#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#, "must not be null", nil),
        (#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#, "string or an integer", nil),
        (#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, "string or an integer", nil),
    ])
    func refusesInvalidRequests(text: String, mention: String, id: RequestID?) throws {
        guard case .failure(let failure) = try decode(text) else { Issue.record("expected a failure for \(text)"); return }
        #expect(failure.error.code == -32600)
        #expect(failure.id == id)
        #expect(failure.error.data?.stringValue?.contains(mention) == true, "\(failure.error)")
    }

    @Test func paramsMustBeAnObject() throws {
        guard case .failure(let failure) = try decode(#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":[1]}"#) else {
            Issue.record("expected a failure"); return
        }
        #expect(failure.error.code == -32602)
        #expect(failure.id == .int(7))
    }

    @Test func errorsSerialiseWithData() {
        let response = RPCResponse.error(id: .int(3), .methodNotFound("nope"))
        #expect(
            response.json.serializedString == #"{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found","data":"Method 'nope' not found"}}"#
        )
        #expect(RPCResponse.error(id: nil, .parseError("x")).json["id"] == .null)
    }

    @Test func headerValuesDecodeTheBase64Sentinel() {
        #expect(HeaderValue.decode("plain") == "plain")
        #expect(HeaderValue.decode("=?base64?SGVsbG8sIOS4lueVjA==?=") == "Hello, 世界")
        #expect(HeaderValue.decode("=?base64?!!!?=") == nil)
    }
}

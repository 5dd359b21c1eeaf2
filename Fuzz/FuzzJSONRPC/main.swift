import Foundation
import FuzzSupport
import HTTPTypes
import Logging
import PorticoAuth
import PorticoData
import PorticoJSON
import PorticoMCP

FuzzSupport.run { data, size in fuzzJSONRPC(data!, size) }

/// libFuzzer target: the whole MCP endpoint on arbitrary requests. An input is header lines
/// (`Name: value`), a blank line, then the body; any method, era, batch, envelope or arguments.
/// Whatever comes in, the answer is one well-formed HTTP response, never a crash.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzJSONRPC(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var headers = HTTPFields()
    var body = bytes[...]
    if let split = Harness.blankLine(in: bytes) {
        for line in bytes[..<split].split(separator: UInt8(ascii: "\n")) {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { continue }
            let name = String(decoding: line[..<colon], as: UTF8.self)
            let value = String(decoding: line[(colon + 1)...], as: UTF8.self).trimmingCharacters(in: .whitespaces)
            if let field = HTTPField.Name(name) { headers.append(HTTPField(name: field, value: value)) }
        }
        body = bytes[(split + 2)...]
    }
    let method: HTTPRequest.Method = headers[HTTPField.Name("X-Method")!] == "GET" ? .get : (headers[HTTPField.Name("X-Method")!] == "DELETE" ? .delete : .post)
    let request = MCPHTTPRequest(
        method: method, headers: headers, body: Array(body), app: "main", packagesQuery: nil,
        resourceMetadataURL: "http://localhost/.well-known/oauth-protected-resource/api/mcp",
        auth: .authenticated(Harness.principal), logger: Harness.logger)
    let response = FuzzSupport.blocking { await Harness.endpoint.handle(request) }
    switch response {
    case .json(_, _, let body):
        guard (try? JSONParser.parse(body)) != nil else {
            fatalError("the endpoint answered with invalid JSON: \(String(decoding: body.prefix(200), as: UTF8.self))")
        }
    case .stream(_, let events):
        events.cancel()
    case .empty:
        break
    }
    return 0
}

enum Harness {
    static let logger = Logger(label: "fuzz") { _ in SwiftLogNoOpLogHandler() }
    static let principal = Principal(userID: 1, userName: "fuzz", credential: .apiKey(id: "fuzz"), scopes: nil, role: .member)

    static let endpoint: MCPEndpoint = {
        let echo = Tool(
            name: "echo", description: "echoes",
            inputSchema: [
                "type": "object",
                "properties": [
                    "n": ["type": "integer", "minimum": 0, "maximum": 10], "tags": ["type": "array", "items": ["type": "string"], "maxItems": 3],
                    "mode": ["type": "string", "enum": ["a", "b"]],
                ],
                "required": ["n"], "additionalProperties": false,
            ],
            annotations: .read, requiredScope: Scope(.read, .data), access: .data(.list)
        ) { arguments, context in
            context.progress("echo")
            return .structured(.object(arguments))
        }
        let write = Tool(
            name: "write", description: "needs write", inputSchema: ["type": "object"], annotations: ToolAnnotations(readOnly: false),
            requiredScope: Scope(.write, .data), access: .data(.create)
        ) { _, _ in .error("written") }
        let registry = ToolRegistry(packages: [ToolPackage(name: "data", summary: "", tools: [echo, write])], defaultPackages: ["data"])
        var configuration = MCPEndpoint.Configuration(
            identity: ServerIdentity(name: "fuzz", title: "Fuzz", version: "1"), allowedOrigins: ["http://localhost"], instructions: { _ in "fuzz" })
        configuration.maxBatchEntries = 20
        return MCPEndpoint(configuration: configuration, registry: registry, signer: SessionSigner(secret: [1, 2, 3]), ledger: Ledger())
    }()

    static func blankLine(in bytes: [UInt8]) -> Int? {
        guard bytes.count >= 2 else { return nil }
        for i in 0..<(bytes.count - 1) where bytes[i] == UInt8(ascii: "\n") && bytes[i + 1] == UInt8(ascii: "\n") { return i }
        return nil
    }

    final class Ledger: SessionLedger {
        func isEnded(_ nonce: String) -> Bool { nonce.hasPrefix("ended") }
        func end(_ session: MCPSession, expiresAt: Int64) async throws {}
    }
}

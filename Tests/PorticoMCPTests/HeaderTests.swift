import HTTPTypes
import Logging
import PorticoAuth
import Testing

@testable import PorticoMCP

/// The request headers every call reads, parsed byte by byte.
@Suite struct HeaderTests {
    @Test(arguments: [
        ("application/json, text/event-stream", true),
        ("text/event-stream;q=0.9 , Application/JSON;q=1", true),
        ("*/*", true),
        ("application/*", true),
        (" application/* ; q=0.5", true),
        ("text/html, image/*", false),
        ("application/jsonx", false),
        ("application/", false),
        ("", false),
        (",,,", false),
    ])
    func acceptAdmitsJSONDirectlyOrByWildcard(header: String, admits: Bool) {
        #expect(MCPEndpoint.accepts(header, "application/json") == admits)
    }

    @Test func acceptAdmitsEventStreamsSeparately() {
        #expect(MCPEndpoint.accepts("application/json, text/event-stream", "text/event-stream"))
        #expect(MCPEndpoint.accepts("text/*", "text/event-stream"))
        #expect(!MCPEndpoint.accepts("application/json", "text/event-stream"))
    }

    @Test func contentTypeIsJSONWithOrWithoutParameters() {
        #expect(MCPEndpoint.isJSON("application/json"))
        #expect(MCPEndpoint.isJSON("Application/JSON; charset=utf-8"))
        #expect(!MCPEndpoint.isJSON("text/plain"))
        #expect(!MCPEndpoint.isJSON("application/js"))
    }

    @Test func eachKnownFieldIsFoundInOnePassAndARepeatedOneReadsAsHTTPTypesJoinsIt() {
        var fields = HTTPFields()
        fields[.accept] = "a"
        fields[.contentType] = "application/json"
        fields[.mcpProtocolVersion] = "2026-07-28"
        fields[.mcpMethod] = "tools/call"
        fields[.mcpName] = "resource_get"
        fields[.mcpSessionID] = "s1"
        fields[.mcpPackages] = "data"
        fields[.authorization] = "Bearer k"
        fields[.userAgent] = "agent/1"
        fields[.origin] = "http://localhost"
        fields[.cookie] = "a=1"
        fields[.contentLength] = "12"
        fields[HTTPField.Name("X-Other")!] = "ignored"
        var known = KnownHeaders(fields)
        #expect(known.accept == "a" && known.contentType == "application/json" && known.protocolVersion == "2026-07-28")
        #expect(known.method == "tools/call" && known.name == "resource_get" && known.sessionID == "s1" && known.packages == "data")
        #expect(known.authorization == "Bearer k" && known.userAgent == "agent/1" && known.origin == "http://localhost")
        #expect(known.cookie == "a=1" && known.contentLength == "12")
        #expect(known.protocolVersionCount == 1 && known.methodCount == 1 && known.nameCount == 1 && known.sessionIDCount == 1)

        fields.append(HTTPField(name: .accept, value: "b"))
        fields.append(HTTPField(name: .mcpMethod, value: "ping"))
        fields.append(HTTPField(name: HTTPField.Name("mcp-name")!, value: "x"))
        known = KnownHeaders(fields)
        #expect(known.accept == fields[.accept] && known.accept != "a")
        #expect(known.methodCount == 2 && known.nameCount == 2 && known.protocolVersionCount == 1)
        #expect(KnownHeaders(HTTPFields()).origin == nil && KnownHeaders(HTTPFields()).sessionIDCount == 0)
    }

    @Test func aRequestReadsItsHeadersAgainWhenTheyChange() {
        var request = MCPHTTPRequest(
            method: .post, headers: [.accept: "a"], body: [], app: "main", packagesQuery: nil, resourceMetadataURL: "", auth: .anonymous,
            logger: .init(label: "test"))
        #expect(request.known.accept == "a")
        request.headers[.accept] = "b"
        #expect(request.known.accept == "b")
    }
}

import HTTPTypes
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

    @Test func aRepeatedFieldReadsAsHTTPTypesJoinsIt() {
        var fields = HTTPFields()
        fields[.accept] = "a"
        #expect(fields.value(.accept) == "a")
        #expect(fields.occurrences(of: .accept) == 1)
        fields.append(HTTPField(name: .accept, value: "b"))
        #expect(fields.value(.accept) == fields[.accept])
        #expect(fields.occurrences(of: .accept) == 2)
        #expect(fields.value(.origin) == nil)
    }
}

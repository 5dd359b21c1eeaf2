import PorticoJSON
import Testing

@testable import PorticoMCP

@Suite struct UIViewTests {
    @Test func onlyAClientThatNamesTheHTMLProfileRendersViews() {
        #expect(UIView.isDeclared(in: ["extensions": ["io.modelcontextprotocol/ui": ["mimeTypes": ["text/html;profile=mcp-app"]]]]))
        #expect(!UIView.isDeclared(in: ["extensions": ["io.modelcontextprotocol/ui": ["mimeTypes": ["text/uri-list"]]]]))
        #expect(!UIView.isDeclared(in: ["extensions": ["io.modelcontextprotocol/ui": [:]]]), "mimeTypes is required")
        #expect(!UIView.isDeclared(in: ["extensions": ["other/ext": ["mimeTypes": ["text/html;profile=mcp-app"]]]]))
        #expect(!UIView.isDeclared(in: [:]))
    }

    @Test func theContentsDeclareNoOriginAndTheProfile() {
        let view = UIView(uri: "ui://t/v", name: "v", description: "d", html: "<!DOCTYPE html><p>x</p>", tools: ["t"])
        #expect(view.contents.objectValue?["mimeType"] == "text/html;profile=mcp-app")
        #expect(view.contents.objectValue?["_meta"]?.objectValue?["ui"]?.objectValue?["csp"] == ["connectDomains": [], "resourceDomains": []])
    }
}

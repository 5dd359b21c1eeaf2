import PorticoData
import PorticoInstance
import Testing

@testable import PorticoServer

/// An app's name is a path segment, a file name and a schema: lower-case ASCII only, so every app
/// that can be created can be reached.
@Suite struct AppNameTests {
    @Test(arguments: ["main", "sales", "eu-2", "a_b", "0day", String(repeating: "x", count: 64)])
    func goodNamesPass(_ name: String) throws {
        try AppRegistry.validateName(name)
    }

    @Test(arguments: ["", "Sales", "café", "-x", "_x", "a b", "a/b", "a.b", String(repeating: "x", count: 65), "ｆｕｌｌ"])
    func otherNamesAreRefused(_ name: String) {
        #expect(throws: DataError.self) { try AppRegistry.validateName(name) }
    }
}

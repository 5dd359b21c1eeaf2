import Testing

@testable import PorticoMCP

@Suite struct PackageSelectionTests {
    let known = ["data", "schema", "acl", "users", "applications", "apikeys", "ask", "sqlbot"]

    @Test func readsCommaListsWithScopeAndWildcards() throws {
        #expect(try PackageSelection.parse("data, ask", known: known).names == ["data", "ask"])
        #expect(try PackageSelection.parse("@portico/data,@portico/schema", known: known).names == ["data", "schema"])
        #expect(try PackageSelection.parse("a*", known: known).names == ["acl", "applications", "apikeys", "ask"])
        #expect(try PackageSelection.parse("*", known: known).names == known)
        #expect(try PackageSelection.parse("data,data,d*", known: known).names == ["data"])
        #expect(try PackageSelection.parse("*s", known: known).names == ["users", "applications", "apikeys"])
    }

    @Test(arguments: ["nope", "@nocobase/server", "", " , ", "dat"])
    func refusesUnknownPackages(text: String) {
        #expect(throws: SelectionError.self) { try PackageSelection.parse(text, known: known) }
    }

    @Test func globMatching() {
        #expect(PackageSelection.glob("a*s", matches: "apikeys"))
        #expect(!PackageSelection.glob("a*s", matches: "acl"))
        #expect(PackageSelection.glob("**", matches: "x"))
    }
}

import PorticoAuth
import PorticoData
import PorticoJSON
import Testing

@testable import PorticoMCP

/// The lean first list and `tools_search`, without a server.
@Suite struct ToolSearchTests {
    static func tool(_ name: String, _ description: String, title: String? = nil, padding: Int = 0) -> Tool {
        Tool(
            name: name, description: description + String(repeating: " ", count: padding), inputSchema: ["type": "object"],
            annotations: ToolAnnotations(title: title, readOnly: true), requiredScope: Scope(.read, .data), access: .data(.list)
        ) { _, _ in .structured([:]) }
    }

    static let candidates: [(package: String, tool: Tool)] = [
        ("data", tool("resource_list", "List records of a collection")),
        ("data", tool("resource_destroy", "Delete records by key or filter")),
        ("schema", tool("collections_create", "Create a collection with fields")),
        ("schema", tool("fields_update", "Change a field of a collection")),
        ("acl", tool("roles_get", "A role and its permissions")),
        ("acl", tool("roles_set_permissions", "Set what a role may do with a collection")),
        ("users", tool("get_users", "Every user of the app", title: "List users")),
    ]

    func names(_ query: String, limit: Int = 5) -> [String] {
        ToolSearch.search(query, limit: limit, in: Self.candidates).map(\.name)
    }

    @Test func wordsOfWhatToDoFindTheToolThatDoesIt() {
        #expect(names("create a collection").first == "collections_create")
        #expect(names("delete records").first == "resource_destroy", "an everyday verb for the word the name uses")
        #expect(names("remove records").first == "resource_destroy")
        #expect(names("change a role's permissions").first == "roles_set_permissions")
        #expect(names("rename a field").first == "fields_update")
        #expect(names("users") == ["get_users"], "a package by its name")
        #expect(names("roles_get").first == "roles_get", "a tool by its name")
        #expect(names("collection", limit: 2).count == 2)
    }

    @Test func aQueryOfNoToolsWordsFindsNothing() {
        #expect(names("zzzz qqqq").isEmpty)
        #expect(names("the a of").isEmpty, "words that say nothing about a tool")
        #expect(names("").isEmpty)
    }

    @Test func wordsAreOneGiveOrTakeAnEnding() {
        #expect(ToolSearch.same("record", "records"))
        #expect(ToolSearch.same("collection", "collections"))
        #expect(!ToolSearch.same("use", "user"), "too short to be sure")
        #expect(!ToolSearch.same("role", "roleplaying"))
    }

    @Test func theFirstListKeepsToItsBudgetAndItsOrder() {
        let search = Self.tool("tools_search", "find the rest").definition
        let visible = [
            Self.tool("resource_get", "one", padding: 3_000), Self.tool("ask", "two", padding: 3_000), Self.tool("collections_list", "three"),
            Self.tool("other", "four"),
        ]
        let order = FirstList(order: ["ask", "resource_list", "resource_get", "collections_list"], budget: 8_000)
        let listed = order.pick(visible, fixed: [search]) { $0.definition }.compactMap { $0["name"]?.stringValue }
        #expect(listed == ["tools_search", "ask", "resource_get", "collections_list"], "in the list's order; what is not in it is left out")
        let tight = FirstList(order: order.order, budget: 4_000).pick(visible, fixed: [search]) { $0.definition }
        #expect(tight.compactMap { $0["name"]?.stringValue } == ["tools_search", "ask", "collections_list"], "what does not fit is passed over")
        let size = JSON.object(["tools": .array(tight)]).serializedString.utf8.count
        #expect(size <= 4_000 - 96)
        let unknown = order.pick([Self.tool("get_users", "users")], fixed: [search]) { $0.definition }.compactMap { $0["name"]?.stringValue }
        #expect(unknown == ["tools_search", "get_users"], "an app that offers none of the first tools lists its own")
    }
}

public import PorticoData
public import PorticoMCP

/// The tool packages an app's endpoint serves, in the order their tools are listed, and which of
/// them a client gets when it names none: written once, and read by the server's registry, the app
/// registry (what an app may offer), the `acl` package and the command line. SQLBot's `sqlbot`
/// is served on its own listener and is not among them.
public enum ToolInventory {
    public struct Entry: Sendable, Hashable {
        public let name: String
        /// Whether a client that names no packages gets it (`data`, `schema`, `ask`).
        public let byDefault: Bool
    }

    public static let entries: [Entry] = [
        Entry(name: "data", byDefault: true),
        Entry(name: "schema", byDefault: true),
        Entry(name: "users", byDefault: false),
        Entry(name: "applications", byDefault: false),
        Entry(name: "apikeys", byDefault: false),
        Entry(name: "acl", byDefault: false),
        Entry(name: "ask", byDefault: true),
        Entry(name: "workflow", byDefault: false),
    ]

    /// Every package's name, in listing order.
    public static let names = entries.map(\.name)

    /// What a client that names no packages gets.
    public static let defaults = entries.filter(\.byDefault).map(\.name)

    /// The tools a request that names no packages is listed, most useful first, beside
    /// `tools_search` (which finds the rest): a question in plain language, the records of a
    /// collection, and what there is to ask about.
    public static let firstList = FirstList(order: ["ask", "resource_list", "resource_get", "collections_list", "datasources_list"])

    /// SQLBot's package, alone on its listener.
    public static let sqlbot = "sqlbot"

    /// `names` checked against the packages there are, in listing order.
    public static func valid(_ requested: [String]) throws(DataError) -> [String] {
        guard !requested.isEmpty else { throw DataError.invalid("give at least one package; there are: \(names.joined(separator: ", "))") }
        if let unknown = requested.first(where: { !names.contains($0) }) {
            throw DataError.invalid("unknown package '\(unknown)'; there are: \(names.joined(separator: ", "))")
        }
        return names.filter(requested.contains)
    }

    /// The packages in listing order, refusing a set that is not exactly the inventory: a package
    /// built but not listed here, or listed but not built, is a programming error caught at start-up.
    public static func ordered(_ packages: [ToolPackage]) -> [ToolPackage] {
        let byName = Dictionary(packages.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        precondition(Set(byName.keys) == Set(names) && byName.count == packages.count, "ToolInventory lists every package served, once")
        return names.map { byName[$0]! }
    }
}

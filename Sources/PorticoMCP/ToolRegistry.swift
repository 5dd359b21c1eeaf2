public import PorticoAuth
import PorticoJSON

/// Every tool package Portico serves, and the one place that decides which tools a caller sees.
public struct ToolRegistry: Sendable {
    public let packages: [ToolPackage]
    public let defaultPackages: [String]
    /// Names in the default set that no package here has (reported at start, not dropped silently).
    public let missingDefaultPackages: [String]
    /// How many tools one `tools/list` page carries.
    public let pageSize: Int
    /// What a request that names no packages is listed (`nil`: the default packages' tools).
    public let firstList: FirstList?
    let toolsByName: [String: (package: String, tool: Tool)]

    public init(packages: [ToolPackage], defaultPackages: [String], firstList: FirstList? = nil, pageSize: Int = 50) {
        self.packages = packages
        self.firstList = firstList
        self.defaultPackages = defaultPackages.filter { name in packages.contains { $0.name == name } }
        missingDefaultPackages = defaultPackages.filter { name in !packages.contains { $0.name == name } }
        self.pageSize = max(1, pageSize)
        var byName: [String: (String, Tool)] = [:]
        for package in packages {
            for tool in package.tools {
                precondition(byName[tool.name] == nil, "tool \(tool.name) registered twice")
                byName[tool.name] = (package.name, tool)
            }
        }
        toolsByName = byName
        let listed = self.defaultPackages
        everyPackageSelection =
            firstList == nil ? PackageSelection(names: listed) : PackageSelection(firstList: listed, reachable: packages.map(\.name))
    }

    public var packageNames: [String] { packages.map(\.name) }

    public var defaultSelection: PackageSelection { PackageSelection(names: defaultPackages) }

    /// The selection of a request that names no packages on an endpoint that offers every package,
    /// made once (it is most requests').
    public let everyPackageSelection: PackageSelection

    public func selection(from text: String?) throws(SelectionError) -> PackageSelection {
        guard let text else { return defaultSelection }
        return try PackageSelection.parse(text, known: packageNames)
    }

    /// The tools of the selected packages, in a stable order (MCP asks for deterministic lists).
    public func tools(in selection: PackageSelection) -> [Tool] {
        packages.filter { selection.names.contains($0.name) }.flatMap(\.tools)
    }

    /// The tools a caller may see: selected, granted by the credential's scopes, allowed by the role.
    /// An anonymous caller (public discovery) sees the whole selection, as Casdoor does.
    public func visibleTools(in selection: PackageSelection, for principal: Principal?, policy: AccessPolicy) -> [Tool] {
        let tools = tools(in: selection)
        guard let principal else { return tools }
        return tools.filter { isVisible($0, to: principal, policy: policy) }
    }

    public func isVisible(_ tool: Tool, to principal: Principal, policy: AccessPolicy) -> Bool {
        if case .open = tool.access { return true }
        return principal.isGranted(tool.requiredScope) && Self.roleAllows(tool.access, principal.role, policy: policy)
    }

    /// Whether `principal` may call the tool named `name` (in any package): the check `tools/list`
    /// and `tools/call` make, for what acts as a tool outside MCP (the console's pages).
    public func permits(_ name: String, principal: Principal, policy: AccessPolicy) -> Bool {
        guard let tool = toolsByName[name]?.tool else { return false }
        return isVisible(tool, to: principal, policy: policy)
    }

    public static func roleAllows(_ access: ToolAccess, _ role: Role?, policy: AccessPolicy) -> Bool {
        switch access {
        case .data(let action):
            return policy.allowsAny(role, action)
        case .admin(let area, let write):
            return policy.allows(role, area: area, write: write)
        case .open:
            return true
        }
    }

    /// Finds a tool by name among the packages the selection may call.
    public func tool(named name: String, in selection: PackageSelection) -> Tool? {
        guard let entry = toolsByName[name], selection.reachable.contains(entry.package) else { return nil }
        return entry.tool
    }

    /// Finds a tool by name in any package (to tell "not selected" from "does not exist").
    public func packageOf(tool name: String) -> String? {
        toolsByName[name]?.package
    }

    /// One page of a list: the cursor is an opaque offset into the caller's visible list.
    public func page(of tools: [Tool], cursor: String?) throws(RPCError) -> (tools: [Tool], nextCursor: String?) {
        var start = 0
        if let cursor {
            guard let offset = Self.decodeCursor(cursor), offset >= 0, offset <= tools.count else {
                throw .invalidParams("invalid cursor '\(cursor)': pass the nextCursor of the previous tools/list page, or no cursor to start over")
            }
            start = offset
        }
        let end = min(tools.count, start + pageSize)
        let next = end < tools.count ? Self.encodeCursor(end) : nil
        return (Array(tools[start..<end]), next)
    }

    static func encodeCursor(_ offset: Int) -> String {
        "t" + String(offset, radix: 36)
    }

    static func decodeCursor(_ cursor: String) -> Int? {
        guard cursor.first == "t" else { return nil }
        return Int(cursor.dropFirst(), radix: 36)
    }
}

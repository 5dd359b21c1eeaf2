import PorticoAuth
import PorticoBase
import PorticoJSON

/// The lean first `tools/list` of a request that names no packages: a few tools an agent starts
/// with, and `tools_search` over every tool the caller may use, so the model's context does not
/// carry thirty tool definitions it may never call.
public struct FirstList: Sendable {
    /// The tools listed first, most useful first, while they fit the budget.
    public let order: [String]
    /// The most bytes the listed tools may take, as the `tools/list` result serialises them.
    public let budget: Int

    public init(order: [String], budget: Int = 8_000) {
        self.order = order
        self.budget = budget
    }

    /// The tools to list from `visible` (what the caller may use), `fixed` first (the search, and
    /// in a session the loader): the ones in `order`, else (an app that offers none of them) the
    /// others in their order, each while the list stays within the budget. `definition` is how
    /// each is listed.
    func pick(_ visible: [Tool], fixed: [JSON], definition: (Tool) -> JSON) -> [JSON] {
        // `{"tools":[` and `]}`, a comma per tool, and room for the era's fields (ttlMs, cacheScope, a cursor).
        var used = 16 + 96 + fixed.reduce(0) { $0 + $1.serializedString.utf8.count + 1 }
        var listed = fixed
        let preferred = order.compactMap { name in visible.first { $0.name == name } }
        for tool in preferred.isEmpty ? visible : preferred {
            let listedAs = definition(tool)
            let size = listedAs.serializedString.utf8.count + 1
            guard used + size <= budget else { continue }
            used += size
            listed.append(listedAs)
        }
        return listed
    }
}

/// `tools_search`: the tools a caller may use, found by words of what they do.
enum ToolSearch {
    static let name = "tools_search"
    static let defaultLimit = 5
    static let maxLimit = 20

    /// The tool, its description naming the packages `packages` reaches.
    static func tool(packages: [ToolPackage], run: @escaping Tool.Handler) -> Tool {
        let reached = packages.map { "\($0.name): \($0.summary)" }.joined(separator: "; ")
        return Tool(
            name: name,
            description: "Find the other tools you may use, by what they do or by package; each comes with its full definition, "
                + "and may then be called by name at once. Packages: \(reached).",
            inputSchema: [
                "type": "object",
                "properties": [
                    "query": [
                        "type": "string", "minLength": 1, "maxLength": 200,
                        "description": "Words of what to do (\"create a collection\", \"delete records\"), a tool's name, or a package's name",
                    ],
                    "limit": ["type": "integer", "minimum": 1, "maximum": .int(Int64(maxLimit)), "description": "At most this many tools (default 5)"],
                ],
                "required": ["query"],
                "additionalProperties": false,
            ],
            outputSchema: [
                "type": "object", "properties": ["tools": ["type": "array", "items": ["type": "object"]]], "required": ["tools"],
            ],
            annotations: ToolAnnotations(title: "Find tools", readOnly: true, idempotent: true), requiredScope: Scope(.read, .data), access: .open,
            handler: run)
    }

    static let loadName = "tools_load"

    /// `tools_load`: in a session, adds whole packages to the session's tool list.
    static func loader(packages: [ToolPackage], run: @escaping Tool.Handler) -> Tool {
        Tool(
            name: loadName,
            description: "Add whole packages of tools to this session's tool list (the client is told the list changed), "
                + "for work that needs many tools of one package. Packages: \(packages.map(\.name).joined(separator: ", ")).",
            inputSchema: [
                "type": "object",
                "properties": [
                    "packages": [
                        "type": "array", "minItems": 1, "maxItems": 16, "uniqueItems": true,
                        "items": ["type": "string", "enum": .array(packages.map { .string($0.name) })],
                        "description": "The packages to list",
                    ]
                ],
                "required": ["packages"],
                "additionalProperties": false,
            ],
            outputSchema: [
                "type": "object",
                "properties": [
                    "loaded": ["type": "array", "items": ["type": "string"]], "tools": ["type": "array", "items": ["type": "string"]],
                ],
                "required": ["loaded", "tools"],
            ],
            annotations: ToolAnnotations(title: "Load tool packages", readOnly: true, idempotent: true), requiredScope: Scope(.read, .data),
            access: .open, handler: run)
    }

    /// The tools of `candidates` that match `query` best, at most `limit`: a tool's name or package
    /// named whole comes first, then the tools whose name, package and description share the most
    /// words with the query. A query that shares no word with any tool finds none.
    static func search(_ query: String, limit: Int, in candidates: [(package: String, tool: Tool)]) -> [Tool] {
        let wanted = words(query).filter { $0.count > 1 && !fillers.contains($0) }
        guard !wanted.isEmpty else { return [] }
        let whole = query.lowercased().trimmingSpaces()
        var scored: [(score: Int, at: Int, tool: Tool)] = []
        for (at, candidate) in candidates.enumerated() {
            let tool = candidate.tool
            var score = 0
            if tool.name == whole { score += 100 }
            if candidate.package == whole { score += 50 }
            let named = words(tool.name)
            let titled = words(tool.title ?? "")
            let described = Set(words(tool.description))
            for word in wanted {
                if named.contains(where: { same(word, $0) }) {
                    score += 4
                } else if let verbs = actions[word], named.contains(where: verbs.contains) {
                    score += 3
                } else if same(word, candidate.package) {
                    score += 3
                } else if titled.contains(where: { same(word, $0) }) {
                    score += 2
                } else if described.contains(where: { same(word, $0) }) {
                    score += 1
                }
            }
            if score > 0 { scored.append((score, at, tool)) }
        }
        return scored.sorted { ($0.score, -$0.at) > ($1.score, -$1.at) }.prefix(limit).map(\.tool)
    }

    /// Everyday verbs of a request and the words the tools' names use for them.
    static let actions: [String: Set<String>] = [
        "delete": ["destroy", "delete", "revoke"], "remove": ["destroy", "delete", "revoke"], "drop": ["destroy", "delete"],
        "add": ["create", "add"], "new": ["create", "add"], "make": ["create", "add"], "insert": ["create", "add"],
        "change": ["update", "set"], "edit": ["update", "set"], "modify": ["update", "set"], "rename": ["update"], "grant": ["set"],
        "show": ["list", "get"], "find": ["list", "get", "query"], "read": ["list", "get"], "see": ["list", "get"], "search": ["list", "query"],
        "count": ["query"], "sum": ["query"], "total": ["query"], "aggregate": ["query"], "run": ["trigger", "query"], "start": ["trigger"],
        "stop": ["cancel"], "question": ["ask"],
    ]

    /// The lowercased words of a text, a name's parts split at `_`.
    static func words(_ text: String) -> [String] {
        text.lowercased().split { !$0.isLetter && !$0.isNumber }.map(String.init)
    }

    /// Whether two words are one, give or take an ending ("record" and "records", "delete" and
    /// "deletes", "collection" and "collections").
    static func same(_ a: String, _ b: String) -> Bool {
        if a == b { return true }
        let (short, long) = a.count <= b.count ? (a, b) : (b, a)
        return short.count >= 4 && long.hasPrefix(short) && long.count - short.count <= 3
    }

    /// Words of a request that say nothing about which tool.
    static let fillers: Set<String> = [
        "a", "an", "the", "of", "to", "for", "in", "on", "by", "with", "and", "or", "my", "all", "some", "tool", "tools", "i", "want", "how", "do",
        "can", "me", "is", "are", "it", "that", "this",
    ]
}

extension ToolRegistry {
    /// The tools of `selection.reachable` that `principal` may use, each with its package.
    func reachableTools(in selection: PackageSelection, for principal: Principal?, policy: AccessPolicy) -> [(package: String, tool: Tool)] {
        packages.filter { selection.reachable.contains($0.name) }.flatMap { package in
            package.tools.compactMap { tool in
                guard let principal else { return (package.name, tool) }
                return isVisible(tool, to: principal, policy: policy) ? (package.name, tool) : nil
            }
        }
    }
}

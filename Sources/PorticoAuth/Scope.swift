/// What a credential may do on its user's behalf, as OAuth scopes (`read:data`, `write:application`, ...).
public struct Scope: Hashable, Sendable, Comparable, CustomStringConvertible {
    public enum Kind: String, Sendable, CaseIterable { case read, write }

    public enum Resource: String, Sendable, CaseIterable {
        case data, schema, acl, user, application, datasource, workflow, apikey
    }

    public let name: String

    public init(_ kind: Kind, _ resource: Resource) {
        name = "\(kind.rawValue):\(resource.rawValue)"
    }

    private init(name: String) { self.name = name }

    public static let mcp = Scope(name: "mcp")
    public static let offlineAccess = Scope(name: "offline_access")
    public static let openid = Scope(name: "openid")
    public static let profile = Scope(name: "profile")
    public static let email = Scope(name: "email")

    public var description: String { name }
    public static func < (a: Scope, b: Scope) -> Bool { a.name < b.name }

    /// Every scope Portico knows, as advertised in `scopes_supported`.
    public static let all: [Scope] = {
        var scopes: [Scope] = [.mcp, .offlineAccess]
        for resource in Resource.allCases {
            for kind in Kind.allCases { scopes.append(Scope(kind, resource)) }
        }
        return scopes
    }()

    /// Shorthands that expand to a family of scopes.
    public static let shorthands = ["read", "write", "admin"]

    /// Expands one requested scope token into the scopes it grants.
    ///
    /// Accepts `read:data`, Casdoor's `data:read` spelling, the shorthands `read`, `write`
    /// and `admin`, and the OpenID/OAuth scopes `mcp`, `offline_access`, `openid`, `profile`,
    /// `email`. Returns `nil` for a token Portico does not know, so it can be refused.
    public static func expand(_ token: String) -> [Scope]? {
        switch token {
        case "mcp": return [.mcp]
        case "offline_access": return [.offlineAccess]
        case "openid": return [.openid]
        case "profile": return [.profile]
        case "email": return [.email]
        case "read": return Resource.allCases.map { Scope(.read, $0) }
        case "write": return Resource.allCases.map { Scope(.write, $0) }
        case "admin": return Resource.allCases.flatMap { r in Kind.allCases.map { Scope($0, r) } }
        default: break
        }
        let parts = token.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        if let kind = Kind(rawValue: String(parts[0])), let resource = Resource(rawValue: String(parts[1])) {
            return [Scope(kind, resource)]
        }
        if let resource = Resource(rawValue: String(parts[0])), let kind = Kind(rawValue: String(parts[1])) {
            return [Scope(kind, resource)]
        }
        return nil
    }
}

/// The scopes granted to one credential: the tokens as granted (echoed in errors) and what they expand to.
public struct ScopeSet: Sendable, Hashable {
    /// The granted tokens, in the order they were granted.
    public let granted: [String]
    public let expanded: Set<Scope>

    /// Parses a space- or comma-separated scope string. Unknown tokens are returned separately
    /// so the caller can refuse them with a precise message.
    public static func parse(_ text: String) -> (scopes: ScopeSet, unknown: [String]) {
        let tokens = text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "+" }).map(String.init)
        var granted: [String] = []
        var expanded = Set<Scope>()
        var unknown: [String] = []
        for token in tokens {
            guard let scopes = Scope.expand(token) else {
                unknown.append(token)
                continue
            }
            if !granted.contains(token) { granted.append(token) }
            expanded.formUnion(scopes)
        }
        return (ScopeSet(granted: granted, expanded: expanded), unknown)
    }

    public init(granted: [String], expanded: Set<Scope>) {
        self.granted = granted
        self.expanded = expanded
    }

    public init(_ scopes: [Scope]) {
        granted = scopes.map(\.name)
        expanded = Set(scopes)
    }

    public func contains(_ scope: Scope) -> Bool { expanded.contains(scope) }

    public func isSubset(of other: ScopeSet) -> Bool { expanded.isSubset(of: other.expanded) }

    /// The space-separated form used in OAuth responses and stored rows.
    public var text: String { granted.joined(separator: " ") }

    /// Whether any scope names a resource (`read:data`, ...), rather than only `mcp`, `offline_access` or OpenID scopes.
    public var namesResources: Bool { expanded.contains { $0.name.contains(":") } }

    /// The set with `scope` added (as its own token).
    public func adding(_ scope: Scope) -> ScopeSet {
        guard !granted.contains(scope.name) else { return self }
        return ScopeSet(granted: granted + [scope.name], expanded: expanded.union([scope]))
    }
}

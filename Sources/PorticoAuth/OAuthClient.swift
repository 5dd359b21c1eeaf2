import Foundation
import PorticoBase
import PorticoData
public import PorticoJSON
public import PorticoStore

/// An OAuth client registration (Casdoor's "application"): who it is, where it may redirect,
/// which grants and scopes it may use, and from which addresses.
public struct OAuthClient: Sendable, Equatable {
    public enum Kind: String, Sendable {
        /// Created by an administrator (`add_application`, the console).
        case registered
        /// Created by RFC 7591 dynamic registration.
        case dynamic
        /// Described by a client ID metadata document at its `client_id` URL.
        case metadataDocument
    }

    public var clientID: String
    public var owner: String
    public var name: String
    public var displayName: String
    public var secretHash: String?
    public var redirectURIs: [String]
    public var grantTypes: [String]
    /// The scopes the client may be granted; `nil` means any scope the user consents to.
    public var allowedScopes: ScopeSet?
    /// Addresses or CIDR ranges allowed to use the client's credentials; empty means anywhere.
    public var ipAllowlist: [String]
    public var authMethod: String
    public var kind: Kind
    public var createdBy: Int64?
    public var createdAt: Int64
    /// Casdoor's descriptive fields (homepageUrl, logo, description, expireInHours, ...).
    public var details: JSONObject

    public init(
        clientID: String, owner: String, name: String, displayName: String, secretHash: String?, redirectURIs: [String], grantTypes: [String],
        allowedScopes: ScopeSet?, ipAllowlist: [String], authMethod: String, kind: Kind, createdBy: Int64?, createdAt: Int64, details: JSONObject
    ) {
        self.clientID = clientID
        self.owner = owner
        self.name = name
        self.displayName = displayName
        self.secretHash = secretHash
        self.redirectURIs = redirectURIs
        self.grantTypes = grantTypes
        self.allowedScopes = allowedScopes
        self.ipAllowlist = ipAllowlist
        self.authMethod = authMethod
        self.kind = kind
        self.createdBy = createdBy
        self.createdAt = createdAt
        self.details = details
    }

    public var isConfidential: Bool { secretHash != nil }
    public var id: String { "\(owner)/\(name)" }

    public static let grantTypes = ["authorization_code", "refresh_token", "client_credentials"]
    public static let authMethods = ["none", "client_secret_basic", "client_secret_post"]

    /// Access-token lifetime in seconds (Casdoor's `expireInHours`), default one hour.
    public var accessTokenLifetime: Int64? {
        // Checked before it is converted: a stored value past a year (an import, say) is not used.
        details["expireInHours"]?.doubleValue.flatMap { $0 > 0 && $0 <= 24 * 366 ? Int64($0 * 3600) : nil }
    }
}

/// Stores OAuth clients.
public struct OAuthClientStore: Sendable {
    let database: any Database

    public init(database: any Database) {
        self.database = database
    }

    static let columns =
        "client_id, owner, name, display_name, secret_hash, redirect_uris, grant_types, scopes, ip_allowlist, auth_method, kind, created_by, created_at, details"

    public func find(clientID: String) async throws -> OAuthClient? {
        var q = SQLFragment("SELECT \(Self.columns) FROM portico_oauth_clients WHERE client_id = ")
        q.append(bind: .text(clientID))
        return try await database.query(q).first.map(Self.client)
    }

    public func find(owner: String, name: String) async throws -> OAuthClient? {
        var q = SQLFragment("SELECT \(Self.columns) FROM portico_oauth_clients WHERE owner = ")
        q.append(bind: .text(owner))
        q.append(" AND name = ")
        q.append(bind: .text(name))
        return try await database.query(q).first.map(Self.client)
    }

    public func list(owner: String?) async throws -> [OAuthClient] {
        var q = SQLFragment("SELECT \(Self.columns) FROM portico_oauth_clients")
        if let owner {
            q.append(" WHERE owner = ")
            q.append(bind: .text(owner))
        }
        q.append(" ORDER BY owner, name")
        return try await database.query(q).map(Self.client)
    }

    public func count(owner: String) async throws -> Int {
        var q = SQLFragment("SELECT COUNT(*) AS n FROM portico_oauth_clients WHERE kind = 'registered' AND owner = ")
        q.append(bind: .text(owner))
        return Int(try await database.query(q).first?.int("n") ?? 0)
    }

    public func insert(_ client: OAuthClient) async throws {
        var q = SQLFragment("INSERT INTO portico_oauth_clients (\(Self.columns)) VALUES (")
        q.append(joining: Self.values(client).map { .bind($0) }, separator: ", ")
        q.append(")")
        do {
            try await database.execute(q)
        } catch let error as StoreError where error.kind == .constraint {
            throw DataError(.conflict, "an application named '\(client.name)' already exists in '\(client.owner)'")
        }
    }

    public func update(_ client: OAuthClient) async throws {
        var q = SQLFragment("UPDATE portico_oauth_clients SET ")
        let names = Self.columns.split(separator: ",").map { $0.trimmingSpaces() }
        let values = Self.values(client)
        q.append(
            joining: zip(names, values).dropFirst().map { name, value in
                var f = SQLFragment(name)
                f.append(" = ")
                f.append(bind: value)
                return f
            }, separator: ", ")
        q.append(" WHERE client_id = ")
        q.append(bind: .text(client.clientID))
        try await database.execute(q)
    }

    @discardableResult
    public func delete(clientID: String) async throws -> Bool {
        var q = SQLFragment("DELETE FROM portico_oauth_clients WHERE client_id = ")
        q.append(bind: .text(clientID))
        q.append(" RETURNING client_id")
        return try await !database.query(q).isEmpty
    }

    static func values(_ c: OAuthClient) -> [SQLValue] {
        [
            .text(c.clientID), .text(c.owner), .text(c.name), .text(c.displayName), c.secretHash.map { .text($0) } ?? .null,
            .text(JSON(c.redirectURIs).serializedString), .text(JSON(c.grantTypes).serializedString),
            c.allowedScopes.map { .text($0.text) } ?? .null, .text(c.ipAllowlist.joined(separator: ",")), .text(c.authMethod),
            .text(c.kind.rawValue), c.createdBy.map { .int($0) } ?? .null, .int(c.createdAt), .text(JSON.object(c.details).serializedString),
        ]
    }

    static func client(_ row: Row) -> OAuthClient {
        func list(_ column: String) -> [String] {
            (row.string(column).flatMap { try? JSONParser.parse($0) }?.arrayValue ?? []).compactMap(\.stringValue)
        }
        return OAuthClient(
            clientID: row.string("client_id") ?? "", owner: row.string("owner") ?? "", name: row.string("name") ?? "",
            displayName: row.string("display_name") ?? "", secretHash: row.string("secret_hash"),
            redirectURIs: list("redirect_uris"), grantTypes: list("grant_types"),
            allowedScopes: row.string("scopes").map { ScopeSet.parse($0).scopes },
            ipAllowlist: (row.string("ip_allowlist") ?? "").split(separator: ",").map { $0.trimmingSpaces() }.filter { !$0.isEmpty },
            authMethod: row.string("auth_method") ?? "none", kind: OAuthClient.Kind(rawValue: row.string("kind") ?? "") ?? .registered,
            createdBy: row.int("created_by"), createdAt: row.int("created_at") ?? 0,
            details: row.string("details").flatMap { try? JSONParser.parse($0) }?.objectValue ?? [:])
    }
}

import Foundation
import PorticoBase
import PorticoData
import PorticoJSON
public import PorticoStore
import Synchronization

/// An API key as stored: never its secret, only the secret's digest.
public struct APIKey: Sendable, Hashable {
    public var id: String
    public var userID: Int64
    public var userName: String
    public var name: String
    public var scopes: ScopeSet?
    public var createdAt: Int64
    public var expiresAt: Int64?
    public var revokedAt: Int64?
    public var lastUsedAt: Int64?
    /// The app whose endpoint the key opens; every other app refuses it.
    public var app: String = "main"
    /// Requests a minute this key may make, instead of the server's `--rate-limit`.
    public var ratePerMinute: Int?

    public func isActive(at now: Int64) -> Bool {
        revokedAt == nil && (expiresAt.map { now < $0 } ?? true)
    }

    /// `active`, `revoked` or `expired`.
    public func status(at now: Int64) -> String {
        revokedAt != nil ? "revoked" : (isActive(at: now) ? "active" : "expired")
    }
}

/// Creates, lists, revokes and checks API keys. A key reads `pk_<id>_<secret>`: the id finds
/// the row, the secret is compared by SHA-256 digest in constant time.
public final class APIKeyStore: Sendable {
    let database: any Database
    /// The time expiry is judged by.
    public let clock: WallClock
    let users: UserStore
    private let lastUsedWrites = Mutex<[String: Int64]>([:])
    /// Keys as last read, by id, with the change stamp seen before the read (`ChangeSignal`).
    private let known = BoundedCache<String, KnownKey>(limit: 10_000)
    /// A key read longer ago than this is read again even if no change was announced.
    static let knownKeyLifetime: Int64 = 60

    struct KnownKey: Sendable {
        var key: APIKey
        var digest: String
        var stamp: ChangeSignal.Stamp
        var readAt: Int64
        /// The secret that matched `digest`, once one has: the next requests with the same key
        /// compare against it instead of hashing again. It lives no longer than the entry, at most
        /// `knownKeyLifetime` seconds and never past a change.
        var verifiedSecret: String? = nil
    }

    public init(database: any Database, users: UserStore, clock: WallClock = .system) {
        self.clock = clock
        self.database = database
        self.users = users
    }

    /// Creates a key and returns it with its plaintext token, which is shown once and never again.
    /// A key has at most what made it: the scopes of the creator's credential (`within`, `nil`
    /// when it is not narrowed; a narrowed creator that names no scopes makes a key as narrow as
    /// itself), and only scopes the user's role in `app` allows. The tool, the console and the
    /// command line all create keys here, so the rule is one.
    public func create(
        userID: Int64, name: String, scopes requested: ScopeSet?, expiresIn: Int64?, app: String = "main", within creator: ScopeSet? = nil,
        ratePerMinute: Int? = nil
    ) async throws -> (APIKey, token: String) {
        guard let user = try await users.find(id: userID) else { throw DataError.notFound("there is no user with id \(userID)") }
        let scopes = requested ?? creator
        if let scopes, let creator, let extra = scopes.expanded.first(where: { !creator.contains($0) && $0 != .mcp }) {
            throw DataError(.forbidden, "you cannot give a key \(extra.name): your own credential does not have it")
        }
        guard let role = try await users.role(app: app, userID: userID) else {
            throw DataError(
                .forbidden,
                "\(user.name) has no role in app '\(app)', so a key there could do nothing; give them one first (users_set_roles or portico user set-role)")
        }
        if let scopes, let extra = scopes.expanded.first(where: { !AccessPolicy().allows(role, scope: $0) }) {
            throw DataError(.forbidden, "\(user.name)'s role '\(role.name)' in app '\(app)' does not allow \(extra.name), so no key of theirs can have it")
        }
        if let expiresIn, expiresIn <= 0 { throw DataError.invalid("expiry must be in the future") }
        if let expiresIn, expiresIn > 100 * 31_536_000 { throw DataError.invalid("expiry must be within 100 years") }
        if let ratePerMinute, ratePerMinute <= 0 || ratePerMinute > 100_000_000 {
            throw DataError.invalid("a key's rate must be between 1 and 100,000,000 requests a minute, got \(ratePerMinute)")
        }
        let id = Secrets.random(12, alphabet: Array("abcdefghijkmnpqrstuvwxyz23456789".utf8))
        let secret = Secrets.random(40)
        let now = clock.seconds
        var key = APIKey(
            id: id, userID: user.id, userName: user.name, name: name, scopes: scopes, createdAt: now, expiresAt: expiresIn.map { now + $0 }, revokedAt: nil,
            lastUsedAt: nil)
        key.app = app
        key.ratePerMinute = ratePerMinute
        var q = SQLFragment("INSERT INTO portico_api_keys (id, user_id, name, secret_hash, scopes, created_at, expires_at, app, rate_per_minute) VALUES (")
        q.append(
            joining: [
                .bind(.text(id)), .bind(.int(user.id)), .bind(.text(name)), .bind(.text(Secrets.sha256Hex(secret))),
                .bind(scopes.map { .text($0.text) } ?? .null), .bind(.int(now)), .bind(key.expiresAt.map { .int($0) } ?? .null), .bind(.text(app)),
                .bind(ratePerMinute.map { .int(Int64($0)) } ?? .null),
            ], separator: ", ")
        q.append(")")
        try await database.execute(q)
        return (key, "pk_\(id)_\(secret)")
    }

    public func list(userID: Int64? = nil) async throws -> [APIKey] {
        var q = SQLFragment("SELECT \(Self.columns) FROM \(Self.tables)")
        if let userID {
            q.append(" WHERE k.user_id = ")
            q.append(bind: .int(userID))
        }
        q.append(" ORDER BY k.created_at, k.id")
        return try await database.query(q).map(Self.key)
    }

    /// Revokes a key; `userID` limits it to that user's keys. Returns whether a key was revoked.
    @discardableResult
    public func revoke(id: String, userID: Int64? = nil) async throws -> Bool {
        var q = SQLFragment("UPDATE portico_api_keys SET revoked_at = ")
        q.append(bind: .int(clock.seconds))
        q.append(" WHERE id = ")
        q.append(bind: .text(id))
        q.append(" AND revoked_at IS NULL")
        if let userID {
            q.append(" AND user_id = ")
            q.append(bind: .int(userID))
        }
        q.append(" RETURNING id")
        let revoked = try await !database.query(q).isEmpty
        if revoked { database.changes.announce() }
        return revoked
    }

    /// Splits `pk_<id>_<secret>`; `nil` when the token does not have that shape.
    static func parse(_ token: String) -> (id: String, secret: String)? {
        // pk_ + 12 id characters + _ + 40 secret characters, all ASCII; read as bytes (every request).
        var token = token
        return token.withUTF8 { bytes -> (id: String, secret: String)? in
            guard bytes.count == 56, bytes[0] == UInt8(ascii: "p"), bytes[1] == UInt8(ascii: "k"), bytes[2] == UInt8(ascii: "_"),
                bytes[15] == UInt8(ascii: "_")
            else { return nil }
            for i in 3..<15 where bytes[i] == UInt8(ascii: "_") || bytes[i] >= 0x80 { return nil }
            for i in 16..<56 where bytes[i] >= 0x80 { return nil }
            return (
                String(decoding: UnsafeBufferPointer(rebasing: bytes[3..<15]), as: UTF8.self),
                String(decoding: UnsafeBufferPointer(rebasing: bytes[16..<56]), as: UTF8.self)
            )
        }
    }

    public static func looksLikeKey(_ token: String) -> Bool { parse(token) != nil }

    /// The key a token names, or why it is refused. The key's row is read once and kept until a
    /// change is announced (a revocation here, in another replica or from the command line, or a
    /// change to its user), so a revocation holds on the very next request. `stamp` is the
    /// change signal as the caller read it, when it reads it for other caches too.
    public func check(token: String, stamp: ChangeSignal.Stamp? = nil) async throws -> Result<APIKey, KeyRefusal> {
        guard let (id, secret) = Self.parse(token) else { return .failure(.malformed) }
        let now = clock.seconds
        let stamp = stamp ?? database.changes.stamp()
        let found: KnownKey
        if let cached = known[id], cached.stamp == stamp, now - cached.readAt < Self.knownKeyLifetime {
            found = cached
        } else {
            var q = SQLFragment("SELECT \(Self.columns), u.disabled, k.secret_hash FROM \(Self.tables) WHERE k.id = ")
            q.append(bind: .text(id))
            guard let row = try await database.query(q).first else {
                _ = Secrets.constantTimeEqual(Secrets.sha256Hex(secret), String(repeating: "0", count: 64))
                return .failure(.unknown)
            }
            var key = Self.key(row)
            if row.bool("disabled") == true { key.revokedAt = key.revokedAt ?? now }
            found = KnownKey(key: key, digest: row.string("secret_hash") ?? "", stamp: stamp, readAt: now)
            known.store(found, for: id)
        }
        let remembered = found.verifiedSecret.map { Secrets.constantTimeEqual(secret, $0) } ?? false
        if !remembered {
            guard Secrets.constantTimeEqual(Secrets.sha256Hex(secret), found.digest) else { return .failure(.unknown) }
            var verified = found
            verified.verifiedSecret = secret
            known.store(verified, for: id)
        }
        guard found.key.isActive(at: now) else { return .failure(found.key.revokedAt != nil ? .revoked : .expired) }
        touch(found.key, now: now)
        return .success(found.key)
    }

    /// Records use at most once a minute per key, off the request's path.
    func touch(_ key: APIKey, now: Int64) {
        let due = lastUsedWrites.withLock { written in
            if let last = written[key.id], now - last < 60 { return false }
            written[key.id] = now
            return true
        }
        guard due else { return }
        let database = self.database
        Task {
            var q = SQLFragment("UPDATE portico_api_keys SET last_used_at = ")
            q.append(bind: .int(now))
            q.append(" WHERE id = ")
            q.append(bind: .text(key.id))
            try? await database.execute(q)
        }
    }

    static let columns =
        "k.id, k.user_id, u.name AS user_name, k.name, k.scopes, k.created_at, k.expires_at, k.revoked_at, k.last_used_at, k.app, k.rate_per_minute"
    static let tables = "portico_api_keys AS k JOIN portico_users AS u ON u.id = k.user_id"

    static func key(_ row: Row) -> APIKey {
        var key = APIKey(
            id: row.string("id") ?? "", userID: row.int("user_id") ?? 0, userName: row.string("user_name") ?? "",
            name: row.string("name") ?? "", scopes: row.string("scopes").map { ScopeSet.parse($0).scopes },
            createdAt: row.int("created_at") ?? 0, expiresAt: row.int("expires_at"), revokedAt: row.int("revoked_at"),
            lastUsedAt: row.int("last_used_at"))
        key.app = row.string("app") ?? "main"
        key.ratePerMinute = row.int("rate_per_minute").map { Int($0) }
        return key
    }
}

/// Why an API key was refused; the messages are safe to show the caller.
public enum KeyRefusal: Error, Sendable, CustomStringConvertible {
    case malformed, unknown, revoked, expired

    public var description: String {
        switch self {
        case .malformed: "the bearer token is not a Portico API key or access token"
        case .unknown: "the API key is not valid"
        case .revoked: "the API key has been revoked"
        case .expired: "the API key has expired"
        }
    }
}

import Crypto
import Foundation
public import JWTKit
public import Logging
public import PorticoBase
import PorticoData
public import PorticoJSON
public import PorticoStore
import Synchronization

/// The claims of a Portico access token (a JWT signed with ES256).
public struct AccessTokenClaims: JWTPayload, Sendable {
    public var iss: IssuerClaim
    public var sub: SubjectClaim
    public var aud: AudienceClaim
    public var exp: ExpirationClaim
    public var iat: IssuedAtClaim
    public var nbf: NotBeforeClaim
    public var jti: IDClaim
    public var scope: String
    public var client_id: String
    /// The app whose MCP endpoint the token is for.
    public var app: String
    /// The grant (token family) the token belongs to; revoking the grant revokes the token.
    public var gid: String?
    public var name: String?

    /// The signature only: `TokenKeys.verify` checks the lifetime against its clock.
    public func verify(using algorithm: some JWTAlgorithm) async throws {}

    /// Expiry and not-before, at `date`.
    func verifyLifetime(at date: Date) throws {
        try exp.verifyNotExpired(currentDate: date)
        try nbf.verifyNotBefore(currentDate: date)
    }
}

/// Signing keys for access tokens: ES256 keys with a `kid`, stored sealed with the master key,
/// rotated on a schedule; retired keys stay in the JWKS until every token they signed has expired.
public final class TokenKeys: Sendable {
    let database: any Database
    let masterKey: MasterKey
    let logger: Logger
    /// How long a key signs before a new one takes over.
    public let rotationInterval: Int64
    /// The longest access-token lifetime, so retired keys outlive their tokens.
    public let maxTokenLifetime: Int64
    /// The least time between reloads caused by tokens naming a key this replica does not know.
    let reloadInterval: Duration

    struct Loaded: Sendable {
        var collection: JWTKeyCollection
        var activeKid: String
        var jwks: JSON
        var loadedAt: ContinuousClock.Instant
    }

    private let loaded = Mutex<Loaded?>(nil)
    /// The time expiry is judged by.
    public let clock: WallClock

    public init(
        database: any Database, masterKey: MasterKey, logger: Logger, rotationInterval: Int64 = 30 * 86400, maxTokenLifetime: Int64 = 86400,
        reloadInterval: Duration = .seconds(5), clock: WallClock = .system
    ) {
        self.clock = clock
        self.reloadInterval = reloadInterval
        self.database = database
        self.masterKey = masterKey
        self.logger = logger
        self.rotationInterval = rotationInterval
        self.maxTokenLifetime = maxTokenLifetime
    }

    static let purpose = "portico.signing-key"
    var now: Int64 { clock.seconds }

    /// Loads the keys, creating the first one or rotating an old one as needed.
    public func refresh() async throws {
        let select = "SELECT kid, sealed_private_key, public_jwk, created_at, retired_at FROM portico_signing_keys ORDER BY created_at DESC, kid"
        var rows = try await database.query(select)
        let active = rows.first { $0.int("retired_at") == nil }
        if active == nil || self.now - (active?.int("created_at") ?? 0) >= rotationInterval {
            // Replicas that start (or find the key old) together make one key between them.
            try await rotate(onlyIfDue: true)
            rows = try await database.query(select)
        }
        let collection = JWTKeyCollection()
        var keys: [JSON] = []
        var activeKid: String?
        for row in rows {
            guard let kid = row.string("kid"), let sealed = row.string("sealed_private_key"), let jwk = row.string("public_jwk") else { continue }
            if let retired = row.int("retired_at"), retired + maxTokenLifetime < self.now { continue }
            let pem = String(decoding: try masterKey.open(sealed, purpose: Self.purpose), as: UTF8.self)
            let key = try ES256PrivateKey(pem: pem)
            await collection.add(ecdsa: key, kid: JWKIdentifier(string: kid))
            keys.append(try JSONParser.parse(jwk))
            if activeKid == nil, row.int("retired_at") == nil { activeKid = kid }
        }
        guard let activeKid else { throw StateError("no token signing key is active") }
        // No default key: a token must name its key, and an unknown kid fails rather than trying another key.
        await collection.clearDefault()
        loaded.withLock { $0 = Loaded(collection: collection, activeKid: activeKid, jwks: ["keys": .array(keys)], loadedAt: .now) }
    }

    /// Retires the active key and creates a new one; tokens signed before stay valid.
    public func rotate() async throws {
        try await rotate(onlyIfDue: false)
    }

    /// The lock replicas take turns under to make a signing key.
    static let rotationLock: Int64 = 7_406_216

    /// Rotates; with `onlyIfDue`, only when no replica has made a key that is still fresh (checked
    /// under the rotation lock, so replicas that find no key together make one between them).
    func rotate(onlyIfDue: Bool) async throws {
        let signing = P256.Signing.PrivateKey()
        let key = try ES256PrivateKey(backing: signing)
        let kid = Secrets.random(16)
        guard let parameters = key.publicKey.parameters else { throw StateError("the signing key's public key could not be exported") }
        let jwk: JSON = [
            "kty": "EC", "crv": "P-256", "x": .string(parameters.x), "y": .string(parameters.y), "kid": .string(kid), "use": "sig", "alg": "ES256",
        ]
        let sealed = try masterKey.seal(Array(signing.pemRepresentation.utf8), purpose: Self.purpose)
        // The key is made before the lock is taken, so the lock is held only for the statements.
        let made = try await database.transaction { db -> Bool in
            if let lock = db.flavor.exclusiveLock(Self.rotationLock) { try await db.execute(lock) }
            if onlyIfDue {
                let newest = try await db.query("SELECT MAX(created_at) AS at FROM portico_signing_keys WHERE retired_at IS NULL").first?.int("at")
                if let newest, self.now - newest < self.rotationInterval { return false }
            }
            var retire = SQLFragment("UPDATE portico_signing_keys SET retired_at = ")
            retire.append(bind: .int(self.now))
            retire.append(" WHERE retired_at IS NULL")
            try await db.execute(retire)
            var insert = SQLFragment("INSERT INTO portico_signing_keys (kid, algorithm, sealed_private_key, public_jwk, created_at) VALUES (")
            insert.append(
                joining: [.bind(.text(kid)), .bind(.text("ES256")), .bind(.text(sealed)), .bind(.text(jwk.serializedString)), .bind(.int(self.now))],
                separator: ", ")
            insert.append(")")
            try await db.execute(insert)
            return true
        }
        guard made else { return }
        loaded.withLock { $0 = nil }  // sign with the new key from now on
        // Every replica loads the new key now (they would within minutes anyway).
        database.changes.broadcast(.signingKeysRotated)
        logger.info("rotated the token signing key", metadata: ["kid": "\(kid)"])
    }

    func current() async throws -> Loaded {
        if let state = loaded.withLock({ $0 }), ContinuousClock.now - state.loadedAt < .seconds(60) { return state }
        try await refresh()
        return loaded.withLock { $0 }!
    }

    /// The public keys, for `/oauth/jwks.json`.
    public func jwks() async throws -> JSON {
        try await current().jwks
    }

    public func sign(_ claims: AccessTokenClaims) async throws -> String {
        let state = try await current()
        return try await state.collection.sign(claims, kid: JWKIdentifier(string: state.activeKid))
    }

    /// Checks the signature (by `kid`), expiry and not-before; the caller checks issuer and audience.
    public func verify(_ token: String) async throws -> AccessTokenClaims {
        let claims = try await verifySignature(token)
        try claims.verifyLifetime(at: clock.date)
        return claims
    }

    func verifySignature(_ token: String) async throws -> AccessTokenClaims {
        let state = try await current()
        do {
            return try await state.collection.verify(token, as: AccessTokenClaims.self)
        } catch let error as JWTError where error.errorType == .noKeyProvided || error.errorType == .unknownKID {
            // Perhaps a key another replica created since our last load: reload, at most every few
            // seconds, so tokens with made-up kids cannot make every request read the database.
            guard ContinuousClock.now - state.loadedAt >= reloadInterval else { throw error }
            try await refresh()
            return try await loaded.withLock { $0 }!.collection.verify(token, as: AccessTokenClaims.self)
        }
    }
}

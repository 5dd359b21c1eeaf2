import Foundation
import JWTKit
import Logging
import PorticoBase
import PorticoData
import PorticoJSON
import PorticoStore
import PorticoTestSupport
import Testing

@testable import PorticoAuth

@Suite struct AccessTokenTests {
    let resource = "\(AuthFixture.issuer)/api/mcp"

    func verdict(_ f: AuthFixture, _ token: String) async -> String {
        switch await f.server.verifyAccessToken(token, resource: resource) {
        case .success: return "ok"
        case .failure(let reason): return reason.description
        }
    }

    @Test(arguments: Backend.available) func aValidTokenPasses(_ backend: Backend) async throws {
        let f = try await AuthFixture.make(backend)
        defer { Task { await f.close() } }
        #expect(await verdict(f, try await f.keys.sign(f.claims())) == "ok")
    }

    @Test(arguments: Backend.available) func refusesForgedAndMisaddressedTokens(_ backend: Backend) async throws {
        let f = try await AuthFixture.make(backend)
        defer { Task { await f.close() } }
        let good = try await f.keys.sign(f.claims())
        let parts = good.split(separator: ".").map(String.init)

        // alg: none, with and without our kid
        let noneHeader = Base64URL.encode(Array(#"{"alg":"none","typ":"JWT"}"#.utf8))
        #expect(await verdict(f, "\(noneHeader).\(parts[1]).").contains("not valid"))
        // another key under our kid
        let foreign = JWTKeyCollection()
        let kid = try JSONParser.parse(Base64URL.decode(parts[0])!)["kid"]!.stringValue!
        await foreign.add(ecdsa: ES256PrivateKey(), kid: JWKIdentifier(string: kid))
        #expect(await verdict(f, try await foreign.sign(f.claims(), kid: JWKIdentifier(string: kid))).contains("not valid"))
        // a tampered payload
        var payload = try JSONParser.parse(Base64URL.decode(parts[1])!).objectValue!
        payload["scope"] = "mcp admin"
        #expect(await verdict(f, "\(parts[0]).\(Base64URL.encode(JSON.object(payload).serialized)).\(parts[2])").contains("not valid"))
        // expired, not yet valid
        #expect(await verdict(f, try await f.keys.sign(f.claims(expires: Date().addingTimeInterval(-10)))).contains("expired"))
        #expect(await verdict(f, try await f.keys.sign(f.claims(notBefore: Date().addingTimeInterval(3600)))).contains("not valid yet"))
        // another resource, another issuer
        #expect(await verdict(f, try await f.keys.sign(f.claims(aud: "\(AuthFixture.issuer)/api/__app/other/mcp"))).contains("another resource"))
        #expect(await verdict(f, try await f.keys.sign(f.claims(iss: "https://evil.example"))).contains("another server"))
        // garbage
        #expect(await verdict(f, "a.b.c") != "ok")
        #expect(await verdict(f, "") != "ok")
    }

    @Test(arguments: Backend.available) func revokedTokensAndGrantsAreRefused(_ backend: Backend) async throws {
        let f = try await AuthFixture.make(backend)
        defer { Task { await f.close() } }
        let claims = f.claims(gid: "g1")
        let token = try await f.keys.sign(claims)
        #expect(await verdict(f, token) == "ok")
        try await f.revocations.revoke("grant:g1", expiresAt: Int64(Date().timeIntervalSince1970) + 60)
        #expect(await verdict(f, token).contains("revoked"))
        let single = f.claims()
        let other = try await f.keys.sign(single)
        try await f.revocations.revoke("token:\(single.jti.value)", expiresAt: Int64(Date().timeIntervalSince1970) + 60)
        #expect(await verdict(f, other).contains("revoked"))
    }

    @Test(arguments: Backend.available) func rotationKeepsOldTokensValidAndSignsWithTheNewKey(_ backend: Backend) async throws {
        let f = try await AuthFixture.make(backend)
        defer { Task { await f.close() } }
        let before = try await f.keys.sign(f.claims())
        let kidBefore = try JSONParser.parse(Base64URL.decode(String(before.split(separator: ".")[0]))!)["kid"]
        try await f.keys.rotate()
        try await f.keys.refresh()
        let after = try await f.keys.sign(f.claims())
        let kidAfter = try JSONParser.parse(Base64URL.decode(String(after.split(separator: ".")[0]))!)["kid"]
        #expect(kidBefore != kidAfter)
        #expect(await verdict(f, before) == "ok", "a token signed before the rotation stays valid")
        #expect(await verdict(f, after) == "ok")
        let jwks = try await f.keys.jwks()["keys"]?.arrayValue ?? []
        #expect(jwks.count == 2)
        #expect(jwks.allSatisfy { $0["alg"] == "ES256" && $0["kty"] == "EC" && $0["d"] == nil }, "only public keys are published")
    }

    @Test(arguments: Backend.available) func aKeyRotatedByAnotherReplicaIsPickedUp(_ backend: Backend) async throws {
        let f = try await AuthFixture.make(backend)
        defer { Task { await f.close() } }
        let master = try MasterKey.load(environment: nil, dataDirectory: f.directory.path)
        let otherReplica = TokenKeys(database: f.store, masterKey: master, logger: .init(label: "b"))
        try await otherReplica.rotate()
        let token = try await otherReplica.sign(f.claims())
        let throttled = TokenKeys(database: f.store, masterKey: master, logger: .init(label: "c"), reloadInterval: .seconds(3600))
        try await throttled.refresh()
        try await otherReplica.rotate()
        let newer = try await otherReplica.sign(f.claims())
        await #expect(throws: (any Error).self, "reloads are rate-limited") { _ = try await throttled.verify(newer) }
        let eager = TokenKeys(database: f.store, masterKey: master, logger: .init(label: "d"), reloadInterval: .zero)
        try await eager.refresh()
        _ = try await eager.verify(token)
        try await otherReplica.rotate()
        let newest = try await otherReplica.sign(f.claims())
        #expect(try await eager.verify(newest).sub.value == "user:1", "an unknown kid triggers one reload")
    }

    /// Replicas started together on one database find no key at once: they make one between them,
    /// so a token signed by one is known to the others from the start.
    @Test func replicasStartedTogetherShareOneSigningKey() async throws {
        guard Backend.clusterURL != nil else { return }
        let url = try await Backend.freshPostgresDatabase()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("portico-keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let master = try MasterKey.load(environment: nil, dataDirectory: directory.path)
        let stores = try (0..<3).map { i in try PostgresStore(url: url, options: Backend.postgresOptions, logger: Logger(label: "replica-\(i)")) }
        try await Migrator().migrate(stores[0])
        let replicas = stores.map { TokenKeys(database: $0, masterKey: master, logger: Logger(label: "keys"), reloadInterval: .seconds(3600)) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for keys in replicas { group.addTask { try await keys.refresh() } }
            try await group.waitForAll()
        }
        let made = try await stores[0].query("SELECT kid FROM portico_signing_keys")
        #expect(made.count == 1, "one key between them, not \(made.count)")
        for signer in replicas {
            let now = Date()
            let claims = AccessTokenClaims(
                iss: .init(value: "https://portico.test"), sub: .init(value: "user:1"), aud: .init(value: ["https://portico.test/api/mcp"]),
                exp: .init(value: now.addingTimeInterval(600)), iat: .init(value: now), nbf: .init(value: now.addingTimeInterval(-5)),
                jti: .init(value: Secrets.random(10)), scope: "mcp", client_id: "c", app: "main", gid: nil, name: "u")
            let token = try await signer.sign(claims)
            for verifier in replicas { _ = try await verifier.verify(token) }
        }
        for store in stores { await store.close() }
    }

    @Test(arguments: Backend.available) func signingKeysAreSealedAtRest(_ backend: Backend) async throws {
        let f = try await AuthFixture.make(backend)
        defer { Task { await f.close() } }
        let rows = try await f.store.query("SELECT sealed_private_key FROM portico_signing_keys")
        let sealed = rows.first?.string("sealed_private_key") ?? ""
        #expect(!sealed.isEmpty && !sealed.contains("PRIVATE KEY"))
    }
}

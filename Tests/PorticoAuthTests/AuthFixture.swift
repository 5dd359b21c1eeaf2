import Foundation
import JWTKit
import Logging
import PorticoBase
import PorticoData
import PorticoJSON
import PorticoStore
import PorticoTestSupport

@testable import PorticoAuth

/// An authorization server over a temporary database of either kind.
struct AuthFixture {
    let directory: URL
    let store: any Database
    let server: AuthorizationServer
    let keys: TokenKeys
    let users: UserStore
    let revocations: RevocationList

    static let issuer = "http://127.0.0.1:9999"

    static func make(_ backend: Backend = .sqlite, fetcher: (any ClientMetadataFetcher)? = nil, clock: WallClock = .system) async throws -> AuthFixture {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("portico-auth-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let logger = Logger(label: "test")
        let store = try await backend.makeStore(in: directory, logger: logger)
        try await Migrator().migrate(store)
        let master = try MasterKey.load(environment: nil, dataDirectory: directory.path)
        let keys = TokenKeys(database: store, masterKey: master, logger: logger, clock: clock)
        try await keys.refresh()
        let users = UserStore(database: store, clock: clock)
        let revocations = RevocationList(database: store, logger: logger, clock: clock)
        let server = AuthorizationServer(
            configuration: .init(issuer: issuer), database: store, users: users, keys: keys, revocations: revocations,
            appNames: { ["main", "other"] }, metadataFetcher: fetcher, logger: logger, clock: clock)
        return AuthFixture(directory: directory, store: store, server: server, keys: keys, users: users, revocations: revocations)
    }

    func claims(
        aud: String = "\(issuer)/api/mcp", iss: String = issuer, notBefore: Date = Date().addingTimeInterval(-5),
        expires: Date = Date().addingTimeInterval(600), gid: String? = nil
    ) -> AccessTokenClaims {
        AccessTokenClaims(
            iss: .init(value: iss), sub: .init(value: "user:1"), aud: .init(value: [aud]), exp: .init(value: expires), iat: .init(value: Date()),
            nbf: .init(value: notBefore), jti: .init(value: Secrets.random(10)), scope: "mcp read:data", client_id: "c", app: "main", gid: gid, name: "u")
    }

    func close() async {
        await store.close()
        try? FileManager.default.removeItem(at: directory)
    }
}

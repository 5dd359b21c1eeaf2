import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import PorticoAsk
import PorticoAuth
import PorticoData
import PorticoInstance
import PorticoStore
import PorticoTestSupport
import Testing

@testable import PorticoServer

/// The routes of both listeners, driven in process through HummingbirdTesting's router
/// framework: no socket, the real stores in a throwaway data directory (and, on PostgreSQL, a
/// fresh database of the test cluster).
@Suite struct RouteTests {
    /// A server over a fresh data directory, closed and removed afterwards.
    static func withServer(
        _ backend: Backend = .sqlite, sqlbot: Bool = false, clock: WallClock = .system, _ body: (PorticoApplication) async throws -> Void
    ) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("portico-routes-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = InstanceConfiguration()
        configuration.dataDirectory = directory
        configuration.clock = clock
        if backend == .postgres { configuration.databaseURL = try await Backend.freshPostgresDatabase() }
        configuration.port = 8080
        if sqlbot { configuration.sqlbotPort = 8001 }
        var logger = Logger(label: "portico.tests")
        logger.logLevel = .critical
        let built = try await buildApplication(configuration, logger: logger)
        do {
            try await body(built)
        } catch {
            await built.close()
            throw error
        }
        await built.close()
    }

    static func jsonObject(_ buffer: ByteBuffer) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(buffer.readableBytesView))
        return try #require(object as? [String: Any])
    }

    @Test(arguments: Backend.available) func healthAndReadiness(_ backend: Backend) async throws {
        try await Self.withServer(backend) { built in
            try await built.application.test(.router) { client in
                try await client.execute(uri: "/healthz", method: .get) { response in
                    #expect(response.status == .ok)
                    #expect(String(buffer: response.body) == "ok\n")
                }
                try await client.execute(uri: "/readyz", method: .get) { response in
                    #expect(response.status == .ok)
                    let status = try Self.jsonObject(response.body)["status"] as? String
                    #expect(status == "ready")
                }
            }
        }
    }

    @Test(arguments: Backend.available) func mcpWithoutCredentialsPointsAtTheResourceMetadata(_ backend: Backend) async throws {
        try await Self.withServer(backend) { built in
            try await built.application.test(.router) { client in
                let body = #"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#
                try await client.execute(
                    uri: "/api/mcp", method: .post,
                    headers: [.contentType: "application/json", .accept: "application/json, text/event-stream"],
                    body: ByteBuffer(string: body)
                ) { response in
                    #expect(response.status == .unauthorized)
                    let challenge = try #require(response.headers[.wwwAuthenticate])
                    #expect(challenge.contains(#"resource_metadata="http://127.0.0.1:8080/.well-known/oauth-protected-resource/api/mcp""#))
                    let error = try #require(try Self.jsonObject(response.body)["error"] as? [String: Any])
                    #expect(error["code"] as? Int == -32001)
                }
                try await client.execute(uri: "/.well-known/oauth-protected-resource/api/mcp", method: .get) { response in
                    #expect(response.status == .ok)
                    let metadata = try Self.jsonObject(response.body)
                    #expect(metadata["resource"] as? String == "http://127.0.0.1:8080/api/mcp")
                }
            }
        }
    }

    @Test(arguments: Backend.available) func anAPIKeyListsTheFirstTools(_ backend: Backend) async throws {
        try await Self.withServer(backend) { built in
            let user = try await built.instance.stores.users.create(name: "ana", email: nil, password: "correct horse battery", role: .admin)
            let (_, token) = try await built.instance.stores.apiKeys.create(userID: user.id, name: "t", scopes: nil, expiresIn: nil)
            try await built.application.test(.router) { client in
                try await client.execute(
                    uri: "/api/mcp", method: .post,
                    headers: [
                        .contentType: "application/json", .accept: "application/json, text/event-stream", .authorization: "Bearer \(token)",
                        HTTPField.Name("MCP-Protocol-Version")!: "2026-07-28", HTTPField.Name("Mcp-Method")!: "tools/list",
                    ],
                    body: ByteBuffer(
                        string:
                            #"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#
                    )
                ) { response in
                    #expect(response.status == .ok)
                    let result = try #require(try Self.jsonObject(response.body)["result"] as? [String: Any])
                    let names = try #require(result["tools"] as? [[String: Any]]).compactMap { $0["name"] as? String }
                    // The first list: the search, then the tools an agent starts with; the rest are found.
                    #expect(names == ["tools_search", "ask", "resource_list", "resource_get", "collections_list"])
                    #expect(result["ttlMs"] != nil)
                }
            }
        }
    }

    @Test(arguments: Backend.available) func anAPIKeyStopsWorkingWhenTheServersClockPassesItsExpiry(_ backend: Backend) async throws {
        let time = ManualClock()
        try await Self.withServer(backend, clock: time.clock) { built in
            let user = try await built.instance.stores.users.create(name: "bo", email: nil, password: "correct horse battery", role: .admin)
            let (_, token) = try await built.instance.stores.apiKeys.create(userID: user.id, name: "hour", scopes: nil, expiresIn: 3600)
            try await built.application.test(.router) { client in
                func ping() async throws -> (HTTPResponse.Status, String) {
                    try await client.execute(
                        uri: "/api/mcp", method: .post,
                        headers: [.contentType: "application/json", .accept: "application/json, text/event-stream", .authorization: "Bearer \(token)"],
                        body: ByteBuffer(string: #"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
                    ) { response in (response.status, String(buffer: response.body)) }
                }
                #expect(try await ping().0 == .ok)
                time.advance(seconds: 3599)
                #expect(try await ping().0 == .ok)
                time.advance(seconds: 1)
                let (status, body) = try await ping()
                #expect(status == .unauthorized)
                #expect(body.contains("expired"), "\(body)")
            }
        }
    }

    @Test(arguments: Backend.available) func removingAnAppRevokesTheGrantsForItsEndpoint(_ backend: Backend) async throws {
        try await Self.withServer(backend) { built in
            let stores = built.instance.stores
            try await stores.apps.create("eu")
            #expect(try await stores.apps.names() == ["eu", "main"])
            try await stores.database.execute(
                """
                INSERT INTO portico_oauth_grants (id, client_id, user_id, app, scopes, resource, created_at)
                VALUES ('g-eu', 'c', NULL, 'eu', 'mcp', 'http://x/api/__app/eu/mcp', 0),
                       ('g-main', 'c', NULL, 'main', 'mcp', 'http://x/api/mcp', 0)
                """)
            try await stores.apps.remove("eu")
            #expect(try await stores.apps.names() == ["main"])
            let revoked = try await stores.database.query("SELECT id FROM portico_revocations WHERE id LIKE 'grant:%' ORDER BY id")
            #expect(revoked.compactMap { $0.string("id") } == ["grant:g-eu"], "only the removed app's grant")
            let ended = try await stores.database.query("SELECT id FROM portico_oauth_grants WHERE revoked_at IS NOT NULL")
            #expect(ended.compactMap { $0.string("id") } == ["g-eu"])
        }
    }

    @Test(arguments: Backend.available) func imagesAreServedByNameAndOnlyByName(_ backend: Backend) async throws {
        try await Self.withServer(backend) { built in
            let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 1, 2, 3]
            let name = try await built.instance.images.save(png: png)
            try await built.application.test(.router) { client in
                try await client.execute(uri: "/images/\(name)", method: .get) { response in
                    #expect(response.status == .ok)
                    #expect(response.headers[.contentType] == "image/png")
                    #expect(Array(response.body.readableBytesView) == png)
                }
                let stem = name.dropLast(".png".count)
                // One character changed (to another one: a random name may end in "x" already).
                let changed = stem.dropLast() + (stem.last == "x" ? "y" : "x")
                for wrong in ["/images/\(changed).png", "/images/..%2Fportico.sqlite", "/images/\(stem).txt", "/images/\(stem)"] {
                    try await client.execute(uri: wrong, method: .get) { response in #expect(response.status == .notFound, "\(wrong)") }
                }
            }
        }
    }

    @Test(arguments: Backend.available) func sqlbotStartSignsInAndRefusesAWrongPassword(_ backend: Backend) async throws {
        try await Self.withServer(backend, sqlbot: true) { built in
            _ = try await built.instance.stores.users.create(name: "ana", email: nil, password: "correct horse battery", role: .member)
            let sqlbot = try #require(built.sqlbotApplication)
            try await sqlbot.test(.router) { client in
                try await client.execute(
                    uri: "/mcp/mcp_start", method: .post, headers: [.contentType: "application/json"],
                    body: ByteBuffer(string: #"{"username":"ana","password":"wrong"}"#)
                ) { response in
                    let answer = try Self.jsonObject(response.body)
                    #expect(response.status == .badRequest)
                    #expect((answer["message"] as? String ?? answer["detail"] as? String ?? "").contains("Incorrect account or password"))
                }
                try await client.execute(
                    uri: "/mcp/mcp_start", method: .post, headers: [.contentType: "application/json"],
                    body: ByteBuffer(string: #"{"username":"ana","password":"correct horse battery"}"#)
                ) { response in
                    #expect(response.status == .ok)
                    let answer = try Self.jsonObject(response.body)
                    #expect((answer["access_token"] as? String)?.isEmpty == false)
                    #expect(answer["chat_id"] != nil)
                }
            }
        }
    }
}

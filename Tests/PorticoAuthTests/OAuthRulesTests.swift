import Foundation
import PorticoBase
import PorticoJSON
import PorticoStore
import Testing

@testable import PorticoAuth

@Suite struct OAuthRulesTests {
    @Test func pkceAcceptsOnlyTheMatchingS256Verifier() {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
        let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"  // RFC 7636 appendix B
        #expect(AuthorizationServer.pkceMatches(verifier: verifier, challenge: challenge))
        #expect(!AuthorizationServer.pkceMatches(verifier: verifier + "x", challenge: challenge))
        #expect(!AuthorizationServer.pkceMatches(verifier: "short", challenge: challenge))
        #expect(!AuthorizationServer.pkceMatches(verifier: verifier, challenge: verifier), "plain is not accepted")
    }

    @Test func redirectURIsMatchExactlyExceptLoopbackPorts() {
        let registered = ["https://app.example/cb", "http://127.0.0.1:3000/callback", "http://localhost/cb"]
        #expect(RedirectURI.matches("https://app.example/cb", registered: registered))
        #expect(!RedirectURI.matches("https://app.example/cb/", registered: registered))
        #expect(!RedirectURI.matches("https://app.example/cb?x=1", registered: registered))
        #expect(!RedirectURI.matches("https://APP.example/cb", registered: registered))
        #expect(RedirectURI.matches("http://127.0.0.1:51234/callback", registered: registered))
        #expect(RedirectURI.matches("http://localhost:8080/cb", registered: registered))
        #expect(!RedirectURI.matches("http://127.0.0.1:51234/other", registered: registered))
        #expect(!RedirectURI.matches("http://localhost.evil.example:80/cb", registered: registered))
        #expect(!RedirectURI.matches("http://127.0.0.1@evil.example/callback", registered: registered))
    }

    @Test func redirectURIRules() {
        #expect(RedirectURI.validationProblem("https://app.example/cb") == nil)
        #expect(RedirectURI.validationProblem("http://127.0.0.1:8/cb") == nil)
        #expect(RedirectURI.validationProblem("http://[::1]:8/cb") == nil)
        #expect(RedirectURI.validationProblem("http://app.example/cb") != nil)
        #expect(RedirectURI.validationProblem("https://app.example/cb#f") != nil)
        #expect(RedirectURI.validationProblem("myapp://cb") != nil)
        #expect(RedirectURI.validationProblem("https://user@app.example/cb") != nil)
        #expect(RedirectURI.validationProblem("not a url") != nil)
    }

    @Test func ipAllowListsMatchAddressesAndRanges() {
        #expect(IPAllowlist.allows("10.1.2.3", entries: []))
        #expect(IPAllowlist.allows("10.1.2.3", entries: ["10.1.2.0/24"]))
        #expect(!IPAllowlist.allows("10.1.3.3", entries: ["10.1.2.0/24"]))
        // Ranges that end inside a byte (these trapped before: the mask overflowed its byte).
        #expect(IPAllowlist.allows("172.20.1.1", entries: ["172.16.0.0/12"]))
        #expect(!IPAllowlist.allows("172.32.0.1", entries: ["172.16.0.0/12"]))
        #expect(IPAllowlist.allows("100.100.0.1", entries: ["100.64.0.0/10"]))
        #expect(IPAllowlist.allows("fd12::1", entries: ["fc00::/7"]))
        #expect(!IPAllowlist.allows("fe12::1", entries: ["fc00::/7"]))
        #expect(IPAllowlist.allows("::ffff:10.1.2.3", entries: ["10.1.2.3"]))
        #expect(IPAllowlist.allows("2001:db8::1", entries: ["2001:db8::/32"]))
        #expect(!IPAllowlist.allows("2001:db9::1", entries: ["2001:db8::/32"]))
        #expect(!IPAllowlist.allows(nil, entries: ["10.0.0.0/8"]))
        #expect(IPAllowlist.invalidEntry(in: ["10.0.0.0/33"]) == "10.0.0.0/33")
        #expect(IPAllowlist.invalidEntry(in: ["300.1.1.1"]) == "300.1.1.1")
        #expect(IPAllowlist.invalidEntry(in: ["10.0.0.0/8", "::1"]) == nil)
    }

    @Test func scopesExpandAndRefuseUnknownOnes() {
        let (set, unknown) = ScopeSet.parse("mcp read application:write nonsense")
        #expect(unknown == ["nonsense"])
        #expect(set.contains(Scope(.read, .data)) && set.contains(Scope(.write, .application)) && !set.contains(Scope(.write, .data)))
        let policy = AccessPolicy()
        #expect(policy.scopes(for: .viewer).map(\.name) == ["read:data", "read:schema", "read:datasource", "read:apikey", "write:apikey"])
        #expect(policy.scopes(for: .admin).count == 16)
    }

    @Test func basicCredentialsArePercentDecoded() {
        let header = "Basic " + Data("my%20client:s%3Acret".utf8).base64EncodedString()
        let decoded = AuthorizationServer.basicCredentials(header)
        #expect(decoded?.0 == "my client" && decoded?.1 == "s:cret")
        #expect(AuthorizationServer.basicCredentials("Basic !!!") == nil)
    }
}

/// A client's own web server, standing in for the network in these tests.
struct FakeMetadataHost: ClientMetadataFetcher {
    let documents: [String: JSON]
    func fetch(_ url: String) async throws -> JSON {
        guard let document = documents[url] else { throw URLError(.fileDoesNotExist) }
        return document
    }
}

@Suite struct ClientMetadataDocumentTests {
    let url = "https://client.example/oauth/metadata.json"

    @Test func aValidDocumentMakesAPublicClient() async throws {
        let f = try await AuthFixture.make(
            fetcher: FakeMetadataHost(documents: [
                url: [
                    "client_id": .string(url), "client_name": "Example Agent", "redirect_uris": ["http://127.0.0.1:7777/cb"],
                ]
            ]))
        defer { Task { await f.close() } }
        let client = try #require(try await f.server.client(id: url))
        #expect(client.kind == .metadataDocument && !client.isConfidential && client.displayName == "Example Agent")
        let request = await f.server.validateAuthorization([
            ("response_type", "code"), ("client_id", url), ("redirect_uri", "http://127.0.0.1:7777/cb"),
            ("code_challenge", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"), ("code_challenge_method", "S256"),
        ])
        guard case .success = request else { Issue.record("the request should be valid: \(request)"); return }
    }

    static let badDocuments: [(JSON, String)] = [
        (JSON.object(["client_id": "https://other.example/doc", "client_name": "x", "redirect_uris": ["https://a.example/cb"]]), "must equal its URL"),
        (["client_id": "https://client.example/oauth/metadata.json", "redirect_uris": ["https://a.example/cb"]], "client_name"),
        (["client_id": "https://client.example/oauth/metadata.json", "client_name": "x"], "redirect_uris"),
        (["client_id": "https://client.example/oauth/metadata.json", "client_name": "x", "redirect_uris": ["http://evil.example/cb"]], "unusable redirect"),
        (
            [
                "client_id": "https://client.example/oauth/metadata.json", "client_name": "x", "redirect_uris": ["https://a.example/cb"],
                "token_endpoint_auth_method": "client_secret_basic",
            ], "public client"
        ),
        (["not": "a client"], "must equal its URL"),
    ]

    @Test(arguments: badDocuments)
    func badDocumentsAreRefused(document: JSON, mention: String) async throws {
        let f = try await AuthFixture.make(fetcher: FakeMetadataHost(documents: [url: document]))
        defer { Task { await f.close() } }
        do {
            _ = try await f.server.client(id: url)
            Issue.record("expected a refusal")
        } catch {
            #expect(error.code == "invalid_client")
            #expect(error.description.contains(mention), "\(error.description)")
        }
    }

    @Test func unreachableDocumentsAndNonDocumentIDs() async throws {
        let f = try await AuthFixture.make(fetcher: FakeMetadataHost(documents: [:]))
        defer { Task { await f.close() } }
        await #expect(throws: OAuthError.self) { _ = try await f.server.client(id: url) }
        #expect(try await f.server.client(id: "https://client.example") == nil, "a URL without a path is not a document id")
        #expect(try await f.server.client(id: "plain-unknown-id") == nil)
    }

    @Test func bearerTokensAreReadCaseInsensitivelyAndTrimmed() {
        #expect(CredentialAuthenticator.bearer("Bearer abc") == "abc")
        #expect(CredentialAuthenticator.bearer("bEaReR   abc \t") == "abc")
        #expect(CredentialAuthenticator.bearer("Bearer ") == nil)
        #expect(CredentialAuthenticator.bearer("Bearerabc") == nil)
        #expect(CredentialAuthenticator.bearer("Basic abc") == nil)
        #expect(CredentialAuthenticator.bearer("Bearer é") == "é")
        #expect(CredentialAuthenticator.bearer("Bearer\u{00}abc") == nil, "the word is followed by a space")
        #expect(CredentialAuthenticator.bearer("Beaser abc") == nil)
    }

    @Test func basicCredentialsAreToldByTheirSchemeInAnyCase() {
        #expect(CredentialAuthenticator.isBasic("Basic YTpi"))
        #expect(CredentialAuthenticator.isBasic("bAsIc YTpi"))
        #expect(CredentialAuthenticator.isBasic("Basic "), "then refused for what follows, not for its scheme")
        #expect(!CredentialAuthenticator.isBasic("Basicx YTpi"))
        #expect(!CredentialAuthenticator.isBasic("Bearer abc"))
        #expect(!CredentialAuthenticator.isBasic("B"))
    }

    @Test func apiKeysHaveTheirExactShape() {
        let id = "abcdefghijkm", secret = String(repeating: "x_Y9", count: 10)
        let parsed = APIKeyStore.parse("pk_\(id)_\(secret)")
        #expect(parsed?.id == id && parsed?.secret == secret, "the secret may hold underscores")
        #expect(APIKeyStore.parse("pk_\(id)_\(secret.dropLast())") == nil)
        #expect(APIKeyStore.parse("pk_abcdefghij_m_\(secret)") == nil, "no underscore in the id")
        #expect(APIKeyStore.parse("PK_\(id)_\(secret)") == nil)
        #expect(APIKeyStore.parse("pk_\(id)_\(secret.dropLast(2))é") == nil, "ASCII only")
    }
}

/// A client is made in one place with one set of rules, whichever surface asks.
@Suite struct ClientCreationTests {
    static func draft(
        _ kind: OAuthClient.Kind, redirect: [String], grants: [String] = ["authorization_code", "refresh_token"], method: String = "client_secret_basic"
    )
        -> OAuthClient
    {
        OAuthClient(
            clientID: "", owner: "main", name: kind == .registered ? "tool" : "", displayName: "d", secretHash: nil, redirectURIs: redirect,
            grantTypes: grants, allowedScopes: nil, ipAllowlist: [], authMethod: method, kind: kind, createdBy: nil, createdAt: 0, details: [:])
    }

    @Test func theRulesAndTheQuotaHoldForEveryKind() async throws {
        let f = try await AuthFixture.make()
        defer { Task { await f.close() } }
        for kind in [OAuthClient.Kind.registered, .dynamic] {
            await #expect(throws: ClientRuleViolation.redirectURIsMissing) { _ = try await f.server.createClient(Self.draft(kind, redirect: [])) }
            await #expect(throws: ClientRuleViolation.self) { _ = try await f.server.createClient(Self.draft(kind, redirect: ["http://evil.example/cb"])) }
            await #expect(throws: ClientRuleViolation.secretNeeded) {
                _ = try await f.server.createClient(Self.draft(kind, redirect: [], grants: ["client_credentials"], method: "none"))
            }
        }
        let (made, secret) = try await f.server.createClient(Self.draft(.registered, redirect: ["https://app.example/cb"]), quota: 1)
        #expect(made.clientID.hasPrefix("app_") && secret != nil && made.secretHash == secret.map(Secrets.sha256Hex))
        await #expect(throws: ClientRuleViolation.quotaExceeded) {
            _ = try await f.server.createClient(Self.draft(.registered, redirect: ["https://app.example/cb"]), quota: 1)
        }
        let (dynamic, none) = try await f.server.createClient(Self.draft(.dynamic, redirect: ["http://127.0.0.1/cb"], method: "none"))
        #expect(dynamic.clientID.hasPrefix("dcr_") && dynamic.name == dynamic.clientID && none == nil)
        // A change is held to the same rules.
        var changed = made
        changed.grantTypes = ["password"]
        await #expect(throws: ClientRuleViolation.grantTypes) { try await f.server.updateClient(changed) }
    }
}

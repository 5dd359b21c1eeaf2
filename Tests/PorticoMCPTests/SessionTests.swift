import Testing

@testable import PorticoMCP

@Suite struct SessionTests {
    let signer = SessionSigner(secret: Array("test secret".utf8), lifetime: 3600)

    @Test func issuedIdsVerifyOnAnyReplicaWithTheSameSecret() {
        let (id, session) = signer.issue(protocolVersion: "2025-11-25", app: "main", bindingKey: "key:abc", capabilities: [.sampling], now: 1000)
        let otherReplica = SessionSigner(secret: Array("test secret".utf8), lifetime: 3600)
        #expect(otherReplica.verify(id, now: 1010) == session)
        #expect(session.clientCapabilities.contains(.sampling))
        #expect(id.utf8.allSatisfy { $0 >= 0x21 && $0 <= 0x7E })
    }

    @Test func refusesForgedTamperedAndExpiredIds() {
        let (id, _) = signer.issue(protocolVersion: "2025-11-25", app: "main", bindingKey: "key:abc", capabilities: [], now: 1000)
        #expect(SessionSigner(secret: Array("other".utf8)).verify(id, now: 1000) == nil)
        var tampered = Array(id)
        let index = tampered.index(tampered.startIndex, offsetBy: 10)
        tampered[index] = tampered[index] == "A" ? "B" : "A"
        #expect(signer.verify(String(tampered), now: 1000) == nil)
        #expect(signer.verify(id, now: 1000 + 3600) == nil)
        #expect(signer.verify("v1.garbage.garbage", now: 1000) == nil)
        #expect(signer.verify("", now: 1000) == nil)
        #expect(signer.verify(String(repeating: "a", count: 10_000), now: 1000) == nil)
    }

    @Test func sessionsAreUniqueAndBoundToTheirCredential() {
        let a = signer.issue(protocolVersion: "2025-11-25", app: "main", bindingKey: "key:abc", capabilities: [], now: 1000)
        let b = signer.issue(protocolVersion: "2025-11-25", app: "main", bindingKey: "key:abc", capabilities: [], now: 1000)
        #expect(a.id != b.id)
        #expect(a.session.binding == SessionSigner.bindingHash("key:abc"))
        #expect(a.session.binding != SessionSigner.bindingHash("key:xyz"))
    }
}

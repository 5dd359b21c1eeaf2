import PorticoBase
import PorticoJSON
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

    @Test func aRequestStateOpensOnlyForItsToolArgumentsCallerAndTime() {
        let arguments: JSONObject = ["question": "How many flights go to Tokyo?", "datasource": "air"]
        let state = signer.sealState(["options": ["a", "b"]], tool: "ask", arguments: arguments, bindingKey: "key:abc", now: 1000)
        let otherReplica = SessionSigner(secret: Array("test secret".utf8))
        guard case .success(let opened) = otherReplica.openState(state, tool: "ask", arguments: arguments, bindingKey: "key:abc", now: 1100) else {
            Issue.record("the state did not open")
            return
        }
        #expect(opened["options"]?.arrayValue?.compactMap(\.stringValue) == ["a", "b"])
        func problem(_ result: Result<JSON, SessionSigner.StateProblem>) -> SessionSigner.StateProblem? {
            if case .failure(let problem) = result { return problem }
            return nil
        }
        #expect(problem(signer.openState(state, tool: "sql_query", arguments: arguments, bindingKey: "key:abc", now: 1100)) == .otherRequest)
        #expect(problem(signer.openState(state, tool: "ask", arguments: ["question": "other"], bindingKey: "key:abc", now: 1100)) == .otherRequest)
        #expect(problem(signer.openState(state, tool: "ask", arguments: arguments, bindingKey: "key:xyz", now: 1100)) == .otherCaller)
        #expect(problem(signer.openState(state, tool: "ask", arguments: arguments, bindingKey: "key:abc", now: 1000 + 600)) == .expired)
        #expect(
            problem(SessionSigner(secret: Array("other".utf8)).openState(state, tool: "ask", arguments: arguments, bindingKey: "key:abc", now: 1100))
                == .malformed)
        #expect(problem(signer.openState(state + "x", tool: "ask", arguments: arguments, bindingKey: "key:abc", now: 1100)) == .malformed)
        #expect(problem(signer.openState("s1..", tool: "ask", arguments: arguments, bindingKey: "key:abc", now: 1100)) == .malformed)
        #expect(problem(signer.openState("s2.", tool: "ask", arguments: arguments, bindingKey: "key:abc", now: 1100)) == .malformed)
        // Sealed, not only signed: what the tool keeps is not readable in the state.
        let sealed = Base64URL.decode(String(state.dropFirst(3))) ?? []
        #expect(state.hasPrefix("s2.") && !String(decoding: sealed, as: UTF8.self).contains("options"))
        var flipped = sealed
        flipped[flipped.count / 2] ^= 1
        #expect(
            problem(signer.openState("s2." + Base64URL.encode(flipped), tool: "ask", arguments: arguments, bindingKey: "key:abc", now: 1100)) == .malformed,
            "a changed byte is refused")
    }

    @Test func anIdKnownHereIsCheckedForItsTimeAndAForgottenOneIsReadAgain() {
        let (id, session) = signer.issue(protocolVersion: "2025-11-25", app: "main", bindingKey: "key:abc", capabilities: [.elicitation], now: 1000)
        // Found by its text (issued here), still held to its lifetime and to the clock skew allowed.
        #expect(signer.verify(id, now: 1000) == session)
        #expect(signer.verify(id, now: 1000 + 3600) == nil)
        #expect(signer.verify(id, now: 1000 - 301) == nil)
        #expect(signer.verify(id, now: 4000) == session)
        // Forgotten (its session ended), it is decoded and checked again from its bytes.
        signer.forget(id)
        #expect(signer.verify(id, now: 1010) == session)
        #expect(signer.verify(id, now: 1000 + 3600) == nil)
    }

    @Test func randomBytesAreOfTheLengthAskedAndDiffer() {
        for count in [0, 1, 7, 8, 9, 16, 18, 33] { #expect(Secrets.randomBytes(count).count == count) }
        let draws = Set((0..<100).map { _ in Secrets.randomBytes(16) })
        #expect(draws.count == 100)
        // Every byte of a draw is random, the last of a partial word too.
        let bytes = (0..<200).flatMap { _ in Secrets.randomBytes(9) }
        #expect(Set(bytes).count > 200)
    }

    @Test func sessionsAreUniqueAndBoundToTheirCredential() {
        let a = signer.issue(protocolVersion: "2025-11-25", app: "main", bindingKey: "key:abc", capabilities: [], now: 1000)
        let b = signer.issue(protocolVersion: "2025-11-25", app: "main", bindingKey: "key:abc", capabilities: [], now: 1000)
        #expect(a.id != b.id)
        #expect(a.session.binding == SessionSigner.bindingHash("key:abc"))
        #expect(a.session.binding != SessionSigner.bindingHash("key:xyz"))
    }
}

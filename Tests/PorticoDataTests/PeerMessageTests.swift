import PorticoData
import Testing

/// Every message between replicas reads back as itself from its text, and noise reads as none.
@Suite struct PeerMessageTests {
    @Test func eachMessageRoundTripsThroughItsText() {
        let messages: [PeerMessage] = [
            .cancel(key: "nonce|7"), .logLevel(session: "n=1", level: "debug"), .resourcesChanged(app: "sales"), .toolsListChanged(userID: 42),
            .signingKeysRotated, .inputResponse(key: "abc|portico-x1", body: #"{"action":"accept","content":{"choice":"a b"}}"#),
            .packagesLoaded(session: "n=2", packages: ["schema", "acl"]),
        ]
        for message in messages { #expect(PeerMessage(encoded: message.encoded) == message, "\(message)") }
        #expect(PeerMessage(encoded: "input_response:no-space") == nil)
        #expect(PeerMessage(encoded: "future_kind:x") == nil)
        #expect(PeerMessage(encoded: "garbage") == nil)
    }
}

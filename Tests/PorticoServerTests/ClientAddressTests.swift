import Testing

@testable import PorticoServer

/// Which address a request is judged by: X-Forwarded-For counts only from a trusted proxy, and
/// then only the entries the trusted proxies appended.
@Suite struct ClientAddressTests {
    @Test func forwardedForIsIgnoredUnlessTheProxyIsTrusted() {
        // Any client could send the header: from an untrusted peer it changes nothing, not even whether the address counts.
        let untrusted = ClientAddress.resolve(peer: "10.0.0.5", forwardedFor: ["203.0.113.7"], trustedProxies: [])
        #expect(untrusted.address == "10.0.0.5" && untrusted.isClients)
        let notListed = ClientAddress.resolve(peer: "10.0.0.5", forwardedFor: ["203.0.113.7"], trustedProxies: ["10.0.1.0/24"])
        #expect(notListed.address == "10.0.0.5" && notListed.isClients)
        let direct = ClientAddress.resolve(peer: "203.0.113.7", forwardedFor: [], trustedProxies: [])
        #expect(direct.address == "203.0.113.7" && direct.isClients)
        let loopback = ClientAddress.resolve(peer: "127.0.0.1", forwardedFor: [], trustedProxies: [])
        #expect(loopback.address == "127.0.0.1" && !loopback.isClients)
    }

    @Test func aTrustedProxyNamesTheClientItAppended() {
        let trusted = ["10.0.0.0/24", "127.0.0.1"]
        let one = ClientAddress.resolve(peer: "10.0.0.5", forwardedFor: ["203.0.113.7"], trustedProxies: trusted)
        #expect(one.address == "203.0.113.7" && one.isClients)
        // The client wrote the first entry itself; the proxies appended the rest.
        let forged = ClientAddress.resolve(peer: "10.0.0.5", forwardedFor: ["198.51.100.1, 203.0.113.7, 10.0.0.9"], trustedProxies: trusted)
        #expect(forged.address == "203.0.113.7")
        let twoHeaders = ClientAddress.resolve(peer: "127.0.0.1", forwardedFor: ["198.51.100.1", "203.0.113.8"], trustedProxies: trusted)
        #expect(twoHeaders.address == "203.0.113.8")
        let garbage = ClientAddress.resolve(peer: "10.0.0.5", forwardedFor: ["not an address"], trustedProxies: trusted)
        #expect(garbage.address == "10.0.0.5" && !garbage.isClients)
        let none = ClientAddress.resolve(peer: "10.0.0.5", forwardedFor: [], trustedProxies: trusted)
        #expect(none.address == "10.0.0.5" && !none.isClients)
    }
}

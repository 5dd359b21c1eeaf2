import PorticoBase
import PorticoData
import PorticoStore
import PorticoTestSupport
import Testing

@testable import PorticoAuth

/// The key check keeps the secret that matched its digest, so repeated requests skip the hash;
/// another secret under the same key id must still be refused, however often the right one came.
@Suite struct APIKeyCheckTests {
    @Test(arguments: Backend.available) func aRememberedSecretDoesNotLetAnotherOneIn(_ backend: Backend) async throws {
        let time = ManualClock()
        let f = try await AuthFixture.make(backend, clock: time.clock)
        defer { Task { await f.close() } }
        let user = try await f.users.create(name: "lee", email: nil, password: nil)
        let keys = APIKeyStore(database: f.store, users: f.users, clock: time.clock)
        let (key, token) = try await keys.create(userID: user.id, name: "agent", scopes: nil, expiresIn: nil)
        for _ in 0..<3 {
            guard case .success(let found) = try await keys.check(token: token) else {
                Issue.record("the right key was refused")
                return
            }
            #expect(found.id == key.id)
        }
        // Same id, same length, one character of the secret changed; and the secret's prefix.
        let last = token.last == "a" ? "b" : "a"
        for forged in [String(token.dropLast()) + last, String(token.prefix(16)) + String(repeating: "x", count: 40)] {
            guard case .failure(.unknown) = try await keys.check(token: forged) else {
                Issue.record("a forged secret under a known key id was accepted: \(forged)")
                return
            }
        }
        guard case .success = try await keys.check(token: token) else {
            Issue.record("the right key was refused after a forged one")
            return
        }
        // Past the entry's lifetime the key is read and hashed again, and still accepted.
        time.advance(seconds: 61)
        guard case .success = try await keys.check(token: token) else {
            Issue.record("the right key was refused once its cached entry was old")
            return
        }
        // A revocation holds on the next request, though the secret was remembered.
        #expect(try await keys.revoke(id: key.id))
        guard case .failure(.revoked) = try await keys.check(token: token) else {
            Issue.record("a revoked key was accepted from the remembered secret")
            return
        }
    }
}

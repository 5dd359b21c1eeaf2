import Foundation
import Logging
import PorticoBase
import PorticoData
import PorticoJSON
import PorticoStore
import PorticoTestSupport
import Testing

@testable import PorticoAuth

/// Lifetimes judged by an injected clock: moved forward, not slept through.
@Suite struct ExpiryTests {
    let resource = "\(AuthFixture.issuer)/api/mcp"

    @Test(arguments: Backend.available) func anAccessTokenExpiresWhenItsLifetimeHasPassed(_ backend: Backend) async throws {
        let time = ManualClock()
        let f = try await AuthFixture.make(backend, clock: time.clock)
        defer { Task { await f.close() } }
        let token = try await f.keys.sign(f.claims(expires: time.clock.date.addingTimeInterval(600)))
        time.advance(seconds: 599)
        guard case .success = await f.server.verifyAccessToken(token, resource: resource) else {
            Issue.record("a token with a second left was refused")
            return
        }
        time.advance(seconds: 2)
        guard case .failure(let reason) = await f.server.verifyAccessToken(token, resource: resource) else {
            Issue.record("an expired token was accepted")
            return
        }
        #expect(reason.description == "the access token has expired")
        // Not valid yet, until its not-before has come.
        let early = try await f.keys.sign(f.claims(notBefore: time.clock.date.addingTimeInterval(30), expires: time.clock.date.addingTimeInterval(600)))
        guard case .failure(let notYet) = await f.server.verifyAccessToken(early, resource: resource) else {
            Issue.record("a token before its not-before was accepted")
            return
        }
        #expect(notYet.description == "the access token is not valid yet")
        time.advance(seconds: 31)
        guard case .success = await f.server.verifyAccessToken(early, resource: resource) else {
            Issue.record("a token past its not-before was refused")
            return
        }
    }

    @Test(arguments: Backend.available) func anAPIKeyExpiresAfterItsExpiresIn(_ backend: Backend) async throws {
        let time = ManualClock()
        let f = try await AuthFixture.make(backend, clock: time.clock)
        defer { Task { await f.close() } }
        let user = try await f.users.create(name: "kim", email: nil, password: nil)
        let keys = APIKeyStore(database: f.store, users: f.users, clock: time.clock)
        let (_, token) = try await keys.create(userID: user.id, name: "short", scopes: nil, expiresIn: 3600)
        guard case .success = try await keys.check(token: token) else {
            Issue.record("a fresh key was refused")
            return
        }
        time.advance(seconds: 3599)
        guard case .success = try await keys.check(token: token) else {
            Issue.record("a key with a second left was refused")
            return
        }
        time.advance(seconds: 1)
        guard case .failure(.expired) = try await keys.check(token: token) else {
            Issue.record("an expired key was accepted (the cached key must be judged by the clock too)")
            return
        }
        #expect(try await keys.list(userID: user.id).first?.status(at: time.clock.seconds) == "expired")
    }

    @Test(arguments: Backend.available) func browserSessionsAndSignInLockoutsEndOnTime(_ backend: Backend) async throws {
        let time = ManualClock()
        let f = try await AuthFixture.make(backend, clock: time.clock)
        defer { Task { await f.close() } }
        let user = try await f.users.create(name: "lee", email: nil, password: nil)
        let master = try MasterKey.load(environment: nil, dataDirectory: f.directory.path)
        let sessions = WebSessions(database: f.store, users: f.users, masterKey: master, lifetime: 3600, clock: time.clock)
        let cookie = try await sessions.start(userID: user.id)
        time.advance(seconds: 3599)
        #expect(try await sessions.user(session: cookie)?.id == user.id)
        time.advance(seconds: 1)
        #expect(try await sessions.user(session: cookie) == nil, "a session past its lifetime is over")

        let throttle = LoginThrottle(database: f.store, clock: time.clock)
        for _ in 0..<throttle.limit { try await throttle.recordFailure(keys: ["user:lee"]) }
        #expect(try await throttle.lockedFor(keys: ["user:lee"]) == throttle.lockout)
        time.advance(seconds: TimeInterval(throttle.lockout - 1))
        #expect(try await throttle.lockedFor(keys: ["user:lee"]) == 1)
        time.advance(seconds: 1)
        #expect(try await throttle.lockedFor(keys: ["user:lee"]) == nil, "the lockout has ended")
    }
}

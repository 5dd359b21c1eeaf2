import Foundation
import Logging
import PorticoData
import PorticoStore
import PorticoTestSupport
import Testing

@testable import PorticoAuth

/// Fixed windows judged by an injected clock, and counts shared through the database.
@Suite struct RateLimiterTests {
    static func key(_ id: String, rate: Int? = nil) -> Principal {
        var principal = Principal(userID: 1, userName: "ana", credential: .apiKey(id: id), scopes: nil, role: nil)
        principal.ratePerMinute = rate
        return principal
    }

    static func database(_ backend: Backend) async throws -> (any Database, URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("portico-rate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let store = try await backend.makeStore(in: directory)
        try await Migrator().migrate(store)
        return (store, directory)
    }

    @Test func aCredentialGetsItsLimitEachMinuteAndIsToldWhenToComeBack() {
        let time = ManualClock(Date(timeIntervalSince1970: 1_800_000_020))  // 20 s into a minute
        let limiter = RateLimiter(limits: .init(perCredentialPerMinute: 3), database: nil, clock: time.clock)
        for _ in 0..<3 { #expect(limiter.admit(Self.key("a"), app: "main", toolCall: true) == nil) }
        let refused = limiter.admit(Self.key("a"), app: "main", toolCall: false)
        #expect(refused?.retryAfter == 40)
        #expect(refused?.message == "rate limit reached: at most 3 requests a minute for this API key; try again in 40 s")
        #expect(limiter.admit(Self.key("b"), app: "main", toolCall: true) == nil, "another key has its own budget")
        time.advance(seconds: 40)
        #expect(limiter.admit(Self.key("a"), app: "main", toolCall: true) == nil, "a new minute, a new budget")
        #expect(limiter.admit(.anonymous, app: "main", toolCall: true) == nil, "no credential, nothing to count")
    }

    /// A user's OAuth tokens count as the user, whichever client holds them: registering more
    /// clients buys no more requests. Client-credentials clients and keys count alone.
    @Test func aUsersTokensFromEveryClientShareOneBudget() {
        let time = ManualClock(Date(timeIntervalSince1970: 1_800_000_000))
        let limiter = RateLimiter(limits: .init(perCredentialPerMinute: 2), database: nil, clock: time.clock)
        func token(_ client: String, user: Int64, approved: Bool = true) -> Principal {
            var principal = Principal(
                userID: user, userName: "u\(user)", credential: .accessToken(clientID: client, tokenID: client + "-t"), scopes: nil, role: nil)
            principal.userApproved = approved
            return principal
        }
        #expect(limiter.admit(token("one", user: 1), app: "main", toolCall: false) == nil)
        #expect(limiter.admit(token("two", user: 1), app: "main", toolCall: false) == nil)
        let refused = limiter.admit(token("three", user: 1), app: "main", toolCall: false)
        #expect(refused?.message.contains("at most 2 requests a minute for this user") == true, "\(refused?.message ?? "admitted")")
        #expect(limiter.admit(token("one", user: 2), app: "main", toolCall: false) == nil, "another user has their own")
        let signedIn = Principal.signedIn(userID: 1, userName: "u1", session: "s", role: nil)
        #expect(limiter.admit(signedIn, app: "main", toolCall: false) != nil, "and their browser session counts with their tokens")
        let machine = Principal(userID: nil, userName: nil, credential: .clientCredentials(clientID: "one"), scopes: nil, role: nil)
        #expect(limiter.admit(machine, app: "main", toolCall: false) == nil)
        // A client's own token (client credentials) names the administrator who made the client,
        // yet counts alone: a busy integration does not spend its maker's budget.
        #expect(limiter.admit(token("service", user: 1, approved: false), app: "main", toolCall: false) == nil)
        #expect(limiter.admit(token("service", user: 1, approved: false), app: "main", toolCall: false) == nil)
    }

    @Test func aKeysOwnRateWinsAndTheAppLimitHoldsForEveryone() {
        let time = ManualClock(Date(timeIntervalSince1970: 1_800_000_000))
        let limiter = RateLimiter(limits: .init(perCredentialPerMinute: 100, perAppPerMinute: 5), database: nil, clock: time.clock)
        #expect(limiter.admit(Self.key("slow", rate: 1), app: "main", toolCall: false) == nil)
        #expect(limiter.admit(Self.key("slow", rate: 1), app: "main", toolCall: false)?.message.contains("at most 1 requests") == true)
        for id in ["a", "b", "c", "d"] { #expect(limiter.admit(Self.key(id), app: "main", toolCall: false) == nil) }
        #expect(limiter.admit(Self.key("e"), app: "main", toolCall: false)?.message.contains("app 'main'") == true)
        #expect(limiter.admit(Self.key("e"), app: "sales", toolCall: false) == nil, "each app has its own")
        // A refused request takes nothing from the budgets it did not reach.
        let alone = RateLimiter(limits: .init(perCredentialPerMinute: 1), database: nil, clock: time.clock)
        #expect(alone.admit(Self.key("x"), app: "main", toolCall: false) == nil)
        #expect(alone.admit(Self.key("x"), app: "main", toolCall: false) != nil)
        #expect(alone.admit(Self.key("y"), app: "main", toolCall: false) == nil)
    }

    @Test func theDailyQuotaCountsToolCallsOnlyAndResetsAtMidnightUTC() {
        let midnight = 1_800_000_000 - 1_800_000_000 % 86_400 + 86_400
        let time = ManualClock(Date(timeIntervalSince1970: TimeInterval(midnight - 3_600)))  // 23:00 UTC
        let limiter = RateLimiter(limits: .init(toolCallsPerDay: 2), database: nil, clock: time.clock)
        #expect(limiter.admit(Self.key("a"), app: "main", toolCall: true) == nil)
        #expect(limiter.admit(Self.key("a"), app: "main", toolCall: false) == nil, "tools/list is not a tool call")
        #expect(limiter.admit(Self.key("a"), app: "main", toolCall: true) == nil)
        let refused = limiter.admit(Self.key("a"), app: "main", toolCall: true)
        #expect(refused?.retryAfter == 3_600)
        #expect(refused?.message == "daily quota reached: at most 2 tool calls a day for this API key; it resets at 00:00 UTC, in 1 h 0 min")
        time.advance(seconds: 3_600)
        #expect(limiter.admit(Self.key("a"), app: "main", toolCall: true) == nil)
        // An app's daily quota holds for all its callers together.
        let shared = RateLimiter(limits: .init(appToolCallsPerDay: 2), database: nil, clock: time.clock)
        #expect(shared.admit(Self.key("a"), app: "main", toolCall: true) == nil)
        #expect(shared.admit(Self.key("b"), app: "main", toolCall: true) == nil)
        #expect(shared.admit(Self.key("c"), app: "main", toolCall: true)?.message.contains("tool calls a day for app 'main'") == true)
        #expect(shared.admit(Self.key("c"), app: "sales", toolCall: true) == nil)
    }

    @Test(arguments: Backend.available) func replicasShareOneBudgetThroughTheDatabase(_ backend: Backend) async throws {
        let (store, directory) = try await Self.database(backend)
        defer { try? FileManager.default.removeItem(at: directory) }
        let time = ManualClock(Date(timeIntervalSince1970: 1_800_000_010))
        let one = RateLimiter(limits: .init(perCredentialPerMinute: 10, toolCallsPerDay: 100), database: store, clock: time.clock)
        let two = RateLimiter(limits: .init(perCredentialPerMinute: 10, toolCallsPerDay: 100), database: store, clock: time.clock)
        for _ in 0..<6 { #expect(one.admit(Self.key("a"), app: "main", toolCall: true) == nil) }
        #expect(two.admit(Self.key("a"), app: "main", toolCall: true) == nil)
        try await one.sync()
        try await two.sync()
        // Seven admitted in all; after the exchange each replica knows it, so three more are left.
        var admitted = 0
        for _ in 0..<5 where two.admit(Self.key("a"), app: "main", toolCall: true) == nil { admitted += 1 }
        #expect(admitted == 3)
        try await two.sync()
        try await one.sync()
        #expect(one.admit(Self.key("a"), app: "main", toolCall: true) != nil, "the first replica learned what the second admitted")
        // The day's count outlives the process: a new limiter starts from it.
        let restarted = RateLimiter(limits: .init(toolCallsPerDay: 10), database: store, clock: time.clock)
        try await restarted.restore()
        var left = 0
        for _ in 0..<5 where restarted.admit(Self.key("a"), app: "main", toolCall: true) == nil { left += 1 }
        #expect(left == 0, "ten tool calls were already made today")
        await store.close()
    }

    @Test func aRefusalNamesTheLongestWaitOfTheLimitsReached() {
        let time = ManualClock(Date(timeIntervalSince1970: 1_800_000_020))
        let limiter = RateLimiter(limits: .init(perCredentialPerMinute: 1, toolCallsPerDay: 1), database: nil, clock: time.clock)
        #expect(limiter.admit(Self.key("a"), app: "main", toolCall: true) == nil)
        let refused = limiter.admit(Self.key("a"), app: "main", toolCall: true)
        #expect(refused?.message.hasPrefix("daily quota reached") == true, "the minute's budget would only send it back to the day's")
        let untilMidnight: Int64 = 86_400 - 1_800_000_020 % 86_400
        #expect(refused?.retryAfter == untilMidnight)
    }

    /// Hundreds of keys go in a few statements each way, and every replica learns every total.
    @Test(arguments: Backend.available) func manyKeysAreExchangedInBatches(_ backend: Backend) async throws {
        let (store, directory) = try await Self.database(backend)
        defer { try? FileManager.default.removeItem(at: directory) }
        let time = ManualClock(Date(timeIntervalSince1970: 1_800_000_010))
        let one = RateLimiter(limits: .init(perCredentialPerMinute: 2), database: store, clock: time.clock)
        let two = RateLimiter(limits: .init(perCredentialPerMinute: 2), database: store, clock: time.clock)
        let keys = (0..<450).map { Self.key("k\($0)") }
        for key in keys {
            #expect(one.admit(key, app: "main", toolCall: false) == nil)
            #expect(two.admit(key, app: "main", toolCall: false) == nil)
        }
        try await one.sync()
        try await two.sync()
        #expect(keys.allSatisfy { two.admit($0, app: "main", toolCall: false) != nil }, "the second replica's totals came back with its writes")
        try await one.sync()
        #expect(keys.allSatisfy { one.admit($0, app: "main", toolCall: false) != nil }, "the first read back what the second wrote")
        await store.close()
    }

    @Test func ratesAreReadAsWritten() throws {
        #expect(try RateLimiter.parseRate("60/min", per: "min") == 60)
        #expect(try RateLimiter.parseRate("60", per: "min") == 60)
        #expect(try RateLimiter.parseRate("5000 / day", per: "day") == 5000)
        #expect(throws: DataError.self) { try RateLimiter.parseRate("60/hour", per: "min") }
        #expect(throws: DataError.self) { try RateLimiter.parseRate("0/min", per: "min") }
        #expect(throws: DataError.self) { try RateLimiter.parseRate("many", per: "day") }
    }
}

/// A user name and password checked, throttled per user name and, when `address` is one client's
/// own, per address: the rule every sign-in shares (the console and consent forms, SQLBot's
/// `mcp_start` and `/api/v1/login`). It starts no session; the caller does, in its own form.
public struct PasswordSignIn: Sendable {
    public let users: UserStore
    public let throttle: LoginThrottle

    public init(users: UserStore, throttle: LoginThrottle) {
        self.users = users
        self.throttle = throttle
    }

    public enum Failure: Error, Sendable {
        /// Too many failures: try again in this many minutes.
        case locked(minutes: Int64)
        case wrongPassword
    }

    /// The user whose password this is.
    public func check(username: String, password: String, address: String?) async throws -> Result<User, Failure> {
        let keys = ["user:\(username.lowercased())"] + (address.map { ["ip:\($0)"] } ?? [])
        if let wait = try await throttle.lockedFor(keys: keys) {
            return .failure(.locked(minutes: (wait + 59) / 60))
        }
        guard !username.isEmpty, !password.isEmpty, let user = try await users.verify(name: username, password: password) else {
            try await throttle.recordFailure(keys: keys)
            return .failure(.wrongPassword)
        }
        try await throttle.reset(key: keys[0])
        return .success(user)
    }
}

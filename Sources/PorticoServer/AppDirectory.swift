/// Which apps exist, cached briefly so each request does not read the table.
final class AppDirectory: Sendable {
    let load: @Sendable () async throws -> [String]
    private let cache = LockedCache<Set<String>>()

    init(load: @escaping @Sendable () async throws -> [String]) {
        self.load = load
    }

    /// Whether `app` exists. While the database cannot be read, the apps last seen stand (and
    /// `main` always exists), so the request goes on to fail as unavailable rather than unknown.
    func exists(_ app: String) async -> Bool {
        if let names = cache.fresh(maxAge: .seconds(5)), names.contains(app) { return true }
        guard let names = try? await Set(load()) else { return app == "main" || cache.last?.contains(app) == true }
        cache.store(names)
        return names.contains(app)
    }
}

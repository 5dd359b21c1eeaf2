/// Which apps exist and the packages each offers, cached briefly so each request does not read the table.
public final class AppDirectory: Sendable {
    /// What the directory knows of one app.
    public struct Entry: Sendable {
        /// The packages its administrator lets its endpoint offer; `nil` for all.
        public var packages: [String]?
    }

    let load: @Sendable () async throws -> [String: [String]?]
    private let cache = LockedCache<[String: Entry]>()

    public init(load: @escaping @Sendable () async throws -> [String: [String]?]) {
        self.load = load
    }

    /// Whether `app` exists. While the database cannot be read, the apps last seen stand (and
    /// `main` always exists), so the request goes on to fail as unavailable rather than unknown.
    public func exists(_ app: String) async -> Bool {
        await entry(app) != nil
    }

    /// What the directory knows of `app`; `nil` when there is no such app.
    public func entry(_ app: String) async -> Entry? {
        if let apps = cache.fresh(maxAge: .seconds(5)), let entry = apps[app] { return entry }
        guard let loaded = try? await load() else {
            return cache.last?[app] ?? (app == "main" ? Entry(packages: nil) : nil)
        }
        var apps: [String: Entry] = [:]
        for (name, packages) in loaded { apps[name] = Entry(packages: packages) }
        cache.store(apps)
        return apps[app]
    }
}

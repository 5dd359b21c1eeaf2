public import PorticoAuth
public import PorticoData

extension AccessPolicy {
    /// The caller of a query on `app`'s datasources: their role's rights over its own tables, and
    /// their user (or, without one, their credential) for their share of a datasource's connections.
    public func queryCaller(_ principal: Principal, app: String, catalogs: CatalogStore) async throws -> QueryCaller {
        QueryCaller(
            key: principal.userID.map { "user:\($0)" } ?? principal.bindingKey,
            rights: try await tableRights(role: principal.role, app: app, caller: principal.caller, catalogs: catalogs))
    }

    /// How the caller may read each table of `app`'s own data (what `sql_query`, `ask`,
    /// `mcp_question` and the ask page pass to the datasources): refused, whole, or through the
    /// view of the rows and fields the role's `list` rule allows.
    public func tableRights(role: Role?, app: String, caller: Caller, catalogs: CatalogStore) async throws
        -> @Sendable (String) -> TableAccess
    {
        let access = recordAccess(role: role, app: app, caller: caller)
        let catalog = try await catalogs.catalog(app: app)
        if access.allowsInFull {
            return { table in
                if case .deny(let reason) = access.decision(catalog.collection(table: table) ?? table, .list) { return .refused(reason) }
                return .whole
            }
        }
        let scoped: Catalog
        do {
            scoped = try catalog.scoped(by: access, root: "", action: .list)
        } catch {
            let reason = error.message
            return { _ in .refused(reason) }
        }
        let roleName = role?.name ?? "none"
        return { table in
            guard let name = catalog.collection(table: table) else {
                return .refused("'\(table)' is not a collection of app '\(app)', and role '\(roleName)' reads collections only")
            }
            do {
                guard let view = try scoped.view(of: name) else { return .whole }
                return .view(view)
            } catch let error as DataError {
                return .refused(error.message)
            } catch {
                return .refused("\(error)")
            }
        }
    }
}

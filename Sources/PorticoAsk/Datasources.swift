import Foundation
public import PorticoAskEngine
public import PorticoBase
import PorticoData
import PorticoSources
public import PorticoStore
import Synchronization

/// A database questions are asked of: the app's own (`main`), or a registered external one.
public struct Datasource: Sendable {
    public enum Kind: String, Sendable, CaseIterable {
        case sqlite, postgres, mysql
    }

    public let app: String
    public let name: String
    public let kind: Kind
    public let description: String?
    /// PostgreSQL: the estimated cost above which a query is refused before it runs.
    public var maxCost: Double? = nil
    /// A file path or a PostgreSQL or MySQL URL; never returned by a tool or printed whole.
    let location: String

    /// The location without its secret: a path as is, a URL without its password.
    public var displayLocation: String {
        guard kind != .sqlite, var components = URLComponents(string: location) else { return location }
        if components.password != nil { components.password = "***" }
        return components.string ?? "\(kind.rawValue)://…"
    }

    public var dialect: SQLDialect {
        switch kind {
        case .sqlite: .sqlite
        case .postgres: .postgres
        case .mysql: .mysql
        }
    }

    /// The schemas its SQL may name tables in: SQLite's `main`; on PostgreSQL, the one its
    /// URL's `search_path` names (an app's own schema), else `public`.
    public var schemas: Set<String> {
        switch kind {
        case .sqlite: ["main"]
        case .postgres: [PostgresURL.searchPath(location)?.lowercased() ?? "public"]
        // MySQL's schema is its database.
        case .mysql: [(try? MySQLURL(location))?.database.lowercased() ?? ""]
        }
    }
}

/// The registered external datasources of each app, their locations sealed with the master key.
public struct DatasourceStore: Sendable {
    let database: any Database
    let masterKey: MasterKey
    static let sealPurpose = "portico.datasource-location"

    public init(database: any Database, masterKey: MasterKey) {
        self.database = database
        self.masterKey = masterKey
    }

    /// Registers a datasource. `main` is the app's own database and cannot be registered.
    public func add(app: String, name: String, kind: Datasource.Kind, location given: String, description: String? = nil, maxCost: Double? = nil)
        async throws
    {
        try Self.validate(name: name)
        try Self.validate(maxCost: maxCost, kind: kind)
        // A relative path is the command line's; the server may run elsewhere.
        let location = kind == .sqlite ? URL(fileURLWithPath: given).standardizedFileURL.path : given
        if kind == .sqlite {
            guard FileManager.default.isReadableFile(atPath: location) else {
                throw DatasourceError("the SQLite file '\(location)' does not exist or cannot be read by Portico")
            }
        } else if kind == .postgres {
            guard let url = URLComponents(string: location), ["postgres", "postgresql"].contains(url.scheme ?? ""), url.host != nil else {
                throw DatasourceError("a PostgreSQL datasource needs a URL like postgres://user:password@host:5432/database")
            }
        } else {
            _ = try MySQLURL(location)
        }
        guard try await find(app: app, name: name) == nil else {
            throw DatasourceError("app '\(app)' already has a datasource named '\(name)'; remove it first or choose another name")
        }
        var insert = SQLFragment("INSERT INTO portico_datasources (app, name, kind, sealed_location, description, created_at, max_cost) VALUES (")
        insert.append(
            joining: [
                .bind(.text(app)), .bind(.text(name)), .bind(.text(kind.rawValue)),
                .bind(.text(try masterKey.seal(Array(location.utf8), purpose: Self.sealPurpose))),
                .bind(description.map(SQLValue.text) ?? .null), .bind(.int(Int64(Date().timeIntervalSince1970))),
                .bind(maxCost.map(SQLValue.double) ?? .null),
            ], separator: ", ")
        insert.append(")")
        try await database.execute(insert)
    }

    public func list(app: String) async throws -> [Datasource] {
        var q = SQLFragment("SELECT app, name, kind, sealed_location, description, max_cost FROM portico_datasources WHERE app = ")
        q.append(bind: .text(app))
        q.append(" ORDER BY name")
        return try await database.query(q).map(datasource)
    }

    public func find(app: String, name: String) async throws -> Datasource? {
        var q = SQLFragment("SELECT app, name, kind, sealed_location, description, max_cost FROM portico_datasources WHERE app = ")
        q.append(bind: .text(app))
        q.append(" AND name = ")
        q.append(bind: .text(name))
        return try await database.query(q).first.map(datasource)
    }

    /// Sets (or, with `nil`, removes) the cost limit of a registered PostgreSQL datasource.
    public func setMaxCost(app: String, name: String, maxCost: Double?) async throws {
        guard let found = try await find(app: app, name: name) else { throw DatasourceError("app '\(app)' has no datasource '\(name)'") }
        try Self.validate(maxCost: maxCost, kind: found.kind)
        var q = SQLFragment("UPDATE portico_datasources SET max_cost = ")
        q.append(bind: maxCost.map(SQLValue.double) ?? .null)
        q.append(" WHERE app = ")
        q.append(bind: .text(app))
        q.append(" AND name = ")
        q.append(bind: .text(name))
        try await database.execute(q)
    }

    static func validate(maxCost: Double?, kind: Datasource.Kind) throws(DatasourceError) {
        guard let maxCost else { return }
        guard kind == .postgres else { throw DatasourceError("only PostgreSQL estimates a query's cost; a cost limit needs a PostgreSQL datasource") }
        guard maxCost.isFinite, maxCost > 0 else { throw DatasourceError("a cost limit is a positive number (PostgreSQL's planner units); got \(maxCost)") }
    }

    /// Whether there was such a datasource.
    public func remove(app: String, name: String) async throws -> Bool {
        guard try await find(app: app, name: name) != nil else { return false }
        var q = SQLFragment("DELETE FROM portico_datasources WHERE app = ")
        q.append(bind: .text(app))
        q.append(" AND name = ")
        q.append(bind: .text(name))
        try await database.execute(q)
        return true
    }

    func datasource(_ row: Row) throws -> Datasource {
        let sealed = row.string("sealed_location") ?? ""
        let location = String(decoding: try masterKey.open(sealed, purpose: Self.sealPurpose), as: UTF8.self)
        var datasource = Datasource(
            app: row.string("app") ?? "", name: row.string("name") ?? "", kind: Datasource.Kind(rawValue: row.string("kind") ?? "") ?? .sqlite,
            description: row.string("description"), location: location)
        datasource.maxCost = row.double("max_cost")
        return datasource
    }

    static func validate(name: String) throws(DatasourceError) {
        guard name != "main" else { throw DatasourceError("'main' is the app's own database and always exists; choose another name") }
        let allowed = name.utf8.allSatisfy { b in
            (b >= 0x61 && b <= 0x7A) || (b >= 0x41 && b <= 0x5A) || (b >= 0x30 && b <= 0x39) || b == 0x5F || b == 0x2D
        }
        guard !name.isEmpty, name.utf8.count <= 64, allowed else {
            throw DatasourceError("a datasource name is 1 to 64 letters, digits, '_' or '-'; got '\(name)'")
        }
    }
}

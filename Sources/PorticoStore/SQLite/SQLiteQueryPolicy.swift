import CSQLite

/// What a query on a datasource may touch, enforced by SQLite itself while it compiles the
/// statement (its authorizer): reading tables that are not hidden, calling listed functions.
/// Everything else — writing, `PRAGMA`, `ATTACH`, creating anything — is refused.
public struct SQLiteQueryPolicy: Sendable {
    /// Tables whose names start with one of these cannot be read (`sqlite_`, `portico_`).
    public var hiddenPrefixes: [String]
    /// Functions that may be called, lower case.
    public var functions: Set<String>
    /// When set, the only tables that can be read (lower case): an app's own collections in a
    /// file that holds other apps' tables too.
    public var visibleTables: Set<String>?
    /// Tables the query may read only through `views` (lower case): the ones a caller's role
    /// refuses or shows in part. Whatever the SQL's text looks like, SQLite names every table it
    /// reads here, so one named in a way the guard did not see is refused, not read whole.
    public var protectedTables: Set<String> = []
    /// The temporary views (lower case) that stand in for protected tables in this query: they
    /// may be read, and what they read themselves is theirs to read.
    public var views: Set<String> = []
    /// The names the query's WITH clauses define (lower case): SQLite reports reading a recursive
    /// one like a table's.
    public var commonTableNames: Set<String> = []

    public init(hiddenPrefixes: [String], functions: Set<String>, visibleTables: Set<String>? = nil) {
        self.hiddenPrefixes = hiddenPrefixes.map { $0.lowercased() }
        self.functions = functions
        self.visibleTables = visibleTables
    }

    package func isVisible(_ table: String) -> Bool {
        let name = table.lowercased()
        if hiddenPrefixes.contains(where: { name.hasPrefix($0) }) { return false }
        return visibleTables?.contains(name) ?? true
    }

    package enum Verdict: Equatable {
        case allow
        case deny(String)
    }

    /// The authorizer's answer for one action: `first` and `second` are SQLite's first two
    /// arguments (for a read, the table and column), `source` the view or trigger whose body
    /// does the reading (`nil` for the statement's own text).
    package func decide(_ action: Int32, _ first: String?, _ second: String?, source: String?) -> Verdict {
        switch action {
        case SQLITE_SELECT, SQLITE_RECURSIVE:
            return .allow
        case SQLITE_READ:
            guard let table = first else { return .deny("the statement reads something that is not a table") }
            let name = table.lowercased()
            if let source, views.contains(source.lowercased()) { return .allow }
            if views.contains(name) { return .allow }
            if protectedTables.contains(name) { return .deny(Self.readAroundView(table)) }
            let hidden = hiddenPrefixes.contains(where: { name.hasPrefix($0) })
            guard isVisible(table) || (commonTableNames.contains(name) && !hidden) else { return .deny("'\(table)' is not part of this datasource") }
            return .allow
        case SQLITE_FUNCTION:
            guard let name = second?.lowercased(), functions.contains(name) else {
                return .deny("function '\(second ?? "?")' is not allowed here")
            }
            return .allow
        default:
            return .deny("only reading queries run here")
        }
    }

    /// Why a table a role reads only in part is refused when the query reads it otherwise than by its name.
    public static func readAroundView(_ table: String) -> String {
        "your role may read '\(table)' only in part, and this query reads it in a way Portico cannot put your role's view in its place; name the table plainly after FROM or JOIN"
    }
}

public import PorticoJSON
public import PorticoStore
import Synchronization

/// One write of records, as an observer of writes hears of it.
public struct RecordWrite: Sendable {
    public let app: String
    public let collection: String
    /// `create`, `update` or `destroy`.
    public let action: RecordAction
    /// Who writes.
    public let caller: Caller
    /// The values the write was given (create and update), as sent.
    public let values: JSONObject?
    /// What the create's own statement started, named as `startsWithRow` named it.
    public var startedWithRow: Set<String> = []
}

/// One record a write made, changed or removed, with every field, and which fields it changed:
/// every field given for a create, those whose values differ for an update, none for a destroy.
public struct RecordChange: Sendable {
    public let record: JSONObject
    public let changed: [String]
}

/// Hears record writes inside their transactions: the workflows' collection triggers, which record
/// the executions a write starts in the write's own transaction (so a write and its executions
/// commit or roll back together), and their before-action rules, which may refuse a write.
public protocol RecordWriteObserver: Sendable {
    /// Whether writes of `action` on `collection` of `app` are heard at all. Asked on every write,
    /// so it answers from memory when it can.
    func observes(app: String, collection: String, action: RecordAction) async throws -> Bool
    /// For a create on PostgreSQL, before its statement: statements the create's statement runs
    /// with its row (`WITH written AS (INSERT ... RETURNING *), ...`, the row as `RowMapping.writtenRow`,
    /// its record as `record`), so what it starts costs no round trip of its own. `after` is still
    /// called, with `startedWithRow` holding the names of those that were run.
    func startsWithRow(_ write: RecordWrite, record: SQLFragment) async throws -> [(name: String, statement: SQLFragment)]
    /// Before the write's statement, in its transaction, with the records an update or a destroy
    /// is about to change, as they are, with the fields the writer may read (none for a create);
    /// throwing refuses the write and rolls it back. Returns whether a rule judged the records:
    /// the write must then change no other (one that another writer made match meanwhile).
    func before(_ write: RecordWrite, records: [JSONObject], db: any Database) async throws -> Bool
    /// After the statement, in the same transaction, with the records as written (for destroy: as
    /// they were), every field.
    func after(_ write: RecordWrite, changes: [RecordChange], db: any Database) async throws
}

/// Where the observer of record writes is installed, once the services that observe are built.
public final class RecordHooks: Sendable {
    private let installed = Mutex<(any RecordWriteObserver)?>(nil)

    public init() {}

    public func install(_ observer: any RecordWriteObserver) {
        installed.withLock { $0 = observer }
    }

    /// The observer, when one hears writes of `action` on `collection` of `app`.
    func observer(app: String, collection: String, action: RecordAction) async throws -> (any RecordWriteObserver)? {
        guard let observer = installed.withLock({ $0 }) else { return nil }
        return try await observer.observes(app: app, collection: collection, action: action) ? observer : nil
    }
}

/// How many workflow writes led to the current one: a workflow's write may start others, up to a
/// depth, and no further (a rule that updates the record that triggers it would never stop).
public enum WriteOrigin {
    @TaskLocal public static var depth = 0
}

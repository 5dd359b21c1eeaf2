import Foundation
public import Logging
import Metrics
public import PorticoAsk
public import PorticoAuth
import PorticoBase
public import PorticoData
public import PorticoJSON
public import PorticoStore
import Synchronization

/// Runs an app's workflows: hears record writes (the collection and before-action triggers),
/// starts scheduled ones, and runs queued executions node by node, each as its workflow's owner
/// through the data seam. Executions and their jobs are rows in the app's database; a replica
/// runs an execution under a lease that it renews at every node, so one that dies leaves the
/// execution to another when the lease runs out, and the job of a node that writes is recorded in
/// the transaction of its write, so no write is made twice.
public final class WorkflowEngine: RecordWriteObserver, Sendable {
    public struct Configuration: Sendable {
        /// How long a replica holds an execution between two nodes.
        public var lease: Duration = .seconds(60)
        public var nodeTimeLimit: Duration = .seconds(30)
        /// Running time of one execution (delays not counted).
        public var executionTimeLimit: Duration = .seconds(300)
        /// How many workflow writes may lead to one another.
        public var maxDepth = 3
        /// Executions waiting to run, per app, past which new events are refused (back-pressure).
        public var maxQueued = 10_000
        /// Executions run at once by this replica; 0 runs none here (a replica that serves calls
        /// and queues executions for the others, `--workflow-workers 0`).
        public var concurrency = 4
        /// How often other replicas' events and ended delays are looked for: this when there was
        /// work, doubling while there is none up to `idlePollInterval`. A write in this process wakes
        /// the worker at once.
        public var pollInterval: Duration = .milliseconds(250)
        public var idlePollInterval: Duration = .seconds(2)
        /// How often the queues are counted from the database (the back-pressure's count and the
        /// gauge): executions queued or run by other replicas show up within this.
        public var queueCountInterval: Duration = .seconds(5)
        /// Hosts the request node may call; none: the node is off.
        public var allowedHosts: [String] = []
        /// Lets the request node reach private and loopback addresses (development and tests).
        public var allowPrivateHosts = false
        /// Times an execution is taken up again after the replica running it died holding it;
        /// the next time it is failed instead, with the reason (`WorkflowStore.claim`).
        public var maxTakeovers = 2

        public init() {}
    }

    let configuration: Configuration
    public let store: WorkflowStore
    let records: RecordService
    let users: UserStore
    let asker: AskService?
    let audit: AuditTrail?
    let appNames: @Sendable () async throws -> [String]
    let clock: WallClock
    let logger: Logger
    let policy = AccessPolicy()
    let changes: ChangeSignal
    /// Names this process as the holder of the executions it runs.
    let replica = "replica-" + UUID().uuidString.prefix(13)

    private let triggers = Mutex<[String: AppTriggers]>([:])
    /// Each workflow's owner as last read, and the change signal's stamp before it was read.
    let owners = BoundedCache<Int64, KnownOwner>(limit: 4096)
    /// Workflows whose owner could not read what starts them, already said in the log.
    private let unstartable = Mutex<Set<Int64>>([])
    private let wakeup = Wakeup()
    private let running = Atomic<Int>(0)
    private let queuedByApp = Mutex<[String: Int]>([:])
    private let lastScanned = Mutex<[Int64: Int64]>([:])
    let requests: RequestNode
    /// Seals the request nodes' headers when saved and opens them to send.
    public let secrets: HeaderSecrets

    let queueGauge = Gauge(label: "portico_workflow_queue_length")
    let refusedCounter = Counter(label: "portico_workflow_events_refused_total")

    struct KnownOwner: Sendable {
        let owner: Owner
        let stamp: ChangeSignal.Stamp
    }

    /// Records a write may hand its before-action rules at once, each judged by each rule inside
    /// the write's transaction: past this the write is refused rather than hold the writer.
    public static let maxJudgedRecords = 1000

    struct AppTriggers {
        let workflows: [Workflow]
        /// The change signal's stamp before they were read: a change announced since, here or in
        /// another process, reads them again.
        let stamp: ChangeSignal.Stamp
        let loaded: ContinuousClock.Instant
    }

    public init(
        configuration: Configuration, store: WorkflowStore, records: RecordService, users: UserStore, asker: AskService?, audit: AuditTrail?,
        appNames: @escaping @Sendable () async throws -> [String], secrets: HeaderSecrets, clock: WallClock, logger: Logger
    ) {
        self.secrets = secrets
        self.configuration = configuration
        self.store = store
        self.records = records
        self.users = users
        self.asker = asker
        self.audit = audit
        self.appNames = appNames
        self.clock = clock
        self.logger = logger
        changes = store.databases.primary.changes
        requests = RequestNode(allowedHosts: configuration.allowedHosts, allowPrivate: configuration.allowPrivateHosts)
        changes.onMessage { [weak self] message in
            guard case .workflowsChanged(let app) = message else { return }
            self?.forget(app)
        }
    }

    /// Installs the engine as the observer of every record write.
    public func observeWrites() {
        records.hooks.install(self)
    }

    // MARK: Triggers

    func forget(_ app: String) {
        _ = triggers.withLock { $0.removeValue(forKey: app) }
    }

    /// Tells every replica, and every process on the same SQLite file (the command line), that the
    /// app's workflows changed.
    public func changed(app: String) {
        forget(app)
        changes.announce()
        changes.broadcast(.workflowsChanged(app: app))
        wake()
    }

    /// The app's enabled workflows, from memory while no change was announced since they were
    /// read (and for at most a minute).
    func enabled(app: String) async throws -> [Workflow] {
        let stamp = changes.stamp()
        if let known = triggers.withLock({ $0[app] }), known.stamp == stamp, ContinuousClock.now - known.loaded < .seconds(60) {
            return known.workflows
        }
        let workflows = try await store.list(app: app).filter(\.enabled)
        triggers.withLock { $0[app] = AppTriggers(workflows: workflows, stamp: stamp, loaded: .now) }
        return workflows
    }

    static func collectionMatch(_ trigger: Trigger, collection: String, action: RecordAction) -> Bool {
        switch trigger {
        case .collection(let name, let on, _, _), .beforeAction(let name, let on): name == collection && on.contains(action)
        default: false
        }
    }

    public func observes(app: String, collection: String, action: RecordAction) async throws -> Bool {
        try await enabled(app: app).contains { Self.collectionMatch($0.definition.trigger, collection: collection, action: action) }
    }

    /// Whether `workflow` starts with every create of `collection`, whatever the record holds: such
    /// executions are written by the create's own statement where the database can.
    static func startsWithEveryCreate(_ workflow: Workflow, collection: String) -> Bool {
        guard case .collection(let name, let on, _, let condition) = workflow.definition.trigger else { return false }
        return name == collection && on.contains(.create) && condition == nil
    }

    /// Named by the workflow's key, which its versions share: an edit between this and `after` does
    /// not start it twice, and a workflow enabled in between is started by `after`.
    public func startsWithRow(_ write: RecordWrite, record: SQLFragment) async throws -> [(name: String, statement: SQLFragment)] {
        guard write.action == .create, WriteOrigin.depth <= configuration.maxDepth else { return [] }
        var started: [(name: String, statement: SQLFragment)] = []
        for workflow in try await enabled(app: write.app) where Self.startsWithEveryCreate(workflow, collection: write.collection) {
            // The statement hands over the whole row: only to a workflow whose owner reads every field of every record.
            guard try await readsInFull(workflow, collection: write.collection, app: write.app) else { continue }
            try admit(app: write.app)
            let statement = store.enqueueWithRow(
                app: write.app, workflow: workflow, action: write.action.rawValue, collection: write.collection, record: record, depth: WriteOrigin.depth)
            started.append((workflow.key, statement))
        }
        return started
    }

    /// Whether the owner of `workflow` reads every field of every record of `collection`.
    func readsInFull(_ workflow: Workflow, collection: String, app: String) async throws -> Bool {
        guard let owner = try? await cachedOwner(of: workflow, app: app), case .allow(let rule) = owner.access.decision(collection, .get) else {
            return false
        }
        return rule.isEverything
    }

    /// Runs the before-action rules of the write, once for each record it is about to make or
    /// change: `data` is the record as the write would leave it (a create's values; an update's
    /// record, as the writer may read it, with the values given laid over it; the record a destroy
    /// removes), `values` what the write was given; each rule sees of them what its owner may read.
    public func before(_ write: RecordWrite, records: [JSONObject], db: any Database) async throws -> Bool {
        let rules = try await enabled(app: write.app).filter { workflow in
            guard case .beforeAction(let name, let on) = workflow.definition.trigger else { return false }
            return name == write.collection && on.contains(write.action)
        }
        guard !rules.isEmpty else { return false }
        let given = write.values ?? [:]
        let subjects = write.action == .create ? [given] : records.map { $0.merging(given) { _, new in new } }
        guard subjects.count <= Self.maxJudgedRecords else {
            throw DataError.invalid(
                "this \(write.action.rawValue) reaches \(subjects.count) records of '\(write.collection)', and its before-action rules judge at most \(Self.maxJudgedRecords) records a write; narrow the filter and send it in parts"
            )
        }
        for workflow in rules {
            let owner = try await cachedOwner(of: workflow, app: write.app)
            for subject in subjects {
                let context: JSON = [
                    "data": .object(subject), "values": .object(given), "action": .string(write.action.rawValue),
                    "collection": .string(write.collection),
                ]
                if case .failed(let message) = try await runInline(workflow, app: write.app, context: context, owner: owner) {
                    throw DataError.invalid("workflow '\(workflow.title)' refused this \(write.action.rawValue) of '\(write.collection)': \(message)")
                }
            }
        }
        return true
    }

    /// Queues the collection workflows a write starts: one execution per record its owner may
    /// read (a record outside the rows its owner's role sees starts nothing), holding only the
    /// fields the owner may read; `changed` and `condition` are judged on those fields alone.
    public func after(_ write: RecordWrite, changes: [RecordChange], db: any Database) async throws {
        var started = 0
        for workflow in try await enabled(app: write.app) {
            guard case .collection(let name, let on, let changed, let condition) = workflow.definition.trigger, name == write.collection,
                on.contains(write.action)
            else { continue }
            guard WriteOrigin.depth <= configuration.maxDepth else {
                logger.info(
                    "a workflow's write would start another past the depth limit; not started",
                    metadata: ["workflow": "\(workflow.id)", "depth": "\(WriteOrigin.depth)"])
                continue
            }
            if write.startedWithRow.contains(workflow.key) {
                started += changes.count  // queued by the create's own statement
                continue
            }
            let owner: Owner
            let readable: Set<String>?
            do {
                owner = try await cachedOwner(of: workflow, app: write.app)
                readable = try await readableFields(of: name, app: write.app, owner: owner)
            } catch {
                // Said once per workflow and process, not on every write it misses.
                if unstartable.withLock({ $0.insert(workflow.id).inserted }) {
                    logger.warning(
                        "a workflow's owner may not read the records that would start it, so writes do not start it; an administrator should save it again",
                        metadata: ["workflow": "\(workflow.id)", "error": "\(error)"])
                }
                continue
            }
            let rowRule: JSON? = if case .allow(let rule) = owner.access.decision(name, .get), let filter = rule.filter, !filter.isNull { filter } else { nil }
            for change in changes {
                let record = readable.map { fields in change.record.filter { fields.contains($0.key) } } ?? change.record
                // An update starts it only when one of the fields it watches (and its owner reads) now holds another value.
                if write.action == .update, !changed.isEmpty,
                    !changed.contains(where: { field in change.changed.contains(field) && readable?.contains(field) != false })
                {
                    continue
                }
                if let rowRule, try await !ownerSees(change.record, rule: rowRule, write: write, owner: owner) { continue }
                let context: JSON = ["data": .object(record), "action": .string(write.action.rawValue), "collection": .string(name)]
                if let condition {
                    let matcher = FilterMatcher(variables: Variables(context: context, now: clock.date))
                    guard try matcher.matches(condition) else { continue }
                }
                try admit(app: write.app)
                _ = try await store.enqueue(db: db, app: write.app, workflow: workflow, context: context, depth: WriteOrigin.depth)
                started += 1
            }
        }
        if started > 0 {
            queuedByApp.withLock { $0[write.app, default: 0] += started }
            wake()
        }
    }

    /// Whether a record a write made, changed or removed is among the rows its owner's role sees
    /// (`rule`, its row filter): read through the data seam by its key, in the write's transaction;
    /// a record no longer there (a destroy's) or without a single key is judged in memory, as it was.
    func ownerSees(_ record: JSONObject, rule: JSON, write: RecordWrite, owner: Owner) async throws -> Bool {
        let key = try await records.catalogs.catalog(app: write.app).collection(write.collection).primaryKey.map(\.name)
        if write.action != .destroy, key.count == 1, let value = record[key[0]], !value.isNull {
            var request = RecordRequest(resource: write.collection)
            request.filterByTk = value
            request.fields = key
            return try await records.get(app: write.app, request, access: owner.access)["data"]?.objectValue != nil
        }
        guard let bound = try? RecordAccess.substitute(rule, variables: owner.access.variables, collection: write.collection) else { return false }
        return (try? FilterMatcher(variables: Variables(context: ["data": .object(record)], now: clock.date)).matches(bound)) ?? false
    }

    /// Refuses a new execution when the app's queue is full: the write or the call that would
    /// start it fails with a message to retry, rather than the event being dropped.
    func admit(app: String) throws {
        let queued = queuedByApp.withLock { $0[app] ?? 0 }
        guard queued < configuration.maxQueued else {
            refusedCounter.increment()
            throw DataError(
                .conflict,
                "app '\(app)' has \(queued) workflow executions waiting to run, its limit; try again when they have run (executions_list shows them)")
        }
    }

    /// Starts a manual run of `workflow` (any trigger type but beforeAction) with `context`.
    public func trigger(app: String, workflow: Workflow, context: JSON) async throws -> Execution {
        if case .beforeAction = workflow.definition.trigger {
            throw DataError.invalid("workflow \(workflow.id) runs before writes of its collection; it cannot be started on its own")
        }
        try admit(app: app)
        let database = try await store.databases.database(app: app)
        let id = try await database.transaction { [store] db in
            try await store.enqueue(db: db, app: app, workflow: workflow, context: ["data": context], depth: WriteOrigin.depth)
        }
        queuedByApp.withLock { $0[app, default: 0] += 1 }
        wake()
        return try await store.execution(app: app, id: id)
    }

    // MARK: Running

    public func wake() { wakeup.signal() }

    /// Runs queued executions and scheduled starts until cancelled.
    public func run() async {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.scheduleLoop() }
            guard configuration.concurrency > 0 else {
                // A replica that only queues still counts what the others have run, so its
                // back-pressure and the queue's gauge follow the database, not its own starts.
                group.addTask { await self.countLoop() }
                return
            }
            var lastCount = ContinuousClock.now - configuration.queueCountInterval
            var interval = configuration.pollInterval
            while !Task.isCancelled {
                var started = false
                do {
                    let apps = try await appNames()
                    if ContinuousClock.now - lastCount >= configuration.queueCountInterval {
                        lastCount = .now
                        await countQueues(apps)
                    }
                    for app in apps where running.load(ordering: .relaxed) < configuration.concurrency {
                        guard try await store.hasRunnable(app: app) else { continue }
                        while running.load(ordering: .relaxed) < configuration.concurrency,
                            let execution = try await store.claim(app: app, owner: replica, until: leaseEnd(), maxTakeovers: configuration.maxTakeovers)
                        {
                            started = true
                            running.add(1, ordering: .relaxed)
                            queuedByApp.withLock { $0[app] = max(0, ($0[app] ?? 1) - 1) }
                            group.addTask {
                                await self.execute(execution, app: app)
                                self.running.subtract(1, ordering: .relaxed)
                                self.wake()
                            }
                        }
                    }
                } catch is CancellationError {
                    break
                } catch {
                    logger.warning("could not look for workflow executions to run", metadata: ["error": "\(error)"])
                }
                // Idle polls back off; work, or a wake, brings them back to the shortest interval.
                interval = started ? configuration.pollInterval : min(interval * 2, configuration.idlePollInterval)
                if !started { await wakeup.wait(timeout: interval) }
            }
            group.cancelAll()
        }
        await releaseLeases()
    }

    /// On a graceful stop, once every execution this replica ran has stopped at a node's edge: lets
    /// them go, so another replica takes them at once instead of when their leases run out. The
    /// node each was in did not record its job (its transaction rolled back), so it runs again
    /// there — at most once with effects in the database, as after a crash.
    func releaseLeases() async {
        // A task of its own: the stop has cancelled this one, and the release must still reach the database.
        await Task { [store, replica, appNames, logger] in
            do {
                for app in try await appNames() { try await store.release(app: app, owner: replica) }
            } catch {
                logger.warning(
                    "could not let go of this replica's workflow executions; others take them when their leases run out", metadata: ["error": "\(error)"])
            }
        }.value
    }

    /// Counts the queues every few seconds, on a replica that runs no executions.
    func countLoop() async {
        while !Task.isCancelled {
            do {
                await countQueues(try await appNames())
            } catch {
                logger.warning("could not count the workflow executions waiting to run", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: configuration.queueCountInterval)
        }
    }

    func countQueues(_ apps: [String]) async {
        var total = 0
        for app in apps {
            guard let queued = try? await store.queued(app: app) else { continue }
            queuedByApp.withLock { $0[app] = queued }
            total += queued
        }
        queueGauge.record(total)
    }

    var nowMilliseconds: Int64 { clock.milliseconds }

    func leaseEnd() -> Int64 {
        nowMilliseconds + configuration.lease.components.seconds * 1000
    }

    /// Runs every execution waiting in `app` now, in this process, until none is left (the command
    /// line's `portico workflow run`, and tests).
    public func drain(app: String) async throws {
        while let execution = try await store.claim(app: app, owner: replica, until: leaseEnd(), maxTakeovers: configuration.maxTakeovers) {
            await execute(execution, app: app)
        }
    }

    // MARK: Schedules

    /// Scans the schedules once a minute (the clock is read every second; nothing scheduled can
    /// come due between two minutes).
    func scheduleLoop() async {
        var scanned = Int64.min
        while !Task.isCancelled {
            do {
                let minute = Int64(clock.date.timeIntervalSince1970) / 60
                if minute != scanned {
                    for app in try await appNames() { try await scan(app: app) }
                    scanned = minute
                }
            } catch is CancellationError {
                return
            } catch {
                logger.warning("could not start scheduled workflows", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }

    /// Starts the scheduled workflows of `app` whose minutes have come, each minute once across
    /// every replica (the tick's row is the claim), looking back at most ten minutes and never to
    /// the minute the workflow was saved in.
    public func scan(app: String) async throws {
        let minute = Int64(clock.date.timeIntervalSince1970) / 60
        for workflow in try await enabled(app: app) {
            // From the minute after it was saved (or enabled): a schedule starts from now on.
            let since = max(minute - 10, workflow.updatedAt / 60_000 + 1, lastScanned.withLock { $0[workflow.id] ?? .min } + 1)
            guard since <= minute else { continue }
            do {
                switch workflow.definition.trigger {
                case .cron(let cron, _, _):
                    for m in since...minute where cron.matches(Date(timeIntervalSince1970: TimeInterval(m * 60))) {
                        try await startScheduled(workflow, app: app, at: m * 60_000, subject: "", context: ["data": ["scheduledAt": .int(m * 60_000)]])
                    }
                case .dateField(let collection, let field, let offset):
                    try await startDue(workflow, app: app, collection: collection, field: field, offset: offset, from: since, to: minute)
                default:
                    continue
                }
                lastScanned.withLock { $0[workflow.id] = minute }
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                // One workflow's failure (its owner lost their role, its collection went) does not hold up the others.
                logger.warning("could not start a scheduled workflow", metadata: ["workflow": "\(workflow.id)", "error": "\(error)"])
            }
        }
    }

    func startScheduled(_ workflow: Workflow, app: String, at: Int64, subject: String, context: JSON) async throws {
        let database = try await store.databases.database(app: app)
        let store = self.store
        let started = try await database.transaction { db in
            guard try await store.claimTick(db: db, workflow: workflow.id, at: at, subject: subject) else { return false }
            _ = try await store.enqueue(db: db, app: app, workflow: workflow, context: context, depth: 0)
            return true
        }
        if started {
            queuedByApp.withLock { $0[app, default: 0] += 1 }
            wake()
        }
    }

    /// Records whose date field, moved by `offset`, falls in the minutes `from...to`: each starts the workflow once.
    func startDue(_ workflow: Workflow, app: String, collection: String, field: String, offset: Int64, from: Int64, to: Int64) async throws {
        let owner = try await owner(of: workflow, app: app)
        let low = Date(timeIntervalSince1970: TimeInterval(from * 60 - offset - 60))
        let high = Date(timeIntervalSince1970: TimeInterval(to * 60 - offset))
        var request = RecordRequest(resource: collection)
        request.filter = [field: ["$gt": .string(UTCText.format(low, dateOnly: false)), "$lte": .string(UTCText.format(high, dateOnly: false))]]
        request.paginate = false
        let result = try await records.list(app: app, request, access: owner.access)
        for record in result["data"]?.arrayValue ?? [] {
            guard let object = record.objectValue, let date = Evaluator.date(object[field] ?? .null),
                Evaluator.years.contains(date.timeIntervalSince1970)
            else { continue }
            // The moment it is due names the start, so scans of other windows and replicas agree on it.
            // Within the years 1 to 9999 and an offset of at most ten years, neither step overflows.
            let due = Int64(date.timeIntervalSince1970.rounded(.down)) + offset
            let subject = (object["id"] ?? object.values.first ?? .null).serializedString
            try await startScheduled(workflow, app: app, at: due * 1000, subject: subject, context: ["data": record])
        }
    }
}

import Foundation
import Logging
import PorticoAuth
import PorticoData
import PorticoJSON
import PorticoStore
import PorticoTestSupport
import Testing

@testable import PorticoWorkflow

/// The engine over a real store (SQLite, and PostgreSQL when the test cluster is there): the queue's
/// bound, one claim per execution across engines that share the database, cancel, and the time limit.
@Suite struct WorkflowEngineTests {
    struct Fixture {
        let service: WorkflowService
        let records: RecordService
        let owner: WorkflowService.Saver
        let database: any Database
    }

    func fixture(_ backend: Backend, clock: WallClock = .system, configure: (inout WorkflowEngine.Configuration) -> Void = { _ in }) async throws
        -> Fixture
    {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("workflow-engine-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let logger = Logger(label: "test")
        let store = try await backend.makeStore(in: directory, logger: logger)
        try await Migrator().migrate(store)
        let databases = AppDatabases(primary: store, layout: .shared, logger: logger)
        let catalogs = CatalogStore(databases: databases)
        let records = RecordService(catalogs: catalogs)
        let users = UserStore(database: store)
        let user = try await users.create(name: "owner", email: nil, password: nil, app: "main", role: .admin)
        let schema = SchemaService(catalogs: catalogs)
        for name in ["Deal", "Task"] {
            _ = try await schema.createCollection(
                app: "main", name: name, title: nil, description: nil, fields: [FieldSpec(name: "title", type: .string)])
        }
        var configuration = WorkflowEngine.Configuration()
        configure(&configuration)
        let engine = WorkflowEngine(
            configuration: configuration, store: WorkflowStore(databases: databases, clock: clock), records: records, users: users, asker: nil,
            audit: nil, appNames: { ["main"] }, secrets: HeaderSecrets(masterKey: nil), clock: clock, logger: logger)
        engine.observeWrites()
        return Fixture(
            service: WorkflowService(engine: engine, catalogs: catalogs), records: records,
            owner: .init(userID: user.id, userName: user.name, scopes: nil), database: store)
    }

    static let createsATask: JSON = [["key": "t", "type": "create", "config": ["collection": "Task", "values": ["title": "{{$context.data.n}}"]]]]

    func count(_ f: Fixture, _ collection: String) async throws -> Int {
        var request = RecordRequest(resource: collection)
        request.paginate = false
        return try await f.records.list(app: "main", request, access: .unrestricted)["data"]?.arrayValue?.count ?? -1
    }

    @Test(arguments: Backend.available) func aFullQueueRefusesNewRunsAndTheWritesThatWouldStartThem(_ backend: Backend) async throws {
        let f = try await fixture(backend) { $0.maxQueued = 3 }
        let manual = try await f.service.create(
            app: "main", title: "m", trigger: ["type": "manual"], nodes: Self.createsATask, enabled: true, saver: f.owner)
        let copiesTitle: JSON = [["key": "t", "type": "create", "config": ["collection": "Task", "values": ["title": "{{$context.data.title}}"]]]]
        _ = try await f.service.create(
            app: "main", title: "c", trigger: ["type": "collection", "collection": "Deal", "on": "create"], nodes: copiesTitle, enabled: true,
            saver: f.owner)
        for n in 0..<3 { _ = try await f.service.trigger(app: "main", id: manual.id, context: ["n": .int(Int64(n))], by: f.owner) }
        await #expect(throws: DataError.self) { try await f.service.trigger(app: "main", id: manual.id, context: [:], by: f.owner) }
        var deal = RecordRequest(resource: "Deal")
        deal.values = ["title": "refused"]
        await #expect(throws: DataError.self) { try await f.records.create(app: "main", deal, access: .unrestricted) }
        #expect(try await count(f, "Deal") == 0, "the write was rolled back with its execution")
        try await f.service.engine.drain(app: "main")
        #expect(try await count(f, "Task") == 3)
    }

    @Test(arguments: Backend.available) func aReplicaThatOnlyQueuesSeesTheQueueOthersRan(_ backend: Backend) async throws {
        // Runs nothing itself (`--workflow-workers 0`): its count of waiting executions must come down
        // as another replica runs them, or it would refuse every write once it had queued its limit.
        let f = try await fixture(backend) {
            $0.maxQueued = 3
            $0.concurrency = 0
            $0.queueCountInterval = .milliseconds(50)
        }
        let manual = try await f.service.create(
            app: "main", title: "m", trigger: ["type": "manual"], nodes: Self.createsATask, enabled: true, saver: f.owner)
        for n in 0..<3 { _ = try await f.service.trigger(app: "main", id: manual.id, context: ["n": .int(Int64(n))], by: f.owner) }
        await #expect(throws: DataError.self) { try await f.service.trigger(app: "main", id: manual.id, context: [:], by: f.owner) }
        let queuing = Task { await f.service.engine.run() }
        defer { queuing.cancel() }
        let runner = WorkflowEngine(
            configuration: .init(), store: f.service.store, records: f.records, users: UserStore(database: f.database), asker: nil, audit: nil,
            appNames: { ["main"] }, secrets: HeaderSecrets(masterKey: nil), clock: .system, logger: Logger(label: "test"))
        try await runner.drain(app: "main")
        #expect(try await count(f, "Task") == 3)
        var admitted = false
        for _ in 0..<100 where !admitted {
            try await Task.sleep(for: .milliseconds(50))
            admitted = (try? await f.service.trigger(app: "main", id: manual.id, context: ["n": 3], by: f.owner)) != nil
        }
        #expect(admitted, "the queue-only replica counted the executions the other ran and admits new ones")
    }

    @Test(arguments: Backend.available) func twoEnginesOnOneDatabaseRunEachExecutionOnce(_ backend: Backend) async throws {
        let f = try await fixture(backend)
        let manual = try await f.service.create(
            app: "main", title: "m", trigger: ["type": "manual"], nodes: Self.createsATask, enabled: true, saver: f.owner)
        for n in 0..<40 { _ = try await f.service.trigger(app: "main", id: manual.id, context: ["n": .int(Int64(n))], by: f.owner) }
        let other = WorkflowEngine(
            configuration: .init(), store: f.service.store, records: f.records, users: UserStore(database: f.database), asker: nil, audit: nil,
            appNames: { ["main"] }, secrets: HeaderSecrets(masterKey: nil), clock: .system, logger: Logger(label: "test"))
        async let one: Void = f.service.engine.drain(app: "main")
        async let two: Void = other.drain(app: "main")
        _ = try await (one, two)
        #expect(try await count(f, "Task") == 40)
        let resolved = try await f.service.store.executions(app: "main", workflowKey: manual.key, status: .resolved)
        #expect(resolved.count == 40)
        #expect(try await f.database.query("SELECT COUNT(*) AS n FROM portico_jobs").first?.int("n") == 40)
    }

    @Test(arguments: Backend.available) func aCanceledDelayNeverResumes(_ backend: Backend) async throws {
        let f = try await fixture(backend)
        let nodes: [JSON] = [["key": "d", "type": "delay", "config": ["seconds": 3600]]] + (Self.createsATask.arrayValue ?? [])
        let flow = try await f.service.create(app: "main", title: "wait", trigger: ["type": "manual"], nodes: .array(nodes), enabled: true, saver: f.owner)
        let execution = try await f.service.trigger(app: "main", id: flow.id, context: ["n": 1], by: f.owner)
        try await f.service.engine.drain(app: "main")  // runs the delay and lets it go for an hour
        #expect(try await f.service.store.execution(app: "main", id: execution.id).status == .running)
        _ = try await f.service.store.cancel(app: "main", id: execution.id)
        try await f.service.engine.drain(app: "main")
        #expect(try await f.service.store.execution(app: "main", id: execution.id).status == .canceled)
        #expect(try await count(f, "Task") == 0)
    }

    @Test func beforeActionRulesJudgeAtMostTheirLimitOfRecordsAWrite() async throws {
        let f = try await fixture(.sqlite)
        let passes: JSON = [["key": "ok", "type": "end", "config": ["status": "resolved"]]]
        _ = try await f.service.create(
            app: "main", title: "r", trigger: ["type": "beforeAction", "collection": "Deal", "on": "update"], nodes: passes, enabled: true, saver: f.owner)
        for n in 0...WorkflowEngine.maxJudgedRecords {
            var deal = RecordRequest(resource: "Deal")
            deal.values = ["title": .string("d\(n)")]
            _ = try await f.records.create(app: "main", deal, access: .unrestricted)
        }
        var all = RecordRequest(resource: "Deal")
        all.filter = ["title": ["$startsWith": "d"]]
        all.values = ["title": "changed"]
        await #expect(throws: DataError.self) { try await f.records.update(app: "main", all, access: .unrestricted) }
        var some = RecordRequest(resource: "Deal")
        some.filter = ["title": ["$startsWith": "d1"]]
        some.values = ["title": "changed"]
        #expect(try await f.records.update(app: "main", some, access: .unrestricted)["data"]?.arrayValue?.count == 112)
    }

    @Test func aNodePastItsTimeLimitIsStopped() async throws {
        let f = try await fixture(.sqlite) { $0.nodeTimeLimit = .milliseconds(50) }
        let began = ContinuousClock.now
        await #expect(throws: WorkflowError.self) {
            try await f.service.engine.limited { try await Task.sleep(for: .seconds(30)) }
        }
        #expect(ContinuousClock.now - began < .seconds(10), "stopped at its limit, not when the node ended")
        #expect(try await f.service.engine.limited { 7 } == 7)
    }

    @Test(arguments: Backend.available) func anExecutionPastItsTimeLimitFails(_ backend: Backend) async throws {
        let f = try await fixture(backend) { $0.executionTimeLimit = .zero }
        let flow = try await f.service.create(app: "main", title: "t", trigger: ["type": "manual"], nodes: Self.createsATask, enabled: true, saver: f.owner)
        let execution = try await f.service.trigger(app: "main", id: flow.id, context: ["n": 1], by: f.owner)
        try await f.service.engine.drain(app: "main")
        let ended = try await f.service.store.execution(app: "main", id: execution.id)
        #expect(ended.status == .failed && ended.error?.contains("time limit") == true)
        #expect(try await count(f, "Task") == 0)
    }

    /// An execution whose replica died holding it (its lease ran out with the holder still named)
    /// is taken over at most `maxTakeovers` times, then failed with the reason; one let go of on a
    /// clean stop, or asleep on a delay, is not counted.
    @Test(arguments: Backend.available) func anExecutionThatKeepsKillingItsReplicaIsFailedAfterItsTakeovers(_ backend: Backend) async throws {
        let time = ManualClock()
        let f = try await fixture(backend, clock: time.clock) { $0.maxTakeovers = 2 }
        let store = f.service.store
        let flow = try await f.service.create(app: "main", title: "t", trigger: ["type": "manual"], nodes: Self.createsATask, enabled: true, saver: f.owner)
        let execution = try await f.service.trigger(app: "main", id: flow.id, context: ["n": 1], by: f.owner)
        func lease() -> Int64 { store.now + 60_000 }
        // Taken, then let go of by a replica that stops cleanly: a new start, not a takeover.
        #expect(try await store.claim(app: "main", owner: "stopping", until: lease(), maxTakeovers: 2)?.id == execution.id)
        try await store.release(app: "main", owner: "stopping")
        #expect(try await store.claim(app: "main", owner: "first", until: lease(), maxTakeovers: 2)?.takeovers == 0)
        // Each holder dies: nothing is taken before the lease runs out, then one more takeover.
        for (holder, takeovers) in [("second", 1), ("third", 2)] {
            #expect(try await store.claim(app: "main", owner: holder, until: lease(), maxTakeovers: 2) == nil, "still leased")
            time.advance(seconds: 61)
            let taken = try await store.claim(app: "main", owner: holder, until: lease(), maxTakeovers: 2)
            #expect(taken?.id == execution.id && taken?.takeovers == takeovers)
        }
        time.advance(seconds: 61)
        #expect(try await store.claim(app: "main", owner: "fourth", until: lease(), maxTakeovers: 2) == nil, "not taken a third time")
        let ended = try await store.execution(app: "main", id: execution.id)
        #expect(ended.status == .failed)
        #expect(ended.error?.contains("not taken up again without a person") == true, "\(ended.error ?? "")")
        #expect(try await count(f, "Task") == 0)
    }

    /// A workflow runs with the scopes it was saved with; a credential narrowed to the workflow
    /// scopes can read it, but cannot start, rename or enable one whose nodes write.
    @Test func aNarrowedCredentialCannotSetOffWhatItCouldNotDo() async throws {
        let f = try await fixture(.sqlite)
        let flow = try await f.service.create(app: "main", title: "t", trigger: ["type": "manual"], nodes: Self.createsATask, enabled: false, saver: f.owner)
        let narrowed = WorkflowService.Saver(userID: f.owner.userID, userName: f.owner.userName, scopes: ScopeSet.parse("read:workflow write:workflow").scopes)
        await #expect(throws: DataError.self) { try await f.service.trigger(app: "main", id: flow.id, context: ["n": 1], by: narrowed) }
        for change in [(title: "renamed" as String?, enabled: nil as Bool?), (nil, true)] {
            await #expect(throws: DataError.self) {
                try await f.service.update(app: "main", id: flow.id, title: change.title, trigger: nil, nodes: nil, enabled: change.enabled, saver: narrowed)
            }
        }
        #expect(try await f.service.store.get(app: "main", id: flow.id).enabled == false)
        #expect(try await f.service.store.executions(app: "main", workflowKey: flow.key, status: nil).isEmpty)
        let wide = WorkflowService.Saver(
            userID: f.owner.userID, userName: f.owner.userName, scopes: ScopeSet.parse("read:workflow write:workflow write:data").scopes)
        _ = try await f.service.update(app: "main", id: flow.id, title: nil, trigger: nil, nodes: nil, enabled: true, saver: wide)
        _ = try await f.service.trigger(app: "main", id: flow.id, context: ["n": 1], by: wide)
        try await f.service.engine.drain(app: "main")
        #expect(try await count(f, "Task") == 1)
    }

    /// A record's value never chooses the collection or datasource a node acts on, nor turns a
    /// one-record key into many.
    @Test func aNodesTargetIsWrittenInTheNode() async throws {
        let f = try await fixture(.sqlite)
        for node: JSON in [
            ["key": "t", "type": "create", "config": ["collection": "{{$context.data.where}}", "values": ["title": "x"]]],
            ["key": "s", "type": "sql", "config": ["datasource": "{{$context.data.where}}", "sql": "SELECT 1"]],
        ] {
            await #expect(throws: DataError.self) {
                try await f.service.create(app: "main", title: "t", trigger: ["type": "manual"], nodes: [node], enabled: true, saver: f.owner)
            }
        }
        for title in ["a", "b", "c"] {
            var task = RecordRequest(resource: "Task")
            task.values = ["title": .string(title)]
            _ = try await f.records.create(app: "main", task, access: .unrestricted)
        }
        let destroy: JSON = [["key": "d", "type": "destroy", "config": ["collection": "Task", "filterByTk": "{{$context.data.id}}"]]]
        let flow = try await f.service.create(app: "main", title: "d", trigger: ["type": "manual"], nodes: destroy, enabled: true, saver: f.owner)
        let many = try await f.service.trigger(app: "main", id: flow.id, context: ["id": [1, 2, 3]], by: f.owner)
        try await f.service.engine.drain(app: "main")
        let refused = try await f.service.store.execution(app: "main", id: many.id)
        #expect(refused.status == .failed && refused.error?.contains("names one record") == true, "\(refused.error ?? "")")
        #expect(try await count(f, "Task") == 3)
        _ = try await f.service.trigger(app: "main", id: flow.id, context: ["id": 2], by: f.owner)
        try await f.service.engine.drain(app: "main")
        #expect(try await count(f, "Task") == 2)
    }
}

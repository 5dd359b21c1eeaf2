import Foundation
import Logging
import PorticoStore
import PorticoTestSupport
import Testing

@testable import PorticoData

/// Tasks kept as rows of the app's database: found by app and id, ended once, kept alive by their
/// replica, and swept when they expire.
@Suite struct TaskRecordsTests {
    func make(_ backend: Backend) async throws -> TaskRecords {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("portico-tasks-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let primary = try await backend.makeStore(in: directory)
        try await Migrator().migrate(primary)
        try await primary.execute("INSERT INTO portico_apps (name, title, created_at) VALUES ('eu', 'eu', 0)")
        let layout: AppDatabases.Layout =
            switch backend {
            case .sqlite: .files(directory: directory.path, options: SQLiteStore.Options())
            case .postgres: .shared
            }
        return TaskRecords(databases: AppDatabases(primary: primary, layout: layout, logger: Logger(label: "test")))
    }

    func task(_ id: String, app: String = "main", at now: Int64 = 1_000, expires: Int64 = 10_000) -> TaskRecords.Record {
        TaskRecords.Record(
            id: id, app: app, owner: "key:1", tool: "sql_query", statusMessage: "running", createdAt: now, updatedAt: now, expiresAt: expires,
            aliveAt: now)
    }

    @Test(arguments: Backend.available)
    func aTaskEndsOnceAndKeepsItsEnd(_ backend: Backend) async throws {
        let tasks = try await make(backend)
        try await tasks.create(task("a"))
        #expect(try await tasks.find(app: "main", id: "a") == task("a"))
        try await tasks.touch(app: "main", id: "a", now: 1_500)
        #expect(try await tasks.find(app: "main", id: "a")?.aliveAt == 1_500)

        #expect(try await tasks.finish(app: "main", id: "a", status: .cancelled, message: "Cancelled", now: 2_000))
        // The call behind it ends later: the task stays cancelled, without a result.
        #expect(try await !tasks.finish(app: "main", id: "a", status: .completed, message: "done", result: #"{"content":[]}"#, now: 3_000))
        let ended = try #require(try await tasks.find(app: "main", id: "a"))
        #expect(ended.status == .cancelled && ended.result == nil && ended.updatedAt == 2_000 && ended.statusMessage == "Cancelled")
        // An ended task is not kept alive.
        try await tasks.touch(app: "main", id: "a", now: 4_000)
        #expect(try await tasks.find(app: "main", id: "a")?.aliveAt == 1_500)
    }

    @Test(arguments: Backend.available)
    func tasksAreTheirAppsAndExpiredOnesAreSwept(_ backend: Backend) async throws {
        let tasks = try await make(backend)
        try await tasks.create(task("old", expires: 5_000))
        try await tasks.create(task("eu-1", app: "eu"))
        #expect(try await tasks.find(app: "main", id: "eu-1") == nil, "another app's task is not found")
        #expect(try await tasks.find(app: "eu", id: "eu-1")?.app == "eu")
        #expect(try await tasks.finish(app: "eu", id: "eu-1", status: .completed, message: "done", result: "{}", now: 2_000))
        #expect(try await tasks.find(app: "eu", id: "eu-1")?.result == "{}")

        // A task made after another expired removes it.
        try await tasks.create(task("new", at: 6_000, expires: 16_000))
        #expect(try await tasks.find(app: "main", id: "old") == nil)
        #expect(try await tasks.find(app: "main", id: "new") != nil)
    }
}

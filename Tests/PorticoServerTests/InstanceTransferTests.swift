import Foundation
import PorticoData
import PorticoStore
import PorticoTestSupport
import Testing

@testable import PorticoInstance

@Suite struct InstanceTransferTests {
    /// Every table the migrations make is exported or left behind for a stated reason, on both databases.
    @Test(arguments: Backend.available)
    func everyTableOfPorticoIsExportedOrLeftBehindOnPurpose(_ backend: Backend) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("portico-transfer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = try await backend.makeStore(in: directory)
        try await Migrator().migrate(database)
        let sql =
            database.flavor == .sqlite
            ? "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'portico\\_%' ESCAPE '\\'"
            : "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_name LIKE 'portico\\_%'"
        let made = Set(try await database.query(sql).compactMap { $0.string("name") })
        await database.close()
        #expect(made.contains("portico_users"), "the query finds the migrations' tables")
        let decided = Set(InstanceTransfer.ownTables).union(InstanceTransfer.leftBehind.keys)
        #expect(made.subtracting(decided).isEmpty, "tables neither exported nor left behind on purpose: \(made.subtracting(decided).sorted())")
        #expect(decided.subtracting(made).isEmpty, "tables named for export that the migrations do not make: \(decided.subtracting(made).sorted())")
        #expect(Set(InstanceTransfer.ownTables).isDisjoint(with: InstanceTransfer.leftBehind.keys))
    }
}

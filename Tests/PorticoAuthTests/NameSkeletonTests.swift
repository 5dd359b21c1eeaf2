import Foundation
import PorticoData
import PorticoStore
import PorticoTestSupport
import Testing

@testable import PorticoAuth

/// Account names a person could take for one another are refused beside each other.
@Suite struct NameSkeletonTests {
    @Test func caseAccentsAndLookAlikeLettersAreSetAside() {
        let admin = NameSkeleton.of("admin")
        for lookalike in ["ADMIN", "Admin", "аdmin", "ADMİN", "ádmin", "ａｄｍｉｎ", "adrnin", "аdmіn", "αdmin"] {
            #expect(NameSkeleton.of(lookalike) == admin, "\(lookalike)")
        }
        #expect(NameSkeleton.of("pau1") == NameSkeleton.of("paul"), "1 passes for l")
        #expect(NameSkeleton.of("AIice") == NameSkeleton.of("alice"), "a capital I passes for an l")
        #expect(NameSkeleton.of("pauI") == NameSkeleton.of("paul"))
        for other in ["admins", "adman", "root", "admin2"] {
            #expect(NameSkeleton.of(other) != admin, "\(other)")
        }
        #expect(NameSkeleton.of("张伟") != NameSkeleton.of("李伟"), "names in other scripts stay themselves")
    }

    @Test(arguments: Backend.available) func aConfusableNameIsRefusedOnCreateAndRename(_ backend: Backend) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("portico-names-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let store = try await backend.makeStore(in: directory)
        try await Migrator().migrate(store)
        let users = UserStore(database: store)
        let admin = try await users.create(name: "admin", email: nil, password: nil)
        for name in ["ADMIN", "аdmin", "Admin"] {
            await #expect(throws: DataError.self, "\(name)") { try await users.create(name: name, email: nil, password: nil) }
        }
        let other = try await users.create(name: "ana", email: nil, password: nil)
        await #expect(throws: DataError.self) { try await users.rename(userID: other.id, to: "ADMIN") }
        try await users.rename(userID: admin.id, to: "Admin")  // its own name in another case
        #expect(try await users.find(id: admin.id)?.name == "Admin")
    }
}

import Foundation
import Testing

@testable import PorticoData

/// Changes announced in one process are seen by another sharing the file, at once.
@Suite struct ChangeSignalTests {
    @Test func anAnnouncementChangesEveryStampOfTheFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("portico-changes-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        // Two signals on one file stand for the server and the command line.
        let server = ChangeSignal(path: path), commandLine = ChangeSignal(path: path)
        var seen = server.stamp()
        #expect(server.stamp() == seen, "nothing announced, nothing changed")
        for round in 0..<3 {
            commandLine.announce()
            let now = server.stamp()
            #expect(now != seen, "round \(round): the other process's announcement is seen at once")
            seen = now
        }
        server.announce()
        #expect(server.stamp() != seen)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
    }

    @Test func theFileIsReplacedWhenItGrowsAndStampsStillDiffer() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("portico-changes-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let signal = ChangeSignal(path: path), other = ChangeSignal(path: path)
        var stamps: [ChangeSignal.Stamp] = []
        for _ in 0..<(Int(ChangeSignal.maxFileSize) + 3) {
            other.announce()
            stamps.append(signal.stamp())
        }
        for (earlier, later) in zip(stamps, stamps.dropFirst()) { #expect(earlier != later) }
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? .max
        #expect(size < Int(ChangeSignal.maxFileSize))
    }

    @Test func withoutAFileOnlyThisProcessIsSignalled() {
        let signal = ChangeSignal(path: nil)
        let before = signal.stamp()
        signal.announce()
        #expect(signal.stamp() != before)
    }
}

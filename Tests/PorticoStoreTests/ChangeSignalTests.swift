import Foundation
import Synchronization
import Testing

@testable import PorticoStore

/// Changes announced in one process are seen by another sharing the file, at once when the
/// file is looked at on every stamp, and within the recheck interval otherwise.
@Suite struct ChangeSignalTests {
    @Test func anAnnouncementChangesEveryStampOfTheFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("portico-changes-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        // Two signals on one file stand for the server and the command line.
        let server = ChangeSignal(path: path, recheckInterval: .zero), commandLine = ChangeSignal(path: path)
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
        let signal = ChangeSignal(path: path, recheckInterval: .zero), other = ChangeSignal(path: path)
        var stamps: [ChangeSignal.Stamp] = []
        for _ in 0..<(Int(ChangeSignal.maxFileSize) + 3) {
            other.announce()
            stamps.append(signal.stamp())
        }
        for (earlier, later) in zip(stamps, stamps.dropFirst()) { #expect(earlier != later) }
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? .max
        #expect(size < Int(ChangeSignal.maxFileSize))
    }

    @Test func anotherProcessesAnnouncementIsSeenOnceTheRecheckIntervalHasPassed() {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("portico-changes-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let now = Atomic<UInt64>(1_000_000_000)
        let server = ChangeSignal(path: path, recheckInterval: .milliseconds(1), clock: { now.load(ordering: .relaxed) })
        let commandLine = ChangeSignal(path: path)
        commandLine.announce()
        let before = server.stamp()
        commandLine.announce()
        now.add(999_999, ordering: .relaxed)
        #expect(server.stamp() == before, "the file is not looked at again within the interval")
        now.add(1, ordering: .relaxed)
        let after = server.stamp()
        #expect(after != before, "once the interval has passed the announcement is seen")
        // This process's own announcements are seen at once, interval or not.
        server.announce()
        #expect(server.stamp() != after)
    }

    @Test func withoutAFileOnlyThisProcessIsSignalled() {
        let signal = ChangeSignal(path: nil)
        let before = signal.stamp()
        signal.announce()
        #expect(signal.stamp() != before)
    }
}

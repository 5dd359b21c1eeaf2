public import Foundation
import PorticoAuth
import Synchronization

/// Chart images on disk under names nobody can guess (32 random letters and digits, 190 bits), each readable until it
/// expires; expired ones are deleted as new ones are written.
public final class ImageStore: Sendable {
    public let directory: URL
    /// How long an image can be fetched after it was drawn.
    public let lifetime: Duration
    private let lastSweep = Mutex<ContinuousClock.Instant?>(nil)

    public init(directory: URL, lifetime: Duration = .seconds(24 * 3600)) throws {
        self.directory = directory
        self.lifetime = lifetime
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    /// Stores a PNG and returns its file name (`<random>.png`).
    public func save(png: [UInt8]) throws -> String {
        sweepIfDue()
        let name = Secrets.random(32) + ".png"
        try Data(png).write(to: directory.appendingPathComponent(name), options: [.atomic])
        return name
    }

    /// The PNG named `name` when it exists and has not expired; `nil` for anything else,
    /// including names that are not of the form this store makes.
    public func load(_ name: String) -> [UInt8]? {
        guard Self.isValidName(name) else { return nil }
        let url = directory.appendingPathComponent(name)
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path), let written = attributes[.modificationDate] as? Date,
            Date().timeIntervalSince(written) < seconds
        else { return nil }
        return (try? Data(contentsOf: url)).map { Array($0) }
    }

    var seconds: Double { Double(lifetime.components.seconds) }

    static func isValidName(_ name: String) -> Bool {
        guard name.hasSuffix(".png") else { return false }
        let stem = name.utf8.dropLast(4)
        return stem.count == 32 && stem.allSatisfy { b in (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) }
    }

    /// Deletes expired images, at most once a minute.
    func sweepIfDue() {
        let due = lastSweep.withLock { last -> Bool in
            if let last, ContinuousClock.now - last < .seconds(60) { return false }
            last = .now
            return true
        }
        guard due, let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return }
        let now = Date()
        for name in names where Self.isValidName(name) {
            let url = directory.appendingPathComponent(name)
            if let written = (try? FileManager.default.attributesOfItem(atPath: url.path))?[.modificationDate] as? Date,
                now.timeIntervalSince(written) >= seconds
            {
                try? FileManager.default.removeItem(at: url)
            }
        }
    }
}

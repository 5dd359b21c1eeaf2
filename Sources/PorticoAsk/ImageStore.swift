public import Foundation
import PorticoBase
import PorticoData
public import PorticoStore
import Synchronization

/// Chart images under names nobody can guess (32 random letters and digits, 190 bits), each
/// readable until it expires; expired ones are deleted as new ones are written. On one machine
/// they are files; replicas sharing a PostgreSQL database keep them in it (`portico_images`), so
/// an image drawn by one replica is served by every other.
public final class ImageStore: Sendable {
    public let directory: URL
    /// Where images are kept instead of `directory`, when replicas share it.
    public let database: (any Database)?
    /// How long an image can be fetched after it was drawn.
    public let lifetime: Duration
    private let lastSweep = Mutex<ContinuousClock.Instant?>(nil)

    public init(directory: URL, database: (any Database)? = nil, lifetime: Duration = .seconds(24 * 3600)) throws {
        self.directory = directory
        self.database = database
        self.lifetime = lifetime
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    /// Stores a PNG and returns its file name (`<random>.png`).
    public func save(png: [UInt8]) async throws -> String {
        let name = Secrets.random(32) + ".png"
        if let database {
            if sweepDue() {
                var sweep = SQLFragment("DELETE FROM portico_images WHERE created_at < ")
                sweep.append(bind: .int(Int64(Date().timeIntervalSince1970) - Int64(seconds)))
                try await database.execute(sweep)
            }
            var insert = SQLFragment("INSERT INTO portico_images (name, png, created_at) VALUES (")
            insert.append(
                joining: [.bind(.text(name)), .bind(.text(Data(png).base64EncodedString())), .bind(.int(Int64(Date().timeIntervalSince1970)))],
                separator: ", ")
            insert.append(")")
            try await database.execute(insert)
            return name
        }
        sweepIfDue()
        try Data(png).write(to: directory.appendingPathComponent(name), options: [.atomic])
        return name
    }

    /// The PNG named `name` when it exists and has not expired; `nil` for anything else,
    /// including names that are not of the form this store makes.
    public func load(_ name: String) async throws -> [UInt8]? {
        guard Self.isValidName(name) else { return nil }
        if let database {
            var select = SQLFragment("SELECT png FROM portico_images WHERE name = ")
            select.append(bind: .text(name))
            select.append(" AND created_at >= ")
            select.append(bind: .int(Int64(Date().timeIntervalSince1970) - Int64(seconds)))
            guard let text = try await database.query(select).first?.string("png"), let data = Data(base64Encoded: text) else { return nil }
            return Array(data)
        }
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

    /// Whether a minute has passed since the last sweep (and this caller sweeps now).
    func sweepDue() -> Bool {
        lastSweep.withLock { last -> Bool in
            if let last, ContinuousClock.now - last < .seconds(60) { return false }
            last = .now
            return true
        }
    }

    /// Deletes expired image files, at most once a minute.
    func sweepIfDue() {
        guard sweepDue(), let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return }
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

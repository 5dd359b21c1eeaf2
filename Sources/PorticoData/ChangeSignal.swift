import Foundation
import Synchronization

/// Tells caches that stored state they mirror (API keys, users, roles) has changed, in this
/// process or in another one sharing the database, such as `portico apikey revoke` beside a
/// running server. A cache keeps what it read with the stamp it saw before reading, and reads
/// again once the stamp differs, so a change made anywhere holds on the very next request while
/// an unchanged cache costs one `stat` per check instead of a query.
///
/// Across processes the signal is a small file beside the database: announcing appends a byte,
/// and a stamp is the file's inode and size. (On PostgreSQL the same role falls to LISTEN/NOTIFY.)
public final class ChangeSignal: Sendable {
    /// What the signal looked like at one moment; equal stamps mean nothing was announced between.
    public struct Stamp: Equatable, Sendable {
        let local: UInt64
        let inode: UInt64
        let size: Int64
    }

    private let local = Atomic<UInt64>(0)
    /// The file other processes announce through; nil for a signal within this process only.
    public let path: String?
    /// Past this size the file is replaced by a new one (a new inode), so it stays small.
    static let maxFileSize: Int64 = 64 * 1024

    public init(path: String?) {
        self.path = path
    }

    public func stamp() -> Stamp {
        let local = self.local.load(ordering: .acquiring)
        guard let path else { return Stamp(local: local, inode: 0, size: 0) }
        var info = stat()
        guard stat(path, &info) == 0 else { return Stamp(local: local, inode: 0, size: 0) }
        return Stamp(local: local, inode: UInt64(info.st_ino), size: Int64(info.st_size))
    }

    /// Marks a change; call it after the change is committed.
    public func announce() {
        local.add(1, ordering: .releasing)
        guard let path else { return }
        var info = stat()
        if stat(path, &info) == 0, Int64(info.st_size) >= Self.maxFileSize {
            // A fresh file under the same name: a new inode, so no earlier stamp can match.
            let fresh = path + ".\(getpid()).new"
            if Self.append(to: fresh, truncating: true), rename(fresh, path) == 0 { return }
            unlink(fresh)
        }
        _ = Self.append(to: path, truncating: false)
    }

    private static func append(to path: String, truncating: Bool) -> Bool {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (truncating ? O_TRUNC : O_APPEND), 0o600)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var byte = UInt8(ascii: "\n")
        return write(descriptor, &byte, 1) == 1
    }
}

import Foundation
import Synchronization

/// Tells caches that stored state they mirror (API keys, users, roles) has changed, in this
/// process or in another one sharing the database, such as `portico apikey revoke` beside a
/// running server. A cache keeps what it read with the stamp it saw before reading, and reads
/// again once the stamp differs. A change made in this process holds on the very next request; a
/// change made by another process holds on every request that starts a millisecond after it.
///
/// Across processes the signal is a small file beside the database: announcing appends a byte,
/// and a stamp is the file's inode and size. The file is looked at (a `stat`) at most once per
/// `recheckInterval`, not on every request: under load that is one system call a millisecond
/// instead of one per request. On PostgreSQL the store passes a `remote` counter that its
/// `LISTEN` connection moves when another replica announces (with `NOTIFY`, through `publish`).
public final class ChangeSignal: Sendable {
    /// What the signal looked like at one moment; equal stamps mean nothing was announced between.
    public struct Stamp: Equatable, Sendable {
        let local: UInt64
        let inode: UInt64
        let size: Int64
        var remote: UInt64 = 0
    }

    private let local = Atomic<UInt64>(0)
    /// Changes heard from other processes by other means than the file (PostgreSQL's `LISTEN`).
    private let remote: ChangeCounter?
    /// Tells the other processes of a change announced here (nil message) or sends them a message.
    private let publish: (@Sendable (String?) -> Void)?
    /// Who hears messages (`broadcast`): every replica's, this one's included.
    private let listeners = Mutex<[@Sendable (String) -> Void]>([])
    /// The file other processes announce through; nil for a signal within this process only.
    public let path: String?
    /// Past this size the file is replaced by a new one (a new inode), so it stays small.
    static let maxFileSize: Int64 = 64 * 1024

    /// How long the file's inode and size, once read, stand for it, in nanoseconds.
    let recheckInterval: UInt64
    /// Monotonic nanoseconds (injected by tests).
    private let clock: @Sendable () -> UInt64
    /// The file as last read, and when.
    private let file = Mutex<(readAt: UInt64, inode: UInt64, size: Int64)?>(nil)

    public init(
        path: String?, remote: ChangeCounter? = nil, publish: (@Sendable (String?) -> Void)? = nil, recheckInterval: Duration = .milliseconds(1),
        clock: @escaping @Sendable () -> UInt64 = ChangeSignal.monotonicNanoseconds
    ) {
        self.path = path
        self.remote = remote
        self.publish = publish
        let (seconds, attoseconds) = recheckInterval.components
        self.recheckInterval = UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
        self.clock = clock
    }

    public func stamp() -> Stamp {
        let local = self.local.load(ordering: .acquiring)
        guard let path else { return Stamp(local: local, inode: 0, size: 0, remote: remote?.value ?? 0) }
        let now = clock()
        if let seen = file.withLock({ $0 }), now &- seen.readAt < recheckInterval {
            return Stamp(local: local, inode: seen.inode, size: seen.size)
        }
        // A file not there yet (nothing announced) reads as inode 0, size 0.
        var info = stat()
        let found = stat(path, &info) == 0
        let inode = found ? UInt64(info.st_ino) : 0, size = found ? Int64(info.st_size) : 0
        file.withLock { $0 = (now, inode, size) }
        return Stamp(local: local, inode: inode, size: size)
    }

    /// `CLOCK_MONOTONIC` in nanoseconds (read through the vDSO: no system call).
    public static let monotonicNanoseconds: @Sendable () -> UInt64 = {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// Marks a change; call it after the change is committed.
    public func announce() {
        local.add(1, ordering: .releasing)
        publish?(nil)
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

extension ChangeSignal {
    /// Sends `text` to every process that shares the database, this one included (through
    /// PostgreSQL's `NOTIFY` when there is one, else within this process only); each hears it
    /// through `onMessage`. What the text means is its sender's and listeners' business: the
    /// modules above the store encode their own messages (`PeerMessage`).
    public func broadcast(encoded text: String) {
        if let publish {
            publish(text)
        } else {
            deliver(encoded: text)
        }
    }

    /// Registers a listener for broadcast messages, as they were sent.
    public func onMessage(encoded listener: @escaping @Sendable (String) -> Void) {
        listeners.withLock { $0.append(listener) }
    }

    /// A message heard (from another replica, or sent here): passed to every listener.
    public func deliver(encoded text: String) {
        for listener in listeners.withLock({ $0 }) { listener(text) }
    }
}

/// A count of changes heard from elsewhere; a `ChangeSignal`'s stamps include it.
public final class ChangeCounter: Sendable {
    private let count = Atomic<UInt64>(0)

    public init() {}

    public var value: UInt64 { count.load(ordering: .acquiring) }

    public func bump() { count.add(1, ordering: .releasing) }
}

import PorticoBase
import Synchronization

/// Open event streams per credential on this replica, against `maxStreamsPerCredential`.
final class StreamQuota: Sendable {
    private let open = Mutex<[String: Int]>([:])

    func acquire(_ credential: String, limit: Int) -> Bool {
        open.withLock { open in
            let count = open[credential, default: 0]
            guard count < limit else { return false }
            open[credential] = count + 1
            return true
        }
    }

    func release(_ credential: String) {
        open.withLock { open in
            let count = open[credential, default: 1] - 1
            open[credential] = count > 0 ? count : nil
        }
    }

    var total: Int { open.withLock { $0.values.reduce(0, +) } }
}

/// Open GET streams per session on this replica, for server-initiated messages.
final class SessionStreams: Sendable {
    private let state = LockedValue<(next: Int, streams: [String: [Int: AsyncStream<[UInt8]>.Continuation]], users: [String: Int64], apps: [String: String])>(
        (0, [:], [:], [:]))

    func register(nonce: String, userID: Int64?, app: String, continuation: AsyncStream<[UInt8]>.Continuation) -> Int {
        state.withLock { state in
            state.next += 1
            state.streams[nonce, default: [:]][state.next] = continuation
            if let userID { state.users[nonce] = userID }
            state.apps[nonce] = app
            return state.next
        }
    }

    /// Sessions with an open stream here on `app`'s endpoint.
    func sessions(in app: String) -> [String] {
        state.withLock { state in state.streams.keys.filter { state.apps[$0] == app } }
    }

    /// Sessions with an open stream here whose caller is `userID` (every session when `nil`).
    func sessions(of userID: Int64?) -> [String] {
        state.withLock { state in
            state.streams.keys.filter { userID == nil || state.users[$0] == userID }
        }
    }

    func unregister(nonce: String, token: Int) {
        state.withLock { state in
            state.streams[nonce]?[token] = nil
            if state.streams[nonce]?.isEmpty == true {
                state.streams[nonce] = nil
                state.users[nonce] = nil
                state.apps[nonce] = nil
            }
        }
    }

    /// Sends a message on one of the session's streams (MCP: never broadcast to several).
    @discardableResult
    func send(nonce: String, _ frame: [UInt8]) -> Bool {
        let continuation = state.withLock { $0.streams[nonce]?.values.first }
        guard let continuation else { return false }
        continuation.yield(frame)
        return true
    }

    func finish(nonce: String) {
        let continuations = state.withLock { $0.streams.removeValue(forKey: nonce).map { Array($0.values) } ?? [] }
        for c in continuations { c.finish() }
    }

    func finishAll() {
        let continuations = state.withLock { state in
            let all = state.streams.values.flatMap(\.values)
            state.streams = [:]
            return all
        }
        for c in continuations { c.finish() }
    }
}

import PorticoJSON
import Synchronization

/// The server's own requests to clients in the handshake era (`elicitation/create` on a call's
/// event stream), waiting for the client's answer, which comes back in another POST — perhaps
/// to another replica, which relays it (`PeerMessage.inputResponse`). Bounded: past `limit`
/// waiting requests a new one is refused rather than queued.
final class PendingInputs: Sendable {
    private let waiting = Mutex<[String: AsyncStream<JSON>.Continuation]>([:])
    static let limit = 10_000

    struct Unanswered: Error {}

    /// Registers `key`, runs `send`, and waits for the answer until `deadline`.
    func ask(key: String, deadline: ContinuousClock.Instant, send: () -> Void) async throws -> JSON {
        let (answers, continuation) = AsyncStream<JSON>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let registered = waiting.withLock { waiting -> Bool in
            guard waiting.count < Self.limit, waiting[key] == nil else { return false }
            waiting[key] = continuation
            return true
        }
        guard registered else { throw Unanswered() }
        defer {
            _ = waiting.withLock { $0.removeValue(forKey: key) }
            continuation.finish()
        }
        send()
        return try await withThrowingTaskGroup(of: JSON?.self) { group in
            group.addTask {
                for await answer in answers { return answer }
                return nil
            }
            group.addTask {
                try await Task.sleep(until: deadline)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let answer = first else { throw Unanswered() }
            return answer
        }
    }

    /// Hands a client's answer to the call waiting for it; whether one was waiting here.
    @discardableResult
    func deliver(key: String, _ answer: JSON) -> Bool {
        guard let continuation = waiting.withLock({ $0.removeValue(forKey: key) }) else { return false }
        continuation.yield(answer)
        return true
    }
}

import Hummingbird
import Logging
import Metrics
import NIOCore
import NIOHTTPTypes
import PorticoInstance
import Synchronization

/// Counts this server's open connections for every connection's guard.
final class ConnectionCount: Sendable {
    let limit: Int
    private let open = Atomic<Int>(0)
    private let refused = Atomic<Int>(0)
    private let gauge = Gauge(label: "portico_http_connections_open")
    private let refusals = Counter(label: "portico_http_connections_refused_total")
    let logger: Logger

    init(limit: Int, logger: Logger) {
        self.limit = limit
        self.logger = logger
    }

    /// Counts a new connection; `false` when it is one too many.
    func opened() -> Bool {
        let now = open.add(1, ordering: .relaxed).newValue
        gauge.record(now)
        guard now > limit else { return true }
        refusals.increment()
        // One warning per thousand refusals, so a flood does not flood the log as well.
        if refused.add(1, ordering: .relaxed).oldValue % 1000 == 0 {
            logger.warning("refusing connections: \(limit) are open", metadata: ["limit": "\(limit)"])
        }
        return false
    }

    func closed() {
        gauge.record(open.subtract(1, ordering: .relaxed).newValue)
    }

    var current: Int { open.load(ordering: .relaxed) }
}

/// Per connection: refuses it when the server is full, and closes it when a request head or
/// body does not arrive in time. Idle keep-alive connections are closed by Hummingbird's own
/// idle timeout.
///
/// One timer per connection checks the current deadline when it fires and moves itself to a later
/// one, so a busy keep-alive connection does not schedule and cancel a timer on every request.
final class ConnectionGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    let count: ConnectionCount
    let limits: ConnectionLimits
    private var counted = false
    /// When the part of a request now awaited must have arrived; nil between requests.
    private var deadline: NIODeadline?
    private var timer: Scheduled<Void>?
    private var timerFiresAt: NIODeadline?

    init(count: ConnectionCount, limits: ConnectionLimits) {
        self.count = count
        self.limits = limits
    }

    func handlerAdded(context: ChannelHandlerContext) {
        counted = true
        guard count.opened() else {
            context.close(promise: nil)
            return
        }
        expect(within: limits.headerTimeout, context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stopTimer()
        if counted {
            counted = false
            count.closed()
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: expect(within: limits.bodyTimeout, context)
        case .end: deadline = nil
        case .body: break
        }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        stopTimer()
        if counted {
            counted = false
            count.closed()
        }
        context.fireChannelInactive()
    }

    private func expect(within timeout: Duration, _ context: ChannelHandlerContext) {
        let nanoseconds = Int64(timeout.components.seconds) * 1_000_000_000 + Int64(timeout.components.attoseconds / 1_000_000_000)
        let due = NIODeadline.now() + .nanoseconds(nanoseconds)
        deadline = due
        // A timer that fires before the new deadline stays; it moves itself on when it fires.
        if let firesAt = timerFiresAt, firesAt <= due { return }
        schedule(at: due, context)
    }

    private func schedule(at due: NIODeadline, _ context: ChannelHandlerContext) {
        timer?.cancel()
        timerFiresAt = due
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(deadline: due) {
            let (guardHandler, context) = loopBound.value
            guardHandler.timerFired(context)
        }
    }

    private func timerFired(_ context: ChannelHandlerContext) {
        timer = nil
        timerFiresAt = nil
        guard let deadline else { return }  // nothing awaited now
        if deadline <= .now() {
            context.close(promise: nil)
        } else {
            schedule(at: deadline, context)
        }
    }

    private func stopTimer() {
        timer?.cancel()
        timer = nil
        timerFiresAt = nil
        deadline = nil
    }
}

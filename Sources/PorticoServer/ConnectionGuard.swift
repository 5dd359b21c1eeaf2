import Hummingbird
import Logging
import Metrics
import NIOCore
import NIOHTTPTypes
import Synchronization

/// Limits on connections, so idle, slow or too many connections cannot starve the server.
public struct ConnectionLimits: Sendable {
    /// Open connections; past it a new connection is closed at once.
    public var maxConnections = 4096
    /// From connecting (or finishing a response) to a complete request head.
    public var headerTimeout: Duration = .seconds(10)
    /// From a request's head to its last body byte.
    public var bodyTimeout: Duration = .seconds(30)
    /// How long a keep-alive connection may sit idle between requests.
    public var idleTimeout: Duration = .seconds(30)

    public init() {}
}

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
final class ConnectionGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    let count: ConnectionCount
    let limits: ConnectionLimits
    private var counted = false
    private var timer: Scheduled<Void>?

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
        arm(context, after: limits.headerTimeout)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        if counted {
            counted = false
            count.closed()
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            arm(context, after: limits.bodyTimeout)
        case .end:
            timer?.cancel()
            timer = nil
        case .body:
            break
        }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        if counted {
            counted = false
            count.closed()
        }
        context.fireChannelInactive()
    }

    private func arm(_ context: ChannelHandlerContext, after timeout: Duration) {
        timer?.cancel()
        let nanoseconds = Int64(timeout.components.seconds) * 1_000_000_000 + Int64(timeout.components.attoseconds / 1_000_000_000)
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: .nanoseconds(nanoseconds)) {
            loopBound.value.close(promise: nil)
        }
    }
}

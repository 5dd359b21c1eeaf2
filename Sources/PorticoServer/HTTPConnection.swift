import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1
import PorticoInstance
import Synchronization

/// Portico's HTTP/1.1 connections, answered with the responder directly.
///
/// Hummingbird's own connection (`HTTP1Channel`) passes each request part through a chain of
/// handlers into an async sequence, and each response part back through an async writer; on this
/// server that machinery was a large share of what a request cost before Portico did anything.
/// Here NIO's HTTP/1 decoder and encoder are followed by one handler (`HTTPConnectionHandler`)
/// that reads a request whole and hands it to the connection's task, which answers it with the
/// responder and writes a response of known length in one flush. Responses are written as bytes
/// here (`HTTPResponseBytes.swift`), framed as NIO's encoder frames them, without its conversion
/// of the head to NIO's types and a pass through a handler per part. Hummingbird's `Application`
/// still runs the listener and its services, and its router and middleware answer as before.
struct HTTPConnectionChannel: ServerChildChannel {
    struct Value: ServerChildChannelValue {
        let channel: any Channel
        let requests: RequestQueue
        let answerer: HTTPAnswerer
    }

    let responder: PorticoResponder
    let count: ConnectionCount
    let limits: ConnectionLimits
    /// The largest request body any route accepts (`--max-body-bytes`).
    let maxBodyBytes: Int
    let dates: HTTPDates

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let pipeline = channel.pipeline.syncOperations
            try pipeline.addHandler(ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)))
            let handler = HTTPConnectionHandler(eventLoop: channel.eventLoop, count: count, limits: limits, maxBodyBytes: maxBodyBytes)
            try pipeline.addHandler(handler)
            let answerer = HTTPAnswerer(
                responder: responder, dates: dates, logger: logger, channel: channel, handler: NIOLoopBound(handler, eventLoop: channel.eventLoop),
                inboundClose: handler.inboundClose)
            return Value(channel: channel, requests: handler.requests, answerer: answerer)
        }
    }

    /// Answers the connection's requests one after another, in the connection's own task (a task
    /// per request would set up its async frames anew each time), until the connection closes.
    func handle(value: Value, logger: Logger) async {
        while let next = await value.requests.next() {
            await value.answerer.answer(next.request, arrived: next.arrived)
        }
    }
}

/// A connection's requests, one at a time:
///
/// - the connection is refused when the server is full (`ConnectionCount`);
/// - a request head must arrive within `headerTimeout` of connecting, its body within
///   `bodyTimeout` of its head, and the next head within `idleTimeout` of a response;
/// - a request is read whole (its body kept up to one byte past `maxBodyBytes`, so the route that
///   reads it answers that it is too large), then handed to the connection's task
///   (`RequestQueue`); requests a client sent ahead wait their turn;
/// - a request NIO cannot parse is answered 400 and the connection closed;
/// - responses arrive as bytes, written as they come (`HTTPAnswerer`);
/// - when the server stops (`ChannelShouldQuiesceEvent`), an idle connection closes at once and a
///   busy one after its response; so does one whose request said `Connection: close`.
final class HTTPConnectionHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = IOData

    /// The answer to a request that cannot be read.
    static let badRequest = ByteBuffer(string: "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")

    let eventLoop: any EventLoop
    let count: ConnectionCount
    let limits: ConnectionLimits
    let maxBodyBytes: Int
    /// Tells a streamed response that its client has closed the connection.
    let inboundClose = InboundClose()
    /// Whole requests, for the connection's task to answer.
    let requests = RequestQueue()
    private var context: ChannelHandlerContext?
    private var counted = false
    private var head: HTTPRequestHead?
    /// When `head` arrived: a request whose head came before a shutdown began is served.
    private var headArrived: UInt64 = 0
    private var body: ByteBuffer?
    /// A request is being answered: parts that arrive meanwhile are queued, and reading waits
    /// once some are (it goes on otherwise, so a client that hangs up is seen at once).
    private var answering = false
    private var queued: [HTTPServerRequestPart] = []
    private var readWaiting = false
    private var closeAfterResponse = false
    /// When the part now awaited must have arrived; nil while a request is answered.
    private var deadline: NIODeadline?
    private var timer: Scheduled<Void>?
    private var timerFiresAt: NIODeadline?

    init(eventLoop: any EventLoop, count: ConnectionCount, limits: ConnectionLimits, maxBodyBytes: Int) {
        self.eventLoop = eventLoop
        self.count = count
        self.limits = limits
        self.maxBodyBytes = maxBodyBytes
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        counted = true
        guard count.opened() else {
            context.close(promise: nil)
            return
        }
        expect(within: limits.headerTimeout, context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stop()
        self.context = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        stop()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        if answering {
            queued.append(part)
        } else {
            take(part, context)
        }
    }

    private func take(_ part: HTTPServerRequestPart, _ context: ChannelHandlerContext) {
        switch part {
        case .head(let head):
            self.head = head
            body = nil
            headArrived = expect(within: limits.bodyTimeout, context).uptimeNanoseconds
        case .body(var chunk):
            let room = maxBodyBytes + 1 - (body?.readableBytes ?? 0)
            guard room > 0 else { return }
            if chunk.readableBytes > room { chunk = chunk.getSlice(at: chunk.readerIndex, length: room)! }
            if body == nil {
                body = chunk
            } else {
                body!.writeImmutableBuffer(chunk)
            }
        case .end:
            guard let head else { return }
            self.head = nil
            deadline = nil
            answering = true
            if !head.isKeepAlive { closeAfterResponse = true }
            let request: Request
            do {
                request = Request(
                    head: try HTTPRequest(connectionHead: head), body: RequestBody(buffer: body ?? ByteBuffer()))
            } catch {
                body = nil
                closeAfterResponse = true
                finishResponse(Self.badRequest, context)
                return
            }
            body = nil
            requests.put(.init(request: request, arrived: headArrived))
        }
    }

    /// Holds the connection's reads while a request is answered and parts of the next have come.
    func read(context: ChannelHandlerContext) {
        if answering, !queued.isEmpty {
            readWaiting = true
        } else {
            context.read()
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            if answering || head != nil {
                closeAfterResponse = true
            } else {
                context.close(promise: nil)
            }
        } else if case ChannelEvent.inputClosed = event {
            // The client sent all it will: the request being answered is answered, then the
            // connection closes; a streamed response is told (MCP: closing the stream cancels).
            inboundClose.close()
            if answering {
                closeAfterResponse = true
            } else {
                context.close(promise: nil)
            }
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard error is HTTPParserError else {
            context.close(promise: nil)
            return
        }
        // A request NIO could not read, sent ahead: the one being answered is answered first.
        guard !answering else {
            closeAfterResponse = true
            queued = []
            return
        }
        // A request NIO could not read: the client is told, and the connection closed.
        answering = true
        closeAfterResponse = true
        finishResponse(Self.badRequest, context)
    }

    // MARK: Writing, on the connection's event loop

    /// Writes part of a response (its head, some of its body), flushed; the response goes on.
    func writePart(_ bytes: ByteBuffer) -> EventLoopFuture<Void> {
        guard let context else { return eventLoop.makeFailedFuture(ChannelError.ioOnClosedChannel) }
        return context.writeAndFlush(wrapOutboundOut(.byteBuffer(bytes)))
    }

    /// Writes the rest of a response, flushed; then the connection reads on, or closes. The future
    /// of the write only when `awaited` (a whole response is not awaited: the connection reads no
    /// more until it is written).
    @discardableResult
    func finishResponse(_ bytes: ByteBuffer, awaited: Bool) -> EventLoopFuture<Void>? {
        guard let context else { return eventLoop.makeFailedFuture(ChannelError.ioOnClosedChannel) }
        return finishResponse(bytes, awaited: awaited, context)
    }

    @discardableResult
    private func finishResponse(_ bytes: ByteBuffer, awaited: Bool = false, _ context: ChannelHandlerContext) -> EventLoopFuture<Void>? {
        answering = false
        if closeAfterResponse {
            let written = context.writeAndFlush(wrapOutboundOut(.byteBuffer(bytes)))
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            written.whenComplete { _ in loopBound.value.close(promise: nil) }
            return written
        }
        let written: EventLoopFuture<Void>?
        if awaited {
            written = context.writeAndFlush(wrapOutboundOut(.byteBuffer(bytes)))
        } else {
            context.writeAndFlush(wrapOutboundOut(.byteBuffer(bytes)), promise: nil)
            written = nil
        }
        expect(within: limits.idleTimeout, context)
        // The requests a client sent ahead, in order, until one is to be answered.
        while !answering, !queued.isEmpty {
            take(queued.removeFirst(), context)
        }
        if !answering, readWaiting {
            readWaiting = false
            context.read()
        }
        return written
    }

    /// The connection cannot be answered on: a response part failed to be made.
    func abandon() {
        context?.close(promise: nil)
    }

    // MARK: Deadlines

    /// One timer per connection checks the current deadline when it fires and moves itself to a
    /// later one, so a busy keep-alive connection does not schedule and cancel a timer per request.
    /// Sets the deadline `timeout` from now; returns now.
    @discardableResult
    private func expect(within timeout: Duration, _ context: ChannelHandlerContext) -> NIODeadline {
        let nanoseconds = Int64(timeout.components.seconds) * 1_000_000_000 + Int64(timeout.components.attoseconds / 1_000_000_000)
        let now = NIODeadline.now()
        let due = now + .nanoseconds(nanoseconds)
        deadline = due
        if let firesAt = timerFiresAt, firesAt <= due { return now }
        schedule(at: due, context)
        return now
    }

    private func schedule(at due: NIODeadline, _ context: ChannelHandlerContext) {
        timer?.cancel()
        timerFiresAt = due
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(deadline: due) {
            let (handler, context) = loopBound.value
            handler.timerFired(context)
        }
    }

    private func timerFired(_ context: ChannelHandlerContext) {
        timer = nil
        timerFiresAt = nil
        guard let deadline else { return }  // a request is being answered
        if deadline <= .now() {
            context.close(promise: nil)
        } else {
            schedule(at: deadline, context)
        }
    }

    private func stop() {
        timer?.cancel()
        timer = nil
        timerFiresAt = nil
        deadline = nil
        queued = []
        inboundClose.close()
        requests.close()
        if counted {
            counted = false
            count.closed()
        }
    }
}

/// Answers a connection's requests with Portico's responder.
struct HTTPAnswerer: Sendable {
    let responder: PorticoResponder
    let dates: HTTPDates
    let logger: Logger
    let channel: any Channel
    let handler: NIOLoopBound<HTTPConnectionHandler>
    let inboundClose: InboundClose

    /// Answers one request: the responder's response, or 500 when it throws (as Hummingbird's
    /// application does; the routes turn their own errors into responses), with the `Date` header.
    func answer(_ request: Request, arrived: UInt64) async {
        // Each request's logger carries an id, as Hummingbird's application gives it (`context.id`).
        var logger = logger
        logger[metadataKey: "hb.request.id"] = .stringConvertible(RequestID())
        var context = PorticoRequestContext(source: .init(channel: channel, logger: logger))
        context.inboundClose = inboundClose
        context.arrivedAt = arrived
        var response: Response
        do {
            response = try await responder.respond(to: request, context: context)
        } catch {
            logger.debug("unhandled error", metadata: ["error.type": "\(error)"])
            response = Response(status: .internalServerError, body: .init())
        }
        let framing = ResponseFraming(status: response.status, fields: response.headers, method: request.method)
        let length = response.body.contentLength
        // Room for the head and a body of known length that is sent, up to 64 KB (a larger one grows it).
        let room = framing.bodyless ? 0 : min(length ?? 0, 65_536)
        var writer = ResponsePartWriter(handler: handler, streamed: length == nil, framing: framing, capacity: 512 + room)
        writer.bytes.writeResponseHead(response.head, date: dates.now, framing: framing)
        do {
            try await response.body.write(writer)
        } catch {
            // The client went away, or a streamed body failed part way: nothing more can be said.
            logger.trace("could not write a response", metadata: ["error": "\(error)"])
            handler.eventLoop.execute { handler.value.abandon() }
        }
    }
}

/// Writes a response to its connection as bytes: a body of known length in one flush with its
/// head and end, a streamed one part by part, each part flushed and awaited.
struct ResponsePartWriter: ResponseBodyWriter {
    let handler: NIOLoopBound<HTTPConnectionHandler>
    let streamed: Bool
    let framing: ResponseFraming
    /// What is written and not yet sent: the head, then the parts of a body of known length.
    var bytes: ByteBuffer

    /// `capacity`: room for the head and, when its length is known, the body.
    init(handler: NIOLoopBound<HTTPConnectionHandler>, streamed: Bool, framing: ResponseFraming, capacity: Int) {
        self.handler = handler
        self.streamed = streamed
        self.framing = framing
        bytes = ByteBufferAllocator().buffer(capacity: capacity)
    }

    mutating func write(_ buffer: ByteBuffer) async throws {
        bytes.writeResponseBodyPart(buffer, framing: framing)
        guard streamed else { return }
        let part = bytes
        bytes = ByteBuffer()
        let handler = self.handler
        try await onLoop { handler.value.writePart(part) }.get()
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {
        bytes.writeResponseEnd(trailers: trailingHeaders, framing: framing)
        let bytes = self.bytes
        let streamed = self.streamed
        if handler.eventLoop.inEventLoop {
            try await handler.value.finishResponse(bytes, awaited: streamed)?.get()
            return
        }
        let handler = self.handler
        let end = handler.eventLoop.flatSubmit {
            handler.value.finishResponse(bytes, awaited: streamed) ?? handler.eventLoop.makeSucceededVoidFuture()
        }
        if streamed { try await end.get() }
    }

    /// Runs `body` on the connection's event loop: at once when already there.
    private func onLoop(_ body: @escaping @Sendable () -> EventLoopFuture<Void>) -> EventLoopFuture<Void> {
        handler.eventLoop.inEventLoop ? body() : handler.eventLoop.flatSubmit(body)
    }
}

/// The `Date` header's text (RFC 9110's IMF-fixdate), made once a second.
final class HTTPDates: Sendable {
    private let cache = Mutex<(second: Int, text: String)>((-1, ""))

    var now: String {
        let second = time(nil)
        return cache.withLock { cache in
            if cache.second != second {
                cache = (second, Self.format(second))
            }
            return cache.text
        }
    }

    static func format(_ second: Int) -> String {
        var t = second
        var parts = tm()
        gmtime_r(&t, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return
            "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}

/// A connection's client closing it, or its sending side, told to the streamed response being
/// written: MCP's closing of a response stream is its cancellation. A connection answers one
/// request at a time, so one response at a time listens.
final class InboundClose: Sendable {
    private let state = Mutex<(closed: Bool, listener: (@Sendable () -> Void)?)>((false, nil))

    /// Calls `listener` once when the client closes (at once if it has), until `stopListening`.
    func onClose(_ listener: @escaping @Sendable () -> Void) {
        let closed = state.withLock { state in
            if !state.closed { state.listener = listener }
            return state.closed
        }
        if closed { listener() }
    }

    func stopListening() {
        state.withLock { $0.listener = nil }
    }

    func close() {
        let listener = state.withLock { state in
            state.closed = true
            defer { state.listener = nil }
            return state.listener
        }
        listener?()
    }
}

/// Hands a connection's whole requests from its handler (on the event loop) to its task, one at a
/// time: the handler reads no further request until the one handed over is answered.
final class RequestQueue: Sendable {
    struct Arrival: Sendable {
        let request: Request
        /// When its head arrived, in `CLOCK_MONOTONIC` nanoseconds.
        let arrived: UInt64
    }

    private enum State {
        case empty
        case waiting(UnsafeContinuation<Arrival?, Never>)
        case holding(Arrival)
        case closed
    }

    private let state = Mutex<State>(.empty)

    /// Hands over a request; dropped once the connection has closed.
    func put(_ arrival: Arrival) {
        let waiter: UnsafeContinuation<Arrival?, Never>? = state.withLock { state in
            switch state {
            case .waiting(let continuation):
                state = .empty
                return continuation
            case .empty:
                state = .holding(arrival)
                return nil
            case .holding, .closed:
                return nil
            }
        }
        waiter?.resume(returning: arrival)
    }

    /// The next request, or nil once the connection has closed.
    func next() async -> Arrival? {
        await withUnsafeContinuation { continuation in
            let ready: Arrival?? = state.withLock { state in
                switch state {
                case .holding(let arrival):
                    state = .empty
                    return .some(arrival)
                case .closed:
                    return .some(nil)
                case .empty, .waiting:
                    state = .waiting(continuation)
                    return nil
                }
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    func close() {
        let waiter: UnsafeContinuation<Arrival?, Never>? = state.withLock { state in
            defer { state = .closed }
            if case .waiting(let continuation) = state { return continuation }
            return nil
        }
        waiter?.resume(returning: nil)
    }
}

extension HTTPRequest {
    /// NIO's request head as HTTP types. A target that is a path (what clients send a server) is the
    /// path as it came; NIO's own conversion, used for the other forms, parses every target as a URL.
    init(connectionHead head: HTTPRequestHead) throws {
        guard head.uri.utf8.first == UInt8(ascii: "/") else {
            try self.init(head, secure: false, splitCookie: true)
            return
        }
        self.init(
            method: try Method(head.method), scheme: "http", authority: head.headers.first(name: "host"), path: head.uri,
            headerFields: HTTPFields(head.headers, splitCookie: true))
    }
}

import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import PorticoAuth
import PorticoMCP
import Synchronization

/// Per-request state: the request id that ties log lines to a response, and the client's address.
struct PorticoRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    var requestID: String
    /// The peer's socket address, written out as text only when asked (most calls never ask).
    let peer: SocketAddress?
    /// The address `ClientAddress` resolved behind a trusted proxy; `nil` until then.
    private var resolvedAddress: String?? = nil
    /// The client's IP address, for IP allow-lists and sign-in throttling: the peer's, or behind a
    /// trusted proxy the one it forwards (`ClientAddress`).
    var remoteAddress: String? {
        get { resolvedAddress ?? peer?.ipAddress }
        set { resolvedAddress = .some(newValue) }
    }
    /// Whether `remoteAddress` is one client's own: not a proxy's that many clients share, nor
    /// loopback (this machine, or a proxy on it). Only then are sign-in failures counted per
    /// address. `nil` until a trusted proxy's header says: then a peer that is not loopback is.
    var addressIsClients: Bool?
    /// The user signed in to the console, set by `SignedInMiddleware` on its routes.
    var signedIn: SignedInUser?
    /// Tells a streamed response that the client closed the connection; nil where no connection
    /// is watched (Hummingbird's test client).
    var inboundClose: InboundClose?
    /// When the request's head arrived (`CLOCK_MONOTONIC` nanoseconds); nil where not known.
    var arrivedAt: UInt64?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        requestID = ""
        peer = source.channel.remoteAddress
    }

    /// The address sign-in failures are counted under, when it is one client's.
    var throttledAddress: String? {
        guard let remoteAddress else { return nil }
        return addressIsClients ?? !ClientAddress.isLoopback(remoteAddress) ? remoteAddress : nil
    }
}

/// Resolves the client's address: a request from a configured proxy (`--trusted-proxy`) is the
/// client's whose address the proxy put last in `X-Forwarded-For` (the rightmost entry that is
/// not itself a trusted proxy); from anyone else the header is ignored, since any client can
/// write it. Loopback is no one client's (this machine, or a proxy on it). Applied by
/// `RequestIDMiddleware`, so a request pays for one middleware, not two.
enum ClientAddress {
    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!

    static func apply(_ request: Request, to context: inout PorticoRequestContext, trustedProxies: [String]) {
        // Nothing to resolve without a proxy and without the header: the hot path stays as it was.
        guard !trustedProxies.isEmpty || request.headers[Self.forwardedFor] != nil else { return }
        let forwarded = request.headers[values: Self.forwardedFor]
        let peer = context.remoteAddress
        (context.remoteAddress, context.addressIsClients) = Self.resolve(peer: peer, forwardedFor: forwarded, trustedProxies: trustedProxies)
        if !forwarded.isEmpty, !IPAllowlist.allows(peer, entries: trustedProxies) || trustedProxies.isEmpty,
            !Self.warned.exchange(true, ordering: .relaxed)
        {
            context.logger.notice(
                "requests carry X-Forwarded-For from \(peer ?? "a peer"), which is not a --trusted-proxy: the header is ignored, so its clients share its address for sign-in throttling and IP allow-lists; list the proxy with --trusted-proxy"
            )
        }
    }

    /// Whether the untrusted proxy has been reported (once per process).
    static let warned = Atomic<Bool>(false)

    static func resolve(peer: String?, forwardedFor: [String], trustedProxies: [String]) -> (address: String?, isClients: Bool) {
        guard let peer else { return (nil, false) }
        let hops = forwardedFor.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !trustedProxies.isEmpty, IPAllowlist.allows(peer, entries: trustedProxies) else {
            // From a peer nobody vouched for, the header is the peer's own words: ignored, or any
            // client could step out of the count of its address by sending one.
            return (peer, !isLoopback(peer))
        }
        guard let client = hops.last(where: { !IPAllowlist.allows($0, entries: trustedProxies) }) ?? hops.first,
            IPAllowlist.isAddress(client)
        else { return (peer, false) }
        return (client, !isLoopback(client))
    }

    /// 127.0.0.0/8 and ::1, as peers' addresses are written (also IPv4-mapped).
    static func isLoopback(_ address: String) -> Bool {
        address.hasPrefix("127.") || address == "::1" || address.hasPrefix("::ffff:127.")
    }
}

/// Gives every request an id (the client's `X-Request-Id` when sane, else Hummingbird's own, which
/// its log metadata already carries), logs with it and echoes it on every response, errors included.
struct RequestIDMiddleware: RouterMiddleware {
    typealias Context = PorticoRequestContext
    static let header = HTTPField.Name("X-Request-Id")!
    /// Proxies whose `X-Forwarded-For` names the client (`ClientAddress`).
    var trustedProxies: [String] = []

    /// An id a client may choose: up to 64 ASCII letters, digits and dashes.
    static func isSane(_ id: String) -> Bool {
        id.utf8.count <= 64 && id.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || $0 == 0x2D }
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        ClientAddress.apply(request, to: &context, trustedProxies: trustedProxies)
        let supplied = request.headers[Self.header].flatMap { Self.isSane($0) ? $0 : nil }
        let id = supplied ?? context.id
        context.requestID = id
        // Hummingbird's logger already carries its own id (`hb.request.id`); a client's own id
        // is added beside it.
        if let supplied { context.logger[metadataKey: "request_id"] = .string(supplied) }
        let start = ContinuousClock.now
        do {
            var response = try await next(request, context)
            response.headers[Self.header] = id
            context.logger.debug(
                "request",
                metadata: [
                    "method": "\(request.method)", "path": "\(request.uri.path)", "status": "\(response.status.code)",
                    "duration": "\(ContinuousClock.now - start)",
                ])
            return response
        } catch let error as any HTTPResponseError {
            var response = try error.response(from: request, context: context)
            response.headers[Self.header] = id
            context.logger.debug("request", metadata: ["method": "\(request.method)", "path": "\(request.uri.path)", "status": "\(response.status.code)"])
            return response
        } catch {
            context.logger.error("unhandled error", metadata: ["error": "\(error)", "path": "\(request.uri.path)"])
            var headers = HTTPFields()
            headers[Self.header] = id
            headers[.contentType] = "application/json"
            return Response(
                status: .internalServerError, headers: headers,
                body: .init(byteBuffer: ByteBuffer(string: #"{"error":{"message":"internal server error; the server log has the details"}}"#)))
        }
    }
}

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
    /// The client's IP address, for IP allow-lists and sign-in throttling: the peer's, or behind a
    /// trusted proxy the one it forwards (`ClientAddressMiddleware`).
    var remoteAddress: String?
    /// Whether `remoteAddress` is one client's own: not a proxy's that many clients share, nor
    /// loopback (this machine, or a proxy on it). Only then are sign-in failures counted per address.
    var addressIsClients: Bool

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        requestID = ""
        remoteAddress = source.channel.remoteAddress?.ipAddress
        addressIsClients = false
    }

    /// The address sign-in failures are counted under, when it is one client's.
    var throttledAddress: String? { addressIsClients ? remoteAddress : nil }
}

/// Resolves the client's address: a request from a configured proxy (`--trusted-proxy`) is the
/// client's whose address the proxy put last in `X-Forwarded-For` (the rightmost entry that is
/// not itself a trusted proxy); from anyone else the header is ignored, since any client can
/// write it. Loopback is no one client's (this machine, or a proxy on it).
struct ClientAddressMiddleware: RouterMiddleware {
    typealias Context = PorticoRequestContext
    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!
    let trustedProxies: [String]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
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
        return try await next(request, context)
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

    static func isLoopback(_ address: String) -> Bool {
        IPAllowlist.allows(address, entries: ["127.0.0.0/8", "::1/128"])
    }
}

/// Gives every request an id (the client's `X-Request-Id` when sane, else Hummingbird's own, which
/// its log metadata already carries), logs with it and echoes it on every response, errors included.
struct RequestIDMiddleware: RouterMiddleware {
    typealias Context = PorticoRequestContext
    static let header = HTTPField.Name("X-Request-Id")!

    /// An id a client may choose: up to 64 ASCII letters, digits and dashes.
    static func isSane(_ id: String) -> Bool {
        id.utf8.count <= 64 && id.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || $0 == 0x2D }
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        let supplied = request.headers.value(Self.header).flatMap { Self.isSane($0) ? $0 : nil }
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

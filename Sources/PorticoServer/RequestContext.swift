import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import PorticoMCP

/// Per-request state: the request id that ties log lines to a response.
struct PorticoRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    var requestID: String
    /// The peer's IP address (for IP allow-lists and sign-in throttling).
    let remoteAddress: String?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        requestID = ""
        remoteAddress = source.channel.remoteAddress?.ipAddress
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

import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import PorticoAuth
import PorticoInstance
import PorticoJSON
import PorticoMCP
import ServiceLifecycle

/// Serves the MCP endpoints of every app over Hummingbird.
struct MCPController: Sendable {
    let endpoint: MCPEndpoint
    let authenticator: any Authenticator
    let apps: AppDirectory
    let baseURL: String
    let maxBodyBytes: Int
    /// The protected-resource metadata URL of the main app's endpoint, made once.
    let mainResourceMetadataURL: String

    init(endpoint: MCPEndpoint, authenticator: any Authenticator, apps: AppDirectory, baseURL: String, maxBodyBytes: Int) {
        self.endpoint = endpoint
        self.authenticator = authenticator
        self.apps = apps
        self.baseURL = baseURL
        self.maxBodyBytes = maxBodyBytes
        mainResourceMetadataURL = baseURL + "/.well-known/oauth-protected-resource/api/mcp"
    }

    /// The methods of the Streamable HTTP transport.
    static let methods: [HTTPRequest.Method] = [.post, .get, .delete]

    func addRoutes(to router: Router<PorticoRequestContext>) {
        for method in Self.methods {
            router.on("api/mcp", method: method) { request, context in
                try await handle(request, context: context, app: "main", path: "/api/mcp")
            }
            router.on("api/__app/{app}/mcp", method: method) { request, context in
                let app = try context.parameters.require("app")
                return try await handle(request, context: context, app: app, path: "/api/__app/\(app)/mcp")
            }
        }
    }

    func handle(_ request: Request, context: PorticoRequestContext, app: String, path: String) async throws -> Response {
        // A request whose head came before the shutdown signal is served in full; later ones are refused.
        if endpoint.refuses(requestArrivedAt: context.arrivedAt) { return response(MCPEndpoint.shuttingDown(), request: request, context: context) }
        guard let known = await apps.entry(app) else {
            return Response.json(
                RPCResponse.error(
                    id: nil,
                    RPCError(
                        code: RPCError.invalidRequestCode, message: "Unknown app",
                        data: .string("there is no app named '\(app)'; the main app's endpoint is /api/mcp"))
                ).json, status: .notFound)
        }
        var request = request
        var exchange = MCPHTTPRequest(
            method: request.method, headers: request.headers, body: [], app: app,
            packagesQuery: request.uri.query == nil ? nil : request.uri.queryParameters["packages"].map(String.init),
            resourceMetadataURL: app == "main" ? mainResourceMetadataURL : baseURL + "/.well-known/oauth-protected-resource" + path,
            auth: .anonymous, logger: context.logger)
        exchange.offeredPackages = known.packages
        if request.method == .post {
            if let length = exchange.known.contentLength.flatMap(Int.init), length > maxBodyBytes {
                return tooLarge()
            }
            do {
                let buffer = try await request.collectBody(upTo: maxBodyBytes)
                exchange.body = Array(buffer.readableBytesView)
            } catch is NIOTooManyBytesError {
                return tooLarge()
            } catch {
                // A body the HTTP decoder could not read (bad chunk sizes, a cut connection): the
                // client's fault, and it says so.
                context.logger.debug("unreadable request body", metadata: ["error": "\(error)"])
                var response = Response.json(
                    RPCResponse.error(
                        id: nil,
                        .invalidRequest(
                            "the request body could not be read (\(error)); send it with a correct Content-Length or well-formed chunked encoding")
                    ).json, status: .badRequest)
                response.headers[.connection] = "close"
                return response
            }
        }
        // Only client credentials (Basic) are checked against an address (the client's IP allow-list).
        let basic = exchange.known.authorization.map(CredentialAuthenticator.isBasic) ?? false
        exchange.auth = await authenticator.authenticate(
            RequestCredentials(
                authorization: exchange.known.authorization, cookie: exchange.known.cookie, remoteAddress: basic ? context.remoteAddress : nil),
            app: app)
        return response(await endpoint.handle(exchange), request: request, context: context)
    }

    func response(_ answer: MCPHTTPResponse, request: Request, context: PorticoRequestContext) -> Response {
        switch answer {
        case .json(let status, let headers, let bytes):
            return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
        case .empty(let status, let headers):
            return Response(status: status, headers: headers)
        case .stream(let headers, let events):
            let isServerStream = request.method == .get
            let logger = context.logger
            let inboundClose = context.inboundClose
            return Response(
                status: .ok, headers: headers,
                body: ResponseBody { writer in
                    // Closing the connection cancels the work behind the stream (MCP 2026-07-28:
                    // closing the stream is the cancellation); the stream then ends.
                    inboundClose?.onClose { events.cancel() }
                    defer { inboundClose?.stopListening() }
                    do {
                        if isServerStream {
                            // A server-message stream ends when the server shuts down, so a
                            // graceful shutdown does not wait for clients to hang up.
                            try await withGracefulShutdownHandler {
                                for await frame in events.frames { try await writer.write(ByteBuffer(bytes: frame)) }
                            } onGracefulShutdown: {
                                events.cancel()
                            }
                        } else {
                            for await frame in events.frames { try await writer.write(ByteBuffer(bytes: frame)) }
                        }
                    } catch {
                        events.cancel()
                        if Task.isShuttingDownGracefully && !Task.isCancelled {
                            try await writer.finish(nil)
                            return
                        }
                        logger.debug("event stream ended by the client", metadata: ["error": "\(error)"])
                        return
                    }
                    try await writer.finish(nil)
                })
        }
    }

    func tooLarge() -> Response {
        Response.json(
            RPCResponse.error(
                id: nil, .invalidRequest("the request body is larger than \(maxBodyBytes) bytes; send smaller messages or raise --max-body-bytes")
            ).json, status: .contentTooLarge)
    }
}

import Foundation
import HTTPTypes
import Logging
public import PorticoAuth
import PorticoBase
public import PorticoData
import PorticoJSON
public import PorticoStore
import Synchronization

/// Name, version and guidance the server reports about itself.
public struct ServerIdentity: Sendable {
    public var name: String
    public var title: String
    public var version: String
    public var description: String?
    public var websiteURL: String?
    public var icons: [Icon]

    public init(name: String, title: String, version: String, description: String? = nil, websiteURL: String? = nil, icons: [Icon] = []) {
        self.name = name
        self.title = title
        self.version = version
        self.description = description
        self.websiteURL = websiteURL
        self.icons = icons
    }

    /// Name, title and version: what every modern-era result carries in its `_meta`.
    var brief: JSON { ["name": .string(name), "title": .string(title), "version": .string(version)] }

    /// The whole identity, for `initialize` and `server/discover`.
    var json: JSON {
        var object: JSONObject = ["name": .string(name), "title": .string(title), "version": .string(version)]
        if let description { object["description"] = .string(description) }
        if let websiteURL { object["websiteUrl"] = .string(websiteURL) }
        if !icons.isEmpty { object["icons"] = .array(icons.map(\.json)) }
        return .object(object)
    }
}

/// The MCP streamable HTTP endpoint: both protocol eras, sessions, batches, event streams and
/// cancellation, independent of the HTTP server that feeds it.
public final class MCPEndpoint: Sendable {
    public struct Configuration: Sendable {
        public var identity: ServerIdentity
        /// Answer `initialize`, `server/discover` and `tools/list` without credentials (Casdoor's discovery mode).
        public var publicDiscovery: Bool
        /// Origins allowed to call the endpoint from a browser (`scheme://host[:port]`).
        public var allowedOrigins: Set<String>
        /// How long clients may cache a `tools/list` page in the modern era.
        public var toolsListTTLMilliseconds: Int64
        public var keepAliveInterval: Duration
        /// Guidance for the model about one app, sent at `initialize` and `server/discover`.
        public var instructions: @Sendable (_ app: String) async -> String
        /// Refuse every tool that changes something (Casdoor's demo mode).
        public var demoMode = false
        /// Whether destructive tools of an app ask before they act (an app's administrator may turn
        /// this off for trusted automation).
        public var confirmsDestroy: @Sendable (_ app: String) async -> Bool = { _ in true }
        /// The longest the tool calls of one request (or one batch) may run before they are cancelled.
        public var requestTimeout: Duration = .seconds(30)
        /// JSON-RPC messages one batch may carry.
        public var maxBatchEntries = 100
        /// Bytes of all the responses of one batch; entries past it are not run.
        public var maxBatchResponseBytes = 4 * 1024 * 1024
        /// Event streams (GET streams and streamed responses) one credential may hold open here.
        public var maxStreamsPerCredential = 8
        /// Request bodies larger than this are parsed off the event loops.
        public var offloadBodyBytes = 64 * 1024
        /// What `resources/list` and `resources/read` serve, if anything.
        public var resources: ResourceProvider?
        /// MCP Apps views, offered to clients that declare the extension.
        public var views: [UIView] = []
        /// Where tasks are kept; without it the tasks extension is not offered.
        public var tasks: (any TaskStore)?
        /// How long a call that may run long runs before it answers with a task.
        public var taskAfter: Duration = .seconds(1)
        /// The longest a task may run before it is stopped.
        public var taskRunLimit: Duration = .seconds(600)
        /// How often the replica running a task says so; a task not heard of for three is lost.
        public var taskHeartbeat: Duration = .seconds(15)
        /// How long a task and its result are kept after it was made.
        public var taskTTL: Duration = .seconds(3600)
        /// Tasks one credential may have running on this replica; past it, its calls are answered
        /// when they end, as for a client without the extension.
        public var maxTasksPerCredential = 16
        /// The largest result a task keeps; a larger one is replaced by an error saying so.
        public var maxTaskResultBytes = 4 * 1024 * 1024
        /// Told of every `tools/call` once it ends (the audit trail); must return at once.
        public var audit: (@Sendable (ToolCall) -> Void)?
        /// Counts each request of an authenticated caller (`toolCall` for `tools/call`) and refuses
        /// the ones over a limit; decided in memory, on every request.
        public var admission: (@Sendable (_ principal: Principal, _ app: String, _ toolCall: Bool) -> RateRefusal?)?

        public init(
            identity: ServerIdentity, publicDiscovery: Bool = false, allowedOrigins: Set<String>, toolsListTTLMilliseconds: Int64 = 60_000,
            keepAliveInterval: Duration = .seconds(15), instructions: @escaping @Sendable (_ app: String) async -> String
        ) {
            self.identity = identity
            self.instructions = instructions
            self.publicDiscovery = publicDiscovery
            self.allowedOrigins = allowedOrigins
            self.toolsListTTLMilliseconds = toolsListTTLMilliseconds
            self.keepAliveInterval = keepAliveInterval
        }
    }

    public let configuration: Configuration
    public let registry: ToolRegistry
    let signer: SessionSigner
    let ledger: any SessionLedger
    let policy: AccessPolicy
    let inflight = InflightCalls()
    /// Requests this replica sent to clients, waiting for their answers.
    let pendingInputs = PendingInputs()
    let streams = SessionStreams()
    let streamQuota = StreamQuota()
    let metrics = MCPMetrics()
    let taskMetrics = TaskMetrics()
    /// When a graceful shutdown began, in `CLOCK_MONOTONIC` nanoseconds; 0 before.
    let drainingSince = Atomic<UInt64>(0)
    let sessionLogLevels = BoundedCache<String, LogLevel>(limit: 10_000)
    /// The packages each session loaded into its first list (`tools_load`).
    let sessionPackages = BoundedCache<String, Set<String>>(limit: 10_000)

    /// The members every modern-era result ends with (`resultType` and the server's identity).
    let modernResultMembers: JSONObject
    /// The definitions of the tools a view shows, with `_meta.ui.resourceUri`, by tool name.
    let viewDefinitions: [String: JSON]
    /// What `initialize` answers that does not depend on the request, made once: the server's
    /// whole identity, and its capabilities for clients without and with MCP Apps views.
    let serverInfo: JSON
    let handshakeCapabilities: (plain: JSON, views: JSON)

    /// Where messages for the other replicas go (`relayToPeers`).
    let peerRelay = Mutex<(@Sendable (PeerMessage) -> Void)?>(nil)

    /// The time session ids expire by.
    public let clock: WallClock

    public init(
        configuration: Configuration, registry: ToolRegistry, signer: SessionSigner, ledger: any SessionLedger, policy: AccessPolicy = AccessPolicy(),
        clock: WallClock = .system
    ) {
        self.clock = clock
        modernResultMembers = ["resultType": "complete", "_meta": [MetaKey.serverInfo: configuration.identity.brief]]
        self.configuration = configuration
        self.registry = registry
        var viewDefinitions: [String: JSON] = [:]
        for view in configuration.views {
            for tool in registry.packages.flatMap(\.tools) where view.tools.contains(tool.name) {
                guard var definition = tool.definition.objectValue else { continue }
                definition["_meta"] = ["ui": ["resourceUri": .string(view.uri)]]
                viewDefinitions[tool.name] = .object(definition)
            }
        }
        self.viewDefinitions = viewDefinitions
        serverInfo = configuration.identity.json
        handshakeCapabilities = (Self.handshakeCapabilities(configuration, views: false), Self.handshakeCapabilities(configuration, views: true))
        self.signer = signer
        self.ledger = ledger
        self.policy = policy
    }

    /// Serves one HTTP request to the MCP endpoint.
    public func handle(_ request: MCPHTTPRequest) async -> MCPHTTPResponse {
        if let origin = request.known.origin, !isAllowed(origin: origin) {
            return Self.errorResponse(
                .forbidden, id: nil,
                RPCError(
                    code: RPCError.invalidRequestCode, message: "Forbidden origin",
                    data: .string(
                        "Origin '\(origin)' is not one of this server's public origins; set --public-url (or --allowed-origin) to the address browsers use")))
        }
        switch request.method {
        case .post: return await handlePost(request)
        case .get: return await handleGet(request)
        case .delete: return await handleDelete(request)
        default:
            var headers = HTTPFields()
            headers[.allow] = "GET, POST, DELETE"
            return .empty(status: .methodNotAllowed, headers: headers)
        }
    }

    /// Ends every open server-message stream, so a graceful shutdown does not wait on them.
    public func closeStreams() {
        streams.finishAll()
    }

    /// Starts a graceful shutdown: new requests get 503, server-message streams end, and tool
    /// calls still running after `grace` are cancelled, so the process stops within seconds.
    public func beginShutdown(grace: Duration) {
        drainingSince.store(Uptime.nanoseconds, ordering: .relaxed)
        streams.finishAll()
        let inflight = self.inflight
        Task {
            try? await Task.sleep(for: grace)
            inflight.cancelAll()
        }
    }

    /// Whether a request should be refused with `shuttingDown()`: a shutdown has begun, and the
    /// request's head arrived after it began (`CLOCK_MONOTONIC` nanoseconds; nil: not known, so
    /// refused). A request whose head came first is served in full.
    public func refuses(requestArrivedAt arrival: UInt64?) -> Bool {
        let since = drainingSince.load(ordering: .relaxed)
        return since != 0 && (arrival ?? .max) >= since
    }

    /// The answer to a request that arrives once a shutdown has begun.
    public static func shuttingDown() -> MCPHTTPResponse {
        var headers = HTTPFields()
        headers[.retryAfter] = "1"
        return errorResponse(
            .serviceUnavailable, id: nil,
            RPCError(
                code: RPCError.internalErrorCode, message: "Shutting down",
                data: .string("this Portico is shutting down; send the request again (another replica or the restarted server answers it)")), headers: headers)
    }

    /// Cancels tool calls past the request deadline, until the task is cancelled. Run it for
    /// as long as the endpoint serves.
    public func enforceDeadlines(every interval: Duration = .milliseconds(100)) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            inflight.expire(now: .now)
        }
    }

    /// Tool calls in progress on this replica.
    public var callsInProgress: Int { inflight.count }

    /// Tasks running on this replica.
    public var tasksRunning: Int { taskMetrics.running.load(ordering: .relaxed) }

    /// Event streams open on this replica.
    public var openStreams: Int { streamQuota.total }

    /// Sessions that made a request on this replica in the last five minutes.
    public var activeSessions: Int { metrics.activeSessionCount(within: MCPMetrics.activeWindow) }

    /// Where this endpoint sends what the other replicas must know of a session: a cancellation it
    /// could not act on (the call runs elsewhere) and a session's log level. Every replica passes
    /// what it hears to `receivedFromPeer` (its own messages included). Set once at start-up.
    public func relayToPeers(_ send: @escaping @Sendable (PeerMessage) -> Void) {
        peerRelay.withLock { $0 = send }
    }

    /// A message from some replica: a cancellation stops the call if it runs here; a log level
    /// applies to the session's later calls here; a change of resources or of a user's rights is
    /// told to the sessions with a stream open here. Others are not this endpoint's.
    public func receivedFromPeer(_ message: PeerMessage) {
        switch message {
        case .cancel(let key):
            inflight.cancel(key)
        case .resourcesChanged(let app):
            notifyResourcesListChanged(app: app)
        case .toolsListChanged(let userID):
            notifyToolsListChanged(userID: userID)
        case .logLevel(let session, let name):
            guard let level = LogLevel(rawValue: name) else { return }
            remember(level, for: session)
        case .packagesLoaded(let session, let packages):
            sessionPackages.update(session) { loaded in loaded = (loaded ?? []).union(packages) }
            let frame = EventStream.frame(RPCNotification(method: "notifications/tools/list_changed", params: [:]).json)
            streams.send(nonce: session, frame)
        case .signingKeysRotated, .workflowsChanged:
            break
        case .inputResponse(let key, let body):
            guard let answer = try? JSONParser.parse(body, maxDepth: 32) else { return }
            pendingInputs.deliver(key: key, answer)
        }
    }

    /// A session's log level, kept for its later calls (bounded: past the bound the table starts again).
    func remember(_ level: LogLevel, for nonce: String) {
        sessionLogLevels.store(level, for: nonce)
    }

    /// Tells the sessions of `app` with a stream open here that its resource list changed.
    public func notifyResourcesListChanged(app: String) {
        let frame = EventStream.frame(RPCNotification(method: "notifications/resources/list_changed", params: [:]).json)
        for nonce in streams.sessions(in: app) { streams.send(nonce: nonce, frame) }
    }

    /// Tells a user's sessions that their tool list changed (their role or a key's scopes did),
    /// on the server-message streams open on this replica; `nil` tells every session.
    public func notifyToolsListChanged(userID: Int64?) {
        let frame = EventStream.frame(RPCNotification(method: "notifications/tools/list_changed", params: [:]).json)
        for nonce in streams.sessions(of: userID) { streams.send(nonce: nonce, frame) }
    }

    /// OAuth credentials without the `mcp` scope may not use the endpoint at all.
    func mcpScopeRefusal(_ principal: Principal, _ request: MCPHTTPRequest, id: RequestID?) -> MCPHTTPResponse? {
        guard principal.needsMCPScope, !principal.isGranted(.mcp) else { return nil }
        let error = RPCError(
            code: RPCError.unauthorizedCode, message: "insufficient_scope",
            data: [
                "tool": .null, "granted_scopes": JSON(principal.grantedScopes), "required_scope": "mcp",
            ])
        var headers = HTTPFields()
        headers[.wwwAuthenticate] = insufficientScopeChallenge(error, request)
        return Self.errorResponse(.forbidden, id: id, error, headers: headers)
    }

    func isAllowed(origin: String) -> Bool {
        configuration.allowedOrigins.contains(origin.lowercased())
    }

    var now: Int64 { clock.seconds }

    // MARK: GET and DELETE

    func handleGet(_ request: MCPHTTPRequest) async -> MCPHTTPResponse {
        if let version = request.known.protocolVersion, ProtocolVersion.isModern(version) {
            return Self.methodNotAllowed(version: version)
        }
        guard case .authenticated(let principal) = request.auth else {
            return unauthorized(request, id: nil)
        }
        if let refusal = mcpScopeRefusal(principal, request, id: nil) { return refusal }
        if let accept = request.known.accept, !Self.accepts(accept, "text/event-stream") {
            return Self.errorResponse(.notAcceptable, id: nil, .invalidRequest("GET opens a server-sent event stream: send 'Accept: text/event-stream'"))
        }
        let session: MCPSession
        switch resolveSession(request, principal: principal) {
        case .none:
            return Self.errorResponse(
                .badRequest, id: nil, .invalidRequest("GET needs the Mcp-Session-Id header returned by initialize; the 2026-07-28 protocol has no GET stream"))
        case .invalid:
            return Self.sessionNotFound()
        case .valid(let s):
            session = s
        }
        let credential = principal.bindingKey
        guard streamQuota.acquire(credential, limit: configuration.maxStreamsPerCredential) else {
            return tooManyStreams()
        }
        let (frames, continuation) = AsyncStream<[UInt8]>.makeStream(bufferingPolicy: .bufferingNewest(256))
        let token = streams.register(nonce: session.nonce, userID: principal.userID, app: session.app, continuation: continuation)
        continuation.yield(Array(": stream open\n\n".utf8))
        let interval = configuration.keepAliveInterval
        let keepAlive = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                if Task.isCancelled { break }
                continuation.yield(EventStream.keepAlive)
            }
        }
        let streams = self.streams
        let quota = streamQuota
        continuation.onTermination = { _ in
            keepAlive.cancel()
            streams.unregister(nonce: session.nonce, token: token)
            quota.release(credential)
        }
        return .stream(headers: Self.sseHeaders(), events: EventStream(frames: frames, cancel: { continuation.finish() }))
    }

    func handleDelete(_ request: MCPHTTPRequest) async -> MCPHTTPResponse {
        if let version = request.known.protocolVersion, ProtocolVersion.isModern(version) {
            return Self.methodNotAllowed(version: version)
        }
        guard case .authenticated(let principal) = request.auth else {
            return unauthorized(request, id: nil)
        }
        switch resolveSession(request, principal: principal) {
        case .none:
            return Self.errorResponse(.badRequest, id: nil, .invalidRequest("DELETE ends a session: send the Mcp-Session-Id header returned by initialize"))
        case .invalid:
            return Self.sessionNotFound()
        case .valid(let session):
            do {
                try await ledger.end(session, expiresAt: session.issuedAt + signer.lifetime)
            } catch {
                request.logger.error("could not record the end of an MCP session", metadata: ["error": "\(error)"])
                return Self.errorResponse(.internalServerError, id: nil, .internalError("the session could not be ended; try again"))
            }
            if let id = request.known.sessionID { signer.forget(id) }
            streams.finish(nonce: session.nonce)
            sessionLogLevels.remove(session.nonce)
            sessionPackages.remove(session.nonce)
            metrics.endedSession(session.nonce)
            return .empty(status: .ok, headers: HTTPFields())
        }
    }

    enum SessionLookup {
        case none
        case invalid
        case valid(MCPSession)
    }

    /// Reads and checks the `Mcp-Session-Id` header: signed by us, not expired, not ended,
    /// for this app, and opened by the same credential.
    func resolveSession(_ request: MCPHTTPRequest, principal: Principal?) -> SessionLookup {
        guard let id = request.known.sessionID else { return .none }
        guard request.known.sessionIDCount == 1,
            let session = signer.verify(id, now: self.now),
            !ledger.isEnded(session.nonce),
            session.app == request.app,
            session.binding == signer.binding(of: principal?.bindingKey ?? "anonymous")
        else { return .invalid }
        return .valid(session)
    }

    // MARK: Response helpers

    static func sseHeaders() -> HTTPFields {
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream"
        headers[.cacheControl] = "no-cache, no-transform"
        headers[.xAccelBuffering] = "no"
        return headers
    }

    static func jsonHeaders() -> HTTPFields { jsonHeaderFields }

    /// Made (and its value checked) once: a response's copy only shares it.
    private static let jsonHeaderFields: HTTPFields = [.contentType: "application/json"]

    /// How long a client should wait before retrying a request refused with 503.
    static let retryAfterSeconds = "5"

    /// The refusal of a request over a rate limit, if it is one: `nil` when admitted (or anonymous).
    func refusal(_ principal: Principal?, app: String, method: String) -> RateRefusal? {
        guard let admission = configuration.admission, let principal else { return nil }
        return admission(principal, app, method == "tools/call")
    }

    /// A whole request refused by a rate limit: 429 with `Retry-After`, nothing run.
    static func rateLimitedResponse(_ refusal: RateRefusal, id: RequestID?) -> MCPHTTPResponse {
        var headers = HTTPFields()
        headers[.retryAfter] = String(refusal.retryAfter)
        return errorResponse(.tooManyRequests, id: id, .rateLimited(refusal.message), headers: headers)
    }

    static func errorResponse(_ status: HTTPResponse.Status, id: RequestID?, _ error: RPCError, headers extra: HTTPFields = HTTPFields()) -> MCPHTTPResponse {
        var headers = jsonHeaders()
        headers.append(contentsOf: extra)
        return .json(status: status, headers: headers, body: RPCResponse.error(id: id, error).json.serialized)
    }

    static func sessionNotFound() -> MCPHTTPResponse {
        errorResponse(
            .notFound, id: nil,
            RPCError(
                code: RPCError.invalidRequestCode, message: "Session not found",
                data: .string("The Mcp-Session-Id is unknown, expired or ended: send initialize again without it")))
    }

    static func methodNotAllowed(version: String) -> MCPHTTPResponse {
        var headers = HTTPFields()
        headers[.allow] = "POST"
        return errorResponse(
            .methodNotAllowed, id: nil, .invalidRequest("protocol \(version) has no sessions and no GET stream: send each request as a POST"), headers: headers)
    }

    func tooManyStreams() -> MCPHTTPResponse {
        var headers = HTTPFields()
        headers[.retryAfter] = "5"
        return Self.errorResponse(
            .tooManyRequests, id: nil,
            RPCError(
                code: RPCError.invalidRequestCode, message: "Too many open streams",
                data: .string(
                    "this credential already holds \(configuration.maxStreamsPerCredential) open event streams here; close one (end a GET stream or wait for a streamed response) and try again"
                )), headers: headers)
    }

    func unauthorized(_ request: MCPHTTPRequest, id: RequestID?) -> MCPHTTPResponse {
        if case .unavailable(let reason) = request.auth {
            var headers = HTTPFields()
            headers[.retryAfter] = Self.retryAfterSeconds
            return Self.errorResponse(.serviceUnavailable, id: id, .unavailable(reason), headers: headers)
        }
        var challenge = "Bearer resource_metadata=\"\(request.resourceMetadataURL)\", scope=\"mcp\""
        var detail = "Unauthorized operation: send 'Authorization: Bearer <API key or access token>'"
        if case .rejected(let reason) = request.auth {
            // A quote in the reason, even one with an accent on it, may not end the quoted description.
            let described = String(String.UnicodeScalarView(reason.unicodeScalars.map { $0 == "\"" ? "'" : $0 }))
            challenge += ", error=\"invalid_token\", error_description=\"\(described)\""
            detail = reason
        }
        var headers = HTTPFields()
        headers[.wwwAuthenticate] = challenge
        return Self.errorResponse(.unauthorized, id: id, .unauthorized(detail), headers: headers)
    }

    /// The HTTP status for a single error response. Modern-era statuses follow the 2026-07-28
    /// transport; the handshake era answers protocol errors about the message itself with 400.
    static func status(for error: RPCError, modern: Bool) -> HTTPResponse.Status {
        switch error.code {
        case RPCError.unauthorizedCode:
            return error.message == "insufficient_scope" ? .forbidden : .unauthorized
        case RPCError.parseErrorCode, RPCError.invalidRequestCode:
            return .badRequest
        case RPCError.invalidParamsCode, RPCError.headerMismatchCode, RPCError.missingClientCapabilityCode, RPCError.unsupportedProtocolVersionCode:
            return modern ? .badRequest : .ok
        case RPCError.methodNotFoundCode:
            return modern ? .notFound : .ok
        case RPCError.unavailableCode:
            return .serviceUnavailable
        case RPCError.rateLimitedCode:
            return .tooManyRequests
        default:
            return .ok
        }
    }
}

import Dispatch
import Foundation
import HTTPTypes
import Logging
import PorticoAuth
import PorticoBase
import PorticoData
import PorticoJSON
import Synchronization

extension MCPEndpoint {
    /// What the dispatcher needs to know about the request beyond its message.
    struct Exchange: Sendable {
        var request: MCPHTTPRequest
        var principal: Principal?
        var modern: Bool
        var protocolVersion: String
        var clientCapabilities: JSONObject
        var session: MCPSession?
        var selection: PackageSelection
        var logLevel: LogLevel?
        /// When the request's tool calls are cancelled.
        var deadline: ContinuousClock.Instant
    }

    func handlePost(_ request: MCPHTTPRequest) async -> MCPHTTPResponse {
        if let accept = request.known.accept, !Self.accepts(accept, "application/json"), !Self.accepts(accept, "text/event-stream") {
            return Self.errorResponse(.notAcceptable, id: nil, .invalidRequest("the Accept header must allow application/json and text/event-stream"))
        }
        if let contentType = request.known.contentType, !Self.isJSON(contentType) {
            return Self.errorResponse(
                .unsupportedMediaType, id: nil, .invalidRequest("send the JSON-RPC message with 'Content-Type: application/json', not '\(contentType)'"))
        }
        let body: JSON
        do {
            body = try await parse(request.body)
        } catch {
            return Self.errorResponse(.badRequest, id: nil, .parseError(error.description))
        }
        let headerVersion = request.known.protocolVersion
        let metaVersion = body["params"]?["_meta"]?[MetaKey.protocolVersion]
        if metaVersion != nil || headerVersion.map(ProtocolVersion.isModern) == true {
            return await handleModernPost(request, body: body)
        }
        if request.known.protocolVersionCount > 1 {
            return Self.errorResponse(.badRequest, id: nil, .invalidRequest("the MCP-Protocol-Version header appears more than once"))
        }
        if let headerVersion, !ProtocolVersion.isSupported(headerVersion) {
            return Self.errorResponse(.badRequest, id: nil, .unsupportedProtocolVersion(requested: headerVersion, supported: ProtocolVersion.all))
        }
        return await handleHandshakePost(request, body: body, headerVersion: headerVersion)
    }

    /// Parses the body; a large one on a thread of its own, so the event loop keeps serving.
    func parse(_ body: [UInt8]) async throws(JSONParseError) -> JSON {
        guard body.count > configuration.offloadBodyBytes else { return try JSONParser.parse(body) }
        let result: Result<JSON, JSONParseError> = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: Result { () throws(JSONParseError) -> JSON in try JSONParser.parse(body) })
            }
        }
        return try result.get()
    }

    func packageSelection(_ request: MCPHTTPRequest) throws(RPCError) -> PackageSelection {
        let header = request.known.packages == nil ? [] : request.headers[values: .mcpPackages]
        let text = header.isEmpty ? request.packagesQuery : header.joined(separator: ",")
        if text == nil, request.offeredPackages == nil { return registry.everyPackageSelection }
        let selection: PackageSelection
        do {
            selection = try registry.selection(from: text)
        } catch {
            throw RPCError.invalidParams("x-mcp-packages: \(error.message)")
        }
        // The app's administrator chose what its endpoint offers; a request only narrows that.
        let offered = request.offeredPackages ?? registry.packageNames
        guard let text else {
            let defaults = selection.names.filter(offered.contains)
            let listed = defaults.isEmpty ? registry.packageNames.filter(offered.contains) : defaults
            guard registry.firstList != nil else { return PackageSelection(names: listed) }
            return PackageSelection(firstList: listed, reachable: registry.packageNames.filter(offered.contains))
        }
        guard request.offeredPackages != nil else { return selection }
        let kept = selection.names.filter(offered.contains)
        if !text.contains("*"), let refused = selection.names.first(where: { !offered.contains($0) }) {
            throw RPCError.invalidParams(
                "x-mcp-packages: app '\(request.app)' does not offer package '\(refused)'; it offers: \(offered.joined(separator: ", "))")
        }
        return PackageSelection(names: kept)
    }

    // MARK: Handshake era (initialize, sessions, batches)

    /// The messages of a handshake-era body: one object, or a batch array of at most
    /// `maxBatchEntries`; else the response that refuses the whole body.
    func handshakeMessages(_ body: JSON) -> (items: [JSON], isBatch: Bool, refusal: MCPHTTPResponse?) {
        switch body {
        case .array(let array):
            guard !array.isEmpty else {
                return ([], true, Self.errorResponse(.badRequest, id: nil, .invalidRequest("an empty batch: send at least one JSON-RPC message in the array")))
            }
            guard array.count <= configuration.maxBatchEntries else {
                let error = RPCError.invalidRequest(
                    "this batch has \(array.count) messages; at most \(configuration.maxBatchEntries) are accepted per batch. None was run: send them in smaller batches"
                )
                return ([], true, Self.errorResponse(.contentTooLarge, id: nil, error))
            }
            return (array, true, nil)
        case .object:
            return ([body], false, nil)
        default:
            let error = RPCError.invalidRequest("the body must be a JSON-RPC message object or a batch array, got \(body.typeName)")
            return ([], false, Self.errorResponse(.badRequest, id: nil, error))
        }
    }

    /// The caller of a handshake-era body: everything needs credentials unless public discovery
    /// covers every request in it (`nil` then); or the response that refuses it.
    func handshakeCaller(_ request: MCPHTTPRequest, _ requests: [RequestMessage], isBatch: Bool) -> (Principal?, refusal: MCPHTTPResponse?) {
        switch request.auth {
        case .authenticated(let p):
            return (p, mcpScopeRefusal(p, request, id: isBatch ? nil : requests.first?.id))
        case .anonymous, .rejected, .unavailable:
            let discoveryOnly =
                configuration.publicDiscovery
                && requests.allSatisfy { ["initialize", "tools/list", "ping"].contains($0.method) }
                && { if case .anonymous = request.auth { return true } else { return false } }()
            return (nil, discoveryOnly ? nil : unauthorized(request, id: isBatch ? nil : requests.first?.id))
        }
    }

    func handleHandshakePost(_ request: MCPHTTPRequest, body: JSON, headerVersion: String?) async -> MCPHTTPResponse {
        let (items, isBatch, malformed) = handshakeMessages(body)
        if let malformed { return malformed }
        let decoded = items.map(IncomingMessage.decode)
        let requests: [RequestMessage] = decoded.compactMap { if case .success(.request(let r)) = $0 { return r } else { return nil } }
        let (principal, refused) = handshakeCaller(request, requests, isBatch: isBatch)
        if let refused { return refused }

        var session: MCPSession?
        switch resolveSession(request, principal: principal) {
        case .none: break
        case .invalid: return Self.sessionNotFound()
        case .valid(let s):
            session = s
            metrics.sawSession(s.nonce)
        }
        if let session, let headerVersion, headerVersion != session.protocolVersion, ProtocolVersion.isHandshake(headerVersion) {
            request.logger.debug(
                "MCP-Protocol-Version differs from the session's negotiated version",
                metadata: ["header": "\(headerVersion)", "session": "\(session.protocolVersion)"])
        }

        let selection: PackageSelection
        do {
            selection = try packageSelection(request)
        } catch {
            return Self.errorResponse(.badRequest, id: isBatch ? nil : requests.first?.id, error)
        }
        let exchange = Exchange(
            request: request, principal: principal, modern: false,
            protocolVersion: session?.protocolVersion ?? headerVersion ?? ProtocolVersion.assumedWithoutHeader,
            clientCapabilities: [:], session: session, selection: selection,
            logLevel: session.flatMap { sessionLogLevels[$0.nonce] },
            deadline: .now + configuration.requestTimeout)

        // A single request over a rate limit is refused whole; a batch's entries are counted one by one below.
        if !isBatch, let only = requests.first, let refusal = refusal(principal, app: request.app, method: only.method) {
            return Self.rateLimitedResponse(refusal, id: only.id)
        }

        // One request asking for progress gets an event stream carrying the progress; so does a call
        // of a tool that may ask back, when the session's client can be asked.
        if !isBatch, let only = requests.first, case .success(.request) = decoded[0] {
            let asks =
                only.method == "tools/call" && session?.clientCapabilities.contains(.elicitation) == true
                && (only.params?["name"]?.stringValue).flatMap { registry.tool(named: $0, in: selection) }?.asksBack == true
            if asks || only.meta?[MetaKey.progressToken] != nil { return streamed(exchange, only) }
        }

        var responses: [RPCResponse] = []
        var issuedSession: String?
        // A batch's responses are written as they come, against one byte budget; once it is
        // spent, the remaining requests are answered with an error and not run.
        var batchBody: [UInt8] = [UInt8(ascii: "[")]
        var spent = false
        func add(_ response: RPCResponse) {
            if isBatch {
                if batchBody.count > 1 { batchBody.append(UInt8(ascii: ",")) }
                batchBody.append(contentsOf: response.serialized)
                spent = spent || batchBody.count > configuration.maxBatchResponseBytes
            }
            responses.append(response)
        }
        for item in decoded {
            switch item {
            case .failure(let failure):
                add(.error(id: failure.id, failure.error))
            case .success(.response(let id, let answer)):
                deliver(answer, to: id, session: session)
            case .success(.notification(let method, let params)):
                handleNotification(method: method, params: params, exchange: exchange)
            case .success(.request(let message)) where spent:
                add(.error(id: message.id, batchBudgetSpent()))
            case .success(.request(let message)):
                if isBatch, let refused = refusal(principal, app: request.app, method: message.method) {
                    // In a batch, a call over a limit is a tool error the model reads; other requests a JSON-RPC error.
                    add(
                        message.method == "tools/call"
                            ? .result(id: message.id, ToolResult.error(refused.message).json) : .error(id: message.id, .rateLimited(refused.message)))
                    continue
                }
                let (response, newSession) = await dispatchHandshake(message, exchange: exchange, sink: logSink(exchange))
                if let newSession { issuedSession = newSession }
                add(response)
            }
        }

        if isBatch, !responses.isEmpty { batchBody.append(UInt8(ascii: "]")) }
        return handshakeReply(request, responses, batchBody: isBatch ? batchBody : nil, issuedSession: issuedSession, id: requests.first?.id)
    }

    /// The answer to a request this server sent on a call's stream (an elicitation), for whichever
    /// replica holds the call: delivered here, else relayed to the peers.
    func deliver(_ answer: JSON, to id: RequestID?, session: MCPSession?) {
        guard let nonce = session?.nonce, let id else { return }
        let key: String =
            switch id {
            case .string(let text): nonce + "|" + text
            case .int(let number): nonce + "|" + String(number)
            }
        if !pendingInputs.deliver(key: key, answer) {
            let body = answer.serializedString
            if body.utf8.count <= PeerMessage.maxInputResponseBytes { peerRelay.withLock { $0 }?(.inputResponse(key: key, body: body)) }
        }
    }

    /// The error of a batch entry not run because the responses before it spent the batch's budget.
    func batchBudgetSpent() -> RPCError {
        RPCError(
            code: RPCError.batchBudgetCode, message: "Batch response budget exhausted",
            data: .string(
                "the responses before this one reached \(configuration.maxBatchResponseBytes / 1024) KiB, so this request was not run; send it again in another batch or ask for smaller results"
            ))
    }

    /// The HTTP response of a handshake-era body: `202` when it held only notifications and
    /// answers, the batch's array, or the one response with the status its error calls for.
    func handshakeReply(_ request: MCPHTTPRequest, _ responses: [RPCResponse], batchBody: [UInt8]?, issuedSession: String?, id: RequestID?)
        -> MCPHTTPResponse
    {
        var headers = Self.jsonHeaders()
        if let issuedSession { headers[.mcpSessionID] = issuedSession }
        if responses.isEmpty {
            headers[.contentType] = nil
            return .empty(status: .accepted, headers: headers)
        }
        if let batchBody { return .json(status: .ok, headers: headers, body: batchBody) }
        let response = responses[0]
        var status = HTTPResponse.Status.ok
        if let error = response.error {
            status = Self.status(for: error, modern: false)
            if status == .unauthorized { return unauthorized(request, id: id) }
            if status == .serviceUnavailable { headers[.retryAfter] = Self.retryAfterSeconds }
            if status == .forbidden { headers[.wwwAuthenticate] = insufficientScopeChallenge(error, request) }
        }
        return .json(status: status, headers: headers, body: response.serialized)
    }

    /// Log messages of a JSON-answered request go to the session's GET stream, when one is open here.
    func logSink(_ exchange: Exchange) -> NotificationSink? {
        guard let nonce = exchange.session?.nonce, exchange.logLevel != nil else { return nil }
        let streams = self.streams
        return NotificationSink { notification in
            streams.send(nonce: nonce, EventStream.frame(notification.json))
        }
    }

    func handleNotification(method: String, params: JSONObject?, exchange: Exchange) {
        switch method {
        case "notifications/cancelled":
            guard let raw = params?["requestId"], let id = RequestID(json: raw) else { return }
            let key = inflightKey(exchange, id)
            let cancelled = inflight.cancel(key)
            // Not running here: the request may be running on another replica.
            if !cancelled { peerRelay.withLock { $0 }?(.cancel(key: key)) }
            exchange.request.logger.debug("cancellation requested", metadata: ["requestId": "\(id)", "found": "\(cancelled)"])
        default:
            break  // notifications/initialized, roots/list_changed, ...: nothing to do
        }
    }

    func inflightKey(_ exchange: Exchange, _ id: RequestID) -> String {
        (exchange.session?.nonce ?? exchange.principal?.bindingKey ?? "anonymous") + "|" + id.description
    }

    func insufficientScopeChallenge(_ error: RPCError, _ request: MCPHTTPRequest) -> String {
        let scope = error.data?["required_scope"]?.stringValue ?? "mcp"
        return "Bearer error=\"insufficient_scope\", scope=\"\(scope)\", resource_metadata=\"\(request.resourceMetadataURL)\""
    }

    func streamed(_ exchange: Exchange, _ message: RequestMessage) -> MCPHTTPResponse {
        let credential = exchange.principal?.bindingKey ?? "anonymous"
        guard streamQuota.acquire(credential, limit: configuration.maxStreamsPerCredential) else {
            return tooManyStreams()
        }
        let quota = streamQuota
        let (frames, continuation) = AsyncStream<[UInt8]>.makeStream(bufferingPolicy: .unbounded)
        var sink = NotificationSink { notification in continuation.yield(EventStream.frame(notification.json)) }
        sink.send = { message in continuation.yield(EventStream.frame(message)) }
        let task = Task {
            let response: RPCResponse
            if exchange.modern {
                response = await self.dispatchModern(message, exchange: exchange, sink: sink)
            } else {
                response = await self.dispatchHandshake(message, exchange: exchange, sink: sink).0
            }
            if !Task.isCancelled || !exchange.modern {
                continuation.yield(EventStream.frame(response))
            }
            continuation.finish()
        }
        continuation.onTermination = { reason in
            if case .cancelled = reason { task.cancel() }
            quota.release(credential)
        }
        return .stream(headers: Self.sseHeaders(), events: EventStream(frames: frames, cancel: { task.cancel() }))
    }

    // MARK: Modern era (2026-07-28: per-request envelope, no sessions)

    func handleModernPost(_ request: MCPHTTPRequest, body: JSON) async -> MCPHTTPResponse {
        guard case .object = body else {
            return Self.errorResponse(
                .badRequest, id: nil,
                .invalidRequest("a \(ProtocolVersion.modern[0]) body is one JSON-RPC request or notification; batches exist only in the initialize era"))
        }
        let message: IncomingMessage
        switch IncomingMessage.decode(body) {
        case .failure(let failure):
            return Self.errorResponse(.badRequest, id: failure.id, failure.error)
        case .success(let m):
            message = m
        }
        let request = request
        switch message {
        case .response:
            return Self.errorResponse(.badRequest, id: nil, .invalidRequest("clients must not send JSON-RPC responses in \(ProtocolVersion.modern[0])"))
        case .notification:
            let version = request.known.protocolVersion ?? ""
            guard ProtocolVersion.isModern(version) else {
                return Self.errorResponse(.badRequest, id: nil, .unsupportedProtocolVersion(requested: version, supported: ProtocolVersion.all))
            }
            return .empty(status: .accepted, headers: HTTPFields())
        case .request(let req):
            let envelope: (version: String, capabilities: JSONObject, logLevel: LogLevel?)
            do {
                envelope = try checkEnvelope(req, headers: request.known)
            } catch {
                return Self.errorResponse(Self.status(for: error, modern: true), id: req.id, error)
            }
            var principal: Principal?
            switch request.auth {
            case .authenticated(let p):
                if let refusal = mcpScopeRefusal(p, request, id: req.id) { return refusal }
                principal = p
            case .anonymous where configuration.publicDiscovery && ["server/discover", "tools/list"].contains(req.method):
                break
            default:
                return unauthorized(request, id: req.id)
            }
            let selection: PackageSelection
            do {
                selection = try packageSelection(request)
            } catch {
                return Self.errorResponse(.badRequest, id: req.id, error)
            }
            let exchange = Exchange(
                request: request, principal: principal, modern: true, protocolVersion: envelope.version,
                clientCapabilities: envelope.capabilities, session: nil, selection: selection, logLevel: envelope.logLevel,
                deadline: .now + configuration.requestTimeout)
            if let refusal = refusal(principal, app: request.app, method: req.method) {
                return Self.rateLimitedResponse(refusal, id: req.id)
            }
            if req.meta?[MetaKey.progressToken] != nil || envelope.logLevel != nil {
                return streamed(exchange, req)
            }
            let response = await dispatchModern(req, exchange: exchange, sink: nil)
            var headers = Self.jsonHeaders()
            var status = HTTPResponse.Status.ok
            if let error = response.error {
                status = Self.status(for: error, modern: true)
                if status == .unauthorized { return unauthorized(request, id: req.id) }
                if status == .serviceUnavailable { headers[.retryAfter] = Self.retryAfterSeconds }
                if status == .forbidden { headers[.wwwAuthenticate] = insufficientScopeChallenge(error, request) }
            }
            return .json(status: status, headers: headers, body: response.serialized)
        }
    }

    /// The 2026-07-28 validation ladder, in the specification's order: the envelope must be
    /// present, the routing headers must match the body, and the version must be one we serve.
    func checkEnvelope(_ request: RequestMessage, headers: KnownHeaders) throws(RPCError) -> (version: String, capabilities: JSONObject, logLevel: LogLevel?) {
        for (name, count) in [
            (HTTPField.Name.mcpProtocolVersion, headers.protocolVersionCount), (.mcpMethod, headers.methodCount), (.mcpName, headers.nameCount),
        ]
        where count > 1 {
            throw .headerMismatch("the \(name.canonicalName) header appears more than once")
        }
        guard let meta = request.meta else {
            throw .invalidParams("params._meta must be an object carrying '\(MetaKey.protocolVersion)' and '\(MetaKey.clientCapabilities)'")
        }
        let missing = [MetaKey.protocolVersion, MetaKey.clientCapabilities].filter { meta[$0] == nil }
        guard missing.isEmpty else {
            throw .invalidParams("params._meta is missing the required key(s): \(missing.joined(separator: ", "))")
        }
        let bodyVersion = meta[MetaKey.protocolVersion]!
        guard let headerVersion = headers.protocolVersion else {
            throw .headerMismatch("the MCP-Protocol-Version header is missing; it must equal params._meta['\(MetaKey.protocolVersion)']")
        }
        guard bodyVersion == .string(headerVersion) else {
            throw .headerMismatch("MCP-Protocol-Version header '\(headerVersion)' does not match the body's protocol version \(bodyVersion.serializedString)")
        }
        guard let methodHeader = headers.method else {
            throw .headerMismatch("the Mcp-Method header is missing; it must equal the body's method '\(request.method)'")
        }
        guard methodHeader == request.method else {
            throw .headerMismatch("Mcp-Method header '\(methodHeader)' does not match the body's method '\(request.method)'")
        }
        let nameKey: String? =
            switch request.method {
            case "tools/call", "prompts/get": "name"
            case "resources/read": "uri"
            case "tasks/get", "tasks/update", "tasks/cancel": "taskId"
            default: nil
            }
        if let nameKey, let bodyName = request.params?[nameKey] {
            guard let rawHeader = headers.name else {
                throw .headerMismatch("the Mcp-Name header is missing; it must equal the body's '\(nameKey)'")
            }
            guard let decoded = HeaderValue.decode(rawHeader), bodyName == .string(decoded) else {
                throw .headerMismatch("Mcp-Name header '\(rawHeader)' does not match the body's '\(nameKey)' \(bodyName.serializedString)")
            }
        }
        guard case .string(let version) = bodyVersion else {
            throw .invalidParams("params._meta['\(MetaKey.protocolVersion)'] must be a string")
        }
        guard ProtocolVersion.isModern(version) else {
            throw .unsupportedProtocolVersion(requested: version, supported: ProtocolVersion.all)
        }
        guard case .object(let capabilities) = meta[MetaKey.clientCapabilities]! else {
            throw .invalidParams("params._meta['\(MetaKey.clientCapabilities)'] must be an object")
        }
        var logLevel: LogLevel?
        if let raw = meta[MetaKey.logLevel] {
            guard let name = raw.stringValue, let level = LogLevel(rawValue: name) else {
                throw .invalidParams("params._meta['\(MetaKey.logLevel)'] must be one of \(LogLevel.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            logLevel = level
        }
        return (version, capabilities, logLevel)
    }
}

/// The `=?base64?...?=` sentinel for header values that are not plain printable ASCII.
public enum HeaderValue {
    public static func decode(_ value: String) -> String? {
        guard value.hasPrefix("=?base64?"), value.hasSuffix("?="), value.utf8.count >= 11 else { return value }
        let payload = String(value.dropFirst(9).dropLast(2))
        var standard = payload
        guard standard.utf8.count % 4 == 0,
            standard.utf8.allSatisfy({
                ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2B || $0 == 0x2F || $0 == 0x3D
            })
        else { return nil }
        standard = standard.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        guard let bytes = Base64URL.decode(standard) else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }
}

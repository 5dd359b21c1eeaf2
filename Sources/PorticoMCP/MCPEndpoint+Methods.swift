import CoreMetrics
import Foundation
import HTTPTypes
import Logging
import PorticoAuth
import PorticoBase
import PorticoData
import PorticoJSON
import PorticoStore
import Synchronization
import Tracing

extension MCPEndpoint {
    /// What the server offers; the MCP Apps extension only to a client that declared it (`views`).
    static func handshakeCapabilities(_ configuration: Configuration, views: Bool) -> JSON {
        var capabilities: JSONObject = ["tools": ["listChanged": true], "logging": [:]]
        let views = views && !configuration.views.isEmpty
        if configuration.resources != nil || views { capabilities["resources"] = ["listChanged": true] }
        if views { capabilities["extensions"] = [UIView.extensionID: [:]] }
        return .object(capabilities)
    }

    func modernCapabilities(views: Bool) -> JSON {
        var capabilities: JSONObject = ["tools": [:], "logging": [:]]
        let views = views && !configuration.views.isEmpty
        if configuration.resources != nil || views { capabilities["resources"] = [:] }
        var extensions: JSONObject = [:]
        if views { extensions[UIView.extensionID] = [:] }
        // Tasks exist only in this era: the extension is declared per request.
        if configuration.tasks != nil { extensions[TaskExtension.id] = [:] }
        if !extensions.isEmpty { capabilities["extensions"] = .object(extensions) }
        return .object(capabilities)
    }

    /// Methods counted under their own name in metrics; others count as `other`.
    static let measuredMethods: Set<String> = [
        "initialize", "ping", "tools/list", "logging/setLevel", "server/discover", "resources/list", "resources/read", "resources/templates/list",
        "tasks/get", "tasks/update", "tasks/cancel",
    ]

    /// Counts a request other than `tools/call` (which counts itself, with its tool).
    func measure(_ method: String, _ response: RPCResponse, since start: ContinuousClock.Instant) {
        guard method != "tools/call" else { return }
        metrics.record(
            method: Self.measuredMethods.contains(method) ? method : "other", tool: "",
            outcome: response.error == nil ? .ok : .error, since: start)
    }

    /// Serves one handshake-era request. Returns the response and, for `initialize`, the new session id.
    func dispatchHandshake(_ message: RequestMessage, exchange: Exchange, sink: NotificationSink?) async -> (RPCResponse, String?) {
        let start = ContinuousClock.now
        let (response, session) = await serveHandshake(message, exchange: exchange, sink: sink)
        measure(message.method, response, since: start)
        return (response, session)
    }

    /// Serves one modern-era request.
    func dispatchModern(_ message: RequestMessage, exchange: Exchange, sink: NotificationSink?) async -> RPCResponse {
        let start = ContinuousClock.now
        let response = await serveModern(message, exchange: exchange, sink: sink)
        measure(message.method, response, since: start)
        return response
    }

    func serveHandshake(_ message: RequestMessage, exchange: Exchange, sink: NotificationSink?) async -> (RPCResponse, String?) {
        do {
            switch message.method {
            case "initialize":
                return try await initialize(message, exchange: exchange)
            case "ping":
                return (.result(id: message.id, [:]), nil)
            case "tools/list":
                return (.result(id: message.id, try listTools(message, exchange: exchange)), nil)
            case "tools/call":
                let result = try await callTool(message, exchange: exchange, sink: sink)
                return (.toolResult(id: message.id, result, extra: [:]), nil)
            case "resources/list", "resources/read", "resources/templates/list":
                return (.result(id: message.id, try await resources(message, exchange: exchange)), nil)
            case "logging/setLevel":
                guard let name = message.params?["level"]?.stringValue, let level = LogLevel(rawValue: name) else {
                    throw RPCError.invalidParams("'level' must be one of \(LogLevel.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                if let nonce = exchange.session?.nonce {
                    remember(level, for: nonce)
                    // The session's next request may reach another replica.
                    peerRelay.withLock { $0 }?(.logLevel(session: nonce, level: level.rawValue))
                }
                return (.result(id: message.id, [:]), nil)
            default:
                throw RPCError.methodNotFound(message.method)
            }
        } catch let error as RPCError {
            return (.error(id: message.id, error), nil)
        } catch {
            exchange.request.logger.error("MCP request failed", metadata: ["method": "\(message.method)", "error": "\(error)"])
            return (.error(id: message.id, .internalError("unexpected server error; the server log has the details")), nil)
        }
    }

    /// Every modern-era result carries `resultType` and the server's identity.
    func serveModern(_ message: RequestMessage, exchange: Exchange, sink: NotificationSink?) async -> RPCResponse {
        do {
            let envelope = modernResultMembers
            var result: JSONObject
            switch message.method {
            case "server/discover":
                let views = rendersViews(exchange)
                result = [
                    "supportedVersions": JSON(ProtocolVersion.all),
                    "capabilities": modernCapabilities(views: views),
                    "instructions": .string(await configuration.instructions(exchange.request.app)),
                    "ttlMs": .int(configuration.toolsListTTLMilliseconds),
                    // The extensions offered follow the client's own declaration: not one answer for all.
                    "cacheScope": views ? "private" : "public",
                ]
                // The whole identity (icons, description) here; every other result carries the brief one.
                result["_meta"] = [MetaKey.serverInfo: serverInfo]
                return .result(id: message.id, .object(result.merging(envelope) { mine, _ in mine }))
            case "tools/list":
                guard case .object(let list) = try listTools(message, exchange: exchange) else { throw RPCError.internalError("tools/list") }
                result = list
                result["ttlMs"] = .int(configuration.toolsListTTLMilliseconds)
                // The list depends on the caller's scopes and role (and the views on the client's
                // extensions), so shared caches must not reuse it.
                result["cacheScope"] = exchange.principal == nil && !rendersViews(exchange) ? "public" : "private"
            case "tools/call":
                let called = try await callTool(message, exchange: exchange, sink: sink)
                if var task = called.createdTask {
                    task["_meta"] = envelope["_meta"]
                    return .result(id: message.id, .object(task))
                }
                guard let asked = called.inputRequired, let state = called.sealedState else {
                    return .toolResult(id: message.id, called, extra: envelope)
                }
                result = ["inputRequests": .object(asked.requests), "requestState": .string(state)]
                result.merge(envelope) { _, new in new }
                result["resultType"] = "input_required"
                return .result(id: message.id, .object(result))
            case "tasks/get":
                result = try await getTask(message, exchange: exchange)
            case "tasks/update":
                result = try await updateTask(message, exchange: exchange)
            case "tasks/cancel":
                result = try await cancelTask(message, exchange: exchange)
            case "resources/list", "resources/read", "resources/templates/list":
                guard case .object(let answer) = try await resources(message, exchange: exchange) else { throw RPCError.internalError(message.method) }
                result = answer
                result["ttlMs"] = .int(configuration.toolsListTTLMilliseconds)
                // What a caller may see depends on their scopes and role.
                result["cacheScope"] = "private"
            default:
                throw RPCError.methodNotFound(message.method)
            }
            result.merge(envelope) { _, new in new }
            return .result(id: message.id, .object(result))
        } catch let error as RPCError {
            return .error(id: message.id, error)
        } catch {
            exchange.request.logger.error("MCP request failed", metadata: ["method": "\(message.method)", "error": "\(error)"])
            return .error(id: message.id, .internalError("unexpected server error; the server log has the details"))
        }
    }

    func initialize(_ message: RequestMessage, exchange: Exchange) async throws(RPCError) -> (RPCResponse, String?) {
        guard let requested = message.params?["protocolVersion"]?.stringValue else {
            throw .invalidParams("'protocolVersion' is required: name the MCP revision the client speaks, such as \"\(ProtocolVersion.latestHandshake)\"")
        }
        let negotiated = ProtocolVersion.isHandshake(requested) ? requested : ProtocolVersion.latestHandshake
        var flags: ClientCapabilityFlags = []
        if let capabilities = message.params?["capabilities"] {
            guard case .object(let caps) = capabilities else { throw .invalidParams("'capabilities' must be an object") }
            if caps["sampling"] != nil { flags.insert(.sampling) }
            if caps["elicitation"] != nil { flags.insert(.elicitation) }
            if caps["roots"] != nil { flags.insert(.roots) }
            if UIView.isDeclared(in: caps) { flags.insert(.ui) }
        }
        metrics.sessionsInitialized.increment()
        let issued = signer.issue(
            protocolVersion: negotiated, app: exchange.request.app,
            bindingKey: exchange.principal?.bindingKey ?? "anonymous", capabilities: flags, now: self.now)
        let result: JSON = [
            "protocolVersion": .string(negotiated),
            "capabilities": flags.contains(.ui) ? handshakeCapabilities.views : handshakeCapabilities.plain,
            "serverInfo": serverInfo,
            "instructions": .string(await configuration.instructions(exchange.request.app)),
        ]
        return (.result(id: message.id, result), issued.id)
    }

    func listTools(_ message: RequestMessage, exchange: Exchange) throws(RPCError) -> JSON {
        var cursor: String?
        if let raw = message.params?["cursor"], !raw.isNull {
            guard let text = raw.stringValue else { throw .invalidParams("'cursor' must be a string") }
            cursor = text
        }
        // A client that renders MCP Apps views learns which view shows each tool's results.
        let views = rendersViews(exchange) ? viewDefinitions : [:]
        if exchange.selection.isFirstList, let firstList = registry.firstList {
            // One page: the few tools an agent starts with, and the search that reaches the rest.
            if let cursor {
                throw .invalidParams("invalid cursor '\(cursor)': this list has one page; call tools/list without a cursor")
            }
            let visible = registry.reachableTools(in: exchange.selection, for: exchange.principal, policy: policy).map(\.tool)
            // A session may also load whole packages into its list.
            let fixed = [toolSearch(exchange).definition] + (exchange.session == nil ? [] : [toolLoader(exchange).definition])
            var listed = firstList.pick(visible, fixed: fixed) { views[$0.name] ?? $0.definition }
            if let nonce = exchange.session?.nonce, let loaded = sessionPackages[nonce], !loaded.isEmpty {
                let names = Set(listed.compactMap { $0["name"]?.stringValue })
                let selection = PackageSelection(names: exchange.selection.reachable.filter(loaded.contains))
                for tool in registry.visibleTools(in: selection, for: exchange.principal, policy: policy) where !names.contains(tool.name) {
                    listed.append(views[tool.name] ?? tool.definition)
                }
            }
            return ["tools": .array(listed)]
        }
        let visible = registry.visibleTools(in: exchange.selection, for: exchange.principal, policy: policy)
        let page = try registry.page(of: visible, cursor: cursor)
        var result: JSONObject = ["tools": .array(page.tools.map { views[$0.name] ?? $0.definition })]
        if let next = page.nextCursor { result["nextCursor"] = .string(next) }
        return .object(result)
    }

    /// Calls a tool; when traced, in a span `tools/call <tool>` whose parent is the client's
    /// `_meta.traceparent` (2026-07-28) or else the HTTP request's span (its `traceparent` header).
    func callTool(_ message: RequestMessage, exchange: Exchange, sink: NotificationSink?) async throws -> ToolResult {
        guard Traces.isOn else { return try await runTool(message, exchange: exchange, sink: sink) }
        let name = message.params?["name"]?.stringValue ?? ""
        let known = registry.packageOf(tool: name) != nil
        let parent = (message.meta?["traceparent"]?.stringValue).flatMap {
            Traces.context(traceparent: $0, tracestate: message.meta?["tracestate"]?.stringValue)
        }
        return try await Traces.span("tools/call " + (known ? name : "unknown"), kind: .server, context: parent) { span in
            span?.attributes["mcp.method.name"] = "tools/call"
            span?.attributes["gen_ai.tool.name"] = known ? name : "unknown"
            span?.attributes["portico.app"] = exchange.request.app
            span?.attributes["portico.principal"] = exchange.principal?.bindingKey ?? "anonymous"
            if let user = exchange.principal?.userID { span?.attributes["enduser.id"] = String(user) }
            span?.attributes["mcp.protocol.version"] = exchange.protocolVersion
            do {
                let result = try await runTool(message, exchange: exchange, sink: sink)
                span?.attributes["portico.outcome"] =
                    result.isError ? "tool_error" : result.createdTask != nil ? "task" : (result.inputRequired == nil ? "ok" : "input_required")
                if result.isError { span?.setStatus(SpanStatus(code: .error, message: "the tool answered with an error")) }
                return result
            } catch {
                span?.attributes["portico.outcome"] = error is CancellationError ? "cancelled" : "error"
                throw error
            }
        }
    }

    func runTool(_ message: RequestMessage, exchange: Exchange, sink: NotificationSink?) async throws -> ToolResult {
        let start = ContinuousClock.now
        var toolLabel = ""
        var outcome = MCPMetrics.Outcome.error
        // What the audit trail records as called, once the call resolves.
        var called: (tool: String, arguments: JSONObject)?
        defer {
            metrics.record(method: "tools/call", tool: toolLabel, outcome: outcome, since: start)
            if let audit = configuration.audit { audit(auditCall(message, called: called, exchange: exchange, outcome: outcome, since: start)) }
        }
        let (tool, arguments, principal) = try resolveCall(message, exchange: exchange)
        called = (tool.name, arguments)
        if let refusal = refusal(of: tool, to: principal, exchange: exchange) {
            outcome = .toolError
            return .error(refusal)
        }
        if let problem = tool.argumentSchema.validate(.object(arguments)) {
            throw RPCError.invalidParams(problem, data: ["tool": .string(tool.name), "problem": .string(problem)])
        }
        var context = try callContext(message, exchange: exchange, tool: tool, arguments: arguments, principal: principal, sink: sink)
        let mayBecomeTask = mayBecomeTask(tool, exchange)
        if mayBecomeTask { context.taskMark = TaskMark() }
        toolLabel = tool.name
        // Only the handshake era cancels a call by its id (`notifications/cancelled`).
        let key = exchange.modern ? nil : inflightKey(exchange, message.id)
        let handler = tool.handler
        let task = Task { [context] in try await handler(arguments, context) }
        let token = inflight.register(key, task, deadline: exchange.deadline)
        do {
            let result = try await withTaskCancellationHandler {
                guard mayBecomeTask else { return try await task.value }
                // A call still running after about a second answers with a task, which goes on.
                if let ended = await Self.result(of: task, within: configuration.taskAfter) { return try ended.get() }
                if let handle = await becomeTask(task, token: token, tool: tool, context: context, exchange: exchange) { return handle }
                return try await task.value
            } onCancel: {
                task.cancel()
            }
            if result.createdTask != nil {
                outcome = .task
                return result
            }
            inflight.remove(token)
            outcome = result.isError ? .toolError : .ok
            if let asked = result.inputRequired {
                // Only the stateless era carries input requests in a result.
                guard ProtocolVersion.modern.contains(exchange.protocolVersion) else {
                    outcome = .toolError
                    return .error("\(tool.name) needs input this protocol version cannot ask for")
                }
                var sealed = result
                sealed.sealedState = signer.sealState(asked.state, tool: tool.name, arguments: arguments, bindingKey: principal.bindingKey, now: clock.seconds)
                return sealed
            }
            return result
        } catch let error as ToolError {
            inflight.remove(token)
            outcome = .toolError
            return .error(error.message)
        } catch is CancellationError {
            outcome = .cancelled
            if inflight.remove(token) {
                outcome = .timeout
                let limit = configuration.requestTimeout.formatted(.units(allowed: [.seconds, .milliseconds], width: .abbreviated))
                return .error(
                    "\(tool.name) ran past the \(limit) limit of one request and was stopped; narrow the filter, ask for fewer records or fewer appends")
            }
            throw RPCError(code: RPCError.requestCancelledCode, message: "Request cancelled", data: ["requestId": message.id.json])
        } catch let error as RPCError {
            inflight.remove(token)
            throw error
        } catch {
            inflight.remove(token)
            outcome = .toolError
            let mapped = tool.mapError?(error)
            if let mapped = mapped as? ToolError { return .error(mapped.message) }
            if let mapped = mapped as? RPCError { throw mapped }
            exchange.request.logger.error("tool failed", metadata: ["tool": "\(tool.name)", "error": "\(error)"])
            return .error("\(tool.name) failed: \(error)")
        }
    }

    /// The tool a `tools/call` names, its arguments and its caller; or the protocol error that
    /// refuses it (no name, arguments that are no object, a tool not selected, no credentials, a
    /// scope the credential lacks).
    func resolveCall(_ message: RequestMessage, exchange: Exchange) throws(RPCError) -> (Tool, JSONObject, Principal) {
        guard let name = message.params?["name"]?.stringValue else {
            throw RPCError.invalidParams("'name' is required: the name of the tool to call")
        }
        var arguments: JSONObject = [:]
        switch message.params?["arguments"] {
        case .none, .null?: break
        case .object(let a)?: arguments = a
        case let other?: throw RPCError.invalidParams("'arguments' must be an object, got \(other.typeName)")
        }
        let searching = exchange.selection.isFirstList && name == ToolSearch.name
        let loading = exchange.selection.isFirstList && exchange.session != nil && name == ToolSearch.loadName
        let found = searching ? toolSearch(exchange) : loading ? toolLoader(exchange) : registry.tool(named: name, in: exchange.selection)
        guard let tool = found else {
            if let package = registry.packageOf(tool: name) {
                throw RPCError.invalidParams(
                    "Tool '\(name)' belongs to package '\(package)', which this request did not select: add it with the x-mcp-packages header or ?packages=")
            }
            throw RPCError.invalidParams("Unknown tool: \(name)")
        }
        guard let principal = exchange.principal else {
            throw RPCError.unauthorized("Unauthorized operation: calling a tool needs credentials")
        }
        let checksItself: Bool = if case .open = tool.access { true } else { false }
        guard checksItself || principal.isGranted(tool.requiredScope) else {
            throw RPCError(
                code: RPCError.unauthorizedCode, message: "insufficient_scope",
                data: [
                    "tool": .string(tool.name),
                    "granted_scopes": JSON(principal.grantedScopes),
                    "required_scope": .string(tool.requiredScope.name),
                ])
        }
        return (tool, arguments, principal)
    }

    /// Why `principal` may not run `tool` here, as a tool error's text: a role that does not allow
    /// it, or a change on a demo server; `nil` when it may.
    func refusal(of tool: Tool, to principal: Principal, exchange: Exchange) -> String? {
        guard ToolRegistry.roleAllows(tool.access, principal.role, policy: policy) else {
            let role = principal.role?.name ?? "none"
            return
                "Permission denied: your role '\(role)' in app '\(exchange.request.app)' does not allow \(tool.name). Ask an admin of the app for a role that does."
        }
        if configuration.demoMode, !tool.annotations.readOnly {
            return "This Portico runs in demo mode: \(tool.name) and every other change are disabled. Reading works as usual."
        }
        return nil
    }

    /// What the tool's handler is given: the caller, the request's era and capabilities, a way to
    /// ask the client in the handshake era, and a retried call's answers (valid only with the state
    /// this server sealed for this call and caller).
    func callContext(
        _ message: RequestMessage, exchange: Exchange, tool: Tool, arguments: JSONObject, principal: Principal, sink: NotificationSink?
    ) throws(RPCError) -> CallContext {
        var context = CallContext(
            app: exchange.request.app, principal: principal, requestID: message.id,
            protocolVersion: exchange.protocolVersion, clientCapabilities: exchange.clientCapabilities, logger: exchange.request.logger,
            progressToken: message.meta?[MetaKey.progressToken], logLevel: exchange.logLevel, sink: sink)
        context.confirmsDestroy = configuration.confirmsDestroy
        // In the handshake era a streamed call may ask its client directly, when the client declared elicitation.
        if !ProtocolVersion.modern.contains(exchange.protocolVersion), let nonce = exchange.session?.nonce,
            exchange.session?.clientCapabilities.contains(.elicitation) == true, let send = sink?.send
        {
            let pending = pendingInputs
            let deadline = exchange.deadline
            context.elicitor = Elicitor { params in
                let id = "portico-" + Base64URL.encode(Secrets.randomBytes(12))
                return try await pending.ask(key: nonce + "|" + id, deadline: deadline - .seconds(1)) {
                    send(["jsonrpc": "2.0", "id": .string(id), "method": "elicitation/create", "params": params])
                }
            }
        }
        if let state = message.params?["requestState"] {
            guard let text = state.stringValue else { throw RPCError.invalidParams("'requestState' must be the string the server gave") }
            switch signer.openState(text, tool: tool.name, arguments: arguments, bindingKey: principal.bindingKey, now: clock.seconds) {
            case .success(let opened):
                let responses = message.params?["inputResponses"]?.objectValue ?? [:]
                context.input = CallInput(responses: responses, state: opened)
            case .failure(let problem):
                throw RPCError.invalidParams(problem.message)
            }
        }
        return context
    }

    /// The audit trail's record of a `tools/call`: the tool and arguments as resolved, else (a call
    /// refused before it resolved) as the message has them.
    func auditCall(
        _ message: RequestMessage, called: (tool: String, arguments: JSONObject)?, exchange: Exchange, outcome: MCPMetrics.Outcome,
        since start: ContinuousClock.Instant
    ) -> ToolCall {
        let elapsed = ContinuousClock.now - start
        let principal = exchange.principal
        var client = exchange.request.known.userAgent ?? "unknown"
        var version: String?
        if let info = message.meta?[MetaKey.clientInfo], let name = info["name"]?.stringValue {
            client = name
            version = info["version"]?.stringValue
        }
        return ToolCall(
            at: clock.milliseconds, app: exchange.request.app, userID: principal?.userID, principal: principal?.userName,
            credential: principal?.bindingKey ?? "none", client: client, clientVersion: version,
            tool: called?.tool ?? message.params?["name"]?.stringValue ?? "", arguments: called?.arguments ?? message.params?["arguments"]?.objectValue ?? [:],
            outcome: outcome.rawValue, durationMilliseconds: elapsed.milliseconds)
    }

    /// `tools_search` for this request: over the tools of the packages it may call that its caller
    /// may use, answered with their definitions as `tools/list` would list them.
    func toolSearch(_ exchange: Exchange) -> Tool {
        let selection = exchange.selection
        let reached = registry.packages.filter { selection.reachable.contains($0.name) }
        let views = rendersViews(exchange) ? viewDefinitions : [:]
        let (registry, policy) = (registry, policy)
        let search = ToolSearch.tool(packages: reached) { arguments, context in
            let limit = arguments["limit"]?.intValue.map { Int($0) } ?? ToolSearch.defaultLimit
            let query = arguments["query"]?.stringValue ?? ""
            let candidates = registry.reachableTools(in: selection, for: context.principal, policy: policy)
            let found = ToolSearch.search(query, limit: limit, in: candidates)
            guard !found.isEmpty else {
                return .error(
                    "No tool you may use matches '\(query)'. Search by what to do (\"update a record\", \"add a field\") or by package: "
                        + reached.map(\.name).joined(separator: ", "))
            }
            return .structured(["tools": .array(found.map { views[$0.name] ?? $0.definition })])
        }
        return search.presented(title: search.title ?? ToolSearch.name, icons: configuration.identity.icons)
    }

    /// `tools_load` for this request's session: adds packages the request may call to the
    /// session's list, at every replica, and tells the session's stream that its list changed.
    func toolLoader(_ exchange: Exchange) -> Tool {
        let selection = exchange.selection
        let reached = registry.packages.filter { selection.reachable.contains($0.name) }
        let nonce = exchange.session?.nonce
        let loader = ToolSearch.loader(packages: reached) { [self] arguments, context in
            guard let nonce else {
                return .error("tools_load keeps packages in a session (the initialize era); here, call tools_search and then the tools it finds")
            }
            let wanted = arguments["packages"]?.arrayValue?.compactMap(\.stringValue) ?? []
            sessionPackages.update(nonce) { loaded in loaded = (loaded ?? []).union(wanted) }
            let loaded = (sessionPackages[nonce] ?? []).sorted()
            peerRelay.withLock { $0 }?(.packagesLoaded(session: nonce, packages: loaded))
            let tools = registry.visibleTools(in: PackageSelection(names: selection.reachable.filter(loaded.contains)), for: context.principal, policy: policy)
            return .structured(["loaded": JSON(loaded), "tools": JSON(tools.map(\.name))])
        }
        return loader.presented(title: loader.title ?? ToolSearch.loadName, icons: configuration.identity.icons)
    }
}

public import Logging
public import PorticoAuth
import PorticoBase
public import PorticoJSON

/// Log severities of MCP `notifications/message` (RFC 5424 order).
public enum LogLevel: String, Sendable, CaseIterable, Comparable {
    case debug, info, notice, warning, error, critical, alert, emergency

    public static func < (a: LogLevel, b: LogLevel) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}

/// Where the notifications of one request go: its own event stream, or nowhere.
public struct NotificationSink: Sendable {
    let deliver: @Sendable (RPCNotification) -> Void
    /// Any message on the request's own event stream (a request to the client), when it has one.
    var send: (@Sendable (JSON) -> Void)? = nil

    public init(deliver: @escaping @Sendable (RPCNotification) -> Void) {
        self.deliver = deliver
    }
}

/// Asks the client for input in the handshake era: an `elicitation/create` request on the
/// call's event stream, answered by the client in another POST.
public struct Elicitor: Sendable {
    let ask: @Sendable (JSON) async throws -> JSON
}

/// Everything a tool handler may know about the call it serves.
public struct CallContext: Sendable {
    public let app: String
    public let principal: Principal
    public let requestID: RequestID
    public let protocolVersion: String
    public let clientCapabilities: JSONObject
    public let logger: Logger
    /// The client's answers to this tool's input requests, on a retried call.
    public internal(set) var input: CallInput?
    /// How to ask the client directly (handshake era, a client that declared elicitation, a streamed call).
    var elicitor: Elicitor?
    /// Whether the app's destructive tools ask first (`MCPEndpoint.Configuration.confirmsDestroy`).
    var confirmsDestroy: @Sendable (_ app: String) async -> Bool = { _ in true }
    let progressToken: JSON?
    let logLevel: LogLevel?
    let sink: NotificationSink?
    private let progressCounter = ProgressCounter()
    /// Set when the call answered with a task: nobody is on the line to ask any more. Only a
    /// call that may become a task has one (no allocation for the others).
    var taskMark: TaskMark?

    public init(
        app: String, principal: Principal, requestID: RequestID, protocolVersion: String,
        clientCapabilities: JSONObject, logger: Logger, progressToken: JSON?, logLevel: LogLevel?, sink: NotificationSink?
    ) {
        self.app = app
        self.principal = principal
        self.requestID = requestID
        self.protocolVersion = protocolVersion
        self.clientCapabilities = clientCapabilities
        self.logger = logger
        self.progressToken = progressToken
        self.logLevel = logLevel
        self.sink = sink
    }

    /// Whether the tool may ask the client for input: the stateless era, with the client's
    /// declared `elicitation` capability (form mode).
    public var canElicit: Bool {
        guard taskMark?.isSet != true, ProtocolVersion.modern.contains(protocolVersion), let elicitation = clientCapabilities["elicitation"]?.objectValue else {
            return false
        }
        return elicitation.isEmpty || elicitation["form"] != nil
    }

    /// Whether a destructive call of this app asks before it acts.
    public func asksBeforeDestroying() async -> Bool { await confirmsDestroy(app) }

    /// Asks the client with an `elicitation/create` request and returns its result (`{action,
    /// content}`); `nil` when this call cannot ask (see `canElicit` for the stateless era) or the
    /// client did not answer in time.
    public func elicit(_ params: JSON) async -> JSON? {
        guard let elicitor else { return nil }
        return try? await elicitor.ask(params)
    }

    /// Reports progress when the client asked for it with a progress token; otherwise nothing.
    public func progress(_ message: String, total: Double? = nil) {
        guard let progressToken, let sink else { return }
        let step = progressCounter.next()
        var params: JSONObject = ["progressToken": progressToken, "progress": .double(step)]
        if let total { params["total"] = .double(total) }
        params["message"] = .string(message)
        sink.deliver(RPCNotification(method: "notifications/progress", params: .object(params)))
    }

    /// Sends a log message to the client when it asked for messages at this level or above.
    public func log(_ level: LogLevel, _ data: JSON, logger name: String = "portico") {
        guard let threshold = logLevel, level >= threshold, let sink else { return }
        sink.deliver(RPCNotification(method: "notifications/message", params: ["level": .string(level.rawValue), "logger": .string(name), "data": data]))
    }
}

/// Progress must increase with every notification; a counter shared by copies of one context.
final class ProgressCounter: Sendable {
    private let value = LockedValue<Double>(0)
    func next() -> Double {
        value.withLock {
            $0 += 1; return $0
        }
    }
}

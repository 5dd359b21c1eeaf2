import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import PorticoAsk
import PorticoAskEngine
import PorticoAuth
import PorticoData
import PorticoJSON
import PorticoMCP
import PorticoStore

/// The SQLBot-compatible listener (`--sqlbot-port`): MCP at `/mcp` with package `sqlbot` only,
/// the same operations as plain JSON routes (`POST /mcp/mcp_start`, `/mcp/mcp_question`, …) for
/// HTTP tools such as n8n, and the chart images.
struct SQLBotController: Sendable {
    let mcp: MCPController
    let sqlbot: SQLBotService
    let authenticator: any Authenticator

    func addRoutes(to router: Router<PorticoRequestContext>) {
        for method in [HTTPRequest.Method.post, .get, .delete] {
            router.on("mcp", method: method) { request, context in
                try await mcp.handle(request, context: context, app: "main", path: "/mcp")
            }
        }
        router.post("mcp/mcp_start") { request, context in
            try await route(request, context) { body, _ in .object(try await sqlbot.start(body, address: context.throttledAddress)) }
        }
        router.post("mcp/access_token") { request, context in
            try await route(request, context) { body, _ in .object(try await sqlbot.accessToken(body, address: context.throttledAddress)) }
        }
        router.post("mcp/mcp_ws_list") { request, context in
            try await route(request, context) { body, principal in try await sqlbot.workspaces(try await sqlbot.caller(body, principal, app: "main")) }
        }
        for path in ["mcp/mcp_ds_list", "mcp/mcp_datasource_list"] {
            router.post(RouterPath(path)) { request, context in
                try await route(request, context) { body, principal in
                    try await sqlbot.datasources(try await sqlbot.caller(body, principal, app: body["oid"]?.stringValue ?? "main"))
                }
            }
        }
        for path in ["mcp/mcp_model_list", "mcp/get_model_list", "mcp/model_list"] {
            router.post(RouterPath(path)) { request, context in try await route(request, context) { _, _ in try await sqlbot.models() } }
            router.get(RouterPath(path)) { request, context in try await route(request, context) { _, _ in try await sqlbot.models() } }
        }
        router.post("mcp/mcp_question") { request, context in
            try await question(request, context, assistant: false)
        }
        router.post("mcp/mcp_assistant") { request, context in
            try await question(request, context, assistant: true)
        }
    }

    /// The request's JSON body merged with its query string (SQLBot takes `token` either way).
    func arguments(_ request: Request) async throws -> JSONObject {
        var body: JSONObject = [:]
        var request = request
        let bytes = try await request.collectBody(upTo: 1 << 20)
        if bytes.readableBytes > 0 {
            guard let object = (try? JSONParser.parse(Array(bytes.readableBytesView)))?.objectValue else {
                throw SQLBotError(422, "the body must be a JSON object with the operation's arguments")
            }
            body = object
        }
        for (key, value) in request.uri.queryParameters where body[String(key)] == nil { body[String(key)] = .string(String(value)) }
        return body
    }

    func principal(_ request: Request, _ context: PorticoRequestContext) async -> Principal? {
        let outcome = await authenticator.authenticate(
            RequestCredentials(authorization: request.headers[.authorization], cookie: request.headers[.cookie], remoteAddress: context.remoteAddress),
            app: "main")
        if case .authenticated(let principal) = outcome { return principal }
        return nil
    }

    func route(_ request: Request, _ context: PorticoRequestContext, _ body: (JSONObject, Principal?) async throws -> JSON) async throws -> Response {
        try await answering {
            let arguments = try await arguments(request)
            return Response.json(try await body(arguments, await principal(request, context)))
        }
    }

    /// Refusals as SQLBot (FastAPI) answers them: `{"detail": message}` with the status.
    func answering(_ body: () async throws -> Response) async throws -> Response {
        do {
            return try await body()
        } catch let error as SQLBotError {
            var response = Response.json(["detail": .string(error.message)], status: HTTPResponse.Status(code: error.status))
            if let wait = error.retryAfter { response.headers[.retryAfter] = String(wait) }
            return response
        } catch is NIOTooManyBytesError {
            return Response.json(["detail": "the body is larger than 1 MiB"], status: .contentTooLarge)
        } catch let error as DataError {
            return Response.json(["detail": .string(error.message)], status: .badRequest)
        } catch let error as DatasourceError {
            // The caller's mistakes (an unknown datasource) are 400 with what to change, as for the tools.
            return Response.json(["detail": .string(error.message)], status: .badRequest)
        } catch let error as SQLGuardError {
            return Response.json(["detail": .string("The SQL was refused: \(error.message)")], status: .badRequest)
        }
    }

    /// `mcp_question` (and `mcp_assistant`, whose credentials come as `authorization`): a JSON
    /// answer, or with `stream` (the default) server-sent events as the answer is made.
    func question(_ request: Request, _ context: PorticoRequestContext, assistant: Bool) async throws -> Response {
        try await answering {
            var body = try await arguments(request)
            if assistant { body["token"] = body["authorization"] }
            guard body["question"]?.stringValue?.isEmpty == false else { throw SQLBotError(422, "question is required") }
            let caller = try await sqlbot.caller(body, await principal(request, context), app: assistant ? "main" : body["oid"]?.stringValue ?? "main")
            guard body["stream"]?.boolValue ?? true else {
                return Response.json(.object(sqlbot.json(try await sqlbot.question(body, caller: caller) { _ in })))
            }
            return events(body, caller: caller)
        }
    }

    /// `mcp_question`'s streamed answer as SQLBot writes it: `text/event-stream`, carrying the
    /// markdown chunks of `SQLBotService.streamed` (quoted answer id and question, the SQL fence,
    /// the table, the chart image) or SQLBot's error lines.
    func events(_ body: JSONObject, caller: (principal: Principal, app: String)) -> Response {
        let sqlbot = self.sqlbot
        let question = body["question"]?.stringValue ?? ""
        let lang = body["lang"]?.stringValue ?? "zh-CN"
        let returnImage = body["return_img"]?.boolValue ?? true
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream; charset=utf-8"
        headers[.cacheControl] = "no-cache"
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody { writer in
                let chunks: [String]
                do {
                    let outcome = try await sqlbot.question(body, caller: caller) { _ in }
                    chunks = sqlbot.streamed(outcome, question: question, lang: lang, returnImage: returnImage)
                } catch let error as SQLBotError {
                    chunks = SQLBotService.streamedError(error.message)
                } catch let error as ToolError {
                    chunks = SQLBotService.streamedError(error.message)
                } catch {
                    chunks = SQLBotService.streamedError("the question could not be answered: \(error)")
                }
                for chunk in chunks { try await writer.write(ByteBuffer(string: chunk)) }
                try await writer.finish(nil)
            })
    }
}

/// Lets requests without credentials through as the anonymous caller, for endpoints whose tools
/// check their callers themselves; presented credentials are still checked.
struct OpenAuthenticator: Authenticator {
    let wrapped: any Authenticator

    func authenticate(_ credentials: RequestCredentials, app: String) async -> AuthOutcome {
        let outcome = await wrapped.authenticate(credentials, app: app)
        if case .anonymous = outcome { return .authenticated(.anonymous) }
        return outcome
    }
}

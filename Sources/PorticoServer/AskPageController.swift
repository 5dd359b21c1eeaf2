import Foundation
import HTTPTypes
import Hummingbird
import PorticoAsk
import PorticoAskEngine
import PorticoAuth
import PorticoBase
import PorticoCharts
import PorticoData
import PorticoJSON
import PorticoStore

/// `/console/ask`: a signed-in user asks questions of an app's datasources and sees the answer,
/// the engine, the SQL, the rows and the chart; follow-ups stay in the same chat. Plain forms,
/// no JavaScript.
struct AskPageController: Sendable {
    let pages: WebPages
    let sessions: WebSessions
    let users: UserStore
    let asker: AskService
    let limiter: RateLimiter
    let access: PageAccess

    /// The ask page's routes on the console's signed-in group.
    func addRoutes(to console: RouterGroup<PorticoRequestContext>) {
        console.get("ask") { request, context in
            let (user, session) = try context.requireSignedIn().pair
            let query = Forms.query(request)
            return try await page(user: user, session: session, app: Forms.first(query, "app"), chat: Forms.first(query, "chat").flatMap { Int64($0) })
        }
        console.post("ask") { request, context in try await ask(request, signedIn: try context.requireSignedIn()) }
        console.post("ask/example") { request, context in try await saveExample(request, signedIn: try context.requireSignedIn()) }
    }

    func ask(_ request: Request, signedIn: SignedInUser) async throws -> Response {
        let (user, session) = signedIn.pair
        let fields = try await Forms.fields(request)
        guard sessions.checkCSRF(Forms.first(fields, "csrf"), session: session) else {
            return pages.error(
                "Form expired", "The form's security token is missing or wrong (CSRF). Reload the page and ask again.", code: "csrf", status: .forbidden)
        }
        let roles = try await users.roles(userID: user.id)
        let app = Self.app(Forms.first(fields, "app"), roles: roles)
        let chat = Forms.first(fields, "chat").flatMap { Int64($0) }
        let question = (Forms.first(fields, "question") ?? "").trimmingSpaces()
        guard !question.isEmpty else { return try await page(user: user, session: session, app: app, chat: chat, error: "Type a question first.") }
        // A question from the page is the ask tool called by the signed-in user, as one over MCP with their cookie would be:
        // the registry's check, the rate limits, and the role's view of each table.
        let principal = try await access.principal(signedIn, app: app)
        guard access.permits("ask", principal: principal) else {
            return try await page(user: user, session: session, app: app, chat: chat, error: "Your role in app '\(app)' does not allow asking questions.")
        }
        if let refusal = limiter.admit(principal, app: app, toolCall: true) {
            var response = try await page(user: user, session: session, app: app, chat: chat, error: refusal.message)
            response.status = .tooManyRequests
            response.headers[.retryAfter] = String(refusal.retryAfter)
            return response
        }
        let datasource = Forms.first(fields, "datasource").flatMap { $0.isEmpty ? nil : $0 }
        do {
            var ask = AskRequest(
                app: app, userID: user.id, question: question, datasource: datasource, chatID: chat, lang: "en",
                caller: try await access.policy.queryCaller(principal, app: app, catalogs: asker.catalogs))
            // A reading picked with a button under the question asked back.
            if let choice = Forms.first(fields, "choice"), !choice.isEmpty { ask.choices = [choice] }
            let answer = try await asker.ask(ask)
            return try await page(user: user, session: session, app: app, chat: answer.chatID, answer: answer)
        } catch let refusal as AskRefusal {
            let asked = refusal.clarification.map { clarification in
                AskedBack(question: question, datasource: datasource ?? "", options: clarification.options.map { ($0.value, $0.label) })
            }
            return try await page(
                user: user, session: session, app: app, chat: refusal.chatID ?? chat, error: refusal.message, refusedSQL: refusal.sql, askedBack: asked)
        } catch let error as DatasourceError {
            return try await page(user: user, session: session, app: app, chat: chat, error: error.message)
        }
    }

    /// "Save as example": an answer of the user's chat becomes an example of its datasource,
    /// verified by them; an app's administrators only (as `examples_create`).
    func saveExample(_ request: Request, signedIn: SignedInUser) async throws -> Response {
        let (user, session) = signedIn.pair
        let fields = try await Forms.fields(request)
        guard sessions.checkCSRF(Forms.first(fields, "csrf"), session: session) else {
            return pages.error(
                "Form expired", "The form's security token is missing or wrong (CSRF). Reload the page and try again.", code: "csrf", status: .forbidden)
        }
        let roles = try await users.roles(userID: user.id)
        let app = Self.app(Forms.first(fields, "app"), roles: roles)
        let chat = Forms.first(fields, "chat").flatMap { Int64($0) }
        let principal = try await access.principal(signedIn, app: app)
        guard access.permits("examples_create", principal: principal) else {
            return try await page(user: user, session: session, app: app, chat: chat, error: "Only an administrator of app '\(app)' saves examples.")
        }
        guard let chat, let record = Forms.first(fields, "record").flatMap({ Int64($0) }) else {
            return try await page(user: user, session: session, app: app, chat: chat, error: "Which answer? Ask a question first.")
        }
        do {
            let caller = try await access.policy.queryCaller(principal, app: app, catalogs: asker.catalogs)
            let example = try await asker.knowledge.saveAnswer(app: app, chatID: chat, recordID: record, userID: user.id, caller: caller)
            return try await page(
                user: user, session: session, app: app, chat: chat,
                notice: "Saved as example \(example.id) of \(example.datasource): a question like it is answered from this SQL.")
        } catch let error as DatasourceError {
            return try await page(user: user, session: session, app: app, chat: chat, error: error.message)
        }
    }

    /// The app asked for when the user has a role there, else `main`, else their first app.
    static func app(_ wanted: String?, roles: [String: Role]) -> String {
        wanted.flatMap { roles[$0] == nil ? nil : $0 } ?? (roles["main"] != nil ? "main" : roles.keys.sorted().first ?? "main")
    }

    func page(
        user: User, session: String, app wanted: String?, chat: Int64?, answer: AskAnswer? = nil, error: String? = nil, refusedSQL: String? = nil,
        notice: String? = nil, askedBack: AskedBack? = nil
    ) async throws -> Response {
        let roles = try await users.roles(userID: user.id)
        let app = Self.app(wanted, roles: roles)
        var history: [ChatRecord] = []
        var chatDatasource: String?
        if let chat {
            let owned = try await asker.chats.owned(chat, app: app, userID: user.id)
            if owned.exists {
                history = try await asker.chats.history(chat, limit: 20)
                chatDatasource = owned.datasource
            }
        }
        // The answer on the page is the last record; the ones before it are the chat so far.
        if answer != nil, !history.isEmpty { history.removeLast() }
        let datasources = (try? await asker.datasources.list(app: app)) ?? []
        let selected = answer?.datasource ?? chatDatasource ?? "main"
        var values: [String: Any?] = [
            "user": user.name, "csrf": sessions.csrfToken(for: session), "app": app, "chat": chat.map(String.init),
            "apps": roles.keys.sorted().map { ["name": $0, "selected": $0 == app] },
            "datasources": datasources.map { ["name": $0.name, "kind": $0.kind.rawValue, "selected": $0.name == selected] },
            "history": history.map { record in
                [
                    "question": record.question, "sql": record.sql ?? "", "hasSQL": record.sql != nil, "engine": record.engine ?? "",
                    "refused": record.outcome != .answered, "message": record.message ?? "",
                ] as [String: Any]
            },
            "hasHistory": !history.isEmpty, "error": error, "refusedSQL": refusedSQL, "notice": notice,
        ]
        if let askedBack {
            values["askedBack"] =
                [
                    "question": askedBack.question, "datasource": askedBack.datasource,
                    "options": askedBack.options.map { ["value": $0.value, "label": $0.label] },
                ] as [String: Any]
        }
        if let answer {
            var shown: [String: Any] = [
                "title": answer.title, "summary": answer.summary, "engine": answer.engine, "datasource": answer.datasource, "sql": answer.sql,
                "columns": answer.columns.map { ["name": $0] },
                "rows": answer.rows.prefix(200).map { row in ["cells": row.map { ["value": ChartChoice.label($0)] }] },
                "truncated": answer.truncated, "chartKind": answer.chart.kind.rawValue,
            ]
            if answer.rows.count > 200 { shown["more"] = "\(answer.rows.count - 200) more rows not shown" }
            if let image = answer.imageName { shown["chart"] = "/images/" + image }
            // An administrator may keep a good answer as an example.
            let principal = access.principal(SignedInUser(user: user, session: session), role: roles[app])
            if access.permits("examples_create", principal: principal), let record = answer.recordID {
                shown["record"] = String(record)
            }
            values["answer"] = shown
        }
        return pages.render("ask", values)
    }
}

/// A question asked back under a refusal: the choices, each a button that asks the question again with it.
struct AskedBack {
    let question: String
    let datasource: String
    let options: [(value: String, label: String)]
}

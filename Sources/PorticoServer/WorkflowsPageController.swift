import Foundation
import Hummingbird
import PorticoAuth
import PorticoData
import PorticoJSON
import PorticoWorkflow

/// `/console/workflows`: an operator's view of the workflows of the apps they administer — each
/// workflow with its trigger, version and state (enable, disable), the recent executions with the
/// error of a failed step, and one execution node by node.
struct WorkflowsPageController: Sendable {
    let pages: WebPages
    let sessions: WebSessions
    let users: UserStore
    let workflows: WorkflowService
    let access: PageAccess

    /// The workflows page's routes on the console's signed-in group. Each action is the workflow
    /// tool it stands for, allowed by the registry's check for the user's role in that app.
    func addRoutes(to console: RouterGroup<PorticoRequestContext>) {
        console.get("workflows") { request, context in
            let signedIn = try context.requireSignedIn()
            let notice = Forms.first(Forms.query(request), "message").flatMap { ["enabled", "disabled"].contains($0) ? "The workflow is \($0)." : nil }
            return try await page(signedIn, message: notice)
        }
        for action in ["enable", "disable"] {
            console.post(RouterPath("workflows/{app}/{id}/\(action)")) { request, context in
                let app = try context.parameters.require("app")
                let id = try context.parameters.require("id", as: Int64.self)
                let signedIn = try context.requireSignedIn()
                let fields = try await Forms.fields(request)
                guard sessions.checkCSRF(Forms.first(fields, "csrf"), session: signedIn.session) else {
                    return pages.error(
                        "Form expired", "The form's security token is missing or wrong (CSRF); nothing was changed.", code: "csrf", status: .forbidden)
                }
                guard try await access.permits("workflows_update", signedIn, app: app) else { return forbidden(app) }
                do {
                    _ = try await workflows.update(
                        app: app, id: id, title: nil, trigger: nil, nodes: nil, enabled: action == "enable",
                        saver: .init(userID: signedIn.user.id, userName: signedIn.user.name, scopes: nil))
                } catch let error as DataError {
                    return try await page(signedIn, error: error.message)
                }
                return Forms.redirect("/console/workflows?message=\(action)d")
            }
        }
        console.get("workflows/{app}/executions/{id}") { request, context in
            let app = try context.parameters.require("app")
            let id = try context.parameters.require("id", as: Int64.self)
            guard try await access.permits("executions_get", try context.requireSignedIn(), app: app) else { return forbidden(app) }
            let execution = try await workflows.store.execution(app: app, id: id)
            let jobs = try await workflows.store.jobs(app: app, execution: id)
            return pages.render(
                "workflow-execution",
                [
                    "app": app, "id": execution.id, "workflow": execution.workflowID, "status": execution.status.rawValue,
                    "failed": execution.status == .failed, "error": execution.error ?? "",
                    "context": execution.context.serializedString, "created": WebPages.date(execution.createdAt / 1000),
                    "jobs": jobs.map { job in
                        [
                            "node": job.node, "type": job.type, "status": job.status, "failed": job.status == "failed",
                            "result": Self.short(job.status == "failed" ? job.result["error"] ?? job.result : job.result),
                        ] as [String: Any]
                    },
                ])
        }
    }

    func forbidden(_ app: String) -> Response {
        pages.error("Not yours to manage", "Only an administrator of app '\(app)' manages its workflows.", code: "forbidden", status: .forbidden)
    }

    /// A result as one line of at most 300 characters.
    static func short(_ value: JSON) -> String {
        let text = value.stringValue ?? value.serializedString
        return text.count > 300 ? String(text.prefix(300)) + "…" : text
    }

    func page(_ signedIn: SignedInUser, message: String? = nil, error: String? = nil) async throws -> Response {
        let (user, session) = signedIn.pair
        var apps: [[String: Any]] = []
        for (app, role) in try await users.roles(userID: user.id).sorted(by: { $0.key < $1.key })
        where access.permits("workflows_update", principal: access.principal(signedIn, role: role)) {
            let list = try await workflows.store.list(app: app)
            let executions = try await workflows.store.executions(app: app, workflowKey: nil, status: nil, limit: 20)
            let titles = Dictionary(list.map { ($0.key, $0.title) }, uniquingKeysWith: { a, _ in a })
            apps.append([
                "app": app, "hasWorkflows": !list.isEmpty, "hasExecutions": !executions.isEmpty,
                "workflows": list.map { workflow in
                    [
                        "id": workflow.id, "title": workflow.title, "trigger": Self.describe(workflow.definition.trigger), "version": workflow.version,
                        "enabled": workflow.enabled, "nodes": workflow.definition.allNodes.count, "app": app,
                    ] as [String: Any]
                },
                "executions": executions.map { execution in
                    [
                        "id": execution.id, "app": app, "workflow": titles[execution.workflowKey] ?? "workflow \(execution.workflowID)",
                        "status": execution.status.rawValue, "failed": execution.status == .failed, "error": execution.error ?? "",
                        "created": WebPages.date(execution.createdAt / 1000),
                    ] as [String: Any]
                },
            ])
        }
        return pages.render(
            "workflows",
            ["user": user.name, "csrf": sessions.csrfToken(for: session), "apps": apps, "hasApps": !apps.isEmpty, "message": message, "error": error])
    }

    static func describe(_ trigger: Trigger) -> String {
        switch trigger {
        case .collection(let collection, let on, let changed, _):
            return "after \(on.map(\.rawValue).joined(separator: "/")) of \(collection)"
                + (changed.isEmpty ? "" : " (\(changed.joined(separator: ", ")) changed)")
        case .cron(_, let expression, let timezone): return "schedule \(expression)" + (timezone.map { " \($0)" } ?? "")
        case .dateField(let collection, let field, let offset): return "when \(collection).\(field) \(offset >= 0 ? "+" : "")\(offset / 3600) h"
        case .manual: return "manual"
        case .beforeAction(let collection, let on): return "before \(on.map(\.rawValue).joined(separator: "/")) of \(collection)"
        }
    }
}

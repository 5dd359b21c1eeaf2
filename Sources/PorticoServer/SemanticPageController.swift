import Foundation
import Hummingbird
import PorticoAsk
import PorticoAskEngine
import PorticoAuth
import PorticoData
import PorticoJSON
import PorticoStore

/// `/console/semantic`: an app administrator's view of a datasource's semantic model — its
/// metrics with their SQL, dimensions, segments and relationships — and a form to try a metric
/// (by a dimension and a grain), which runs as `query_metric` does, through the administrator's role.
struct SemanticPageController: Sendable {
    let pages: WebPages
    let sessions: WebSessions
    let users: UserStore
    let asker: AskService
    let access: PageAccess

    func addRoutes(to console: RouterGroup<PorticoRequestContext>) {
        console.get("semantic") { request, context in
            let query = Forms.query(request)
            return try await page(try context.requireSignedIn(), app: Forms.first(query, "app"), datasource: Forms.first(query, "datasource"))
        }
        console.post("semantic/try") { request, context in
            let signedIn = try context.requireSignedIn()
            let fields = try await Forms.fields(request)
            guard sessions.checkCSRF(Forms.first(fields, "csrf"), session: signedIn.session) else {
                return pages.error(
                    "Form expired", "The form's security token is missing or wrong (CSRF). Reload the page and try again.", code: "csrf", status: .forbidden)
            }
            let app = Forms.first(fields, "app") ?? "main"
            let datasource = Forms.first(fields, "datasource") ?? "main"
            let principal = try await access.principal(signedIn, app: app)
            guard access.permits("query_metric", principal: principal), access.permits("metrics_create", principal: principal) else {
                return pages.error(
                    "Not yours to manage", "Only an administrator of app '\(app)' manages its semantic model.", code: "forbidden", status: .forbidden)
            }
            var query = MetricQuery(metrics: [Forms.first(fields, "metric") ?? ""])
            if let dimension = Forms.first(fields, "dimension"), !dimension.isEmpty { query.dimensions = [dimension] }
            query.grain = Forms.first(fields, "grain").flatMap(MetricQuery.Grain.init(rawValue:))
            query.limit = 50
            do {
                let caller = try await access.policy.queryCaller(principal, app: app, catalogs: asker.catalogs)
                let result = try await asker.semantic.query(app: app, datasource: datasource, query, caller: caller)
                return try await page(signedIn, app: app, datasource: datasource, tried: result)
            } catch let error as DatasourceError {
                return try await page(signedIn, app: app, datasource: datasource, error: error.message)
            } catch let error as SQLGuardError {
                return try await page(signedIn, app: app, datasource: datasource, error: error.message)
            } catch let error as StoreError {
                return try await page(signedIn, app: app, datasource: datasource, error: error.message)
            }
        }
    }

    func page(_ signedIn: SignedInUser, app wanted: String?, datasource wanted2: String?, tried: SemanticService.MetricAnswer? = nil, error: String? = nil)
        async throws -> Response
    {
        let (user, session) = signedIn.pair
        let roles = try await users.roles(userID: user.id)
        let apps = roles.keys.sorted().filter { access.permits("metrics_create", principal: access.principal(signedIn, role: roles[$0])) }
        var values: [String: Any] = ["user": user.name, "csrf": sessions.csrfToken(for: session), "hasApps": !apps.isEmpty, "error": error as Any]
        guard let app = wanted.flatMap({ apps.contains($0) ? $0 : nil }) ?? apps.first else { return pages.render("semantic", values) }
        let datasources = (try? await asker.datasources.list(app: app).map(\.name)) ?? ["main"]
        let datasource = wanted2.flatMap { datasources.contains($0) ? $0 : nil } ?? "main"
        let caller = try await access.policy.queryCaller(try await access.principal(signedIn, app: app), app: app, catalogs: asker.catalogs)
        let model = try await asker.semantic.model(app: app, datasource: datasource, caller: caller)
        func rows(_ kind: SemanticDefinition.Kind) -> [[String: Any]] {
            model.all(kind).map { d in
                var row: [String: Any] = ["name": d.name, "synonyms": d.synonyms.joined(separator: ", "), "description": d.description ?? ""]
                switch d.body {
                case .metric(let table, let sql, let filter):
                    row["sql"] = sql + " on " + table + (filter.map { " where " + $0 } ?? "")
                    row["format"] = d.format ?? ""
                case .derived(let expression):
                    row["sql"] = expression
                    row["format"] = d.format ?? ""
                case .dimension(let table, let sql, let time): row["sql"] = sql + " of " + table + (time ? " (time)" : "")
                case .segment(let table, let condition): row["sql"] = table + " where " + condition
                case .relationship(_, _, let oneToOne): row["sql"] = oneToOne ? "one to one" : "many to one"
                }
                return row
            }
        }
        values["app"] = app
        values["datasource"] = datasource
        values["apps"] = apps.map { ["name": $0, "selected": $0 == app] }
        values["datasources"] = datasources.map { ["name": $0, "selected": $0 == datasource, "app": app] }
        for kind in SemanticDefinition.Kind.allCases {
            values[kind.plural] = rows(kind)
            values["has" + kind.plural.capitalized] = !model.all(kind).isEmpty
        }
        values["grains"] = MetricQuery.Grain.allCases.map(\.rawValue)
        if let tried {
            values["tried"] =
                [
                    "sql": tried.answer.sql, "columns": tried.answer.columns,
                    "rows": tried.answer.rows.map { row in ["cells": row.map { $0.json.stringValue ?? $0.json.serializedString }] },
                    "used": (tried.compiled.metrics + tried.compiled.dimensions).map { "\($0.kind.rawValue) \($0.name)" }.joined(separator: ", "),
                ] as [String: Any]
        }
        return pages.render("semantic", values)
    }
}

import ArgumentParser
import Foundation
import PorticoData
import PorticoInstance
import PorticoJSON

struct AuditCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit",
        abstract: "Show an app's audit trail: every tool call, newest first (time, principal, client, tool, outcome, duration, argument digest).")

    @OptionGroup var common: CommonOptions
    @Option(help: "The app (default main).") var app = "main"
    @Option(help: "Only calls since this time: an ISO date or date-time (UTC), or milliseconds since 1970.") var since: String?
    @Option(help: "Only calls by this user (or OAuth client) name.") var principal: String?
    @Option(help: "Only calls of this tool.") var tool: String?
    @Option(help: "At most this many calls (default 100).") var limit = 100
    @Flag(help: "One JSON object per line instead of a table.") var json = false

    func run() async throws {
        var query = AuditTrail.Query(principal: principal, tool: tool, limit: limit)
        if let since {
            guard let ms = AuditTrail.parseSince(since) else {
                throw ValidationError("--since takes an ISO date such as 2026-11-23 or 2026-11-23T10:00:00Z, or milliseconds since 1970")
            }
            query.since = ms
        }
        guard (1...10_000).contains(limit) else { throw ValidationError("--limit is between 1 and 10000") }
        let records: [ToolCallRecord] = try await common.withStores { stores in
            guard try await stores.apps.names().contains(app) else { throw ValidationError("there is no app '\(app)'") }
            return try await AuditTrail(databases: stores.apps.databases, logger: try common.makeLogger()).read(app: app, query)
        }
        if json {
            for record in records { print(record.json.serializedString) }
            return
        }
        let formatter = ISO8601DateFormatter()
        for r in records {
            let time = formatter.string(from: Date(timeIntervalSince1970: Double(r.at) / 1000))
            print(
                "\(time)  \(r.principal)  \(r.tool)  \(r.outcome)  \(r.durationMilliseconds) ms  \(r.client)  \(r.credential)  \(r.argumentsDigest.prefix(16))")
        }
        if records.isEmpty { print("No tool calls recorded\(since.map { " since \($0)" } ?? "") in app \(app).") }
    }
}

import Foundation
import FuzzSupport
import PorticoJSON

@testable import PorticoWorkflow

FuzzSupport.run { data, size in fuzzWorkflow(data!, size) }

/// libFuzzer target: workflow definitions as `workflows_create` reads them (`{trigger, nodes}`),
/// then what a run does with their text before any database is touched: each condition judged,
/// each filter, key, URL and body resolved over a hostile record, each calculation evaluated.
/// Everything is a value or a `WorkflowError`; nothing may end the process.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzWorkflow(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let json = FuzzSupport.json(data, size), case .object(let object) = json else { return 0 }
    guard let definition = try? WorkflowDefinition(trigger: object["trigger"] ?? .null, nodes: object["nodes"] ?? .array([])) else { return 0 }
    let variables = Hostile.variables
    let matcher = FilterMatcher(variables: variables)
    if case .collection(_, _, _, let condition?) = definition.trigger { _ = try? matcher.matches(condition) }
    for node in definition.allNodes {
        let config = node.config
        switch node.type {
        case .condition: _ = try? matcher.matches(config["filter"] ?? [:])
        case .calculation: _ = try? Calculation(config["expression"]?.stringValue ?? "").evaluate(variables)
        case .query, .update, .destroy:
            if let filter = config["filter"] { _ = try? variables.resolveFilter(filter) }
            if let key = config["filterByTk"] { _ = try? variables.operand(key) }
            _ = try? variables.resolve(config["values"] ?? .null)
        case .request:
            _ = try? variables.resolveURL(config["url"]?.stringValue ?? "")
            if let body = config["body"] {
                _ = try? WorkflowEngine.body(body, variables: variables, headers: ["Content-Type": "application/x-www-form-urlencoded"])
            }
        default:
            _ = try? variables.resolve(.object(config))
        }
    }
    return 0
}

enum Hostile {
    static let variables = Variables(
        context: [
            "data": [
                "big": 1e300, "max": .int(.max), "min": .int(.min), "text": "1e300", "nan": "nan", "object": ["$ne": "x"], "list": [1, ["$eq": 2]],
                "name": "Ada", "date": "2026-11-27 10:00:00",
            ]
        ], jobs: ["q": ["total": 2.5]], now: Date(timeIntervalSince1970: 1_795_000_000))
}

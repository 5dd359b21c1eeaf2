import ArgumentParser
import Foundation
import PorticoAsk
import PorticoData
import PorticoInstance
import PorticoJSON
import PorticoWorkflow

extension CommonOptions {
    /// The workflows of the instance (`withInstance`), with the question service their sql and ask
    /// nodes use: a less sure reading is refused where no one can pick it, as the server runs them.
    func withWorkflows<T>(_ body: (WorkflowService) async throws -> T) async throws -> T {
        try await withInstance { try await body($0.workflows) }
    }
}

/// `portico workflow list|show|enable|disable|run`: an operator's view of an app's automations.
struct WorkflowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "workflow", abstract: "List, inspect, enable, disable and run an app's workflows (agents build them with the workflow tools).",
        subcommands: [List.self, Show.self, Enable.self, Disable.self, Run.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The app's workflows: id, enabled, trigger, version, title.")
        @OptionGroup var common: CommonOptions
        @Option(help: "The app (default main).") var app: String = "main"
        @Flag(help: "One JSON object per workflow.") var json = false

        func run() async throws {
            let workflows = try await common.withStores { stores in
                try await stores.workflowStore.list(app: app)
            }
            if workflows.isEmpty, !json { print("App \(app) has no workflows.") }
            for workflow in workflows {
                if json {
                    print(workflow.json.serializedString)
                } else {
                    print(
                        "\(workflow.id)\t\(workflow.enabled ? "enabled" : "disabled")\t\(workflow.definition.trigger.type)\tv\(workflow.version)\t\(workflow.title)"
                    )
                }
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "One workflow as JSON, with its recent executions.")
        @OptionGroup var common: CommonOptions
        @Argument(help: "The workflow's id.") var id: Int64
        @Option(help: "The app (default main).") var app: String = "main"

        func run() async throws {
            let (workflow, executions) = try await common.withStores { stores in
                let store = stores.workflowStore
                let workflow = try await store.get(app: app, id: id)
                return (workflow, try await store.executions(app: app, workflowKey: workflow.key, status: nil, limit: 10))
            }
            var object = workflow.json.objectValue ?? [:]
            object["executions"] = .array(executions.map { $0.json() })
            print(JSON.object(object).serializedString)
        }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Enable a workflow: its trigger starts it from now on.")
        @OptionGroup var common: CommonOptions
        @Argument(help: "The workflow's id.") var id: Int64
        @Option(help: "The app (default main).") var app: String = "main"

        func run() async throws {
            try await WorkflowCommand.set(enabled: true, id: id, app: app, common: common)
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Disable a workflow; executions already started go on.")
        @OptionGroup var common: CommonOptions
        @Argument(help: "The workflow's id.") var id: Int64
        @Option(help: "The app (default main).") var app: String = "main"

        func run() async throws {
            try await WorkflowCommand.set(enabled: false, id: id, app: app, common: common)
        }
    }

    static func set(enabled: Bool, id: Int64, app: String, common: CommonOptions) async throws {
        let workflow = try await common.withWorkflows { service in
            try await service.update(
                app: app, id: id, title: nil, trigger: nil, nodes: nil, enabled: enabled, saver: .init(userID: nil, userName: nil, scopes: nil))
        }
        print("Workflow \(workflow.id) (\(workflow.title)) is \(enabled ? "enabled" : "disabled").")
    }

    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Start a run of a workflow now and run what waits in the app here, until it ends or waits on a delay.",
            discussion: "With --queue-only the run is left to the server. Prints the execution with its jobs as JSON.")
        @OptionGroup var common: CommonOptions
        @Argument(help: "The workflow's id.") var id: Int64
        @Option(help: "The app (default main).") var app: String = "main"
        @Option(help: "The run's context ({{$context.data}}) as a JSON object.") var context: String?
        @Flag(help: "Only queue the run; a running server runs it.") var queueOnly = false

        func run() async throws {
            var data: JSON = [:]
            if let context {
                guard let parsed = try? JSONParser.parse(context), parsed.objectValue != nil else {
                    throw ValidationError("--context must be a JSON object, e.g. '{\"id\": 12}'")
                }
                data = parsed
            }
            let shown = try await common.withWorkflows { service in
                let execution = try await service.trigger(app: app, id: id, context: data, by: .init(userID: nil, userName: nil, scopes: nil))
                if !queueOnly { try await service.engine.drain(app: app) }
                return try await service.execution(app: app, id: execution.id)
            }
            print(shown.serializedString)
        }
    }
}

/// `portico execution list|show|cancel`: what the workflows did, step by step, and a stop for
/// one that should not go on.
struct ExecutionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "execution", abstract: "List workflow executions, show one with each node's job, cancel one.",
        subcommands: [List.self, Show.self, Cancel.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Recent executions, newest first: id, status, workflow, created, error.")
        @OptionGroup var common: CommonOptions
        @Option(help: "The app (default main).") var app: String = "main"
        @Option(help: "Only this workflow's (its id).") var workflow: Int64?
        @Option(help: "Only this status: queued, running, resolved, failed or canceled.") var status: String?
        @Option(help: "How many (default 50).") var limit: Int = 50

        func run() async throws {
            var wanted: Execution.Status?
            if let status {
                guard let parsed = Execution.Status(rawValue: status) else {
                    throw ValidationError("--status is one of \(Execution.Status.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                wanted = parsed
            }
            let executions = try await common.withStores { stores in
                let store = stores.workflowStore
                var key: String?
                if let workflow { key = try await store.get(app: app, id: workflow).key }
                return try await store.executions(app: app, workflowKey: key, status: wanted, limit: max(1, min(limit, 1000)))
            }
            for e in executions {
                let created = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: TimeInterval(e.createdAt) / 1000))
                print("\(e.id)\t\(e.status.rawValue)\tworkflow \(e.workflowID)\t\(created)\t\(e.error ?? "")")
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "One execution as JSON, with each node's job (status and result or error).")
        @OptionGroup var common: CommonOptions
        @Argument(help: "The execution's id.") var id: Int64
        @Option(help: "The app (default main).") var app: String = "main"

        func run() async throws {
            let shown = try await common.withStores { stores in
                let store = stores.workflowStore
                let execution = try await store.execution(app: app, id: id)
                return execution.json(jobs: try await store.jobs(app: app, execution: id))
            }
            print(shown.serializedString)
        }
    }

    struct Cancel: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Cancel a queued or running execution: no replica takes it up again, and one running it stops before its next node.")
        @OptionGroup var common: CommonOptions
        @Argument(help: "The execution's id.") var id: Int64
        @Option(help: "The app (default main).") var app: String = "main"

        func run() async throws {
            let execution = try await common.withStores { stores in try await stores.workflowStore.cancel(app: app, id: id) }
            print("Execution \(execution.id) is \(execution.status.rawValue).")
        }
    }
}

import ArgumentParser
import PorticoAsk
import PorticoAuth
import PorticoBase
import PorticoData
import PorticoInstance
import PorticoStore

/// `portico datasource add|list|remove`: the external databases an app's questions and SQL can
/// read, besides its own (`main`).
struct DatasourceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "datasource", abstract: "Manage the datasources questions and SQL are run on (`main`, the app's own data, always exists).",
        subcommands: [Add.self, List.self, Remove.self, Limit.self, Instructions.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register an SQLite file or a PostgreSQL database as a datasource; it is always opened read-only.")
        @OptionGroup var common: CommonOptions
        @Option(help: "The datasource's name (letters, digits, - and _).") var name: String
        @Option(help: "Path of an SQLite file.") var sqlite: String?
        @Option(help: "A PostgreSQL URL, postgres://user:password@host:5432/database (stored sealed with the master key).") var postgres: String?
        @Option(help: "A MySQL or MariaDB URL, mysql://user:password@host:3306/database (stored sealed with the master key; read-only).")
        var mysql: String?
        @Option(help: "The app it belongs to (default main).") var app: String = "main"
        @Option(help: "A short description shown to agents.") var description: String?
        @Option(help: "PostgreSQL only: refuse a query whose estimated cost (EXPLAIN's units) is above this, before it runs.") var maxCost: Double?

        func run() async throws {
            guard [sqlite, postgres, mysql].compactMap({ $0 }).count == 1 else {
                throw ValidationError("give exactly one of --sqlite PATH, --postgres URL or --mysql URL")
            }
            try await common.withDatasources(app: app) { store in
                if let sqlite {
                    try await store.add(app: app, name: name, kind: .sqlite, location: sqlite, description: description, maxCost: maxCost)
                } else if let postgres {
                    try await store.add(app: app, name: name, kind: .postgres, location: postgres, description: description, maxCost: maxCost)
                } else if let mysql {
                    try await store.add(app: app, name: name, kind: .mysql, location: mysql, description: description, maxCost: maxCost)
                }
            }
            print("Added datasource \(name) to app \(app).")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List an app's datasources.")
        @OptionGroup var common: CommonOptions
        @Option(help: "The app (default main).") var app: String = "main"

        func run() async throws {
            let all = try await common.withDatasources(app: app) { try await $0.list(app: app) }
            print("main\tsqlite\tthe app's own collections")
            for datasource in all {
                print("\(datasource.name)\t\(datasource.kind.rawValue)\t\(datasource.displayLocation)" + (datasource.description.map { "\t\($0)" } ?? ""))
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a datasource (the database itself is not touched).")
        @OptionGroup var common: CommonOptions
        @Argument(help: "The datasource's name.") var name: String
        @Option(help: "The app (default main).") var app: String = "main"

        func run() async throws {
            let removed = try await common.withDatasources(app: app) { try await $0.remove(app: app, name: name) }
            guard removed else { throw ValidationError("app '\(app)' has no datasource '\(name)'") }
            print("Removed datasource \(name) from app \(app).")
        }
    }
}

extension DatasourceCommand {
    struct Limit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set or clear the cost above which a PostgreSQL datasource refuses a query (sql_query, ask) before it runs.")
        @OptionGroup var common: CommonOptions
        @Argument(help: "The datasource.") var name: String
        @Option(help: "The largest estimated cost allowed (EXPLAIN's units).") var maxCost: Double?
        @Flag(help: "Remove the limit.") var clear = false
        @Option(help: "The app (default main).") var app: String = "main"

        func run() async throws {
            guard (maxCost == nil) != !clear else { throw ValidationError("give --max-cost N or --clear") }
            try await common.withDatasources(app: app) { try await $0.setMaxCost(app: app, name: name, maxCost: clear ? nil : maxCost) }
            print(clear ? "Removed the cost limit of \(name)." : "Queries on \(name) above an estimated cost of \(maxCost ?? 0) are refused.")
        }
    }

    struct Instructions: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show, set or clear the instructions an LLM is given with a datasource's schema (\"amounts are in cents\", ...).")
        @OptionGroup var common: CommonOptions
        @Argument(help: "The datasource (main is the app's own collections).") var name: String
        @Option(help: "The new instructions.") var set: String?
        @Flag(help: "Remove the instructions.") var clear = false
        @Option(help: "The app (default main).") var app: String = "main"

        func run() async throws {
            guard set == nil || !clear else { throw ValidationError("give --set TEXT or --clear, not both") }
            let text = try await common.withAsker { asker -> String? in
                // The datasource must exist: its schema is read.
                _ = try await asker.datasources.schema(app: app, datasource: name)
                if set != nil || clear {
                    try await asker.knowledge.store.setInstructions(app: app, datasource: name, text: clear ? nil : set, by: nil)
                }
                return try await asker.knowledge.store.instructions(app: app, datasource: name)
            }
            if set != nil || clear { print(clear ? "Cleared the instructions of \(name)." : "Set the instructions of \(name).") } else { print(text ?? "") }
        }
    }
}

extension CommonOptions {
    /// The datasource registry of this data directory, for an app that must exist.
    func withDatasources<T>(app: String, _ body: (DatasourceStore) async throws -> T) async throws -> T {
        try await withStores { stores in
            guard try await stores.apps.names().contains(app) else { throw ValidationError("there is no app named '\(app)'") }
            let masterKey = try masterKey()
            do {
                return try await body(DatasourceStore(database: stores.database, masterKey: masterKey))
            } catch let error as DatasourceError {
                throw ValidationError(error.message)
            }
        }
    }
}

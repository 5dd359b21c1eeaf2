import ArgumentParser
import Foundation
import Logging
import PorticoAuth
import PorticoBase
import PorticoData
import PorticoInstance
import Synchronization

/// `portico`: the server and its administration commands.
struct Portico: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "portico",
        abstract: "Opens an organisation's data to AI agents over the Model Context Protocol.",
        discussion: "Every option can also be set in the environment as PORTICO_<OPTION>, e.g. PORTICO_PORT=9000 or PORTICO_DATA_DIR=/var/lib/portico.",
        version: porticoVersion,
        subcommands: [
            Serve.self, UserCommand.self, APIKeyCommand.self, AppCommand.self, KeysCommand.self, DatasourceCommand.self, LLMCommand.self, AskCommand.self,
            TermCommand.self, ExampleCommand.self, SemanticCommand.self, WorkflowCommand.self, ExecutionCommand.self,
            EvalCommand.self, MigrateCommand.self, ExportCommand.self, ImportCommand.self, AuditCommand.self,
        ],
        defaultSubcommand: nil)
}

/// Options every command shares.
struct CommonOptions: ParsableArguments {
    @Option(name: .customLong("data-dir"), help: "Directory of the embedded database (env PORTICO_DATA_DIR; default ./portico-data).")
    var dataDir: String?

    @Option(
        name: .customLong("database-url"),
        help:
            "PostgreSQL to keep Portico's data in instead of the embedded database, e.g. postgres://portico:secret@db:5432/portico?sslmode=require (env PORTICO_DATABASE_URL)."
    )
    var databaseURL: String?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical (env PORTICO_LOG_LEVEL; default info).")
    var logLevel: String?

    var resolvedDataDir: String { dataDir ?? Environment.string("PORTICO_DATA_DIR") ?? "./portico-data" }

    var resolvedDatabaseURL: String? { databaseURL ?? Environment.string("PORTICO_DATABASE_URL") }

    /// The instance these options name: its data directory, its database and its master key
    /// (`PORTICO_MASTER_KEY`, else the data directory's key file). `serve` adds its own settings.
    var instance: InstanceConfiguration {
        var configuration = InstanceConfiguration()
        configuration.dataDirectory = resolvedDataDir
        configuration.databaseURL = resolvedDatabaseURL
        configuration.masterKey = Environment.string("PORTICO_MASTER_KEY")
        return configuration
    }

    /// The instance's master key, loaded as the server loads it.
    func masterKey() throws -> MasterKey {
        try instance.loadMasterKey()
    }

    func makeLogger(label: String = "portico") throws -> Logger {
        let levelName = logLevel ?? Environment.string("PORTICO_LOG_LEVEL") ?? "info"
        guard let level = Logger.Level(rawValue: levelName) else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical; got '\(levelName)'")
        }
        LoggingSystem.bootstrapOnce { label in LineLogHandler(label: label, level: level) }
        var logger = Logger(label: label)
        logger.logLevel = level
        return logger
    }

    /// Opens the instance's stores as the instance opens them, runs `body`, and closes the
    /// database whether or not it threw: for commands that read or change stored state only.
    func withStores<T>(migrate: Bool = true, _ body: (PorticoStores) async throws -> T) async throws -> T {
        let logger = try makeLogger()
        let stores = try await PorticoStores.open(instance, migrate: migrate, logger: logger)
        return try await Self.closing(stores, close: { await $0.close() }, body)
    }

    /// Opens the instance these options name, as `serve` opens it but without listeners or
    /// background work, runs `body` with its services (questions, workflows), and closes it
    /// whether or not `body` threw. Tool calls are audited, a command's work is not.
    func withInstance<T>(_ body: (PorticoInstance) async throws -> T) async throws -> T {
        let logger = try makeLogger()
        var configuration = instance
        configuration.askSureOnly = try Self.askSureOnly()
        configuration.auditRetentionDays = 0
        let opened = try await PorticoInstance.open(configuration, logger: logger)
        return try await Self.closing(opened, close: { await $0.close() }, body)
    }

    /// Runs `body` with `resource` and closes it afterwards, whether or not `body` threw.
    private static func closing<Resource, T>(
        _ resource: Resource, close: (Resource) async -> Void, _ body: (Resource) async throws -> T
    ) async throws -> T {
        do {
            let result = try await body(resource)
            await close(resource)
            return result
        } catch {
            await close(resource)
            throw error
        }
    }
}

enum Environment {
    static func string(_ name: String) -> String? {
        guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else { return nil }
        return value
    }

    static func int(_ name: String) throws -> Int? {
        guard let text = string(name) else { return nil }
        guard let value = Int(text) else { throw ValidationError("\(name) must be a whole number, got '\(text)'") }
        return value
    }

    static func bool(_ name: String) -> Bool {
        guard let text = string(name)?.lowercased() else { return false }
        return ["1", "true", "yes", "on"].contains(text)
    }

    /// A switch that is on unless turned off: nil when unset, so its default holds.
    static func optionalBool(_ name: String) throws -> Bool? {
        guard let text = string(name)?.lowercased() else { return nil }
        if ["1", "true", "yes", "on"].contains(text) { return true }
        if ["0", "false", "no", "off"].contains(text) { return false }
        throw ValidationError("\(name) must be 1 or 0 (true or false), got '\(text)'")
    }
}

extension LoggingSystem {
    private static let once = OnceFlag()

    static func bootstrapOnce(_ factory: @escaping @Sendable (String) -> any LogHandler) {
        if once.claim() { bootstrap(factory) }
    }
}

final class OnceFlag: Sendable {
    private let done = Atomic<Bool>(false)

    /// True for the first caller only.
    func claim() -> Bool {
        done.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
    }
}

/// Parses durations such as `3600`, `90m`, `12h`, `30d`, `1y` into seconds.
func parseDuration(_ text: String) throws -> Int64 {
    let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604_800, "y": 31_536_000]
    var digits = text
    var multiplier: Int64 = 1
    if let last = text.last, let unit = units[last] {
        digits = String(text.dropLast())
        multiplier = unit
    }
    guard let value = Int64(digits), value > 0 else {
        throw ValidationError("'\(text)' is not a duration: use a number of seconds or a number with s, m, h, d, w or y, like 30d")
    }
    let (seconds, overflow) = value.multipliedReportingOverflow(by: multiplier)
    guard !overflow, seconds <= 100 * 31_536_000 else {
        throw ValidationError("'\(text)' is longer than 100 years; give a shorter duration")
    }
    return seconds
}

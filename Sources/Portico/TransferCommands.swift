import ArgumentParser
import Foundation
import PorticoData
import PorticoInstance
import PorticoStore

/// `portico migrate`: shows (by default) or applies the schema migrations a database lacks.
/// `serve` applies them at start anyway, once, under a lock; this is for upgrades done by hand.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate", abstract: "Show the schema migrations the database lacks; --apply applies them.",
        discussion: "Without --apply nothing changes (a dry run). `portico serve` applies pending migrations at start, once even when replicas start together.")
    @OptionGroup var common: CommonOptions
    @Flag(help: "Apply the pending migrations.") var apply = false

    func run() async throws {
        try await common.withStores(migrate: false) { stores in
            let pending = try await Migrator().pending(stores.database)
            if pending.isEmpty {
                print("The database is up to date (migration \(Migrator.core.map(\.version).max() ?? 0)).")
                return
            }
            for migration in pending { print("\(apply ? "applying" : "pending")\t\(migration.version)\t\(migration.name)") }
            guard apply else {
                print("\(pending.count) pending; run again with --apply to apply them.")
                return
            }
            let applied = try await Migrator().migrate(stores.database)
            print("Applied \(applied.count) migrations.")
        }
    }
}

/// `portico export FILE`: the whole instance as JSON lines.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Write the whole instance (users, keys, applications, collections with their rows, ...) to a file.",
        discussion:
            "Move a laptop's instance to PostgreSQL with `portico export all.jsonl --data-dir ./portico-data` then `portico import all.jsonl --database-url postgres://...`, and serve the target with the same master key (PORTICO_MASTER_KEY=$(cat ./portico-data/master.key)). Secrets stay hashed or sealed."
    )
    @OptionGroup var common: CommonOptions
    @Argument(help: "The file to write ('-' for standard output).") var file: String

    func run() async throws {
        let handle: FileHandle
        if file == "-" {
            handle = FileHandle.standardOutput
        } else {
            guard FileManager.default.createFile(atPath: file, contents: nil, attributes: [.posixPermissions: 0o600]),
                let opened = FileHandle(forWritingAtPath: file)
            else { throw ValidationError("cannot write \(file)") }
            handle = opened
        }
        let summary = try await common.withStores { stores in
            try await InstanceTransfer.export(stores) { line in handle.write(Data((line + "\n").utf8)) }
        }
        if file != "-" { try handle.close() }
        FileHandle.standardError.write(Data("Exported \(summary.rows) rows of \(summary.tables) tables.\n".utf8))
    }
}

/// `portico import FILE`: loads an export into an empty database.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import", abstract: "Load an instance written by `portico export` into a new, empty database.",
        discussion: "All or nothing. The target is migrated first; it must have no users and no collections yet.")
    @OptionGroup var common: CommonOptions
    @Argument(help: "The file written by `portico export`.") var file: String

    func run() async throws {
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { throw ValidationError("cannot read \(file)") }
        let summary = try await common.withStores { stores in
            try await InstanceTransfer.importing(stores, lines: text.split(separator: "\n", omittingEmptySubsequences: true).lazy.map(String.init))
        }
        print("Imported \(summary.rows) rows of \(summary.tables) tables.")
    }
}

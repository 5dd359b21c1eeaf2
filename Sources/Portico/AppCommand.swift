import ArgumentParser
import Foundation
import PorticoAuth
import PorticoBase
import PorticoData
import PorticoDemo
import PorticoInstance
import PorticoJSON
import PorticoTools

struct AppCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "app", abstract: "Manage apps (isolated tenants; `main` always exists).",
        subcommands: [Create.self, List.self, Remove.self, Packages.self, Confirmations.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create an app, served at /api/__app/<name>/mcp.")
        @OptionGroup var common: CommonOptions
        @Argument(help: "The app name (lower-case ASCII letters, digits, - and _).") var name: String
        @Option(help: "A user to make the app's admin.") var admin: String?
        @Flag(help: "Fill the new app with the Chinook sample collections.") var demo = false
        @Option(help: "Offer only these tool packages on its endpoint, comma-separated (default: all).") var packages: String?

        func run() async throws {
            do throws(DataError) { try AppRegistry.validateName(name) } catch { throw ValidationError(error.message) }
            try await common.withStores { stores in
                guard try await !stores.apps.names().contains(name) else { throw ValidationError("app '\(name)' already exists") }
                let offered = try packages.map { list in try ToolInventory.valid(list.split(separator: ",").map { $0.trimmingSpaces() }) }
                try await stores.apps.create(name)
                if let offered { try await stores.apps.setOfferedPackages(name, offered) }
                if demo { try await DemoData.install(app: name, catalogs: stores.catalogs, logger: try common.makeLogger()) }
                if let admin {
                    guard let user = try await stores.users.find(name: admin) else { throw ValidationError("there is no user named '\(admin)'") }
                    try await stores.users.setRole(app: name, userID: user.id, role: .admin, by: .operator)
                }
            }
            print("Created app \(name); its MCP endpoint is /api/__app/\(name)/mcp.")
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove an app with its database (every collection and row in it), memberships, datasources and chats.")
        @OptionGroup var common: CommonOptions
        @Argument(help: "The app to remove.") var name: String
        @Flag(help: "Remove it even though users still belong to it.") var force = false

        func run() async throws {
            guard name != "main" else { throw ValidationError("app 'main' always exists and cannot be removed") }
            try await common.withStores { stores in
                guard try await stores.apps.names().contains(name) else {
                    throw ValidationError("there is no app named '\(name)'; `portico app list` shows them")
                }
                let members = try await stores.apps.memberCount(app: name)
                guard members == 0 || force else {
                    throw ValidationError("app '\(name)' still has \(members) member(s); remove them first, or pass --force to remove the app with them")
                }
                try await stores.apps.remove(name)
            }
            print("Removed app \(name) and its database.")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List apps.")
        @OptionGroup var common: CommonOptions

        func run() async throws {
            let apps = try await common.withStores { try await $0.apps.offeredPackages() }
            for name in apps.keys.sorted() {
                if let packages = apps[name] ?? nil { print("\(name)\tpackages: \(packages.joined(separator: ","))") } else { print(name) }
            }
        }
    }

    struct Packages: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show or restrict the tool packages an app's endpoint offers (x-mcp-packages and ?packages= only narrow them).")
        @OptionGroup var common: CommonOptions
        @Argument(help: "The app.") var name: String
        @Option(help: "Offer only these packages, comma-separated (\(ToolInventory.names.joined(separator: ", "))).") var set: String?
        @Flag(help: "Offer every package again.") var all = false

        func run() async throws {
            guard set == nil || !all else { throw ValidationError("give --set or --all, not both") }
            let offered: [String]? = try await common.withStores { stores in
                guard try await stores.apps.names().contains(name) else { throw ValidationError("there is no app named '\(name)'") }
                if let set {
                    try await stores.apps.setOfferedPackages(name, try ToolInventory.valid(set.split(separator: ",").map { $0.trimmingSpaces() }))
                } else if all {
                    try await stores.apps.setOfferedPackages(name, nil)
                }
                return try await stores.apps.offeredPackages()[name] ?? nil
            }
            print("App \(name) offers: \((offered ?? ToolInventory.names).joined(separator: ", "))\(offered == nil ? " (all)" : "")")
        }
    }

    struct Confirmations: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show, or turn off or on, the question an app's destructive tools ask before they act (off: for trusted automation).")
        @OptionGroup var common: CommonOptions
        @Argument(help: "The app.") var name: String
        @Flag(help: "Destroy without asking (a client's confirm argument is then not needed).") var off = false
        @Flag(help: "Ask again before destroying (the default).") var on = false

        func run() async throws {
            guard !(off && on) else { throw ValidationError("give --off or --on, not both") }
            let asks: Bool = try await common.withStores { stores in
                guard try await stores.apps.names().contains(name) else { throw ValidationError("there is no app named '\(name)'") }
                if off || on { try await stores.apps.setConfirmsDestroy(name, on) }
                return try await stores.apps.confirmsDestroy(name)
            }
            print("App \(name): destructive tools \(asks ? "ask before they act" : "act without asking")")
        }
    }
}

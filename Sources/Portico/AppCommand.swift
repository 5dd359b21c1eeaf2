import ArgumentParser
import Foundation
import PorticoAuth
import PorticoData
import PorticoServer

struct AppCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "app", abstract: "Manage apps (isolated tenants; `main` always exists).", subcommands: [Create.self, List.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create an app, served at /api/__app/<name>/mcp.")
        @OptionGroup var common: CommonOptions
        @Argument(help: "The app name (letters, digits, - and _).") var name: String
        @Option(help: "A user to make the app's admin.") var admin: String?

        func run() async throws {
            guard (1...64).contains(name.count), name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
                throw ValidationError("an app name is 1 to 64 letters, digits, '-' or '_'")
            }
            try await common.withStores { stores in
                guard try await !stores.appNames().contains(name) else { throw ValidationError("app '\(name)' already exists") }
                try await stores.createApp(name)
                if let admin {
                    guard let user = try await stores.users.find(name: admin) else { throw ValidationError("there is no user named '\(admin)'") }
                    try await stores.users.setRole(app: name, userID: user.id, role: .admin)
                }
            }
            print("Created app \(name); its MCP endpoint is /api/__app/\(name)/mcp.")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List apps.")
        @OptionGroup var common: CommonOptions

        func run() async throws {
            for name in try await common.withStores({ try await $0.appNames() }) { print(name) }
        }
    }
}

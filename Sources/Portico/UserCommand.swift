import ArgumentParser
import Foundation
import PorticoAuth
import PorticoBase
import PorticoData
import PorticoInstance

struct UserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user", abstract: "Manage users.", subcommands: [Create.self, List.self, SetPassword.self, SetRole.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a user with a role in an app.")

        @OptionGroup var common: CommonOptions
        @Argument(help: "The user name (letters, digits, . _ - @).") var name: String
        @Option(help: "Email address.") var email: String?
        @Option(help: "Role in the app: admin, member or viewer (default member).") var role: String = "member"
        @Option(help: "The app to give the role in (default main).") var app: String = "main"
        @Flag(name: .customLong("password-stdin"), help: "Read the password from the first line of standard input instead of generating one.")
        var passwordStdin = false

        func run() async throws {
            let password = passwordStdin ? try readPassword() : Secrets.random(20)
            let user = try await common.withStores { stores in
                try await report { try await stores.users.create(name: name, email: email, password: password, app: app, role: Role(name: role)) }
            }
            print("Created user \(user.name) (id \(user.id)) with role \(role) in app \(app).")
            if !passwordStdin { print("Password (shown once): \(password)") }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List users and their roles.")
        @OptionGroup var common: CommonOptions

        func run() async throws {
            for (user, roles) in try await common.withStores({ try await $0.users.list() }) {
                let roleText = roles.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value.name)" }.joined(separator: ",")
                print("\(user.id)\t\(user.name)\t\(user.email ?? "-")\t\(roleText.isEmpty ? "-" : roleText)\(user.disabled ? "\tdisabled" : "")")
            }
        }
    }

    struct SetPassword: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "set-password", abstract: "Set a user's password (generated unless --password-stdin).")
        @OptionGroup var common: CommonOptions
        @Argument(help: "The user name.") var name: String
        @Flag(name: .customLong("password-stdin"), help: "Read the password from the first line of standard input.") var passwordStdin = false

        func run() async throws {
            let password = passwordStdin ? try readPassword() : Secrets.random(20)
            try await common.withStores { stores in
                try await report { try await stores.users.setPassword(name: name, password: password) }
            }
            print("Password of \(name) changed.")
            if !passwordStdin { print("New password (shown once): \(password)") }
        }
    }
}

extension UserCommand {
    struct SetRole: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-role",
            abstract: "Give a user a role in an app, adding them to it: the operator's action, which needs no invitation (an app's admins invite).")
        @OptionGroup var common: CommonOptions
        @Argument(help: "The user name.") var name: String
        @Option(help: "The app (default main).") var app: String = "main"
        @Option(help: "The role: admin, member, viewer or one of the app's own.") var role: String

        func run() async throws {
            try await common.withStores { stores in
                guard let user = try await stores.users.find(name: name) else { throw ValidationError("there is no user named '\(name)'") }
                guard try await stores.apps.names().contains(app) else {
                    throw ValidationError("there is no app named '\(app)'; `portico app list` shows them")
                }
                _ = try await report { try await stores.roles.assign(app: app, userID: user.id, name: role, by: .operator) }
            }
            print("\(name) is \(role) in app \(app).")
        }
    }
}

func readPassword() throws -> String {
    guard let line = readLine(strippingNewline: true), !line.isEmpty else {
        throw ValidationError("--password-stdin: standard input had no password")
    }
    return line
}

/// Runs a store call, turning the caller's mistakes into a clear message instead of a trace.
func report<T>(_ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let error as DataError {
        throw ValidationError(error.message)
    }
}

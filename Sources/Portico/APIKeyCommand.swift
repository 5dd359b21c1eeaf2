import ArgumentParser
import Foundation
import PorticoAuth
import PorticoData
import PorticoInstance

struct APIKeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apikey", abstract: "Manage API keys.", subcommands: [Create.self, List.self, Revoke.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create an API key for a user; the key is printed alone on the last line of standard output.")

        @OptionGroup var common: CommonOptions
        @Option(help: "The user the key acts as.") var user: String
        @Option(help: "A label for the key (default cli).") var name: String = "cli"
        @Option(help: "Narrow the key to these scopes, space- or comma-separated, e.g. \"read:data\" (default: everything the user's role allows).")
        var scopes: String?
        @Option(name: .customLong("expires-in"), help: "Lifetime such as 3600, 90m, 12h, 30d or 1y (default: no expiry).")
        var expiresIn: String?
        @Option(help: "The app whose endpoint the key opens; other apps refuse it (default main).") var app = "main"
        @Option(help: "Requests a minute the key may make, as N/min, instead of the server's --rate-limit.") var rate: String?

        func run() async throws {
            try await common.withStores { stores in try await create(stores) }
        }

        func create(_ stores: PorticoStores) async throws {
            guard let owner = try await stores.users.find(name: user) else {
                throw ValidationError("there is no user named '\(user)'; create one with `portico user create \(user)`")
            }
            var scopeSet: ScopeSet?
            if let scopes {
                let parsed = ScopeSet.parse(scopes)
                guard parsed.unknown.isEmpty else {
                    throw ValidationError(
                        "unknown scope(s) \(parsed.unknown.joined(separator: ", ")); known: \(Scope.all.map(\.name).joined(separator: " ")) and read, write, admin"
                    )
                }
                guard !parsed.scopes.granted.isEmpty else { throw ValidationError("--scopes is empty") }
                scopeSet = parsed.scopes
            }
            let lifetime = try expiresIn.map(parseDuration)
            let perMinute = try rate.map { text throws(ValidationError) in
                do throws(DataError) { return try RateLimiter.parseRate(text, per: "min") } catch { throw ValidationError("--rate: \(error.message)") }
            }
            guard try await stores.apps.names().contains(app) else { throw ValidationError("there is no app '\(app)'; see `portico app list`") }
            guard try await stores.users.role(app: app, userID: owner.id) != nil else {
                throw ValidationError(
                    "\(owner.name) has no role in app '\(app)'; give them one first (users_set_roles on its endpoint, or portico user set-role)")
            }
            let (key, token) = try await report {
                try await stores.apiKeys.create(userID: owner.id, name: name, scopes: scopeSet, expiresIn: lifetime, app: app, ratePerMinute: perMinute)
            }
            print(
                "Created API key \(key.id) for \(owner.name) in app \(app)\(scopeSet.map { " with scopes \($0.text)" } ?? "")\(key.expiresAt.map { ", expiring \(Date(timeIntervalSince1970: TimeInterval($0)))" } ?? "")\(perMinute.map { ", at most \($0) requests a minute" } ?? ""). It is shown once:"
            )
            print(token)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List API keys (never their secrets).")
        @OptionGroup var common: CommonOptions
        @Option(help: "Only this user's keys.") var user: String?

        func run() async throws {
            try await common.withStores { stores in try await list(stores) }
        }

        func list(_ stores: PorticoStores) async throws {
            var userID: Int64?
            if let user {
                guard let found = try await stores.users.find(name: user) else { throw ValidationError("there is no user named '\(user)'") }
                userID = found.id
            }
            let now = Int64(Date().timeIntervalSince1970)
            print("id\tuser\tapp\tname\tscopes\tstatus\trate")
            for key in try await stores.apiKeys.list(userID: userID) {
                print(
                    "\(key.id)\t\(key.userName)\t\(key.app)\t\(key.name)\t\(key.scopes?.text ?? "*")\t\(key.status(at: now))\t\(key.ratePerMinute.map { "\($0)/min" } ?? "-")"
                )
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke an API key by id (see `portico apikey list`).")
        @OptionGroup var common: CommonOptions
        @Argument(help: "The key id (the part after pk_ in the key).") var id: String

        func run() async throws {
            let revoked = try await common.withStores { try await $0.apiKeys.revoke(id: id) }
            guard revoked else { throw ValidationError("no active API key has id '\(id)'") }
            print("Revoked API key \(id).")
        }
    }
}

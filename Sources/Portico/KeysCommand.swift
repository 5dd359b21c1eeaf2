import ArgumentParser
import Foundation
import PorticoAuth
import PorticoBase
import PorticoInstance

struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys", abstract: "Manage the keys that sign OAuth access tokens.", subcommands: [Rotate.self])

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Start signing with a new key now; tokens signed with the old key stay valid until they expire.",
            discussion:
                "Keys also rotate on their own every 30 days. Running servers start using the new key within a minute, and accept tokens signed with it at once."
        )
        @OptionGroup var common: CommonOptions

        func run() async throws {
            try await common.withStores { stores in
                let masterKey = try common.masterKey()
                let keys = TokenKeys(database: stores.database, masterKey: masterKey, logger: try common.makeLogger())
                try await keys.rotate()
                print("Rotated the token signing key.")
            }
        }
    }
}

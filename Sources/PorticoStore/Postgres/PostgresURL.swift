import Foundation
import NIOSSL
import PorticoBase
public import PostgresNIO

/// A `postgres://user:password@host:port/database?sslmode=...` URL as a client configuration.
/// `sslmode` follows libpq: `disable`, `prefer` (the default: TLS when the server offers it,
/// unverified), `require` (TLS, unverified), `verify-ca` and `verify-full` (TLS, verified).
public enum PostgresURL {
    public struct Invalid: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    public static func configuration(_ url: String, what: String = "PostgreSQL") throws(Invalid) -> PostgresClient.Configuration {
        guard let components = URLComponents(string: url), ["postgres", "postgresql"].contains(components.scheme ?? ""), let host = components.host,
            !host.isEmpty
        else { throw Invalid(description: "a \(what) URL looks like postgres://user:password@host:5432/database; got '\(redacted(url))'") }
        let mode = components.queryItems?.first { $0.name == "sslmode" }?.value ?? "prefer"
        let tls: PostgresClient.Configuration.TLS
        switch mode {
        case "disable": tls = .disable
        case "require", "verify-ca", "verify-full":
            var configuration = TLSConfiguration.makeClientConfiguration()
            if mode == "require" { configuration.certificateVerification = .none }
            tls = .require(configuration)
        case "prefer", "allow":
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.certificateVerification = .none
            tls = .prefer(configuration)
        default:
            throw Invalid(description: "sslmode must be disable, allow, prefer, require, verify-ca or verify-full; got '\(mode)'")
        }
        let database = String(components.path.drop { $0 == "/" })
        var configuration = PostgresClient.Configuration(
            host: host, port: components.port ?? 5432, username: components.user ?? "postgres", password: components.password,
            database: database.isEmpty ? nil : database, tls: tls)
        configuration.options.additionalStartupParameters = try settings(components)
        return configuration
    }

    /// The `-c name=value` settings of the URL's `options`.
    static func settings(_ components: URLComponents) throws(Invalid) -> [(String, String)] {
        guard let options = components.queryItems?.first(where: { $0.name == "options" })?.value else { return [] }
        var settings: [(String, String)] = []
        var words = options.split(separator: " ").map(String.init)[...]
        while let word = words.popFirst() {
            var setting = word
            if word == "-c" {
                guard let next = words.popFirst() else { throw Invalid(description: "options ends with -c; write options=-c name=value") }
                setting = next
            } else if word.hasPrefix("-c") {
                setting = String(word.dropFirst(2))
            } else {
                throw Invalid(description: "options takes -c name=value settings; got '\(word)'")
            }
            guard let equals = setting.firstIndex(of: "="), equals != setting.startIndex else {
                throw Invalid(description: "options takes -c name=value settings; got '-c \(setting)'")
            }
            settings.append((String(setting[..<equals]), String(setting[setting.index(after: equals)...])))
        }
        return settings
    }

    /// `url` with its `search_path` set to `schema` (through `options`).
    public static func withSearchPath(_ url: String, schema: String) -> String {
        guard var components = URLComponents(string: url) else { return url }
        var items = (components.queryItems ?? []).filter { $0.name != "options" }
        items.append(URLQueryItem(name: "options", value: "-c search_path=\(SQLFragment.quote(schema))"))
        components.queryItems = items
        return components.string ?? url
    }

    /// The schema the URL's `search_path` setting names first, if it names one.
    public static func searchPath(_ url: String) -> String? {
        guard let components = URLComponents(string: url), let settings = try? settings(components),
            let path = settings.last(where: { $0.0 == "search_path" })?.1
        else { return nil }
        let first = path.split(separator: ",").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        if first.hasPrefix("\""), first.hasSuffix("\""), first.count >= 2 {
            return first.dropFirst().dropLast().undoubling("\"")
        }
        return first.isEmpty ? nil : first.lowercased()
    }

    /// The URL with its password replaced, for messages and logs.
    public static func redacted(_ url: String) -> String {
        guard var components = URLComponents(string: url), components.password != nil else { return url }
        components.password = "***"
        return components.string ?? "postgres://***"
    }
}

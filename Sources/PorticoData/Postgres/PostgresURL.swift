import Foundation
import NIOSSL
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
        return PostgresClient.Configuration(
            host: host, port: components.port ?? 5432, username: components.user ?? "postgres", password: components.password,
            database: database.isEmpty ? nil : database, tls: tls)
    }

    /// The URL with its password replaced, for messages and logs.
    public static func redacted(_ url: String) -> String {
        guard var components = URLComponents(string: url), components.password != nil else { return url }
        components.password = "***"
        return components.string ?? "postgres://***"
    }
}

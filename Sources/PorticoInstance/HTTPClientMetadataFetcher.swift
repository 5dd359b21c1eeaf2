import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import PorticoAuth
import PorticoJSON

/// Fetches client ID metadata documents over https: no redirects, 5 s, at most 16 KiB, JSON only,
/// and no private or loopback hosts unless allowed (the URL comes from an unauthenticated caller).
struct HTTPClientMetadataFetcher: ClientMetadataFetcher {
    let client: HTTPClient
    let allowPrivateHosts: Bool
    static let maxBytes = 16 * 1024

    struct FetchError: Error, CustomStringConvertible {
        var description: String
    }

    func fetch(_ url: String) async throws -> JSON {
        guard let parsed = URL(string: url), parsed.scheme == "https", let host = parsed.host else {
            throw FetchError(description: "the client_id must be an https URL")
        }
        if !allowPrivateHosts, Self.isPrivate(host) {
            throw FetchError(description: "\(host) is a private or loopback address")
        }
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Accept", value: "application/json")
        let response = try await client.execute(request, timeout: .seconds(5))
        guard response.status == .ok else { throw FetchError(description: "the server answered \(response.status.code)") }
        if let type = response.headers.first(name: "content-type"), !type.lowercased().contains("json") {
            throw FetchError(description: "the document is \(type), not JSON")
        }
        let body = try await response.body.collect(upTo: Self.maxBytes)
        return try JSONParser.parse(body.readableBytesView)
    }

    static func isPrivate(_ host: String) -> Bool {
        let h = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if h == "localhost" || h.hasSuffix(".localhost") || h.hasSuffix(".local") || h.hasSuffix(".internal") { return true }
        let ranges = [
            "127.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "0.0.0.0/8", "100.64.0.0/10", "::1/128", "fc00::/7", "fe80::/10",
            "::/128",
        ]
        return IPAllowlist.allows(h, entries: ranges) && IPAllowlist.invalidEntry(in: [h]) == nil
    }

    static func makeClient() -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        configuration.timeout = .init(connect: .seconds(3), read: .seconds(5))
        // Not AsyncHTTPClient's own trace propagation, which would hand the current trace (a client's
        // `tracestate` included) to every host fetched from: the LLM call sends its span's id itself.
        configuration.tracing.tracer = nil
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }
}

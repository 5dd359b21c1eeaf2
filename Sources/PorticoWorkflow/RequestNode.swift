import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import PorticoAuth
import PorticoJSON

/// Why a request node was refused or failed.
struct RequestNodeError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// The HTTP request node: off until the operator allows hosts; never to loopback, private,
/// link-local or metadata addresses, judged on the addresses the name resolves to (the connection
/// is then made to the address judged, so a second lookup cannot swap it) and again on every
/// redirect; time-limited; the response body capped.
struct RequestNode: Sendable {
    let allowedHosts: [String]
    let allowPrivate: Bool

    static let maxResponseBytes = 256 * 1024
    static let maxRequestBytes = 256 * 1024
    static let maxRedirects = 3
    static let timeout: TimeAmount = .seconds(10)

    init(allowedHosts: [String], allowPrivate: Bool) {
        self.allowedHosts = allowedHosts.map { $0.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]")) }
        self.allowPrivate = allowPrivate
    }

    /// Whether `host` is one the operator allowed (`example.com`, or `*.example.com` for its subdomains).
    func allows(_ host: String) -> Bool {
        let host = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        return allowedHosts.contains { entry in
            if entry.hasPrefix("*.") { return host.hasSuffix(entry.dropFirst(1)) }
            return entry == host
        }
    }

    static let forbiddenRanges = [
        "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12", "192.0.0.0/24", "192.168.0.0/16",
        "198.18.0.0/15", "224.0.0.0/4", "240.0.0.0/4", "::/128", "::1/128", "fc00::/7", "fe80::/10", "ff00::/8", "::ffff:0:0/96", "64:ff9b::/96",
    ]

    static func isForbidden(_ address: String) -> Bool {
        IPAllowlist.allows(address, entries: forbiddenRanges)
    }

    /// Link-local addresses, where clouds answer with their metadata (169.254.169.254): never
    /// reached, even when private hosts are allowed.
    /// Also as IPv4-mapped (`::ffff:169.254.169.254`) and NAT64 (`64:ff9b::a9fe:a9fe`) addresses,
    /// which reach the same host.
    static let neverRanges = ["169.254.0.0/16", "::ffff:a9fe:0/112", "64:ff9b::a9fe:0/112", "fe80::/10", "fd00:ec2::254/128"]

    static func isNever(_ address: String) -> Bool {
        IPAllowlist.allows(address, entries: neverRanges)
    }

    func refuses(_ address: String) -> Bool {
        Self.isNever(address) || (!allowPrivate && Self.isForbidden(address))
    }

    func perform(method: String, url: String, headers: [String: String], body: JSON?) async throws -> JSON {
        guard !allowedHosts.isEmpty else {
            throw RequestNodeError(
                message: "the request node is off on this server: the operator allows hosts with --workflow-allow-host (or PORTICO_WORKFLOW_ALLOW_HOSTS)")
        }
        var current = url
        var method = method
        var body = body
        var headers = headers
        var origin: String?
        for _ in 0...Self.maxRedirects {
            guard let parsed = URL(string: current), let scheme = parsed.scheme?.lowercased(), scheme == "http" || scheme == "https",
                let host = parsed.host, !host.isEmpty
            else { throw RequestNodeError(message: "'\(current.prefix(200))' is not an http or https URL") }
            guard allows(host) else {
                throw RequestNodeError(message: "host '\(host)' is not among the hosts the operator allows (\(allowedHosts.joined(separator: ", ")))")
            }
            // The headers were written for the first URL's origin and hold its secrets (sealed
            // tokens): a redirect to another origin, even an allowed one, gets none of them.
            let here = Self.origin(scheme: scheme, host: host, port: parsed.port)
            if let origin, origin != here { headers = headers.filter { Self.sharedHeaders.contains($0.key.lowercased()) } }
            origin = origin ?? here
            let address = try await resolve(host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")))
            var configuration = HTTPClient.Configuration()
            configuration.redirectConfiguration = .disallow
            configuration.timeout = .init(connect: .seconds(5), read: Self.timeout)
            configuration.tracing.tracer = nil
            if !IPAllowlist.isAddress(host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))) { configuration.dnsOverride = [host: address] }
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            let outcome: (status: UInt, location: String?, result: JSON)
            do {
                outcome = try await send(client, method: method, url: current, headers: headers, body: body)
                try await client.shutdown()
            } catch {
                try? await client.shutdown()
                throw error
            }
            guard let location = outcome.location, [301, 302, 303, 307, 308].contains(outcome.status) else { return outcome.result }
            guard let next = URL(string: location, relativeTo: parsed)?.absoluteURL.absoluteString else {
                throw RequestNodeError(message: "the server redirected to '\(location.prefix(200))', which is not a URL")
            }
            if outcome.status == 303 || ((outcome.status == 301 || outcome.status == 302) && method == "POST") {
                method = "GET"
                body = nil
            }
            current = next
        }
        throw RequestNodeError(message: "more than \(Self.maxRedirects) redirects")
    }

    /// Headers that say what the body is and what is wanted back, kept across a redirect to another origin.
    static let sharedHeaders: Set<String> = ["content-type", "accept", "accept-language", "user-agent"]

    /// `scheme://host:port`, the port written out, so `https://a` and `https://a:443` are one origin.
    static func origin(scheme: String, host: String, port: Int?) -> String {
        "\(scheme)://\(host.lowercased()):\(port ?? (scheme == "https" ? 443 : 80))"
    }

    func send(_ client: HTTPClient, method: String, url: String, headers: [String: String], body: JSON?) async throws -> (UInt, String?, JSON) {
        var request = HTTPClientRequest(url: url)
        request.method = HTTPMethod(rawValue: method)
        for (name, value) in headers where name.lowercased() != "host" { request.headers.add(name: name, value: value) }
        if let body, !body.isNull {
            let bytes: [UInt8]
            if case .string(let text) = body {
                bytes = Array(text.utf8)
            } else {
                bytes = Array(body.serializedString.utf8)
                if request.headers["content-type"].isEmpty { request.headers.add(name: "Content-Type", value: "application/json") }
            }
            guard bytes.count <= Self.maxRequestBytes else { throw RequestNodeError(message: "the request body is larger than 256 KiB") }
            request.body = .bytes(ByteBuffer(bytes: bytes))
        }
        let response = try await client.execute(request, timeout: Self.timeout)
        let status = response.status.code
        let location = response.headers.first(name: "location")
        var buffer = ByteBuffer()
        var truncated = false
        for try await var chunk in response.body {
            let room = Self.maxResponseBytes - buffer.readableBytes
            if chunk.readableBytes > room {
                truncated = true
                if room > 0, let part = chunk.readSlice(length: room) { buffer.writeImmutableBuffer(part) }
                break
            }
            buffer.writeBuffer(&chunk)
        }
        let text = String(buffer: buffer)
        let isJSON = response.headers.first(name: "content-type")?.lowercased().contains("json") ?? false
        let parsed: JSON = (!truncated && isJSON ? (try? JSONParser.parse(text)) : nil) ?? .string(text)
        var result: JSONObject = ["status": .int(Int64(status)), "body": parsed]
        if truncated { result["truncated"] = true }
        return (status, location, .object(result))
    }

    /// The address `host` resolves to, refused when any address it resolves to is loopback,
    /// private, link-local or otherwise not public (unless private hosts are allowed).
    func resolve(_ host: String) async throws -> String {
        if IPAllowlist.isAddress(host) {
            if refuses(host) { throw RequestNodeError(message: "\(host) is a loopback, private, link-local or metadata address") }
            return host
        }
        let addresses = try await NIOThreadPool.singleton.runIfActive { () throws -> [String] in try Self.lookup(host) }
        guard let first = addresses.first else { throw RequestNodeError(message: "\(host) did not resolve to any address") }
        if let bad = addresses.first(where: refuses) {
            throw RequestNodeError(message: "\(host) resolves to \(bad), a loopback, private, link-local or metadata address")
        }
        return first
    }

    static func lookup(_ host: String) throws -> [String] {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let list else { throw RequestNodeError(message: "\(host) could not be resolved") }
        defer { freeaddrinfo(list) }
        var addresses: [String] = []
        var node: UnsafeMutablePointer<addrinfo>? = list
        while let current = node {
            var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            if getnameinfo(current.pointee.ai_addr, current.pointee.ai_addrlen, &buffer, socklen_t(buffer.count), nil, 0, NI_NUMERICHOST) == 0 {
                let address = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                if !addresses.contains(address) { addresses.append(address) }
            }
            node = current.pointee.ai_next
        }
        return addresses
    }
}

import Foundation
public import PorticoJSON

/// Fetches client ID metadata documents (an external service: the client's own web server).
public protocol ClientMetadataFetcher: Sendable {
    /// The JSON document at `url`, or a description of why it could not be read.
    func fetch(_ url: String) async throws -> JSON
}

/// Reads a client ID metadata document (MCP 2025-11-25, draft-ietf-oauth-client-id-metadata-document)
/// into a public client.
enum ClientMetadataDocument {
    /// Whether `clientID` is a URL-shaped client id: https with a path.
    static func isDocumentURL(_ clientID: String) -> Bool {
        guard clientID.hasPrefix("https://"), let url = URLParts(clientID), url.path.count > 1, url.fragment == nil else { return false }
        return true
    }

    static func client(from document: JSON, url: String, now: Int64) throws(OAuthError) -> OAuthClient {
        guard case .object(let object) = document else { throw .invalidClient("the client metadata document at \(url) is not a JSON object") }
        guard object["client_id"]?.stringValue == url else {
            throw .invalidClient("the client metadata document's client_id must equal its URL \(url)")
        }
        guard let name = object["client_name"]?.stringValue, !name.isEmpty else {
            throw .invalidClient("the client metadata document at \(url) has no client_name")
        }
        guard let uris = object["redirect_uris"]?.arrayValue?.compactMap(\.stringValue), !uris.isEmpty else {
            throw .invalidClient("the client metadata document at \(url) has no redirect_uris")
        }
        for uri in uris {
            if let problem = RedirectURI.validationProblem(uri) {
                throw .invalidClient("the client metadata document lists an unusable redirect URI '\(uri)': \(problem)")
            }
        }
        let method = object["token_endpoint_auth_method"]?.stringValue ?? "none"
        guard method == "none", object["client_secret"] == nil else {
            throw .invalidClient("a client metadata document describes a public client: token_endpoint_auth_method must be none and it may hold no secret")
        }
        var details = JSONObject()
        for key in ["client_uri", "logo_uri", "tos_uri", "policy_uri"] { if let v = object[key] { details[key] = v } }
        return OAuthClient(
            clientID: url, owner: "main", name: url, displayName: name, secretHash: nil, redirectURIs: uris,
            grantTypes: ["authorization_code", "refresh_token"], allowedScopes: nil, ipAllowlist: [], authMethod: "none",
            kind: .metadataDocument, createdBy: nil, createdAt: now, details: details)
    }
}

/// Redirect URI rules: https anywhere, plain http only to a loopback address (RFC 8252 §7.3),
/// no fragments; loopback URIs match on any port.
public enum RedirectURI {
    public static func validationProblem(_ uri: String) -> String? {
        guard let url = URLParts(uri) else { return "not an absolute URL" }
        guard url.fragment == nil else { return "a redirect URI may not have a fragment (#...); RFC 6749 section 3.1.2" }
        if url.host.contains("*") { return "wildcard hosts are not allowed; register each exact redirect URI" }
        if let problem = hostProblem(url.host) { return problem }
        switch url.scheme {
        case "https": return url.host.isEmpty ? "no host" : nil
        case "http": return isLoopback(url.host) ? nil : "plain http is allowed only for loopback addresses (127.0.0.1, [::1], localhost); use https"
        default: return "the scheme must be https (or http for a loopback address)"
        }
    }

    /// A host must be a DNS name or an IP literal: no wildcards, no empty labels, no odd characters.
    static func hostProblem(_ host: String) -> String? {
        if host.hasPrefix("[") {
            return host.hasSuffix("]") && host.dropFirst().dropLast().allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) ? nil : "not a valid IPv6 address"
        }
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        guard !host.isEmpty, host.utf8.count <= 253,
            labels.allSatisfy({ label in
                !label.isEmpty && label.utf8.count <= 63 && label.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
            })
        else { return "'\(host)' is not a valid host name" }
        return nil
    }

    public static func isLoopback(_ host: String) -> Bool {
        ["127.0.0.1", "localhost", "[::1]", "::1"].contains(host.lowercased())
    }

    /// Whether `requested` is one of `registered`: exactly, or for loopback URIs the same apart from the port.
    public static func matches(_ requested: String, registered: [String]) -> Bool {
        if registered.contains(requested) { return true }
        guard let r = URLParts(requested), r.scheme == "http", isLoopback(r.host) else { return false }
        return registered.contains { candidate in
            guard let c = URLParts(candidate), c.scheme == "http", isLoopback(c.host) else { return false }
            return c.host.lowercased() == r.host.lowercased() && c.path == r.path && c.query == r.query
        }
    }
}

/// A small, strict absolute-URL reader (scheme, host, port, path, query, fragment).
struct URLParts: Equatable {
    var scheme: String
    var host: String
    var port: Int?
    var path: String
    var query: String?
    var fragment: String?

    init?(_ text: String) {
        guard !text.contains(where: { $0.isWhitespace || $0 == "\\" }), let schemeEnd = text.range(of: "://") else { return nil }
        scheme = String(text[..<schemeEnd.lowerBound]).lowercased()
        guard !scheme.isEmpty, scheme.allSatisfy({ $0.isLetter || $0.isNumber || "+-.".contains($0) }) else { return nil }
        var rest = Substring(text[schemeEnd.upperBound...])
        if let hash = rest.firstIndex(of: "#") {
            fragment = String(rest[rest.index(after: hash)...])
            rest = rest[..<hash]
        }
        if let mark = rest.firstIndex(of: "?") {
            query = String(rest[rest.index(after: mark)...])
            rest = rest[..<mark]
        }
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        var authority = rest[..<slash]
        path = rest[slash...].isEmpty ? "/" : String(rest[slash...])
        guard !authority.contains("@") else { return nil }  // no userinfo: a classic open-redirect trick
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = String(authority[...close])
            authority = authority[authority.index(after: close)...]
        } else {
            let colon = authority.lastIndex(of: ":") ?? authority.endIndex
            host = String(authority[..<colon])
            authority = authority[colon...]
        }
        if authority.hasPrefix(":") {
            guard let p = Int(authority.dropFirst()), (1...65535).contains(p) else { return nil }
            port = p
        } else if !authority.isEmpty {
            return nil
        }
        guard !host.isEmpty else { return nil }
    }
}

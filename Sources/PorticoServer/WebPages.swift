import Foundation
import HTTPTypes
import Hummingbird
import Mustache
import NIOCore
import PorticoAuth
import PorticoInstance
import PorticoJSON
import PorticoMCP

/// Renders Portico's server-side pages (sign-in, consent, console, errors) from the bundled
/// Mustache templates. Values are HTML-escaped by Mustache; pages need no JavaScript.
struct WebPages: Sendable {
    let library: MustacheLibrary

    static func load() async throws -> WebPages {
        guard let directory = Bundle.module.resourceURL?.appendingPathComponent("Templates").path else {
            throw HTTPError(.internalServerError, message: "page templates are missing from the resource bundle")
        }
        return WebPages(library: try await MustacheLibrary(directory: directory))
    }

    /// The MCP Apps view of an answer (`ui://portico/answer`): one self-contained HTML document.
    static func answerView() throws -> UIView {
        guard let url = Bundle.module.resourceURL?.appendingPathComponent("Templates/answer-view.html") else {
            throw HTTPError(.internalServerError, message: "the answer view is missing from the resource bundle")
        }
        return UIView(
            uri: "ui://portico/answer", name: "answer",
            description: "An answer as an interactive chart, a sortable table of its rows and its SQL, with follow-up questions",
            html: try String(contentsOf: url, encoding: .utf8), tools: ["ask", "resource_query"])
    }

    /// Renders a page. Optional values that are `nil` are left out, so `{{#error}}` sections stay closed.
    func render(_ template: String, _ values: [String: Any?], status: HTTPResponse.Status = .ok, headers extra: HTTPFields = [:]) -> Response {
        var values = values.compactMapValues { $0 }
        values["version"] = porticoVersion
        let html = library.render(values, withTemplate: template) ?? "<p>page \(template) is missing</p>"
        var headers = Self.pageHeaders()
        headers.append(contentsOf: extra)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    func error(_ heading: String, _ message: String, code: String? = nil, status: HTTPResponse.Status = .badRequest) -> Response {
        render("error", ["heading": heading, "message": message, "code": code], status: status)
    }

    /// Pages are never cached, never framed (no clickjacking of the consent form) and load nothing external.
    static func pageHeaders() -> HTTPFields {
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-store"
        headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        headers[HTTPField.Name("Content-Security-Policy")!] =
            "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'"
        headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        return headers
    }

    static let scopeLabels: [String: String] = [
        "read:data": "Read records", "write:data": "Create, change and delete records",
        "read:schema": "See collections and fields", "write:schema": "Change collections and fields",
        "read:acl": "See roles and permissions", "write:acl": "Change roles and permissions",
        "read:user": "See users", "write:user": "Create, change and delete users",
        "read:application": "See OAuth applications", "write:application": "Create, change and delete OAuth applications",
        "read:datasource": "Ask questions of datasources", "write:datasource": "Manage datasources",
        "read:apikey": "See your API keys", "write:apikey": "Create and revoke your API keys",
    ]

    static func date(_ seconds: Int64?) -> String {
        guard let seconds else { return "—" }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm 'UTC'"
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }
}

/// Request helpers shared by the web and OAuth routes.
enum Forms {
    static let maxBytes = 64 * 1024

    /// The form fields of a `application/x-www-form-urlencoded` body.
    static func fields(_ request: Request) async throws -> [(String, String)] {
        let contentType = request.headers[.contentType]?.lowercased() ?? ""
        guard contentType.hasPrefix("application/x-www-form-urlencoded") else {
            throw HTTPError(.unsupportedMediaType, message: "send the form as application/x-www-form-urlencoded")
        }
        let buffer = try await request.body.collect(upTo: maxBytes)
        guard let fields = FormEncoding.parse(String(buffer: buffer)) else {
            throw HTTPError(.badRequest, message: "the form body is not valid form encoding")
        }
        return fields
    }

    static func first(_ fields: [(String, String)], _ name: String) -> String? {
        fields.first { $0.0 == name }?.1
    }

    static func all(_ fields: [(String, String)], _ name: String) -> [String] {
        fields.filter { $0.0 == name }.map(\.1)
    }

    static func query(_ request: Request) -> [(String, String)] {
        FormEncoding.parse(request.uri.query ?? "") ?? []
    }

    static func redirect(_ location: String, status: HTTPResponse.Status = .seeOther, headers extra: HTTPFields = [:]) -> Response {
        var headers = extra
        headers[.location] = location
        headers[.cacheControl] = "no-store"
        return Response(status: status, headers: headers)
    }

    /// A `Set-Cookie` value: `HttpOnly`, `SameSite=Lax`, `Path=/`, `Secure` behind https.
    static func cookie(_ name: String, _ value: String, secure: Bool, maxAge: Int64?) -> String {
        var parts = ["\(name)=\(value)", "Path=/", "HttpOnly", "SameSite=Lax"]
        if secure { parts.append("Secure") }
        if let maxAge { parts.append("Max-Age=\(maxAge)") }
        return parts.joined(separator: "; ")
    }
}

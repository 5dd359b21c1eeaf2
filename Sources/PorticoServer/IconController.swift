import Hummingbird
import NIOCore

/// `GET /icons/<name>.svg`: the server's icon and one per tool package, listed in `serverInfo.icons`
/// and each tool's `icons`. Drawn here as plain shapes (no script, no external reference) and
/// served with a policy that forbids both, as the MCP specification asks of SVG icons.
struct IconController {
    static let icons: [String: String] = [
        "portico": shapes(
            "#1f4e79",
            "<path d='M6 26V12l10-6 10 6v14' fill='none' stroke='#fff' stroke-width='2.5'/><path d='M11 26v-9h10v9' fill='none' stroke='#fff' stroke-width='2.5'/>"
        ),
        "data": shapes(
            "#2e7d32",
            "<ellipse cx='16' cy='9' rx='9' ry='3.5' fill='none' stroke='#fff' stroke-width='2'/><path d='M7 9v14c0 2 4 3.5 9 3.5s9-1.5 9-3.5V9M7 16c0 2 4 3.5 9 3.5s9-1.5 9-3.5' fill='none' stroke='#fff' stroke-width='2'/>"
        ),
        "schema": shapes(
            "#6a1b9a",
            "<rect x='6' y='7' width='8' height='6' fill='#fff'/><rect x='18' y='19' width='8' height='6' fill='#fff'/><path d='M10 13v9h8' fill='none' stroke='#fff' stroke-width='2'/>"
        ),
        "users": shapes("#00838f", "<circle cx='16' cy='12' r='5' fill='#fff'/><path d='M7 26c1-5 5-7 9-7s8 2 9 7z' fill='#fff'/>"),
        "applications": shapes(
            "#ef6c00",
            "<rect x='7' y='7' width='7' height='7' fill='#fff'/><rect x='18' y='7' width='7' height='7' fill='#fff'/><rect x='7' y='18' width='7' height='7' fill='#fff'/><rect x='18' y='18' width='7' height='7' fill='#fff'/>"
        ),
        "apikeys": shapes(
            "#5d4037",
            "<circle cx='11' cy='16' r='5' fill='none' stroke='#fff' stroke-width='2.5'/><path d='M16 16h10v4M22 16v3' fill='none' stroke='#fff' stroke-width='2.5'/>"
        ),
        "acl": shapes("#c62828", "<path d='M16 5l9 4v6c0 6-4 10-9 12-5-2-9-6-9-12V9z' fill='none' stroke='#fff' stroke-width='2.5'/>"),
        "ask": shapes(
            "#1565c0",
            "<path d='M6 8h20v12H14l-5 5v-5H6z' fill='none' stroke='#fff' stroke-width='2.2'/><path d='M11 17v-3M16 17v-6M21 17v-4' stroke='#fff' stroke-width='2'/>"
        ),
        "workflow": shapes(
            "#00695c",
            "<circle cx='9' cy='9' r='3' fill='#fff'/><circle cx='23' cy='16' r='3' fill='#fff'/><circle cx='9' cy='23' r='3' fill='#fff'/><path d='M12 9h5l4 5M12 23h5l4-5' fill='none' stroke='#fff' stroke-width='2'/>"
        ),
        "sqlbot": shapes(
            "#37474f",
            "<rect x='8' y='10' width='16' height='13' rx='3' fill='none' stroke='#fff' stroke-width='2.2'/><circle cx='13' cy='16' r='1.8' fill='#fff'/><circle cx='19' cy='16' r='1.8' fill='#fff'/><path d='M16 10V6' stroke='#fff' stroke-width='2'/>"
        ),
    ]

    /// A 32×32 rounded square of `background` with `drawing` on it.
    static func shapes(_ background: String, _ drawing: String) -> String {
        "<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 32 32' width='32' height='32'>"
            + "<rect width='32' height='32' rx='6' fill='\(background)'/>\(drawing)</svg>\n"
    }

    func addRoutes<Context: RequestContext>(to router: Router<Context>) {
        router.get("icons/{file}") { _, context in
            let file = try context.parameters.require("file")
            guard file.hasSuffix(".svg"), let svg = Self.icons[String(file.dropLast(4))] else {
                return Response(
                    status: .notFound, headers: [.contentType: "text/plain; charset=utf-8"],
                    body: .init(
                        byteBuffer: ByteBuffer(string: "no such icon; there are: \(Self.icons.keys.sorted().map { $0 + ".svg" }.joined(separator: ", "))\n")))
            }
            return Response(
                status: .ok,
                headers: [
                    .contentType: "image/svg+xml", .cacheControl: "public, max-age=86400",
                    .init("X-Content-Type-Options")!: "nosniff", .contentSecurityPolicy: "default-src 'none'; style-src 'unsafe-inline'",
                ],
                body: .init(byteBuffer: ByteBuffer(string: svg)))
        }
    }
}

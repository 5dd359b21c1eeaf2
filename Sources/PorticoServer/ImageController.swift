import Hummingbird
import NIOCore
import PorticoAsk

/// `GET /images/<name>.png`: chart images, by their unguessable names, until they expire.
struct ImageController {
    let images: ImageStore

    func addRoutes<Context: RequestContext>(to router: Router<Context>) {
        router.get("images/{name}") { _, context in
            let name = try context.parameters.require("name")
            guard let png = try await images.load(name) else {
                return Response(
                    status: .notFound, headers: [.contentType: "text/plain; charset=utf-8"],
                    body: .init(byteBuffer: ByteBuffer(string: "no such image, or it has expired; ask the question again for a new one\n")))
            }
            let age = Int(images.lifetime.components.seconds)
            return Response(
                status: .ok,
                headers: [.contentType: "image/png", .cacheControl: "private, max-age=\(age)", .init("X-Content-Type-Options")!: "nosniff"],
                body: .init(byteBuffer: ByteBuffer(bytes: png)))
        }
    }
}

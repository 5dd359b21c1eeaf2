import HTTPTypes
import Hummingbird
import NIOCore
import PorticoJSON

extension Response {
    /// A JSON response: the MCP endpoint's refusals, OAuth's documents and errors, SQLBot's routes.
    /// `noStore` for anything that carries a credential (RFC 6749 §5.1); `cors` for public metadata.
    static func json(_ value: JSON, status: HTTPResponse.Status = .ok, noStore: Bool = false, cors: Bool = false) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        if noStore {
            headers[.cacheControl] = "no-store"
            headers[HTTPField.Name("Pragma")!] = "no-cache"
        }
        if cors { headers[.accessControlAllowOrigin] = "*" }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: value.serialized)))
    }
}

import HTTPTypes
import NIOCore
import NIOHTTP1

/// How a response's body goes on the wire, decided from its status, its header fields and the
/// request's method, as NIO's `HTTPResponseEncoder` decides it (RFC 9112 §6):
///
/// - a status that has no body (1xx, 204, 304), and a response to CONNECT, go without
///   `Content-Length` and `Transfer-Encoding`;
/// - otherwise a `Content-Length` frames the body, and without one the body is sent in chunks;
/// - a response to HEAD keeps its framing fields (they say what a GET would get) but sends no body.
///
/// One difference, on purpose: body bytes given for a status that has no body are dropped, where
/// NIO writes them and the client reads them as the start of the next response.
struct ResponseFraming: Sendable {
    /// Body bytes go in chunks, ended by a zero-length chunk and the trailers.
    let chunked: Bool
    /// No body bytes go out.
    let bodyless: Bool
    /// Fields of the head that are left out.
    fileprivate let dropsContentLength: Bool
    fileprivate let dropsTransferEncoding: Bool
    /// `Transfer-Encoding: chunked` is written (replacing any other).
    fileprivate let addsChunked: Bool

    init(status: HTTPResponse.Status, fields: HTTPFields, method: HTTPRequest.Method) {
        let connect = method == .connect
        let bodyless = method == .head || connect
        let hasBody = !connect && !(100..<200).contains(status.code) && status.code != 204 && status.code != 304
        if !hasBody {
            (dropsContentLength, dropsTransferEncoding, addsChunked) = (true, true, false)
        } else if fields.contains(.contentLength) {
            (dropsContentLength, dropsTransferEncoding, addsChunked) = (false, true, false)
        } else {
            (dropsContentLength, dropsTransferEncoding, addsChunked) = (false, true, true)
        }
        self.chunked = addsChunked && !bodyless
        self.bodyless = bodyless || !hasBody
    }
}

extension ByteBuffer {
    /// Writes `head` as an HTTP/1.1 status line and header fields, with `date` as its `Date`, as
    /// `framing` has them. Portico answers every request in HTTP/1.1. The head is put together in
    /// room on the stack and written at once: a write to the buffer per piece cost more than the
    /// rest of the head.
    mutating func writeResponseHead(_ head: HTTPResponse, date: String, framing: ResponseFraming) {
        let written = withUnsafeTemporaryAllocation(byteCount: 2_048, alignment: 1) { room in
            var out = HeadBytes(room: room)
            out.writeHead(head, date: date, framing: framing)
            if !out.overflowed { writeBytes(UnsafeRawBufferPointer(rebasing: room[..<out.count])) }
            return !out.overflowed
        }
        guard !written else { return }
        // A head larger than the room: the same bytes, written piece by piece.
        var out = ByteBufferHead(buffer: self)
        self = ByteBuffer()
        out.writeHead(head, date: date, framing: framing)
        self = out.buffer
    }

    /// Writes a part of a body as `framing` sends it: as it is, as a chunk, or not at all.
    mutating func writeResponseBodyPart(_ part: ByteBuffer, framing: ResponseFraming) {
        guard !framing.bodyless, part.readableBytes > 0 else { return }
        guard framing.chunked else {
            writeImmutableBuffer(part)
            return
        }
        writeString(String(part.readableBytes, radix: 16))
        writeStaticString("\r\n")
        writeImmutableBuffer(part)
        writeStaticString("\r\n")
    }

    /// Writes what ends a response: for chunks, the last chunk and the trailers.
    mutating func writeResponseEnd(trailers: HTTPFields?, framing: ResponseFraming) {
        guard framing.chunked else { return }
        writeStaticString("0\r\n")
        for field in trailers ?? [:] {
            writeString(field.name.rawName)
            writeStaticString(": ")
            writeString(field.value)
            writeStaticString("\r\n")
        }
        writeStaticString("\r\n")
    }
}

/// Where a response head's bytes go, a piece at a time.
private protocol HeadOutput {
    mutating func write(_ text: String)
    mutating func write(_ text: StaticString)
}

extension HeadOutput {
    mutating func writeHead(_ head: HTTPResponse, date: String, framing: ResponseFraming) {
        let status = head.status
        if let line = Self.statusLine(status.code) {
            write(line)
        } else {
            write("HTTP/1.1 ")
            write(String(status.code))
            write(" ")
            // The phrase NIO writes: its own for a code it knows (whatever the status says), else the status's.
            write(HTTPResponseStatus(statusCode: status.code, reasonPhrase: status.reasonPhrase).reasonPhrase)
            write("\r\n")
        }
        for field in head.headerFields {
            let name = field.name
            if name == .date || (framing.dropsContentLength && name == .contentLength) || (framing.dropsTransferEncoding && name == .transferEncoding) {
                continue
            }
            write(name.rawName)
            write(": ")
            write(field.value)
            write("\r\n")
        }
        if framing.addsChunked { write("transfer-encoding: chunked\r\n") }
        write("Date: ")
        write(date)
        write("\r\n\r\n")
    }

    /// The status lines Portico's routes answer with most, as NIO writes them.
    static func statusLine(_ code: Int) -> StaticString? {
        switch code {
        case 200: "HTTP/1.1 200 OK\r\n"
        case 201: "HTTP/1.1 201 Created\r\n"
        case 202: "HTTP/1.1 202 Accepted\r\n"
        case 204: "HTTP/1.1 204 No Content\r\n"
        case 302: "HTTP/1.1 302 Found\r\n"
        case 400: "HTTP/1.1 400 Bad Request\r\n"
        case 401: "HTTP/1.1 401 Unauthorized\r\n"
        case 403: "HTTP/1.1 403 Forbidden\r\n"
        case 404: "HTTP/1.1 404 Not Found\r\n"
        case 429: "HTTP/1.1 429 Too Many Requests\r\n"
        default: nil
        }
    }
}

/// Bytes put into fixed room; a piece that does not fit marks the room overflowed.
private struct HeadBytes: HeadOutput {
    let room: UnsafeMutableRawBufferPointer
    var count = 0
    var overflowed = false

    init(room: UnsafeMutableRawBufferPointer) { self.room = room }

    mutating func write(_ text: String) {
        let copied: Void? = text.utf8.withContiguousStorageIfAvailable { utf8 in copy(UnsafeRawBufferPointer(utf8)) }
        if copied == nil {
            let bytes = Array(text.utf8)
            bytes.withUnsafeBytes { copy($0) }
        }
    }

    mutating func write(_ text: StaticString) {
        copy(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    private mutating func copy(_ bytes: UnsafeRawBufferPointer) {
        guard !overflowed, count + bytes.count <= room.count else {
            overflowed = true
            return
        }
        if let source = bytes.baseAddress, let target = room.baseAddress { (target + count).copyMemory(from: source, byteCount: bytes.count) }
        count += bytes.count
    }
}

/// A head written into a byte buffer a piece at a time.
private struct ByteBufferHead: HeadOutput {
    var buffer: ByteBuffer

    mutating func write(_ text: String) { buffer.writeString(text) }
    mutating func write(_ text: StaticString) { buffer.writeStaticString(text) }
}

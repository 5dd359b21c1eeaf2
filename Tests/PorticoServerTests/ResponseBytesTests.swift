import HTTPTypes
import NIOCore
import Testing

@testable import PorticoServer

/// Responses written as bytes, framed as NIO's `HTTPResponseEncoder` frames them.
@Suite struct ResponseBytesTests {
    static let date = "Sun, 29 Nov 2026 12:00:00 GMT"

    func written(
        _ status: HTTPResponse.Status, _ fields: HTTPFields, method: HTTPRequest.Method = .post, parts: [String] = [],
        trailers: HTTPFields? = nil
    ) -> String {
        let framing = ResponseFraming(status: status, fields: fields, method: method)
        var bytes = ByteBuffer()
        bytes.writeResponseHead(HTTPResponse(status: status, headerFields: fields), date: Self.date, framing: framing)
        for part in parts { bytes.writeResponseBodyPart(ByteBuffer(string: part), framing: framing) }
        bytes.writeResponseEnd(trailers: trailers, framing: framing)
        return String(buffer: bytes)
    }

    @Test func aBodyOfKnownLengthGoesAsItIs() {
        let text = written(.ok, [.contentType: "application/json", .contentLength: "7"], parts: ["{\"a\":", "1}"])
        #expect(text == "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 7\r\nDate: \(Self.date)\r\n\r\n{\"a\":1}")
    }

    @Test func aBodyOfUnknownLengthGoesInChunksWithItsTrailers() {
        let text = written(
            .ok, [.contentType: "text/event-stream", .transferEncoding: "gzip"], parts: ["data: 1\n\n", "", "data: 22\n\n"],
            trailers: [HTTPField.Name("X-Done")!: "yes"])
        #expect(
            text
                == "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\ntransfer-encoding: chunked\r\nDate: \(Self.date)\r\n\r\n"
                + "9\r\ndata: 1\n\n\r\na\r\ndata: 22\n\n\r\n0\r\nX-Done: yes\r\n\r\n",
            "an empty part is no chunk (it would end the body), and another transfer coding gives way")
    }

    @Test func responsesThatHaveNoBodySendNone() {
        #expect(
            written(.noContent, [.contentLength: "3", .transferEncoding: "chunked"], parts: ["abc"])
                == "HTTP/1.1 204 No Content\r\nDate: \(Self.date)\r\n\r\n")
        #expect(written(.notModified, [:], parts: ["abc"]) == "HTTP/1.1 304 Not Modified\r\nDate: \(Self.date)\r\n\r\n")
        // HEAD keeps what a GET would say of its body, and sends no body.
        #expect(
            written(.ok, [.contentLength: "3"], method: .head, parts: ["abc"]) == "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nDate: \(Self.date)\r\n\r\n")
        #expect(
            written(.ok, [:], method: .head, parts: ["abc"]) == "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nDate: \(Self.date)\r\n\r\n")
        #expect(written(.ok, [.contentLength: "3"], method: .connect, parts: ["abc"]) == "HTTP/1.1 200 OK\r\nDate: \(Self.date)\r\n\r\n")
    }

    @Test func aStatusWithoutAWrittenLineGetsItsReasonAndTheDateIsOurs() {
        #expect(
            written(.init(code: 418, reasonPhrase: "I'm a teapot"), [.contentLength: "0", .date: "yesterday"])
                == "HTTP/1.1 418 I'm a teapot\r\nContent-Length: 0\r\nDate: \(Self.date)\r\n\r\n")
    }

    /// A head larger than the room on the stack is written piece by piece, byte for byte the same.
    @Test func aHeadLargerThanItsRoomIsWrittenAllTheSame() {
        let long = String(repeating: "v", count: 3_000)
        let text = written(.created, [.contentLength: "2", HTTPField.Name("X-Long")!: long, .location: "/x"], parts: ["ok"])
        #expect(text == "HTTP/1.1 201 Created\r\nContent-Length: 2\r\nX-Long: \(long)\r\nLocation: /x\r\nDate: \(Self.date)\r\n\r\nok")
        var appended = ByteBuffer(string: "before|")
        let framing = ResponseFraming(status: .ok, fields: [HTTPField.Name("X-Long")!: long], method: .get)
        appended.writeResponseHead(HTTPResponse(status: .ok, headerFields: [HTTPField.Name("X-Long")!: long]), date: Self.date, framing: framing)
        #expect(String(buffer: appended).hasPrefix("before|HTTP/1.1 200 OK\r\nX-Long: v"), "what the buffer held stays")
    }
}

import Foundation
import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOHTTPTypesHTTP1
import Testing

@testable import PorticoServer

/// Responses written as bytes, framed as NIO's `HTTPResponseEncoder` frames them (the one
/// difference on purpose: no body bytes for a status that has no body).
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

    /// A head of exactly its room goes out from the stack; one byte more, piece by piece.
    @Test(arguments: [2_048, 2_049]) func aHeadAtTheEdgeOfItsRoom(_ size: Int) {
        let fixed = "HTTP/1.1 200 OK\r\nX-Pad: \r\nContent-Length: 0\r\nDate: \(Self.date)\r\n\r\n".utf8.count
        let pad = String(repeating: "p", count: size - fixed)
        let text = written(.ok, [HTTPField.Name("X-Pad")!: pad, .contentLength: "0"], method: .get)
        #expect(text.utf8.count == size)
        #expect(text == "HTTP/1.1 200 OK\r\nX-Pad: \(pad)\r\nContent-Length: 0\r\nDate: \(Self.date)\r\n\r\n")
    }

    /// The same responses through NIO's encoder and through ours, byte for byte but for the order
    /// of the header lines (ours writes `Date` last): every status Portico answers with, with and
    /// without `Content-Length`, a transfer coding, body parts (none for a status that has no
    /// body), and trailers.
    @Test func theBytesAreNIOsEncoders() throws {
        let statuses: [HTTPResponse.Status] = [
            .ok, .created, .accepted, .noContent, .found, .notModified, .badRequest, .unauthorized, .forbidden, .notFound,
            .contentTooLarge, .tooManyRequests, .internalServerError, .serviceUnavailable, .init(code: 422), .init(code: 500),
            .init(code: 299, reasonPhrase: "Odd"), .init(code: 103),
        ]
        let fieldSets: [HTTPFields] = [
            [.contentType: "application/json", .contentLength: "8"],
            [.contentType: "text/event-stream", .cacheControl: "no-cache"],
            [.transferEncoding: "gzip", .setCookie: "a=1", HTTPField.Name("Set-Cookie")!: "b=2"],
            [.contentLength: "8", .transferEncoding: "chunked"],
        ]
        var compared = 0
        for status in statuses {
            let hasBody = !(100..<200).contains(status.code) && status.code != 204 && status.code != 304
            for fields in fieldSets {
                for trailers in [nil, [HTTPField.Name("X-Done")!: "1"]] as [HTTPFields?] {
                    let parts = hasBody ? ["abc", "", "defgh"] : []
                    let ours = written(status, fields, method: .get, parts: parts, trailers: trailers)
                    let theirs = try nio(status, fields, parts: parts, trailers: trailers)
                    #expect(Self.normalised(ours) == Self.normalised(theirs), "\(status) \(fields) \(String(describing: trailers))")
                    compared += 1
                }
            }
        }
        #expect(compared == statuses.count * fieldSets.count * 2)
    }

    /// What NIO's encoder writes for the response (the head converted as the connection converted
    /// it before, the `Date` set on the response first).
    func nio(_ status: HTTPResponse.Status, _ fields: HTTPFields, parts: [String], trailers: HTTPFields?) throws -> String {
        let channel = EmbeddedChannel(handler: HTTPResponseEncoder())
        var response = HTTPResponse(status: status, headerFields: fields)
        response.headerFields[.date] = Self.date
        try channel.writeOutbound(HTTPServerResponsePart.head(HTTPResponseHead(response)))
        for part in parts { try channel.writeOutbound(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(string: part)))) }
        try channel.writeOutbound(HTTPServerResponsePart.end(trailers.map { HTTPHeaders($0) }))
        var bytes = ByteBuffer()
        while let data = try channel.readOutbound(as: IOData.self) {
            if case .byteBuffer(let buffer) = data { bytes.writeImmutableBuffer(buffer) }
        }
        _ = try channel.finish()
        return String(buffer: bytes)
    }

    /// The status line, the header lines sorted, and the rest as they are.
    static func normalised(_ response: String) -> [String] {
        guard let end = response.range(of: "\r\n\r\n") else { return [response] }
        var lines = response[..<end.lowerBound].components(separatedBy: "\r\n")
        let status = lines.removeFirst()
        return [status] + lines.sorted() + [String(response[end.upperBound...])]
    }
}

import Foundation
import PorticoBase
import PorticoJSON
import Testing

@Suite struct JSONParserTests {
    @Test func parsesEveryKindOfValue() throws {
        let value = try JSONParser.parse(#"{"a":1,"b":-2.5e1,"c":"x\ny\u00e9\ud83d\ude00","d":[true,false,null],"e":{}}"#)
        #expect(value["a"] == .int(1))
        #expect(value["b"] == .double(-25))
        #expect(value["c"] == .string("x\nyé😀"))
        #expect(value["d"] == .array([.bool(true), .bool(false), .null]))
        #expect(value["e"] == .object([:]))
    }

    @Test func keepsIntegersApartFromDoubles() throws {
        #expect(try JSONParser.parse("9223372036854775807") == .int(Int64.max))
        #expect(try JSONParser.parse("1.0") == .double(1))
        #expect(try JSONParser.parse("1e2") == .double(100))
    }

    @Test(arguments: [
        ("", "empty body"),
        ("{", "end of input"),
        ("{\"a\":1,}", "member name"),
        ("[1 2]", "expected ',' or ']'"),
        ("{\"a\":1}x", "after the JSON value"),
        ("01", "leading zero"),
        ("\"\u{01}\"", "control character"),
        ("\"\\ud800\"", "surrogate"),
        ("{\"a\":1,\"a\":2}", "duplicate member name"),
        ("1e999", "out of range"),
        ("tru", "literal"),
        ("\"\\x\"", "invalid escape"),
    ])
    func refusesMalformedInputWithAReason(input: String, reason: String) {
        #expect {
            try JSONParser.parse(input)
        } throws: { error in
            "\(error)".contains(reason)
        }
    }

    /// Small objects are checked for duplicate names by a scan, larger ones by a set: both
    /// keep the members in order and both refuse a repeated name wherever it appears.
    @Test(arguments: [3, 16, 17, 40])
    func keepsMemberOrderAndFindsDuplicatesInObjectsOfAnySize(members: Int) throws {
        let names = (0..<members).map { "k\(($0 * 7) % members)" }
        let text = "{" + names.enumerated().map { "\"\($1)\":\($0)" }.joined(separator: ",") + "}"
        guard case .object(let object) = try JSONParser.parse(text) else {
            Issue.record("expected an object")
            return
        }
        #expect(Array(object.keys) == names)
        #expect(object[names[members - 1]] == .int(Int64(members - 1)))
        for repeated in [0, members / 2, members - 1] {
            let withDuplicate = "{" + (names + [names[repeated]]).map { "\"\($0)\":1" }.joined(separator: ",") + "}"
            #expect {
                try JSONParser.parse(withDuplicate)
            } throws: { error in
                "\(error)".contains("duplicate member name \"\(names[repeated])\"")
            }
        }
    }

    @Test func reportsTheOffsetOfTheProblem() {
        do {
            _ = try JSONParser.parse(#"{"jsonrpc": "2.0", x}"#)
            Issue.record("expected a parse error")
        } catch {
            #expect(error.offset == 19)
            #expect(error.description == "unexpected character 'x': expected a member name in double quotes at position 19")
        }
    }

    @Test func limitsNestingDepth() {
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(throws: JSONParseError.self) { try JSONParser.parse(deep) }
        let fine = String(repeating: "[", count: 10) + String(repeating: "]", count: 10)
        #expect((try? JSONParser.parse(fine)) != nil)
    }

    @Test func refusesInvalidUTF8() {
        #expect(throws: JSONParseError.self) { try JSONParser.parse([0x22, 0xFF, 0x22]) }
    }

    @Test func writesCompactJSONThatParsesBack() throws {
        let value: JSON = ["s": "quote \" backslash \\ tab \t ctl \u{02}", "n": [1, 2.5, -0.0, 1e300], "o": ["nested": nil]]
        let text = value.serializedString
        #expect(!text.contains(" \" "))
        #expect(try JSONParser.parse(text) == value)
        #expect(JSON.double(3).serializedString == "3.0")
        #expect(JSON.double(.nan).serializedString == "null")
        #expect(JSON.string("\u{02}").serializedString == "\"\\u0002\"")
    }

    /// A slow reference: the escape of each scalar, one at a time.
    static func escapedReference(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case let c where c.value < 0x20: out += String(format: "\\u%04x", c.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    @Test func escapesEveryByteThatNeedsItWhereverItFalls() throws {
        let reference = Self.escapedReference
        let specials: [Character] = ["\"", "\\", "\n", "\u{01}", "\u{1F}", "é", "😀", "a"]
        for length in 0..<20 {
            for special in specials {
                for position in 0...length {
                    var text = String(repeating: "x", count: length)
                    text.insert(special, at: text.index(text.startIndex, offsetBy: position))
                    #expect(JSON.string(text).serializedString == reference(text))
                }
            }
        }
        #expect(JSON.int(Int64.min).serializedString == "-9223372036854775808")
        #expect(JSON.int(Int64.max).serializedString == "9223372036854775807")
        #expect(JSON.int(-7).serializedString == "-7")
        #expect(JSON.double(-12.0).serializedString == "-12.0")
        // Hundredths print as Swift prints them; everything reads back as the same double.
        for value in [0.99, 1.5, -0.01, 12.34, 0.1, 1234567.89, -3.05, 0.125, 1e-7, 2.0 / 3.0, 1e20, -1e-300] {
            let text = JSON.double(value).serializedString
            #expect(Double(text) == value, "\(value) -> \(text)")
            if (value * 100).rounded() / 100 == value { #expect(text == "\(value)", "\(value) -> \(text)") }
        }
    }

    @Test func escapesLongTextWithEscapesCloseTogetherAndAcrossBlocks() throws {
        // Runs of plain bytes of every length between escapes, clusters of escapes in one word,
        // and text longer than the writer's 4096-byte block, written both as a string and as
        // the text of a serialisation.
        var generator = SystemRandomNumberGenerator()
        let pieces: [String] = ["\"", "\\", "\n", "\u{01}", "\u{1F}", "é", "😀", " ", "x", "\"\\\"", "abcdefgh"]
        for length in [7, 8, 9, 63, 4095, 4096, 4097, 9000] {
            var text = ""
            while text.utf8.count < length { text += pieces.randomElement(using: &generator)! }
            #expect(JSON.string(text).serializedString == Self.escapedReference(text), "\(text.debugDescription)")
            var serialized = JSONWriter()
            serialized.write(.string(text))
            var writer = JSONWriter()
            writer.writeAsString(serialized)
            #expect(String(decoding: writer.bytes, as: UTF8.self) == Self.escapedReference(Self.escapedReference(text)))
        }
        let plain = String(repeating: "0123456789", count: 1000)
        #expect(JSON.string(plain).serializedString == "\"" + plain + "\"")
    }

    @Test func integersOfEveryLengthAreWrittenAsSwiftWritesThem() {
        var values: [Int64] = [0, 9, 10, 99, 100, 101, Int64.max, Int64.min, Int64.min + 1]
        var power: Int64 = 1
        for _ in 0..<18 {
            power *= 10
            values += [power - 1, power, power + 1, power * 9 / 7]
        }
        let negatives = values.filter { $0 != .min }.map { -$0 }
        for value in values + negatives {
            #expect(JSON.int(value).serializedString == String(value))
        }
    }

    @Test func objectsThatShareTheirKeysAreWrittenAsObjectsThatDoNot() throws {
        // Records of one query share one array of keys, and the writer writes those keys once;
        // the text must be what the same objects with keys of their own give.
        let keys = ContiguousArray(["id", "name", "quote\"d", "nested"])
        let inner = ContiguousArray(["x", "y"])
        func record(_ i: Int64) -> JSON {
            let nested = JSONObject(uncheckedUniqueKeys: inner, values: [.int(i), .string("y\(i)")])
            return .object(JSONObject(uncheckedUniqueKeys: keys, values: [.int(i), .string("n\\\(i)"), .null, .object(nested)]))
        }
        let shared: JSON = ["data": .array((1...5).map(record)), "other": .array([record(9), ["id": 1, "x": 2]])]
        func unshared(_ value: JSON) -> JSON {
            switch value {
            case .array(let items): return .array(items.map(unshared))
            case .object(let object):
                var copy = JSONObject()
                for (key, member) in object { copy[String(decoding: Array(key.utf8), as: UTF8.self)] = unshared(member) }
                return .object(copy)
            default: return value
            }
        }
        let text = shared.serializedString
        #expect(text == unshared(shared).serializedString)
        #expect(text.hasPrefix(#"{"data":[{"id":1,"name":"n\\1","quote\"d":null,"nested":{"x":1,"y":"y1"}},{"id":2,"#))
        #expect(try JSONParser.parse(text) == shared)
        // One writer used twice: what it kept from the first value is not used for the second.
        var writer = JSONWriter()
        writer.write(shared)
        let other: JSON = .array([.object(JSONObject(uncheckedUniqueKeys: ContiguousArray(["a", "b"]), values: [1, 2]))])
        writer.write(other)
        #expect(String(decoding: writer.bytes, as: UTF8.self) == text + #"[{"a":1,"b":2}]"#)
    }

    @Test func bytesAreWrittenAsAStringOfTheirHex() {
        var writer = JSONWriter(capacity: 16)
        writer.appendASCII(UInt8(ascii: "["))
        let bytes: [UInt8] = [0x00, 0x0f, 0x10, 0x9a, 0xa9, 0xff] + (0..<40).map { UInt8($0 * 6) }
        bytes.withUnsafeBytes { writer.writeHexString($0) }
        writer.appendASCII(UInt8(ascii: "]"))
        let hex = bytes.map { String(format: "%02x", $0) }.joined()
        #expect(String(decoding: writer.bytes, as: UTF8.self) == "[\"" + hex + "\"]")
    }

    @Test func aSerialisationWrittenAsAStringMatchesTheTwoStepWay() throws {
        let values: [JSON] = [
            ["plain": "x", "n": 1, "d": -2.5, "b": true, "z": nil],
            ["quote \" in key": "quote \" back \\ nl \n ctl \u{01} tab \t é 😀", "list": ["a\"", ["b": "\\"]]],
            .string("only \"a\" string"), .int(-42), .array([]), .object([:]),
        ]
        for value in values {
            var serialized = JSONWriter()
            serialized.write(value)
            var direct = JSONWriter()
            direct.writeAsString(serialized)
            var twoStep = JSONWriter()
            twoStep.writeString(value.serializedString)
            #expect(direct.bytes == twoStep.bytes, "\(value.serializedString)")
            #expect(try JSONParser.parse(direct.bytes).stringValue.map { try JSONParser.parse($0) } == value)
        }
    }

    @Test func keepsMemberOrder() throws {
        let text = #"{"z":1,"a":2,"m":3}"#
        #expect(try JSONParser.parse(text).serializedString == text)
    }
}

@Suite struct Base64URLTests {
    @Test func roundTripsEveryLengthAndMatchesFoundation() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<70 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let encoded = Base64URL.encode(bytes)
            let foundation = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(encoded == foundation)
            #expect(Base64URL.decode(encoded) == bytes)
        }
    }

    @Test func refusesWhatIsNotUnpaddedBase64URL() {
        #expect(Base64URL.decode("ab+c") == nil)
        #expect(Base64URL.decode("abc=") == nil)
        #expect(Base64URL.decode("a") == nil, "no encoding is one character long")
        #expect(Base64URL.decode("AB") == nil, "stray bits in the last character")
        #expect(Base64URL.decode("AA") == [0])
        #expect(Base64URL.decode("") == [])
    }
}

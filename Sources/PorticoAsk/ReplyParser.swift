import Foundation
public import PorticoAskEngine
import PorticoBase
import PorticoJSON

/// Reads SQL out of what models really send: the JSON object that was asked for, that object in
/// a code fence or after prose, fenced SQL blocks, or a bare query in text; `<think>` sections
/// of reasoning models are skipped. Nothing here decides whether the SQL is allowed (the guard
/// does), only what the model meant to send.
public enum ReplyParser {
    public static func parse(_ reply: String) -> EngineReply {
        let text = withoutThinking(reply)
        var result = EngineReply(candidates: [])
        for object in jsonObjects(in: text) {
            let sql = object["sql"]
            if let sql = sql?.stringValue {
                append(sql, to: &result.candidates)
            } else if let list = sql?.arrayValue ?? object["candidates"]?.arrayValue {
                for item in list { if let s = item.stringValue ?? item["sql"]?.stringValue { append(s, to: &result.candidates) } }
            } else if sql?.isNull == true, result.reason == nil {
                result.reason = object["reason"]?.stringValue ?? object["message"]?.stringValue ?? "the model found no way to answer from this schema"
            }
            if result.chart == nil { result.chart = (object["chart"]?.stringValue ?? object["chart"]?["type"]?.stringValue)?.lowercased() }
            if result.title == nil { result.title = object["title"]?.stringValue }
        }
        if result.candidates.isEmpty {
            for block in fencedBlocks(in: text) where !block.language.hasPrefix("json") {
                append(block.body, to: &result.candidates)
            }
        }
        if result.candidates.isEmpty, result.reason == nil, let bare = bareQuery(in: text) {
            append(bare, to: &result.candidates)
        }
        if !result.candidates.isEmpty { result.reason = nil }
        return result
    }

    static func append(_ sql: String, to list: inout [String]) {
        var trimmed = sql.trimmingSpaces()
        while trimmed.hasSuffix(";") { trimmed = String(trimmed.dropLast()).trimmingSpaces() }
        guard !trimmed.isEmpty, !list.contains(trimmed) else { return }
        list.append(trimmed)
    }

    /// The reply without `<think>…</think>` (an unclosed one hides the rest).
    static func withoutThinking(_ text: String) -> String {
        var rest = Substring(text)
        var out = ""
        while let open = rest.range(of: "<think>") {
            out += rest[..<open.lowerBound]
            guard let close = rest[open.upperBound...].range(of: "</think>") else { return out }
            rest = rest[close.upperBound...]
        }
        return out + rest
    }

    /// Starting braces tried at most: each try may scan to the end of the reply, so a reply of
    /// nested braces that never parse costs this many scans, not one per byte.
    static let maxObjectStarts = 64

    /// Every top-level `{…}` in the text that parses as a JSON object, in order (braces inside
    /// JSON strings are skipped while matching).
    static func jsonObjects(in text: String) -> [JSONObject] {
        let bytes = Array(text.utf8)
        var objects: [JSONObject] = []
        var index = 0
        var starts = 0
        while index < bytes.count, objects.count < 8, starts < maxObjectStarts {
            guard bytes[index] == UInt8(ascii: "{") else {
                index += 1
                continue
            }
            starts += 1
            var depth = 0
            var inString = false
            var escaped = false
            var end: Int?
            scan: for j in index..<bytes.count {
                let b = bytes[j]
                if inString {
                    if escaped {
                        escaped = false
                    } else if b == UInt8(ascii: "\\") {
                        escaped = true
                    } else if b == UInt8(ascii: "\"") {
                        inString = false
                    }
                    continue
                }
                switch b {
                case UInt8(ascii: "\""): inString = true
                case UInt8(ascii: "{"): depth += 1
                case UInt8(ascii: "}"):
                    depth -= 1
                    if depth == 0 {
                        end = j
                        break scan
                    }
                default: break
                }
            }
            guard let end else { break }
            if let object = (try? JSONParser.parse(bytes[index...end]))?.objectValue {
                objects.append(object)
                index = end + 1
            } else {
                index += 1
            }
        }
        return objects
    }

    /// Markdown code fences: their info string (lower-cased) and body.
    static func fencedBlocks(in text: String) -> [(language: String, body: String)] {
        var blocks: [(String, String)] = []
        var language: String?
        var body: [Substring] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.drop { $0 == " " || $0 == "\t" }
            if trimmed.hasPrefix("```") {
                if let open = language {
                    blocks.append((open, body.joined(separator: "\n")))
                    language = nil
                    body = []
                } else {
                    language = trimmed.dropFirst(3).trimmingCharacters(in: " \t\r").lowercased()
                }
            } else if language != nil {
                body.append(line)
            }
        }
        return blocks
    }

    /// A query written in prose: from the first line that starts with SELECT or WITH to a `;` or
    /// a blank line.
    static func bareQuery(in text: String) -> String? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard
            let start = lines.firstIndex(where: { line in
                let word = line.drop { $0 == " " || $0 == "\t" }.prefix { $0.isLetter }.uppercased()
                return word == "SELECT" || word == "WITH"
            })
        else { return nil }
        var taken: [Substring] = []
        for line in lines[start...] {
            if line.allSatisfy({ $0 == " " || $0 == "\t" || $0 == "\r" }) { break }
            if let semicolon = line.firstIndex(of: ";") {
                taken.append(line[..<semicolon])
                break
            }
            taken.append(line)
        }
        return taken.joined(separator: "\n")
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> String {
        let chars = Set(set)
        var s = self
        while let f = s.first, chars.contains(f) { s = s.dropFirst() }
        while let l = s.last, chars.contains(l) { s = s.dropLast() }
        return String(s)
    }
}

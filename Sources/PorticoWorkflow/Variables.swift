public import Foundation
public import PorticoJSON

/// What a node's configuration may name with NocoBase's `{{…}}` variables: the execution's
/// context (`$context.data.<field>` is the record that triggered it, or what `workflows_trigger`
/// was given), the result of a node that ran before (`$jobsMapByNodeKey.<key>.<field>`), and the
/// time (`$system.now`).
public struct Variables: Sendable {
    public var context: JSON
    public var jobs: [String: JSON]
    public var now: Date

    public init(context: JSON, jobs: [String: JSON] = [:], now: Date) {
        self.context = context
        self.jobs = jobs
        self.now = now
    }

    /// The value a path names (`$context.data.amount`), `nil` when it names nothing.
    public func value(_ path: String) throws(WorkflowError) -> JSON? {
        let reference = try VariablePath(path)
        switch reference.root {
        case .context: return Self.follow(context, reference.steps)
        case .job(let key): return jobs[key].flatMap { Self.follow($0, reference.steps) }
        case .now: return .string(ISO8601DateFormatter().string(from: now))
        }
    }

    static func follow(_ start: JSON, _ steps: [String]) -> JSON? {
        var current = start
        for step in steps {
            switch current {
            case .object(let object):
                guard let next = object[step] else { return nil }
                current = next
            case .array(let items):
                guard let index = Int(step), items.indices.contains(index) else { return nil }
                current = items[index]
            default:
                return nil
            }
        }
        return current
    }

    /// `value` with every `{{…}}` replaced: a string that is one variable becomes the variable's
    /// value, typed (a number stays a number); a variable inside other text is written into it.
    public func resolve(_ value: JSON) throws(WorkflowError) -> JSON {
        switch value {
        case .string(let text):
            guard text.contains("{{") else { return value }
            let parts = try Template.parse(text)
            if parts.count == 1, case .variable(let path) = parts[0] { return try self.value(path) ?? .null }
            return .string(try interpolate(parts))
        case .array(let items):
            var result: [JSON] = []
            for item in items { result.append(try resolve(item)) }
            return .array(result)
        case .object(let object):
            var result = JSONObject()
            for (key, item) in object { result[key] = try resolve(item) }
            return .object(result)
        default:
            return value
        }
    }

    /// `filter` (a node's NocoBase filter) with its variables resolved as values only. A record's
    /// field can hold any JSON, so a variable's value is never read as filter syntax: one that
    /// holds an object (`{"$ne": "x"}`) is refused, a list may only hold plain values, and `$and`
    /// / `$or` take lists written in the filter itself. Keys are not resolved (they name fields).
    public func resolveFilter(_ filter: JSON) throws(WorkflowError) -> JSON {
        guard case .object(let object) = filter else { return try operand(filter) }
        var result = JSONObject()
        for (key, value) in object {
            if key == "$and" || key == "$or" {
                guard case .array(let items) = value else {
                    throw WorkflowError("a filter's \(key) is a list of filters written in the node; it cannot come from a variable")
                }
                var resolved: [JSON] = []
                for item in items { resolved.append(try resolveFilter(item)) }
                result[key] = .array(resolved)
            } else if !key.hasPrefix("$"), case .object = value {
                // A field's operators, or a relation's fields.
                result[key] = try resolveFilter(value)
            } else {
                result[key] = try operand(value)
            }
        }
        return .object(result)
    }

    /// An operand of a filter (or a key to look up), its variables resolved as plain values.
    public func operand(_ value: JSON) throws(WorkflowError) -> JSON {
        switch value {
        case .string(let text):
            guard text.contains("{{") else { return value }
            let parts = try Template.parse(text)
            guard parts.count == 1, case .variable(let path) = parts[0] else { return try resolve(value) }
            return try Self.plain(try self.value(path) ?? .null, from: path)
        case .array(let items):
            var resolved: [JSON] = []
            for item in items { resolved.append(try operand(item)) }
            return .array(resolved)
        case .object(let object):
            var resolved = JSONObject()
            for (key, item) in object { resolved[key] = try operand(item) }
            return .object(resolved)
        default:
            return value
        }
    }

    /// `value`, the value of the variable `path`, when it is one value or a list of them.
    static func plain(_ value: JSON, from path: String) throws(WorkflowError) -> JSON {
        func isPlain(_ item: JSON) -> Bool {
            switch item {
            case .object, .array: false
            default: true
            }
        }
        switch value {
        case .object:
            throw WorkflowError("{{\(path)}} holds an object; in a filter a variable stands for one value or a list of values, never for conditions")
        case .array(let items) where !items.allSatisfy(isPlain):
            throw WorkflowError("{{\(path)}} holds a list with objects or lists in it; in a filter a variable stands for one value or a list of values")
        default:
            return value
        }
    }

    /// `url` with its variables written in: a URL that is one variable is its value; elsewhere each
    /// value is percent-encoded, so it stays one part of the path or query and cannot add others
    /// (`../`, `?admin=1`, `#`), nor move the request to another host.
    public func resolveURL(_ url: String) throws(WorkflowError) -> String {
        guard url.contains("{{") else { return url }
        let parts = try Template.parse(url)
        if parts.count == 1, case .variable(let path) = parts[0] { return Self.text(try value(path) ?? .null) }
        return try interpolate(parts, encoding: Self.percentEncoded)
    }

    /// Text with each variable's value written in (as `encoding` writes it).
    func interpolate(_ parts: [Template.Part], encoding: (String) -> String = { $0 }) throws(WorkflowError) -> String {
        var out = ""
        for part in parts {
            switch part {
            case .text(let literal): out += literal
            case .variable(let path): out += encoding(Self.text(try value(path) ?? .null))
            }
        }
        return out
    }

    /// Text with everything but RFC 3986's unreserved characters percent-encoded, and the dot
    /// too: a value of "." or ".." would otherwise be a path segment that moves the request.
    static func percentEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }

    /// A value written into text.
    static func text(_ value: JSON) -> String {
        switch value {
        case .null: ""
        case .string(let s): s
        case .int(let i): String(i)
        case .double(let d): d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(d)
        case .bool(let b): b ? "true" : "false"
        default: value.serializedString
        }
    }
}

/// Where a variable points: its root and the steps below it.
struct VariablePath: Sendable {
    enum Root: Sendable, Equatable {
        case context
        case job(String)
        case now
    }

    let root: Root
    let steps: [String]

    init(_ text: String) throws(WorkflowError) {
        let path = text.trimmingCharacters(in: .whitespaces)
        let parts = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard !parts.contains(where: \.isEmpty) else { throw WorkflowError("the variable {{\(path)}} has an empty part; write it as {{$context.data.field}}") }
        switch parts[0] {
        case "$context":
            root = .context
            steps = Array(parts.dropFirst())
        case "$jobsMapByNodeKey":
            guard parts.count >= 2 else { throw WorkflowError("{{\(path)}} names no node; write {{$jobsMapByNodeKey.<node key>.<field>}}") }
            root = .job(parts[1])
            steps = Array(parts.dropFirst(2))
        case "$system" where parts.count == 2 && parts[1] == "now":
            root = .now
            steps = []
        default:
            throw WorkflowError(
                "unknown variable {{\(path)}}; variables start with $context (e.g. {{$context.data.amount}}), $jobsMapByNodeKey (e.g. {{$jobsMapByNodeKey.q1.id}}) or are {{$system.now}}"
            )
        }
    }
}

/// Text with `{{variable}}` parts.
enum Template {
    enum Part: Sendable, Equatable {
        case text(String)
        case variable(String)
    }

    static func parse(_ text: String) throws(WorkflowError) -> [Part] {
        var parts: [Part] = []
        var rest = Substring(text)
        while let open = rest.range(of: "{{") {
            if open.lowerBound > rest.startIndex { parts.append(.text(String(rest[..<open.lowerBound]))) }
            guard let close = rest[open.upperBound...].range(of: "}}") else {
                throw WorkflowError("'\(text.prefix(80))' opens a variable with {{ and never closes it with }}")
            }
            let name = rest[open.upperBound..<close.lowerBound].trimmingCharacters(in: .whitespaces)
            _ = try VariablePath(name)
            parts.append(.variable(name))
            rest = rest[close.upperBound...]
        }
        if !rest.isEmpty { parts.append(.text(String(rest))) }
        return parts
    }

    /// Every variable named anywhere in `value`.
    static func variables(in value: JSON) throws(WorkflowError) -> [String] {
        switch value {
        case .string(let text):
            guard text.contains("{{") else { return [] }
            return try parse(text).compactMap { part in
                if case .variable(let name) = part { return name }
                return nil
            }
        case .array(let items):
            var names: [String] = []
            for item in items { names += try variables(in: item) }
            return names
        case .object(let object):
            var names: [String] = []
            for (key, item) in object {
                if key.hasPrefix("{{") || key.hasPrefix("$context.") || key.hasPrefix("$jobsMapByNodeKey.") {
                    names.append(key.hasPrefix("{{") ? String(key.dropFirst(2).dropLast(2)).trimmingCharacters(in: .whitespaces) : key)
                }
                names += try variables(in: item)
            }
            return names
        default:
            return []
        }
    }
}

/// A workflow that cannot be saved or run as it is, with what to change.
public struct WorkflowError: Error, CustomStringConvertible, Sendable {
    public let message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}

import Foundation
import PorticoData
import PorticoStore

/// Reads the Chinook SQLite script: its tables (columns, keys, foreign keys) and the rows of
/// its INSERT statements, so the sample can be loaded into any database flavor.
struct ChinookScript {
    struct Table {
        var name: String
        var columns: [(name: String, type: String, notNull: Bool)] = []
        var primaryKey: [String] = []
        var foreignKeys: [(column: String, target: String, targetColumn: String)] = []
    }

    var tables: [Table] = []
    var rows: [String: (columns: [String], values: [[SQLValue]])] = [:]

    init(text: String) throws {
        var scanner = Substring(text)
        while let range = scanner.range(of: "CREATE TABLE [") {
            scanner = scanner[range.upperBound...]
            guard let nameEnd = scanner.firstIndex(of: "]"), let bodyEnd = scanner.range(of: "\n);") else { break }
            var table = Table(name: String(scanner[..<nameEnd]))
            let body = scanner[nameEnd..<bodyEnd.lowerBound]
            var pending: String?
            for rawLine in body.split(separator: "\n") {
                let line = rawLine.trimmingCharacters(in: .whitespaces)
                if let foreignColumn = pending, line.hasPrefix("REFERENCES") || line.contains("REFERENCES") {
                    let names = Self.bracketed(line)
                    if names.count >= 2 { table.foreignKeys.append((foreignColumn, names[0], names[1])) }
                    pending = nil
                }
                if line.hasPrefix("[") {
                    let names = Self.bracketed(line)
                    guard let name = names.first else { continue }
                    let afterName = line[line.index(after: line.firstIndex(of: "]")!)...].trimmingCharacters(in: .whitespaces)
                    let type = String(afterName.split(separator: " ").first ?? "").trimmingCharacters(in: [","])
                    table.columns.append((name, type, afterName.contains("NOT NULL")))
                } else if line.hasPrefix("CONSTRAINT"), line.contains("PRIMARY KEY") {
                    table.primaryKey = Array(Self.bracketed(line).dropFirst())
                } else if line.hasPrefix("FOREIGN KEY") {
                    let names = Self.bracketed(line)
                    if names.count >= 3 {
                        table.foreignKeys.append((names[0], names[1], names[2]))
                    } else if let column = names.first {
                        pending = column
                    }
                }
            }
            tables.append(table)
            scanner = scanner[bodyEnd.upperBound...]
        }
        var inserts = Substring(text)
        while let range = inserts.range(of: "INSERT INTO [") {
            inserts = inserts[range.upperBound...]
            guard let nameEnd = inserts.firstIndex(of: "]"), let valuesRange = inserts.range(of: "VALUES") else { break }
            let table = String(inserts[..<nameEnd])
            let columns = Self.bracketed(String(inserts[nameEnd..<valuesRange.lowerBound]))
            var reader = ValueReader(text: inserts[valuesRange.upperBound...])
            let tuples = try reader.tuples()
            inserts = reader.rest
            rows[table, default: (columns, [])].values.append(contentsOf: tuples)
        }
    }

    static func bracketed(_ text: String) -> [String] {
        var names: [String] = []
        var current: String?
        for c in text {
            if c == "[" {
                current = ""
            } else if c == "]" {
                if let n = current { names.append(n) }; current = nil
            } else if current != nil {
                current!.append(c)
            }
        }
        return names
    }

    /// Reads `(1, 'text', NULL, 0.99), (...);`.
    struct ValueReader {
        var text: Substring
        var rest: Substring { text }

        init(text: Substring) { self.text = text }

        mutating func skipSpace() {
            while let c = text.first, c.isWhitespace { text.removeFirst() }
        }

        mutating func tuples() throws -> [[SQLValue]] {
            var result: [[SQLValue]] = []
            while true {
                skipSpace()
                guard text.first == "(" else { throw ScriptError(message: "expected '(' in INSERT values") }
                text.removeFirst()
                var tuple: [SQLValue] = []
                while true {
                    skipSpace()
                    tuple.append(try value())
                    skipSpace()
                    guard let c = text.first else { throw ScriptError(message: "unterminated tuple") }
                    text.removeFirst()
                    if c == ")" { break }
                    guard c == "," else { throw ScriptError(message: "expected ',' between values") }
                }
                result.append(tuple)
                skipSpace()
                guard let c = text.first else { return result }
                text.removeFirst()
                if c == ";" { return result }
                guard c == "," else { throw ScriptError(message: "expected ',' or ';' after a tuple") }
            }
        }

        mutating func value() throws -> SQLValue {
            if text.hasPrefix("NULL") {
                text.removeFirst(4)
                return .null
            }
            if text.hasPrefix("N'") { text.removeFirst() }
            if text.first == "'" {
                text.removeFirst()
                var s = ""
                while let c = text.first {
                    text.removeFirst()
                    if c == "'" {
                        if text.first == "'" {
                            text.removeFirst()
                            s.append("'")
                        } else {
                            return .text(s)
                        }
                    } else {
                        s.append(c)
                    }
                }
                throw ScriptError(message: "unterminated string")
            }
            var number = ""
            while let c = text.first, c.isNumber || c == "." || c == "-" || c == "e" || c == "E" || c == "+" {
                number.append(c)
                text.removeFirst()
            }
            if let i = Int64(number) { return .int(i) }
            if let d = Double(number) { return .double(d) }
            throw ScriptError(message: "unreadable value near '\(text.prefix(20))'")
        }
    }

    struct ScriptError: Error, CustomStringConvertible {
        var message: String
        var description: String { "Chinook script: \(message)" }
    }
}

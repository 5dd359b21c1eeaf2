import Foundation
public import PorticoAskEngine
import PorticoBase
import PorticoData
import PorticoStore

/// Terms as CSV (RFC 4180), the way SQLBot's users keep them in spreadsheets: one term per row
/// under the header `term,synonyms,description,column,table,expression,condition`; synonyms are
/// separated by `;`, `column` is `Table.Column`, and `table` goes with `expression` or `condition`.
public enum TermsCSV {
    public static let header = ["term", "synonyms", "description", "column", "table", "expression", "condition"]

    /// One row of the file: the term as `KnowledgeService.addTerm` takes it.
    public struct Row: Sendable, Equatable {
        public var line: Int
        public var term: String
        public var synonyms: [String]
        public var description: String?
        public var meaning: KnowledgeService.MeaningDraft?
    }

    public struct Invalid: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    public static func write(_ terms: [Term]) -> String {
        var out = header.joined(separator: ",") + "\r\n"
        for term in terms {
            var fields = [term.term, term.synonyms.joined(separator: "; "), term.description ?? "", "", "", "", ""]
            switch term.meaning {
            case .column(let table, let column)?: fields[3] = "\(table).\(column)"
            case .expression(let table, let sql)?: (fields[4], fields[5]) = (table, sql)
            case .condition(let table, let sql)?: (fields[4], fields[6]) = (table, sql)
            case nil: break
            }
            out += fields.map(quote).joined(separator: ",") + "\r\n"
        }
        return out
    }

    static func quote(_ field: String) -> String {
        guard field.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) || field.hasPrefix(" ") else { return field }
        return "\"" + field.doubling("\"") + "\""
    }

    /// The rows of a file; the header names the columns (in any order, `term` required).
    public static func read(_ text: String) throws(Invalid) -> [Row] {
        let records = try records(text)
        guard let first = records.first else { throw Invalid(description: "the file is empty; its first line is the header \(header.joined(separator: ","))") }
        let names = first.fields.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard let termIndex = names.firstIndex(of: "term") else {
            throw Invalid(description: "the header has no 'term' column; write \(header.joined(separator: ","))")
        }
        if let unknown = names.first(where: { !$0.isEmpty && !header.contains($0) }) {
            throw Invalid(description: "the header names an unknown column '\(unknown)'; the columns are \(header.joined(separator: ","))")
        }
        func field(_ record: (line: Int, fields: [String]), _ name: String) -> String? {
            guard let i = names.firstIndex(of: name), i < record.fields.count else { return nil }
            let value = record.fields[i].trimmingCharacters(in: .whitespaces)
            return value.isEmpty ? nil : value
        }
        var rows: [Row] = []
        for record in records.dropFirst() where !record.fields.allSatisfy({ $0.trimmingCharacters(in: .whitespaces).isEmpty }) {
            guard termIndex < record.fields.count, let term = field(record, "term") else {
                throw Invalid(description: "line \(record.line) has no term")
            }
            let synonyms = (field(record, "synonyms") ?? "").split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            let column = field(record, "column")
            let table = field(record, "table")
            let expression = field(record, "expression")
            let condition = field(record, "condition")
            guard [column, expression, condition].compactMap({ $0 }).count <= 1 else {
                throw Invalid(description: "line \(record.line) gives more than one of column, expression and condition; a term means one thing")
            }
            var meaning: KnowledgeService.MeaningDraft?
            if let column {
                meaning = .column(column)
            } else if let sql = expression ?? condition {
                guard let table else {
                    throw Invalid(description: "line \(record.line) has an \(expression != nil ? "expression" : "condition") without its table")
                }
                meaning = expression != nil ? .expression(table: table, sql: sql) : .condition(table: table, sql: sql)
            }
            rows.append(Row(line: record.line, term: term, synonyms: synonyms, description: field(record, "description"), meaning: meaning))
        }
        return rows
    }

    /// The file's records with the line each starts on; quoted fields may hold commas, quotes and newlines.
    static func records(_ text: String) throws(Invalid) -> [(line: Int, fields: [String])] {
        var records: [(line: Int, fields: [String])] = []
        var fields: [String] = []
        var field = ""
        var quoted = false
        var line = 1
        var start = 1
        var characters = Array(text)
        if characters.first == "\u{FEFF}" { characters.removeFirst() }
        var i = 0
        func endRecord() {
            fields.append(field)
            records.append((start, fields))
            fields = []
            field = ""
        }
        while i < characters.count {
            let c = characters[i]
            if quoted {
                if c == "\"" {
                    if i + 1 < characters.count, characters[i + 1] == "\"" {
                        field.append("\"")
                        i += 1
                    } else {
                        quoted = false
                    }
                } else {
                    if c == "\n" || c == "\r\n" { line += 1 }
                    field.append(c)
                }
            } else if c == "\"" && field.isEmpty {
                quoted = true
            } else if c == "," {
                fields.append(field)
                field = ""
            } else if c == "\n" || c == "\r\n" || c == "\r" {
                endRecord()
                line += 1
                start = line
            } else {
                field.append(c)
            }
            i += 1
        }
        guard !quoted else { throw Invalid(description: "a quoted field starting on line \(start) is not closed") }
        if !field.isEmpty || !fields.isEmpty { endRecord() }
        return records
    }
}

extension KnowledgeService {
    /// Adds every row of a CSV file as a term of the datasource; nothing is added unless every row
    /// is valid (each is checked as `addTerm` checks it, before any is saved).
    public func importTerms(app: String, datasource: String, csv: String, by userID: Int64?) async throws -> [Term] {
        let rows: [TermsCSV.Row]
        do { rows = try TermsCSV.read(csv) } catch { throw DatasourceError(error.description) }
        var others = try await store.terms(app: app, datasource: datasource)
        guard others.count + rows.count <= Self.maxPerDatasource else {
            throw DatasourceError("datasource '\(datasource)' would have \(others.count + rows.count) terms; it keeps at most \(Self.maxPerDatasource)")
        }
        var checked: [Term] = []
        for row in rows {
            var term = Term(datasource: datasource, term: row.term, synonyms: row.synonyms, description: row.description, createdBy: userID)
            do {
                try await check(&term, meaning: row.meaning, app: app, others: others)
            } catch let error as DatasourceError {
                throw DatasourceError("line \(row.line): \(error.message)")
            }
            checked.append(term)
            others.append(term)
        }
        var saved: [Term] = []
        for term in checked { saved.append(try await store.insert(term, app: app)) }
        return saved
    }
}

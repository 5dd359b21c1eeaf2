import ArgumentParser
import Foundation
import PorticoAsk
import PorticoAskEngine
import PorticoData
import PorticoJSON

/// `portico term add|list|remove|import|export`: the words of the business and what they mean
/// in a datasource, which both engines read.
struct TermCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "term", abstract: "Teach the question engines a datasource's business words (a column, an expression or a condition each).",
        subcommands: [Add.self, List.self, Remove.self, Import.self, Export.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a term; its column, expression or condition is checked against the datasource and run once.",
            discussion: """
                Examples:
                  portico term add --datasource main --term revenue --synonym sales --expression 'UnitPrice * Quantity' --table InvoiceLine
                  portico term add --datasource main --term 'active customer' --condition 'SupportRepId IS NOT NULL' --table Customer
                  portico term add --datasource main --term headcount --column Employee.EmployeeId --description 'people employed'
                """)
        @OptionGroup var common: CommonOptions
        @Option(help: "The datasource (main is the app's own collections).") var datasource: String
        @Option(help: "The word or phrase.") var term: String
        @Option(name: .customLong("synonym"), help: "Another word for it (repeatable).") var synonyms: [String] = []
        @Option(help: "What it means, in words (for LLMs).") var description: String?
        @Option(help: "The column it names, Table.Column.") var column: String?
        @Option(help: "SQL computed per row of --table, e.g. 'UnitPrice * Quantity'.") var expression: String?
        @Option(help: "SQL that holds for the rows of --table it means, e.g. 'Status = ''active'''.") var condition: String?
        @Option(help: "The table of --expression or --condition.") var table: String?
        @Option(help: "The app (default main).") var app: String = "main"

        func validate() throws {
            guard [column, expression, condition].compactMap({ $0 }).count <= 1 else {
                throw ValidationError("give at most one of --column, --expression and --condition: a term means one thing")
            }
            if (expression != nil || condition != nil) != (table != nil) {
                throw ValidationError("--expression and --condition need --table (and --table needs one of them)")
            }
        }

        func run() async throws {
            var meaning: KnowledgeService.MeaningDraft?
            if let column { meaning = .column(column) }
            if let expression, let table { meaning = .expression(table: table, sql: expression) }
            if let condition, let table { meaning = .condition(table: table, sql: condition) }
            let saved = try await common.withAsker { asker in
                try await asker.knowledge.addTerm(
                    app: app, datasource: datasource, term: term, synonyms: synonyms, description: description, meaning: meaning, by: nil)
            }
            print("Added term \(saved.id) (\(saved.term)) to datasource \(datasource) of app \(app).")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List a datasource's terms: id, term, synonyms, meaning, description.")
        @OptionGroup var common: CommonOptions
        @Option(help: "The datasource.") var datasource: String
        @Option(help: "The app (default main).") var app: String = "main"
        @Flag(help: "One JSON object per term.") var json = false

        func run() async throws {
            let terms = try await common.withAsker { try await $0.knowledge.store.terms(app: app, datasource: datasource) }
            for term in terms {
                if json {
                    print(term.json.serializedString)
                    continue
                }
                var meaning = ""
                switch term.meaning {
                case .column(let table, let column)?: meaning = "column \(table).\(column)"
                case .expression(let table, let sql)?: meaning = "expression on \(table): \(sql)"
                case .condition(let table, let sql)?: meaning = "condition on \(table): \(sql)"
                case nil: meaning = "-"
                }
                print("\(term.id)\t\(term.term)\t\(term.synonyms.joined(separator: "; "))\t\(meaning)\t\(term.description ?? "")")
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a term.")
        @OptionGroup var common: CommonOptions
        @Argument(help: "The term's id (from `portico term list`).") var id: Int64
        @Option(help: "The app (default main).") var app: String = "main"

        func run() async throws {
            try await common.withAsker { try await $0.knowledge.removeTerm(app: app, id: id) }
            print("Removed term \(id) from app \(app).")
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add the terms of a CSV file (header: \(TermsCSV.header.joined(separator: ","))); none is added unless all are valid.",
            discussion: "Synonyms are separated by ';'; column is Table.Column; table goes with expression or condition. `-` reads standard input.")
        @OptionGroup var common: CommonOptions
        @Argument(help: "The CSV file.") var file: String
        @Option(help: "The datasource.") var datasource: String
        @Option(help: "The app (default main).") var app: String = "main"

        func run() async throws {
            let text = try readInput(file)
            let saved = try await common.withAsker { try await $0.knowledge.importTerms(app: app, datasource: datasource, csv: text, by: nil) }
            print("Imported \(saved.count) terms into datasource \(datasource) of app \(app).")
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Write a datasource's terms as CSV to standard output.")
        @OptionGroup var common: CommonOptions
        @Option(help: "The datasource.") var datasource: String
        @Option(help: "The app (default main).") var app: String = "main"

        func run() async throws {
            let terms = try await common.withAsker { try await $0.knowledge.store.terms(app: app, datasource: datasource) }
            print(TermsCSV.write(terms), terminator: "")
        }
    }
}

/// `portico example add|list|remove`: questions with the SQL that answers them.
struct ExampleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "example", abstract: "Teach the question engines with questions and the SQL that answers them.",
        subcommands: [Add.self, List.self, Remove.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add an example; its SQL passes the guard and runs once before it is saved.",
            discussion: """
                A question with the same words and other values (numbers, quoted text, the datasource's values) is then answered \
                by the built-in engine from this SQL, with the new values; an LLM is shown the examples most like its question.
                """)
        @OptionGroup var common: CommonOptions
        @Option(help: "The datasource.") var datasource: String
        @Option(help: "The question.") var question: String
        @Option(help: "One SELECT that answers it.") var sql: String
        @Option(help: "The app (default main).") var app: String = "main"

        func run() async throws {
            let saved = try await common.withAsker { asker in
                try await asker.knowledge.addExample(app: app, datasource: datasource, question: question, sql: sql, by: nil)
            }
            print("Added example \(saved.id) to datasource \(datasource) of app \(app).")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List a datasource's examples: id, question, SQL.")
        @OptionGroup var common: CommonOptions
        @Option(help: "The datasource.") var datasource: String
        @Option(help: "The app (default main).") var app: String = "main"
        @Flag(help: "One JSON object per example.") var json = false

        func run() async throws {
            let examples = try await common.withAsker { try await $0.knowledge.store.examples(app: app, datasource: datasource) }
            for example in examples {
                print(json ? example.json.serializedString : "\(example.id)\t\(example.question)\t\(example.sql)")
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove an example.")
        @OptionGroup var common: CommonOptions
        @Argument(help: "The example's id (from `portico example list`).") var id: Int64
        @Option(help: "The app (default main).") var app: String = "main"

        func run() async throws {
            try await common.withAsker { try await $0.knowledge.removeExample(app: app, id: id) }
            print("Removed example \(id) from app \(app).")
        }
    }
}

/// A file's text, or standard input's for `-`.
func readInput(_ file: String) throws -> String {
    if file == "-" { return String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self) }
    guard let data = FileManager.default.contents(atPath: file) else { throw ValidationError("cannot read \(file)") }
    return String(decoding: data, as: UTF8.self)
}

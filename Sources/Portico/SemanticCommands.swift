import ArgumentParser
import Foundation
import PorticoAsk
import PorticoAskEngine
import PorticoJSON

/// `portico semantic import|export|show`: a datasource's semantic layer as a file — Portico's
/// own YAML, or dbt MetricFlow, Snowflake Cortex Analyst and WrenAI models to import.
struct SemanticCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "semantic", abstract: "Declare a datasource's metrics, dimensions, segments and relationships from a file, and write them out.",
        subcommands: [Import.self, Export.self, Show.self])

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Read a semantic model file into a datasource: each definition is created, or replaces the one of its name.",
            discussion: """
                Formats: portico (what `portico semantic export` writes), dbt (MetricFlow semantic_models and metrics YAML), cortex \
                (Snowflake Cortex Analyst semantic model YAML), wren (WrenAI MDL JSON). Each definition is checked against the \
                datasource and run once; what cannot be taken is listed, and the command fails when anything was. `-` reads standard input.
                """)
        @OptionGroup var common: CommonOptions
        @Argument(help: "The file.") var file: String
        @Option(help: "The datasource.") var datasource: String
        @Option(help: "portico, dbt, cortex or wren (default portico).") var format = "portico"
        @Option(help: "The app (default main).") var app: String = "main"

        func run() async throws {
            let text = try readInput(file)
            guard let format = SemanticFile.Format(rawValue: format.lowercased()) else {
                throw ValidationError("--format is portico, dbt, cortex or wren; got '\(self.format)'")
            }
            let parsed: SemanticFile.Parsed
            do { parsed = try SemanticFile.read(text, format: format) } catch let error as SemanticFile.Invalid { throw ValidationError(error.description) }
            let report = try await common.withAsker { asker in
                try await asker.semantic.importModel(app: app, datasource: datasource, parsed, knowledge: asker.knowledge, by: nil)
            }
            print(
                "Imported into datasource \(datasource) of app \(app): \(report.created.count) created, \(report.replaced.count) replaced, "
                    + "\(report.examples) verified queries.")
            for line in report.skipped { print("not taken: \(line)") }
            for line in report.failed { print("failed: \(line)") }
            if !report.failed.isEmpty || !report.skipped.isEmpty {
                throw ValidationError("\(report.failed.count + report.skipped.count) definitions of the file were not imported (listed above)")
            }
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Write a datasource's semantic model as Portico's YAML to standard output.")
        @OptionGroup var common: CommonOptions
        @Option(help: "The datasource.") var datasource: String
        @Option(help: "The app (default main).") var app: String = "main"

        func run() async throws {
            let (definitions, examples) = try await common.withAsker { asker in
                (
                    try await asker.semantic.store.semanticDefinitions(app: app, datasource: datasource),
                    try await asker.knowledge.store.examples(app: app, datasource: datasource)
                )
            }
            print(SemanticFile.write(SemanticModel(definitions), examples: examples, datasource: datasource), terminator: "")
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List a datasource's metrics, dimensions, segments and relationships.")
        @OptionGroup var common: CommonOptions
        @Option(help: "The datasource.") var datasource: String
        @Option(help: "The app (default main).") var app: String = "main"
        @Flag(help: "One JSON object per definition, with its kind.") var json = false

        func run() async throws {
            let definitions = try await common.withAsker { try await $0.semantic.store.semanticDefinitions(app: app, datasource: datasource) }
            for d in definitions {
                if json {
                    var object = d.json.objectValue ?? [:]
                    object["kind"] = .string(d.kind.rawValue)
                    print(JSON.object(object).serializedString)
                    continue
                }
                let meaning: String
                switch d.body {
                case .metric(let table, let sql, let filter): meaning = "\(sql) on \(table)" + (filter.map { " where \($0)" } ?? "")
                case .derived(let expression): meaning = expression
                case .dimension(let table, let sql, let time): meaning = "\(sql) of \(table)" + (time ? " (time)" : "")
                case .segment(let table, let condition): meaning = "\(table) where \(condition)"
                case .relationship(_, _, let oneToOne): meaning = oneToOne ? "one to one" : "many to one"
                }
                print("\(d.id)\t\(d.kind.rawValue)\t\(d.name)\t\(d.synonyms.joined(separator: "; "))\t\(meaning)\t\(d.description ?? "")")
            }
        }
    }
}

import ArgumentParser
import AsyncHTTPClient
import Foundation
import PorticoAsk
import PorticoAskEngine
import PorticoAuth
import PorticoBase
import PorticoCharts
import PorticoData
import PorticoInstance
import PorticoJSON
import PorticoStore

/// `portico ask "question"`: one question answered on this data directory, printed as SQL and a table.
struct AskCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ask", abstract: "Answer a question in plain language: prints the engine, the SQL and the rows; --chart writes the chart as a PNG.")
    @OptionGroup var common: CommonOptions
    @Argument(help: "The question.") var question: String
    @Option(help: "The datasource to ask (default main, the app's own collections).") var datasource: String?
    @Option(help: "The engine: the name of a configured LLM, llm (the first configured) or builtin.") var engine: String?
    @Option(help: "The app (default main).") var app: String = "main"
    @Option(help: "Language of the title: en, zh-CN, zh-TW, ko-KR.") var lang: String = "en"
    @Option(help: "Write the chart to this PNG file.") var chart: String?
    @Option(help: "What to answer when asked back (repeatable): a reading to run (run:...) or the column meant (Table.Column).")
    var choice: [String] = []
    @Flag(
        inversion: .prefixedNo,
        help:
            "Run the built-in engine's reading at once only when it is sure of it; else show it to run with --choice (default on, as PORTICO_ASK_SURE_ONLY says; --no-sure-only runs it at once)."
    ) var sureOnly: Bool?

    func run() async throws {
        let sureOnly = try self.sureOnly ?? CommonOptions.askSureOnly()
        try await common.withAsker { given in
            var asker = given
            asker.sureOnly = sureOnly
            do {
                var request = AskRequest(
                    app: app, userID: nil, question: question, datasource: datasource, lang: lang, engine: engine, drawImage: chart != nil)
                request.choices = choice
                let answer = try await asker.ask(request)
                print("Engine: \(answer.engine)\n\nSQL:\n\(answer.sql)\n")
                print(TextTable.render(columns: answer.columns, rows: answer.rows, limit: 50))
                print("\n\(answer.summary)")
                if let chart {
                    if let png = answer.png {
                        try Data(png).write(to: URL(fileURLWithPath: chart))
                        let drawn =
                            answer.chartTime.map {
                                String(format: " (drawn in %.1f ms)", Double($0.components.attoseconds) / 1e15 + Double($0.components.seconds) * 1000)
                            } ?? ""
                        print("Chart (\(answer.chart.kind.rawValue)) written to \(chart)\(drawn).")
                    } else {
                        print("No chart: the rows are shown best as a table.")
                    }
                }
            } catch let refusal as AskRefusal {
                // The command line keeps no chat: the choices made before are named again.
                let before = choice.map { "--choice \($0) " }.joined()
                let choices = refusal.clarification?.options.map { "\(before)--choice \($0.value) (\($0.label))" }.joined(separator: " or ")
                throw NotAnswered(
                    message: "not answered: \(refusal.message)" + (refusal.sql.map { choices == nil ? "\nSQL: \($0)" : "" } ?? "")
                        + (choices.map { "\nAsk again with \($0)." } ?? ""))
            }
        }
    }
}

/// `portico eval FILE.jsonl`: scores an engine on questions with gold SQL.
struct EvalCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eval",
        abstract:
            "Score an engine on questions with gold SQL ({\"id\", \"question\", \"sql\"} per line, optionally \"db\"): prints correct, wrong and refused.",
        discussion: """
            An answer is correct when its rows hold every gold column's values, in the gold row order where the gold SQL orders. \
            A line's "db" names its datasource; one not yet registered is added from <db>.sqlite in the file's folder. With more \
            than one database, a line per database follows the totals. The calibration table counts the answers in each \
            confidence band (the built-in engine says how sure it is) and how many of them were right. With --folds (a JSON file \
            {"unseen": N, "folds": {"<db>": fold}}, as bench/spider-folds.json), a line per fold follows; the unseen fold's \
            questions, outcomes and databases are never printed, only its totals, so it stays a check on databases no one studied.
            """)
    @OptionGroup var common: CommonOptions
    @Argument(help: "A JSON Lines file of questions with gold SQL.") var file: String
    @Option(help: "The datasource the questions are about (default: each line's \"db\", else main).") var datasource: String?
    @Option(help: "The engine: the name of a configured LLM, llm or builtin.") var engine: String?
    @Option(help: "The app (default main).") var app: String = "main"
    @Flag(help: "Print each question's outcome (with the engine's confidence and risks).") var verbose = false
    @Option(help: "A JSON file that puts each database in a fold ({\"unseen\": N, \"folds\": {\"<db>\": fold}}): totals per fold.")
    var folds: String?
    @Option(help: "Only the questions of these folds (comma-separated, e.g. 1,2,3,4), with --folds.") var onlyFolds: String?

    struct Question {
        let id: String
        let question: String
        let sql: String
        let db: String?
    }

    struct Tally {
        enum Kind { case correct, wrong, refused }

        var correct = 0
        var wrong = 0
        var refused = 0

        mutating func add(_ kind: Kind) {
            switch kind {
            case .correct: correct += 1
            case .wrong: wrong += 1
            case .refused: refused += 1
            }
        }
        var total: Int { correct + wrong + refused }

        func line() -> String {
            let total = max(1, self.total)
            func share(_ n: Int) -> String { String(format: "%.1f%%", Double(n) * 100 / Double(total)) }
            return "questions \(self.total)  correct \(correct) (\(share(correct)))  wrong \(wrong) (\(share(wrong)))  refused \(refused) (\(share(refused)))"
        }
    }

    func run() async throws {
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { throw ValidationError("cannot read \(file)") }
        var questions: [Question] = []
        for (number, line) in text.split(separator: "\n").enumerated() where !line.trimmingCharacters(in: .whitespaces).isEmpty {
            guard let object = try? JSONParser.parse(String(line)), let question = object["question"]?.stringValue, let sql = object["sql"]?.stringValue else {
                throw ValidationError("line \(number + 1) of \(file) is not a JSON object with \"question\" and \"sql\"")
            }
            questions.append(Question(id: object["id"]?.stringValue ?? "line-\(number + 1)", question: question, sql: sql, db: object["db"]?.stringValue))
        }
        let split = try folds.map(FoldSplit.init(file:))
        if let onlyFolds {
            guard let split else { throw ValidationError("--only-folds needs --folds") }
            let wanted = Set(onlyFolds.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) })
            questions = questions.filter { $0.db.flatMap { split.fold[$0] }.map(wanted.contains) ?? false }
        }
        // The unseen fold's questions and outcomes are never printed: a line that says nothing of them.
        func hidden(_ item: Question) -> Bool { item.db.map { split?.isUnseen($0) ?? false } ?? false }
        let folder = URL(fileURLWithPath: file).deletingLastPathComponent()
        try await common.withAsker { asker in
            // Each line's database: the named datasource, else the line's db (added from the folder when missing), else main.
            let known = Set(try await asker.datasources.list(app: app).map(\.name))
            var added = Set<String>()
            for db in Set(questions.compactMap(\.db)) where datasource == nil && !known.contains(db) {
                let path = folder.appendingPathComponent("\(db).sqlite").path
                guard FileManager.default.fileExists(atPath: path) else {
                    throw ValidationError("the questions name database \(db), which is neither a datasource of app \(app) nor a file \(path)")
                }
                try await asker.datasources.add(app: app, name: db, kind: .sqlite, location: path)
                added.insert(db)
            }
            if !added.isEmpty { print("added \(added.count) datasource(s) from \(folder.path) to app \(app)") }

            var all = Tally()
            var perDatabase: [String: Tally] = [:]
            var perFold: [Int: Tally] = [:]
            var bands = [(right: Int, wrong: Int)](repeating: (0, 0), count: 10)
            // Answers with each risk, right and wrong, on the studied folds and on the unseen one apart: whether the
            // weights measured where the engine was studied hold where it was not.
            var perRisk: [String: (studied: Tally, unseen: Tally)] = [:]
            var times: [Double] = []
            for item in questions {
                let name = datasource ?? item.db ?? "main"
                let gold = try await asker.datasources.query(app: app, datasource: name, sql: item.sql)
                let started = ContinuousClock.now
                let outcome: String
                let kind: Tally.Kind
                do {
                    let answer = try await asker.ask(
                        AskRequest(app: app, userID: nil, question: item.question, datasource: name, engine: engine, drawImage: false))
                    let sureness = answer.confidence.map { String(format: "%.2f", $0) } ?? "-"
                    let risks = answer.risks.isEmpty ? "-" : answer.risks.joined(separator: ",")
                    let right = EvalScorer.isCorrect(answer: answer.rows, gold: gold.rows, goldSQL: item.sql)
                    if let confidence = answer.confidence {
                        let band = min(9, max(0, Int(confidence * 10)))
                        if right { bands[band].right += 1 } else { bands[band].wrong += 1 }
                    }
                    kind = right ? .correct : .wrong
                    if let split, let db = item.db, split.fold[db] != nil {
                        for risk in answer.risks {
                            var tally = perRisk[risk] ?? (Tally(), Tally())
                            if split.isUnseen(db) { tally.unseen.add(kind) } else { tally.studied.add(kind) }
                            perRisk[risk] = tally
                        }
                    }
                    outcome = "\(right ? "correct" : "wrong")\t\(sureness)\t\(risks)\t\(answer.sql)"
                } catch let refusal as AskRefusal {
                    kind = .refused
                    outcome = "refused  \(refusal.message)"
                }
                all.add(kind)
                perDatabase[name, default: Tally()].add(kind)
                if let db = item.db, let fold = split?.fold[db] { perFold[fold, default: Tally()].add(kind) }
                let elapsed = ContinuousClock.now - started
                times.append(Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15)
                if verbose, !hidden(item) { print("\(item.id)\t\(outcome)") }
            }
            times.sort()
            let median = times.isEmpty ? 0 : times[times.count / 2]
            let p99 = times.isEmpty ? 0 : times[min(times.count - 1, Int((Double(times.count - 1) * 0.99).rounded()))]
            print(all.line())
            print(String(format: "median %.1f ms, p99 %.1f ms per question", median, p99))
            if bands.contains(where: { $0.right + $0.wrong > 0 }) {
                print("calibration (answers by the engine's confidence):")
                for band in bands.indices.reversed() where bands[band].right + bands[band].wrong > 0 {
                    let (right, wrong) = bands[band]
                    let low = Double(band) / 10
                    print(
                        String(
                            format: "  %.1f-%.1f  answers %d  right %d (%.1f%%)", low, low + 0.1, right + wrong, right,
                            Double(right) * 100 / Double(right + wrong)))
                }
            }
            if perDatabase.count > 1 {
                print("per database:")
                for name in perDatabase.keys.sorted() where !(split?.isUnseen(name) ?? false) { print("  \(name)\t\(perDatabase[name]!.line())") }
            }
            if let split, !perFold.isEmpty {
                print("per fold:")
                for fold in perFold.keys.sorted() {
                    // The issue's bar is per database too (none above 10% wrong): said of each fold, the unseen one
                    // included, as a count and a worst share that name no database.
                    let rates = perDatabase.filter { split.fold[$0.key] == fold }.values.map { Double($0.wrong) / Double(max(1, $0.total)) }
                    let worst = String(
                        format: "worst database %.1f%% wrong, %d of %d above 10%%", (rates.max() ?? 0) * 100, rates.count { $0 > 0.1 }, rates.count)
                    print("  fold \(fold)\(fold == split.unseen ? " (unseen)" : "")\t\(perFold[fold]!.line())  \(worst)")
                }
                let studied = perFold.filter { $0.key != split.unseen }.values.reduce(into: Tally()) { sum, tally in
                    sum.correct += tally.correct
                    sum.wrong += tally.wrong
                    sum.refused += tally.refused
                }
                if studied.total > 0 { print("  studied folds\t\(studied.line())") }
                if !perRisk.isEmpty {
                    print("per risk (answers with it, right, on the studied folds | on the unseen fold):")
                    func share(_ t: Tally) -> String {
                        t.total == 0 ? "-" : String(format: "%d, %.0f%%", t.total, Double(t.correct) * 100 / Double(t.total))
                    }
                    for (risk, tally) in perRisk.sorted(by: { $0.key < $1.key }) { print("  \(risk)\t\(share(tally.studied)) | \(share(tally.unseen))") }
                }
            }
        }
    }
}

extension CommonOptions {
    /// Whether `ask` runs the built-in engine's less sure readings only when picked: as
    /// `PORTICO_ASK_SURE_ONLY` says, else the default; `portico serve` reads the same.
    static func askSureOnly() throws -> Bool {
        try Environment.optionalBool(Setting.variable("ask-sure-only")) ?? AskService.sureOnlyByDefault
    }

    /// The instance's question service (`withInstance`), keeping no chart images and running every
    /// reading (`ask` sets `sureOnly` itself; `eval` measures them all), with a datasource's failure
    /// said as a command's error.
    func withAsker<T>(_ body: (AskService) async throws -> T) async throws -> T {
        do {
            return try await withInstance { instance in
                var asker = instance.asker
                asker.images = nil
                asker.sureOnly = false
                return try await body(asker)
            }
        } catch let error as DatasourceError {
            throw ValidationError(error.message)
        }
    }
}

/// Rows as an aligned text table for a terminal.
enum TextTable {
    static func render(columns: [String], rows: [[SQLValue]], limit: Int) -> String {
        let shown = rows.prefix(limit).map { $0.map(cell) }
        var widths = columns.map { min(40, $0.count) }
        for row in shown { for (i, value) in row.enumerated() { widths[i] = min(40, max(widths[i], value.count)) } }
        func line(_ values: [String]) -> String {
            zip(values, widths).map { value, width in
                let v = value.count > width ? String(value.prefix(width - 1)) + "…" : value
                return v + String(repeating: " ", count: width - v.count)
            }.joined(separator: " | ")
        }
        var out = [line(columns), widths.map { String(repeating: "-", count: $0) }.joined(separator: "-+-")]
        out += shown.map(line)
        if rows.count > limit { out.append("… \(rows.count - limit) more rows") }
        return out.joined(separator: "\n")
    }

    static func cell(_ value: SQLValue) -> String {
        switch value {
        case .null: "NULL"
        case .int(let i): String(i)
        case .double(let d): String(d)
        case .bool(let b): b ? "true" : "false"
        case .text(let s): s.replacingOccurrences(of: "\n", with: " ")
        }
    }
}

/// A question the engine did not answer: said plainly, without the command's usage.
struct NotAnswered: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// Spider train's databases in fixed folds (`bench/spider-folds.json`): one of them is the
/// unseen check, whose questions and failures `eval` never prints.
struct FoldSplit {
    let unseen: Int?
    let fold: [String: Int]

    init(file: String) throws {
        guard let text = try? String(contentsOfFile: file, encoding: .utf8), let json = try? JSONParser.parse(text),
            let folds = json["folds"]?.objectValue
        else { throw ValidationError("--folds: \(file) is not a JSON object with \"folds\": {\"<db>\": fold}") }
        fold = Dictionary(uniqueKeysWithValues: folds.compactMap { name, value in value.intValue.map { (name, Int($0)) } })
        unseen = json["unseen"]?.intValue.map { Int($0) }
    }

    func isUnseen(_ db: String) -> Bool { unseen != nil && fold[db] == unseen }
}

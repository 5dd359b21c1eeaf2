import PorticoCharts
import PorticoData
import PorticoStore
import Testing

@testable import PorticoAsk
@testable import PorticoAskEngine

@Suite struct ReplyParserTests {
    @Test func theJSONObjectThatWasAskedFor() {
        let reply = ReplyParser.parse(#"{"sql": "SELECT 1;", "chart": "Bar", "title": "One"}"#)
        #expect(reply == EngineReply(candidates: ["SELECT 1"], chart: "bar", title: "One"))
    }

    @Test func jsonInAFenceAfterProseWithBracesInStrings() {
        let reply = ReplyParser.parse("Here you go:\n```json\n{\"sql\": \"SELECT '{' || Name FROM Artist\", \"chart\": \"table\"}\n```\nEnjoy.")
        #expect(reply.candidates == ["SELECT '{' || Name FROM Artist"])
        #expect(reply.chart == "table")
    }

    @Test func fencedSQLBlocksAreCandidatesInOrder() {
        let reply = ReplyParser.parse("Option A:\n```sql\nSELECT a FROM t;\n```\nor B:\n```\nSELECT b FROM t\n```")
        #expect(reply.candidates == ["SELECT a FROM t", "SELECT b FROM t"])
    }

    @Test func aBareQueryInProseEndsAtTheSemicolon() {
        let reply = ReplyParser.parse("The query is\n  SELECT Name\n  FROM Artist;\nThat lists artists.")
        #expect(reply.candidates == ["SELECT Name\n  FROM Artist"])
    }

    @Test func thinkingIsSkippedAndStackedStatementsAreKeptForTheGuard() {
        let reply = ReplyParser.parse("<think>maybe {\"sql\": \"DELETE FROM t\"}</think>{\"sql\": \"SELECT 1; DROP TABLE t\"}")
        #expect(reply.candidates == ["SELECT 1; DROP TABLE t"])
    }

    @Test func nestedBracesThatNeverParseAreBounded() {
        let hostile = String(repeating: "{", count: 500_000) + "x" + String(repeating: "}", count: 500_000) + "\n```sql\nSELECT 1\n```"
        let started = ContinuousClock.now
        #expect(ReplyParser.parse(hostile).candidates == ["SELECT 1"])
        // Quadratic work on a million characters would take hours; linear work takes a second or two in a debug build.
        #expect(ContinuousClock.now - started < .seconds(30))
    }

    @Test func aNullSQLCarriesTheReason() {
        let reply = ReplyParser.parse(#"{"sql": null, "reason": "no weather table"}"#)
        #expect(reply.candidates.isEmpty && reply.reason == "no weather table")
        #expect(ReplyParser.parse("I cannot help with that.").candidates.isEmpty)
    }
}

@Suite struct ChartChoiceTests {
    func choose(_ columns: [String], _ rows: [[SQLValue]], hint: String? = nil) -> ChartSpec {
        ChartChoice.choose(columns: columns, rows: rows, hint: hint, title: "t").spec
    }

    @Test func oneCategoryAndANumberAreColumnsOrBars() {
        let few: [[SQLValue]] = [[.text("USA"), .double(523.06)], [.text("Canada"), .double(303.96)]]
        #expect(choose(["country", "revenue"], few).kind == .column)
        let many = (0..<20).map { [SQLValue.text("country \($0)"), .int(Int64($0))] }
        #expect(choose(["country", "n"], many).kind == .bar)
        #expect(choose(["country", "revenue"], few).y.map(\.value) == ["revenue"])
    }

    @Test func datesAndYearsAreLines() {
        #expect(choose(["month", "sales"], [[.text("2024-01"), .int(3)], [.text("2024-02"), .int(5)]]).kind == .line)
        #expect(choose(["year", "sales"], [[.int(2021), .int(3)], [.int(2022), .int(5)]]).kind == .line)
    }

    @Test func aPieOnlyWhenItFits() {
        let shares: [[SQLValue]] = [[.text("Rock"), .int(10)], [.text("Jazz"), .int(3)]]
        #expect(choose(["genre", "n"], shares, hint: "pie").kind == .pie)
        #expect(choose(["genre", "n"], [[.text("a"), .int(-1)], [.text("b"), .int(3)]], hint: "pie").kind == .column)
    }

    @Test func singleValuesAndTextOnlyAreTables() {
        #expect(choose(["n"], [[.int(347)]]).kind == .table)
        #expect(choose(["first", "last"], [[.text("a"), .text("b")]]).kind == .table)
        #expect(choose(["country", "revenue"], []).kind == .table)
    }

    @Test func longFormBecomesSeries() {
        let rows: [[SQLValue]] = [[.text("2024"), .text("USA"), .int(1)], [.text("2024"), .text("Canada"), .int(2)], [.text("2025"), .text("USA"), .int(3)]]
        let (spec, data) = ChartChoice.choose(columns: ["year", "country", "n"], rows: rows, hint: nil, title: "t")
        #expect(spec.series?.value == "country")
        #expect(data?.categories == ["2024", "2025"])
        #expect(data?.series.map(\.name) == ["USA", "Canada"])
    }

    @Test func aKeyBesideANameLabelsNothing() {
        // Groups shown by their key and their name: the name labels the bars, the key is no series.
        let ids: [[SQLValue]] = [[.int(1), .text("Rock"), .int(10)], [.int(2), .text("Jazz"), .int(3)]]
        let byId = choose(["GenreId", "Name", "value"], ids)
        #expect(byId.x?.value == "Name")
        #expect(byId.series == nil)
        #expect(byId.y.map(\.value) == ["value"])
        let codes: [[SQLValue]] = [[.text("ACCT"), .text("Accounting"), .int(4)], [.text("BIOL"), .text("Biology"), .int(7)]]
        let byCode = choose(["dept_code", "dept_name", "value"], codes)
        #expect(byCode.x?.value == "dept_name")
        #expect(byCode.series == nil)
    }

    @Test func theRendererDrawsAPNG() throws {
        let (spec, data) = ChartChoice.choose(columns: ["country", "n"], rows: [[.text("USA"), .int(3)], [.text("中国"), .int(2)]], hint: nil, title: "标题")
        let drawn = try #require(data)
        let png = try #require(ChartRenderer().png(spec, drawn))
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]))
        #expect(png.count > 5000)
        #expect(ChartRenderer().png(ChartSpec(kind: .table, title: "t"), drawn) == nil)
    }

    /// Values from the data at the ends of the doubles once made the axis' stride endless (an
    /// infinite or not-a-number step) or trap (a step of 0): each draws, in every kind.
    @Test(arguments: [
        [1e308, 1e308], [-1.7e308, 1.7e308], [0, .leastNonzeroMagnitude], [.leastNonzeroMagnitude * 2000, .leastNonzeroMagnitude * 4000], [1e300, -1e300],
        [1e16, 1e16 + 2], [.greatestFiniteMagnitude, 1],
    ])
    func valuesAtTheEndsOfTheDoublesStillDraw(_ values: [Double]) throws {
        let data = ChartData(categories: values.indices.map { "c\($0)" }, series: [(name: "v", values: values)])
        for kind in [ChartSpec.Kind.bar, .column, .line, .pie] {
            let spec = ChartSpec(kind: kind, title: "ends", x: .init(name: "c", value: "c"), y: [.init(name: "v", value: "v")])
            if let png = ChartRenderer().png(spec, data) { #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]), "\(kind) \(values)") }
        }
    }
}

@Suite struct EvalScorerTests {
    let gold: [[SQLValue]] = [[.text("USA"), .double(523.0600000001)], [.text("Canada"), .double(303.96)]]

    @Test func extraColumnsOtherNamesAndRoundingAreFine() {
        let answer: [[SQLValue]] = [[.int(1), .double(523.06), .text("USA")], [.int(2), .double(303.96), .text("Canada")]]
        #expect(EvalScorer.isCorrect(answer: answer, gold: gold, goldSQL: "SELECT c, SUM(x) FROM t GROUP BY c ORDER BY 2 DESC"))
    }

    @Test func orderMattersOnlyWhenTheGoldOrders() {
        let reversed = Array(gold.reversed())
        #expect(EvalScorer.isCorrect(answer: reversed, gold: gold, goldSQL: "SELECT c, SUM(x) FROM t GROUP BY c"))
        #expect(!EvalScorer.isCorrect(answer: reversed, gold: gold, goldSQL: "SELECT c, SUM(x) FROM t GROUP BY c ORDER BY 2 DESC"))
    }

    @Test func missingValuesRowsOrMixedUpPairsAreWrong() {
        #expect(!EvalScorer.isCorrect(answer: [[.text("USA")], [.text("Canada")]], gold: gold, goldSQL: "SELECT"))
        #expect(!EvalScorer.isCorrect(answer: [gold[0]], gold: gold, goldSQL: "SELECT"))
        let swapped: [[SQLValue]] = [[.text("USA"), .double(303.96)], [.text("Canada"), .double(523.06)]]
        #expect(!EvalScorer.isCorrect(answer: swapped, gold: gold, goldSQL: "SELECT"))
    }
}

@Suite struct SchemaTextTests {
    func table(_ name: String, _ columns: [String], keys: [SourceTable.ForeignKey] = []) -> SourceTable {
        SourceTable(
            name: name, isView: false, columns: columns.map { .init(name: $0, type: "TEXT", notNull: false, primaryKey: false, samples: []) },
            foreignKeys: keys)
    }

    @Test func tablesTheQuestionNamesComeFirstWithWhatTheyReference() {
        let tables = [
            table("Genre", ["GenreId", "Name"]), table("MediaType", ["MediaTypeId"]),
            table("InvoiceLine", ["InvoiceId", "TrackId"], keys: [.init(column: "InvoiceId", table: "Invoice", targetColumn: "InvoiceId")]),
            table("Invoice", ["InvoiceId", "BillingCountry"]),
        ]
        let ranked = SchemaText.rank(tables, question: "Which invoice lines are the largest?").map(\.name)
        #expect(ranked.prefix(2) == ["InvoiceLine", "Invoice"])
        let text = SchemaText.render(tables, question: "countries", budget: 60)
        #expect(text.hasPrefix("TABLE Invoice ("))
        #expect(!text.contains("MediaType"), "the budget cuts the least relevant tables")
    }

    @Test func commentsExplainCrypticNamesAndCountForRelevance() {
        var cryptic = table("t_fx", ["amt", "cc"])
        cryptic.comment = "Payments received"
        cryptic.columns[1].comment = "ISO country code"
        let ranked = SchemaText.rank([table("Genre", ["Name"]), cryptic], question: "payments by country").map(\.name)
        #expect(ranked.first == "t_fx")
        #expect(SchemaText.describe(cryptic) == "TABLE t_fx (amt TEXT, cc TEXT)\n  -- t_fx: Payments received; cc: ISO country code\n")
    }

    @Test func wordsSplitNamesAndDropPlurals() {
        #expect(SchemaText.words("BillingCountry invoice_lines Tracks") == ["billing", "country", "invoice", "line", "track"])
    }
}

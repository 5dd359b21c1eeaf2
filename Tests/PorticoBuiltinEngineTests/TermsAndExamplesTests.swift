import Foundation
import PorticoStore
import Testing

@testable import PorticoAskEngine
@testable import PorticoBuiltinEngine

/// Terms and examples as the built-in engine reads them, without a database: each kind of term,
/// the SQL a term may hold, an example adapted to new values.
@Suite struct TermsAndExamplesTests {
    static func answer(_ question: String, terms: [Term] = [], examples: [Example] = []) -> EngineReply {
        var request = BuiltinEngineTests.request(question)
        request.terms = terms
        request.savedExamples = examples
        return BuiltinEngine.answer(request)
    }

    static let payroll = Term(datasource: "d", term: "yearly pay", synonyms: ["annual cost"], meaning: .expression(table: "players", sql: "salary * 12"))
    static let veterans = Term(datasource: "d", term: "veteran", meaning: .condition(table: "players", sql: "age >= 30"))
    static let hometown = Term(datasource: "d", term: "hometown", meaning: .column(table: "teams", column: "city"))

    @Test func eachKindOfTermIsAWordTheEngineUnderstands() {
        // Unknown words before, understood after.
        #expect(Self.answer("how many veterans are there").candidates.isEmpty)
        #expect(
            Self.answer("how many veterans are there", terms: [Self.veterans]).candidates.first
                == #"SELECT COUNT(*) AS value FROM "players" t0 WHERE (t0."age" >= 30)"#)
        // An expression is a column of its table, qualified by the alias the joins give it.
        #expect(
            Self.answer("total yearly pay of each team", terms: [Self.payroll]).candidates.first
                == #"SELECT t1."team_id" AS "id", t0."name", SUM((t1."salary" * 12)) AS value FROM "players" t1 LEFT JOIN "teams" t0 ON t1."team_id" = t0."id" WHERE t1."team_id" IS NOT NULL GROUP BY t1."team_id", t0."name""#
        )
        #expect(Self.answer("average annual cost of the players", terms: [Self.payroll]).candidates.first?.contains(#"AVG((t0."salary" * 12))"#) == true)
        // A column's other name.
        let grouped = Self.answer("how many teams are there in each hometown", terms: [Self.hometown]).candidates.first ?? ""
        #expect(grouped.hasPrefix(#"SELECT t0."city", COUNT(*) AS value FROM "teams" t0 GROUP BY t0."city""#), "\(grouped)")
        // Together: a filter on the joined table and an expression measured.
        let both = Self.answer("total yearly pay of veterans per team", terms: [Self.payroll, Self.veterans]).candidates.first ?? ""
        #expect(both.contains(#"SUM((t1."salary" * 12))"#) && both.contains(#"WHERE (t1."age" >= 30)"#), "\(both)")
    }

    @Test func aTermWhoseSQLNoLongerFitsTheSchemaIsLeftOut() {
        let stale = Term(datasource: "d", term: "veteran", meaning: .condition(table: "gone", sql: "age >= 30"))
        #expect(Self.answer("how many veterans are there", terms: [stale]).candidates.isEmpty)
    }

    @Test func aTermHoldsOneValueOverItsTableAndNoMore() throws {
        let columns = ["UnitPrice", "Quantity", "Name"]
        let parsed = try TableSQL("ROUND(UnitPrice * \"Quantity\", 2) || Name", columns: columns, dialect: .sqlite, what: "expression")
        #expect(parsed.render(alias: "t3") == #"ROUND(t3."UnitPrice" * t3."Quantity", 2) || t3."Name""#)
        #expect(parsed.render(alias: nil) == #"ROUND("UnitPrice" * "Quantity", 2) || "Name""#)
        #expect(parsed.columns == ["UnitPrice", "Quantity", "Name"])
        // Strings are kept as they are, names inside them untouched.
        #expect(try TableSQL("Name = 'Quantity'", columns: columns, dialect: .sqlite, what: "condition").render(alias: "x") == #"x."Name" = 'Quantity'"#)
        let refused: [(String, String)] = [
            ("SUM(UnitPrice)", "leave out SUM"), ("UnitPrice FROM Track", "not a query"), ("(SELECT 1)", "not a query"),
            ("1) OR (1", "did not open"), ("(1", "open"), ("1; DROP TABLE x", "without ';'"), ("UnitPrice > ?", "parameters"),
            ("t.UnitPrice", "own table"), ("", "empty"), ("'open", "not SQL"),
        ]
        for (sql, message) in refused {
            #expect(throws: DatasourceError.self, "\(sql)") { try TableSQL(sql, columns: columns, dialect: .sqlite, what: "expression") }
            do {
                _ = try TableSQL(sql, columns: columns, dialect: .sqlite, what: "expression")
            } catch {
                #expect(error.message.contains(message), "\(sql): \(error.message)")
            }
        }
    }

    @Test func anExampleAnswersTheSameQuestionOfOtherValues() {
        let example = Example(
            id: 7, datasource: "d", question: "How many players of teams in 'Lisbon' are older than 25?",
            sql: "SELECT COUNT(*) FROM players p JOIN teams t ON t.id = p.team_id WHERE t.city = 'Lisbon' AND p.age > 25")
        let reply = Self.answer("how many players of teams in Porto are older than 31?", examples: [example])
        #expect(reply.example == 7)
        #expect(reply.candidates == ["SELECT COUNT(*) FROM players p JOIN teams t ON t.id = p.team_id WHERE t.city = 'Porto' AND p.age > 31"])
        #expect(reply.confidence == BuiltinEngine.exampleConfidence)
        // Other words, a value of another column, or a quoted text the data does not hold: not this example.
        #expect(Self.answer("how many players of teams in Porto are younger than 31?", examples: [example]).example == nil)
        #expect(Self.answer("how many players of teams in Silva are older than 31?", examples: [example]).example == nil)
        #expect(Self.answer("how many players of teams in 'Narnia' are older than 31?", examples: [example]).example == nil)
        // The same value twice in the example cannot be told apart in its SQL.
        let twice = Example(datasource: "d", question: "players between 30 and 30", sql: "SELECT * FROM players WHERE age BETWEEN 30 AND 30")
        #expect(Self.answer("players between 20 and 40", examples: [twice]).example == nil)
        // A value the SQL does not hold as a literal cannot be changed.
        let computed = Example(id: 9, datasource: "d", question: "players older than 30", sql: "SELECT * FROM players WHERE age > 29 + 1")
        #expect(Self.answer("players older than 40", examples: [computed]).example == nil)
        #expect(Self.answer("Players older than 30?", examples: [computed]).example == 9, "the same question, whatever its case and marks")
        // A value with a quote is written as an SQL string.
        #expect(QuestionPattern.literal(.text("O'Hare", columns: nil)) == "'O''Hare'")
    }
}

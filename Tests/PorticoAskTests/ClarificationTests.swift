import Foundation
import PorticoStore
import Testing

@testable import PorticoAsk
@testable import PorticoAskEngine
@testable import PorticoBuiltinEngine
@testable import PorticoData

/// The built-in engine asks which column is meant when that alone stands between a question and
/// an answer, and reads the question through the column chosen.
@Suite struct ClarificationTests {
    /// Two tables with a `city` each, and one city in both.
    static let tables: [SourceTable] = [
        SourceTable(
            name: "shops", isView: false,
            columns: [
                .init(name: "id", type: "INTEGER", notNull: true, primaryKey: true, samples: []),
                .init(name: "name", type: "TEXT", notNull: true, primaryKey: false, samples: []),
                .init(name: "city", type: "TEXT", notNull: false, primaryKey: false, samples: []),
            ], foreignKeys: []),
        SourceTable(
            name: "depots", isView: false,
            columns: [
                .init(name: "id", type: "INTEGER", notNull: true, primaryKey: true, samples: []),
                .init(name: "label", type: "TEXT", notNull: true, primaryKey: false, samples: []),
                .init(name: "city", type: "TEXT", notNull: false, primaryKey: false, samples: []),
                .init(name: "shop_id", type: "INTEGER", notNull: false, primaryKey: false, samples: []),
            ], foreignKeys: [.init(column: "shop_id", table: "shops", targetColumn: "id")]),
    ]

    static func answer(_ question: String, choices: [String] = [], history: [String] = []) -> EngineReply {
        let schema = SchemaModel(tables)
        var values = ValueIndex()
        for table in ["shops", "depots"] {
            guard let city = schema.columnList.firstIndex(where: { $0.name == "city" && schema.tables[$0.table].name == table }) else { continue }
            for value in ["Porto", "Lisbon"] { values.add(column: city, value: value) }
            values.names[city] = (table, "city")
        }
        var request = EngineRequest(
            question: question, lang: "en", dialect: .sqlite, schema: "", examples: [], history: history.map { .init(question: $0, sql: nil) },
            corrections: [])
        request.tables = tables
        request.values = values
        request.choices = choices
        return BuiltinEngine.answer(request)
    }

    @Test func aWordAndAValueOfTwoColumnsAreAskedAboutThenReadAsChosen() {
        let asked = Self.answer("labels and cities in Porto")
        #expect(asked.candidates.isEmpty)
        let clarification = asked.clarification
        #expect(clarification?.options.map(\.value).sorted() == ["depots.city", "shops.city"])
        #expect(clarification?.message.contains("which one is meant") == true)
        #expect(
            Self.answer("labels and cities in Porto", choices: ["depots.city"]).candidates == [
                #"SELECT t0."label" FROM "depots" t0 WHERE t0."city" = 'Porto'"#
            ])
        // A choice that names no column of the question changes nothing.
        #expect(Self.answer("labels and cities in Porto", choices: ["shops.name"]).candidates.isEmpty)
    }

    @Test func aRefusalForAnotherReasonIsNotTurnedIntoAQuestion() {
        // "How many" with nothing counted refuses whichever column Porto is in.
        let reply = Self.answer("how many in Porto")
        #expect(reply.candidates.isEmpty && reply.clarification == nil)
    }

    @Test func aLessSureReadingThatPickedAColumnComesWithTheOthers() {
        // "cities" is read as the shops' at 0.675 (below the sure band): the depots' comes with it,
        // and a confirmation offers it beside running the reading.
        let read = Self.answer("list the cities")
        #expect(read.candidates == [#"SELECT DISTINCT t0."city" FROM "shops" t0"#])
        #expect((read.confidence ?? 1) < BuiltinEngine.sureConfidence)
        #expect(read.clarification?.options.map(\.value) == ["depots.city"])
        let confirmation = AskService.confirmation(
            sql: read.candidates[0], confidence: read.confidence ?? 0, risks: read.risks, engine: "builtin", otherColumns: read.clarification)
        let options = confirmation.clarification?.options ?? []
        #expect(options.first?.value == AskService.runChoice(read.candidates[0]) && options.first?.label == "Run this reading")
        #expect(options.dropFirst().map(\.value) == ["depots.city"] && options.last?.label == "Read it with city of depots")
        #expect(confirmation.message.contains(#"or read it through another column (a word of the question names 2 columns): "city of depots""#))
        // A value in two columns, read in one: the other.
        let porto = Self.answer("labels of depots in Porto")
        #expect(porto.candidates == [#"SELECT t0."label" FROM "depots" t0 WHERE t0."city" = 'Porto'"#])
        #expect(porto.clarification?.message == "'Porto' is a value of 2 columns" && porto.clarification?.options.map(\.value) == ["shops.city"])
        // Chosen, the depots' city is read without the doubt.
        let chosen = Self.answer("list the cities", choices: ["depots.city"])
        #expect(chosen.candidates == [#"SELECT DISTINCT t0."city" FROM "depots" t0"#])
        #expect(!chosen.risks.contains(Risk.pickedColumn.rawValue))
        // A sure reading comes alone, and a confirmation without other columns offers running it only.
        let sure = Self.answer("names and cities of shops")
        #expect(!sure.candidates.isEmpty && (sure.confidence ?? 0) >= BuiltinEngine.sureConfidence && sure.clarification == nil, "\(sure)")
        let alone = AskService.confirmation(sql: "SELECT 1", confidence: 0.8, risks: [Risk.ranked.rawValue], engine: "builtin")
        #expect(alone.clarification?.options.map(\.label) == ["Run this reading"] && !alone.message.contains("another column"))
    }
}

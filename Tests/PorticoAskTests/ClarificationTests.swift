import Foundation
import Testing

@testable import PorticoAsk
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
}

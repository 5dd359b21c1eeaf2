import PorticoStore
import Testing

@testable import PorticoAskEngine
@testable import PorticoBuiltinEngine

/// Names spelt as their makers wrote them (a unit in mixed case, words run together), a thing's
/// name named by the thing, and a lack said in words.
extension BuiltinEngineTests {
    static let gadgets: [SourceTable] = [
        SourceTable(
            name: "gadget", isView: false,
            columns: [
                .init(name: "Gadget_ID", type: "INTEGER", notNull: true, primaryKey: true, samples: []),
                .init(name: "Maker_name", type: "TEXT", notNull: false, primaryKey: false, samples: []),
                .init(name: "Memory_GiB", type: "REAL", notNull: false, primaryKey: false, samples: []),
                .init(name: "BlueTooth", type: "TEXT", notNull: false, primaryKey: false, samples: []),
                .init(name: "Charger", type: "TEXT", notNull: false, primaryKey: false, samples: []),
            ], foreignKeys: [])
    ]

    static func gadgetValues() -> ValueIndex {
        var values = ValueIndex()
        let schema = SchemaModel(gadgets)
        for (column, entries) in [("BlueTooth", ["No", "5.0"]), ("Charger", ["USB-C", "Micro USB"])] {
            let index = schema.columnList.firstIndex { $0.name == column } ?? 0
            for value in entries { values.add(column: index, value: value) }
            values.names[index] = ("gadget", column)
            values.distinct[index] = entries.count
        }
        return values
    }

    @Test func aUnitInMixedCaseIsOneWord() {
        #expect(SchemaModel.words("Memory_GiB") == ["memory", "gib"])
        #expect(SchemaModel.words("KiB") == ["kib"])
        #expect(SchemaModel.words("mID") == ["m", "id"], "a letter and a key still split")
        #expect(SchemaModel.words("hireDate") == ["hire", "date"])
        let sql = Self.sql("What is the average memory of the gadgets?", tables: Self.gadgets)
        #expect(sql == #"SELECT AVG(t0."Memory_GiB") AS value FROM "gadget" t0"#, "\(sql ?? "refused")")
    }

    @Test func oneWordNamesAColumnWhoseWordsRunTogether() {
        let sql = Self.sql("List the bluetooth of every gadget.", tables: Self.gadgets, values: Self.gadgetValues())
        #expect(sql?.contains(#"t0."BlueTooth""#) == true, "\(sql ?? "refused")")
    }

    @Test func aThingNamesItsNameWhenMostOfItsSensesAreNouns() {
        #expect(SchemaModel.isThing("company"), "a verb in two senses of eleven")
        #expect(SchemaModel.isThing("category"))
        #expect(!SchemaModel.isThing("first"))
        #expect(!SchemaModel.isThing("full"))
        #expect(!SchemaModel.isThing("run"), "a verb more often than a noun")
        #expect(!SchemaModel.isThing("display"), "a verb in two senses of eight: display_name stays a row's own name")
    }

    @Test func aLackSaidInWordsIsThatValue() {
        let sql = Self.sql("How many gadgets do not have bluetooth?", tables: Self.gadgets, values: Self.gadgetValues())
        #expect(sql == #"SELECT COUNT(*) AS value FROM "gadget" t0 WHERE t0."BlueTooth" = 'No'"#, "\(sql ?? "refused")")
        var countries = Self.gadgetValues()
        let country = SchemaModel(Self.gadgets).columnList.firstIndex { $0.name == "Charger" } ?? 0
        countries.add(column: country, value: "NO")
        let norway = Self.sql("How many gadgets do not have a charger?", tables: Self.gadgets, values: countries)
        #expect(norway?.contains("'NO'") == false, "a code in capitals is no word for a lack: \(norway ?? "refused")")
        let charger = Self.sql("How many gadgets do not have a charger?", tables: Self.gadgets, values: Self.gadgetValues())
        #expect(charger?.contains(#"t0."Charger" IS NULL"#) == true, "no value says so: the column holds nothing; \(charger ?? "refused")")
    }

    @Test func rowsWithoutAValueOfTheirOwnRowsAreNotReadAsAnotherValue() {
        let tables = [
            SourceTable(
                name: "Members", isView: false,
                columns: [
                    .init(name: "member_id", type: "INTEGER", notNull: true, primaryKey: true, samples: []),
                    .init(name: "member_name", type: "TEXT", notNull: false, primaryKey: false, samples: []),
                ], foreignKeys: []),
            SourceTable(
                name: "Member_Passes", isView: false,
                columns: [
                    .init(name: "pass_id", type: "INTEGER", notNull: true, primaryKey: true, samples: []),
                    .init(name: "member_id", type: "INTEGER", notNull: true, primaryKey: false, samples: []),
                    .init(name: "pass_type_code", type: "TEXT", notNull: false, primaryKey: false, samples: []),
                ], foreignKeys: [.init(column: "member_id", table: "Members", targetColumn: "member_id")]),
        ]
        var values = ValueIndex()
        let schema = SchemaModel(tables)
        let type = schema.columnList.firstIndex { $0.name == "pass_type_code" } ?? 0
        for value in ["Gold", "Silver"] { values.add(column: type, value: value) }
        values.names[type] = ("Member_Passes", "pass_type_code")
        var request = Self.request("Show the member ids and names without a gold pass.")
        request.tables = tables
        request.values = values
        let reply = BuiltinEngine.answer(request)
        #expect(reply.candidates.isEmpty, "not a pass of another type: \(reply.candidates.first ?? "")")
        #expect(reply.reason?.contains("does not read rows without a Member_Passes of 'Gold'") == true, "\(reply.reason ?? "")")
    }

    /// "the industries ordered by the number of companies": the rows counted for each value of the
    /// column asked for, in the order of that count.
    @Test func valuesOrderedByTheNumberOfRowsHoldingThem() {
        let tables = [
            SourceTable(
                name: "Companies", isView: false,
                columns: [
                    .init(name: "id", type: "INTEGER", notNull: true, primaryKey: true, samples: []),
                    .init(name: "name", type: "TEXT", notNull: false, primaryKey: false, samples: []),
                    .init(name: "Industry", type: "TEXT", notNull: false, primaryKey: false, samples: []),
                ], foreignKeys: [])
        ]
        let grouped = #"SELECT t0."Industry", COUNT(*) AS value FROM "Companies" t0 GROUP BY t0."Industry" ORDER BY value"#
        let descending = Self.sql("Please show the industries of companies in descending order of the number of companies.", tables: tables)
        #expect(descending?.hasPrefix(grouped + " DESC") == true, "\(descending ?? "refused")")
        let ascending = Self.sql("Show the industries ordered by the number of companies", tables: tables)
        #expect(ascending?.hasPrefix(grouped + ",") == true, "\(ascending ?? "refused")")
    }
}

import Foundation
import PorticoStore
import Testing

@testable import PorticoAsk
@testable import PorticoAskEngine
@testable import PorticoData

/// Terms and examples as the service keeps them, without a database: what a role may see, and
/// terms as CSV.
@Suite struct KnowledgeTests {
    static let tables: [SourceTable] = [
        SourceTable(
            name: "teams", isView: false,
            columns: ["id", "name", "city"].map { .init(name: $0, type: $0 == "id" ? "INTEGER" : "TEXT", notNull: false, primaryKey: $0 == "id", samples: []) },
            foreignKeys: []),
        SourceTable(
            name: "players", isView: false,
            columns: ["id", "first_name", "last_name", "team_id", "salary", "age"].map {
                .init(name: $0, type: ["first_name", "last_name"].contains($0) ? "TEXT" : "INTEGER", notNull: false, primaryKey: $0 == "id", samples: [])
            },
            foreignKeys: [.init(column: "team_id", table: "teams", targetColumn: "id")]),
    ]
    static let payroll = Term(datasource: "d", term: "yearly pay", synonyms: ["annual cost"], meaning: .expression(table: "players", sql: "salary * 12"))
    static let veterans = Term(datasource: "d", term: "veteran", meaning: .condition(table: "players", sql: "age >= 30"))
    static let hometown = Term(datasource: "d", term: "hometown", meaning: .column(table: "teams", column: "city"))

    @Test func aRoleSeesOnlyTheTermsAndExamplesOverWhatItReads() {
        let tables = Self.tables
        let select = SQLFragment("SELECT id, first_name, last_name, team_id FROM players")
        let view = CollectionView(select: select, columns: ["id", "first_name", "last_name", "team_id"])
        let rights: (String) -> TableAccess = { table in table == "players" ? .view(view) : .refused("no") }
        let terms = [
            Self.payroll, Self.veterans, Self.hometown,
            Term(datasource: "d", term: "rookie first name", meaning: .column(table: "players", column: "first_name")),
            Term(datasource: "d", term: "just a word"),
        ]
        let seen = KnowledgeService.visible(terms, tables: tables, rights: rights, dialect: .sqlite).map(\.term)
        #expect(seen == ["rookie first name", "just a word"])
        let examples = [
            Example(id: 1, datasource: "d", question: "a", sql: "SELECT first_name FROM players"),
            Example(id: 2, datasource: "d", question: "b", sql: "SELECT first_name FROM players WHERE salary > 10"),
            Example(id: 3, datasource: "d", question: "c", sql: "SELECT name FROM teams"),
            Example(id: 4, datasource: "d", question: "d", sql: "SELECT \"Salary\" FROM players"),
            Example(id: 5, datasource: "d", question: "e", sql: "DELETE FROM players"),
        ]
        #expect(KnowledgeService.visible(examples, tables: tables, rights: rights, dialect: .sqlite).map(\.id) == [1])
        #expect(KnowledgeService.visible(examples, tables: tables, rights: TableAccess.everything, dialect: .sqlite).map(\.id) == [1, 2, 3, 4])
    }

    @Test func aTermConditionMayReadOtherTablesThroughItsTablesKey() throws {
        let crowded = "(SELECT COUNT(*) FROM players p WHERE p.team_id = teams.id) > 10"
        let sql = try TableSQL(condition: crowded, table: "teams", key: "id", dialect: .sqlite)
        #expect(sql.render(alias: "t0") == "t0.\"id\" IN (SELECT \"teams\".\"id\" FROM \"teams\" WHERE (\(crowded)))")
        for bad in ["1) OR (1", "1 = 1; DELETE FROM teams", "1 = 1 UNION SELECT 1", "(1 = 1", "id = ?"] {
            #expect(throws: DatasourceError.self, "\(bad)") { try TableSQL(condition: bad, table: "teams", key: "id", dialect: .sqlite) }
        }
        // The built-in engine reads such a term as a filter of its table.
        let term = Term(datasource: "d", term: "crowded team", meaning: .condition(table: "teams", sql: crowded))
        let schema = SchemaModel(Self.tables, terms: [term], dialect: .sqlite)
        #expect(schema.filters.count == 1 && schema.filters[0].sql.membership?.key == "id")
        // Seen by a role only when it reads all the condition reads.
        let noPlayers: (String) -> TableAccess = { $0 == "players" ? .refused("no") : .whole }
        #expect(KnowledgeService.visible([term], tables: Self.tables, rights: noPlayers, dialect: .sqlite).isEmpty)
        #expect(KnowledgeService.visible([term], tables: Self.tables, rights: TableAccess.everything, dialect: .sqlite).count == 1)
    }

    @Test func termsTravelAsCSV() throws {
        let terms = [
            Term(id: 1, datasource: "d", term: "vip", synonyms: ["key account", "top"], description: "buys \"a lot\", often", meaning: nil),
            Self.payroll, Self.veterans, Self.hometown,
        ]
        let text = TermsCSV.write(terms)
        let rows = try TermsCSV.read(text)
        #expect(rows.map(\.term) == ["vip", "yearly pay", "veteran", "hometown"])
        #expect(rows[0].synonyms == ["key account", "top"] && rows[0].description == "buys \"a lot\", often")
        #expect(rows[1].meaning == .expression(table: "players", sql: "salary * 12"))
        #expect(rows[2].meaning == .condition(table: "players", sql: "age >= 30"))
        #expect(rows[3].meaning == .column("teams.city"))
        #expect(rows[3].line == 5)
        // A multi-line field, CRLF, a byte-order mark; the header in another order.
        let other = try TermsCSV.read("\u{FEFF}description,term\r\n\"two\nlines\",first\r\n\r\n,second\r\n")
        #expect(other.map(\.term) == ["first", "second"] && other[0].description == "two\nlines" && other[1].line == 5)
        #expect(throws: TermsCSV.Invalid.self) { try TermsCSV.read("word,synonyms\nx,y\n") }
        #expect(throws: TermsCSV.Invalid.self) { try TermsCSV.read("term,unknown\nx,y\n") }
        #expect(throws: TermsCSV.Invalid.self) { try TermsCSV.read("term,column,condition,table\nx,a.b,c = 1,a\n") }
        #expect(throws: TermsCSV.Invalid.self) { try TermsCSV.read("term,expression\nx,a * 2\n") }
        #expect(throws: TermsCSV.Invalid.self) { try TermsCSV.read("term\n\"open\n") }
    }

    @Test func aRolesViewOfATableKeepsNoStoredOrder() {
        var tables = Self.tables
        tables[1].storedOrder = .rowid
        // A role's view of the table, read in its place, keeps no order of its own.
        let view = CollectionView(select: SQLFragment("SELECT id, age FROM players"), columns: ["id", "age"])
        let viewed = TableAccess.narrow(tables) { $0 == "players" ? .view(view) : .whole }
        #expect(viewed.first { $0.name == "players" }?.storedOrder == nil && viewed.first { $0.name == "teams" } != nil)
    }
}

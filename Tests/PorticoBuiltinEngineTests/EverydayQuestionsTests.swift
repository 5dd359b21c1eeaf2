import Foundation
import PorticoStore
import Testing

@testable import PorticoAskEngine
@testable import PorticoBuiltinEngine

/// Kinds of everyday question a new user types first, each on a small store of its own: a text
/// said to be in a column, the maker after "by", "the total number of", a column the rows lack,
/// rows counted through a table that holds each pair once, and a count beside a ranked total.
@Suite struct EverydayQuestionsTests {
    static func column(_ name: String, _ type: String = "TEXT", key: Bool = false) -> SourceTable.Column {
        .init(name: name, type: type, notNull: key, primaryKey: key, samples: [])
    }

    static let artists = SourceTable(
        name: "artists", isView: false, columns: [column("id", "INTEGER", key: true), column("name")], foreignKeys: [])
    static let albums = SourceTable(
        name: "albums", isView: false, columns: [column("id", "INTEGER", key: true), column("title"), column("artist_id", "INTEGER")],
        foreignKeys: [.init(column: "artist_id", table: "artists", targetColumn: "id")])
    static let customers = SourceTable(
        name: "customers", isView: false,
        columns: [column("id", "INTEGER", key: true), column("first_name"), column("last_name"), column("company"), column("country")],
        foreignKeys: [])
    static let invoices = SourceTable(
        name: "invoices", isView: false,
        columns: [column("id", "INTEGER", key: true), column("customer_id", "INTEGER"), column("billing_country"), column("total", "REAL")],
        foreignKeys: [.init(column: "customer_id", table: "customers", targetColumn: "id")])
    static let songs = SourceTable(
        name: "songs", isView: false, columns: [column("id", "INTEGER", key: true), column("name"), column("album_id", "INTEGER")],
        foreignKeys: [.init(column: "album_id", table: "albums", targetColumn: "id")])
    static let playlists = SourceTable(
        name: "playlists", isView: false, columns: [column("id", "INTEGER", key: true), column("name")], foreignKeys: [])

    /// A table linking playlists and songs; `keyed`, its two links are its primary key.
    static func playlistSongs(keyed: Bool, extraLink: Bool = false) -> [SourceTable] {
        var columns = [column("playlist_id", "INTEGER", key: keyed), column("song_id", "INTEGER", key: keyed)]
        var keys: [SourceTable.ForeignKey] = [
            .init(column: "playlist_id", table: "playlists", targetColumn: "id"), .init(column: "song_id", table: "songs", targetColumn: "id"),
        ]
        var tables = [artists, albums, songs, playlists]
        if extraLink {
            columns.append(column("curator_id", "INTEGER", key: keyed))
            keys.append(.init(column: "curator_id", table: "curators", targetColumn: "id"))
            tables.append(SourceTable(name: "curators", isView: false, columns: [column("id", "INTEGER", key: true), column("name")], foreignKeys: []))
        }
        return tables + [SourceTable(name: "playlist_songs", isView: false, columns: columns, foreignKeys: keys)]
    }

    static func reply(_ question: String, tables: [SourceTable], values: [(table: String, column: String, value: String)] = []) -> EngineReply {
        let schema = SchemaModel(tables)
        var index = ValueIndex()
        for (table, column, value) in values {
            guard
                let c = schema.columnList.indices.first(where: {
                    schema.tables[schema.columnList[$0].table].name == table && schema.columnList[$0].name == column
                })
            else { continue }
            index.add(column: c, value: value)
            index.names[c] = (table, column)
        }
        var request = EngineRequest(question: question, lang: "en", dialect: .sqlite, schema: "", examples: [], history: [], corrections: [])
        request.tables = tables
        request.values = index
        return BuiltinEngine.answer(request)
    }

    @Test func aQuotedTextSaidToBeInAColumnIsMatchedInsideIt() throws {
        let values = [("albums", "title", "Greatest Hits"), ("albums", "title", "Greatest Hits II")]
        for question in ["Which albums have 'Greatest Hits' in the title?", "List the albums with 'Greatest Hits' in their titles"] {
            let sql = try #require(Self.reply(question, tables: [Self.artists, Self.albums], values: values).candidates.first, "\(question)")
            #expect(sql.contains("LIKE '%Greatest Hits%'"), "\(question): \(sql)")
        }
        // A value named alone is still the whole value.
        let exact = try #require(Self.reply("Which albums are titled 'Greatest Hits'?", tables: [Self.artists, Self.albums], values: values).candidates.first)
        #expect(exact.contains("= 'Greatest Hits'") && !exact.contains("LIKE"), "\(exact)")
    }

    @Test func aValueAfterByIsWhoMadeTheRowsNotOneOfTheirNames() throws {
        // An artist and one of their albums share a name.
        let values = [("albums", "title", "Iron Maiden"), ("artists", "name", "Iron Maiden"), ("albums", "title", "Powerslave")]
        let sql = try #require(Self.reply("List the albums by Iron Maiden", tables: [Self.artists, Self.albums], values: values).candidates.first)
        #expect(sql.contains("\"name\" = 'Iron Maiden'") && !sql.contains("\"title\" = 'Iron Maiden'"), "\(sql)")
        // Found only among the rows' own names, it is theirs.
        let own = [("albums", "title", "Powerslave"), ("artists", "name", "Iron Maiden")]
        let titled = try #require(Self.reply("Show the album Powerslave", tables: [Self.artists, Self.albums], values: own).candidates.first)
        #expect(titled.contains("\"title\" = 'Powerslave'"), "\(titled)")
    }

    @Test func theTotalNumberOfRowsIsACountNotASumOfAColumnNamedTotal() throws {
        let reply = Self.reply("What is the total number of invoices?", tables: [Self.customers, Self.invoices])
        let sql = try #require(reply.candidates.first, "\(reply.reason ?? "")")
        #expect(sql.contains("COUNT(*)") && !sql.contains("SUM("), "\(sql)")
        // "The total of invoices" is still their amounts added up.
        let total = try #require(Self.reply("What is the total of all invoices?", tables: [Self.customers, Self.invoices]).candidates.first)
        #expect(total.contains("SUM(") && total.contains("\"total\""), "\(total)")
    }

    @Test func aColumnTheRowsLackHoldsNothing() throws {
        for question in ["How many customers have no company?", "Which customers do not have a company?", "List the customers without a company"] {
            let reply = Self.reply(question, tables: [Self.customers, Self.invoices])
            let sql = try #require(reply.candidates.first, "\(question): \(reply.reason ?? "")")
            #expect(sql.contains("(t0.\"company\" IS NULL OR t0.\"company\" = '')"), "\(question): \(sql)")
        }
        // Rows of another table they lack are still none of those rows.
        let none = try #require(Self.reply("Which customers have no invoices?", tables: [Self.customers, Self.invoices]).candidates.first)
        #expect(none.contains("NOT EXISTS") && !none.contains("IS NULL"), "\(none)")
    }

    @Test func rowsCountedThroughATableHoldingEachPairOnceAreNoDoubt() throws {
        let question = "How many songs are in each playlist?"
        let keyed = Self.reply(question, tables: Self.playlistSongs(keyed: true))
        #expect(keyed.candidates.first != nil && !keyed.risks.contains("counted-through-a-link"), "\(keyed.risks)")
        // Without the key, a pair may be there twice: the count is in doubt.
        let unkeyed = Self.reply(question, tables: Self.playlistSongs(keyed: false))
        #expect(unkeyed.risks.contains("counted-through-a-link"), "\(unkeyed.risks)")
        // A third link in the key lets a pair repeat too.
        let three = Self.reply(question, tables: Self.playlistSongs(keyed: true, extraLink: true))
        #expect(three.risks.contains("counted-through-a-link"), "\(three.risks)")
    }

    @Test func aCountBesideARankedTotalIsRefusedNotAnsweredWithTheTotal() {
        let reply = Self.reply(
            "For each country, what is the number of customers for the country with the highest total of invoices?",
            tables: [Self.customers, Self.invoices])
        #expect(reply.candidates.isEmpty, "\(reply.candidates)")
    }

    static let employees = SourceTable(
        name: "employees", isView: false, columns: [column("id", "INTEGER", key: true), column("first_name"), column("last_name")], foreignKeys: [])
    /// Customers with the employee who supports each (a key whose name says how they are linked).
    static let supported = SourceTable(
        name: "customers", isView: false,
        columns: [column("id", "INTEGER", key: true), column("first_name"), column("last_name"), column("support_rep_id", "INTEGER")],
        foreignKeys: [.init(column: "support_rep_id", table: "employees", targetColumn: "id")])

    @Test func moneyTheRowsSpentIsAddedUpOverTheirRowsAndCompared() throws {
        let reply = Self.reply("Which customers have spent more than $45?", tables: [Self.customers, Self.invoices])
        let sql = try #require(reply.candidates.first, "\(reply.reason ?? "")")
        #expect(sql.contains("HAVING SUM(") && sql.contains("\"total\") > 45") && sql.contains("GROUP BY"), "\(sql)")
    }

    @Test func aWordOfTheOnlyKeyLinkingTwoTablesNamedSaysHowTheyAreLinked() throws {
        let tables = [Self.employees, Self.supported]
        let reply = Self.reply("How many customers does each employee support?", tables: tables)
        let sql = try #require(reply.candidates.first, "\(reply.reason ?? "")")
        #expect(sql.contains("COUNT(*)") && sql.contains("\"support_rep_id\" = t0.\"id\"") && sql.contains("GROUP BY"), "\(sql)")
        // Where two keys link them, the word would choose between them: not read.
        var twice = Self.supported
        twice.columns.append(Self.column("account_manager_id", "INTEGER"))
        twice.foreignKeys.append(.init(column: "account_manager_id", table: "employees", targetColumn: "id"))
        let refused = Self.reply("How many customers does each employee support?", tables: [Self.employees, twice])
        #expect(refused.candidates.isEmpty && (refused.reason ?? "").contains("'support'"), "\(refused.candidates) \(refused.reason ?? "")")
    }

    @Test func rowsListedWithTheirOwnColumnAreShownBesideIt() throws {
        let tables = [Self.employees.withColumn(Self.column("title"))]
        let sql = try #require(Self.reply("List all employees with their titles", tables: tables).candidates.first)
        #expect(sql.contains("\"first_name\"") && sql.contains("\"title\"") && !sql.contains("DISTINCT"), "\(sql)")
        // "with the title X" is still a condition.
        let values = [("employees", "title", "Sales Agent")]
        let held = try #require(Self.reply("List employees with the title 'Sales Agent'", tables: tables, values: values).candidates.first)
        #expect(held.contains("WHERE t0.\"title\" = 'Sales Agent'"), "\(held)")
    }

    @Test func theRowsThatSpentTheMostAreRankedByTheMoneyOfTheirRows() throws {
        let reply = Self.reply("Which customer spent the most?", tables: [Self.customers, Self.invoices])
        let sql = try #require(reply.candidates.first, "\(reply.reason ?? "")")
        #expect(sql.contains("SUM(t1.\"total\") AS value") && sql.contains("ORDER BY value DESC") && sql.hasSuffix("LIMIT 1"), "\(sql)")
    }

    /// Songs and the lines of the invoices that sold them (a price and a quantity each).
    static let lines = SourceTable(
        name: "invoice_lines", isView: false,
        columns: [
            column("id", "INTEGER", key: true), column("invoice_id", "INTEGER"), column("song_id", "INTEGER"), column("unit_price", "REAL"),
            column("quantity", "INTEGER"),
        ],
        foreignKeys: [
            .init(column: "invoice_id", table: "invoices", targetColumn: "id"), .init(column: "song_id", table: "songs", targetColumn: "id"),
        ])

    @Test func rowsNeverSoldHaveNoneOfTheSalesThatWouldNameThem() throws {
        let tables = [Self.artists, Self.albums, Self.songs, Self.customers, Self.invoices, Self.lines]
        for question in ["Which songs have never been sold?", "How many songs were never sold?"] {
            let reply = Self.reply(question, tables: tables)
            let sql = try #require(reply.candidates.first, "\(question): \(reply.reason ?? "")")
            #expect(sql.contains("NOT EXISTS (SELECT 1 FROM \"invoice_lines\" x WHERE x.\"song_id\" = t0.\"id\")"), "\(question): \(sql)")
        }
        let customers = try #require(Self.reply("Which customers have never bought anything?", tables: tables).candidates.first)
        #expect(customers.contains("NOT EXISTS (SELECT 1 FROM \"invoices\" x WHERE x.\"customer_id\" = t0.\"id\")"), "\(customers)")
        // Without a table that keeps an amount, the verb names nothing and the negation is refused.
        #expect(Self.reply("Which songs have never been sold?", tables: [Self.artists, Self.albums, Self.songs]).candidates.isEmpty)
    }
}

extension SourceTable {
    func withColumn(_ column: Column) -> SourceTable {
        var table = self
        table.columns.append(column)
        return table
    }
}

import Testing

@testable import PorticoAsk

/// SQL written as for SQLite (names in any case, unquoted) runs on PostgreSQL tables and columns
/// created in mixed case.
struct IdentifierCaseTests {
    let names = ["Invoice", "BillingCountry", "Total", "InvoiceDate", "Genre", "GenreId", "Track", "Name", "id"]

    func quoted(_ sql: String) -> String { IdentifierCase.quotingMixedCase(sql, names: names) }

    @Test func mixedCaseNamesAreQuotedAsTheSchemaSpellsThem() {
        #expect(
            quoted("SELECT billingcountry, SUM(Total) AS revenue FROM invoice GROUP BY BillingCountry ORDER BY revenue DESC")
                == #"SELECT "BillingCountry", SUM("Total") AS revenue FROM "Invoice" GROUP BY "BillingCountry" ORDER BY revenue DESC"#)
        #expect(quoted("SELECT g.Name FROM Genre g") == #"SELECT g."Name" FROM "Genre" g"#)
    }

    @Test func aliasesFunctionsTypesStringsAndQuotedNamesAreLeftAlone() {
        // The alias `total` stays the query's own name; `Total` the column is quoted.
        #expect(quoted("SELECT SUM(Total) AS total FROM Invoice ORDER BY total") == #"SELECT SUM("Total") AS total FROM "Invoice" ORDER BY total"#)
        // `AS genre` names a column; `Genre` after JOIN is still the table.
        #expect(
            quoted("SELECT g.Name AS genre FROM Track t JOIN Genre g ON g.GenreId = t.GenreId")
                == #"SELECT g."Name" AS genre FROM "Track" t JOIN "Genre" g ON g."GenreId" = t."GenreId""#)
        #expect(quoted("SELECT total(1), InvoiceDate::date FROM Invoice") == #"SELECT total(1), "InvoiceDate"::date FROM "Invoice""#)
        #expect(quoted("SELECT 'Invoice Total' FROM \"Invoice\" WHERE id = 1") == "SELECT 'Invoice Total' FROM \"Invoice\" WHERE id = 1")
        #expect(quoted("SELECT 1") == "SELECT 1")
    }

    @Test func namesThatDifferOnlyInCaseAreAmbiguousAndLeftAsWritten() {
        let sql = "SELECT name FROM t"
        #expect(IdentifierCase.quotingMixedCase(sql, names: ["Name", "NAME"]) == sql)
        // A lower-case `name` (one app's column) beside `Name` (another table's): as written, each means its own.
        #expect(IdentifierCase.quotingMixedCase("SELECT a.name FROM accounts a", names: ["name", "Name", "accounts"]) == "SELECT a.name FROM accounts a")
        #expect(IdentifierCase.quotingMixedCase("SELECT Name FROM Artist", names: ["name", "Name", "Artist"]) == #"SELECT "Name" FROM "Artist""#)
        #expect(IdentifierCase.quotingMixedCase("SELECT NAME FROM t", names: ["name", "Name"]) == "SELECT NAME FROM t")
    }
}

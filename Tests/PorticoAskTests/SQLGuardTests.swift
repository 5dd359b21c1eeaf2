import PorticoBase
import Testing

@testable import PorticoAsk
@testable import PorticoAskEngine

@Suite struct SQLGuardTests {
    let sqlite = SQLGuard(dialect: .sqlite, tables: ["Album", "Artist", "Track", "Invoice", "Customer", "Genre"])
    let postgres = SQLGuard(dialect: .postgres, tables: ["album", "artist", "track", "invoice", "customer"])

    @Test(arguments: [
        "SELECT * FROM Album",
        "select Title from album where AlbumId = 1;",
        "SELECT a.Title, ar.Name FROM Album a JOIN Artist ar ON a.ArtistId = ar.ArtistId ORDER BY 1 LIMIT 5",
        "SELECT BillingCountry, SUM(Total) AS revenue FROM Invoice GROUP BY BillingCountry ORDER BY revenue DESC LIMIT 5",
        "WITH top AS (SELECT ArtistId, COUNT(*) n FROM Album GROUP BY ArtistId) SELECT * FROM top JOIN Artist USING (ArtistId)",
        "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 5) SELECT x FROM n",
        "SELECT strftime('%Y', InvoiceDate) AS y, count(*) FROM Invoice GROUP BY y",
        "SELECT Name FROM Track WHERE Name LIKE '%you%' AND GenreId IN (SELECT GenreId FROM Genre WHERE Name = 'Rock')",
        "SELECT 'a; DROP TABLE Album; --' AS s FROM Album",
        "SELECT \"Title\" FROM \"Album\" -- a trailing comment\n",
        "SELECT Name, RANK() OVER (PARTITION BY GenreId ORDER BY Milliseconds DESC) FROM Track",
        "SELECT CAST(Total AS INTEGER) FROM main.Invoice, Customer c WHERE c.CustomerId = Invoice.CustomerId",
        "SELECT replace(Name, 'a', 'b') FROM Artist",
        "SELECT count(*) FILTER (WHERE Total > 5) FROM Invoice",
        "SELECT * FROM Album a WHERE EXISTS (SELECT 1 FROM Track t WHERE t.AlbumId = a.AlbumId)",
        "(SELECT Title FROM Album) UNION (SELECT Name FROM Artist)",
        "SELECT coalesce((SELECT max(Total) FROM Invoice), 0)",
        "SELECT value FROM json_each('[1,2]')",
        "SELECT * FROM (VALUES ('a'), ('b')) AS v",
        "SELECT x FROM (SELECT (1) AS x, 'y' AS z)",
        "SELECT * FROM (Album a JOIN Artist ar ON a.ArtistId = ar.ArtistId), Genre",
        "SELECT instr(Title, 'a') FROM Album WHERE 'x' IN ('x', 'y')",
    ])
    func sqliteAcceptsReadOnlyQueries(_ sql: String) throws {
        _ = try sqlite.check(sql)
    }

    @Test(arguments: [
        "SELECT date_trunc('month', invoice_date) AS m, sum(total) FROM invoice GROUP BY 1",
        "SELECT extract(YEAR FROM invoice_date) AS y FROM invoice",
        "SELECT substring(name FROM 1 FOR 3), trim(BOTH ' ' FROM name) FROM artist",
        "SELECT total::numeric(10,2) FROM public.invoice",
        "SELECT $$a ; DROP TABLE x$$ AS s FROM album",
        "SELECT E'it\\'s' FROM album /* nested /* comment */ still */",
        "SELECT position('a' IN name) FROM artist",
        "SELECT * FROM (album a JOIN artist ar ON a.artist_id = ar.artist_id)",
        // A column named user, as PostgreSQL lets it be written.
        "SELECT \"user\", a.user, 1 AS user FROM album a",
    ])
    func postgresAcceptsReadOnlyQueries(_ sql: String) throws {
        _ = try postgres.check(sql)
    }

    /// The attacks that broke peers' guards; each must be refused before it reaches a database.
    @Test(arguments: [
        ("SELECT 1; COMMIT; DROP TABLE Album", "one statement"),
        ("SELECT * FROM Album; ATTACH DATABASE '/tmp/x.db' AS x", "one statement"),
        ("COMMIT; DROP TABLE Album --", "SELECT"),
        ("DROP TABLE Album", "SELECT"),
        ("DELETE FROM Album", "SELECT"),
        ("WITH x AS (DELETE FROM Album RETURNING *) SELECT * FROM x", "DELETE"),
        ("WITH x AS (UPDATE Album SET Title = 'x' RETURNING *) SELECT * FROM x", "UPDATE"),
        ("WITH x AS (INSERT INTO Album VALUES (1, 'x', 1) RETURNING *) SELECT * FROM x", "INSERT"),
        ("SELECT * INTO backup FROM Album", "INTO"),
        ("SELECT * FROM Album FOR UPDATE", "UPDATE"),
        ("SELECT * FROM Album FOR SHARE", "row locks"),
        ("VACUUM INTO '/tmp/copy.db'", "SELECT"),
        ("SELECT load_extension('/tmp/evil.so')", "load_extension"),
        ("PRAGMA writable_schema = 1", "SELECT"),
        ("SELECT * FROM sqlite_master", "sqlite_master"),
        ("SELECT * FROM \"sqlite_schema\"", "sqlite_schema"),
        ("SELECT * FROM portico_users", "portico_users"),
        ("SELECT * FROM Album JOIN portico_api_keys ON 1", "portico_api_keys"),
        ("SELECT * FROM temp.Album", "outside the datasource"),
        ("SELECT * FROM other.Album", "outside the datasource"),
        ("SELECT * FROM NotATable", "not in this datasource"),
        ("SELECT * FROM Album, Secrets", "Secrets"),
        ("SELECT * FROM pragma_table_info('Album')", "pragma_table_info"),
        ("SELECT readfile('/etc/passwd')", "readfile"),
        ("SEL/**/ECT * FROM Album", "SELECT"),
        ("SELECT * FROM Album WHERE Title = ?", "parameters"),
        ("SELECT * FROM Album WHERE Title = 'unterminated", "unterminated"),
        ("SELECT * FROM Album /* unterminated", "unterminated"),
        ("", "empty"),
        (";;", "empty"),
        ("SELECT 1 -- \n; DELETE FROM Album", "one statement"),
        ("SELECT randomblob(1000000000)", "randomblob"),
        // A WITH name that took the place of a role's view would have its reads taken for the view's.
        ("WITH 'portico_view_0123' AS (SELECT * FROM Customer) SELECT * FROM Album", "Portico's own"),
        ("SELECT * FROM Album WHERE Title = 'PORTICO_VIEW_x'", "Portico's own"),
    ])
    func sqliteRefusesAttacks(_ sql: String, _ expected: String) {
        #expect {
            try sqlite.check(sql)
        } throws: { error in
            let message = (error as? SQLGuardError)?.message ?? ""
            return message.lowercased().contains(expected.lowercased())
        }
    }

    @Test(arguments: [
        ("COPY (SELECT 1) TO PROGRAM 'id'", "SELECT"),
        ("SELECT * FROM album; COPY album TO PROGRAM 'id'", "one statement"),
        ("SELECT pg_read_file('/etc/passwd')", "pg_read_file"),
        ("SELECT lo_export(1, '/tmp/x')", "lo_export"),
        ("SELECT set_config('role', 'postgres', false)", "set_config"),
        ("SELECT * FROM dblink('host=evil', 'SELECT 1') AS t(x int)", "dblink"),
        ("SELECT pg_sleep(100)", "pg_sleep"),
        ("SELECT * FROM album FOR NO KEY UPDATE", "row locks"),
        ("SELECT * FROM pg_catalog.pg_shadow", "pg_catalog"),
        ("SELECT * FROM information_schema.tables", "information_schema"),
        ("SELECT $$ unterminated", "unterminated"),
        ("SELECT * FROM album /* /* nested */", "unterminated"),
        ("SELECT 1; SET ROLE postgres", "one statement"),
        ("SELECT current_setting('data_directory')", "current_setting"),
        ("SELECT E'\\'; DROP TABLE album; --' FROM album; DELETE FROM album", "one statement"),
        ("SELECT * FROM private.secrets", "outside the datasource"),
        ("SELECT version()", "version"),
        // A function followed by an alias looks a little like a common table expression's header.
        ("SELECT * FROM album, dblink('x', 'y') AS t", "dblink"),
        ("SELECT 1, lo_export(1, '/tmp/x') AS z FROM album", "lo_export"),
        ("WITH a AS (SELECT 1), lo_export(1, '/tmp/x') AS b SELECT 1", "lo_export"),
        // A Unicode-escaped name is the guard's blind spot: it could spell any table.
        ("SELECT * FROM (U&\"\\0070ortico_users\" JOIN album ON true)", "Unicode-escaped"),
        ("SELECT * FROM (album JOIN u&\"\\0061lbum\" ON true)", "Unicode-escaped"),
        // `TABLE x` reads a table with no FROM; `1secret` was a number and an alias to older servers.
        ("SELECT 1 UNION TABLE private_table", "TABLE"),
        ("SELECT album_id FROM album WHERE album_id IN (TABLE secrets)", "TABLE"),
        ("SELECT 1secret FROM album", "neither a number"),
        // The account the datasource is read with.
        ("SELECT current_user", "CURRENT_USER names the database account"),
        ("SELECT user FROM album", "USER names the database account"),
        ("SELECT session_user, name FROM artist", "SESSION_USER names"),
    ])
    func postgresRefusesAttacks(_ sql: String, _ expected: String) {
        #expect {
            try postgres.check(sql)
        } throws: { error in
            let message = (error as? SQLGuardError)?.message ?? ""
            return message.lowercased().contains(expected.lowercased())
        }
    }

    /// Input built to make a careless checker quadratic is refused or checked in linear time.
    /// A role's view replaces every table reference, wherever it is, keeping aliases: no SQL reads around it.
    @Test(arguments: [
        ("SELECT * FROM Album", "SELECT * FROM (V) AS \"Album\""),
        (
            "  SELECT a.Title FROM Album a JOIN Artist AS ar ON a.ArtistId = ar.ArtistId;",
            "SELECT a.Title FROM (V) a JOIN (W) AS ar ON a.ArtistId = ar.ArtistId"
        ),
        ("SELECT * FROM main.\"Album\" WHERE 1 = 1", "SELECT * FROM (V) AS \"Album\" WHERE 1 = 1"),
        (
            "SELECT Name FROM Artist WHERE ArtistId IN (SELECT ArtistId FROM Album) ORDER BY 1",
            "SELECT Name FROM (W) AS \"Artist\" WHERE ArtistId IN (SELECT ArtistId FROM (V) AS \"Album\") ORDER BY 1"
        ),
        ("WITH x AS (SELECT * FROM Album) SELECT * FROM x, Genre", "WITH x AS (SELECT * FROM (V) AS \"Album\") SELECT * FROM x, Genre"),
        // SQLite reads a single-quoted name where a table must be as the table's name.
        ("SELECT count(*) FROM 'Album'", "SELECT count(*) FROM (V) AS \"Album\""),
        ("SELECT Title FROM 'main'.Album", "SELECT Title FROM (V) AS \"Album\""),
        ("SELECT * FROM Genre JOIN 'Album' ON 1", "SELECT * FROM Genre JOIN (V) AS \"Album\" ON 1"),
        ("SELECT * FROM main.'Album' a", "SELECT * FROM (V) a"),
        // A parenthesised join is a FROM list too.
        ("SELECT count(*) FROM (Album)", "SELECT count(*) FROM ((V) AS \"Album\")"),
        ("SELECT * FROM (Genre JOIN (Album a JOIN Artist ON 1) ON 1)", "SELECT * FROM (Genre JOIN ((V) a JOIN (W) AS \"Artist\" ON 1) ON 1)"),
        // SQLite's `x IN table`.
        ("SELECT 1 WHERE 1 IN Album", "SELECT 1 WHERE 1 IN (V)"),
        // A single-quoted alias is an alias.
        ("SELECT a.Title FROM Album 'a'", "SELECT a.Title FROM (V) 'a'"),
    ])
    func viewsReplaceTableReferences(_ sql: String, _ expected: String) throws {
        let views = ["album": "(V)", "artist": "(W)"]
        #expect(try sqlite.check(sql).replacingTables { views[$0.lowercased()] } == expected)
    }

    @Test func aViewTakesThePlaceOfOnlyAndItsTable() throws {
        #expect(try postgres.check("SELECT * FROM ONLY album a").replacingTables { $0 == "album" ? "(V)" : nil } == "SELECT * FROM (V) a")
    }

    @Test func hostileShapesAreBounded() throws {
        let nested = "SELECT " + String(repeating: "a, coalesce(", count: 7_000) + "1" + String(repeating: ")", count: 7_000) + " FROM Album"
        let started = ContinuousClock.now
        _ = try sqlite.check(nested)
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(throws: SQLGuardError.self) { try sqlite.check("SELECT " + String(repeating: "1+", count: 60_000) + "1") }
        #expect(throws: SQLGuardError.self) { try postgres.check("SELECT $" + String(repeating: "a", count: 100) + "$ x") }
    }

    @Test func checkedSQLDropsTheTrailingSemicolonAndComment() throws {
        let checked = try sqlite.check("SELECT Title FROM Album a JOIN Artist USING (ArtistId);  -- done\n")
        #expect(checked.sql == "SELECT Title FROM Album a JOIN Artist USING (ArtistId)")
        #expect(checked.tables == ["Album", "Artist"])
    }

    @Test func tokenizerKeepsQuotedTextWhole() throws {
        let tokens = try SQLTokenizer.tokenize("SELECT 'it''s', \"a\"\"b\", [c d] FROM t", dialect: .sqlite)
        #expect(tokens.map(\.kind) == [.word, .string, .punctuation, .quotedIdentifier, .punctuation, .quotedIdentifier, .word, .word])
        #expect(tokens[3].text == "a\"b")
        #expect(tokens[5].text == "c d")
    }

    /// A quote with a combining accent on it is one character with it in Swift, and Foundation's
    /// and Swift's replacing leave it single: SQL's quotes are doubled one scalar at a time, so
    /// text from a question or a name can never end a quoted literal or identifier early.
    @Test func aQuoteWithAnAccentOnItIsStillDoubled() throws {
        let text = "O'\u{301} OR 1=1 --"
        #expect(text.doubling("'") == "O''\u{301} OR 1=1 --")
        #expect(text.doubling("'").undoubling("'") == text)
        let tokens = try SQLTokenizer.tokenize("SELECT '\(text.doubling("'"))' FROM \"t\"\"\u{301}\"", dialect: .sqlite)
        #expect(tokens.map(\.kind) == [.word, .string, .word, .quotedIdentifier])
        let table = "t\"\u{301}"  // (swift-testing's #expect cannot carry this literal itself)
        #expect(tokens[3].text == table)
        let mysql = try SQLTokenizer.tokenize("SELECT '\("a\\'\u{301}".doubling("\\", "'"))'", dialect: .mysql)
        #expect(mysql.map(\.kind) == [.word, .string])
        let name = "x\"\u{301}y"
        let quoted = "\"x\"\"\u{301}y\""
        #expect(ValueIndex.quote(name, .sqlite) == quoted)
    }
}

/// MySQL's lexical rules differ where attacks hide: backslash escapes in strings, "…" a string,
/// `--` a comment only before a space, `#` comments, executable /*! */ comments, variables.
@Suite struct MySQLGuardTests {
    let mysql = SQLGuard(dialect: .mysql, tables: ["Album", "Artist", "Track", "Invoice", "Customer", "Genre"], schemas: ["chinook"])

    @Test(arguments: [
        "SELECT * FROM Album",
        "SELECT `Title` FROM `Album` WHERE `AlbumId` = 1;",
        "SELECT a.Title, ar.Name FROM Album a JOIN Artist ar ON a.ArtistId = ar.ArtistId ORDER BY 1 LIMIT 5",
        "SELECT DATE_FORMAT(InvoiceDate, '%Y-%m') AS m, SUM(Total) FROM Invoice GROUP BY m",
        "SELECT Name FROM Artist WHERE Name = \"AC/DC\"",
        "SELECT 'it\\'s; DROP TABLE Album' AS s FROM Album",
        "SELECT Name FROM chinook.Artist # a comment\n",
        "SELECT Total--1 FROM Invoice",
        "SELECT IFNULL(Composer, 'none'), GROUP_CONCAT(Name ORDER BY Name SEPARATOR ', ') FROM Track GROUP BY Composer",
        "SELECT EXTRACT(YEAR FROM InvoiceDate), DATE_ADD(InvoiceDate, INTERVAL 1 DAY) FROM Invoice",
        "SELECT CAST(Total AS DECIMAL(10,2)), CONVERT(Name USING utf8mb4) FROM Invoice, Artist",
        "SELECT a.Title FROM Album a STRAIGHT_JOIN Artist ar ON a.ArtistId = ar.ArtistId",
        "SELECT 1e3, 2.5E-2, 0x1F, 0b101, .5, 1_000 FROM Album",
        // MySQL reads a bare user as a column.
        "SELECT user, `current_user` FROM Album",
    ])
    func acceptsReadOnlyQueries(_ sql: String) throws {
        _ = try mysql.check(sql)
    }

    @Test(arguments: [
        // MySQL runs the text of these comments.
        ("SELECT 1 /*!50000 UNION SELECT * FROM mysql.user */", "executable comments"),
        ("SELECT 1 /*M! , LOAD_FILE('/etc/passwd') */", "executable comments"),
        // `--1` is not a comment in MySQL: what follows runs.
        ("SELECT Total --1 UNION SELECT authentication_string FROM mysql.user\nFROM Invoice", "outside the datasource"),
        // An escaped backslash ends the string: what follows is SQL, for MySQL and for the guard.
        ("SELECT 'a\\\\' UNION SELECT 1 FROM mysql.user -- ' FROM Album", "outside the datasource"),
        ("SELECT Name FROM Artist INTO OUTFILE '/tmp/x'", "INTO"),
        ("SELECT Name FROM Artist INTO DUMPFILE '/tmp/x'", "INTO"),
        ("SELECT LOAD_FILE('/etc/passwd')", "LOAD"),
        ("SELECT SLEEP(10)", "function 'SLEEP'"),
        ("SELECT BENCHMARK(100000000, MD5('x'))", "function 'BENCHMARK'"),
        ("SELECT GET_LOCK('x', 10)", "function 'GET_LOCK'"),
        ("SELECT @@version", "variables"),
        ("SELECT @x := 1 FROM Album", "variables"),
        ("SELECT @`x` FROM Album", "variables"),
        ("SELECT 1; DROP TABLE Album", "one statement"),
        ("SELECT * FROM Album FOR UPDATE", "row locks"),
        ("SELECT * FROM Album LOCK IN SHARE MODE", "LOCK"),
        ("SELECT * FROM Album PROCEDURE ANALYSE()", "PROCEDURE"),
        ("HANDLER Album OPEN", "SELECT"),
        ("DO SLEEP(5)", "SELECT"),
        ("SELECT * FROM mysql.user", "outside the datasource"),
        ("SELECT * FROM information_schema.TABLES", "database's or Portico's own"),
        ("SELECT * FROM performance_schema.threads", "database's or Portico's own"),
        ("SELECT USER(), VERSION()", "function 'USER'"),
        // The account, without parentheses.
        ("SELECT current_user", "CURRENT_USER names the database account"),
        ("SELECT Name, session_user FROM Artist", "SESSION_USER names"),
        ("SELECT system_user", "SYSTEM_USER names"),
        ("SELECT CURRENT_ROLE", "CURRENT_ROLE names"),
        ("SELECT Name FROM Artist WHERE Name = 'unterminated\\'", "unterminated"),
        // Ways to name a table where a reading by clauses does not expect one.
        ("SELECT * FROM Album STRAIGHT_JOIN mysql.user", "outside the datasource"),
        ("SELECT 1, 2, 3 UNION TABLE mysql.user", "TABLE"),
        ("SELECT * FROM Album WHERE AlbumId IN (TABLE secret)", "TABLE"),
        ("SELECT * FROM {OJ secret LEFT JOIN Album ON 1}", "braces"),
        ("SELECT * FROM 1secret", "neither a number nor a plain name"),
        ("SELECT * FROM Album, 9db.t", "neither a number nor a plain name"),
        // Hints that lift the session's time limit or row cap; a sequence moved by reading it.
        ("SELECT /*+ MAX_EXECUTION_TIME(100000) */ * FROM Album", "optimizer hints"),
        ("SELECT /*+ SET_VAR(sql_select_limit=1000000) */ * FROM Track", "optimizer hints"),
        ("SELECT NEXT VALUE FOR seq", "sequences"),
    ])
    func refusesAttacks(_ sql: String, _ expected: String) {
        let error = #expect(throws: SQLGuardError.self) { try mysql.check(sql) }
        #expect(error?.message.contains(expected) == true, "\(sql): \(error?.message ?? "")")
    }

    @Test func stringsAndNamesAreReadAsMySQLReadsThem() throws {
        let tokens = try SQLTokenizer.tokenize("SELECT \"a\\\"b\", `we``ird`, 'c''d' # tail", dialect: .mysql)
        #expect(tokens.map(\.kind) == [.word, .string, .punctuation, .quotedIdentifier, .punctuation, .string])
        #expect(tokens[3].text == "we`ird")
        #expect(try SQLTokenizer.tokenize("SELECT 1--1", dialect: .mysql).count == 4, "1--1 is an expression in MySQL, not a comment")
        // A backslash-escaped quote does not end the string: the rest is inside it, for MySQL and for the guard.
        let inside = try mysql.check("SELECT 'a\\' UNION SELECT 1 FROM mysql.user -- ' FROM Album")
        #expect(inside.tables == ["Album"])
        #expect(try SQLTokenizer.tokenize("SELECT 1-- 1", dialect: .mysql).count == 2)
    }
}

import Testing

@testable import PorticoStore

/// The text a fragment renders to, with `?` placeholders (SQLite) and `$n` (PostgreSQL).
@Suite struct SQLFragmentTests {
    func sample(_ name: String) -> SQLFragment {
        var q = SQLFragment("SELECT ")
        q.append(column: name, of: "t0")
        q.append(" FROM ")
        q.append(table: "Album", as: "t0")
        q.append(" WHERE ")
        q.append(column: "AlbumId", of: "t0")
        q.append(" = ")
        q.append(bind: .int(7))
        q.append(" AND ")
        q.append(identifier: "Note")
        q.append(" IS ")
        q.append(bind: .null)
        q.append(" OR ")
        q.append(identifier: "Title")
        q.append(" = ")
        q.append(bind: .text("it's"))
        return q
    }

    @Test func namesAreQuotedAndValuesBound() {
        let (sql, binds) = sample("Title").rendered()
        #expect(sql == #"SELECT "t0"."Title" FROM "Album" AS "t0" WHERE "t0"."AlbumId" = ? AND "Note" IS NULL OR "Title" = ?"#)
        #expect(binds == [.int(7), .text("it's")])
        let (numbered, same) = sample("Title").rendered(numbered: true)
        #expect(numbered == #"SELECT "t0"."Title" FROM "Album" AS "t0" WHERE "t0"."AlbumId" = $1 AND "Note" IS NULL OR "Title" = $2"#)
        #expect(same == binds)
    }

    @Test func aQuoteInANameIsDoubled() {
        let (sql, binds) = sample(#"Ti"tle"#).rendered()
        #expect(sql == #"SELECT "t0"."Ti""tle" FROM "Album" AS "t0" WHERE "t0"."AlbumId" = ? AND "Note" IS NULL OR "Title" = ?"#)
        #expect(binds == [.int(7), .text("it's")])
    }

    @Test func aCompactedFragmentRendersTheSame() {
        for name in ["Title", #"Ti"tle"#] {
            let fragment = sample(name)
            #expect(fragment.compacted().rendered().sql == fragment.rendered().sql)
            #expect(fragment.compacted().rendered().binds == fragment.rendered().binds)
            #expect(fragment.compacted().rendered(numbered: true).sql == fragment.rendered(numbered: true).sql)
            #expect(fragment.compacted().parts.count == 6, "text and binds alternate: three values, three texts")
        }
    }
}

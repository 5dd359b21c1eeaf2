"""A real PostgreSQL datasource (a throwaway cluster loaded with Chinook, started by the
Makefile or, when run alone, by this module): introspection, read-only SQL in the PostgreSQL
dialect, and the guard's attack corpus, which must neither run nor change anything."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import tempfile
from pathlib import Path

import pytest
from conftest import start_server, throwaway_server
from test_official_client import connect


@pytest.fixture(scope="module")
def pg_url():
    url = os.environ.get("PORTICO_TEST_POSTGRES_URL")
    if url:
        yield url
        return
    with throwaway_server("pg_cluster.sh", "portico-pg-") as directory:
        yield (directory / "url").read_text().strip()


@pytest.fixture(scope="module")
def pg_server(pg_url):
    server = start_server(data_dir=tempfile.mkdtemp(prefix="portico-pgds-"))
    server.cli("datasource", "add", "--name", "chinook_pg", "--postgres", pg_url, "--description", "Chinook on PostgreSQL")
    yield server
    server.stop()


def psql(url: str, sql: str) -> str:
    return subprocess.run(["psql", url.replace("?sslmode=disable", ""), "-Atc", sql], capture_output=True, text=True, check=True).stdout.strip()


def run(coro):
    return asyncio.run(coro)


def test_listed_described_and_queried_without_revealing_the_password(pg_server, pg_url):
    password = pg_url.split(":")[2].split("@")[0]
    listed = pg_server.cli("datasource", "list").stdout
    assert "chinook_pg\tpostgres\tpostgres://postgres:***@" in listed and password not in listed

    async def go():
        async with connect(pg_server, "auto") as client:
            sources = (await client.call_tool("datasources_list", {})).structured_content["data"]
            assert {"name": "chinook_pg", "type": "postgres", "description": "Chinook on PostgreSQL"} in sources
            described = await client.call_tool("datasource_describe", {"datasource": "chinook_pg", "tables": ["album", "invoice"]})
            assert password not in str(described.content)
            schema = described.structured_content
            assert schema["dialect"] == "postgres"
            album = next(t for t in schema["tables"] if t["name"] == "album")
            assert "album_id integer PK NOT NULL" not in album["columns"] and "album_id integer PK" in album["columns"]
            assert "artist_id integer NOT NULL → artist.artist_id" in album["columns"]
            assert len(album["samples"]["title"]) == 3
            r = await client.call_tool("sql_query", {
                "datasource": "chinook_pg",
                "sql": "SELECT billing_country, SUM(total) AS revenue, MIN(invoice_date) AS first FROM invoice "
                       "GROUP BY billing_country ORDER BY revenue DESC LIMIT 3"})
            assert not r.is_error, r.content
            rows = r.structured_content["rows"]
            assert [row[0] for row in rows] == ["USA", "Canada", "France"]
            assert rows[0][1] == pytest.approx(523.06) and isinstance(rows[0][1], float)
            assert rows[0][2].startswith("20") and ":" in rows[0][2]
            big = await client.call_tool("sql_query", {"datasource": "chinook_pg", "sql": "SELECT * FROM track t CROSS JOIN genre"})
            assert big.structured_content["truncated"] is True and len(big.structured_content["rows"]) == 1000

    run(go())


def test_comments_on_tables_and_columns_are_part_of_the_schema(pg_server, pg_url):
    psql(pg_url, "COMMENT ON TABLE invoice_line IS 'One line of an invoice: a track bought\nat a price'; "
                 "COMMENT ON COLUMN invoice_line.unit_price IS 'Price in US dollars when sold'")
    try:
        async def go():
            async with connect(pg_server, "auto") as client:
                described = await client.call_tool(
                    "datasource_describe", {"datasource": "chinook_pg", "tables": ["invoice_line", "album"], "refresh": True})
                tables = {t["name"]: t for t in described.structured_content["tables"]}
                assert tables["invoice_line"]["comment"] == "One line of an invoice: a track bought at a price"
                assert tables["invoice_line"]["comments"] == {"unit_price": "Price in US dollars when sold"}
                assert "comment" not in tables["album"] and "comments" not in tables["album"]
        run(go())
    finally:
        psql(pg_url, "COMMENT ON TABLE invoice_line IS NULL; COMMENT ON COLUMN invoice_line.unit_price IS NULL")


ATTACKS = [
    ("SELECT 1; COMMIT; DROP TABLE album", "one statement"),
    ("COMMIT; DROP TABLE album --", "SELECT"),
    ("SELECT 1 FROM album --'; COMMIT; DROP TABLE album", None),
    ("WITH x AS (DELETE FROM album RETURNING *) SELECT * FROM x", "DELETE"),
    ("SELECT * INTO backup FROM album", "INTO"),
    ("COPY album TO PROGRAM 'touch {dir}/pwned'", "SELECT"),
    ("SELECT * FROM album; COPY album TO PROGRAM 'touch {dir}/pwned'", "one statement"),
    ("SELECT pg_read_file('/etc/passwd')", "pg_read_file"),
    ("SELECT lo_export(lo_from_bytea(0, 'x'), '{dir}/pwned')", "lo_export"),
    ("SELECT set_config('role', 'pg_write_server_files', false)", "set_config"),
    ("SELECT * FROM dblink('dbname=chinook', 'DROP TABLE album') AS t(x text)", "dblink"),
    ("SELECT pg_sleep(30)", "pg_sleep"),
    ("SELECT * FROM album FOR UPDATE", "UPDATE"),
    ("SELECT * FROM album FOR SHARE", "SHARE"),
    ("SELECT $$; DROP TABLE album; $$ FROM album; DROP TABLE album", "one statement"),
    ("SELECT $tag$ $$ $tag$ ; DROP TABLE album", "one statement"),
    ("SELECT E'\\'; DROP TABLE album; --' FROM album", None),
    ("SELECT * FROM pg_catalog.pg_authid", "pg_catalog"),
    ("SELECT usename, passwd FROM pg_shadow", "pg_shadow"),
    ("SELECT * FROM information_schema.tables", "information_schema"),
    ("SET ROLE postgres", "SELECT"),
    ("BEGIN; DROP TABLE album; COMMIT", "SELECT"),
    ("SELECT * FROM album /* ; DROP TABLE album */ ; DROP TABLE album", "one statement"),
]


@pytest.mark.parametrize("sql,expected", ATTACKS)
def test_the_attack_corpus_on_postgresql(pg_server, pg_url, sql, expected):
    scratch = tempfile.mkdtemp(prefix="portico-pg-attack-")
    os.chmod(scratch, 0o777)
    sql = sql.format(dir=scratch)
    check = "SELECT (SELECT count(*) FROM album), (SELECT count(*) FROM pg_class WHERE relkind = 'r')"
    before = psql(pg_url, check)

    async def go():
        async with connect(pg_server, "auto") as client:
            r = await client.call_tool("sql_query", {"datasource": "chinook_pg", "sql": sql})
            if expected is None:
                # Quoting that hides a statement inside a literal: it is one harmless SELECT.
                assert not r.is_error, r.content
                return
            assert r.is_error, r.structured_content
            assert expected.lower() in r.content[0].text.lower(), r.content[0].text

    run(go())
    assert psql(pg_url, check) == before
    assert os.listdir(scratch) == [], "nothing was written on the server's disk"


def test_a_query_is_explained_and_one_above_the_cost_limit_is_refused_before_it_runs(pg_server):
    async def go():
        async with connect(pg_server, "auto") as client:
            r = await client.call_tool("sql_explain", {"datasource": "chinook_pg", "sql": "SELECT name FROM track WHERE milliseconds > 300000"})
            assert not r.is_error, r.content
            explained = r.structured_content
            assert explained["plan"][0]["Plan"]["Node Type"] == "Seq Scan"
            assert explained["estimatedCost"] > 0 and explained["estimatedRows"] > 0
            assert explained["fullScans"] == ["track"]
            keyed = (await client.call_tool("sql_explain", {"datasource": "chinook_pg", "sql": "SELECT name FROM track WHERE track_id = 5"})).structured_content
            assert keyed["fullScans"] == [] and keyed["estimatedCost"] < explained["estimatedCost"]
            refused = await client.call_tool("sql_explain", {"datasource": "chinook_pg", "sql": "DELETE FROM track"})
            assert refused.is_error

            expensive = "SELECT COUNT(*) AS n FROM track a CROSS JOIN track b"
            assert not (await client.call_tool("sql_query", {"datasource": "chinook_pg", "sql": expensive})).is_error
            pg_server.cli("datasource", "limit", "chinook_pg", "--max-cost", "1000")
            try:
                r = await client.call_tool("sql_query", {"datasource": "chinook_pg", "sql": expensive})
                assert r.is_error and "estimates this query's cost" in r.content[0].text and "limit of 1000" in r.content[0].text, r.content
                cheap = await client.call_tool("sql_query", {"datasource": "chinook_pg", "sql": "SELECT name FROM track WHERE track_id = 5"})
                assert not cheap.is_error and cheap.structured_content["rows"] == [["Princess of the Dawn"]]
            finally:
                pg_server.cli("datasource", "limit", "chinook_pg", "--clear")
            assert not (await client.call_tool("sql_query", {"datasource": "chinook_pg", "sql": expensive})).is_error

            # ask goes through the same guard: its count of every track costs more than a limit of 1.
            question = {"datasource": "chinook_pg", "question": "How many tracks are there?"}
            answered = await client.call_tool("ask", question)
            assert not answered.is_error and answered.structured_content["rows"] == [[3503]], answered.content
            pg_server.cli("datasource", "limit", "chinook_pg", "--max-cost", "1")
            try:
                r = await client.call_tool("ask", question)
                text = r.content[0].text
                assert r.is_error and "estimates this query's cost" in text and "limit of 1;" in text, text
                # The built-in engine would write the same SQL again: refused at once, not after corrections.
                assert "corrections" not in text, text
            finally:
                pg_server.cli("datasource", "limit", "chinook_pg", "--clear")

        # Only PostgreSQL estimates a cost: a SQLite datasource takes no limit, and says why.
        lite = Path(tempfile.mkdtemp(prefix="portico-lite-")) / "lite.sqlite"
        with sqlite3.connect(lite) as db:
            db.execute("CREATE TABLE t (x INTEGER)")
        pg_server.cli("datasource", "add", "--name", "lite", "--sqlite", str(lite))
        refused = pg_server.cli("datasource", "limit", "lite", "--max-cost", "5", check=False)
        assert refused.returncode != 0 and "a cost limit needs a PostgreSQL datasource" in refused.stderr, refused
        refused = pg_server.cli("datasource", "add", "--name", "lite2", "--sqlite", str(lite), "--max-cost", "5", check=False)
        assert refused.returncode != 0 and "a cost limit needs a PostgreSQL datasource" in refused.stderr, refused
        pg_server.cli("datasource", "remove", "lite")

    run(go())

"""Package `ask`, the SQL path: datasources_list, datasource_describe and sql_query through the guard,
with the official MCP client in both eras, against the real binary; the attack corpus end to end."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import tempfile
import time
from pathlib import Path

import pytest
from conftest import BACKEND, run_cli, start_server, store_rows
from test_official_client import connect

ASK_TOOLS = {"ask", "datasources_list", "datasource_describe", "sql_query"}


def run(coro):
    return asyncio.run(coro)


def direct(server, sql: str, postgres_sql: str | None = None) -> list[tuple]:
    """The same SQL run on the server's own database behind its back, read-only: the expected answer."""
    return store_rows(server.data_dir, sql, postgres_sql)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_describe_and_query_the_apps_own_data(server, mode):
    async def go():
        async with connect(server, mode, url=server.mcp + "?packages=data,schema,ask") as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert ASK_TOOLS <= names

            r = await client.call_tool("datasources_list", {})
            assert not r.is_error, r.content
            assert r.structured_content["data"][0]["name"] == "main"

            r = await client.call_tool("datasource_describe", {"datasource": "main"})
            assert not r.is_error, r.content
            tables = {t["name"]: t for t in r.structured_content["tables"]}
            assert {"Album", "Artist", "Track", "Invoice", "Customer"} <= set(tables)
            assert not [t for t in tables if t.lower().startswith(("portico_", "sqlite_"))], "Portico's own tables are never part of main"
            assert any(c.startswith("AlbumId ") and "PK" in c for c in tables["Album"]["columns"]), tables["Album"]
            assert "Brazil" in tables["Customer"]["samples"].get("Country", []) or tables["Customer"]["samples"]

            r = await client.call_tool("datasource_describe", {"tables": ["album", "Artist"]})
            assert [t["name"] for t in r.structured_content["tables"]] == ["Album", "Artist"]

            sql = "SELECT BillingCountry, ROUND(SUM(Total), 2) AS revenue FROM Invoice GROUP BY BillingCountry ORDER BY revenue DESC LIMIT 5"
            r = await client.call_tool("sql_query", {"datasource": "main", "sql": sql + ";"})
            assert not r.is_error, r.content
            sc = r.structured_content
            assert sc["columns"] == ["BillingCountry", "revenue"]
            quoted = 'SELECT "BillingCountry", ROUND(SUM("Total"), 2) AS revenue FROM "Invoice" GROUP BY "BillingCountry" ORDER BY revenue DESC LIMIT 5'
            assert [tuple(row) for row in sc["rows"]] == direct(server, sql, quoted)
            assert sc["rows"][0][0] == "USA"
            # On PostgreSQL the mixed-case names are quoted, as they must be there to be found; the answer shows the SQL that ran.
            assert sc["sql"] == (quoted if BACKEND == "postgres" else sql) and sc["truncated"] is False and sc["rowCount"] == 5
    run(go())


def test_the_row_cap_cuts_and_says_so(server):
    async def go():
        async with connect(server, "auto") as client:
            r = await client.call_tool("sql_query", {"sql": "SELECT TrackId, Name FROM Track ORDER BY TrackId"})
            assert not r.is_error, r.content
            assert r.structured_content["rowCount"] == 1000
            assert r.structured_content["truncated"] is True
            assert r.structured_content["rows"][0] == [1, "For Those About To Rock (We Salute You)"]
    run(go())


ATTACKS = [
    ("SELECT 1; COMMIT; DROP TABLE Album", "one statement"),
    ("COMMIT; DROP TABLE Album --", "SELECT"),
    ("DELETE FROM Album", "SELECT"),
    ("WITH x AS (DELETE FROM Album RETURNING *) SELECT * FROM x", "DELETE"),
    ("SELECT * INTO Backup FROM Album", "INTO"),
    ("SELECT * FROM Album FOR UPDATE", "UPDATE"),
    ("SELECT * FROM Album; ATTACH DATABASE '{dir}/evil.db' AS evil", "one statement"),
    ("VACUUM INTO '{dir}/copy.db'", "SELECT"),
    ("SELECT load_extension('{dir}/evil.so')", "load_extension"),
    ("PRAGMA writable_schema = 1", "SELECT"),
    ("SELECT name, password_hash FROM portico_users", "portico_users"),
    ("SELECT * FROM Album JOIN portico_api_keys ON 1", "portico_api_keys"),
    ("SELECT sql FROM sqlite_master", "sqlite_master"),
    ("SELECT * FROM pragma_table_info('portico_users')", "pragma_table_info"),
    ("SELECT 'x' /* ; DROP TABLE Album */ FROM Album; DROP TABLE Album", "one statement"),
    ("SELECT * FROM Album WHERE Title = ''; DROP TABLE Album; --'", "one statement"),
    ("SEL/**/ECT * FROM Album", "SELECT"),
    ("SELECT * FROM NoSuchTable", "not in this datasource"),
]


@pytest.mark.parametrize("sql,expected", ATTACKS)
def test_the_attack_corpus_neither_runs_nor_changes_anything(server, sql, expected):
    scratch = tempfile.mkdtemp(prefix="portico-attack-")
    sql = sql.format(dir=scratch)
    census = "SELECT (SELECT count(*) FROM Album), (SELECT count(*) FROM sqlite_master)"
    postgres_census = 'SELECT (SELECT count(*) FROM "Album"), (SELECT count(*) FROM information_schema.tables)'
    before = direct(server, census, postgres_census)

    async def go():
        async with connect(server, "auto") as client:
            r = await client.call_tool("sql_query", {"sql": sql})
            assert r.is_error, r.structured_content
            text = r.content[0].text
            assert expected.lower() in text.lower(), text
            assert "password" not in text.lower() or "portico_users" in sql
    run(go())
    assert direct(server, census, postgres_census) == before
    assert os.listdir(scratch) == [], "nothing was written outside the database either"


def test_an_external_sqlite_datasource_from_the_command_line(tmp_path):
    external = tmp_path / "sales.sqlite"
    db = sqlite3.connect(external)
    db.executescript("CREATE TABLE region (id INTEGER PRIMARY KEY, name TEXT); CREATE TABLE sale (id INTEGER PRIMARY KEY,"
                     " region_id INTEGER REFERENCES region(id), amount REAL);"
                     "INSERT INTO region VALUES (1, 'North'), (2, 'South');"
                     "INSERT INTO sale VALUES (1, 1, 10.0), (2, 1, 5.5), (3, 2, 7.25);")
    db.commit()
    db.close()
    server = start_server()
    try:
        run_cli("datasource", "add", "--name", "sales", "--sqlite", str(external), "--description", "regional sales", data_dir=server.data_dir)
        run_cli("datasource", "add", "--name", "warehouse", "--postgres", "postgres://bob:hunter2@db.example:5432/wh", data_dir=server.data_dir)
        listed = run_cli("datasource", "list", data_dir=server.data_dir).stdout
        assert "sales\tsqlite" in listed and "warehouse\tpostgres" in listed
        assert "hunter2" not in listed, "a datasource password is never printed"
        stored = store_rows(server.data_dir, "SELECT name, kind, sealed_location, description FROM portico_datasources")
        assert len(stored) == 2 and "hunter2" not in repr(stored), "and never stored in clear"
        if BACKEND == "sqlite":
            assert "hunter2" not in (Path(server.data_dir) / "portico.sqlite").read_bytes().decode("latin-1"), "not even in free pages"
        dup = run_cli("datasource", "add", "--name", "sales", "--sqlite", str(external), data_dir=server.data_dir, check=False)
        assert dup.returncode != 0 and "already has a datasource named 'sales'" in dup.stderr
        bad = run_cli("datasource", "add", "--name", "main", "--sqlite", str(external), data_dir=server.data_dir, check=False)
        assert bad.returncode != 0 and "'main' is the app's own database" in bad.stderr

        async def go():
            async with connect(server, "auto") as client:
                r = await client.call_tool("datasources_list", {})
                by_name = {d["name"]: d for d in r.structured_content["data"]}
                assert by_name["sales"] == {"name": "sales", "type": "sqlite", "description": "regional sales"}
                assert "hunter2" not in str(r.structured_content)

                r = await client.call_tool("datasource_describe", {"datasource": "sales"})
                tables = {t["name"]: t for t in r.structured_content["tables"]}
                assert "region_id INTEGER → region.id" in tables["sale"]["columns"], tables["sale"]

                r = await client.call_tool("sql_query", {"datasource": "sales", "sql": "SELECT r.name, SUM(s.amount) FROM sale s JOIN region r ON r.id = s.region_id GROUP BY r.name ORDER BY r.name"})
                assert not r.is_error, r.content
                assert r.structured_content["rows"] == [["North", 15.5], ["South", 7.25]]

                # The app's own tables are not reachable through another datasource, nor its tables through main.
                r = await client.call_tool("sql_query", {"datasource": "sales", "sql": "SELECT * FROM Album"})
                assert r.is_error and "not in this datasource" in r.content[0].text
                r = await client.call_tool("sql_query", {"datasource": "main", "sql": "SELECT * FROM sale"})
                assert r.is_error and "not in this datasource" in r.content[0].text
                r = await client.call_tool("sql_query", {"datasource": "nope", "sql": "SELECT 1"})
                assert r.is_error and "no datasource 'nope'" in r.content[0].text
                # An unreachable PostgreSQL datasource answers with an error, not a hang.
                started = time.monotonic()
                r = await client.call_tool("sql_query", {"datasource": "warehouse", "sql": "SELECT 1"})
                assert r.is_error and "PostgreSQL datasource" in r.content[0].text, r.content
                assert time.monotonic() - started < 25
        run(go())

        # A table created after the schema was read is found on a later query (the schema is read again).
        db = sqlite3.connect(external)
        db.executescript("CREATE TABLE target (region_id INTEGER, goal REAL); INSERT INTO target VALUES (1, 20.0);")
        db.commit()
        db.close()
        time.sleep(5.2)

        async def later():
            async with connect(server, "auto") as client:
                r = await client.call_tool("sql_query", {"datasource": "sales", "sql": "SELECT goal FROM target"})
                assert not r.is_error, r.content
                assert r.structured_content["rows"] == [[20.0]]
        run(later())
        before = external.read_bytes()
        run_cli("datasource", "remove", "sales", data_dir=server.data_dir)
        assert external.read_bytes() == before, "the datasource file is only ever read"
        assert "sales" not in run_cli("datasource", "list", data_dir=server.data_dir).stdout

        async def removed():
            async with connect(server, "auto") as client:
                r = await client.call_tool("sql_query", {"datasource": "sales", "sql": "SELECT * FROM region"})
                assert r.is_error and "no datasource 'sales'" in r.content[0].text, r.content
        run(removed())

        # A relative path is resolved where the command runs.
        relative = run_cli("datasource", "add", "--name", "rel", "--sqlite", external.name, data_dir=server.data_dir, check=False)
        assert relative.returncode != 0, "the file is not in the test's working directory"
        cwd = os.getcwd()
        os.chdir(tmp_path)
        try:
            run_cli("datasource", "add", "--name", "rel", "--sqlite", external.name, data_dir=server.data_dir)
        finally:
            os.chdir(cwd)
        assert f"rel\tsqlite\t{external}" in run_cli("datasource", "list", data_dir=server.data_dir).stdout
    finally:
        server.stop()


def test_a_key_without_read_datasource_does_not_see_the_ask_tools(server):
    key = server.new_key(scopes="read:data")

    async def go():
        async with connect(server, "auto", key=key, url=server.mcp + "?packages=data,schema,ask") as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert not (ASK_TOOLS & names)
            assert "resource_list" in names
    run(go())


def test_another_apps_main_datasource_sees_only_its_own_collections(server):
    server.cli("app", "create", "eu", "--admin", "admin")

    async def go():
        async with connect(server, "auto", key=server.new_key(app="eu"), url=f"{server.base}/api/__app/eu/mcp") as client:
            r = await client.call_tool("datasource_describe", {})
            assert not r.is_error, r.content
            assert r.structured_content["tables"] == [], "app eu has no collections of its own"
            r = await client.call_tool("sql_query", {"sql": "SELECT count(*) FROM Album"})
            assert r.is_error and "not in this datasource" in r.content[0].text, r.content
    run(go())


def test_a_slow_query_stops_when_its_call_is_cancelled(server):
    """notifications/cancelled stops the statement itself (SQLite's interrupt, PostgreSQL's
    pg_cancel_backend), so the call is answered at once instead of at the 10 s query limit."""
    import threading

    from mcp_http import initialize

    slow = "SELECT count(*) FROM Track a, Track b, Track c"  # 4 × 10^10 rows
    with server.http() as c:
        session, _ = initialize(c, server.mcp)
        headers = {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
        answer = {}

        def call():
            started = time.time()
            r = c.post(server.mcp, headers=headers, json={
                "jsonrpc": "2.0", "id": "slow", "method": "tools/call", "params": {"name": "sql_query", "arguments": {"sql": slow}}})
            answer["seconds"], answer["body"] = time.time() - started, r.json()

        runner = threading.Thread(target=call)
        runner.start()
        time.sleep(1.0)
        r = c.post(server.mcp, headers=headers, json={"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "slow"}})
        assert r.status_code == 202
        runner.join(30)
        assert answer["body"].get("error", {}).get("code") == -32800, answer["body"]
        assert answer["seconds"] < 4, f"the call ran {answer['seconds']:.1f} s after being cancelled at 1 s"
        # The server is not left busy: the next query answers at once.
        r = c.post(server.mcp, headers=headers, json={
            "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "sql_query", "arguments": {"sql": "SELECT count(*) FROM Genre"}}})
        assert r.json()["result"]["structuredContent"]["rows"] == [[25]], r.text

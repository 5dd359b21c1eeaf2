"""A MySQL / MariaDB datasource: a throwaway MariaDB server (Debian's mariadb-server, started by Tests/mysql_server.sh on
a free loopback port) loaded with Chinook; registered with `portico datasource add --mysql`, described, queried with
SQL, asked in plain language by the built-in engine, and attacked through the guard with MySQL's own tricks."""

from __future__ import annotations

import asyncio
import tempfile
import time

import pytest
from conftest import start_server, throwaway_server
from test_official_client import connect


@pytest.fixture(scope="module")
def mariadb():
    with throwaway_server("mysql_server.sh", "portico-mariadb-") as directory:
        yield (directory / "url").read_text().strip()


@pytest.fixture(scope="module")
def s(mariadb):
    # The engine's readings on MySQL against SQLite's, run at once (not first shown, the default).
    server = start_server("--query-timeout", "3", "--no-ask-sure-only", data_dir=tempfile.mkdtemp(prefix="portico-mysqlds-"))
    server.cli("datasource", "add", "--name", "shop", "--mysql", mariadb, "--description", "Chinook on MariaDB")
    yield server
    server.stop()


def run(coro):
    return asyncio.run(coro)


def call(server, name: str, arguments: dict):
    async def go():
        async with connect(server, "auto") as client:
            return await client.call_tool(name, arguments)

    return run(go())


def test_registered_listed_and_described_without_revealing_the_password(s, mariadb):
    password = mariadb.split(":")[2].split("@")[0]
    listed = s.cli("datasource", "list").stdout
    assert "shop\tmysql\tmysql://portico:***@127.0.0.1:" in listed and password not in listed
    sources = call(s, "datasources_list", {}).structured_content["data"]
    assert {"name": "shop", "type": "mysql", "description": "Chinook on MariaDB"} in sources
    described = call(s, "datasource_describe", {"datasource": "shop", "tables": ["Artist", "Album", "Track"]})
    assert password not in str(described.content)
    info = described.structured_content
    assert info["dialect"] == "mysql"
    tables = {t["name"]: t for t in info["tables"]}
    assert set(tables) == {"Artist", "Album", "Track"}
    text = str(described.structured_content)
    # Comments on tables and columns come with the schema; keys point at their tables.
    assert "The artists whose albums are sold" in text and "milliseconds" in text.lower()
    assert "Artist" in str(tables["Album"])


def test_sql_in_mysqls_own_dialect_runs_read_only(s):
    r = call(s, "sql_query", {"datasource": "shop", "sql": "SELECT COUNT(*) AS n FROM `Track`"})
    assert not r.is_error, r.content
    assert r.structured_content["rows"] == [[3503]]
    r = call(s, "sql_query", {"datasource": "shop", "sql": 'SELECT `Name` FROM Artist WHERE Name = "AC/DC" # MySQL comment'})
    assert r.structured_content["rows"] == [["AC/DC"]]
    r = call(s, "sql_query", {"datasource": "shop", "sql": "SELECT DATE_FORMAT(InvoiceDate, '%Y') AS y, ROUND(SUM(Total), 2) AS total FROM Invoice GROUP BY y ORDER BY y"})
    rows = r.structured_content["rows"]
    assert len(rows) == 5 and abs(sum(row[1] for row in rows) - 2328.60) < 0.01
    # The row cap holds on the server (sql_select_limit) and the answer says it was cut.
    r = call(s, "sql_query", {"datasource": "shop", "sql": "SELECT * FROM Track"})
    assert r.structured_content["truncated"] is True and len(r.structured_content["rows"]) == 1000
    # A value with a backslash and a quote survives the trip.
    r = call(s, "sql_query", {"datasource": "shop", "sql": "SELECT 'it\\'s a \\\\ back' AS v"})
    assert r.structured_content["rows"] == [["it's a \\ back"]]


@pytest.mark.parametrize("sql,expected", [
    ("SELECT 1 /*!50000 UNION SELECT User FROM mysql.user */", "executable comments"),
    ("SELECT Total --1 UNION SELECT authentication_string FROM mysql.user\nFROM Invoice", "outside the datasource"),
    ("SELECT Name FROM Artist INTO OUTFILE '/tmp/portico-pwned'", "INTO"),
    ("SELECT LOAD_FILE('/etc/passwd')", "LOAD"),
    ("SELECT SLEEP(10)", "SLEEP"),
    ("SELECT BENCHMARK(100000000, MD5('x'))", "BENCHMARK"),
    ("SELECT @@version", "variables"),
    ("SELECT 1; DELETE FROM Artist", "one statement"),
    ("SELECT * FROM Artist FOR UPDATE", "row locks"),
    ("SELECT * FROM mysql.user", "outside the datasource"),
    ("SELECT * FROM information_schema.TABLES", "own"),
    # The datasource's account, named without USER()'s parentheses (issue 54).
    ("SELECT current_user", "names the database account"),
    ("SELECT session_user, system_user", "names the database account"),
])
def test_mysqls_attacks_are_refused_before_they_run(s, sql, expected):
    r = call(s, "sql_query", {"datasource": "shop", "sql": sql})
    assert r.is_error and expected in r.content[0].text, r.content[0].text


def test_a_runaway_query_is_stopped_on_the_server(s):
    started = time.time()
    r = call(s, "sql_query", {"datasource": "shop", "sql": "SELECT COUNT(*) FROM Track a, Track b, Track c"})
    elapsed = time.time() - started
    assert r.is_error and "time limit" in r.content[0].text, r.content[0].text
    assert elapsed < 15
    # The datasource still answers afterwards.
    assert call(s, "sql_query", {"datasource": "shop", "sql": "SELECT COUNT(*) FROM Album"}).structured_content["rows"] == [[347]]


def test_cancelling_a_task_kills_its_query_on_the_server(s, mariadb):
    """A query that became a task (the MCP tasks extension) and is cancelled is stopped with KILL QUERY, before
    its time limit would have stopped it."""
    import re
    import subprocess

    from mcp_http import modern_request, post

    user, password, host, port = re.match(r"mysql://([^:]+):([^@]+)@([^:]+):(\d+)/", mariadb).groups()

    def running() -> int:
        out = subprocess.run(["mariadb", "-h", host, "-P", port, "-u", user, f"-p{password}", "-N", "-e",
                              "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE COMMAND = 'Query' AND INFO LIKE '%Track c%' "
                              "AND INFO NOT LIKE '%PROCESSLIST%'"], capture_output=True, text=True, check=True)
        return int(out.stdout.strip())

    def send(method: str, params: dict) -> dict:
        body, headers = modern_request(method, params, meta_extra={
            "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}})
        with s.http() as c:
            return post(c, s.mcp + "?packages=ask", body, headers).json()["result"]

    created = send("tools/call", {"name": "sql_query", "arguments": {"datasource": "shop", "sql": "SELECT COUNT(*) FROM Track a, Track b, Track c"}})
    assert created["resultType"] == "task", created
    assert running() == 1
    send("tasks/cancel", {"taskId": created["taskId"]})
    cancelled_at = time.time()
    while running():
        assert time.time() - cancelled_at < 1, "KILL QUERY stopped the statement well before its 3 s limit"
        time.sleep(0.05)
    assert send("tasks/get", {"taskId": created["taskId"]})["status"] == "cancelled"


QUESTIONS = [
    "How many tracks are in each genre?",
    "How many customers are there in each country?",
    "How many albums does each artist have?",
    "What is the total of the invoices in each billing country?",
]


@pytest.mark.parametrize("question", QUESTIONS)
def test_the_built_in_engine_answers_on_mysql_as_it_does_on_sqlite(s, question):
    on_mysql = call(s, "ask", {"question": question, "datasource": "shop", "model": "builtin"})
    assert not on_mysql.is_error, on_mysql.content[0].text
    on_sqlite = call(s, "ask", {"question": question, "datasource": "main", "model": "builtin"})
    assert not on_sqlite.is_error, on_sqlite.content[0].text
    mysql_answer, sqlite_answer = on_mysql.structured_content, on_sqlite.structured_content
    assert "`" in mysql_answer["sql"] and '"' not in mysql_answer["sql"], "MySQL's quoting"

    def normal(rows):
        return sorted(tuple(round(v, 2) if isinstance(v, float) else v for v in row) for row in rows)

    assert normal(mysql_answer["rows"]) == normal(sqlite_answer["rows"])


def test_a_term_is_checked_and_used_on_mysql(s):
    r = call(s, "terms_create", {"datasource": "shop", "term": "line amount", "expression": {"table": "InvoiceLine", "sql": "UnitPrice * Quantity"}})
    assert not r.is_error, r.content[0].text
    answer = call(s, "ask", {"question": "What is the total line amount?", "datasource": "shop", "model": "builtin"})
    assert not answer.is_error, answer.content[0].text
    assert "`UnitPrice` * " in answer.structured_content["sql"] and abs(answer.structured_content["rows"][0][0] - 2328.60) < 0.01
    bad = call(s, "terms_create", {"datasource": "shop", "term": "nap", "expression": {"table": "InvoiceLine", "sql": "SLEEP(5)"}})
    assert bad.is_error and "SLEEP" in bad.content[0].text

"""SQL from outside, as an attacker writes it, against the real binary on both backends: a role
that sees part of a table reads only that part however the SQL names the table; one call cannot
outlive the query limits, pile up memory, take every datasource connection from other callers,
or keep the server from stopping."""

from __future__ import annotations

import json
import signal
import sqlite3
import threading
import time
from pathlib import Path

import httpx2
import pytest
from conftest import BACKEND, start_server
from mcp_http import modern_request, post

SHARED = Path(__file__).resolve().parents[3] / "shared"


def call(server, key: str, tool: str, arguments: dict, timeout: float = 60) -> tuple[bool, dict | None, str]:
    """One tools/call in the modern era: (is_error, structuredContent, text)."""
    body, headers = modern_request("tools/call", {"name": tool, "arguments": arguments})
    with httpx2.Client(headers={"Authorization": f"Bearer {key}"}, timeout=timeout) as c:
        r = post(c, f"{server.mcp}?packages=data,acl,ask,users", body, headers)
    assert r.status_code == 200, r.text
    result = r.json()["result"]
    text = " ".join(c.get("text", "") for c in result.get("content", []))
    return bool(result.get("isError")), result.get("structuredContent"), text


def ok(server, key, tool, arguments) -> dict:
    is_error, structured, text = call(server, key, tool, arguments)
    assert not is_error, f"{tool} {arguments}: {text}"
    return structured


def refused(server, key, tool, arguments) -> str:
    is_error, _, text = call(server, key, tool, arguments)
    assert is_error, f"{tool} {arguments} was answered: {text}"
    return text


def peak_rss_mib(server) -> float:
    for line in Path(f"/proc/{server.process.pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


@pytest.fixture(scope="module")
def s(tmp_path_factory):
    """Chinook in main, the same Chinook as an external SQLite datasource `lite`, and a custom role
    that sees the names and countries of German customers only, and no employees."""
    lite = tmp_path_factory.mktemp("lite") / "chinook.sqlite"
    db = sqlite3.connect(lite)
    db.executescript((SHARED / "datasets" / "chinook" / "Chinook_Sqlite.sql").read_text(encoding="utf-8-sig"))
    db.close()
    server = start_server("--query-timeout", "3", "--query-memory-mb", "32")
    server.cli("datasource", "add", "--name", "lite", "--sqlite", str(lite))
    admin = server.api_key
    server.cli("user", "create", "gina", "--role", "viewer")
    ok(server, admin, "roles_create", {"name": "german", "title": "German customers"})
    ok(server, admin, "roles_set_permissions", {"role": "german", "collection": "Customer", "actions": {
        "list": {"fields": ["FirstName", "LastName", "Country"], "filter": {"Country": "Germany"}},
        "query": {"fields": ["FirstName", "LastName", "Country"], "filter": {"Country": "Germany"}},
    }})
    ok(server, admin, "roles_set_permissions", {"role": "german", "collection": "Invoice", "actions": {"list": {}, "query": {}}})
    ok(server, admin, "users_set_roles", {"user": "gina", "roles": ["german"]})
    yield {"server": server, "admin": admin, "gina": server.new_key("gina")}
    server.stop()


def count(server, key, sql, datasource="main") -> int:
    rows = ok(server, key, "sql_query", {"sql": sql, "datasource": datasource})["rows"]
    return rows[0][0]


def test_a_quoted_or_parenthesised_table_name_reads_the_roles_view(s):
    server, admin, gina = s["server"], s["admin"], s["gina"]
    q = (lambda name: f'"{name}"') if BACKEND == "postgres" else (lambda name: name)
    german = count(server, admin, f"SELECT count(*) FROM {q('Customer')} WHERE {q('Country')} = 'Germany'")
    everyone = count(server, admin, f"SELECT count(*) FROM {q('Customer')}")
    assert 0 < german < everyone
    if BACKEND == "sqlite":
        shapes = [
            "SELECT count(*) FROM 'Customer'",
            "SELECT count(*) FROM 'main'.Customer",
            "SELECT count(*) FROM main.'Customer'",
            "SELECT count(*) FROM (Customer)",
            "SELECT count(*) FROM Invoice i JOIN 'Customer' c ON c.CustomerId = i.CustomerId WHERE i.InvoiceId = (SELECT min(InvoiceId) FROM Invoice WHERE CustomerId = c.CustomerId)",
        ]
        hidden = ["SELECT Phone FROM 'Customer'", "SELECT count(*) FROM 'Employee'", "SELECT count(*) FROM (Employee)", "SELECT 1 WHERE 1 IN Employee"]
    else:
        shapes = [
            'SELECT count(*) FROM "Customer"',
            'SELECT count(*) FROM public."Customer"',
            'SELECT count(*) FROM ONLY "Customer"',
            'SELECT count(*) FROM ("Invoice" i JOIN "Customer" c ON c."CustomerId" = i."CustomerId") WHERE i."InvoiceId" = '
            '(SELECT min("InvoiceId") FROM "Invoice" WHERE "CustomerId" = c."CustomerId")',
        ]
        hidden = [
            'SELECT "Phone" FROM "Customer"', 'SELECT count(*) FROM ("Employee" e JOIN "Invoice" i ON true)',
            'SELECT count(*) FROM (U&"\\0070ortico_users" JOIN "Invoice" ON true)',
        ]
    for sql in shapes:
        assert count(server, gina, sql) == german, sql
    for sql in hidden:
        refused(server, gina, "sql_query", {"sql": sql})
    # The same through `ask`'s guard and SQLBot's: the employees stay hidden.
    text = refused(server, gina, "sql_query", {"sql": "SELECT count(*) FROM " + ("'Employee'" if BACKEND == "sqlite" else '"Employee"')})
    assert "Employee" in text


def test_a_quadratic_function_call_answers_at_once(s):
    server, gina = s["server"], s["gina"]
    started = time.monotonic()
    # SQLite's own instr() took minutes on these; the statement limit could not stop it.
    for sql in [
        "SELECT instr(printf('%.*c', 16000000, 'a'), printf('%.*c', 8000000, 'a') || 'b')",
        "SELECT instr(printf('%.*c', 4000000, 'a'), printf('%.*c', 2000000, 'a') || 'b')",
        "SELECT length(replace(printf('%.*c', 4000000, 'a'), printf('%.*c', 2000000, 'a') || 'b', 'c'))",
        "SELECT length(trim(printf('%.*c', 1000000, 'a'), printf('%.*c', 60000, 'b') || 'c'))",
    ]:
        call(server, gina, "sql_query", {"sql": sql, "datasource": "lite"})
    assert time.monotonic() - started < 10
    # A width no value can have is refused, not looped over for seconds.
    started = time.monotonic()
    text = refused(server, gina, "sql_query", {"sql": "SELECT printf('%.*c', 2147483647, 'x')", "datasource": "lite"})
    assert "width or precision" in text
    assert time.monotonic() - started < 3


def test_a_query_that_piles_up_memory_is_stopped_at_its_cap(s):
    server, gina = s["server"], s["gina"]
    before = peak_rss_mib(server)
    text = refused(server, gina, "sql_query", {
        "sql": "SELECT length(json_group_array(a.Name || b.Name)) FROM Track a, Track b", "datasource": "lite"})
    assert "memory" in text or "time limit" in text, text
    grown = peak_rss_mib(server) - before
    assert grown < 150, f"the server's peak memory grew by {grown:.0f} MiB"
    assert count(server, gina, "SELECT count(*) FROM Track", "lite") == 3503
    if BACKEND == "postgres":
        # A value PostgreSQL builds is refused on the server, not read into Portico's memory.
        text = refused(server, gina, "sql_query", {"sql": "SELECT lpad('', 200000000, 'x') AS huge"})
        assert "larger than a query may return" in text or "time limit" in text, text
        grown = peak_rss_mib(server) - before
        assert grown < 150, f"the server's peak memory grew by {grown:.0f} MiB"


@pytest.mark.parametrize("datasource", ["lite", "main"])
def test_one_callers_slow_queries_leave_a_connection_for_others(s, datasource):
    server, gina, admin = s["server"], s["gina"], s["admin"]
    slow = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT count(*) FROM n"
    outcomes: list[str] = []

    def hog():
        outcomes.append(call(server, gina, "sql_query", {"sql": slow, "datasource": datasource})[2])

    # More slow queries than the datasource has connections, all from one caller.
    hogs = [threading.Thread(target=hog) for _ in range(4)]
    for t in hogs:
        t.start()
    time.sleep(0.7)
    started = time.monotonic()
    q = '"Genre"' if datasource == "main" and BACKEND == "postgres" else "Genre"
    assert count(server, admin, f"SELECT count(*) FROM {q}", datasource) == 25
    assert time.monotonic() - started < 2, "another caller's query waited for the slow ones"
    for t in hogs:
        t.join()
    assert all("time limit" in o for o in outcomes), outcomes


def test_sigterm_stops_the_server_while_an_attack_runs(tmp_path):
    lite = tmp_path / "chinook.sqlite"
    db = sqlite3.connect(lite)
    db.executescript((SHARED / "datasets" / "chinook" / "Chinook_Sqlite.sql").read_text(encoding="utf-8-sig"))
    db.close()
    server = start_server("--query-timeout", "60")
    try:
        server.cli("datasource", "add", "--name", "lite", "--sqlite", str(lite))
        key = server.api_key

        def attack(sql):
            try:
                call(server, key, "sql_query", {"sql": sql, "datasource": "lite"}, timeout=90)
            except Exception:
                pass  # the server goes away under it

        for sql in ["SELECT instr(printf('%.*c', 4000000, 'a'), printf('%.*c', 2000000, 'a') || 'b')",
                    "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT count(*) FROM n"]:
            threading.Thread(target=attack, args=(sql,), daemon=True).start()
        time.sleep(1)
        started = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        server.process.wait(timeout=15)
        assert time.monotonic() - started < 12
    finally:
        server.stop(signal.SIGKILL)

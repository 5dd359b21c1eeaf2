"""Apps as databases: an app other than `main` keeps its collections in a database of its own (a
file on SQLite, a schema on PostgreSQL). Driven with the official MCP client against the real
binary, with the command line beside it, on either backend."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path

import httpx2
import pytest
from conftest import BACKEND, database_url, start_server, store_rows
from test_official_client import connect


def run(coro):
    return asyncio.run(coro)


@pytest.fixture(scope="module")
def instance():
    s = start_server()
    assert s.api_key, s.banner
    yield s
    s.stop()


def in_app_database(server, app: str, sql_sqlite: str, sql_postgres: str) -> list[tuple]:
    """Rows read straight from the app's own database, behind Portico's back."""
    if BACKEND == "postgres":
        import subprocess

        out = subprocess.run(
            ["psql", database_url(server.data_dir), "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-c", sql_postgres],
            check=True, capture_output=True, text=True,
        ).stdout
        return [tuple(line.split("|")) for line in out.splitlines() if line]
    db = sqlite3.connect(f"file:{Path(server.data_dir) / 'apps' / f'{app}.sqlite'}?mode=ro", uri=True)
    try:
        return [tuple(str(v) for v in row) for row in db.execute(sql_sqlite).fetchall()]
    finally:
        db.close()


def test_an_app_keeps_its_collections_in_its_own_database(instance):
    created = instance.cli("app", "create", "sales", "--demo", "--admin", "admin")
    assert "/api/__app/sales/mcp" in created.stdout
    sales = f"{instance.base}/api/__app/sales/mcp"
    sales_key = instance.new_key(app="sales")
    # A key opens the endpoint of its own app only, both ways.
    for url, key in [(sales, instance.api_key), (instance.mcp, sales_key)]:
        r = httpx2.post(url, headers={"Authorization": f"Bearer {key}", "Accept": "application/json, text/event-stream"},
                        json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert r.status_code == 401 and "is for app" in r.text, r.text

    async def go():
        async with connect(instance, "auto", key=sales_key, url=sales) as client:
            r = await client.call_tool("resource_list", {"resource": "Album", "pageSize": 1})
            assert not r.is_error, r.content
            assert r.structured_content["meta"]["count"] == 347, "the new app has the whole sample"
            r = await client.call_tool("resource_update", {"resource": "Album", "filterByTk": 1, "values": {"Title": "Only in sales"}})
            assert not r.is_error, r.content
            r = await client.call_tool("resource_create", {"resource": "Artist", "values": {"Name": "A sales artist"}})
            assert not r.is_error, r.content
            # The app's own datasource reads its own rows, not main's.
            r = await client.call_tool("sql_query", {"sql": "SELECT Title FROM Album WHERE AlbumId = 1"})
            assert not r.is_error, r.content
            assert r.structured_content["rows"] == [["Only in sales"]]
            if BACKEND == "postgres":
                # Only its own schema may be named: not main's (public), not Portico's tables.
                for sql in ('SELECT "Title" FROM public."Album"', "SELECT * FROM public.portico_users"):
                    r = await client.call_tool("sql_query", {"sql": sql})
                    assert r.is_error and "outside the datasource" in r.content[0].text, (sql, r.content)
                r = await client.call_tool("sql_query", {"sql": 'SELECT "Title" FROM app_sales."Album" WHERE "AlbumId" = 1'})
                assert r.structured_content["rows"] == [["Only in sales"]], r.content
        async with connect(instance, "auto") as client:
            r = await client.call_tool("resource_get", {"resource": "Album", "filterByTk": 1})
            assert r.structured_content["data"]["Title"] == "For Those About To Rock We Salute You", "main's row is untouched"
            r = await client.call_tool("resource_list", {"resource": "Artist", "filter": {"Name": "A sales artist"}})
            assert r.structured_content["data"] == []
    run(go())

    # Behind Portico's back: the row is in the app's database, and main's tables are where they were.
    assert in_app_database(
        instance, "sales", "SELECT Title FROM Album WHERE AlbumId = 1", 'SELECT "Title" FROM app_sales."Album" WHERE "AlbumId" = 1'
    ) == [("Only in sales",)]
    assert store_rows(instance.data_dir, "SELECT Title FROM Album WHERE AlbumId = 1", 'SELECT "Title" FROM "Album" WHERE "AlbumId" = 1') == [
        ("For Those About To Rock We Salute You",)
    ]
    if BACKEND == "sqlite":
        names = {r[0] for r in store_rows(instance.data_dir, "SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert "Album" in names and "portico_users" in names
        app_names = {r[0] for r in in_app_database(instance, "sales", "SELECT name FROM sqlite_master WHERE type = 'table'", "")}
        own = ("portico_collections", "portico_fields", "portico_audit_batches", "portico_terms", "portico_examples", "portico_instructions", "portico_semantic",
               "portico_workflows", "portico_executions", "portico_jobs", "portico_workflow_ticks", "portico_tasks")
        assert "Album" in app_names and not any(n.startswith("portico_") and n not in own for n in app_names), app_names
        assert (Path(instance.data_dir) / "apps" / "sales.sqlite").stat().st_mode & 0o077 == 0, "the app's file is its owner's alone"


def test_removing_an_app_needs_force_while_it_has_members_and_drops_its_database(instance):
    instance.cli("app", "create", "tmp", "--demo", "--admin", "admin")
    tmp = f"{instance.base}/api/__app/tmp/mcp"
    tmp_key = instance.new_key(app="tmp")

    async def touch():
        async with connect(instance, "auto", key=tmp_key, url=tmp) as client:
            r = await client.call_tool("resource_list", {"resource": "Genre", "pageSize": 1})
            assert not r.is_error, r.content
    run(touch())

    refused = instance.cli("app", "remove", "tmp", check=False)
    assert refused.returncode != 0 and "--force" in refused.stderr and "1 member" in refused.stderr, refused.stderr
    assert "tmp" in instance.cli("app", "list").stdout.split()
    main_refused = instance.cli("app", "remove", "main", check=False)
    assert main_refused.returncode != 0 and "always exists" in main_refused.stderr

    instance.cli("app", "remove", "tmp", "--force")
    assert "tmp" not in instance.cli("app", "list").stdout.split()
    if BACKEND == "sqlite":
        assert not (Path(instance.data_dir) / "apps" / "tmp.sqlite").exists()
    else:
        assert in_app_database(instance, "tmp", "", "SELECT schema_name FROM information_schema.schemata WHERE schema_name = 'app_tmp'") == []
    # The running server stops serving it once it hears of the change (its app list lives 5 s at most).
    deadline = time.time() + 10
    status = None
    while time.time() < deadline:
        status = httpx2.post(
            tmp, headers={"Authorization": f"Bearer {tmp_key}", "Accept": "application/json, text/event-stream"},
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
        ).status_code
        if status == 404:
            break
        time.sleep(0.25)
    assert status == 404

    # Made again under the same name, it is a new, empty app: the running server let go of the
    # database it had open (the old file or schema) and of its catalog.
    instance.cli("app", "create", "tmp", "--admin", "admin")
    new_key = instance.new_key(app="tmp")
    deadline = time.time() + 10
    while time.time() < deadline and status != 200:
        status = httpx2.post(
            tmp, headers={"Authorization": f"Bearer {new_key}", "Accept": "application/json, text/event-stream"},
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
        ).status_code
        time.sleep(0.25)
    assert status == 200
    # The old app's key went with it: the new app does not honour it.
    old = httpx2.post(tmp, headers={"Authorization": f"Bearer {tmp_key}", "Accept": "application/json, text/event-stream"},
                      json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert old.status_code == 401 and "revoked" in old.text, old.text

    async def empty():
        async with connect(instance, "auto", key=new_key, url=tmp) as client:
            r = await client.call_tool("resource_list", {"resource": "Genre"})
            assert r.is_error and "Genre" in r.content[0].text, r.content
            r = await client.call_tool("datasource_describe", {})
            assert not r.is_error and r.structured_content["tables"] == [], r.content
    run(empty())


def test_an_apps_administrator_restricts_the_packages_its_endpoint_offers(instance):
    def tools(url, key, packages=None):
        headers = {"Authorization": f"Bearer {key}", "Accept": "application/json, text/event-stream"}
        if packages:
            headers["x-mcp-packages"] = packages
        r = httpx2.post(url, headers=headers, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        return r.status_code, r.json()

    def call(url, key, name, arguments):
        r = httpx2.post(url, headers={"Authorization": f"Bearer {key}", "Accept": "application/json, text/event-stream", "x-mcp-packages": "acl"},
                        json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}})
        return r.json()["result"]

    instance.cli("app", "create", "kiosk", "--packages", "data,ask", "--admin", "admin")
    kiosk, key = f"{instance.base}/api/__app/kiosk/mcp", instance.new_key(app="kiosk")
    status, body = tools(kiosk, key)
    search = next(t for t in body["result"]["tools"] if t["name"] == "tools_search")
    assert "data:" in search["description"] and "ask:" in search["description"] and "schema:" not in search["description"]
    status, body = tools(kiosk, key, "data,ask")
    names = {t["name"] for t in body["result"]["tools"]}
    assert "resource_list" in names and "sql_query" in names and not any(n.startswith("collections_") for n in names)
    status, body = tools(kiosk, key, "schema")
    assert status == 400 and "does not offer package 'schema'" in body["error"]["message"]
    status, body = tools(kiosk, key, "*")
    assert status == 200 and {t["name"] for t in body["result"]["tools"]} == names, "a wildcard narrows to what is offered"
    assert "kiosk\tpackages: data,ask" in instance.cli("app", "list").stdout

    # The app's administrator narrows another app from its own endpoint, and opens it again.
    instance.cli("app", "create", "ops", "--admin", "admin")
    ops, ops_key = f"{instance.base}/api/__app/ops/mcp", instance.new_key(app="ops")
    assert call(ops, ops_key, "app_packages_set", {"packages": ["data", "acl"]})["structuredContent"]["data"]["packages"] == ["data", "acl"]
    deadline = time.time() + 10
    while time.time() < deadline:  # every replica's app list lives 5 s at most
        status, body = tools(ops, ops_key)
        if not any(t["name"] == "ask" for t in body["result"]["tools"]):
            break
        time.sleep(0.25)
    names = {t["name"] for t in body["result"]["tools"]}
    assert "resource_list" in names and "ask" not in names and "collections_list" not in names
    assert "ask" not in {t["name"] for t in tools(ops, ops_key, "data,acl")[1]["result"]["tools"]}
    assert "unknown package 'nope'" in call(ops, ops_key, "app_packages_set", {"packages": ["nope"]})["content"][0]["text"]
    assert call(ops, ops_key, "app_packages_set", {"packages": None})["structuredContent"]["data"]["restricted"] is False
    assert "does not offer" not in instance.cli("app", "packages", "ops").stdout and "(all)" in instance.cli("app", "packages", "ops").stdout


def test_app_names_are_lower_case_ascii(instance):
    # A name that is not lower-case ASCII was created but its endpoint could never be reached.
    for bad in ["Sales", "café", "-lead", "a b", "x" * 65, "ümlaut"]:
        r = instance.cli("app", "create", bad, check=False)
        assert r.returncode != 0 and "lower-case ASCII" in r.stderr, (bad, r.stdout, r.stderr)
    listed = instance.cli("app", "list").stdout.split()
    assert not {"Sales", "café", "ümlaut"} & set(listed)
    instance.cli("app", "create", "eu-2_north")
    r = httpx2.post(f"{instance.base}/api/__app/eu-2_north/mcp", headers={"Authorization": f"Bearer {instance.api_key}", "Accept": "application/json, text/event-stream"},
                    json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert r.status_code == 401 and "is for app" in r.text, "the endpoint exists (main's key is refused there)"

"""The lean first tool list (PRODUCT.md, "The first tool list"): without x-mcp-packages or
?packages=, `tools/list` is at most 8,000 bytes for any caller, and `tools_search` reaches every
tool the caller may use in the app's packages, each callable by name at once. With the official
client in both eras, and raw JSON-RPC for the bytes on the wire."""

from __future__ import annotations

import asyncio
import json

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientInfo": {"name": "first-list-test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}}
BUDGET = 8000


def run(coro):
    return asyncio.run(coro)


def connect(server, mode: str, key: str, headers: dict | None = None, url: str | None = None) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}", **(headers or {})}, timeout=30)
    return Client(streamable_http_client(url or server.mcp, http_client=http), mode=mode)


def raw(server, key: str, method: str, params: dict | None = None, query: str = "", headers: dict | None = None) -> httpx2.Response:
    """One 2026-07-28 request, its body kept as bytes."""
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**(params or {}), "_meta": META}}
    extra = {"Mcp-Method": method, **({"Mcp-Name": params["name"]} if params and "name" in params else {}), **(headers or {})}
    with server.http(key, headers={"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": MODERN, **extra}) as http:
        return http.post(server.mcp + query, json=body)


@pytest.fixture(scope="module")
def viewer_key(server):
    server.cli("user", "create", "first-list-viewer", "--role", "viewer")
    return server.new_key(user="first-list-viewer")


def test_the_first_list_is_under_8000_bytes_for_an_admin_and_a_viewer(server, viewer_key):
    for key, who in [(server.api_key, "admin"), (viewer_key, "viewer"), (server.new_key(scopes="read:data"), "read:data only")]:
        r = raw(server, key, "tools/list")
        assert r.status_code == 200
        assert len(r.content) <= BUDGET, f"{who}: {len(r.content)} bytes"
        names = [t["name"] for t in r.json()["result"]["tools"]]
        assert names[0] == "tools_search", (who, names)
        assert "resource_list" in names, (who, names)
        # Nothing the caller may not use is listed (a viewer writes nothing).
        if who != "admin":
            assert not any(n.endswith(("_create", "_update", "_destroy")) for n in names), (who, names)
    admin = [t["name"] for t in raw(server, server.api_key, "tools/list").json()["result"]["tools"]]
    assert {"tools_search", "ask", "resource_list", "resource_get", "collections_list"} <= set(admin), admin
    # Naming packages lists them whole, as before, without the search.
    whole = [t["name"] for t in raw(server, server.api_key, "tools/list", query="?packages=data,schema,ask").json()["result"]["tools"]]
    assert "tools_search" not in whole and {"collections_create", "fields_destroy", "sql_query", "terms_create"} <= set(whole)
    assert len(raw(server, server.api_key, "tools/list", headers={"x-mcp-packages": "data,schema,ask"}).content) > 20000


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_a_tool_outside_the_list_is_found_and_called_in_one_step(server, mode):
    """An agent searches, then calls what it found by name: a schema tool and a users tool, in
    packages the request never named."""
    name = f"first_list_{mode}"

    async def go():
        async with connect(server, mode, server.api_key) as client:
            listed = {t.name for t in (await client.list_tools()).tools}
            assert "collections_create" not in listed and "tools_search" in listed
            found = await client.call_tool("tools_search", {"query": "create a collection"})
            assert not found.is_error, found
            tools = found.structured_content["tools"]
            assert tools[0]["name"] == "collections_create" and tools[0]["inputSchema"]["required"] == ["name"]
            assert len(tools) <= 5
            created = await client.call_tool("collections_create", {"name": name, "fields": [{"name": "title", "type": "string"}]})
            assert not created.is_error, created
            users = await client.call_tool("tools_search", {"query": "list users", "limit": 2})
            assert [t["name"] for t in users.structured_content["tools"]][0] == "get_users"
            listed_users = await client.call_tool("get_users", {"owner": "main"})
            assert not listed_users.is_error and "admin" in listed_users.content[0].text
            nothing = await client.call_tool("tools_search", {"query": "zzzz qqqq"})
            assert nothing.is_error and "by package" in nothing.content[0].text

    run(go())
    # What was created through a tool found by the search is there.
    listed = raw(server, server.api_key, "tools/call", {"name": "resource_list", "arguments": {"resource": name}}).json()["result"]
    assert listed.get("isError") is not True, listed
    removed = raw(server, server.api_key, "tools/call", {"name": "collections_destroy", "arguments": {"name": name, "confirm": True}}).json()
    assert removed["result"].get("isError") is not True, removed
    # The search's own arguments are checked like any tool's.
    missing = raw(server, server.api_key, "tools/call", {"name": "tools_search", "arguments": {"limit": 3}}).json()
    assert missing["error"]["code"] == -32602 and "query" in missing["error"]["message"], missing


def test_the_search_finds_only_what_the_caller_may_use(server, viewer_key):
    found = raw(server, viewer_key, "tools/call", {"name": "tools_search", "arguments": {"query": "delete records", "limit": 20}}).json()["result"]
    names = [t["name"] for t in found.get("structuredContent", {}).get("tools", [])]
    assert "resource_destroy" not in names and "collections_destroy" not in names, names
    # What the search does not offer, a call by name does not reach either.
    denied = raw(server, viewer_key, "tools/call", {"name": "resource_destroy", "arguments": {"resource": "Genre", "filterByTk": 1}}).json()
    assert "result" in denied and denied["result"]["isError"] is True and "viewer" in denied["result"]["content"][0]["text"]
    narrow = server.new_key(scopes="read:data")
    scoped = raw(server, narrow, "tools/call", {"name": "tools_search", "arguments": {"query": "users", "limit": 20}}).json()["result"]
    assert scoped.get("isError") is True or not any(t["name"].endswith("_user") or t["name"] == "get_users"
                                                    for t in scoped.get("structuredContent", {}).get("tools", []))


def test_an_app_that_offers_fewer_packages_is_searched_within_them(server):
    server.cli("app", "create", "first-list-app", "--admin", "admin")
    server.cli("app", "packages", "first-list-app", "--set", "data,users")
    key = server.new_key(app="first-list-app")
    url = f"{server.base}/api/__app/first-list-app/mcp"

    def call(method, params=None):
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**(params or {}), "_meta": META}}
        headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": MODERN, "Mcp-Method": method}
        if params and "name" in params:
            headers["Mcp-Name"] = params["name"]
        with server.http(key, headers=headers) as http:
            return http.post(url, json=body)

    listed = call("tools/list")
    assert listed.status_code == 200 and len(listed.content) <= BUDGET, listed.text
    search = next(t for t in listed.json()["result"]["tools"] if t["name"] == "tools_search")
    assert "users:" in search["description"] and "schema:" not in search["description"]
    found = call("tools/call", {"name": "tools_search", "arguments": {"query": "create a collection", "limit": 20}}).json()["result"]
    assert "collections_create" not in [t["name"] for t in found.get("structuredContent", {}).get("tools", [])]
    refused = call("tools/call", {"name": "collections_create", "arguments": {"name": "nope", "fields": []}}).json()
    assert "error" in refused and "collections_create" in refused["error"]["message"]


def test_a_session_loads_whole_packages_into_its_list_and_hears_that_it_changed(server, viewer_key):
    """The initialize era has sessions: `tools_load` adds packages to the session's own list and the
    client hears notifications/tools/list_changed on its stream; other sessions keep the first list."""
    from mcp_http import initialize, post

    heard = []

    async def handler(message):
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            heard.append(message)

    async def load(key: str, packages: list[str]):
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=30)
        async with Client(streamable_http_client(server.mcp, http_client=http), mode="legacy", message_handler=handler) as client:
            before = [t.name for t in (await client.list_tools()).tools]
            assert before[:2] == ["tools_search", "tools_load"], before
            await asyncio.sleep(0.3)  # the client's server-message stream is open
            loaded = await client.call_tool("tools_load", {"packages": packages})
            assert not loaded.is_error, loaded
            for _ in range(50):
                if heard:
                    break
                await asyncio.sleep(0.1)
            after = [t.name for t in (await client.list_tools()).tools]
            return before, loaded.structured_content, after

    before, loaded, after = run(load(server.api_key, ["schema"]))
    assert heard, "the client heard that its list changed"
    assert loaded["loaded"] == ["schema"] and "collections_create" in loaded["tools"]
    assert {"collections_create", "fields_update", "fields_destroy"} <= set(after) and set(before) < set(after)
    assert len(after) == len(set(after)), "no tool listed twice"

    # A viewer loads the same package and gets only what a viewer may use.
    heard.clear()
    _, viewer_loaded, viewer_after = run(load(viewer_key, ["schema", "data"]))
    assert viewer_loaded["loaded"] == ["data", "schema"]
    assert not any(n.endswith(("_create", "_update", "_destroy")) for n in viewer_loaded["tools"] + viewer_after), viewer_after

    # A new session starts from the first list again; its handshake-era list is within the budget too.
    with server.http() as c:
        session, _ = initialize(c, server.mcp)
        r = post(c, server.mcp, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"})
        assert len(r.content) <= BUDGET, len(r.content)
        names = [t["name"] for t in r.json()["result"]["tools"]]
        assert "collections_create" not in names and names[:2] == ["tools_search", "tools_load"], names
        # An unknown package is refused by the tool's schema, naming the packages that exist.
        bad = post(c, server.mcp, {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "tools_load", "arguments": {"packages": ["nope"]}}},
                   {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}).json()
        assert bad["error"]["code"] == -32602 and "schema" in json.dumps(bad["error"]), bad

    # The 2026-07-28 era has no sessions: no tools_load, the search is the way.
    modern = [t["name"] for t in raw(server, server.api_key, "tools/list").json()["result"]["tools"]]
    assert "tools_load" not in modern and modern[0] == "tools_search"

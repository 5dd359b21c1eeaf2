"""Packages, scopes and roles decide which tools a caller sees and may call."""

from __future__ import annotations

import pytest

from mcp_http import initialize, post


def tool_names(server, key="default", headers=None, url=None):
    with server.http(key=key) as c:
        r = post(c, url or server.mcp, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers)
        assert r.status_code == 200, r.text
        return [t["name"] for t in r.json()["result"]["tools"]]


def test_packages_by_header_and_query(server):
    assert tool_names(server) == ["tools_search", "ask", "resource_list", "resource_get", "collections_list"], "the first list"
    assert len(tool_names(server, headers={"x-mcp-packages": "data,schema,ask"})) == 39, "the packages the first list draws on"
    assert len(tool_names(server, headers={"x-mcp-packages": "data"})) == 6
    assert len(tool_names(server, headers={"x-mcp-packages": "@portico/data"})) == 6
    assert len(tool_names(server, headers={"x-mcp-packages": "d*"})) == 6
    assert len(tool_names(server, url=server.mcp + "?packages=data")) == 6
    with server.http() as c:
        r = post(c, server.mcp, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, {"x-mcp-packages": "nope"})
        assert r.status_code == 400
        assert "unknown package 'nope'" in r.json()["error"]["message"]
        r = post(c, server.mcp + "?packages=zzz*", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert r.status_code == 400


def test_scoped_keys_see_and_call_only_what_they_were_granted(server):
    reader = server.new_key(scopes="read:data")
    assert sorted(tool_names(server, key=reader, headers={"x-mcp-packages": "data,schema,ask"})) == ["resource_get", "resource_list", "resource_query"]
    assert tool_names(server, key=reader) == ["tools_search", "resource_list", "resource_get"], "the first list, as scoped"
    with server.http(key=reader) as c:
        r = post(c, server.mcp, {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "resource_create", "arguments": {"resource": "Genre", "values": {"Name": "x"}}}})
        assert r.status_code == 403
        assert r.json() == {"jsonrpc": "2.0", "id": 4, "error": {"code": -32001, "message": "insufficient_scope", "data": {"tool": "resource_create", "granted_scopes": ["read:data"], "required_scope": "write:data"}}}
        challenge = r.headers["www-authenticate"]
        assert 'error="insufficient_scope"' in challenge and 'scope="write:data"' in challenge and "resource_metadata=" in challenge


def test_viewer_role_reads_but_does_not_write(server):
    server.cli("user", "create", "vera", "--role", "viewer")
    key = server.new_key(user="vera")
    assert sorted(tool_names(server, key=key, headers={"x-mcp-packages": "data,schema,ask"})) == [
        "ask", "collections_get", "collections_list", "datasource_describe", "datasources_list", "examples_list", "query_metric", "resource_get",
        "resource_list", "resource_query", "semantic_model_get", "sql_explain", "sql_query", "terms_list",
    ]
    with server.http(key=key) as c:
        r = post(c, server.mcp, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "resource_destroy", "arguments": {"resource": "Genre", "filterByTk": 1}}})
        assert r.status_code == 200
        result = r.json()["result"]
        assert result["isError"] is True
        assert "role 'viewer'" in result["content"][0]["text"]


def test_revoked_and_expired_keys_stop_working(server):
    key = server.new_key()
    assert tool_names(server, key=key)
    key_id = key.split("_")[1]
    server.cli("apikey", "revoke", key_id)
    import time
    time.sleep(0.2)
    with server.http(key=key) as c:
        r = post(c, server.mcp, {"jsonrpc": "2.0", "id": 1, "method": "ping"})
        # The revoking CLI is another process: the server's short key cache may hold the key for up to 5 s.
        deadline = time.time() + 7
        while r.status_code == 200 and time.time() < deadline:
            time.sleep(0.5)
            r = post(c, server.mcp, {"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert r.status_code == 401
        assert "revoked" in r.json()["error"]["data"]


def test_tools_list_pagination():
    from conftest import start_server
    s = start_server("--tools-page-size", "5")
    named = {"x-mcp-packages": "data,schema,ask"}
    try:
        with s.http() as c:
            r = post(c, s.mcp, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, named)
            first = r.json()["result"]
            assert len(first["tools"]) == 5 and "nextCursor" in first
            r = post(c, s.mcp, {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"cursor": first["nextCursor"]}}, named)
            second = r.json()["result"]
            names = [t["name"] for t in first["tools"] + second["tools"]]
            while "nextCursor" in second:
                r = post(c, s.mcp, {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"cursor": second["nextCursor"]}}, named)
                second = r.json()["result"]
                assert 1 <= len(second["tools"]) <= 5
                names += [t["name"] for t in second["tools"]]
            assert len(names) == len(set(names)) == 39
            # The first list is one page, whatever the page size.
            first_list = post(c, s.mcp, {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}).json()["result"]
            assert len(first_list["tools"]) == 5 and "nextCursor" not in first_list
    finally:
        s.stop()


def test_only_an_apps_administrators_manage_its_workflows(server):
    workflow_tools = {"workflows_list", "workflows_get", "workflows_create", "workflows_update", "workflows_destroy", "workflows_trigger",
                      "executions_list", "executions_get", "executions_cancel"}
    headers = {"x-mcp-packages": "workflow"}
    assert set(tool_names(server, headers=headers)) == workflow_tools
    for role in ("member", "viewer"):
        server.cli("user", "create", f"wf-{role}", "--role", role)
        assert tool_names(server, key=server.new_key(user=f"wf-{role}"), headers=headers) == [], role
    reader = server.new_key(scopes="read:workflow")
    assert sorted(tool_names(server, key=reader, headers=headers)) == ["executions_get", "executions_list", "workflows_get", "workflows_list"]
    with server.http(key=reader) as c:
        call = {"name": "workflows_create", "arguments": {"title": "t", "trigger": {"type": "manual"}, "nodes": []}}
        r = post(c, server.mcp, {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": call}, headers)
        assert r.status_code == 403
        assert r.json()["error"]["data"]["required_scope"] == "write:workflow"
    member = server.new_key(user="wf-member")
    with server.http(key=member) as c:
        r = post(c, server.mcp, {"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "workflows_list", "arguments": {}}}, headers)
        assert r.status_code == 200 and r.json()["result"]["isError"] is True
        assert "role 'member'" in r.json()["result"]["content"][0]["text"]

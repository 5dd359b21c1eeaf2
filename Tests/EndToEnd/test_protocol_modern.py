"""The 2026-07-28 era over raw HTTP: discovery, the per-request envelope and its header checks, error codes and statuses."""

from __future__ import annotations

import pytest

from mcp_http import MODERN, modern_request, post, sse_events


def call(server, body, headers, key="default"):
    with server.http(key=key) as c:
        return post(c, server.mcp, body, headers)


def test_discover_reports_versions_capabilities_and_caching(server):
    body, headers = modern_request("server/discover")
    r = call(server, body, headers)
    assert r.status_code == 200
    result = r.json()["result"]
    assert result["resultType"] == "complete"
    assert MODERN in result["supportedVersions"] and "2025-11-25" in result["supportedVersions"]
    assert "tools" in result["capabilities"]
    assert isinstance(result["ttlMs"], int) and result["ttlMs"] >= 0
    assert result["cacheScope"] in ("public", "private")
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "portico"
    assert "mcp-session-id" not in r.headers


def test_tools_list_and_call_carry_result_type_and_cache_hints(server):
    body, headers = modern_request("tools/list")
    r = call(server, body, {**headers, "x-mcp-packages": "data,schema,ask"})
    result = r.json()["result"]
    assert result["resultType"] == "complete"
    assert result["cacheScope"] == "private" and result["ttlMs"] > 0
    assert len(result["tools"]) == 39
    first = call(server, body, headers).json()["result"]
    assert first["resultType"] == "complete" and first["cacheScope"] == "private" and first["ttlMs"] > 0
    assert [t["name"] for t in first["tools"]][0] == "tools_search" and len(first["tools"]) < 39
    body, headers = modern_request("tools/call", {"name": "resource_get", "arguments": {"resource": "MediaType", "filterByTk": 1}})
    r = call(server, body, headers)
    result = r.json()["result"]
    assert result["resultType"] == "complete"
    assert result["structuredContent"]["data"]["Name"] == "MPEG audio file"


def mutate(headers, **changes):
    h = dict(headers)
    for k, v in changes.items():
        k = k.replace("_", "-")
        if v is None:
            h.pop(k, None)
        else:
            h[k] = v
    return h


@pytest.mark.parametrize("change,code,status", [
    ({"MCP-Protocol-Version": None}, -32020, 400),  # _meta says modern, the version header is missing
    ({"Mcp-Method": "tools/list"}, -32020, 400),
    ({"Mcp-Method": None}, -32020, 400),
    ({"Mcp-Name": "resource_list"}, -32020, 400),
    ({"Mcp-Name": None}, -32020, 400),
])
def test_header_body_mismatches(server, change, code, status):
    body, headers = modern_request("tools/call", {"name": "resource_get", "arguments": {"resource": "Genre", "filterByTk": 1}})
    r = call(server, body, mutate(headers, **{k.replace("-", "_"): v for k, v in change.items()}))
    assert r.status_code == status, r.text
    assert r.json()["error"]["code"] == code
    assert r.json()["id"] == 1


def test_version_header_disagreeing_with_the_body(server):
    body, headers = modern_request("tools/list")
    headers["MCP-Protocol-Version"] = "2025-11-25"
    r = call(server, body, headers)
    assert r.status_code == 400 and r.json()["error"]["code"] == -32020


def test_mcp_name_in_base64_sentinel_form(server):
    body, headers = modern_request("tools/call", {"name": "resource_get", "arguments": {"resource": "Genre", "filterByTk": 2}})
    headers["Mcp-Name"] = "=?base64?cmVzb3VyY2VfZ2V0?="
    r = call(server, body, headers)
    assert r.status_code == 200, r.text


def test_unsupported_modern_version(server):
    body, headers = modern_request("tools/list", version="2099-01-01")
    r = call(server, body, headers)
    assert r.status_code == 400
    error = r.json()["error"]
    assert error["code"] == -32022
    assert error["data"]["requested"] == "2099-01-01"
    assert MODERN in error["data"]["supported"]


def test_missing_envelope_keys(server):
    body, headers = modern_request("tools/list")
    del body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
    r = call(server, body, headers)
    assert r.status_code == 400 and r.json()["error"]["code"] == -32602
    assert "clientCapabilities" in r.json()["error"]["message"]
    body, headers = modern_request("tools/list")
    del body["params"]["_meta"]
    r = call(server, body, headers)
    assert r.status_code == 400 and r.json()["error"]["code"] == -32602


def test_unknown_methods_are_404_with_a_jsonrpc_body(server):
    for method in ["initialize", "ping", "frobnicate"]:
        body, headers = modern_request(method)
        r = call(server, body, headers)
        assert r.status_code == 404
        assert r.json()["error"]["code"] == -32601


def test_invalid_params_and_unknown_tool_are_400(server):
    body, headers = modern_request("tools/call", {"name": "nope", "arguments": {}})
    r = call(server, body, headers)
    assert r.status_code == 400 and r.json()["error"]["code"] == -32602


def test_batches_get_and_delete_do_not_exist(server):
    body, headers = modern_request("tools/list")
    r = call(server, [body], headers)
    assert r.status_code == 400 and r.json()["error"]["code"] == -32600
    with server.http() as c:
        assert c.get(server.mcp, headers={"MCP-Protocol-Version": MODERN}).status_code == 405
        r = c.delete(server.mcp, headers={"MCP-Protocol-Version": MODERN})
        assert r.status_code == 405 and r.headers["allow"] == "POST"


def test_notifications_are_accepted(server):
    with server.http() as c:
        r = post(c, server.mcp, {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}, {"MCP-Protocol-Version": MODERN})
        assert r.status_code == 202


def test_unauthenticated_modern_request(server):
    body, headers = modern_request("tools/list")
    r = call(server, body, headers, key=None)
    assert r.status_code == 401
    assert r.json()["error"]["code"] == -32001
    assert "resource_metadata=" in r.headers["www-authenticate"]


def test_progress_token_streams_progress_then_the_result(server):
    body, headers = modern_request("tools/call", {"name": "resource_list", "arguments": {"resource": "Genre", "pageSize": 1}}, meta_extra={"progressToken": 7})
    r = call(server, body, headers)
    assert r.headers["content-type"].startswith("text/event-stream")
    events = sse_events(r.text)
    assert events[0]["method"] == "notifications/progress" and events[0]["params"]["progressToken"] == 7
    assert events[-1]["result"]["resultType"] == "complete"


def test_mcp_responses_carry_the_request_id(server):
    """The main endpoint skips the router (PorticoResponder) but not its request-id middleware: every
    answer names its request, a client's own sane id comes back as sent, and an insane one is replaced."""
    body, headers = modern_request("tools/list")
    r = call(server, body, headers)
    assert r.status_code == 200 and len(r.headers["x-request-id"]) > 0
    r = call(server, body, mutate(headers, X_Request_Id="trace-42"))
    assert r.status_code == 200 and r.headers["x-request-id"] == "trace-42"
    r = call(server, body, mutate(headers, X_Request_Id="no spaces allowed"))
    assert r.headers["x-request-id"] not in ("", "no spaces allowed")
    # An error answered before any tool runs carries one too.
    r = call(server, body, mutate(headers, Mcp_Method="tools/call"))
    assert r.status_code == 400 and r.headers["x-request-id"]
    # Another app's endpoint still goes through the router.
    with server.http() as c:
        assert c.post(server.base + "/api/__app/nosuchapp/mcp", content=b"{}", headers={"Content-Type": "application/json"}).status_code == 404

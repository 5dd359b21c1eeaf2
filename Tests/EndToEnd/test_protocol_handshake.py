"""JSON-RPC and the initialize era (2024-11-05 … 2025-11-25) over raw HTTP: every error shape, batches, sessions."""

from __future__ import annotations

import json

import pytest

from mcp_http import initialize, post, sse_events


def test_initialize_negotiates_and_issues_a_session(server):
    with server.http() as c:
        for requested, expected in [("2024-11-05", "2024-11-05"), ("2025-03-26", "2025-03-26"), ("2025-06-18", "2025-06-18"), ("2025-11-25", "2025-11-25"), ("1999-01-01", "2025-11-25")]:
            session, result = initialize(c, server.mcp, requested)
            assert result["result"]["protocolVersion"] == expected
            assert result["result"]["capabilities"] == {"tools": {"listChanged": True}, "logging": {}, "resources": {"listChanged": True}}
            assert result["result"]["serverInfo"]["name"] == "portico"
            assert "Album" in result["result"]["instructions"]
            assert session.startswith("v1.")


def test_ping_and_notifications(server):
    with server.http() as c:
        r = post(c, server.mcp, {"jsonrpc": "2.0", "id": "p", "method": "ping"})
        assert r.status_code == 200 and r.json() == {"jsonrpc": "2.0", "id": "p", "result": {}}
        r = post(c, server.mcp, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert r.status_code == 202 and r.content == b""
        r = post(c, server.mcp, {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 12345}})
        assert r.status_code == 202
        r = post(c, server.mcp, {"jsonrpc": "2.0", "id": 9, "result": {}})
        assert r.status_code == 202, "a client's response to the server is accepted"


def test_batches(server):
    with server.http() as c:
        r = post(c, server.mcp, [
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": "two", "method": "tools/call", "params": {"name": "resource_get", "arguments": {"resource": "Genre", "filterByTk": 1}}},
            {"jsonrpc": "2.0", "id": 3, "method": "nope"},
            {"foo": "bar"},
            7,
        ])
        assert r.status_code == 200
        body = r.json()
        assert isinstance(body, list) and len(body) == 5
        assert body[0] == {"jsonrpc": "2.0", "id": 1, "result": {}}
        assert body[1]["id"] == "two" and body[1]["result"]["structuredContent"]["data"]["Name"] == "Rock"
        assert body[2]["error"]["code"] == -32601 and body[2]["id"] == 3
        assert body[3]["error"]["code"] == -32600 and body[3]["id"] is None
        assert body[4]["error"]["code"] == -32600

        r = post(c, server.mcp, [{"jsonrpc": "2.0", "method": "notifications/initialized"}])
        assert r.status_code == 202 and r.content == b""

        r = post(c, server.mcp, [])
        assert r.status_code == 400
        assert r.json()["error"]["code"] == -32600 and r.json()["id"] is None


@pytest.mark.parametrize("raw,code,status,mention", [
    (b'{"jsonrpc": "2.0", "id": 1, "method": "ping"', -32700, 400, "end of input"),
    (b'{"jsonrpc": 2.0, x}', -32700, 400, "position"),
    (b'', -32700, 400, "empty body"),
    (b'"just a string"', -32600, 400, "object or a batch array"),
    (b'42', -32600, 400, "got integer"),
    (b'{"id": 1, "method": "ping"}', -32600, 400, "jsonrpc"),
    (b'{"jsonrpc": "2.0", "id": 1}', -32600, 400, "method"),
    (b'{"jsonrpc": "2.0", "id": [1], "method": "ping"}', -32600, 400, "string or an integer"),
    (b'{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}', -32600, 400, "string or an integer"),
    (b'{"jsonrpc": "2.0", "id": null, "method": "ping"}', -32600, 400, "null"),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "method": "tools/list"}', -32700, 400, "duplicate"),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "frobnicate"}', -32601, 200, "frobnicate"),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": [1, 2]}', -32602, 200, "params"),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"arguments": {}}}', -32602, 200, "'name' is required"),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "no_such_tool"}}', -32602, 200, "Unknown tool"),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "resource_list", "arguments": []}}', -32602, 200, "'arguments' must be an object"),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "resource_list", "arguments": {}}}', -32602, 200, "resource: is required"),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "resource_list", "arguments": {"resource": "Album", "pageSize": "ten"}}}', -32602, 200, "pageSize: expected integer"),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "resource_list", "arguments": {"resource": "Album", "colour": "red"}}}', -32602, 200, "unknown argument"),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"cursor": "bogus"}}', -32602, 200, "invalid cursor"),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}', -32602, 200, "protocolVersion"),
])
def test_bad_input_gets_a_precise_error(server, raw, code, status, mention):
    with server.http() as c:
        r = post(c, server.mcp, None, raw=raw)
        assert r.status_code == status, r.text
        error = r.json()["error"]
        assert error["code"] == code, r.text
        assert mention in json.dumps(error), r.text


def test_unauthenticated_requests_get_401_with_a_challenge(server):
    with server.http(key=None) as c:
        r = post(c, server.mcp, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert r.status_code == 401
        assert r.json() == {"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "Unauthorized", "data": r.json()["error"]["data"]}}
        challenge = r.headers["www-authenticate"]
        assert challenge.startswith("Bearer ")
        assert f'resource_metadata="{server.base}/.well-known/oauth-protected-resource/api/mcp"' in challenge
        assert 'scope="mcp"' in challenge
    for bad in ["pk_nonexistent1_" + "a" * 40, "not-a-key", ""]:
        with server.http(key=bad or None, headers={} if bad else {"Authorization": "Basic"}) as c:
            r = post(c, server.mcp, {"jsonrpc": "2.0", "id": 1, "method": "ping"})
            assert r.status_code == 401
            assert r.json()["error"]["code"] == -32001


def test_unsupported_protocol_version_header_is_refused(server):
    with server.http() as c:
        r = post(c, server.mcp, {"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"MCP-Protocol-Version": "2023-01-01"})
        assert r.status_code == 400
        assert r.json()["error"]["code"] == -32022
        assert "2025-11-25" in r.json()["error"]["data"]["supported"]
        assert r.json()["error"]["data"]["requested"] == "2023-01-01"


def test_sessions_end_with_delete_and_are_bound_to_their_key(server):
    other_key = server.new_key()
    with server.http() as c:
        session, _ = initialize(c, server.mcp)
        h = {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
        assert post(c, server.mcp, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, h).status_code == 200
        with server.http(key=other_key) as other:
            r = post(other, server.mcp, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, h)
            assert r.status_code == 404, "another credential cannot use the session"
        forged = session[:-4] + ("AAAA" if not session.endswith("AAAA") else "BBBB")
        assert post(c, server.mcp, {"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"Mcp-Session-Id": forged}).status_code == 404
        r = c.delete(server.mcp, headers=h)
        assert r.status_code == 200
        r = post(c, server.mcp, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, h)
        assert r.status_code == 404
        assert r.json()["error"]["message"] == "Session not found"
        assert c.delete(server.mcp, headers=h).status_code == 404
        assert c.delete(server.mcp).status_code == 400, "DELETE without a session says what is missing"


def test_get_opens_a_server_message_stream(server):
    with server.http() as c:
        session, _ = initialize(c, server.mcp)
        with c.stream("GET", server.mcp, headers={"Mcp-Session-Id": session, "Accept": "text/event-stream"}) as r:
            assert r.status_code == 200
            assert r.headers["content-type"].startswith("text/event-stream")
            first = next(r.iter_raw())
            assert first.startswith(b":")
        assert c.get(server.mcp, headers={"Accept": "text/event-stream"}).status_code == 400


def test_progress_token_answers_with_an_event_stream(server):
    with server.http() as c:
        r = post(c, server.mcp, {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "resource_list", "arguments": {"resource": "Genre", "pageSize": 2}, "_meta": {"progressToken": "tok"}}})
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        events = sse_events(r.text)
        progress = [e for e in events if e.get("method") == "notifications/progress"]
        assert progress and progress[0]["params"]["progressToken"] == "tok"
        assert events[-1]["id"] == 5 and events[-1]["result"]["structuredContent"]["meta"]["count"] == 25


def test_origin_is_checked(server):
    with server.http() as c:
        r = post(c, server.mcp, {"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"Origin": "http://evil.example"})
        assert r.status_code == 403
        assert "id" in r.json() and r.json()["id"] is None
        for origin in [f"http://127.0.0.1:{server.port}", f"http://localhost:{server.port}"]:
            assert post(c, server.mcp, {"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"Origin": origin}).status_code == 200


def test_oversized_bodies_are_refused(server):
    with server.http() as c:
        big = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"' + b"x" * (5 * 1024 * 1024) + b'"}}'
        r = post(c, server.mcp, None, raw=big)
        assert r.status_code == 413
        assert r.json()["error"]["code"] == -32600
        assert "larger than" in r.json()["error"]["data"]


def test_wrong_content_type_and_accept(server):
    with server.http() as c:
        r = c.post(server.mcp, content=b'{"jsonrpc":"2.0","id":1,"method":"ping"}', headers={"Content-Type": "text/plain"})
        assert r.status_code == 415
        r = c.post(server.mcp, content=b'{"jsonrpc":"2.0","id":1,"method":"ping"}', headers={"Content-Type": "application/json", "Accept": "text/html"})
        assert r.status_code == 406
        assert c.put(server.mcp, content=b"{}").status_code in (404, 405)


def test_unknown_app_endpoint(server):
    with server.http() as c:
        r = post(c, f"{server.base}/api/__app/nope/mcp", {"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert r.status_code == 404
        assert "no app named 'nope'" in r.json()["error"]["data"]
        r = post(c, f"{server.base}/api/__app/main/mcp", {"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert r.status_code == 200

"""Casdoor's surface: applications managed through MCP tools, client credentials tokens that only read applications,
Basic client credentials on the MCP endpoint, and the exact insufficient_scope shape."""

from __future__ import annotations

import base64
import json

import httpx2
import pytest

from conftest import start_server
from mcp_http import post


def call(client: httpx2.Client, url: str, name: str, arguments: dict, id=1, headers=None) -> httpx2.Response:
    return post(client, url, {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}}, headers)


ALL = {"x-mcp-packages": "*"}


@pytest.fixture(scope="module")
def cc(server):
    """An application allowed the client credentials grant, created with the admin's API key."""
    with server.http() as c:
        r = call(c, server.mcp, "add_application", {"application": {
            "owner": "main", "name": "reporting-bot", "displayName": "Reporting bot",
            "grantTypes": ["client_credentials"], "scopes": ["read:application", "read:data"],
        }}, headers=ALL)
        assert r.status_code == 200, r.text
        result = r.json()["result"]
        assert not result.get("isError"), result
        assert result["content"][0]["text"].startswith("Successfully added application")
        data = result["structuredContent"]["data"]
        assert data["clientSecret"] and data["clientSecret"] != "***"
        return data["clientId"], data["clientSecret"]


def token(server, client_id, secret, scope, method="basic", **extra):
    data = {"grant_type": "client_credentials", "scope": scope, **extra}
    with httpx2.Client() as c:
        if method == "basic":
            return c.post(f"{server.base}/api/login/oauth/access_token", data=data, auth=(client_id, secret))
        return c.post(f"{server.base}/oauth/token", data={**data, "client_id": client_id, "client_secret": secret})


def test_applications_tools_mask_secrets(server, cc):
    client_id, _ = cc
    with server.http() as c:
        r = call(c, server.mcp, "get_applications", {"owner": "main"}, headers=ALL)
        apps = r.json()["result"]["structuredContent"]["data"]
        bot = next(a for a in apps if a["name"] == "reporting-bot")
        assert bot["clientSecret"] == "***" and bot["clientId"] == client_id
        text = r.json()["result"]["content"][0]["text"]
        assert json.loads(text) == apps, "the text is Casdoor's formatted JSON"
        r = call(c, server.mcp, "get_application", {"id": "main/reporting-bot"}, headers=ALL)
        assert r.json()["result"]["structuredContent"]["data"]["grantTypes"] == ["client_credentials"]


@pytest.mark.parametrize("method", ["basic", "post"])
def test_client_credentials_token_reads_applications_only(server, cc, method):
    client_id, secret = cc
    r = token(server, client_id, secret, "read:application", method=method)
    assert r.status_code == 200, r.text
    assert r.headers["cache-control"] == "no-store"
    body = r.json()
    assert body["token_type"] == "Bearer" and "refresh_token" not in body
    assert set(body["scope"].split()) == {"mcp", "read:application"}
    with server.http(key=body["access_token"]) as c:
        r = post(c, server.mcp, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, ALL)
        assert sorted(t["name"] for t in r.json()["result"]["tools"]) == ["get_application", "get_applications"]
        r = call(c, server.mcp, "get_applications", {"owner": "main"}, headers=ALL)
        assert r.status_code == 200 and not r.json()["result"].get("isError")
        r = call(c, server.mcp, "add_application", {"application": {"name": "nope", "grantTypes": ["client_credentials"]}}, id=10, headers=ALL)
        assert r.status_code == 403
        assert r.json() == {"jsonrpc": "2.0", "id": 10, "error": {"code": -32001, "message": "insufficient_scope",
                            "data": {"tool": "add_application", "granted_scopes": ["mcp", "read:application"], "required_scope": "write:application"}}}
        assert 'error="insufficient_scope"' in r.headers["www-authenticate"]


def test_basic_client_credentials_on_the_mcp_endpoint(server, cc):
    client_id, secret = cc
    with httpx2.Client(auth=(client_id, secret)) as c:
        r = post(c, server.mcp, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, ALL)
        assert r.status_code == 200
        names = sorted(t["name"] for t in r.json()["result"]["tools"])
        assert names == ["get_application", "get_applications", "resource_get", "resource_list", "resource_query"]
    with httpx2.Client(auth=(client_id, "wrong")) as c:
        r = post(c, server.mcp, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert r.status_code == 401


def test_client_credentials_refusals(server, cc):
    client_id, secret = cc
    r = token(server, client_id, "wrong-secret", "read:application")
    assert r.status_code == 401 and r.json()["error"] == "invalid_client"
    assert r.headers["www-authenticate"].startswith("Basic")
    r = token(server, client_id, secret, "write:application")
    assert r.status_code == 400 and r.json()["error"] == "invalid_scope"
    r = token(server, client_id, secret, "read:everything")
    assert r.status_code == 400 and r.json()["error"] == "invalid_scope"
    r = token(server, client_id, secret, "read:application", resource="http://evil.example/api/mcp")
    assert r.status_code == 400 and r.json()["error"] == "invalid_target"
    with httpx2.Client() as c:
        r = c.post(f"{server.base}/oauth/token", data={"grant_type": "password", "username": "a", "password": "b"}, auth=(client_id, secret))
        assert r.json()["error"] in ("unsupported_grant_type",)
        r = c.post(f"{server.base}/oauth/token", data={"grant_type": "client_credentials"})
        assert r.status_code == 401 and r.json()["error"] == "invalid_client"


def test_grant_types_and_ip_allow_list_are_enforced(server):
    with server.http() as c:
        r = call(c, server.mcp, "add_application", {"application": {"name": "web-only", "redirectUris": ["https://app.example/cb"], "grantTypes": ["authorization_code"]}}, headers=ALL)
        web = r.json()["result"]["structuredContent"]["data"]
        r = call(c, server.mcp, "add_application", {"application": {"name": "fenced", "grantTypes": ["client_credentials"], "scopes": ["read:application"], "ipWhitelist": "10.1.2.0/24"}}, headers=ALL)
        fenced = r.json()["result"]["structuredContent"]["data"]
    r = token(server, web["clientId"], web["clientSecret"], "read:application")
    assert r.status_code == 400 and r.json()["error"] == "unauthorized_client"
    r = token(server, fenced["clientId"], fenced["clientSecret"], "read:application")
    assert r.status_code == 403 and r.json()["error"] == "access_denied"
    assert "allow-list" in r.json()["error_description"]
    with httpx2.Client(auth=(fenced["clientId"], fenced["clientSecret"])) as c:
        assert post(c, server.mcp, {"jsonrpc": "2.0", "id": 1, "method": "ping"}).status_code == 401


def test_application_tools_validate_and_update(server):
    with server.http() as c:
        bad = [
            ({"name": "x y"}, "application.name"),
            ({"name": "http-redirect", "redirectUris": ["http://example.com/cb"]}, "loopback"),
            ({"name": "bad-scope", "grantTypes": ["client_credentials"], "scopes": ["read:everything"]}, "unknown scope"),
            ({"name": "bad-ip", "grantTypes": ["client_credentials"], "ipWhitelist": "300.1.1.1"}, "ipWhitelist"),
            ({"name": "no-redirect"}, "redirectUris is required"),
            ({"owner": "other", "name": "elsewhere"}, "not this endpoint's app"),
        ]
        for application, message in bad:
            r = call(c, server.mcp, "add_application", {"application": application}, headers=ALL)
            result = r.json()["result"]
            assert result.get("isError"), application
            assert message in result["content"][0]["text"], (application, result["content"][0]["text"])
        r = call(c, server.mcp, "add_application", {"application": {"name": "to-update", "redirectUris": ["http://127.0.0.1/cb"]}}, headers=ALL)
        assert not r.json()["result"].get("isError")
        r = call(c, server.mcp, "update_application", {"id": "main/to-update", "application": {"displayName": "Updated Name"}}, headers=ALL)
        assert r.json()["result"]["content"][0]["text"] == "Successfully updated application"
        r = call(c, server.mcp, "update_application", {"id": "main/to-update", "application": {"displayName": "Updated Name"}}, headers=ALL)
        assert r.json()["result"]["content"][0]["text"].startswith("No changes were made")
        r = call(c, server.mcp, "delete_application", {"application": {"owner": "main", "name": "to-update"}}, headers=ALL)
        assert r.json()["result"]["content"][0]["text"] == "Successfully deleted application"
        r = call(c, server.mcp, "get_application", {"id": "main/to-update"}, headers=ALL)
        assert r.json()["result"]["structuredContent"]["data"] is None


def test_application_quota_and_demo_mode():
    s = start_server("--application-quota", "1")
    try:
        with s.http() as c:
            r = call(c, s.mcp, "add_application", {"application": {"name": "one", "redirectUris": ["https://a.example/cb"]}}, headers=ALL)
            assert not r.json()["result"].get("isError")
            r = call(c, s.mcp, "add_application", {"application": {"name": "two", "redirectUris": ["https://a.example/cb"]}}, headers=ALL)
            assert r.json()["result"] == {"content": [{"type": "text", "text": "application quota is exceeded"}], "isError": True}
    finally:
        s.stop()
    s = start_server("--demo-mode")
    try:
        with s.http() as c:
            r = call(c, s.mcp, "add_application", {"application": {"name": "one", "redirectUris": ["https://a.example/cb"]}}, headers=ALL)
            assert r.json()["result"]["isError"] is True and "demo mode" in r.json()["result"]["content"][0]["text"]
            r = call(c, s.mcp, "resource_create", {"resource": "Genre", "values": {"Name": "x"}})
            assert r.json()["result"]["isError"] is True
            r = call(c, s.mcp, "get_applications", {"owner": "main"}, headers=ALL)
            assert not r.json()["result"].get("isError"), "reading still works"
    finally:
        s.stop()

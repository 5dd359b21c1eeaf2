"""Casdoor's user tools and the apikeys package, with roles, scopes and tools/list_changed."""

from __future__ import annotations

import time

import httpx2

from mcp_http import StreamListener, initialize, post
from test_client_credentials import ALL, call

DATA = {"x-mcp-packages": "data"}


def test_user_tools_manage_members_without_ever_returning_passwords(server):
    with server.http() as c:
        r = call(c, server.mcp, "add_user", {"user": {"owner": "main", "name": "uma", "displayName": "Uma", "email": "uma@example.com", "password": "a long password", "type": "viewer"}}, headers=ALL)
        assert r.json()["result"]["content"][0]["text"] == "Successfully added user"
        assert "password" not in r.json()["result"]["structuredContent"]["data"]
        r = call(c, server.mcp, "get_user", {"id": "main/uma"}, headers=ALL)
        uma = r.json()["result"]["structuredContent"]["data"]
        assert uma["type"] == "viewer" and uma["displayName"] == "Uma" and uma["email"] == "uma@example.com"
        assert "password" not in r.text and "a long password" not in r.text
        r = call(c, server.mcp, "get_users", {"owner": "main"}, headers=ALL)
        assert "uma" in [u["name"] for u in r.json()["result"]["structuredContent"]["data"]]
        r = call(c, server.mcp, "get_user", {"owner": "main", "email": "uma@example.com"}, headers=ALL)
        assert r.json()["result"]["structuredContent"]["data"]["name"] == "uma"
        r = call(c, server.mcp, "add_user", {"user": {"name": "uma"}}, headers=ALL)
        assert r.json()["result"]["isError"] and "already exists" in r.json()["result"]["content"][0]["text"]
        r = call(c, server.mcp, "add_user", {"user": {"name": "uma2", "type": "superuser"}}, headers=ALL)
        assert r.json()["result"]["isError"] and "admin, member or viewer" in r.json()["result"]["content"][0]["text"]
        r = call(c, server.mcp, "add_user", {"user": {"name": "gen"}}, headers=ALL)
        assert len(r.json()["result"]["structuredContent"]["data"]["password"]) >= 16, "a generated password is shown once"
        r = call(c, server.mcp, "delete_user", {"confirm": True, "user": {"owner": "main", "name": "gen"}}, headers=ALL)
        assert r.json()["result"]["content"][0]["text"] == "Successfully deleted user"
        r = call(c, server.mcp, "delete_user", {"confirm": True, "user": {"owner": "main", "name": "admin"}}, headers=ALL)
        assert r.json()["result"]["isError"], "no one deletes themselves"


def test_role_change_is_announced_with_tools_list_changed(server):
    with server.http() as c:
        call(c, server.mcp, "add_user", {"user": {"name": "rita", "password": "another long one", "type": "viewer"}}, headers=ALL)
    rita_key = server.new_key(user="rita")
    with server.http(key=rita_key) as c:
        session, _ = initialize(c, server.mcp)
        names = [t["name"] for t in post(c, server.mcp, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, {"Mcp-Session-Id": session, **DATA}).json()["result"]["tools"]]
        assert "resource_create" not in names
    stream = StreamListener(server.mcp, {"Authorization": f"Bearer {rita_key}", "Mcp-Session-Id": session}, b"list_changed")
    assert stream.opened.wait(10)
    with server.http() as c:
        r = call(c, server.mcp, "update_user", {"id": "main/rita", "user": {"type": "member"}}, headers=ALL)
        assert r.json()["result"]["content"][0]["text"] == "Successfully updated user"
    assert b"notifications/tools/list_changed" in stream.wait()
    time.sleep(5.5)  # roles are cached for five seconds
    with server.http(key=rita_key) as c:
        names = [t["name"] for t in post(c, server.mcp, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, DATA).json()["result"]["tools"]]
        assert "resource_create" in names


def test_api_key_tools_never_widen_scopes(server):
    reader = server.new_key(scopes="read:data read:apikey write:apikey")
    with server.http(key=reader) as c:
        r = call(c, server.mcp, "api_keys_create", {"name": "wider", "scopes": ["write:data"]}, headers=ALL)
        assert r.json()["result"]["isError"] and "write:data" in r.json()["result"]["content"][0]["text"]
        r = call(c, server.mcp, "api_keys_create", {"name": "same"}, headers=ALL)
        created = r.json()["result"]["structuredContent"]
        assert created["key"].startswith("pk_") and set(created["scopes"]) == {"read:data", "read:apikey", "write:apikey"}
        r = call(c, server.mcp, "api_keys_list", {}, headers=ALL)
        listed = r.json()["result"]["structuredContent"]["data"]
        assert created["id"] in [k["id"] for k in listed]
        assert created["key"] not in r.text, "secrets are never listed"
        r = call(c, server.mcp, "api_keys_revoke", {"id": created["id"]}, headers=ALL)
        assert r.json()["result"]["content"][0]["text"] == "Successfully revoked API key"

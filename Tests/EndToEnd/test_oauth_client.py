"""The official MCP client's OAuth support (`OAuthClientProvider`) against the real binary: discovery, dynamic
registration, PKCE, sign-in and consent over HTTP, tokens, refresh, and step-up on insufficient_scope."""

from __future__ import annotations

import asyncio
import time

import httpx2
import pytest
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientMetadata

from conftest import start_server
from oauth_helpers import REDIRECT, HeadlessUser, MemoryStorage


@pytest.fixture(scope="module")
def oauth_server():
    s = start_server("--access-token-ttl", "3")
    password = "correct horse battery staple"
    s.cli("user", "create", "olive", "--role", "member", "--password-stdin", stdin=password + "\n")
    s.extra["password"] = password
    yield s
    s.stop()


def provider(server, user: HeadlessUser, storage: MemoryStorage) -> OAuthClientProvider:
    return OAuthClientProvider(
        server_url=server.mcp,
        client_metadata=OAuthClientMetadata(client_name="portico-e2e", redirect_uris=[REDIRECT]),
        storage=storage, redirect_handler=user.redirect_handler, callback_handler=user.callback_handler)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_whole_flow_then_refresh(oauth_server, mode):
    user = HeadlessUser("olive", oauth_server.extra["password"])
    storage = MemoryStorage()

    async def go():
        async with httpx2.AsyncClient(auth=provider(oauth_server, user, storage), timeout=30) as http:
            async with Client(streamable_http_client(oauth_server.mcp, http_client=http), mode=mode) as client:
                tools = {t.name for t in (await client.list_tools()).tools}
                assert {"tools_search", "resource_list"} <= tools, tools
                found = await client.call_tool("tools_search", {"query": "create a record"})
                assert found.structured_content["tools"][0]["name"] == "resource_create", found
                admin = await client.call_tool("tools_search", {"query": "applications", "limit": 20})
                assert not any("application" in t["name"] for t in (admin.structured_content or {}).get("tools", [])), "a member sees no admin tools"
                r = await client.call_tool("resource_get", {"resource": "Genre", "filterByTk": 3})
                assert r.structured_content == {"data": {"GenreId": 3, "Name": "Metal"}}
                first = storage.tokens
                assert first.refresh_token, "offline_access was granted"
                assert "write:data" in first.scope and "mcp" in first.scope
                await asyncio.sleep(4.5)  # past the 3-second access token
                r = await client.call_tool("resource_get", {"resource": "Genre", "filterByTk": 4})
                assert r.structured_content["data"]["Name"] == "Alternative & Punk"
                assert storage.tokens.access_token != first.access_token, "the client refreshed"
                assert storage.tokens.refresh_token != first.refresh_token, "refresh tokens rotate"
        return first

    first = asyncio.run(go())
    assert user.consents == 1, "one consent, then refresh without the user"
    assert storage.client_info.client_id.startswith("dcr_"), "the client registered dynamically"
    # The rotated-away refresh token is now a stolen copy: using it revokes the whole family.
    with httpx2.Client() as c:
        info = storage.client_info
        auth = (info.client_id, info.client_secret) if info.client_secret else None
        data = {"grant_type": "refresh_token", "refresh_token": first.refresh_token}
        if not auth:
            data["client_id"] = info.client_id
        r = c.post(f"{oauth_server.base}/oauth/token", data=data, auth=auth)
        assert r.status_code == 400 and r.json()["error"] == "invalid_grant"
        r = c.post(f"{oauth_server.base}/oauth/token", data={**data, "refresh_token": storage.tokens.refresh_token}, auth=auth)
        assert r.status_code == 400 and r.json()["error"] == "invalid_grant", "the newest refresh token died with its family"
        deadline = time.time() + 3
        status = 200
        while time.time() < deadline:
            status = c.post(oauth_server.mcp, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers={"Authorization": f"Bearer {storage.tokens.access_token}"}).status_code
            if status == 401:
                break
            time.sleep(0.3)
        assert status == 401, "the family's access token is revoked too"


def test_insufficient_scope_triggers_step_up(oauth_server):
    # The user first grants read access only; the write call gets 403 insufficient_scope, the client
    # asks again with the union of scopes, the user approves, and the call succeeds.
    user = HeadlessUser("olive", oauth_server.extra["password"], scopes_to_grant=[{"read:data"}, None])
    storage = MemoryStorage()

    async def go():
        async with httpx2.AsyncClient(auth=provider(oauth_server, user, storage), timeout=30) as http:
            async with Client(streamable_http_client(oauth_server.mcp, http_client=http), mode="auto") as client:
                tools = {t.name for t in (await client.list_tools()).tools}
                assert tools == {"tools_search", "resource_list", "resource_get"}, tools
                assert "write:data" not in storage.tokens.scope
                r = await client.call_tool("resource_create", {"resource": "Genre", "values": {"Name": "Step-up"}})
                assert not r.is_error, r.content
                assert r.structured_content["data"]["Name"] == "Step-up"
                assert "write:data" in storage.tokens.scope
                await client.call_tool("resource_destroy", {"confirm": True, "resource": "Genre", "filter": {"Name": "Step-up"}})

    asyncio.run(go())
    assert user.consents == 2
    assert "write:data" not in user.consent_pages[0] or 'value="write:data"' in user.consent_pages[0]


def test_denied_consent_reaches_the_client_as_access_denied(oauth_server):
    user = HeadlessUser("olive", oauth_server.extra["password"], deny=True)

    async def go():
        async with httpx2.AsyncClient(auth=provider(oauth_server, user, MemoryStorage()), timeout=30) as http:
            async with Client(streamable_http_client(oauth_server.mcp, http_client=http), mode="legacy") as client:
                await client.list_tools()

    with pytest.raises(BaseException):
        asyncio.run(go())
    assert "error=access_denied" in user.last_redirect
    assert "iss=" in user.last_redirect and "state=" in user.last_redirect

"""Discovery documents, public discovery, and the browser session cookie on the MCP endpoint."""

from __future__ import annotations

from urllib.parse import urlencode

import httpx2

from conftest import start_server
from mcp_http import modern_request, post
from oauth_helpers import form_fields, forms


def test_metadata_documents(server):
    m = httpx2.get(f"{server.base}/.well-known/oauth-authorization-server", headers={"MCP-Protocol-Version": "2026-07-28"}).json()
    assert m["issuer"] == server.base
    assert m["code_challenge_methods_supported"] == ["S256"]
    assert m["authorization_response_iss_parameter_supported"] is True
    assert m["client_id_metadata_document_supported"] is True
    assert {"authorization_code", "refresh_token", "client_credentials"} == set(m["grant_types_supported"])
    assert "offline_access" in m["scopes_supported"] and "read:application" in m["scopes_supported"]
    oidc = httpx2.get(f"{server.base}/.well-known/openid-configuration").json()
    assert oidc["issuer"] == server.base and oidc["jwks_uri"] == f"{server.base}/oauth/jwks.json"
    for path in ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/api/mcp", "/.well-known/main/oauth-protected-resource"]:
        prm = httpx2.get(server.base + path).json()
        assert prm["resource"] == server.mcp, path
        assert prm["authorization_servers"] == [server.base]
        assert "offline_access" not in prm["scopes_supported"]
    assert httpx2.get(f"{server.base}/.well-known/nope/oauth-protected-resource").status_code == 404
    jwks = httpx2.get(f"{server.base}/oauth/jwks.json").json()
    assert jwks["keys"] and all(k["alg"] == "ES256" and "kid" in k and "d" not in k for k in jwks["keys"])


def test_public_discovery_lists_but_never_calls():
    s = start_server("--public-discovery")
    try:
        with httpx2.Client() as c:
            r = post(c, s.mcp, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}})
            assert r.status_code == 200
            r = post(c, s.mcp, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, {"x-mcp-packages": "*"})
            names = {t["name"] for t in r.json()["result"]["tools"]}
            assert {"resource_list", "add_application", "get_users", "api_keys_create"} <= names, "the whole catalogue"
            r = post(c, s.mcp, {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "resource_list", "arguments": {"resource": "Genre"}}})
            assert r.status_code == 401 and r.json()["error"]["code"] == -32001
            body, headers = modern_request("tools/list")
            assert post(c, s.mcp, body, headers).status_code == 200
            body, headers = modern_request("tools/call", {"name": "resource_list", "arguments": {"resource": "Genre"}})
            assert post(c, s.mcp, body, headers).status_code == 401
            r = post(c, s.mcp, {"jsonrpc": "2.0", "id": 4, "method": "tools/list"}, {"Authorization": "Bearer pk_bogus00000000_" + "x" * 40})
            assert r.status_code == 401, "bad credentials are refused even where none are needed"
    finally:
        s.stop()


def test_the_browser_session_cookie_works_on_the_mcp_endpoint(server):
    password = "cookie monster password"
    server.cli("user", "create", "cora", "--role", "viewer", "--password-stdin", stdin=password + "\n")
    with httpx2.Client(follow_redirects=False) as browser:
        page = browser.get(f"{server.base}/login")
        form = forms(page.text)[0]
        fields = [(k, v) for k, v in form_fields(form) if k not in ("username", "password")] + [("username", "cora"), ("password", password)]
        r = browser.post(f"{server.base}/login", content=urlencode(fields), headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert r.status_code == 303 and r.headers["location"] == "/console"
        r = post(browser, server.mcp, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, {"x-mcp-packages": "data,schema,ask"})
        assert r.status_code == 200
        assert sorted(t["name"] for t in r.json()["result"]["tools"]) == ["ask", "collections_get", "collections_list", "datasource_describe", "datasources_list", "examples_list", "query_metric", "resource_get", "resource_list", "resource_query", "semantic_model_get", "sql_explain", "sql_query", "terms_list"]
        # A foreign page cannot ride the cookie: browsers send its Origin, and it is refused.
        r = post(browser, server.mcp, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, {"Origin": "https://evil.example"})
        assert r.status_code == 403
    # An open redirect through the sign-in form is not possible.
    with httpx2.Client(follow_redirects=False) as browser:
        page = browser.get(f"{server.base}/login?next=https://evil.example/")
        form = forms(page.text)[0]
        fields = [(k, v) for k, v in form_fields(form) if k not in ("username", "password")] + [("username", "cora"), ("password", password)]
        r = browser.post(f"{server.base}/login", content=urlencode(fields), headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert r.headers["location"] == "/console"

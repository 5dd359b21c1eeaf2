"""A real browser (Debian's chromium driven by Playwright) signs in, approves the consent page and manages API keys.
Screenshots are kept in test-artifacts/."""

from __future__ import annotations

import base64
import hashlib
import secrets
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qs, urlencode, urlparse

import httpx2
import pytest

from conftest import start_server

PASSWORD = "browser tests need passwords too"


class Callback(BaseHTTPRequestHandler):
    received: list[dict] = []

    def do_GET(self):
        if urlparse(self.path).path == "/callback":
            Callback.received.append(parse_qs(urlparse(self.path).query))
        body = b"<html><body><h1>Connected</h1><p>You can close this window.</p></body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def s():
    server = start_server()
    server.cli("user", "create", "bea", "--role", "member", "--password-stdin", stdin=PASSWORD + "\n")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def callback():
    httpd = HTTPServer(("127.0.0.1", 0), Callback)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/callback"
    httpd.shutdown()



def test_sign_in_and_approve_in_a_real_browser(s, callback, browser, artifacts):
    client = httpx2.post(f"{s.base}/oauth/register", json={"client_name": "Browser Test Agent", "redirect_uris": [callback], "token_endpoint_auth_method": "none"}).json()
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    state = secrets.token_urlsafe(16)
    url = f"{s.base}/oauth/authorize?" + urlencode({
        "response_type": "code", "client_id": client["client_id"], "redirect_uri": callback, "state": state,
        "code_challenge": challenge, "code_challenge_method": "S256", "scope": "mcp offline_access", "resource": s.mcp})
    page = browser.new_page(viewport={"width": 1100, "height": 820})
    page.goto(url)
    assert "Sign in" in page.title()
    assert page.get_by_text("Browser Test Agent").is_visible()
    page.screenshot(path=str(artifacts / "oauth-1-sign-in.png"), full_page=True)

    page.fill("#username", "bea")
    page.fill("#password", "not the password")
    page.click("button[type=submit]")
    assert page.get_by_text("The user name or password is wrong.").is_visible()
    page.screenshot(path=str(artifacts / "oauth-2-wrong-password.png"), full_page=True)

    page.fill("#password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_selector("text=Authorize Browser Test Agent")
    assert page.is_checked("#s-read\\:data") and page.is_checked("#s-write\\:data")
    assert page.get_by_text("runs on your own computer").is_visible()
    page.uncheck("#s-write\\:data")
    page.screenshot(path=str(artifacts / "oauth-3-consent.png"), full_page=True)

    page.click("button[value=approve]")
    page.wait_for_url(callback + "*")
    page.screenshot(path=str(artifacts / "oauth-4-back-at-the-client.png"), full_page=True)
    query = Callback.received[-1]
    assert query["state"] == [state] and query["iss"] == [s.base]

    r = httpx2.post(f"{s.base}/oauth/token", data={"grant_type": "authorization_code", "code": query["code"][0], "redirect_uri": callback,
                                                   "client_id": client["client_id"], "code_verifier": verifier})
    assert r.status_code == 200, r.text
    token = r.json()
    assert "read:data" in token["scope"] and "write:data" not in token["scope"], "the unticked scope was not granted"
    r = httpx2.post(s.mcp, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                    headers={"Authorization": f"Bearer {token['access_token']}", "x-mcp-packages": "data,schema,ask"})
    assert sorted(t["name"] for t in r.json()["result"]["tools"]) == ["ask", "collections_get", "collections_list", "datasource_describe", "datasources_list", "examples_list", "query_metric", "resource_get", "resource_list", "resource_query", "semantic_model_get", "sql_explain", "sql_query", "terms_list"]

    # The connected application appears in the console and can be disconnected.
    page.goto(f"{s.base}/console")
    assert page.get_by_text("Browser Test Agent").is_visible()
    page.screenshot(path=str(artifacts / "console-1-connected-app.png"), full_page=True)
    page.click("text=Disconnect")
    page.wait_for_selector("text=No applications are connected.")
    page.close()


def test_console_creates_and_revokes_api_keys(s, browser, artifacts):
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    page.goto(f"{s.base}/console")
    assert page.url.startswith(f"{s.base}/login")
    page.fill("#username", "bea")
    page.fill("#password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_selector("text=Your access")
    page.fill("#key-name", "playwright key")
    page.check("input[value='read:data']")
    page.click("text=Create key")
    key = page.inner_text("#new-key").strip()
    assert key.startswith("pk_")
    page.screenshot(path=str(artifacts / "console-2-new-key.png"), full_page=True)
    r = httpx2.post(s.mcp, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers={"Authorization": f"Bearer {key}", "x-mcp-packages": "data,schema,ask"})
    assert sorted(t["name"] for t in r.json()["result"]["tools"]) == ["resource_get", "resource_list", "resource_query"]
    page.goto(f"{s.base}/console")
    assert key not in page.content(), "the key is shown once"
    assert page.locator("text=playwright key").count() == 1
    page.click("text=Revoke")
    page.wait_for_selector("text=revoked")
    page.screenshot(path=str(artifacts / "console-3-revoked.png"), full_page=True)
    page.close()

"""The console's pages authorize as the tools do: one sign-in middleware for every page, and each
action checked by the tool registry's own check for the tool it stands for (api_keys_create,
ask, examples_create, workflows_update, executions_get). Driven as a viewer, who is refused what
a viewer's role refuses over MCP, and as an admin, who passes the same check; without a session
every page sends the browser to sign in and back."""

from __future__ import annotations

import html
import re
from urllib.parse import urlencode

import httpx2
import pytest
from conftest import start_server
from oauth_helpers import console_sign_in

PASSWORD = "pages check as tools do"
FORM = {"Content-Type": "application/x-www-form-urlencoded"}


@pytest.fixture(scope="module")
def s():
    server = start_server()
    for name, role in [("vera", "viewer"), ("root", "admin")]:
        server.cli("user", "create", name, "--role", role, "--password-stdin", stdin=PASSWORD + "\n")
    yield server
    server.stop()


def signed_in(server, name: str) -> tuple[httpx2.Client, str]:
    browser = httpx2.Client(follow_redirects=False, timeout=30)
    assert console_sign_in(browser, server.base, name, PASSWORD).status_code == 303
    csrf = re.search(r'name="csrf" value="([^"]+)"', browser.get(f"{server.base}/console").text).group(1)
    return browser, csrf


def text(response) -> str:
    return html.unescape(response.text)


def test_every_page_needs_a_session_and_comes_back_to_it(s):
    for method, path, back in [
        ("GET", "/console", "/console"), ("POST", "/console/keys", "/console"), ("GET", "/console/ask", "/console/ask"),
        ("POST", "/console/ask/example", "/console/ask"), ("GET", "/console/workflows", "/console/workflows"),
        ("POST", "/console/workflows/main/1/enable", "/console/workflows"), ("GET", "/console/workflows/main/executions/1", "/console/workflows"),
    ]:
        r = httpx2.request(method, f"{s.base}{path}", follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"] == f"/login?next={back}", (method, path, r.status_code, r.headers.get("location"))


def test_a_viewer_is_refused_by_the_tools_check_and_an_admin_passes_it(s):
    viewer, viewer_csrf = signed_in(s, "vera")
    admin, admin_csrf = signed_in(s, "root")
    try:
        # examples_create: an admin's tool. The viewer is refused before anything is read; the
        # admin passes the check and is asked which answer (there is none).
        fields = {"csrf": viewer_csrf, "app": "main", "chat": "1", "record": "1"}
        r = viewer.post(f"{s.base}/console/ask/example", content=urlencode(fields), headers=FORM)
        assert "Only an administrator of app 'main' saves examples" in text(r), text(r)[:1500]
        r = admin.post(f"{s.base}/console/ask/example", content=urlencode({**fields, "csrf": admin_csrf}), headers=FORM)
        assert "Only an administrator" not in text(r)
        # workflows_update and executions_get: refused for the viewer with the page's 403; the
        # admin passes the check and reaches the workflow store (which has no such workflow).
        r = viewer.post(f"{s.base}/console/workflows/main/1/enable", content=urlencode({"csrf": viewer_csrf}), headers=FORM)
        assert r.status_code == 403 and "Only an administrator of app 'main' manages its workflows" in text(r)
        r = admin.post(f"{s.base}/console/workflows/main/1/enable", content=urlencode({"csrf": admin_csrf}), headers=FORM)
        assert r.status_code != 403, text(r)[:1500]
        r = viewer.get(f"{s.base}/console/workflows/main/executions/1")
        assert r.status_code == 403
        # The workflows page lists no app for the viewer, and main for the admin.
        assert "/console/workflows/main/" not in viewer.get(f"{s.base}/console/workflows").text
        # api_keys_create: every role manages its own keys; an app without a role is refused.
        base = {"csrf": viewer_csrf, "name": "viewer's key", "expires": ""}
        r = viewer.post(f"{s.base}/console/keys", content=urlencode({**base, "app": "main"}), headers=FORM)
        assert r.status_code == 200 and "pk_" in r.text, text(r)[:1500]
        r = viewer.post(f"{s.base}/console/keys", content=urlencode({**base, "app": "nowhere"}), headers=FORM)
        assert "has no role in app 'nowhere'" in text(r), text(r)[:1500]
        # ask: a viewer may ask (read:datasource), through their role's view of the tables.
        ask = viewer.get(f"{s.base}/console/ask")
        csrf = re.search(r'name="csrf" value="([^"]+)"', ask.text).group(1)
        r = viewer.post(f"{s.base}/console/ask", content=urlencode({"csrf": csrf, "app": "main", "question": "How many albums are there?"}), headers=FORM)
        assert r.status_code == 200 and "does not allow asking" not in text(r) and "347" in r.text, text(r)[:2000]
    finally:
        viewer.close()
        admin.close()

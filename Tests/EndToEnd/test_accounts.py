"""One identity across apps, attacked as one app's administrator would: appa's admin cannot pull
a user of another app into appa, nor change the password, email, name or profile of a user who
also belongs elsewhere; adding an outsider is an invitation that user accepts or declines in
their console, or an instance administrator's action (an admin of app main, or the operator at
the command line). Casdoor's tools, the acl tools, the console and the CLI, on both backends."""

from __future__ import annotations

import html
import json
from urllib.parse import urlencode

import httpx2
import pytest
from conftest import start_server
from mcp_http import modern_request, post
from oauth_helpers import console_sign_in, form_fields, forms

PASSWORDS = {"admin": "main admin password", "alice": "alice of appa pass", "bob": "bob of appa only", "carol": "carol of main only", "dave": "dave of main only"}


def call(server, key: str, tool: str, arguments: dict, app: str = "appa") -> tuple[bool, dict | None, str]:
    body, headers = modern_request("tools/call", {"name": tool, "arguments": arguments})
    url = f"{server.base}/api/__app/{app}/mcp?packages=users,acl" if app != "main" else f"{server.mcp}?packages=users,acl"
    with httpx2.Client(headers={"Authorization": f"Bearer {key}"}, timeout=30) as c:
        r = post(c, url, body, headers)
    assert r.status_code == 200, r.text
    result = r.json()["result"]
    return bool(result.get("isError")), result.get("structuredContent"), " ".join(c.get("text", "") for c in result.get("content", []))


def signs_in(server, user: str, password: str) -> bool:
    """Whether the console's sign-in form takes this password (a fresh browser each time)."""
    with httpx2.Client(follow_redirects=False) as browser:
        return console_session(server, browser, user, password)


def console_session(server, browser: httpx2.Client, user: str, password: str) -> bool:
    return console_sign_in(browser, server.base, user, password).status_code == 303


def console_form(server, browser: httpx2.Client, action: str) -> httpx2.Response:
    """Submits the console's form for `action` (its CSRF token included)."""
    page = browser.get(f"{server.base}/console")
    form = next(f for f in forms(page.text) if f.get("action") == action)
    return browser.post(f"{server.base}{action}", content=urlencode(form_fields(form)), headers={"Content-Type": "application/x-www-form-urlencoded"})


def memberships(server, user: str) -> str:
    line = next(l for l in server.cli("user", "list").stdout.splitlines() if l.split("\t")[1] == user)
    return line.split("\t")[3]


@pytest.fixture(scope="module")
def s():
    server = start_server()
    server.cli("user", "set-password", "admin", "--password-stdin", stdin=PASSWORDS["admin"] + "\n")
    server.cli("app", "create", "appa")
    server.cli("user", "create", "alice", "--app", "appa", "--role", "admin", "--password-stdin", stdin=PASSWORDS["alice"] + "\n")
    server.cli("user", "create", "bob", "--app", "appa", "--role", "member", "--password-stdin", stdin=PASSWORDS["bob"] + "\n")
    for name in ["carol", "dave"]:
        server.cli("user", "create", name, "--role", "member", "--password-stdin", stdin=PASSWORDS[name] + "\n")
    yield {"server": server, "alice": server.new_key("alice", app="appa")}
    server.stop()


def test_an_app_admin_cannot_pull_in_and_take_over_another_apps_admin(s):
    server, alice = s["server"], s["alice"]
    # The attack as reported: pull main's admin into appa, then set their password there.
    is_error, data, text = call(server, alice, "users_set_roles", {"user": "admin", "roles": ["viewer"]})
    assert not is_error and data["data"]["invited"] == ["viewer"] and data["data"]["roles"] == [], text
    assert "appa" not in memberships(server, "admin"), "an invitation is not a membership"
    is_error, _, text = call(server, alice, "update_user", {"id": "appa/admin", "user": {"password": "taken over by alice"}})
    assert "No changes" in text
    is_error, data, _ = call(server, alice, "get_users", {"owner": "appa"})
    assert "admin" not in [u["name"] for u in data["data"]]
    assert signs_in(server, "admin", PASSWORDS["admin"]) and not signs_in(server, "admin", "taken over by alice")


def test_an_invitation_is_accepted_in_the_console_and_the_account_stays_its_owners(s):
    server, alice = s["server"], s["alice"]
    call(server, alice, "users_set_roles", {"user": "admin", "roles": ["viewer"]})
    with httpx2.Client(follow_redirects=False) as browser:
        assert console_session(server, browser, "admin", PASSWORDS["admin"])
        page = browser.get(f"{server.base}/console").text
        assert "Invitations" in page and "appa" in page and "alice" in page
        r = console_form(server, browser, "/console/invitations/appa/accept")
        assert r.status_code == 303 and "invitation-accepted" in r.headers["location"]
        assert "appa:viewer" in memberships(server, "admin") and "main:admin" in memberships(server, "admin")
        # A replayed or forged form changes nothing.
        r = browser.post(f"{server.base}/console/invitations/appa/decline", content="csrf=forged", headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert r.status_code == 403
    # Now admin is in appa too, but belongs to main: their account is not appa's to change.
    for change in [{"password": "taken over by alice"}, {"email": "alice@evil.example"}, {"name": "admin2"}, {"displayName": "Pwned"}]:
        is_error, _, text = call(server, alice, "update_user", {"id": "appa/admin", "user": change})
        assert is_error and "also belongs to app 'main'" in text and "instance administrator" in text, (change, text)
    assert signs_in(server, "admin", PASSWORDS["admin"])
    # Casdoor clients send the whole user back: unchanged fields with a role change are fine, and the role is appa's to give.
    is_error, data, _ = call(server, alice, "get_user", {"id": "appa/admin"})
    is_error, _, text = call(server, alice, "update_user", {"id": "appa/admin", "user": {**data["data"], "type": "member", "password": "***"}})
    assert not is_error and "Successfully updated" in text, text
    assert "appa:member" in memberships(server, "admin")
    # A user of appa alone is appa's to manage, password included.
    is_error, _, text = call(server, alice, "update_user", {"id": "appa/bob", "user": {"password": "bob's new password"}})
    assert not is_error, text
    assert signs_in(server, "bob", "bob's new password")


def test_a_declined_invitation_leaves_no_membership(s):
    server, alice = s["server"], s["alice"]
    is_error, data, text = call(server, alice, "users_set_roles", {"user": "dave", "roles": ["member"]})
    assert data["data"]["invited"] == ["member"], text
    with httpx2.Client(follow_redirects=False) as browser:
        assert console_session(server, browser, "dave", PASSWORDS["dave"])
        r = console_form(server, browser, "/console/invitations/appa/decline")
        assert r.status_code == 303 and "invitation-declined" in r.headers["location"]
        assert "Invitations" not in browser.get(f"{server.base}/console").text
        # Nothing left to accept.
        r = browser.post(f"{server.base}/console/invitations/appa/accept", content=urlencode([("csrf", _csrf(browser, server))]),
                         headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert "no invitation to app" in r.text
    assert "appa" not in memberships(server, "dave")


def _csrf(browser: httpx2.Client, server) -> str:
    page = browser.get(f"{server.base}/console").text
    return next(v for k, v in form_fields(forms(page)[0]) if k == "csrf")


def test_an_instance_administrator_and_the_operator_add_and_change_users_of_other_apps(s):
    server = s["server"]
    # The operator at the command line adds main's admin to appa as its admin, at once.
    server.cli("user", "set-role", "admin", "--app", "appa", "--role", "admin")
    assert "appa:admin" in memberships(server, "admin")
    admin_on_appa = server.new_key("admin", app="appa")
    # Main's admin administers the instance: they add carol (of main only) to appa directly...
    is_error, data, text = call(server, admin_on_appa, "users_set_roles", {"user": "carol", "roles": ["viewer"]})
    assert not is_error and data["data"]["roles"] == ["viewer"] and "invited" not in data["data"], text
    assert "appa:viewer" in memberships(server, "carol")
    # ...and may change the account of a user of several apps; so may the user themself.
    is_error, _, text = call(server, admin_on_appa, "update_user", {"id": "appa/carol", "user": {"email": "carol@example.com"}})
    assert not is_error, text
    is_error, _, text = call(server, admin_on_appa, "update_user", {"id": "appa/admin", "user": {"displayName": "The admin"}})
    assert not is_error, text
    # The operator sets any password.
    server.cli("user", "set-password", "carol", "--password-stdin", stdin="carol's next password\n")
    assert signs_in(server, "carol", "carol's next password")


def test_a_key_has_at_most_its_users_rights_wherever_it_is_made(s):
    """Key-scope narrowing is one rule in the key store: the console's form, the command line and
    the tool refuse a scope the user's role (or the creating credential) does not allow."""
    server = s["server"]
    server.cli("user", "create", "vic", "--role", "viewer", "--password-stdin", stdin="vic views only\n")
    keys_of_vic = lambda: [l for l in server.cli("apikey", "list", "--user", "vic").stdout.splitlines()[1:] if l.strip()]
    with httpx2.Client(follow_redirects=False) as browser:
        assert console_session(server, browser, "vic", "vic views only")
        page = browser.get(f"{server.base}/console")
        form = next(f for f in forms(page.text) if f.get("action") == "/console/keys")
        offered = {i.get("value") for i in form["inputs"] if i.get("name") == "scope_choice"}
        assert "read:data" in offered and "write:data" not in offered, "the form offers what the role allows"
        # A forged form asks for more than the page offered: refused, and no key is made.
        fields = [(k, v) for k, v in form_fields(form, checked_scopes=set()) if k != "name"] + [("name", "forged"), ("scope_choice", "write:data")]
        r = browser.post(f"{server.base}/console/keys", content=urlencode(fields), headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert r.status_code == 200 and "does not allow write:data" in r.text, r.text[:2000]
        assert keys_of_vic() == []
        fields = [(k, v) for k, v in form_fields(form, checked_scopes={"read:data"}) if k != "name"] + [("name", "reader")]
        r = browser.post(f"{server.base}/console/keys", content=urlencode(fields), headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert r.status_code == 200 and "pk_" in r.text
        assert len(keys_of_vic()) == 1
    # The operator's command line holds the same rule for the user it makes a key for.
    refused = server.cli("apikey", "create", "--user", "vic", "--scopes", "read:data write:schema", check=False)
    assert refused.returncode != 0 and "does not allow write:schema" in refused.stderr, refused.stderr
    assert len(keys_of_vic()) == 1
    made = server.cli("apikey", "create", "--user", "vic", "--scopes", "read:data")
    assert made.stdout.strip().splitlines()[-1].startswith("pk_")
    # A key narrowed to some scopes makes keys no wider than itself, whatever the role allows.
    narrow = server.new_key("admin", scopes="read:data write:apikey")
    body, headers = modern_request("tools/call", {"name": "api_keys_create", "arguments": {"name": "wider", "scopes": ["write:data"]}})
    with httpx2.Client(headers={"Authorization": f"Bearer {narrow}"}, timeout=30) as c:
        r = post(c, f"{server.mcp}?packages=apikeys", body, headers)
    result = r.json()["result"]
    assert result.get("isError") and "your own credential does not have it" in result["content"][0]["text"], result


def test_the_console_makes_a_key_for_any_app_the_user_has_a_role_in(s):
    """bob belongs to appa only: the console used to make keys for main alone, which he could not
    use. Its form offers his apps; the key it makes opens appa's endpoint and no other, and a forged
    form naming an app he has no role in makes nothing."""
    server = s["server"]
    keys_of_bob = lambda: [l for l in server.cli("apikey", "list", "--user", "bob").stdout.splitlines()[1:] if l.strip()]
    before = len(keys_of_bob())
    server.cli("user", "set-password", "bob", "--password-stdin", stdin="bob signs in to the console\n")
    with httpx2.Client(follow_redirects=False) as browser:
        assert console_session(server, browser, "bob", "bob signs in to the console")
        form = next(f for f in forms(browser.get(f"{server.base}/console").text) if f.get("action") == "/console/keys")
        offered = [o for o in form.get("selects", {}).get("app", [])]
        assert offered == ["appa"], form
        fields = [(k, v) for k, v in form_fields(form, checked_scopes=set()) if k not in ("name", "app")]
        forged = browser.post(f"{server.base}/console/keys", content=urlencode(fields + [("name", "forged"), ("app", "main")]),
                              headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert forged.status_code == 200 and "has no role in app 'main'" in html.unescape(forged.text), forged.text[:2000]
        assert len(keys_of_bob()) == before
        made = browser.post(f"{server.base}/console/keys", content=urlencode(fields + [("name", "bob's agent"), ("app", "appa")]),
                            headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert made.status_code == 200
        key = next(w for w in made.text.replace("<", " ").replace(">", " ").split() if w.startswith("pk_") and not w.endswith("…"))
    assert len(keys_of_bob()) == before + 1
    body, headers = modern_request("tools/list", {})
    with httpx2.Client(headers={"Authorization": f"Bearer {key}"}, timeout=30) as c:
        listed = post(c, f"{server.base}/api/__app/appa/mcp", body, headers)
        assert listed.status_code == 200 and listed.json()["result"]["tools"], listed.text
        refused = post(c, server.mcp, body, headers)
    assert refused.status_code in (401, 403), refused.text


def test_an_admin_neither_demotes_nor_removes_themselves(s):
    """The rule is the user store's, so each tool that changes a role or a membership holds it."""
    server, alice = s["server"], s["alice"]
    # Another admin of appa, so that the app's last admin is not what refuses.
    server.cli("user", "set-role", "admin", "--app", "appa", "--role", "admin")
    for tool, arguments in [
        ("update_user", {"id": "appa/alice", "user": {"type": "member"}}),
        ("users_set_roles", {"user": "alice", "roles": ["viewer"]}),
    ]:
        is_error, _, text = call(server, alice, tool, arguments)
        assert is_error and "own admin role" in text, (tool, text)
    is_error, _, text = call(server, alice, "delete_user", {"confirm": True, "user": {"name": "alice"}})
    assert is_error and "cannot remove yourself" in text, text
    assert "appa:admin" in memberships(server, "alice")

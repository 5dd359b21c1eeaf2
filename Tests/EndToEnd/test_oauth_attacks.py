"""Attacks on tokens, the authorization endpoint, refresh and registration: each gets the RFC's error and leaves
no usable token behind."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import secrets
import time
from urllib.parse import parse_qs, urlencode, urlparse

import httpx2
import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

from conftest import start_server
from mcp_http import post
from oauth_helpers import REDIRECT, HeadlessUser, forms, form_fields

PASSWORD = "a perfectly fine password"


@pytest.fixture(scope="module")
def s():
    server = start_server("--access-token-ttl", "2")
    server.cli("user", "create", "ana", "--role", "member", "--password-stdin", stdin=PASSWORD + "\n")
    server.cli("app", "create", "other", "--admin", "ana")
    yield server
    server.stop()


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    return verifier, b64(hashlib.sha256(verifier.encode()).digest())


def register(s, redirect_uris=(REDIRECT,), method="none") -> dict:
    r = httpx2.post(f"{s.base}/oauth/register", json={"client_name": "attack-test", "redirect_uris": list(redirect_uris), "token_endpoint_auth_method": method})
    assert r.status_code == 201, r.text
    return r.json()


def authorize_url(s, client_id, challenge, **extra) -> str:
    params = {"response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT, "state": "st-Ω&=?", "code_challenge": challenge,
              "code_challenge_method": "S256", "scope": "mcp offline_access read:data", "resource": s.mcp}
    params.update({k: v for k, v in extra.items() if v is not None})
    for k in [k for k, v in extra.items() if v is None]:
        params.pop(k, None)
    return f"{s.base}/oauth/authorize?{urlencode(params)}"


def consent(url: str, user="ana", password=PASSWORD) -> str:
    async def go():
        async with httpx2.AsyncClient(follow_redirects=False, timeout=30) as browser:
            return await HeadlessUser(user, password).authorize(browser, url)
    return asyncio.run(go())


def code_flow(s, client, *, resource=None) -> tuple[dict, str, str]:
    verifier, challenge = pkce()
    location = consent(authorize_url(s, client["client_id"], challenge, resource=resource or s.mcp))
    q = parse_qs(urlparse(location).query)
    return q, verifier, location


def exchange(s, client, code, verifier, **extra):
    data = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "client_id": client["client_id"], "code_verifier": verifier, **extra}
    return httpx2.post(f"{s.base}/oauth/token", data={k: v for k, v in data.items() if v is not None})


def mcp_status(s, token) -> int:
    return httpx2.post(s.mcp, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers={"Authorization": f"Bearer {token}"}).status_code


def eventually_401(s, token, seconds=3.0):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if mcp_status(s, token) == 401:
            return True
        time.sleep(0.2)
    return False


@pytest.fixture(scope="module")
def tokens(s):
    client = register(s)
    q, verifier, _ = code_flow(s, client)
    r = exchange(s, client, q["code"][0], verifier)
    assert r.status_code == 200, r.text
    return client, r.json()


# --- Access tokens ---------------------------------------------------------------------------------

def forge(header: dict, payload: dict, key=None) -> str:
    signing_input = f"{b64(json.dumps(header).encode())}.{b64(json.dumps(payload).encode())}"
    if key is None:
        return signing_input + "."
    r, s_ = decode_dss_signature(key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
    return signing_input + "." + b64(r.to_bytes(32, "big") + s_.to_bytes(32, "big"))


def test_valid_token_works(s, tokens):
    _, t = tokens
    assert mcp_status(s, t["access_token"]) == 200


def test_alg_none_is_refused(s, tokens):
    _, t = tokens
    header, payload, _ = t["access_token"].split(".")
    claims = json.loads(unb64(payload))
    assert mcp_status(s, forge({"alg": "none", "typ": "JWT"}, claims)) == 401
    assert mcp_status(s, forge({"alg": "none", "typ": "JWT", "kid": json.loads(unb64(header))["kid"]}, claims)) == 401


def test_wrong_key_and_tampered_payload_are_refused(s, tokens):
    _, t = tokens
    header, payload, signature = t["access_token"].split(".")
    claims = json.loads(unb64(payload))
    attacker = ec.generate_private_key(ec.SECP256R1())
    assert mcp_status(s, forge(json.loads(unb64(header)), claims, attacker)) == 401
    claims["scope"] = "mcp admin"
    tampered = f"{header}.{b64(json.dumps(claims).encode())}.{signature}"
    r = httpx2.post(s.mcp, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers={"Authorization": f"Bearer {tampered}"})
    assert r.status_code == 401
    assert "not valid" in r.json()["error"]["data"]
    assert 'error="invalid_token"' in r.headers["www-authenticate"]


def test_expired_token_is_refused(s, tokens):
    _, t = tokens
    time.sleep(3)
    r = httpx2.post(s.mcp, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers={"Authorization": f"Bearer {t['access_token']}"})
    assert r.status_code == 401 and "expired" in r.json()["error"]["data"]


def test_token_for_another_apps_endpoint_is_refused(s):
    client = register(s)
    other = f"{s.base}/api/__app/other/mcp"
    q, verifier, _ = code_flow(s, client, resource=other)
    r = exchange(s, client, q["code"][0], verifier)
    token = r.json()["access_token"]
    assert httpx2.post(other, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers={"Authorization": f"Bearer {token}"}).status_code == 200
    r = httpx2.post(s.mcp, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 401 and "another resource" in r.json()["error"]["data"]
    # The PRM of the other app names its own resource, and Casdoor's per-app form agrees.
    assert httpx2.get(f"{s.base}/.well-known/oauth-protected-resource/api/__app/other/mcp").json()["resource"] == other
    assert httpx2.get(f"{s.base}/.well-known/other/oauth-protected-resource").json()["resource"] == other


# --- Authorization endpoint ------------------------------------------------------------------------

def test_pkce_is_required_and_only_s256(s):
    client = register(s)
    _, challenge = pkce()
    for extra, message in [({"code_challenge": None}, "PKCE is required"), ({"code_challenge_method": "plain"}, "S256"), ({"code_challenge_method": None}, "S256")]:
        r = httpx2.get(authorize_url(s, client["client_id"], challenge, **extra))
        assert r.status_code == 302, r.text
        q = parse_qs(urlparse(r.headers["location"]).query)
        assert q["error"] == ["invalid_request"] and message in q["error_description"][0]
        assert q["state"] == ["st-Ω&=?"] and q["iss"] == [s.base]


def test_wrong_or_missing_verifier_and_code_replay(s):
    client = register(s)
    q, verifier, _ = code_flow(s, client)
    code = q["code"][0]
    r = exchange(s, client, code, verifier[:-2] + "xx")
    assert r.status_code == 400 and r.json()["error"] == "invalid_grant"
    # The code was spent by that attempt: even the right verifier now fails, and nothing was issued.
    r = exchange(s, client, code, verifier)
    assert r.status_code == 400 and r.json()["error"] == "invalid_grant"

    q, verifier, _ = code_flow(s, client)
    r = exchange(s, client, q["code"][0], None)
    assert r.status_code == 400 and r.json()["error"] == "invalid_request"

    q, verifier, _ = code_flow(s, client)
    first = exchange(s, client, q["code"][0], verifier)
    assert first.status_code == 200
    replay = exchange(s, client, q["code"][0], verifier)
    assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"
    assert eventually_401(s, first.json()["access_token"]), "the replay revoked what the first use issued"
    r = httpx2.post(f"{s.base}/oauth/token", data={"grant_type": "refresh_token", "refresh_token": first.json()["refresh_token"], "client_id": client["client_id"]})
    assert r.json()["error"] == "invalid_grant"


def test_unregistered_redirects_are_never_followed(s):
    client = register(s, redirect_uris=["https://app.example/cb", "http://127.0.0.1:3030/callback"])
    _, challenge = pkce()
    attempts = [
        "https://evil.example/cb", "https://app.example/cb.evil.example", "https://app.example/cb/../../evil", "https://app.example/CB",
        "https://app.example/cb?next=https://evil.example", "https://app.example/cb#x", "http://app.example/cb",
        "https://evil.example@app.example/cb", "//evil.example/cb", "javascript:alert(1)", "http://127.0.0.1:3030/other",
    ]
    for uri in attempts:
        r = httpx2.get(authorize_url(s, client["client_id"], challenge, redirect_uri=uri))
        assert r.status_code == 400, (uri, r.status_code)
        assert "location" not in r.headers, uri
        assert "not registered" in r.text
    # A loopback redirect may use any port (RFC 8252), but not another path.
    r = httpx2.get(authorize_url(s, client["client_id"], challenge, redirect_uri="http://127.0.0.1:49152/callback"))
    assert r.status_code == 200 and "Sign in" in r.text
    r = httpx2.get(authorize_url(s, "no-such-client", challenge))
    assert r.status_code == 400 and "location" not in r.headers


def test_unknown_scope_and_resource(s):
    client = register(s)
    _, challenge = pkce()
    r = httpx2.get(authorize_url(s, client["client_id"], challenge, scope="mcp read:everything"))
    q = parse_qs(urlparse(r.headers["location"]).query)
    assert q["error"] == ["invalid_scope"] and "read:everything" in q["error_description"][0]
    r = httpx2.get(authorize_url(s, client["client_id"], challenge, resource="https://evil.example/api/mcp"))
    q = parse_qs(urlparse(r.headers["location"]).query)
    assert q["error"] == ["invalid_target"]


def test_state_is_echoed_exactly(s):
    client = register(s)
    q, _, location = code_flow(s, client)
    assert q["state"] == ["st-Ω&=?"]
    assert q["iss"] == [s.base]


def test_consent_without_csrf_token_issues_nothing(s):
    client = register(s)
    _, challenge = pkce()
    url = authorize_url(s, client["client_id"], challenge)
    with httpx2.Client(follow_redirects=False) as browser:
        page = browser.get(url)
        form = forms(page.text)[0]
        fields = [(k, v) for k, v in form_fields(form) if k not in ("username", "password")] + [("username", "ana"), ("password", PASSWORD)]
        r = browser.post(f"{s.base}/oauth/authorize", content=urlencode(fields), headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert r.status_code == 303
        consent_page = browser.get(s.base + r.headers["location"])
        form = next(f for f in forms(consent_page.text) if f["action"] == "/oauth/authorize")
        fields = [(k, v) for k, v in form_fields(form) if k != "csrf"] + [("decision", "approve")]
        r = browser.post(f"{s.base}/oauth/authorize", content=urlencode(fields), headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert r.status_code == 403 and "CSRF" in r.text and "location" not in r.headers
        forged = [(k, v) for k, v in fields] + [("csrf", "forged-token")]
        r = browser.post(f"{s.base}/oauth/authorize", content=urlencode(forged), headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert r.status_code == 403 and "location" not in r.headers
        # The login form needs its token too.
        r = httpx2.post(f"{s.base}/oauth/authorize", content=urlencode([("action", "login"), ("username", "ana"), ("password", PASSWORD)] + [(k, v) for k, v in parse_qs(urlparse(url).query, keep_blank_values=True).items() for v in v]), headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert r.status_code == 403


def test_session_cookie_flags(s):
    client = register(s)
    _, challenge = pkce()
    with httpx2.Client(follow_redirects=False) as browser:
        page = browser.get(authorize_url(s, client["client_id"], challenge))
        assert "HttpOnly" in page.headers["set-cookie"] and "SameSite=Lax" in page.headers["set-cookie"]
        assert page.headers["x-frame-options"] == "DENY"
        form = forms(page.text)[0]
        fields = [(k, v) for k, v in form_fields(form) if k not in ("username", "password")] + [("username", "ana"), ("password", PASSWORD)]
        r = browser.post(f"{s.base}/oauth/authorize", content=urlencode(fields), headers={"Content-Type": "application/x-www-form-urlencoded"})
        cookie = r.headers["set-cookie"]
        assert cookie.startswith("portico_session=") and "HttpOnly" in cookie and "SameSite=Lax" in cookie
        assert "Secure" not in cookie, "plain-http loopback: Secure only behind https"


def test_login_is_throttled(s):
    s.cli("user", "create", "tess", "--role", "viewer", "--password-stdin", stdin=PASSWORD + "\n")
    client = register(s)
    _, challenge = pkce()
    url = authorize_url(s, client["client_id"], challenge)
    statuses = []
    with httpx2.Client(follow_redirects=False) as browser:
        for attempt in range(7):
            page = browser.get(url)
            form = forms(page.text)[0]
            fields = [(k, v) for k, v in form_fields(form) if k not in ("username", "password")] + [("username", "tess"), ("password", "wrong guess")]
            r = browser.post(f"{s.base}/oauth/authorize", content=urlencode(fields), headers={"Content-Type": "application/x-www-form-urlencoded"})
            statuses.append(r.status_code)
        assert statuses[:5] == [401] * 5 and statuses[5] == 429 and "Too many failed sign-ins" in r.text
        page = browser.get(url)
        form = forms(page.text)[0]
        fields = [(k, v) for k, v in form_fields(form) if k not in ("username", "password")] + [("username", "tess"), ("password", PASSWORD)]
        r = browser.post(f"{s.base}/oauth/authorize", content=urlencode(fields), headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert r.status_code == 429, "even the right password waits out the lockout"


# --- Refresh and revocation -----------------------------------------------------------------------

def test_refresh_reuse_revokes_the_family(s):
    client = register(s)
    q, verifier, _ = code_flow(s, client)
    first = exchange(s, client, q["code"][0], verifier).json()
    second = httpx2.post(f"{s.base}/oauth/token", data={"grant_type": "refresh_token", "refresh_token": first["refresh_token"], "client_id": client["client_id"]}).json()
    assert second["refresh_token"] != first["refresh_token"]
    reuse = httpx2.post(f"{s.base}/oauth/token", data={"grant_type": "refresh_token", "refresh_token": first["refresh_token"], "client_id": client["client_id"]})
    assert reuse.status_code == 400 and reuse.json()["error"] == "invalid_grant"
    third = httpx2.post(f"{s.base}/oauth/token", data={"grant_type": "refresh_token", "refresh_token": second["refresh_token"], "client_id": client["client_id"]})
    assert third.json()["error"] == "invalid_grant"
    assert eventually_401(s, second["access_token"])


def test_a_refused_refresh_leaves_the_token_usable(s):
    client = register(s)
    q, verifier, _ = code_flow(s, client)
    first = exchange(s, client, q["code"][0], verifier).json()
    base = {"grant_type": "refresh_token", "refresh_token": first["refresh_token"], "client_id": client["client_id"]}
    wider = httpx2.post(f"{s.base}/oauth/token", data={**base, "scope": "mcp admin"})
    assert wider.status_code == 400 and wider.json()["error"] == "invalid_scope"
    elsewhere = httpx2.post(f"{s.base}/oauth/token", data={**base, "resource": "https://elsewhere.example/mcp"})
    assert elsewhere.status_code == 400 and elsewhere.json()["error"] == "invalid_target"
    retry = httpx2.post(f"{s.base}/oauth/token", data=base)
    assert retry.status_code == 200, retry.text
    token = retry.json()["access_token"]
    r = httpx2.post(s.mcp, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 200, "the grant survived the refused refreshes"


def test_refresh_needs_offline_access(s):
    client = register(s)
    verifier, challenge = pkce()
    location = consent(authorize_url(s, client["client_id"], challenge, scope="mcp read:data"))
    q = parse_qs(urlparse(location).query)
    body = exchange(s, client, q["code"][0], verifier).json()
    assert "refresh_token" not in body


def test_revocation_endpoint(s):
    client = register(s)
    q, verifier, _ = code_flow(s, client)
    body = exchange(s, client, q["code"][0], verifier).json()
    r = httpx2.post(f"{s.base}/oauth/revoke", data={"token": body["access_token"], "client_id": client["client_id"]})
    assert r.status_code == 200
    assert eventually_401(s, body["access_token"])
    r = httpx2.post(f"{s.base}/oauth/revoke", data={"token": body["refresh_token"], "token_type_hint": "refresh_token", "client_id": client["client_id"]})
    assert r.status_code == 200
    r = httpx2.post(f"{s.base}/oauth/token", data={"grant_type": "refresh_token", "refresh_token": body["refresh_token"], "client_id": client["client_id"]})
    assert r.json()["error"] == "invalid_grant"
    assert httpx2.post(f"{s.base}/oauth/revoke", data={"token": "nonsense", "client_id": client["client_id"]}).status_code == 200


# --- Registration ---------------------------------------------------------------------------------

@pytest.mark.parametrize("body,error", [
    ({"redirect_uris": ["http://evil.example/cb"]}, "invalid_redirect_uri"),
    ({"redirect_uris": ["ftp://x/cb"]}, "invalid_redirect_uri"),
    ({"redirect_uris": ["com.example.app:/cb"]}, "invalid_redirect_uri"),
    ({"redirect_uris": ["https://app.example/cb#frag"]}, "invalid_redirect_uri"),
    ({"redirect_uris": ["https://app.example/cb#"]}, "invalid_redirect_uri"),
    ({"redirect_uris": ["https://*.example.com/cb"]}, "invalid_redirect_uri"),
    ({"redirect_uris": ["https://app*.example.com/cb"]}, "invalid_redirect_uri"),
    ({}, "invalid_redirect_uri"),
    ({"redirect_uris": "https://app.example/cb"}, "invalid_client_metadata"),
    ({"redirect_uris": ["https://app.example/cb"], "grant_types": ["password"]}, "invalid_client_metadata"),
    ({"redirect_uris": ["https://app.example/cb"], "token_endpoint_auth_method": "private_key_jwt"}, "invalid_client_metadata"),
    ({"redirect_uris": ["https://app.example/cb"], "scope": "read:everything"}, "invalid_client_metadata"),
    ({"redirect_uris": ["https://app.example/cb"], "application_type": "toaster"}, "invalid_client_metadata"),
    ([1, 2], "invalid_client_metadata"),
])
def test_registration_refuses_bad_metadata(s, body, error):
    r = httpx2.post(f"{s.base}/oauth/register", json=body)
    assert r.status_code == 400, r.text
    assert r.json()["error"] == error


def test_registration_accepts_https_and_loopback(s):
    for uris in (["https://app.example/cb"], ["http://localhost:8765/callback"], ["http://[::1]:1234/cb"]):
        r = httpx2.post(f"{s.base}/oauth/register", json={"redirect_uris": uris, "client_name": "ok"})
        assert r.status_code == 201, (uris, r.text)
        assert r.json()["token_endpoint_auth_method"] == "client_secret_basic" and r.json()["client_secret"]
    r = httpx2.post(f"{s.base}/oauth/register", content=b"not json", headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and r.json()["error"] == "invalid_client_metadata"

"""Sign-in throttling behind a load balancer, as deployed: failures lock the account tried; an
address is locked only when it is one client's own, which behind a proxy Portico knows only when
the proxy is trusted (`--trusted-proxy`); X-Forwarded-For from anyone else is ignored, for
throttling and for applications' IP allow-lists alike. Both backends."""

from __future__ import annotations

import httpx2
import pytest
from conftest import start_server
from mcp_http import post
from oauth_helpers import console_sign_in

PASSWORD = "the right password"


def sign_in(server, user: str, password: str, forwarded_for: str | None = None) -> int:
    headers = {"X-Forwarded-For": forwarded_for} if forwarded_for else {}
    with httpx2.Client(follow_redirects=False, headers=headers) as browser:
        return console_sign_in(browser, server.base, user, password).status_code


def add_fenced_application(server) -> dict:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add_application", "arguments": {"application": {
        "name": "fenced", "grantTypes": ["client_credentials"], "scopes": ["read:application"], "ipWhitelist": "203.0.113.0/24"}}}}
    with server.http() as c:
        r = post(c, server.mcp, body, {"x-mcp-packages": "*"})
    return r.json()["result"]["structuredContent"]["data"]


def client_token(server, app: dict, forwarded_for: str) -> int:
    return httpx2.post(f"{server.base}/oauth/token", data={"grant_type": "client_credentials", "scope": "read:application"},
                       auth=(app["clientId"], app["clientSecret"]), headers={"X-Forwarded-For": forwarded_for}).status_code


@pytest.fixture(scope="module")
def direct():
    """No proxy configured: every request is from loopback, as behind a proxy on the same host."""
    s = start_server()
    s.cli("user", "create", "rita", "--role", "viewer", "--password-stdin", stdin=PASSWORD + "\n")
    yield s
    s.stop()


@pytest.fixture(scope="module")
def proxied():
    s = start_server("--trusted-proxy", "127.0.0.1")
    for name in ["rita", "sam"]:
        s.cli("user", "create", name, "--role", "viewer", "--password-stdin", stdin=PASSWORD + "\n")
    yield s
    s.stop()


def test_many_failures_from_a_shared_address_lock_no_one_else_out(direct):
    # Twenty-five wrong guesses at other accounts, all from the one address everybody shares here
    # (a forged X-Forwarded-For changes nothing): rita still signs in.
    for n in range(25):
        assert sign_in(direct, f"ghost{n}", "wrong guess", forwarded_for=f"198.51.100.{n}") == 401
    assert sign_in(direct, "rita", PASSWORD) == 303
    # The account tried is what locks.
    for _ in range(5):
        assert sign_in(direct, "rita", "wrong guess") == 401
    assert sign_in(direct, "rita", PASSWORD) == 429


def test_a_trusted_proxys_client_address_is_throttled_on_its_own(proxied):
    for n in range(20):
        assert sign_in(proxied, f"ghost{n}", "wrong guess", forwarded_for="203.0.113.7") == 401
    # That client is locked out, even with the right password; another client behind the same proxy is not.
    assert sign_in(proxied, "rita", PASSWORD, forwarded_for="203.0.113.7") == 429
    assert sign_in(proxied, "rita", PASSWORD, forwarded_for="198.51.100.9") == 303
    # A client cannot pick its own address: the proxy's appended entry is the one read.
    assert sign_in(proxied, "sam", PASSWORD, forwarded_for="198.51.100.9, 203.0.113.7") == 429
    assert sign_in(proxied, "sam", PASSWORD, forwarded_for="203.0.113.7, 198.51.100.10") == 303


def test_ip_allow_lists_read_the_forwarded_address_only_from_a_trusted_proxy(direct, proxied):
    fenced = add_fenced_application(proxied)
    assert client_token(proxied, fenced, "203.0.113.8") == 200
    assert client_token(proxied, fenced, "198.51.100.8") == 403
    fenced = add_fenced_application(direct)
    assert client_token(direct, fenced, "203.0.113.8") == 403, "a forged header from an untrusted peer is ignored"


def test_a_bad_trusted_proxy_is_refused_at_start(tmp_path):
    from conftest import BINARY
    import subprocess
    r = subprocess.run([BINARY, "serve", "--trusted-proxy", "not-an-address", "--data-dir", str(tmp_path), "--port", "0"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "--trusted-proxy" in r.stderr, r.stderr

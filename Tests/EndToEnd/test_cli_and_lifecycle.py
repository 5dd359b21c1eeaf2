"""The command line, configuration from the environment, the demo, health checks and graceful shutdown."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import tempfile
import threading
import time

import httpx2
import pytest

from conftest import BINARY, free_port, run_cli, start_server, storage_env


@pytest.mark.parametrize("args", [[], ["serve"], ["user"], ["user", "create"], ["user", "list"], ["user", "set-password"], ["apikey"], ["apikey", "create"], ["apikey", "list"], ["apikey", "revoke"]])
def test_every_command_has_help(args):
    r = subprocess.run([BINARY, *args, "--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "USAGE" in r.stdout.upper()
    assert len(r.stdout) > 100


def test_apikey_create_prints_the_key_alone_on_the_last_line(tmp_path):
    d = str(tmp_path)
    run_cli("user", "create", "alice", "--role", "member", data_dir=d)
    out = run_cli("apikey", "create", "--user", "alice", "--scopes", "read:data", "--expires-in", "30d", data_dir=d).stdout
    key = out.strip().splitlines()[-1]
    assert key.startswith("pk_") and " " not in key
    listing = run_cli("apikey", "list", data_dir=d).stdout
    key_id = key.split("_")[1]
    assert key_id in listing and "read:data" in listing and "active" in listing
    assert key.split("_")[2] not in listing, "the secret is never shown again"
    run_cli("apikey", "revoke", key_id, data_dir=d)
    assert "revoked" in run_cli("apikey", "list", data_dir=d).stdout
    bad = run_cli("apikey", "create", "--user", "alice", "--scopes", "read:everything", data_dir=d, check=False)
    assert bad.returncode != 0 and "unknown scope" in bad.stderr
    bad = run_cli("apikey", "create", "--user", "nobody", data_dir=d, check=False)
    assert bad.returncode != 0 and "no user named 'nobody'" in bad.stderr
    bad = run_cli("apikey", "create", "--user", "alice", "--expires-in", "soon", data_dir=d, check=False)
    assert bad.returncode != 0 and "duration" in bad.stderr


def test_user_commands(tmp_path):
    d = str(tmp_path)
    out = run_cli("user", "create", "bob", "--email", "bob@example.com", "--role", "viewer", data_dir=d).stdout
    assert "Password (shown once)" in out
    run_cli("user", "create", "carol", "--password-stdin", data_dir=d, stdin="correct horse battery\n")
    listing = run_cli("user", "list", data_dir=d).stdout
    assert "bob" in listing and "main:viewer" in listing and "carol" in listing and "main:member" in listing
    assert "correct horse" not in listing
    assert "New password" in run_cli("user", "set-password", "bob", data_dir=d).stdout
    dup = run_cli("user", "create", "bob", data_dir=d, check=False)
    assert dup.returncode != 0 and "already exists" in dup.stderr
    short = run_cli("user", "create", "dave", "--password-stdin", data_dir=d, stdin="short\n", check=False)
    assert short.returncode != 0 and "at least 8" in short.stderr
    badname = run_cli("user", "create", "no spaces", data_dir=d, check=False)
    assert badname.returncode != 0 and "user name" in badname.stderr


def test_health_and_readiness(server):
    assert httpx2.get(f"{server.base}/healthz").text == "ok\n"
    r = httpx2.get(f"{server.base}/readyz")
    assert r.status_code == 200 and r.json() == {"status": "ready"}
    assert r.headers["x-request-id"]


def test_demo_is_idempotent_and_settings_come_from_the_environment(tmp_path):
    d = str(tmp_path)
    first = start_server(data_dir=d)
    try:
        assert first.api_key and "claude mcp add --transport http portico" in first.banner
        assert "codex mcp add portico" in first.banner and "opencode.json" in first.banner
    finally:
        first.stop()
    port = free_port()
    second = subprocess.Popen([BINARY, "serve", "--demo"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env={**os.environ, **storage_env(d), "PORTICO_PORT": str(port), "PORTICO_DATA_DIR": d})
    try:
        deadline = time.time() + 60
        ok = False
        while time.time() < deadline:
            try:
                if httpx2.get(f"http://127.0.0.1:{port}/healthz").status_code == 200:
                    ok = True
                    break
            except httpx2.TransportError:
                time.sleep(0.2)
        assert ok, "PORTICO_PORT and PORTICO_DATA_DIR were honoured"
        with httpx2.Client(headers={"Authorization": f"Bearer {first.api_key}"}) as c:
            r = c.post(f"http://127.0.0.1:{port}/api/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "resource_list", "arguments": {"resource": "Artist", "pageSize": 1}}})
            assert r.json()["result"]["structuredContent"]["meta"]["count"] == 275, "the first start's data and key are reused"
    finally:
        second.send_signal(signal.SIGTERM)
        out, _ = second.communicate(timeout=30)
    assert "API key:     create one with" in out
    assert second.returncode == 0


def test_graceful_shutdown_lets_a_request_in_flight_finish(tmp_path):
    s = start_server(data_dir=str(tmp_path))
    body = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"resource_get","arguments":{"resource":"Genre","filterByTk":1}}}'
    sock = socket.create_connection(("127.0.0.1", s.port))
    head = (f"POST /api/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {s.api_key}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    sock.sendall(head + body[:20])
    time.sleep(0.3)
    s.process.send_signal(signal.SIGTERM)
    time.sleep(0.5)
    assert s.process.poll() is None, "the server waits for the request in flight"
    sock.sendall(body[20:])
    response = b""
    sock.settimeout(10)
    while b'"Rock"' not in response:
        chunk = sock.recv(65536)
        if not chunk:
            break
        response += chunk
    sock.close()
    assert response.startswith(b"HTTP/1.1 200"), response[:200]
    assert b'"Rock"' in response
    assert s.process.wait(timeout=30) == 0


def test_shutdown_closes_open_event_streams(tmp_path):
    s = start_server(data_dir=str(tmp_path))
    from mcp_http import initialize
    with s.http() as c:
        session, _ = initialize(c, s.mcp)
    ended = threading.Event()

    def listen():
        with httpx2.Client(headers={"Authorization": f"Bearer {s.api_key}"}, timeout=60) as c:
            with c.stream("GET", s.mcp, headers={"Mcp-Session-Id": session, "Accept": "text/event-stream"}) as r:
                for _ in r.iter_raw():
                    pass
        ended.set()

    t = threading.Thread(target=listen, daemon=True)
    t.start()
    time.sleep(0.5)
    started = time.time()
    assert s.stop(timeout=30) == 0
    assert time.time() - started < 15
    assert ended.wait(10)

"""Portico on PostgreSQL as its users run it when one machine is not enough: replicas sharing one
database, and the database going away under load. Each test starts its own throwaway cluster
(Tests/pg_cluster.sh), so stopping it disturbs nothing else. Run in the PostgreSQL pass of `make test`."""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import httpx2
import pytest
from conftest import BACKEND, BINARY, free_port, start_server
from mcp_http import StreamListener

# Portico's schema migrations (Sources/PorticoData/CoreMigrations.swift): a new one is counted here.
MIGRATIONS = 19

pytestmark = pytest.mark.skipif(BACKEND != "postgres", reason="replica and database-fault tests run in the PostgreSQL pass")

ROOT = Path(__file__).resolve().parents[2]


class Cluster:
    """A PostgreSQL cluster of this test's own, with an empty database `portico`."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="portico-pg-")
        self.script = str(ROOT / "Tests" / "pg_cluster.sh")
        subprocess.run(["bash", self.script, "start", self.dir], check=True, capture_output=True)
        chinook = Path(self.dir, "url").read_text().strip()
        subprocess.run(["psql", chinook, "-q", "-c", "CREATE DATABASE portico"], check=True, capture_output=True)
        self.url = re.sub(r"/chinook(\?|$)", r"/portico\1", chinook)

    def down(self):
        subprocess.run(["bash", self.script, "down", self.dir], check=True, capture_output=True)

    def up(self):
        subprocess.run(["bash", self.script, "up", self.dir], check=True, capture_output=True)

    def remove(self):
        subprocess.run(["bash", self.script, "stop", self.dir], capture_output=True)


@pytest.fixture
def cluster():
    c = Cluster()
    yield c
    c.remove()


def call(client: httpx2.Client, url: str, name: str, arguments: dict, request_id: int = 1) -> httpx2.Response:
    r = client.post(url, json={"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": name, "arguments": arguments}},
                    headers={"Accept": "application/json, text/event-stream", "Content-Type": "application/json"})
    assert r.status_code in (200, 503), r.text
    return r


def test_the_database_going_away_under_load_gives_clear_503s_and_service_comes_back(cluster):
    server = start_server(env={"PORTICO_DATABASE_URL": cluster.url})
    try:
        key = server.api_key
        # A second app, on a schema with a pool of its own: a clear 503 during the outage, served again after.
        server.cli("app", "create", "eu", "--demo", "--admin", "admin", env={"PORTICO_DATABASE_URL": cluster.url})
        eu = f"{server.base}/api/__app/eu/mcp"
        eu_key = server.cli("apikey", "create", "--user", "admin", "--app", "eu", env={"PORTICO_DATABASE_URL": cluster.url}).stdout.strip().splitlines()[-1]
        with server.http(key=eu_key) as c:
            assert call(c, eu, "resource_get", {"resource": "Artist", "filterByTk": 1}).status_code == 200
        outcomes: list[tuple[float, int, str]] = []
        stop = threading.Event()

        def load():
            with server.http(key=key) as c:
                i = 0
                while not stop.is_set():
                    i += 1
                    name, args = ("resource_create", {"resource": "Genre", "values": {"Name": f"g{i}"}}) if i % 5 == 0 else \
                        ("resource_get", {"resource": "Artist", "filterByTk": 1 + i % 200})
                    try:
                        r = call(c, server.mcp, name, args, i)
                        outcomes.append((time.time(), r.status_code, r.text[:300] + " retry-after=" + r.headers.get("retry-after", "")))
                    except httpx2.TransportError as e:
                        outcomes.append((time.time(), 0, repr(e)))
                    time.sleep(0.01)

        workers = [threading.Thread(target=load) for _ in range(4)]
        for w in workers:
            w.start()
        time.sleep(1.5)
        going_down = time.time()
        cluster.down()
        went_down = time.time()
        time.sleep(8)
        ready = httpx2.get(f"{server.base}/readyz", timeout=30)
        assert ready.status_code == 503, "readiness fails while the database is unreachable"
        with server.http(key=eu_key) as c:
            asked = time.time()
            r = call(c, eu, "resource_get", {"resource": "Artist", "filterByTk": 2})
            assert r.status_code == 503 and time.time() - asked < 2, (r.status_code, time.time() - asked)
        going_up = time.time()
        cluster.up()
        came_back = time.time()
        time.sleep(6)
        stop.set()
        for w in workers:
            w.join(timeout=60)

        assert server.process.poll() is None, "the server is still running"
        before = [o for o in outcomes if o[0] < going_down]
        during = [o for o in outcomes if went_down + 6 < o[0] < going_up]
        after = [o for o in outcomes if o[0] > came_back + 4]
        assert before and all(o[1] == 200 and '"isError":true' not in o[2] for o in before), [o for o in before if o[1] != 200 or '"isError":true' in o[2]][:3]
        assert during, "requests were answered while the database was down"
        assert all(o[1] == 503 and "retry-after=5" in o[2] and "database" in o[2] for o in during), [o for o in during if o[1] != 503][:3]
        assert after and all(o[1] == 200 and '"isError":true' not in o[2] for o in after), [o for o in after if o[1] != 200][:3]
        assert httpx2.get(f"{server.base}/readyz").status_code == 200
        with server.http(key=eu_key) as c:
            assert call(c, eu, "resource_get", {"resource": "Artist", "filterByTk": 2}).status_code == 200, "the app's pool came back too"
    finally:
        server.stop()


class Replicas:
    """Three `portico serve` processes on one PostgreSQL database with the same master key, behind
    Debian's nginx balancing round-robin (no sticky sessions), all started at once."""

    def __init__(self, cluster: Cluster, count: int = 3, demo: bool = False, extra: list[str] | None = None):
        import base64

        self.cluster = cluster
        self.env = {**os.environ, "PORTICO_DATABASE_URL": cluster.url, "PORTICO_MASTER_KEY": base64.b64encode(os.urandom(32)).decode()}
        self.dir = tempfile.mkdtemp(prefix="portico-replicas-")
        os.chmod(self.dir, 0o777)
        self.port = free_port()
        self.ports = [free_port() for _ in range(count)]
        self.logs = [Path(self.dir, f"replica-{i}.log") for i in range(count)]
        self.processes = []
        for i, port in enumerate(self.ports):
            data = Path(self.dir, f"data-{i}")
            self.processes.append(subprocess.Popen(
                [BINARY, "serve", "--port", str(port), "--data-dir", str(data), "--public-url", self.base] + (["--demo"] if demo else []) + (extra or []),
                stdout=subprocess.DEVNULL, stderr=open(self.logs[i], "w"), env=self.env))
        for port in self.ports:
            wait_until(lambda: healthy(f"http://127.0.0.1:{port}"), 60, f"replica on {port} came up")
        upstreams = "".join(f"    server 127.0.0.1:{p};\n" for p in self.ports)
        Path(self.dir, "nginx.conf").write_text(f"""worker_processes 1;
error_log {self.dir}/nginx-error.log;
pid {self.dir}/nginx.pid;
events {{ worker_connections 1024; }}
http {{
  log_format upstream '$request_method $uri $status $http_x_probe $upstream_addr';
  access_log {self.dir}/access.log upstream;
  client_body_temp_path {self.dir}/body;
  proxy_temp_path {self.dir}/proxy;
  fastcgi_temp_path {self.dir}/fastcgi;
  uwsgi_temp_path {self.dir}/uwsgi;
  scgi_temp_path {self.dir}/scgi;
  upstream portico {{
{upstreams}    keepalive 16;
  }}
  server {{
    listen 127.0.0.1:{self.port};
    location / {{
      proxy_pass http://portico;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $remote_addr;
      proxy_buffering off;
      proxy_read_timeout 300s;
    }}
  }}
}}
""")
        self.nginx = subprocess.Popen(["nginx", "-p", self.dir, "-c", f"{self.dir}/nginx.conf", "-g", "daemon off;"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wait_until(lambda: healthy(self.base), 20, "nginx came up")

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def mcp(self) -> str:
        return f"{self.base}/api/mcp"

    def replica(self, i: int) -> str:
        return f"http://127.0.0.1:{self.ports[i]}"

    def cli(self, *args: str, stdin: str | None = None) -> str:
        result = subprocess.run([BINARY, *args, "--data-dir", str(Path(self.dir, "cli"))], input=stdin, capture_output=True, text=True,
                                timeout=120, env=self.env)
        assert result.returncode == 0, result.stderr
        return result.stdout

    def upstreams(self, probe: str, count: int) -> list[str]:
        """The replica (host:port) nginx sent each of the `count` requests carrying `X-Probe: probe` to, in order.
        nginx logs a request after answering it, so the lines are waited for."""
        def lines() -> list[list[str]]:
            return [fields for line in Path(self.dir, "access.log").read_text().splitlines() if (fields := line.split())[-2] == probe]
        wait_until(lambda: len(lines()) >= count, 10, f"nginx logged {count} requests probed {probe}")
        return [fields[-1] for fields in lines()]

    def stop(self):
        self.nginx.terminate()
        for p in self.processes:
            p.terminate()
        for p in [self.nginx, *self.processes]:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()


def healthy(base: str) -> bool:
    try:
        return httpx2.get(f"{base}/healthz", timeout=2).status_code == 200
    except httpx2.TransportError:
        return False


def wait_until(condition, seconds: float, what: str):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"not within {seconds} s: {what}")


def bearer(key: str) -> dict:
    return {"Authorization": f"Bearer {key}", "Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def ping(base: str, key: str) -> int:
    return httpx2.post(f"{base}/api/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=bearer(key), timeout=10).status_code


@pytest.fixture
def replicas(cluster):
    r = Replicas(cluster)
    yield r
    r.stop()


def test_three_replicas_behind_nginx_serve_as_one(replicas):
    import asyncio

    from mcp import Client
    from mcp.client.auth import OAuthClientProvider
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.auth import OAuthClientMetadata
    from oauth_helpers import REDIRECT, HeadlessUser, MemoryStorage

    # Started together, they applied each migration exactly once between them.
    applied = [line for log in replicas.logs for line in log.read_text().splitlines() if "applied migration" in line]
    versions = sorted(int(re.search(r"version=(\d+)", line).group(1)) for line in applied)
    assert versions == list(range(1, MIGRATIONS + 1)), applied

    replicas.cli("user", "create", "ada", "--role", "admin", "--password-stdin", stdin="a long admin password\n")
    replicas.cli("user", "create", "olive", "--role", "viewer", "--password-stdin", stdin="correct horse battery staple\n")
    admin_key = replicas.cli("apikey", "create", "--user", "ada").strip().splitlines()[-1]

    # An OAuth sign-in through nginx: discovery, registration, the login and consent pages, the
    # token, then an MCP session whose requests land on every replica in turn.
    user = HeadlessUser("olive", "correct horse battery staple")
    storage = MemoryStorage()
    provider = OAuthClientProvider(
        server_url=replicas.mcp, client_metadata=OAuthClientMetadata(client_name="replicas-e2e", redirect_uris=[REDIRECT]),
        storage=storage, redirect_handler=user.redirect_handler, callback_handler=user.callback_handler)

    async def session():
        async with httpx2.AsyncClient(auth=provider, timeout=30) as http:
            async with Client(streamable_http_client(replicas.mcp, http_client=http), mode="legacy") as client:
                for _ in range(4):
                    names = {t.name for t in (await client.list_tools()).tools}
                    assert "resource_list" in names and "resource_create" not in names, names
                    await client.send_ping()

    asyncio.run(session())
    assert user.consents == 1 and storage.tokens.access_token
    mcp_upstreams = {line.split()[-1] for line in Path(replicas.dir, "access.log").read_text().splitlines() if " /api/mcp " in line}
    assert len(mcp_upstreams) == 3, f"the session's requests were served by every replica: {mcp_upstreams}"
    token = storage.tokens.access_token
    assert all(ping(replicas.replica(i), token) == 200 for i in range(3)), "the token works on every replica"

    # A role change made on one replica reaches the user's event stream held by another.
    olive_key = replicas.cli("apikey", "create", "--user", "olive").strip().splitlines()[-1]
    with httpx2.Client(headers=bearer(olive_key), timeout=20) as c:
        r = c.post(f"{replicas.replica(0)}/api/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "e2e", "version": "1"}}})
        session_id = r.headers["mcp-session-id"]
    stream = StreamListener(f"{replicas.replica(1)}/api/mcp", {**bearer(olive_key), "Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-11-25"},
                            b"list_changed")
    assert stream.opened.wait(10), "the event stream opened on replica 1"
    changed_at = time.time()
    r = httpx2.post(f"{replicas.replica(2)}/api/mcp?packages=users", headers=bearer(admin_key), timeout=20, json={
        "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "update_user", "arguments": {"id": "main/olive", "user": {"type": "member"}}}})
    assert r.json()["result"]["content"][0]["text"] == "Successfully updated user", r.text
    assert b"notifications/tools/list_changed" in stream.wait(), "replica 1 told the stream of a change made on replica 2"
    assert time.time() - changed_at < 2

    # A slow call running on replica 0 is cancelled by a notifications/cancelled sent to replica 1
    # (the client's next request landed elsewhere): the call ends at once with "Request cancelled".
    slow = ("WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 1000000000) "
            "SELECT count(*) FROM c")
    with httpx2.Client(headers=bearer(admin_key), timeout=30) as c:
        from mcp_http import initialize
        session, _ = initialize(c, f"{replicas.replica(0)}/api/mcp?packages=ask")
        headers = {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
        answer = {}

        def call():
            started = time.time()
            r = c.post(f"{replicas.replica(0)}/api/mcp?packages=ask", headers=headers, json={
                "jsonrpc": "2.0", "id": 77, "method": "tools/call", "params": {"name": "sql_query", "arguments": {"sql": slow}}})
            answer["seconds"], answer["response"] = time.time() - started, r

        runner = threading.Thread(target=call)
        runner.start()
        time.sleep(1.5)
        r = c.post(f"{replicas.replica(1)}/api/mcp", headers=headers, json={
            "jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 77, "reason": "the user gave up"}})
        assert r.status_code == 202, r.text
        cancelled_at = time.time()
        runner.join(30)
        body = answer["response"].json()
        assert body.get("error", {}).get("code") == -32800, body
        assert answer["seconds"] < 5, f"the call ran {answer['seconds']:.1f} s; the statement alone would run 10 s"
        print(f"FIGURE a call on replica 0 cancelled from replica 1, answered {time.time() - cancelled_at:.3f} s after the cancellation")

    # A key revoked on one replica stops working on all of them within a second.
    key_id = admin_key.split("_")[1]
    assert all(ping(replicas.replica(i), admin_key) == 200 for i in range(3))
    r = httpx2.post(f"{replicas.replica(0)}/api/mcp?packages=apikeys", headers=bearer(admin_key), timeout=20, json={
        "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "api_keys_list", "arguments": {}}})
    assert r.status_code == 200
    replicas.cli("apikey", "revoke", key_id)
    revoked_at = time.time()
    wait_until(lambda: all(ping(replicas.replica(i), admin_key) == 401 for i in range(3)), 1.0, "the revoked key refused by every replica")
    print(f"FIGURE key revocation seen by all three replicas in {time.time() - revoked_at:.3f} s")

    # A signing key rotated from the command line is published by every replica at once.
    before = {k["kid"] for k in httpx2.get(f"{replicas.replica(0)}/oauth/jwks.json").json()["keys"]}
    replicas.cli("keys", "rotate")
    wait_until(lambda: all(len({k["kid"] for k in httpx2.get(f"{replicas.replica(i)}/oauth/jwks.json").json()["keys"]} - before) == 1
                               for i in range(3)), 2.0, "every replica publishes the new key")
    assert all(ping(replicas.replica(i), token) == 200 for i in range(3)), "tokens signed before the rotation stay valid"


@pytest.fixture
def demo_replicas(cluster):
    r = Replicas(cluster, demo=True)
    yield r
    r.stop()


def test_killing_a_replica_under_write_load_loses_no_acknowledged_write(demo_replicas):
    replicas = demo_replicas
    # Three replicas started together with --demo installed the sample once.
    imports = [line for log in replicas.logs for line in log.read_text().splitlines() if "imported the Chinook sample" in line]
    assert len(imports) == 1, imports
    key = replicas.cli("apikey", "create", "--user", "admin").strip().splitlines()[-1]
    # A chart drawn by one replica is served by every one (images are kept in the database).
    r = httpx2.post(f"{replicas.replica(0)}/api/mcp", headers=bearer(key), timeout=60, json={"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": {"name": "ask", "arguments": {"question": "How many tracks are there per genre?"}}})
    image_url = r.json()["result"]["structuredContent"]["image_url"]
    assert image_url.startswith(replicas.base + "/images/"), r.text[:500]
    path = image_url[len(replicas.base):]
    for i in range(3):
        image = httpx2.get(replicas.replica(i) + path, timeout=10)
        assert image.status_code == 200 and image.content.startswith(b"\x89PNG"), (i, image.status_code)
    acknowledged: list[int] = []
    failures: dict[int, int] = {0: 0, 1: 0, 2: 0}
    stop = threading.Event()

    def writer(n: int):
        with httpx2.Client(headers=bearer(key), timeout=10) as c:
            i = 0
            while not stop.is_set():
                i += 1
                target = (n + i) % 3
                try:
                    r = c.post(f"{replicas.replica(target)}/api/mcp", json={"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {
                        "name": "resource_create", "arguments": {"resource": "Genre", "values": {"Name": f"w{n}-{i}"}}}})
                    data = r.json()["result"]["structuredContent"]["data"]
                    acknowledged.append(data["GenreId"])
                except (httpx2.TransportError, KeyError, ValueError, TypeError):
                    failures[target] += 1

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    time.sleep(2)
    replicas.processes[0].kill()
    killed_at = len(acknowledged)
    time.sleep(2)
    stop.set()
    for t in threads:
        t.join(30)
    after_kill = len(acknowledged) - killed_at
    print(f"FIGURE {len(acknowledged)} writes acknowledged by three replicas, {after_kill} after one was killed; failed calls per replica {failures}")
    assert killed_at >= 20 and after_kill >= 20, "the other two kept taking writes"
    assert failures[1] == 0 and failures[2] == 0, failures
    out = subprocess.run(["psql", replicas.cluster.url, "-At", "-c", 'SELECT "GenreId" FROM "Genre"'], check=True, capture_output=True, text=True).stdout
    stored = {int(line) for line in out.split()}
    assert set(acknowledged) <= stored, f"lost: {sorted(set(acknowledged) - stored)[:10]}"
    assert len(set(acknowledged)) == len(acknowledged), "no key was handed out twice"


def test_a_laptop_instance_moves_to_postgresql(cluster, tmp_path):
    sqlite = {"PORTICO_DATABASE_URL": ""}  # this test's laptop keeps its data in SQLite, whatever the pass
    laptop = start_server(env=sqlite)
    try:
        key = laptop.api_key
        laptop.cli("user", "create", "olive", "--role", "member", "--password-stdin", stdin="correct horse battery staple\n", env=sqlite)
        laptop.cli("app", "create", "eu", "--demo", "--admin", "admin", env=sqlite)
        eu_key = laptop.cli("apikey", "create", "--user", "admin", "--app", "eu", env=sqlite).stdout.strip().splitlines()[-1]
        with laptop.http() as c:
            r = call(c, laptop.mcp, "resource_create", {"resource": "Genre", "values": {"Name": "Laptop genre"}})
            assert r.json()["result"]["structuredContent"]["data"]["GenreId"] == 26
        with laptop.http(key=eu_key) as c:
            eu = f"{laptop.base}/api/__app/eu/mcp"
            r = call(c, eu, "resource_update", {"resource": "Genre", "filterByTk": 1, "values": {"Name": "Rock (eu)"}})
            assert r.json()["result"]["structuredContent"]["data"][0]["Name"] == "Rock (eu)", r.text
            # A workflow of eu's, with a sealed header, travels with the app.
            r = call(c, eu + "?packages=workflow", "workflows_create", {
                "title": "An artist per genre", "enabled": True, "trigger": {"type": "collection", "collection": "Genre", "on": "create"},
                "nodes": [{"key": "a", "type": "create", "config": {"collection": "Artist", "values": {"Name": "for {{$context.data.Name}}"}}},
                          {"key": "r", "type": "request", "config": {"url": "https://hooks.example.com/", "headers": {"X-Token": "t0ken"}}}]})
            assert r.json()["result"]["structuredContent"]["id"] == 1, r.text
        # What teaches the question engines travels too.
        laptop.cli("term", "add", "--datasource", "main", "--term", "homeland", "--column", "Customer.Country", env=sqlite)
        laptop.cli("example", "add", "--datasource", "main", "--question", "How many genres are listed?", "--sql",
                   "SELECT COUNT(*) AS n FROM Genre", env=sqlite)
        laptop.cli("datasource", "instructions", "main", "--set", "Amounts are in US dollars.", env=sqlite)
        model = tmp_path / "model.yaml"
        model.write_text("metrics:\n  - {name: genres counted, table: Genre, sql: COUNT(*)}\nsegments:\n  - {name: rock genres, table: Genre, condition: Name LIKE 'Rock%'}\n")
        laptop.cli("semantic", "import", str(model), "--datasource", "main", env=sqlite)
    finally:
        laptop.stop()
    dump = tmp_path / "all.jsonl"
    exported = subprocess.run([BINARY, "export", str(dump), "--data-dir", laptop.data_dir], capture_output=True, text=True, env={**os.environ, **sqlite})
    assert exported.returncode == 0 and "Exported" in exported.stderr, exported.stderr
    assert oct(os.stat(dump).st_mode & 0o777) == "0o600", "the export holds hashed and sealed secrets: owner only"
    master = Path(laptop.data_dir, "master.key").read_text().strip()
    target_env = {**os.environ, "PORTICO_DATABASE_URL": cluster.url, "PORTICO_MASTER_KEY": master}
    target_dir = str(tmp_path / "target")

    def portico(*args):
        return subprocess.run([BINARY, *args, "--data-dir", target_dir], capture_output=True, text=True, env=target_env, timeout=120)

    dry = portico("migrate")
    assert dry.returncode == 0 and dry.stdout.count("pending\t") == MIGRATIONS and "--apply" in dry.stdout, dry.stdout + dry.stderr
    assert "pending\t" in portico("migrate").stdout, "a dry run changes nothing"
    applied = portico("migrate", "--apply")
    assert f"Applied {MIGRATIONS} migrations" in applied.stdout, applied.stdout + applied.stderr
    assert "up to date" in portico("migrate").stdout
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"table": "portico_users", "columns": [], "rows": []}\n')
    assert "export header" in portico("import", str(bad)).stderr
    imported = portico("import", str(dump))
    assert imported.returncode == 0 and "Imported" in imported.stdout, imported.stderr
    again = portico("import", str(dump))
    assert again.returncode != 0 and "empty database" in again.stderr, "a second import is refused and changes nothing"

    assert "homeland" in portico("term", "list", "--datasource", "main").stdout
    assert "How many genres are listed?" in portico("example", "list", "--datasource", "main").stdout
    shown = portico("semantic", "show", "--datasource", "main").stdout
    assert "genres counted" in shown and "rock genres" in shown, shown
    assert "US dollars" in portico("datasource", "instructions", "main").stdout
    server = start_server(data_dir=target_dir, demo=False, env={"PORTICO_DATABASE_URL": cluster.url, "PORTICO_MASTER_KEY": master})
    try:
        with server.http(key=key) as c:
            r = call(c, server.mcp, "resource_list", {"resource": "Artist", "pageSize": 1})
            assert r.json()["result"]["structuredContent"]["meta"]["count"] == 275, "the laptop's API key and data work on PostgreSQL"
            r = call(c, server.mcp, "resource_get", {"resource": "Genre", "filterByTk": 26})
            assert r.json()["result"]["structuredContent"]["data"]["Name"] == "Laptop genre"
            r = call(c, server.mcp, "resource_create", {"resource": "Genre", "values": {"Name": "Server genre"}})
            assert r.json()["result"]["structuredContent"]["data"]["GenreId"] == 27, "new records continue after the imported keys"
            r = call(c, server.mcp, "resource_list", {"resource": "Track", "filter": {"album.artist.Name": "AC/DC"}, "pageSize": 1})
            assert r.json()["result"]["structuredContent"]["meta"]["count"] == 18, "relations came across"
            r = call(c, server.mcp, "resource_get", {"resource": "Genre", "filterByTk": 1})
            assert r.json()["result"]["structuredContent"]["data"]["Name"] == "Rock"
        with server.http(key=eu_key) as c:
            # App eu came across into a schema of its own, with its own rows, and its key with it.
            eu = f"{server.base}/api/__app/eu/mcp"
            r = call(c, eu, "resource_get", {"resource": "Genre", "filterByTk": 1})
            assert r.json()["result"]["structuredContent"]["data"]["Name"] == "Rock (eu)", r.text
            r = call(c, eu, "resource_create", {"resource": "Genre", "values": {"Name": "EU genre"}})
            assert r.json()["result"]["structuredContent"]["data"]["GenreId"] == 26, "eu's keys continue after its own rows"
            # Its workflow came across and runs there; the next one continues after its id.
            for _ in range(100):
                r = call(c, eu, "resource_list", {"resource": "Artist", "filter": {"Name": "for EU genre"}})
                if r.json()["result"]["structuredContent"]["data"]:
                    break
                time.sleep(0.1)
            assert r.json()["result"]["structuredContent"]["data"], "the imported workflow ran on PostgreSQL"
            r = call(c, eu + "?packages=workflow", "workflows_create", {"title": "second", "trigger": {"type": "manual"}, "nodes": []})
            assert r.json()["result"]["structuredContent"]["id"] == 2, r.text
        out = subprocess.run(
            ["psql", cluster.url, "-At", "-c", 'SELECT "Name" FROM app_eu."Genre" WHERE "GenreId" = 1'], check=True, capture_output=True, text=True
        ).stdout
        assert out.strip() == "Rock (eu)"
        users = subprocess.run([BINARY, "user", "list", "--data-dir", target_dir], capture_output=True, text=True, env=target_env).stdout
        assert "olive" in users and "admin" in users
    finally:
        server.stop()


def test_a_clients_answer_to_a_question_back_reaches_the_replica_that_asked(replicas, tmp_path):
    """The handshake era's elicitation/create goes out on replica 0's event stream; the client's
    answer is POSTed to replica 1 (no sticky balancing), which relays it to replica 0."""
    from datasets import airline

    path = tmp_path / "airline.sqlite"
    airline.build(str(path))
    replicas.cli("user", "create", "ada", "--role", "admin", "--password-stdin", stdin="a long admin password\n")
    key = replicas.cli("apikey", "create", "--user", "ada").strip().splitlines()[-1]
    replicas.cli("datasource", "add", "--name", "air", "--sqlite", str(path))
    headers = {**bearer(key), "MCP-Protocol-Version": "2025-11-25"}
    with httpx2.Client(timeout=30) as c:
        r = c.post(f"{replicas.replica(0)}/api/mcp", headers=headers, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}}, "clientInfo": {"name": "e2e", "version": "1"}}})
        headers["Mcp-Session-Id"] = r.headers["mcp-session-id"]
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "ask", "arguments": {
            "question": "How many flights go to Tokyo?", "datasource": "air", "model": "builtin"}}}
        asked, answered = None, None
        with c.stream("POST", f"{replicas.replica(0)}/api/mcp", headers=headers, json=call) as stream:
            assert stream.headers["content-type"].startswith("text/event-stream")
            for line in stream.iter_lines():
                if not line.startswith("data:"):
                    continue
                message = json.loads(line[5:])
                if message.get("method") == "elicitation/create":
                    # Which airport, then (by default) whether to run the reading that choice gives.
                    asked = message
                    offered = [o["const"] for o in message["params"]["requestedSchema"]["properties"]["choice"]["oneOf"]]
                    picked = "flight.dest_airport" if "flight.dest_airport" in offered else offered[0]
                    reply = c.post(f"{replicas.replica(1)}/api/mcp", headers=headers, json={
                        "jsonrpc": "2.0", "id": message["id"], "result": {"action": "accept", "content": {"choice": picked}}})
                    assert reply.status_code == 202
                elif message.get("id") == 2:
                    answered = message
                    break
    assert asked is not None, "the server asked on the call's stream"
    assert answered is not None and not answered["result"].get("isError"), answered
    import sqlite3

    db = sqlite3.connect(str(path))
    gold = db.execute("SELECT COUNT(*) FROM flight f JOIN airport a ON f.dest_airport = a.code WHERE a.city = 'Tokyo'").fetchone()[0]
    db.close()
    assert answered["result"]["structuredContent"]["rows"] == [[gold]]


def test_a_destroy_confirmed_at_another_replica_destroys_once(demo_replicas):
    """2026-07-28: replica 0 asks before a destroy (input_required, its state sealed with the shared key); the
    answer goes to replica 1, which acts on it. An app's confirmations turned off by the command line hold on every
    replica."""
    from mcp_http import modern_request

    replicas = demo_replicas
    key = replicas.cli("apikey", "create", "--user", "admin").strip().splitlines()[-1]
    can_ask = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}

    def send(base: str, name: str, arguments: dict, probe: str = "-", **params) -> dict:
        body, headers = modern_request("tools/call", {"name": name, "arguments": arguments, **params}, meta_extra=can_ask)
        with httpx2.Client(timeout=30) as c:
            return c.post(f"{base}/api/mcp", headers={**headers, **bearer(key), "X-Probe": probe}, json=body).json()

    doomed = {"resource": "Genre", "filter": {"Name": {"$startsWith": "Replica doomed"}}}
    for i in range(2):
        assert "error" not in send(replicas.replica(i), "resource_create", {"resource": "Genre", "values": {"Name": f"Replica doomed {i}"}})
    asked = send(replicas.replica(0), "resource_destroy", doomed)["result"]
    assert asked["resultType"] == "input_required" and "2 records of collection 'Genre'" in asked["inputRequests"]["confirm"]["params"]["message"]
    yes = {"confirm": {"action": "accept", "content": {"confirm": True}}}
    done = send(replicas.replica(1), "resource_destroy", doomed, requestState=asked["requestState"], inputResponses=yes)["result"]
    assert done["structuredContent"]["data"] == 2, done
    assert send(replicas.replica(2), "resource_destroy", doomed)["result"]["structuredContent"]["data"] == 0, "destroyed once, nothing left"

    # Behind nginx, balancing round-robin: the question and its answer reach different replicas.
    assert "error" not in send(replicas.base, "resource_create", {"resource": "Genre", "values": {"Name": "Replica doomed nginx"}})
    asked = send(replicas.base, "resource_destroy", doomed, probe="confirm")["result"]
    assert asked["resultType"] == "input_required", asked
    done = send(replicas.base, "resource_destroy", doomed, probe="confirm", requestState=asked["requestState"], inputResponses=yes)["result"]
    assert done["structuredContent"]["data"] == 1, done
    asker, answerer = replicas.upstreams("confirm", 2)
    assert asker != answerer, "the answer went to another replica than the question"

    replicas.cli("app", "confirmations", "main", "--off")
    for i in range(3):
        assert "error" not in send(replicas.replica(0), "resource_create", {"resource": "Genre", "values": {"Name": f"Replica kept {i}"}})
    for i in range(3):
        result = send(replicas.replica(i), "resource_destroy", {"resource": "Genre", "filter": {"Name": f"Replica kept {i}"}})["result"]
        assert result.get("resultType") == "complete" and result["structuredContent"]["data"] == 1, (i, result)
    replicas.cli("app", "confirmations", "main", "--on")


def test_a_task_made_at_one_replica_is_read_and_cancelled_at_the_others(demo_replicas):
    """Tasks are rows of the shared database: polled through nginx, each poll at the next replica, to the
    result; and cancelled at another replica than the one running it, whose statement stops in PostgreSQL."""
    from mcp_http import modern_request

    replicas = demo_replicas
    key = replicas.cli("apikey", "create", "--user", "admin").strip().splitlines()[-1]
    declared = {"io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}}

    sent = 0

    def send(base: str, method: str, params: dict) -> dict:
        nonlocal sent
        sent += 1
        body, headers = modern_request(method, params, meta_extra=declared)
        with httpx2.Client(timeout=60) as c:
            return c.post(f"{base}/api/mcp?packages=ask", headers={**headers, **bearer(key), "X-Probe": "task"}, json=body).json()

    count = 5_000_000
    counting = f"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < {count}) SELECT count(*) AS n FROM c"
    created = send(replicas.base, "tools/call", {"name": "sql_query", "arguments": {"sql": counting}})["result"]
    assert created["resultType"] == "task", created
    deadline = time.time() + 60
    while (task := send(replicas.base, "tasks/get", {"taskId": created["taskId"]})["result"])["status"] == "working":
        assert time.time() < deadline, "the task ended"
        time.sleep(0.3)
    assert task["status"] == "completed" and task["result"]["structuredContent"]["rows"] == [[count]], task
    used = replicas.upstreams("task", sent)
    assert len(set(used)) == 3, f"the call and its polls reached every replica: {used}"

    def running() -> int:
        out = subprocess.run(["psql", replicas.cluster.url, "-At", "-c", "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' "
                              "AND query LIKE '%endless_marker%' AND query NOT LIKE '%pg_stat_activity%'"], capture_output=True, text=True, check=True)
        return int(out.stdout.strip())

    endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) AS endless_marker FROM c"
    created = send(replicas.replica(0), "tools/call", {"name": "sql_query", "arguments": {"sql": endless}})["result"]
    assert created["resultType"] == "task", created
    assert running() == 1
    assert send(replicas.replica(2), "tasks/cancel", {"taskId": created["taskId"]})["result"]["resultType"] == "complete"
    assert send(replicas.replica(1), "tasks/get", {"taskId": created["taskId"]})["result"]["status"] == "cancelled"
    wait_until(lambda: running() == 0, 3, "the statement stopped on replica 0")


def test_packages_loaded_at_one_replica_are_listed_at_the_others(demo_replicas):
    """A session's tools_load reaches every replica: its list there has the packages, and its stream, held by
    another replica, hears that the list changed."""
    from mcp_http import initialize

    replicas = demo_replicas
    key = replicas.cli("apikey", "create", "--user", "admin").strip().splitlines()[-1]
    with httpx2.Client(headers=bearer(key), timeout=30) as c:
        session, _ = initialize(c, f"{replicas.replica(0)}/api/mcp")
        headers = {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
        stream = StreamListener(f"{replicas.replica(2)}/api/mcp", {**bearer(key), **headers}, b"notifications/tools/list_changed")
        assert stream.opened.wait(5)
        r = c.post(f"{replicas.replica(1)}/api/mcp", headers=headers, json={
            "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "tools_load", "arguments": {"packages": ["schema"]}}})
        assert r.json()["result"]["structuredContent"]["loaded"] == ["schema"], r.text
        assert b"notifications/tools/list_changed" in stream.wait(), "the stream on replica 2 heard of the load on replica 1"

        def listed(i: int) -> list[str]:
            r = c.post(f"{replicas.replica(i)}/api/mcp", headers=headers, json={"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
            return [t["name"] for t in r.json()["result"]["tools"]]

        wait_until(lambda: all("collections_create" in listed(i) for i in range(3)), 2, "every replica lists the loaded package")


def test_replicas_share_one_rate_budget(cluster):
    """Each replica decides in memory and shares its counts through PostgreSQL once a second: 12 requests a minute
    for one key is 12 across both replicas, not 12 on each."""
    replicas = Replicas(cluster, count=2, demo=True, extra=["--rate-limit", "12/min"])
    try:
        key = replicas.cli("apikey", "create", "--user", "admin").strip().splitlines()[-1]
        if 60 - time.time() % 60 < 15:
            time.sleep(60 - time.time() % 60 + 0.5)  # the whole test within one minute's window
        statuses = []
        for i in range(12):
            statuses.append(ping(replicas.replica(i % 2), key))
            time.sleep(0.2)
        assert statuses == [200] * 12, statuses
        time.sleep(2.5)  # an exchange with the shared table on each replica
        # Each replica has admitted 6 itself; both now know of all 12.
        refused = [httpx2.post(f"{replicas.replica(i)}/api/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=bearer(key), timeout=10)
                   for i in (0, 1)]
        assert [r.status_code for r in refused] == [429, 429], [r.text for r in refused]
        assert all("at most 12 requests a minute" in r.json()["error"]["data"] for r in refused)
    finally:
        replicas.stop()

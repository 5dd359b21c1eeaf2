"""Portico on PostgreSQL as its users run it when one machine is not enough: replicas sharing one
database, and the database going away under load. Each test starts its own throwaway cluster
(Tests/pg_cluster.sh), so stopping it disturbs nothing else. Run in the PostgreSQL pass of `make test`."""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import httpx2
import pytest
from conftest import BACKEND, start_server

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
    return client.post(url, json={"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": name, "arguments": arguments}},
                       headers={"Accept": "application/json, text/event-stream", "Content-Type": "application/json"})


def test_the_database_going_away_under_load_gives_clear_503s_and_service_comes_back(cluster):
    server = start_server(env={"PORTICO_DATABASE_URL": cluster.url})
    try:
        key = server.api_key
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
    finally:
        server.stop()

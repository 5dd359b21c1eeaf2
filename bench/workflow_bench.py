"""Workflows on the release binary (issue 25), on SQLite and on PostgreSQL:

- what a collection workflow costs the write that starts it: `resource_create` latency on a
  collection with one matching (asynchronous) workflow against one with none, in blocks of 100
  calls taking turns: with the executions only queued (no replica running them), then with a
  replica running them beside the calls (another replica's, or the same one's);
- executions per second of a five-node workflow (condition, calculation, query, create, update),
  queued at once and run by the server, from the first queued to the last resolved.

usage: workflow_bench.py BINARY OUT_DIR  → writes OUT_DIR/workflow.json
"""

from __future__ import annotations

import json
import os
import random
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "Tests" / "EndToEnd"))
from mcp_http import modern_request  # noqa: E402

CREATES = int(os.environ.get("WORKFLOW_BENCH_CREATES", "1200"))
EXECUTIONS = int(os.environ.get("WORKFLOW_BENCH_EXECUTIONS", "400"))


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


class Portico:
    def __init__(self, binary: str, env: dict, data: str, cpu: int, extra: list[str], key: str | None = None):
        self.port = random.randint(18000, 28000)
        self.data = data
        self.env = env
        demo = [] if key else ["--demo"]
        self.process = subprocess.Popen(["taskset", "-c", str(cpu), binary, "serve", *demo, "--port", str(self.port), "--data-dir", data,
                                         "--log-level", "warning", *extra],
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        banner = ""
        while ("OpenCode" if demo else "MCP endpoint") not in banner:
            line = self.process.stdout.readline()
            if not line:
                raise SystemExit("portico did not start")
            banner += line
        self.key = key or re.search(r"pk_\S+", banner).group(0)
        self.url = f"http://127.0.0.1:{self.port}/api/mcp?packages=data,schema,workflow"
        self.client = httpx2.Client(timeout=60)

    def call(self, tool: str, arguments: dict) -> dict:
        body, headers = modern_request("tools/call", {"name": tool, "arguments": arguments})
        r = self.client.post(self.url, json=body, headers={**headers, "Authorization": f"Bearer {self.key}"})
        result = r.json().get("result", {})
        assert r.status_code == 200 and not result.get("isError"), r.text[:400]
        return result.get("structuredContent", {})

    def stop(self):
        self.process.terminate()
        self.process.wait()


def statuses(portico: Portico, database_url: str | None) -> dict[str, int]:
    sql = "SELECT status, COUNT(*) FROM portico_executions GROUP BY status"
    if database_url:
        out = subprocess.run(["psql", database_url, "-At", "-F", "|", "-c", sql], capture_output=True, text=True, check=True).stdout
        return {line.split("|")[0]: int(line.split("|")[1]) for line in out.splitlines() if line}
    db = sqlite3.connect(f"file:{Path(portico.data) / 'portico.sqlite'}?mode=ro", uri=True)
    try:
        return dict(db.execute(sql).fetchall())
    finally:
        db.close()


def settle(portico: Portico, database_url: str | None) -> None:
    """Waits until no execution is queued or running."""
    deadline = time.time() + 120
    while time.time() < deadline:
        counts = statuses(portico, database_url)
        if counts.get("queued", 0) + counts.get("running", 0) == 0:
            return
        time.sleep(0.05)
    raise SystemExit(f"executions did not run out: {counts}")


def measure(binary: str, database_url: str | None) -> dict:
    env = dict(os.environ)
    if database_url:
        env["PORTICO_DATABASE_URL"] = database_url
    data = tempfile.mkdtemp(prefix="portico-bench-workflow-")
    # A replica that serves calls and runs no executions (core 0); later one that runs them (core 1).
    api = Portico(binary, env, data, 0, ["--workflow-workers", "0"])
    portico = None
    try:
        for name in ["Quiet", "Watched", "Task"]:
            api.call("collections_create", {"name": name, "fields": [{"name": "title", "type": "string"}, {"name": "amount", "type": "float"}]})
        api.call("workflows_create", {
            "title": "A task per watched record", "enabled": True, "trigger": {"type": "collection", "collection": "Watched", "on": "create"},
            "nodes": [{"key": "t", "type": "create", "config": {"collection": "Task", "values": {"title": "for {{$context.data.id}}"}}}],
        })

        def blocks(kinds, count):
            """Blocks of 100 creates taking turns between `kinds` (server, collection, times); after a
            block that starts executions they are let run out when some replica runs them."""
            for block in range(len(kinds) * count):
                server, collection, times = kinds[block % len(kinds)]
                for i in range(100):
                    started = time.perf_counter()
                    server.call("resource_create", {"resource": collection, "values": {"title": f"b{block}-{i}", "amount": i}})
                    times.append((time.perf_counter() - started) * 1000)
                if collection == "Watched" and portico is not None:
                    settle(portico, database_url)

        for i in range(50):  # warm-up
            api.call("resource_create", {"resource": "Quiet", "values": {"title": f"w{i}", "amount": i}})
            api.call("resource_create", {"resource": "Watched", "values": {"title": f"w{i}", "amount": i}})
        # First with no replica running executions: what the write itself pays for starting one
        # (its execution queued in the same transaction), against a collection with no workflow.
        quiet, waiting = [], []
        blocks([(api, "Quiet", quiet), (api, "Watched", waiting)], CREATES // 100)
        # Then a replica that runs them: the queue runs out, and the writes go on beside the
        # executions, run by the other replica or by the same one.
        portico = Portico(binary, env, data, 1, [], key=api.key)
        settle(portico, database_url)
        for i in range(50):
            portico.call("resource_create", {"resource": "Watched", "values": {"title": f"v{i}", "amount": i}})
        settle(portico, database_url)
        split, beside = [], []
        blocks([(api, "Watched", split), (portico, "Watched", beside)], CREATES // 100)

        five = portico.call("workflows_create", {
            "title": "Five nodes", "enabled": True, "trigger": {"type": "manual"},
            "nodes": [
                {"key": "big", "type": "condition", "config": {"filter": {"amount": {"$gte": 0}}}},
                {"key": "fee", "type": "calculation", "config": {"expression": "round({{$context.data.amount}} * 0.05, 2)"}},
                {"key": "q", "type": "query", "config": {"collection": "Quiet", "filter": {"title": "w1"}}},
                {"key": "t", "type": "create", "config": {"collection": "Task", "values": {"title": "five {{$context.data.n}}", "amount": "{{$jobsMapByNodeKey.fee}}"}}},
                {"key": "u", "type": "update", "config": {"collection": "Task", "filterByTk": "{{$jobsMapByNodeKey.t.id}}", "values": {"title": "done {{$context.data.n}}"}}},
            ],
        })
        before = statuses(portico, database_url).get("resolved", 0)
        started = time.perf_counter()
        for n in range(EXECUTIONS):
            portico.call("workflows_trigger", {"id": five["id"], "context": {"n": n, "amount": n}})
        queued = time.perf_counter() - started
        deadline = time.time() + 600
        while True:
            counts = statuses(portico, database_url)
            if counts.get("resolved", 0) - before >= EXECUTIONS or time.time() > deadline:
                break
            time.sleep(0.05)
        elapsed = time.perf_counter() - started
        assert counts.get("failed", 0) == 0, counts
        return {
            "create_quiet_median_ms": statistics.median(quiet), "create_quiet_p90_ms": percentile(quiet, 90),
            "create_queued_median_ms": statistics.median(waiting), "create_queued_p90_ms": percentile(waiting, 90),
            "create_split_median_ms": statistics.median(split), "create_split_p90_ms": percentile(split, 90),
            "create_beside_median_ms": statistics.median(beside), "create_beside_p90_ms": percentile(beside, 90),
            "creates": CREATES, "executions": EXECUTIONS, "queue_seconds": queued, "executions_seconds": elapsed,
            "executions_per_second": EXECUTIONS / elapsed,
        }
    finally:
        if portico is not None:
            portico.stop()
        api.stop()


def main() -> None:
    binary, out = sys.argv[1], Path(sys.argv[2])
    figures = {"sqlite": measure(binary, None)}
    cluster = Path(tempfile.mkdtemp(prefix="portico-bench-workflow-pg-"))
    subprocess.run(["bash", str(ROOT / "Tests" / "pg_cluster.sh"), "start", str(cluster)], check=True, capture_output=True)
    try:
        chinook = (cluster / "url").read_text().strip()
        subprocess.run(["psql", chinook, "-q", "-c", "CREATE DATABASE portico_workflow"], check=True, capture_output=True)
        figures["postgres"] = measure(binary, re.sub(r"/chinook(\?|$)", r"/portico_workflow\1", chinook))
    finally:
        subprocess.run(["bash", str(ROOT / "Tests" / "pg_cluster.sh"), "stop", str(cluster)], capture_output=True)
    (out / "workflow.json").write_text(json.dumps(figures, indent=2))
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()

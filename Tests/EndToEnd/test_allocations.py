"""Heap allocations per tools/call, counted in the real binary, gated against a recorded baseline.

A counting malloc (Tests/Allocations/malloc_counter.c, built here with the system's C compiler) is
preloaded into `portico serve`; one keep-alive connection sends a warm-up, then CALLS calls of one
kind in several windows; the fewest allocations of a window, divided by CALLS, is the cost of one
call: the HTTP request, the MCP handling, the read and the audit trail's share. A call that
allocates more than the baseline (bench/allocation-baseline.json, for the build being tested)
allows fails, so a regression fails `make test`, not only a benchmark run. A change meant to cost
more updates the baseline in the same commit.
"""

import http.client
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from conftest import BACKEND, BINARY, start_server

ROOT = Path(__file__).resolve().parents[2]
BASELINE = ROOT / "bench" / "allocation-baseline.json"
SOURCE = ROOT / "Tests" / "Allocations" / "malloc_counter.c"
CALLS = 200
WINDOWS = 5
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
KINDS = {
    "get": ("resource_get", lambda i: {"resource": "Album", "filterByTk": i % 347 + 1}),
    "list": ("resource_list", lambda i: {"resource": "Track", "pageSize": 20, "page": i % 150 + 1}),
}

pytestmark = pytest.mark.skipif(BACKEND != "sqlite", reason="the baseline is for Portico's own data in its embedded SQLite file")


def build_counter(directory: Path) -> Path:
    compiler = shutil.which("cc") or shutil.which("clang")
    assert compiler, "no C compiler (cc or clang) to build the counting malloc"
    library = directory / "malloc_counter.so"
    subprocess.run([compiler, "-shared", "-fPIC", "-O2", "-o", str(library), str(SOURCE)], check=True)
    return library


class Counter:
    """Reads the allocation count of a process that preloads the counting malloc."""

    def __init__(self, pid: int, path: Path):
        self.pid, self.path = pid, path

    def read(self) -> int:
        self.path.unlink(missing_ok=True)
        os.kill(self.pid, signal.SIGUSR2)
        deadline = time.time() + 10
        while time.time() < deadline:
            if self.path.exists():
                text = self.path.read_text()
                if text.endswith("\n"):
                    return int(text)
            time.sleep(0.005)
        raise AssertionError("the counting malloc did not report (was it preloaded?)")


def per_call(server, counter: Counter, kind: str) -> float:
    name, arguments = KINDS[kind]
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    headers = {
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Authorization": f"Bearer {server.api_key}",
        "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": name,
    }

    def call(i: int) -> None:
        body = json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": name, "arguments": arguments(i), "_meta": META}})
        connection.request("POST", "/api/mcp", body, headers)
        response = connection.getresponse()
        text = response.read()
        assert response.status == 200 and b'"isError":true' not in text and b'"error":{' not in text, text[:300]

    for i in range(200):
        call(i)
    # The fewest of several windows: background work (timers, the workflow poll) only adds.
    fewest = None
    for window in range(WINDOWS):
        before = counter.read()
        for i in range(CALLS):
            call(window * CALLS + i)
        after = counter.read()
        fewest = min(fewest or after - before, after - before)
    connection.close()
    return fewest / CALLS


def build_name() -> str:
    return "release" if "/release/" in BINARY else "debug"


@pytest.fixture(scope="module")
def counted_server():
    directory = Path(tempfile.mkdtemp(prefix="portico-allocations-"))
    library = build_counter(directory)
    report = directory / "count.txt"
    s = start_server(env={"LD_PRELOAD": str(library), "PORTICO_ALLOCATIONS_FILE": str(report)})
    yield s, Counter(s.process.pid, report)
    s.stop()
    shutil.rmtree(directory, ignore_errors=True)


def test_the_counter_counts_what_a_call_allocates(counted_server):
    server, counter = counted_server
    first = counter.read()
    assert first > 10_000, "starting a server allocates; a count this low means malloc was not interposed"
    get = per_call(server, counter, "get")
    list_ = per_call(server, counter, "list")
    # Twenty records with their fields allocate more than one; both are far from nothing.
    assert 20 < get < list_, (get, list_)


def test_a_call_allocates_no_more_than_its_baseline(counted_server):
    server, counter = counted_server
    baseline = json.loads(BASELINE.read_text())
    allowed = baseline["allocations_per_call"][build_name()]
    tolerance = baseline["tolerance"]
    measured = {kind: per_call(server, counter, kind) for kind in KINDS}
    print(f"allocations per call ({build_name()} build): " + ", ".join(f"{k} {v:.1f} (baseline {allowed[k]})" for k, v in measured.items()))
    if os.environ.get("PORTICO_ALLOCATIONS_OUT"):  # make bench reports them
        Path(os.environ["PORTICO_ALLOCATIONS_OUT"]).write_text("".join(f"ALLOCATIONS {k} per_call={v:.1f}\n" for k, v in measured.items()))
    worse = {k: v for k, v in measured.items() if v > allowed[k] * (1 + tolerance)}
    assert not worse, (
        f"a tools/call allocates more than bench/allocation-baseline.json allows ({tolerance:.0%} over): "
        + ", ".join(f"{k} {v:.1f} against {allowed[k]}" for k, v in worse.items())
        + "; find the new allocations, or update the baseline in the commit that means to cost more"
    )

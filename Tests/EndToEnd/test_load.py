"""Load and fault tests against the real binary: many sessions with writes mixed in, concurrent
writers, and `kill -9` under write load. Bounded for `make test`; `make soak` runs them longer
(PORTICO_LOAD_SECONDS) against the release build with the latency target."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

import httpx2
import pytest

from conftest import start_server
from mcp_http import initialize, modern_request, post

LOAD_SECONDS = int(os.environ.get("PORTICO_LOAD_SECONDS", "15"))
# The debug build of `make test` is several times slower than the release build `make soak` uses, which
# holds the latency target (250 ms); here the bound only catches a stall. On two cores the debug build's
# p99 is 1.6 s alone and reached 2.0-2.2 s inside the whole suite, so the bound is 3 s.
P99_LIMIT_MS = float(os.environ.get("PORTICO_LOAD_P99_MS", "3000"))
MIXED = Path(__file__).resolve().parents[1] / "Load" / "mixed.lua"


def create(client: httpx2.Client, url: str, name: str) -> int:
    body, headers = modern_request("tools/call", {"name": "resource_create", "arguments": {"resource": "Genre", "values": {"Name": name}}})
    r = post(client, url, body, headers)
    assert r.status_code == 200, r.text
    result = r.json()["result"]
    assert not result.get("isError"), result
    return result["structuredContent"]["data"]["GenreId"]


def genre_count(s) -> int:
    body, headers = modern_request("tools/call", {"name": "resource_list", "arguments": {"resource": "Genre", "pageSize": 1}})
    with s.http() as c:
        return post(c, s.mcp, body, headers).json()["result"]["structuredContent"]["meta"]["count"]


def test_two_hundred_sessions_with_a_fifth_writes(tmp_path):
    s = start_server(data_dir=str(tmp_path / "data"))
    try:
        before = genre_count(s)
        sessions = []
        with s.http() as c:
            for _ in range(200):
                session, _ = initialize(c, s.mcp)
                sessions.append(session)
        sessions_file = tmp_path / "sessions.txt"
        sessions_file.write_text("\n".join(sessions) + "\n")
        out = subprocess.run(
            ["wrk", "--latency", "-t2", "-c200", f"-d{LOAD_SECONDS}s", "--timeout", "10s", "-s", str(MIXED), s.mcp, "--", s.api_key, str(sessions_file), "20"],
            capture_output=True, text=True, timeout=LOAD_SECONDS + 60)
        print(out.stdout)
        m = re.search(r"RESULT requests=(\d+) duration_us=(\d+) errors=(\d+) socket_errors=(\d+) writes=(\d+) reads=(\d+) p50_us=(\d+) p99_us=(\d+)", out.stdout)
        assert m, out.stdout + out.stderr
        requests, duration, errors, socket_errors, writes, reads, p50, p99 = map(int, m.groups())
        assert requests > 0 and writes > 0 and reads > 0
        assert errors == 0, out.stdout
        assert socket_errors == 0, out.stdout
        assert p99 / 1000 <= P99_LIMIT_MS, f"p99 {p99 / 1000:.1f} ms"
        # wrk stops with up to 200 requests in flight; those writes land but are not counted.
        after = genre_count(s)
        assert before + writes <= after <= before + writes + 200, f"{after - before} records for {writes} acknowledged creates"
        assert httpx2.get(f"{s.base}/healthz").status_code == 200
    finally:
        assert s.stop() == 0


@pytest.mark.parametrize("writers", [6, 8])
def test_concurrent_writers_do_not_stall(tmp_path, writers):
    s = start_server(data_dir=str(tmp_path / "data"))
    try:
        before = genre_count(s)
        errors: list[str] = []
        barrier = threading.Barrier(writers)

        def write(n: int):
            with s.http() as c:
                barrier.wait()
                for i in range(15):
                    try:
                        create(c, s.mcp, f"w{n}-{i}")
                    except AssertionError as e:  # noqa: PERF203
                        errors.append(str(e))

        threads = [threading.Thread(target=write, args=(n,)) for n in range(writers)]
        started = time.time()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.time() - started
        print(f"FIGURE {writers} writers x 15 creates: {elapsed:.2f} s, {len(errors)} errors")
        assert not errors, errors[:3]
        assert elapsed < 10, f"{writers} writers × 15 creates took {elapsed:.1f} s"
        assert genre_count(s) == before + writers * 15
    finally:
        s.stop()


def test_kill_9_under_write_load_loses_no_acknowledged_write(tmp_path):
    data = str(tmp_path / "data")
    s = start_server(data_dir=data)
    key = s.api_key
    acknowledged: list[int] = []
    lock = threading.Lock()
    stop = threading.Event()

    def write(n: int):
        with httpx2.Client(headers={"Authorization": f"Bearer {key}"}, timeout=10) as c:
            i = 0
            while not stop.is_set():
                try:
                    genre = create(c, s.mcp, f"k{n}-{i}")
                except (httpx2.TransportError, AssertionError, KeyError, ValueError):
                    return  # the server died mid-request: that write was never acknowledged
                with lock:
                    acknowledged.append(genre)
                i += 1

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    time.sleep(4)
    s.process.send_signal(signal.SIGKILL)
    s.process.wait()
    stop.set()
    for t in threads:
        t.join()
    print(f"FIGURE kill -9 after 4 s of 4 writers: {len(acknowledged)} acknowledged writes")
    assert len(acknowledged) >= 200, f"only {len(acknowledged)} writes were acknowledged in 4 s"

    restarted = start_server(data_dir=data)
    try:
        missing = []
        with httpx2.Client(headers={"Authorization": f"Bearer {key}"}, timeout=30) as c:
            for start in range(0, len(acknowledged), 500):
                chunk = acknowledged[start:start + 500]
                body, headers = modern_request("tools/call", {"name": "resource_list", "arguments": {"resource": "Genre", "filter": {"GenreId": {"$in": chunk}}, "pageSize": 500}})
                found = {g["GenreId"] for g in post(c, restarted.mcp, body, headers).json()["result"]["structuredContent"]["data"]}
                missing += [g for g in chunk if g not in found]
        print(f"FIGURE after restart: {len(acknowledged) - len(missing)} of {len(acknowledged)} acknowledged writes found")
        assert not missing, f"{len(missing)} acknowledged writes are missing after kill -9: {missing[:10]}"
    finally:
        restarted.stop()


def test_graceful_shutdown_under_load_finishes_within_seconds(tmp_path):
    s = start_server(data_dir=str(tmp_path / "data"))
    stop = threading.Event()
    completed = [0]

    def hammer():
        with s.http() as c:
            while not stop.is_set():
                try:
                    body, headers = modern_request("tools/call", {"name": "resource_list", "arguments": {"resource": "Track", "pageSize": 200, "appends": ["album", "genre"]}})
                    if post(c, s.mcp, body, headers).status_code == 200:
                        completed[0] += 1
                except httpx2.TransportError:
                    return

    threads = [threading.Thread(target=hammer) for _ in range(16)]
    for t in threads:
        t.start()
    time.sleep(2)
    started = time.time()
    s.process.send_signal(signal.SIGTERM)
    code = s.process.wait(timeout=30)
    elapsed = time.time() - started
    stop.set()
    for t in threads:
        t.join()
    print(f"FIGURE graceful shutdown under load: {elapsed:.2f} s")
    assert completed[0] > 0
    assert code == 0
    assert elapsed < 6, f"shutdown under load took {elapsed:.1f} s"

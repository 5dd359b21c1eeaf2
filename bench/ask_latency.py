"""Latency of the question tools on the release binary: `sql_query` on the 40 gold queries of
ask-dev.jsonl, `ask` on their questions with the LLM engine against a local chat-completions
server that answers at once with the gold SQL (so the figure is Portico's own cost: prompt,
guard, execution, chart, chat), and the time to draw a chart (from `portico ask --chart`).

usage: ask_latency.py BINARY OUT_DIR  → writes OUT_DIR/ask-latency.json
"""

from __future__ import annotations

import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "Tests" / "EndToEnd"))
from fake_llm import FakeLLM, question_of  # noqa: E402
from mcp_http import modern_request  # noqa: E402

QUESTIONS = [json.loads(line) for line in (ROOT.parent / "shared" / "datasets" / "chinook" / "ask-dev.jsonl").read_text().splitlines() if line.strip()]
GOLD = {q["question"]: q["sql"] for q in QUESTIONS}
CHARTED = ["Show total revenue for each billing country.", "What were the total sales per year?", "Show the number of tracks in each genre."]


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main() -> None:
    binary, out = sys.argv[1], Path(sys.argv[2])
    llm = FakeLLM(lambda messages: json.dumps({"sql": GOLD.get(question_of(messages))}))
    data = tempfile.mkdtemp(prefix="portico-bench-ask-")
    port = 18000 + int(time.time()) % 1000
    server = subprocess.Popen([binary, "serve", "--demo", "--port", str(port), "--data-dir", data, "--log-level", "warning"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    banner = ""
    while "OpenCode" not in banner:
        banner += server.stdout.readline()
    key = re.search(r"pk_\S+", banner).group(0)
    subprocess.run([binary, "llm", "add", "--name", "fake", "--base-url", llm.base_url, "--model", "m", "--data-dir", data], check=True, capture_output=True)
    url = f"http://127.0.0.1:{port}/api/mcp"
    client = httpx2.Client(timeout=60)

    def call(tool: str, arguments: dict) -> float:
        body, headers = modern_request("tools/call", {"name": tool, "arguments": arguments})
        started = time.perf_counter()
        r = client.post(url, json=body, headers={**headers, "Authorization": f"Bearer {key}"})
        elapsed = (time.perf_counter() - started) * 1000
        assert r.status_code == 200 and "error" not in r.json(), r.text[:300]
        return elapsed

    figures: dict = {}
    for tool, arguments in [("sql_query", lambda q: {"sql": q["sql"]}), ("ask", lambda q: {"question": q["question"]})]:
        for q in QUESTIONS[:5]:
            call(tool, arguments(q))  # warm-up: schema read, connections opened
        times = [call(tool, arguments(q)) for _ in range(5) for q in QUESTIONS]
        figures[tool] = {"calls": len(times), "median_ms": statistics.median(times), "p99_ms": percentile(times, 99)}
    draws = []
    for question in CHARTED * 5:
        shown = subprocess.run([binary, "ask", question, "--chart", f"{data}/chart.png", "--data-dir", data], capture_output=True, text=True, check=True).stdout
        draws.append(float(re.search(r"drawn in ([\d.]+) ms", shown).group(1)))
    figures["chart"] = {"draws": len(draws), "median_ms": statistics.median(draws), "p99_ms": percentile(draws, 99),
                        "png_bytes": Path(f"{data}/chart.png").stat().st_size}
    server.terminate()
    server.wait(30)
    llm.stop()
    (out / "ask-latency.json").write_text(json.dumps(figures, indent=2))
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()

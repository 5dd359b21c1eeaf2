"""Latency of the question tools on the release binary: `sql_query` on the 40 gold queries of
ask-dev.jsonl, `ask` on their questions with the LLM engine against a local chat-completions
server that answers at once with the gold SQL (so the figure is Portico's own cost: prompt,
guard, execution, chart, chat), the built-in engine (question to rows with `portico eval`, and
`ask` over MCP), the time to draw a chart (from `portico ask --chart`), and a cold `portico ask`
on a 100,000-row datasource, which reads its schema and builds its value index first.

usage: ask_latency.py BINARY OUT_DIR  → writes OUT_DIR/ask-latency.json
"""

from __future__ import annotations

import json
import re
import shutil
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
    # What answering costs: the built-in engine's less sure readings are run at once, not first shown.
    server = subprocess.Popen([binary, "serve", "--demo", "--no-ask-sure-only", "--port", str(port), "--data-dir", data, "--log-level", "warning"],
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
    for tool, arguments in [("sql_query", lambda q: {"sql": q["sql"]}), ("ask", lambda q: {"question": q["question"]}),
                            ("builtin", lambda q: {"question": q["question"], "model": "builtin"})]:
        name, tool = tool, "ask" if tool == "builtin" else tool
        for q in QUESTIONS[:5]:
            call(tool, arguments(q))  # warm-up: schema read, connections opened
        times = [call(tool, arguments(q)) for _ in range(5) for q in QUESTIONS]
        figures[name] = {"calls": len(times), "median_ms": statistics.median(times), "p99_ms": percentile(times, 99)}
    # The built-in engine, question to rows (no chart), five rounds of the 40 questions in one process.
    rounds = Path(data) / "dev-x5.jsonl"
    rounds.write_text("".join(json.dumps(q) + "\n" for _ in range(5) for q in QUESTIONS))
    scored = subprocess.run([binary, "eval", str(rounds), "--engine", "builtin", "--data-dir", data], capture_output=True, text=True, check=True).stdout
    found = re.search(r"correct (\d+) .*wrong (\d+) .*\n.*median ([\d.]+) ms, p99 ([\d.]+) ms", scored)
    figures["builtin_rows"] = {"questions": len(QUESTIONS) * 5, "correct": int(found.group(1)), "wrong": int(found.group(2)),
                               "median_ms": float(found.group(3)), "p99_ms": float(found.group(4))}
    figures["value_index"] = cold_ask_on_a_large_datasource(binary, data)
    figures["accuracy"] = accuracy(binary, data)
    figures["spider"] = spider(binary, out)
    figures["semantic"] = semantic(binary, data, call)
    draws = []
    for question in CHARTED * 5:
        shown = subprocess.run([binary, "ask", question, "--no-sure-only", "--chart", f"{data}/chart.png", "--data-dir", data],
                               capture_output=True, text=True, check=True).stdout
        draws.append(float(re.search(r"drawn in ([\d.]+) ms", shown).group(1)))
    figures["chart"] = {"draws": len(draws), "median_ms": statistics.median(draws), "p99_ms": percentile(draws, 99),
                        "png_bytes": Path(f"{data}/chart.png").stat().st_size}
    server.terminate()
    server.wait(30)
    llm.stop()
    (out / "ask-latency.json").write_text(json.dumps(figures, indent=2))
    print(json.dumps(figures, indent=2))


def accuracy(binary: str, data: str) -> list[dict]:
    """The built-in engine scored with `portico eval` on every question set the tests keep: the dev
    questions, further Chinook questions, and six databases of other styles built by the tests."""
    from datasets import airline, company, hospital, shop, university, warehouse
    sets = [("ask-dev (Chinook)", ROOT.parent / "shared" / "datasets" / "chinook" / "ask-dev.jsonl", None),
            ("chinook-more", ROOT / "Tests" / "EndToEnd" / "datasets" / "chinook-more.jsonl", None),
            ("chinook-everyday", ROOT / "Tests" / "EndToEnd" / "datasets" / "chinook-everyday.jsonl", None),
            ("chinook-everyday-2", ROOT / "Tests" / "EndToEnd" / "datasets" / "chinook-everyday-2.jsonl", None),
            ("chinook-everyday-3", ROOT / "Tests" / "EndToEnd" / "datasets" / "chinook-everyday-3.jsonl", None)]
    for name, module in [("university", university), ("hospital", hospital), ("airline", airline), ("shop", shop), ("company", company),
                         ("warehouse", warehouse)]:
        path = str(Path(data) / f"{name}.sqlite")
        module.build(path)
        subprocess.run([binary, "datasource", "add", "--name", name, "--sqlite", path, "--data-dir", data], check=True, capture_output=True)
        sets.append((name, module.QUESTIONS, name))
    scores = []
    for name, questions, datasource in sets:
        command = [binary, "eval", str(questions), "--engine", "builtin", "--data-dir", data] + (["--datasource", datasource] if datasource else [])
        scored = subprocess.run(command, capture_output=True, text=True, check=True).stdout
        found = re.search(r"questions (\d+)\s+correct (\d+) .*wrong (\d+) .*refused (\d+)", scored)
        scores.append({"set": name, "questions": int(found.group(1)), "correct": int(found.group(2)), "wrong": int(found.group(3)),
                       "refused": int(found.group(4))})
    return scores


# query_metric calls over the model of datasets/chinook-semantic.yaml: one metric, a derived one by a
# dimension two joins away, a time grain with a segment over another table, a top 5.
METRIC_QUERIES = [
    {"metrics": ["revenue"]},
    {"metrics": ["average order value"], "dimensions": ["country"]},
    {"metrics": ["orders"], "dimensions": ["order date"], "grain": "month", "segments": ["repeat customers"]},
    {"metrics": ["revenue"], "dimensions": ["artist"], "order": [{"name": "revenue", "direction": "desc"}], "limit": 5},
]


def semantic(binary: str, data: str, call) -> dict:
    """The semantic layer on the demo data (imported after the other sets are scored, which it would
    otherwise answer): `query_metric` compile and run, and the built-in engine on the questions
    written over the model before it was run on them."""
    datasets = ROOT / "Tests" / "EndToEnd" / "datasets"
    subprocess.run([binary, "semantic", "import", str(datasets / "chinook-semantic.yaml"), "--datasource", "main", "--data-dir", data],
                   check=True, capture_output=True)
    for query in METRIC_QUERIES:
        call("query_metric", query)
    times = [call("query_metric", query) for _ in range(25) for query in METRIC_QUERIES]
    scores = []
    for name in ["chinook-semantic", "chinook-semantic-2", "chinook-semantic-3"]:
        scored = subprocess.run([binary, "eval", str(datasets / f"{name}.jsonl"), "--engine", "builtin", "--data-dir", data],
                                capture_output=True, text=True, check=True).stdout
        found = re.search(r"questions (\d+)\s+correct (\d+) .*wrong (\d+) .*refused (\d+)", scored)
        scores.append({"set": name, "questions": int(found.group(1)), "correct": int(found.group(2)), "wrong": int(found.group(3)),
                       "refused": int(found.group(4))})
    return {"calls": len(times), "median_ms": statistics.median(times), "p99_ms": percentile(times, 99), "accuracy": scores}


def spider(binary: str, out: Path) -> dict:
    """The built-in engine on Spider's training split (shared/datasets/spider-train): 137 databases
    and 6,817 questions written by others. `portico eval` adds each database from the folder."""
    questions = ROOT.parent / "shared" / "datasets" / "spider-train" / "questions.jsonl"
    data = out / "spider-data"
    shutil.rmtree(data, ignore_errors=True)
    # In the five folds of bench/spider-folds.json: the unseen fold's databases are reported as one total (issue 55).
    folds = ROOT / "bench" / "spider-folds.json"
    scored = subprocess.run([binary, "eval", str(questions), "--engine", "builtin", "--data-dir", str(data), "--log-level", "error",
                             "--folds", str(folds)], capture_output=True, text=True, check=True).stdout
    (out / "spider-eval.txt").write_text(scored)
    line = r"questions (\d+)\s+correct (\d+) .*wrong (\d+) .*refused (\d+)"
    total = re.search("^" + line, scored, re.M)
    timing = re.search(r"median ([\d.]+) ms, p99 ([\d.]+) ms", scored)
    return {
        "questions": int(total.group(1)), "correct": int(total.group(2)), "wrong": int(total.group(3)), "refused": int(total.group(4)),
        "median_ms": float(timing.group(1)), "p99_ms": float(timing.group(2)),
        "calibration": [{"band": band, "answers": int(n), "right": int(r)}
                        for band, n, r in re.findall(r"^  (\d\.\d-\d\.\d)  answers (\d+)  right (\d+)", scored, re.M)],
        "databases": [{"db": db, "questions": int(n), "correct": int(c), "wrong": int(w), "refused": int(f)}
                      for db, n, c, w, f in re.findall(r"^  (\S+)\t" + line, scored, re.M)],
        "folds": [{"fold": fold, "unseen": bool(unseen), "questions": int(n), "correct": int(c), "wrong": int(w), "refused": int(f)}
                  for fold, unseen, n, c, w, f in re.findall(r"^  fold (\d)( \(unseen\))?\t" + line, scored, re.M)],
        "studied": [{"questions": int(n), "correct": int(c), "wrong": int(w), "refused": int(f)}
                    for n, c, w, f in re.findall(r"^  studied folds\t" + line, scored, re.M)],
    }


def cold_ask_on_a_large_datasource(binary: str, data: str) -> dict:
    """100,000 orders with text columns of few and of many values; one `portico ask` process reads
    the schema, builds the value index and answers. Its whole time bounds the index build."""
    import random
    import sqlite3
    path = Path(data) / "orders.sqlite"
    rng = random.Random(7)
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_name TEXT, city TEXT, status TEXT, product TEXT, amount REAL, placed_on DATE)")
    cities = [f"City {n}" for n in range(300)]
    db.executemany("INSERT INTO orders (customer_name, city, status, product, amount, placed_on) VALUES (?, ?, ?, ?, ?, ?)",
                   ((f"Customer {rng.randrange(60000)}", rng.choice(cities), rng.choice(["open", "paid", "shipped", "returned"]),
                     f"Product {rng.randrange(20000)}", round(rng.random() * 500, 2), f"202{rng.randrange(5)}-0{rng.randrange(1, 10)}-1{rng.randrange(10)}")
                    for _ in range(100_000)))
    db.commit()
    db.close()
    subprocess.run([binary, "datasource", "add", "--name", "orders", "--sqlite", str(path), "--data-dir", data], check=True, capture_output=True)
    started = time.perf_counter()
    shown = subprocess.run([binary, "ask", "How many orders were shipped to City 42?", "--engine", "builtin", "--no-sure-only", "--datasource", "orders",
                            "--data-dir", data],
                           capture_output=True, text=True, check=True).stdout
    elapsed = (time.perf_counter() - started) * 1000
    assert "status" in shown and "City 42" in shown, shown
    return {"rows": 100_000, "cold_ask_ms": elapsed}


if __name__ == "__main__":
    main()

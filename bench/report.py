"""Turns the wrk outputs of bench/run.sh into bench/RESULTS.md."""

import datetime
import platform
import re
import subprocess
import sys
from pathlib import Path

out = Path(sys.argv[1])
duration, connections, rounds = sys.argv[2], sys.argv[3], int(sys.argv[4])


def result(name):
    """The median run (by throughput) of a load over the rounds."""
    runs = sorted((single(f"{name}-{r}") for r in range(1, rounds + 1)), key=lambda v: v.get("cps", v["rps"]))
    median = dict(runs[len(runs) // 2])
    median["spread"] = [round(v.get("cps", v["rps"])) for v in runs]
    median["jsonrpc_errors"] = sum(v["jsonrpc_errors"] for v in runs)
    return median


def single(name):
    text = (out / f"{name}.txt").read_text()
    values = {}
    m = re.search(r"RESULT (.*)", text)
    if m:
        for pair in m.group(1).split():
            k, v = pair.split("=")
            values[k] = int(v)
    else:  # plain wrk run (healthz)
        values["requests"] = int(re.search(r"(\d+) requests in", text).group(1))
        rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
        values["duration_us"] = int(values["requests"] / rps * 1e6)
        p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", text)
        scale = {"us": 1, "ms": 1000, "s": 1_000_000}[p99.group(2)]
        values["p99_us"] = int(float(p99.group(1)) * scale)
        p50 = re.search(r"50%\s+([\d.]+)(us|ms|s)", text)
        values["p50_us"] = int(float(p50.group(1)) * {"us": 1, "ms": 1000, "s": 1_000_000}[p50.group(2)])
        values["jsonrpc_errors"] = 0
    seconds = values["duration_us"] / 1e6
    values["rps"] = values["requests"] / seconds
    if "calls" in values:
        values["cps"] = values["calls"] / seconds
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    values["non2xx"] = int(non2xx.group(1)) if non2xx else 0
    return values


def ms(us):
    return f"{us / 1000:.2f} ms"


p = {k: result(f"portico-{k}") for k in ["healthz", "a-get", "a-list", "b"]}
f = {k: result(f"peer-{k}") for k in ["a-get", "a-list", "b"]}
pmem = int((out / "portico-peak-kb.txt").read_text().strip() or 0)
fmem = int((out / "peer-peak-kb.txt").read_text().strip() or 0)
cpu = next((l.split(":", 1)[1].strip() for l in Path("/proc/cpuinfo").read_text().splitlines() if l.startswith("model name")), platform.processor())


def ratio(a, b):
    return a / b if b else float("inf")


rows = [
    ("(a) `resource_get` by key, one session", p["a-get"]["rps"], f["a-get"]["rps"], p["a-get"], f["a-get"]),
    ("(a) `resource_list` 20 rows, one session", p["a-list"]["rps"], f["a-list"]["rps"], p["a-list"], f["a-list"]),
    ("(b) session per call (calls/s; 4 HTTP requests each)", p["b"]["cps"], f["b"]["cps"], p["b"], f["b"]),
]
get_vs_ceiling = p["a-get"]["rps"] / p["healthz"]["rps"]
list_vs_ceiling = p["a-list"]["rps"] / p["healthz"]["rps"]
met_a = all(ratio(r[1], r[2]) >= 20 for r in rows[:2])
met_b = ratio(rows[2][1], rows[2][2]) >= 20
met_c = get_vs_ceiling >= 0.4

print("# Benchmark results")
print()
steal = int((out / "steal-jiffies.txt").read_text().strip() or 0)
print(f"Measured {datetime.date.today()} by `make bench` on {cpu}, {platform.machine()}, Linux (a 2-vCPU virtual machine); release build;")
print(f"each server pinned to core 0, wrk to core 1; {connections} connections; {rounds} rounds of {duration} s per load, alternating between")
print("Portico and the peer so both see the same machine; each figure is the median round (all rounds in brackets).")
print(f"CPU time stolen by the hypervisor during the runs: {steal / 100:.1f} s.")
print("The peer is the official `mcp` 2.3.0 package's high-level server (formerly FastMCP) in stateless JSON mode, one")
print("uvicorn worker, serving equivalent `resource_get` / `resource_list` tools over a copy of the same SQLite file.")
print()
print("| load | Portico | FastMCP | ratio | Portico p50 / p99 | FastMCP p50 / p99 | JSON-RPC errors (P/F) |")
print("|---|---:|---:|---:|---|---|---|")
for label, a, b, pv, fv in rows:
    print(f"| {label} | {a:,.0f}/s {pv['spread']} | {b:,.0f}/s {fv['spread']} | **{ratio(a, b):.1f}×** | {ms(pv['p50_us'])} / {ms(pv['p99_us'])} | {ms(fv['p50_us'])} / {ms(fv['p99_us'])} | {pv['jsonrpc_errors']} / {fv['jsonrpc_errors']} |")
print(f"| (c) `GET /healthz`, the HTTP ceiling | {p['healthz']['rps']:,.0f}/s {p['healthz']['spread']} | | | {ms(p['healthz']['p50_us'])} / {ms(p['healthz']['p99_us'])} | | |")
print()
print(f"- (a) as a share of the ceiling (c): `resource_get` {get_vs_ceiling:.0%}, `resource_list` {list_vs_ceiling:.0%}.")
print(f"- Peak resident memory (VmHWM) over the whole run: Portico {pmem / 1024:.1f} MiB, FastMCP {fmem / 1024:.1f} MiB.")
print(f"- In (b) the peer's DELETE answers 405 (stateless mode has no sessions): {f['b']['non2xx']} non-2xx responses, expected.")
print()
print("## Targets")
print()
print(f"- Portico ≥ 20× FastMCP on (a): **{'met' if met_a else 'not met'}** ({ratio(rows[0][1], rows[0][2]):.1f}× get, {ratio(rows[1][1], rows[1][2]):.1f}× list).")
print(f"- Portico ≥ 20× FastMCP on (b): **{'met' if met_b else 'not met'}** ({ratio(rows[2][1], rows[2][2]):.1f}×).")
print(f"- (a) ≥ 40% of (c): **{'met' if met_c else 'not met'}** ({get_vs_ceiling:.0%} for get).")
notes = Path(__file__).with_name("NOTES.md")
if notes.exists():
    print()
    print(notes.read_text().strip())

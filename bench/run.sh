#!/usr/bin/env bash
# make bench: Portico (release build) against two peers under the same loads, on copies of the
# same SQLite data:
#   - MCP Toolbox for Databases (PyPI toolbox-server, a Go binary) serving two sqlite-sql tools,
#   - the official `mcp` package's high-level server (formerly FastMCP).
# Then Portico on PostgreSQL: one replica, and two behind nginx (bench/postgres.sh).
# Every server is pinned to core 0 and wrk to core 1; the loads alternate between the servers for
# several rounds, so all see the same machine, and the report takes each load's median round.
# Then bench/callgrind.sh counts the instructions of one tools/call, the tracked hot-path cost.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT=$ROOT/bench/out
DURATION=${BENCH_DURATION:-10}
ROUNDS=${BENCH_ROUNDS:-3}
CONNECTIONS=${BENCH_CONNECTIONS:-50}
SERVER_CPU=${BENCH_SERVER_CPU:-0}
LOAD_CPU=${BENCH_LOAD_CPU:-1}
rm -rf "$OUT" && mkdir -p "$OUT"

SUDO=$(if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null; then echo "sudo -n"; fi)
for tool in wrk:wrk sqlite3:sqlite3 valgrind:valgrind; do
  command -v "${tool#*:}" >/dev/null || { $SUDO apt-get install -y "${tool%%:*}" >/dev/null 2>&1 || { $SUDO apt-get update >/dev/null && $SUDO apt-get install -y "${tool%%:*}" >/dev/null; }; }
done
command -v taskset >/dev/null || { echo "taskset (util-linux) is needed"; exit 1; }
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install -q -r Tests/EndToEnd/requirements.txt -r bench/requirements.txt

make --no-print-directory release  # the binary as it is deployed (see the Makefile)
BIN=$ROOT/.build/release/portico
TOOLBOX=$(.venv/bin/python -c 'import pathlib, toolbox_server; print(pathlib.Path(toolbox_server.__file__).parent / "bin" / "toolbox")')
chmod +x "$TOOLBOX"

free_port() { .venv/bin/python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_up() { for _ in $(seq 300); do curl -sf -o /dev/null "$1" && return 0; sleep 0.1; done; echo "server at $1 did not come up"; exit 1; }
peak_kb() { awk '/VmHWM/ {print $2}' "/proc/$1/status"; }
steal() { awk '/^cpu / {print $9}' /proc/stat; }
load() { taskset -c "$LOAD_CPU" wrk --latency -d "${DURATION}s" -t1 -c"$CONNECTIONS" "$@"; }
load_sessions() { taskset -c "$LOAD_CPU" wrk --latency -d "${DURATION}s" -t"$CONNECTIONS" -c"$CONNECTIONS" "$@"; }

PORTICO_PID= FASTMCP_PID= TOOLBOX_PID=
trap 'kill $PORTICO_PID $FASTMCP_PID $TOOLBOX_PID 2>/dev/null || true' EXIT

# Portico with the demo data in a fresh data dir; every call carries its API key.
PORT=$(free_port)
taskset -c "$SERVER_CPU" "$BIN" serve --demo --port "$PORT" --data-dir "$OUT/data" --log-level warning > "$OUT/portico.banner" 2> "$OUT/portico.log" &
PORTICO_PID=$!
wait_up "http://127.0.0.1:$PORT/healthz"
KEY=$(grep -o 'pk_[A-Za-z0-9_]*' "$OUT/portico.banner" | head -1)
URL=http://127.0.0.1:$PORT/api/mcp
SESSION=$(curl -s -D - -o /dev/null "$URL" -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
  -d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}' \
  | awk -F': ' 'tolower($1)=="mcp-session-id" {print $2}' | tr -d '\r')

# The peers over copies of the same SQLite file.
sqlite3 "$OUT/data/portico.sqlite" "PRAGMA wal_checkpoint(TRUNCATE);" >/dev/null 2>&1 || true
cp "$OUT/data/portico.sqlite" "$OUT/fastmcp.sqlite"
cp "$OUT/data/portico.sqlite" "$OUT/toolbox.sqlite"
FASTMCP_PORT=$(free_port)
taskset -c "$SERVER_CPU" .venv/bin/python bench/fastmcp_peer.py "$OUT/fastmcp.sqlite" "$FASTMCP_PORT" > "$OUT/fastmcp.log" 2>&1 &
FASTMCP_PID=$!
FASTMCP=http://127.0.0.1:$FASTMCP_PORT/mcp
sed "s#@DATABASE@#$OUT/toolbox.sqlite#" bench/toolbox.yaml.in > "$OUT/toolbox.yaml"
TOOLBOX_PORT=$(free_port)
taskset -c "$SERVER_CPU" "$TOOLBOX" --config "$OUT/toolbox.yaml" --port "$TOOLBOX_PORT" --disable-version-check --disable-reload --log-level WARN > "$OUT/toolbox.log" 2>&1 &
TOOLBOX_PID=$!
TOOLBOX_URL=http://127.0.0.1:$TOOLBOX_PORT/mcp
for peer in "$FASTMCP" "$TOOLBOX_URL"; do
  for _ in $(seq 150); do curl -s -o /dev/null -X POST "$peer" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' -d '{"jsonrpc":"2.0","id":1,"method":"ping"}' && break; sleep 0.2; done
done

# Each server's loads, by name: modern-era get and list, one handshake-era session, a session per call.
run_loads() {  # server round
  local server=$1 round=$2 url key session
  case $server in
    portico) url=$URL key=$KEY session=$SESSION ;;
    fastmcp) url=$FASTMCP key=- session=- ;;
    toolbox) url=$TOOLBOX_URL key=- session=- ;;
  esac
  load -s bench/lua/modern.lua "$url" -- get "$key" > "$OUT/$server-get-$round.txt"
  load -s bench/lua/modern.lua "$url" -- list "$key" > "$OUT/$server-list-$round.txt"
  if [ "$server" != toolbox ]; then
    load -s bench/lua/call.lua "$url" -- get "$key" "$session" > "$OUT/$server-sessionget-$round.txt"
  fi
  load_sessions -s bench/lua/session_per_call.lua "$url" -- "$key" > "$OUT/$server-b-$round.txt"
}

echo "warming up"
taskset -c "$LOAD_CPU" wrk -d3s -t1 -c"$CONNECTIONS" -s bench/lua/modern.lua "$URL" -- get "$KEY" > /dev/null
taskset -c "$LOAD_CPU" wrk -d3s -t1 -c"$CONNECTIONS" -s bench/lua/modern.lua "$URL" -- list "$KEY" > /dev/null
taskset -c "$LOAD_CPU" wrk -d3s -t1 -c"$CONNECTIONS" -s bench/lua/modern.lua "$FASTMCP" -- get - > /dev/null
taskset -c "$LOAD_CPU" wrk -d3s -t1 -c"$CONNECTIONS" -s bench/lua/modern.lua "$TOOLBOX_URL" -- get - > /dev/null

STEAL_START=$(steal)
for round in $(seq "$ROUNDS"); do
  echo "round $round/$ROUNDS"
  load "http://127.0.0.1:$PORT/healthz" > "$OUT/portico-healthz-$round.txt"
  # Rotate the order each round so no server always runs right after another's load.
  case $(( round % 3 )) in
    1) order="portico toolbox fastmcp" ;;
    2) order="toolbox fastmcp portico" ;;
    0) order="fastmcp portico toolbox" ;;
  esac
  for server in $order; do run_loads "$server" "$round"; done
done
# Side by side: Portico and Toolbox loaded at the same time on their shared core, each by its own
# wrk. The machine's speed swings by tens of percent within seconds (a fixed loop shows it), and a
# round measured alone catches one moment of it; side by side both see the same moments, so the
# ratio of requests per CPU-second of each does not depend on when each round ran.
ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
for round in $(seq "$ROUNDS"); do
  echo "side by side $round/$ROUNDS"
  for kind in get list; do
    p0=$(ticks $PORTICO_PID) t0=$(ticks $TOOLBOX_PID)
    load -s bench/lua/modern.lua "$URL" -- "$kind" "$KEY" > "$OUT/together-portico-$kind-$round.txt" &
    WRK_PID=$!
    load -s bench/lua/modern.lua "$TOOLBOX_URL" -- "$kind" - > "$OUT/together-toolbox-$kind-$round.txt"
    wait $WRK_PID
    echo "$(( $(ticks $PORTICO_PID) - p0 )) $(( $(ticks $TOOLBOX_PID) - t0 ))" > "$OUT/together-ticks-$kind-$round.txt"
  done
done
echo $(( $(steal) - STEAL_START )) > "$OUT/steal-jiffies.txt"
peak_kb $PORTICO_PID > "$OUT/portico-peak-kb.txt"
peak_kb $FASTMCP_PID > "$OUT/fastmcp-peak-kb.txt"
peak_kb $TOOLBOX_PID > "$OUT/toolbox-peak-kb.txt"
kill $PORTICO_PID $FASTMCP_PID $TOOLBOX_PID 2>/dev/null || true
wait 2>/dev/null || true
PORTICO_PID= FASTMCP_PID= TOOLBOX_PID=

echo "the audit trail: the same binary with and without it, side by side and in instructions"
bash bench/audit_cost.sh "$BIN" "$OUT" "$ROUNDS" "$DURATION" "$CONNECTIONS" "$SERVER_CPU" "$LOAD_CPU"

echo "PostgreSQL: one replica, one behind nginx, two behind nginx"
bash bench/postgres.sh "$BIN" "$OUT"

echo "the tool lists' bytes: the first list, and each package named alone"
.venv/bin/python bench/tool_bytes.py "$BIN" "$OUT" > "$OUT/tool-bytes.txt"
echo "a question before a destroy: resource_destroy with confirm, and asked then confirmed"
taskset -c "$SERVER_CPU" .venv/bin/python bench/confirmation_bench.py "$BIN" "$OUT" > "$OUT/confirmation.txt"

echo "question tools: sql_query, ask (LLM engine against a scripted server) and chart drawing"
taskset -c "$SERVER_CPU" .venv/bin/python bench/ask_latency.py "$BIN" "$OUT" > "$OUT/ask-latency.txt"

echo "workflows: the cost to the write that starts one, and executions per second"
# It pins its two replicas itself, one to each core.
.venv/bin/python bench/workflow_bench.py "$BIN" "$OUT" > "$OUT/workflow.txt"

echo "counting instructions per call (callgrind)"
bash bench/callgrind.sh "$BIN" "$OUT" > "$OUT/callgrind.txt"
cat "$OUT/callgrind.txt"
# The same with every rate limit and quota on (set high enough never to refuse): what they cost a call.
mkdir -p "$OUT/limits"
CALLGRIND_SERVE_ARGS="--rate-limit 100000000/min --app-rate-limit 100000000/min --tool-call-quota 100000000/day --app-tool-call-quota 100000000/day" \
  bash bench/callgrind.sh "$BIN" "$OUT/limits" > "$OUT/callgrind-limits.txt"
cat "$OUT/callgrind-limits.txt"

echo "counting heap allocations per call (a counting malloc preloaded)"
PORTICO_BIN="$BIN" PORTICO_ALLOCATIONS_OUT="$OUT/allocations.txt" .venv/bin/python -m pytest -q -p no:cacheprovider \
  Tests/EndToEnd/test_allocations.py -k baseline > "$OUT/allocations-test.txt" || cat "$OUT/allocations-test.txt"
cat "$OUT/allocations.txt"

.venv/bin/python bench/report.py "$OUT" "$DURATION" "$CONNECTIONS" "$ROUNDS" > bench/RESULTS.md
cat bench/RESULTS.md
.venv/bin/python bench/report.py --check-cost "$OUT"

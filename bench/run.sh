#!/usr/bin/env bash
# make bench: Portico (release build) and the FastMCP peer under the same loads. Both servers are
# pinned to core 0 and wrk to core 1; the loads alternate between the two servers for several
# rounds, so both see the same machine, and the report takes each load's median.
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

command -v wrk >/dev/null || { apt-get install -y wrk >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y wrk >/dev/null; }; }
command -v taskset >/dev/null || { echo "taskset (util-linux) is needed"; exit 1; }
[ -x .venv/bin/python ] || { python3 -m venv .venv && .venv/bin/pip install -q -r Tests/EndToEnd/requirements.txt; }

swift build -c release --product portico
BIN=$ROOT/.build/release/portico

free_port() { .venv/bin/python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_up() { for _ in $(seq 300); do curl -sf -o /dev/null "$1" && return 0; sleep 0.1; done; echo "server at $1 did not come up"; exit 1; }
peak_kb() { awk '/VmHWM/ {print $2}' "/proc/$1/status"; }
steal() { awk '/^cpu / {print $9}' /proc/stat; }
load() { taskset -c "$LOAD_CPU" wrk --latency -d "${DURATION}s" -t1 -c"$CONNECTIONS" "$@"; }
load_sessions() { taskset -c "$LOAD_CPU" wrk --latency -d "${DURATION}s" -t"$CONNECTIONS" -c"$CONNECTIONS" "$@"; }

PORTICO_PID= PEER_PID=
trap 'kill $PORTICO_PID $PEER_PID 2>/dev/null || true' EXIT

# Portico with the demo data in a fresh data dir.
PORT=$(free_port)
taskset -c "$SERVER_CPU" "$BIN" serve --demo --port "$PORT" --data-dir "$OUT/data" --log-level warning > "$OUT/portico.banner" 2> "$OUT/portico.log" &
PORTICO_PID=$!
wait_up "http://127.0.0.1:$PORT/healthz"
KEY=$(grep -o 'pk_[A-Za-z0-9_]*' "$OUT/portico.banner" | head -1)
URL=http://127.0.0.1:$PORT/api/mcp
SESSION=$(curl -s -D - -o /dev/null "$URL" -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
  -d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}' \
  | awk -F': ' 'tolower($1)=="mcp-session-id" {print $2}' | tr -d '\r')

# The peer over a copy of the same SQLite file.
curl -s -o /dev/null "$URL" -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' -d '{"jsonrpc":"2.0","id":1,"method":"ping"}'
sqlite3 "$OUT/data/portico.sqlite" "PRAGMA wal_checkpoint(TRUNCATE);" >/dev/null 2>&1 || true
cp "$OUT/data/portico.sqlite" "$OUT/peer.sqlite"
PEER_PORT=$(free_port)
taskset -c "$SERVER_CPU" .venv/bin/python bench/fastmcp_peer.py "$OUT/peer.sqlite" "$PEER_PORT" > "$OUT/peer.log" 2>&1 &
PEER_PID=$!
PEER=http://127.0.0.1:$PEER_PORT/mcp
for _ in $(seq 150); do curl -s -o /dev/null -X POST "$PEER" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' -d '{"jsonrpc":"2.0","id":1,"method":"ping"}' && break; sleep 0.2; done

echo "warming up"
taskset -c "$LOAD_CPU" wrk -d3s -t1 -c"$CONNECTIONS" -s bench/lua/call.lua "$URL" -- get "$KEY" "$SESSION" > /dev/null
taskset -c "$LOAD_CPU" wrk -d3s -t1 -c"$CONNECTIONS" -s bench/lua/call.lua "$PEER" -- get - - > /dev/null

STEAL_START=$(steal)
for round in $(seq "$ROUNDS"); do
  echo "round $round/$ROUNDS"
  load "http://127.0.0.1:$PORT/healthz" > "$OUT/portico-healthz-$round.txt"
  load -s bench/lua/call.lua "$URL" -- get "$KEY" "$SESSION" > "$OUT/portico-a-get-$round.txt"
  load -s bench/lua/call.lua "$PEER" -- get - - > "$OUT/peer-a-get-$round.txt"
  load -s bench/lua/call.lua "$URL" -- list "$KEY" "$SESSION" > "$OUT/portico-a-list-$round.txt"
  load -s bench/lua/call.lua "$PEER" -- list - - > "$OUT/peer-a-list-$round.txt"
  load_sessions -s bench/lua/session_per_call.lua "$URL" -- "$KEY" > "$OUT/portico-b-$round.txt"
  load_sessions -s bench/lua/session_per_call.lua "$PEER" -- - > "$OUT/peer-b-$round.txt"
done
echo $(( $(steal) - STEAL_START )) > "$OUT/steal-jiffies.txt"
peak_kb $PORTICO_PID > "$OUT/portico-peak-kb.txt"
peak_kb $PEER_PID > "$OUT/peer-peak-kb.txt"

.venv/bin/python bench/report.py "$OUT" "$DURATION" "$CONNECTIONS" "$ROUNDS" > bench/RESULTS.md
cat bench/RESULTS.md

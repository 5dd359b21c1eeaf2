#!/usr/bin/env bash
# What the audit trail costs a tools/call (issue 59 asks ≤ 3% of a get), two ways, the same binary
# with the trail and without it (`--audit-retention-days 0`):
#   - side by side: both servers on one core, each loaded by its own wrk at once, requests per
#     CPU tick of each (the machine's swings within seconds reach both alike);
#   - instructions per call (callgrind), the trail's instructions being the difference.
# Usage: audit_cost.sh PORTICO_BINARY OUT_DIR ROUNDS DURATION CONNECTIONS SERVER_CPU LOAD_CPU
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$1 OUT=$2/audit ROUNDS=$3 DURATION=$4 CONNECTIONS=$5 SERVER_CPU=$6 LOAD_CPU=$7
rm -rf "$OUT" && mkdir -p "$OUT"
free_port() { .venv/bin/python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null || true' EXIT
start() {  # name extra-flags...; sets PORT, KEY and PID
  local name=$1
  shift
  PORT=$(free_port)
  taskset -c "$SERVER_CPU" "$BIN" serve --demo --port "$PORT" --data-dir "$OUT/$name-data" --log-level warning "$@" > "$OUT/$name.banner" 2> "$OUT/$name.log" &
  PID=$!
  PIDS+=("$PID")
  for _ in $(seq 300); do curl -sf -o /dev/null "http://127.0.0.1:$PORT/healthz" && break; sleep 0.1; done
  curl -sf -o /dev/null "http://127.0.0.1:$PORT/healthz" || { echo "the audit bench's server '$name' did not come up (see $OUT/$name.log)"; exit 1; }
  KEY=$(grep -o 'pk_[A-Za-z0-9_]*' "$OUT/$name.banner" | head -1 || true)
  [ -n "$KEY" ] || { echo "the audit bench's server '$name' printed no API key (see $OUT/$name.banner)"; exit 1; }
}
start on
ON_PORT=$PORT ON_KEY=$KEY ON_PID=$PID
start off --audit-retention-days 0
OFF_PORT=$PORT OFF_KEY=$KEY OFF_PID=$PID
load() { taskset -c "$LOAD_CPU" wrk -d "$1" -t1 -c"$CONNECTIONS" -s bench/lua/modern.lua "http://127.0.0.1:$2/api/mcp" -- get "$3"; }
load 3s "$ON_PORT" "$ON_KEY" > /dev/null
load 3s "$OFF_PORT" "$OFF_KEY" > /dev/null
for round in $(seq "$ROUNDS"); do
  on0=$(ticks "$ON_PID") off0=$(ticks "$OFF_PID")
  load "${DURATION}s" "$ON_PORT" "$ON_KEY" > "$OUT/on-$round.txt" &
  WRK=$!
  PIDS+=("$WRK")
  load "${DURATION}s" "$OFF_PORT" "$OFF_KEY" > "$OUT/off-$round.txt"
  wait $WRK
  unset 'PIDS[-1]'
  echo "$(( $(ticks "$ON_PID") - on0 )) $(( $(ticks "$OFF_PID") - off0 ))" > "$OUT/ticks-$round.txt"
done
kill "${PIDS[@]}" 2>/dev/null || true
wait 2>/dev/null || true
PIDS=()
CALLGRIND_SERVE_ARGS="--audit-retention-days 0" bash bench/callgrind.sh "$BIN" "$OUT" > "$OUT/callgrind-off.txt"
cat "$OUT/callgrind-off.txt"

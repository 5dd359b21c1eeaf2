#!/usr/bin/env bash
# The hot path's cost as a number that does not drift with the machine: instructions per
# tools/call, counted by callgrind over CALLS sequential calls of each kind (after a warm-up), in
# the 2026-07-28 era with the API key checked. Usage: callgrind.sh PORTICO_BINARY OUT_DIR
# The demo data is created first by the binary itself, outside valgrind, in a fresh directory.
# Under valgrind everything runs some 50 times slower, so the inline read budget is raised to keep
# reads on the path they take natively. CALLGRIND_SERVE_ARGS adds flags to the measured server
# (e.g. the rate limits, to count what they cost).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$1
OUT=$2
CALLS=${CALLGRIND_CALLS:-1000}
DATA=$OUT/callgrind-data
mkdir -p "$OUT" && rm -rf "$DATA" "$OUT"/callgrind.out*
PORT=$(.venv/bin/python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$BIN" serve --demo --port "$PORT" --data-dir "$DATA" --log-level warning > "$OUT/callgrind-demo.banner" 2>/dev/null &
PID=$!
for _ in $(seq 300); do curl -sf -o /dev/null "http://127.0.0.1:$PORT/healthz" && break; sleep 0.1; done
kill -TERM $PID && wait $PID || true
KEY=$(grep -o 'pk_[A-Za-z0-9_]*' "$OUT/callgrind-demo.banner" | head -1)
# valgrind 3.19 cannot read the toolchain's DWARF 5; symbols are enough for counting.
objcopy --strip-debug "$BIN" "$OUT/portico-symbols-only"
valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$OUT/callgrind.out" \
  "$OUT/portico-symbols-only" serve --port "$PORT" --data-dir "$DATA" --log-level warning --inline-read-budget 100 ${CALLGRIND_SERVE_ARGS:-} > "$OUT/callgrind-server.log" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null || true' EXIT
for _ in $(seq 600); do curl -sf -o /dev/null "http://127.0.0.1:$PORT/healthz" && break; sleep 0.2; done
.venv/bin/python bench/callgrind_client.py "http://127.0.0.1:$PORT/api/mcp" "$KEY" "$PID" "$CALLS" "$OUT"

#!/usr/bin/env bash
# make bench, PostgreSQL part: the same get and list loads against Portico on PostgreSQL — one
# replica directly, one replica behind nginx, two replicas behind nginx (round-robin, keepalive)
# — each for BENCH_PG_ROUNDS rounds of DURATION seconds. Replicas are pinned to core 0, wrk to
# core 1; PostgreSQL and nginx are not pinned (this machine has two cores), which is what limits
# scaling here. Writes OUT/pg-<setup>-<load>-<round>.txt for bench/report.py.
#   bench/postgres.sh BIN OUT
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BIN=$1
OUT=$2
DURATION=${BENCH_DURATION:-10}
ROUNDS=${BENCH_PG_ROUNDS:-2}
CONNECTIONS=${BENCH_CONNECTIONS:-50}
SERVER_CPU=${BENCH_SERVER_CPU:-0}
LOAD_CPU=${BENCH_LOAD_CPU:-1}
PG=$OUT/pg
SUDO=$(if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null; then echo "sudo -n"; fi)
install() { $SUDO apt-get install -y "$1" >/dev/null 2>&1 || { $SUDO apt-get update >/dev/null && $SUDO apt-get install -y "$1" >/dev/null; }; }
ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || install postgresql
command -v nginx >/dev/null || install nginx

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_up() { for _ in $(seq 600); do curl -sf -o /dev/null "$1" && return 0; sleep 0.1; done; echo "server at $1 did not come up"; exit 1; }
load() { taskset -c "$LOAD_CPU" wrk --latency -d "${DURATION}s" -t1 -c"$CONNECTIONS" "$@"; }

PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  [ -f "$PG/nginx/nginx.pid" ] && kill "$(cat "$PG/nginx/nginx.pid")" 2>/dev/null || true
  bash Tests/pg_cluster.sh stop "$PG/cluster" || true
}
trap cleanup EXIT

bash Tests/pg_cluster.sh start "$PG/cluster"
CLUSTER=$(cat "$PG/cluster/url")
psql "$CLUSTER" -q -c "CREATE DATABASE portico_bench" >/dev/null
DATABASE=${CLUSTER/\/chinook/\/portico_bench}
export PORTICO_DATABASE_URL=$DATABASE
export PORTICO_MASTER_KEY=$(head -c 32 /dev/urandom | base64)

replica() {  # name port: a replica on core 0, its banner and log in PG/
  taskset -c "$SERVER_CPU" "$BIN" serve --demo --port "$2" --data-dir "$PG/$1" --log-level warning > "$PG/$1.banner" 2> "$PG/$1.log" &
  PIDS+=($!)
  wait_up "http://127.0.0.1:$2/healthz"
}
A=$(free_port)
B=$(free_port)
replica a "$A"
replica b "$B"
# The demo admin's key is shown by the replica that created it; a second key from the command line otherwise.
KEY=$(grep -ho 'pk_[A-Za-z0-9_]*' "$PG/a.banner" "$PG/b.banner" | head -1)
[ -n "$KEY" ] || KEY=$("$BIN" apikey create --user admin --data-dir "$PG/a" | tail -1)

NGINX=$(free_port)
NGINX_ONE=$(free_port)
mkdir -p "$PG/nginx"
cat > "$PG/nginx/nginx.conf" <<EOF
worker_processes 1;
error_log $PG/nginx/error.log;
pid $PG/nginx/nginx.pid;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $PG/nginx/body;
  proxy_temp_path $PG/nginx/proxy;
  fastcgi_temp_path $PG/nginx/fastcgi;
  uwsgi_temp_path $PG/nginx/uwsgi;
  scgi_temp_path $PG/nginx/scgi;
  upstream two { server 127.0.0.1:$A; server 127.0.0.1:$B; keepalive 64; }
  upstream one { server 127.0.0.1:$A; keepalive 64; }
  server {
    listen 127.0.0.1:$NGINX;
    location / { proxy_pass http://two; proxy_http_version 1.1; proxy_set_header Connection ""; proxy_buffering off; }
  }
  server {
    listen 127.0.0.1:$NGINX_ONE;
    location / { proxy_pass http://one; proxy_http_version 1.1; proxy_set_header Connection ""; proxy_buffering off; }
  }
}
EOF
nginx -p "$PG/nginx" -c "$PG/nginx/nginx.conf"
wait_up "http://127.0.0.1:$NGINX/healthz"

declare -A URLS=(
  [direct]="http://127.0.0.1:$A/api/mcp"
  [nginx1]="http://127.0.0.1:$NGINX_ONE/api/mcp"
  [nginx2]="http://127.0.0.1:$NGINX/api/mcp"
)
for setup in direct nginx1 nginx2; do
  taskset -c "$LOAD_CPU" wrk -d3s -t1 -c"$CONNECTIONS" -s bench/lua/modern.lua "${URLS[$setup]}" -- get "$KEY" > /dev/null
done
for round in $(seq "$ROUNDS"); do
  echo "PostgreSQL round $round/$ROUNDS"
  for setup in direct nginx1 nginx2; do
    for kind in get list; do
      load -s bench/lua/modern.lua "${URLS[$setup]}" -- "$kind" "$KEY" > "$OUT/pg-$setup-$kind-$round.txt"
    done
  done
done
echo "$ROUNDS" > "$OUT/pg-rounds.txt"

#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests, on a free loopback port, loaded with the Chinook
# sample: `start DIR` creates and starts it and writes its URL to DIR/url; `stop DIR` stops it and
# deletes DIR; `down DIR` and `up DIR` stop and start its server, keeping its data (fault tests).
# As root, the server runs as the `postgres` user (PostgreSQL refuses root).
set -euo pipefail
command=$1
dir=$2
here="$(cd "$(dirname "$0")/.." && pwd)"
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$bin" ] || { echo "PostgreSQL is not installed (Debian package postgresql)" >&2; exit 1; }
as_postgres() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

case "$command" in
start)
  mkdir -p "$dir"
  chmod 700 "$dir"
  [ "$(id -u)" = 0 ] && chown postgres "$dir"
  password="portico-test-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  echo "$password" > "$dir/pw"
  [ "$(id -u)" = 0 ] && chown postgres "$dir/pw"
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  as_postgres "$bin/initdb" -D "$dir/data" -U postgres --auth=scram-sha-256 --pwfile="$dir/pw" -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log"
  echo "$port" > "$dir/port"
  as_postgres "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=300" start >/dev/null
  PGPASSWORD="$password" psql -h 127.0.0.1 -p "$port" -U postgres -d postgres -q -v ON_ERROR_STOP=1 \
    -f "$here/../shared/datasets/chinook/Chinook_PostgreSql.sql" >"$dir/load.log" 2>&1
  echo "postgres://postgres:$password@127.0.0.1:$port/chinook?sslmode=disable" > "$dir/url"
  ;;
down)
  as_postgres "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
  ;;
up)
  port=$(cat "$dir/port")
  as_postgres "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=300" start >/dev/null
  ;;
stop)
  [ -d "$dir/data" ] && as_postgres "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null || true
  rm -rf "$dir"
  ;;
*)
  echo "usage: $0 start|stop|down|up DIR" >&2
  exit 2
  ;;
esac

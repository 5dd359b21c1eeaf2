#!/usr/bin/env bash
# A throwaway MariaDB server for the tests, on a free loopback port, loaded with the Chinook sample
# (written for MySQL by Tests/EndToEnd/datasets/chinook_mysql.py): `start DIR` creates and starts it
# and writes DIR/url (a user that may only read `chinook`), DIR/writer_url (one that may write it,
# to show that Portico's read-only session refuses writes all the same) and DIR/file_url (one with
# the FILE privilege, which Portico refuses to use); `stop DIR` stops it and deletes DIR. As root,
# the server runs as the `mysql` user.
set -euo pipefail
command=$1
dir=$2
here="$(cd "$(dirname "$0")/.." && pwd)"
server=$(command -v mariadbd || echo /usr/sbin/mariadbd)
[ -x "$server" ] || { echo "MariaDB is not installed (Debian package mariadb-server)" >&2; exit 1; }
as_mysql() { if [ "$(id -u)" = 0 ]; then runuser -u mysql -- "$@"; else "$@"; fi; }
client() { mariadb --no-defaults --socket="$dir/mysql.sock" -uroot "$@"; }

case "$command" in
start)
  mkdir -p "$dir"
  chmod 700 "$dir"
  [ "$(id -u)" = 0 ] && chown mysql "$dir"
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  echo "$port" > "$dir/port"
  as_mysql mariadb-install-db --no-defaults --datadir="$dir/data" --auth-root-authentication-method=normal --skip-test-db \
    >"$dir/install.log" 2>&1
  user_flag=(); [ "$(id -u)" = 0 ] && user_flag=(--user=mysql)
  as_mysql "$server" --no-defaults "${user_flag[@]}" --datadir="$dir/data" --socket="$dir/mysql.sock" --port="$port" \
    --bind-address=127.0.0.1 --pid-file="$dir/mariadb.pid" --log-error="$dir/server.log" --skip-name-resolve \
    --innodb-buffer-pool-size=32M --innodb-log-file-size=16M --performance-schema=OFF --max-connections=200 \
    >/dev/null 2>&1 &
  for _ in $(seq 600); do client -e 'SELECT 1' >/dev/null 2>&1 && break; sleep 0.1; done
  client -e 'SELECT 1' >/dev/null || { echo "MariaDB did not start; see $dir/server.log" >&2; exit 1; }
  password="portico-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  writer="writer-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  filer="filer-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  client <<SQL
CREATE DATABASE chinook CHARACTER SET utf8mb4;
CREATE USER 'portico'@'127.0.0.1' IDENTIFIED BY '$password';
CREATE USER 'portico'@'localhost' IDENTIFIED BY '$password';
GRANT SELECT, SHOW VIEW ON chinook.* TO 'portico'@'127.0.0.1', 'portico'@'localhost';
CREATE USER 'writer'@'127.0.0.1' IDENTIFIED BY '$writer';
GRANT ALL ON chinook.* TO 'writer'@'127.0.0.1';
CREATE USER 'filer'@'127.0.0.1' IDENTIFIED BY '$filer';
GRANT SELECT ON chinook.* TO 'filer'@'127.0.0.1';
GRANT FILE ON *.* TO 'filer'@'127.0.0.1';
SQL
  python3 "$here/Tests/EndToEnd/datasets/chinook_mysql.py" | client chinook
  echo "mysql://portico:$password@127.0.0.1:$port/chinook" > "$dir/url"
  echo "mysql://writer:$writer@127.0.0.1:$port/chinook" > "$dir/writer_url"
  echo "mysql://filer:$filer@127.0.0.1:$port/chinook" > "$dir/file_url"
  ;;
stop)
  if [ -S "$dir/mysql.sock" ]; then
    mariadb-admin --no-defaults --socket="$dir/mysql.sock" -uroot shutdown >/dev/null 2>&1 || true
  fi
  if [ -f "$dir/mariadb.pid" ]; then
    pid=$(cat "$dir/mariadb.pid")
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -rf "$dir"
  ;;
*)
  echo "usage: $0 start|stop DIR" >&2
  exit 2
  ;;
esac

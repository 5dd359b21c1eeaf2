#!/usr/bin/env bash
# A throwaway MariaDB server for the tests, on a free loopback port, loaded with the Chinook sample
# (written for MySQL by Tests/EndToEnd/datasets/chinook_mysql.py): `start DIR` creates and starts it
# and writes DIR/url (a user that may only read `chinook`), DIR/writer_url (one that may write it,
# to show that Portico's read-only session refuses writes all the same) and DIR/file_url (one with
# the FILE privilege, which Portico refuses to use); `stop DIR` stops it and deletes DIR. As root,
# the server runs as the `mysql` user. MariaDB's root has no password but only the socket, in DIR.
set -euo pipefail
command=${1:-}
dir=${2:-}
[ -n "$dir" ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }
here="$(cd "$(dirname "$0")/.." && pwd)"
server=$(command -v mariadbd || echo /usr/sbin/mariadbd)
[ -x "$server" ] || { echo "MariaDB is not installed (Debian package mariadb-server)" >&2; exit 1; }
as_mysql() { if [ "$(id -u)" = 0 ]; then runuser -u mysql -- "$@"; else "$@"; fi; }
client() { mariadb --no-defaults --socket="$dir/mysql.sock" -uroot "$@"; }
secret() { echo "$1-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"; }
# The pid file's process, if it is still a MariaDB server (the file outlives a crash).
server_pid() {
  local pid
  pid=$(cat "$dir/mariadb.pid" 2>/dev/null) || return 1
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = mariadbd ] && echo "$pid"
}
# Shuts the server down, if it runs, and waits for it to go.
halt() {
  local pid
  # The pid first: a clean shutdown removes the pid file a moment before the process has gone.
  pid=$(server_pid) || return 0
  mariadb-admin --no-defaults --socket="$dir/mysql.sock" -uroot shutdown >/dev/null 2>&1 || kill "$pid" 2>/dev/null || true
  for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
}

case "$command" in
start)
  mkdir -p "$dir"
  chmod 700 "$dir"
  [ "$(id -u)" = 0 ] && chown mysql "$dir"
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  echo "$port" > "$dir/port"
  # Small memory and redo log (install-db hands the InnoDB options on to its bootstrap server, so the
  # log is not written at its 96 MB default and then resized).
  small=(--innodb-buffer-pool-size=32M --innodb-log-file-size=16M --performance-schema=OFF)
  as_mysql mariadb-install-db --no-defaults --datadir="$dir/data" --auth-root-authentication-method=normal \
    --skip-test-db "${small[@]}" >"$dir/install.log" 2>&1
  user_flag=(); [ "$(id -u)" = 0 ] && user_flag=(--user=mysql)
  as_mysql "$server" --no-defaults "${user_flag[@]}" --datadir="$dir/data" --socket="$dir/mysql.sock" --port="$port" \
    --bind-address=127.0.0.1 --pid-file="$dir/mariadb.pid" --log-error="$dir/server.log" --skip-name-resolve \
    "${small[@]}" --max-connections=200 >/dev/null 2>&1 &
  started=$!
  # Should anything below fail, the server goes too (the caller sees the failure, and keeps DIR's logs).
  trap 'halt; kill "$started" 2>/dev/null || true' EXIT
  # Up to a minute for the socket to answer; no waiting on a server that has already exited.
  for _ in $(seq 600); do
    client -e 'SELECT 1' >/dev/null 2>&1 && break
    kill -0 "$started" 2>/dev/null || break
    sleep 0.1
  done
  client -e 'SELECT 1' >/dev/null 2>&1 || { echo "MariaDB did not start; see $dir/server.log" >&2; exit 1; }
  password=$(secret portico)
  writer=$(secret writer)
  filer=$(secret filer)
  # install-db's root@127.0.0.1, root@::1 and root@`uname -n` have no password, and any local user
  # could reach the first two over TCP; root@localhost stays, on the socket in DIR (mode 700).
  client <<SQL
DROP USER IF EXISTS 'root'@'127.0.0.1', 'root'@'::1', 'root'@'$(uname -n)';
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
  trap - EXIT
  ;;
stop)
  halt
  rm -rf "$dir"
  ;;
*)
  echo "usage: $0 start|stop DIR" >&2
  exit 2
  ;;
esac

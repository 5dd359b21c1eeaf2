"""Starts the real `portico` binary for end-to-end tests and gives tests clients for it."""

from __future__ import annotations

import os
import shutil
import re
import signal
import socket
import subprocess
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx2
import pytest

BINARY = os.environ.get("PORTICO_BIN") or str(Path(__file__).resolve().parents[2] / ".build" / "debug" / "portico")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
# Where Portico keeps its data in these tests: its embedded SQLite file (the default) or, with
# PORTICO_TEST_BACKEND=postgres, a fresh database per data directory in the throwaway cluster
# whose URL is PORTICO_TEST_POSTGRES_URL (`make test` runs the suite both ways).
BACKEND = os.environ.get("PORTICO_TEST_BACKEND", "sqlite")
_databases: dict[str, str] = {}


def database_url(data_dir: str) -> str | None:
    """The PostgreSQL database of a data directory, created on first use; None on SQLite."""
    if BACKEND != "postgres":
        return None
    key = os.path.realpath(data_dir)
    if key not in _databases:
        cluster = os.environ["PORTICO_TEST_POSTGRES_URL"]
        name = "portico_e2e_" + os.urandom(6).hex()
        subprocess.run(["psql", cluster, "-q", "-v", "ON_ERROR_STOP=1", "-c", f"CREATE DATABASE {name}"], check=True, capture_output=True)
        _databases[key] = re.sub(r"/chinook(\?|$)", f"/{name}\\1", cluster)
    return _databases[key]


def cpu_seconds(pid: int) -> float:
    """The user and system CPU time a process has used."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def running_statements(data_dir: str, marker: str) -> int:
    """Statements running in a data directory's PostgreSQL database whose text has `marker`."""
    out = subprocess.run(["psql", database_url(data_dir), "-At", "-c", "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' "
                          f"AND query LIKE '%{marker}%' AND query NOT LIKE '%pg_stat_activity%'"], capture_output=True, text=True, check=True)
    return int(out.stdout.strip())


def storage_env(data_dir: str) -> dict:
    url = database_url(data_dir)
    return {"PORTICO_DATABASE_URL": url} if url else {}


def store_rows(data_dir: str, sql: str, postgres_sql: str | None = None) -> list[tuple]:
    """Rows of a query run straight on the server's own database, read-only, behind Portico's
    back: its SQLite file, or its PostgreSQL database (then `postgres_sql` when given, for SQL
    that differs, such as quoted mixed-case names). Values from PostgreSQL come back as int,
    float or str."""
    url = database_url(data_dir)
    if url is None:
        import sqlite3

        db = sqlite3.connect(f"file:{Path(data_dir) / 'portico.sqlite'}?mode=ro", uri=True)
        try:
            return [tuple(r) for r in db.execute(sql).fetchall()]
        finally:
            db.close()
    out = subprocess.run(
        ["psql", url, "-X", "-q", "-At", "-F", "\x1f", "-v", "ON_ERROR_STOP=1", "-c", "SET default_transaction_read_only = on; " + (postgres_sql or sql)],
        check=True, capture_output=True, text=True,
    ).stdout

    def value(text: str):
        for kind in (int, float):
            try:
                return kind(text)
            except ValueError:
                pass
        return text

    return [tuple(value(v) for v in line.split("\x1f")) for line in out.splitlines() if line]


# Chinook's mixed-case names, which Portico quotes in SQL it runs on PostgreSQL (where unquoted
# names fold to lower case); `as_run` writes a test's SQL the way the answer shows it ran.
CHINOOK_NAMES = (
    "Album AlbumId Artist ArtistId Customer CustomerId Employee EmployeeId Genre GenreId Invoice InvoiceId InvoiceDate InvoiceLine "
    "InvoiceLineId MediaType MediaTypeId Playlist PlaylistId PlaylistTrack Track TrackId BillingCountry BillingCity Total Title Name "
    "Country City UnitPrice Quantity Milliseconds Composer FirstName LastName SupportRepId"
).split()


def as_run(sql: str) -> str:
    if BACKEND != "postgres":
        return sql
    return re.sub(r'(?<![\w"])(' + "|".join(CHINOOK_NAMES) + r')(?![\w"(])', r'"\1"', sql)


def year_of(column: str, messages: list[dict]) -> str:
    """The year of a date column in the dialect the model was told about, as a model writes it."""
    system = " ".join(m["content"] for m in messages if m["role"] == "system")
    return f"to_char({column}, 'YYYY')" if "PostgreSQL" in system else f"strftime('%Y', {column})"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_cli(*args: str, data_dir: str, stdin: str | None = None, env: dict | None = None, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [BINARY, *args, "--data-dir", data_dir],
        input=stdin, capture_output=True, text=True, timeout=120, env={**os.environ, **storage_env(data_dir), **(env or {})},
    )
    if check and result.returncode != 0:
        raise AssertionError(f"portico {' '.join(args)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result


@dataclass
class Server:
    """A running `portico serve` process."""

    process: subprocess.Popen
    port: int
    data_dir: str
    banner: str
    api_key: str | None
    log_path: Path
    extra: dict = field(default_factory=dict)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def mcp(self) -> str:
        return f"{self.base}/api/mcp"

    def http(self, key: str | None = "default", **kwargs) -> httpx2.Client:
        headers = dict(kwargs.pop("headers", {}))
        token = self.api_key if key == "default" else key
        if token:
            headers["Authorization"] = f"Bearer {token}"
        return httpx2.Client(headers=headers, timeout=30, **kwargs)

    def cli(self, *args: str, **kwargs) -> subprocess.CompletedProcess:
        return run_cli(*args, data_dir=self.data_dir, **kwargs)

    def new_key(self, user: str = "admin", scopes: str | None = None, expires: str | None = None, app: str = "main") -> str:
        args = ["apikey", "create", "--user", user, "--app", app]
        if scopes:
            args += ["--scopes", scopes]
        if expires:
            args += ["--expires-in", expires]
        return self.cli(*args).stdout.strip().splitlines()[-1]

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


def start_server(*extra_args: str, data_dir: str | None = None, demo: bool = True, env: dict | None = None) -> Server:
    data_dir = data_dir or tempfile.mkdtemp(prefix="portico-e2e-")
    os.makedirs(data_dir, exist_ok=True)
    port = free_port()
    log_path = Path(data_dir) / f"server-{port}.log"
    args = [BINARY, "serve", "--port", str(port), "--data-dir", data_dir, *extra_args]
    if demo:
        args.append("--demo")
    log = open(log_path, "w")
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=log, text=True, env={**os.environ, **storage_env(data_dir), **(env or {})})
    banner_lines: list[str] = []
    deadline = time.time() + 120
    while time.time() < deadline:
        line = process.stdout.readline()
        if not line:
            if process.poll() is not None:
                raise AssertionError(f"portico exited early ({process.returncode}):\n{log_path.read_text()}")
            continue
        banner_lines.append(line)
        if line.startswith("MCP endpoint:") and not demo:
            break
        if line.startswith("OpenCode") and demo:
            banner_lines.append(process.stdout.readline())
            break
    banner = "".join(banner_lines)
    match = re.search(r"API key:\s+(pk_\S+)", banner)
    server = Server(process, port, data_dir, banner, match.group(1) if match else None, log_path)
    wait_healthy(server.base)
    return server


def wait_healthy(base: str, tries: int = 100) -> None:
    """Waits until the listener at `base` answers /healthz (a tenth of a second between tries)."""
    for _ in range(tries):
        try:
            if httpx2.get(f"{base}/healthz", timeout=2).status_code == 200:
                return
        except httpx2.TransportError:
            time.sleep(0.1)


@pytest.fixture(scope="session")
def server():
    s = start_server()
    assert s.api_key, s.banner
    yield s
    s.stop()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture(scope="module")
def browser():
    """Debian's chromium driven by Playwright (no browser download), one per test module."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


@contextmanager
def throwaway_server(script: str, prefix: str):
    """A database server started by Tests/<script> (pg_cluster.sh, mysql_server.sh) in a folder of its own, stopped
    and removed afterwards; yields the folder (its `url` file says where the server is)."""
    directory = tempfile.mkdtemp(prefix=prefix)
    script_path = Path(__file__).resolve().parents[1] / script
    subprocess.run(["bash", str(script_path), "start", directory], check=True)
    try:
        yield Path(directory)
    finally:
        subprocess.run(["bash", str(script_path), "stop", directory], check=False)

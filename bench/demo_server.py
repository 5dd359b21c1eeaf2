"""A `portico serve --demo` for one bench script, and 2026-07-28 requests to it: the start-up (a free port, a fresh data
directory, the admin's API key read from the banner) and the POST every script makes."""

from __future__ import annotations

import json
import socket
import subprocess
import tempfile
import time
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass

MODERN = "2026-07-28"


@dataclass
class DemoServer:
    binary: str
    data: str
    url: str
    key: str

    def cli(self, *args: str) -> str:
        """A command line against the server's data directory; its last line of output."""
        out = subprocess.run([self.binary, *args, "--data-dir", self.data], check=True, capture_output=True, text=True).stdout
        return out.strip().splitlines()[-1] if out.strip() else ""

    def post(self, method: str, params: dict, key: str | None = None, capabilities: dict | None = None,
             headers: dict | None = None) -> tuple[bytes, dict]:
        """One request in the 2026-07-28 era, with its routing headers: the body as the wire carried it, and its result."""
        meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": capabilities or {}}
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}).encode()
        sent = {"Authorization": f"Bearer {key or self.key}", "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": MODERN, "Mcp-Method": method, **({"Mcp-Name": params["name"]} if "name" in params else {}),
                **(headers or {})}
        with urllib.request.urlopen(urllib.request.Request(self.url, data=body, headers=sent), timeout=30) as response:
            raw = response.read()
        return raw, json.loads(raw)["result"]


@contextmanager
def demo_server(binary: str, prefix: str):
    """A demo server for the block's length, stopped after it."""
    data = tempfile.mkdtemp(prefix=prefix)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = subprocess.Popen([binary, "serve", "--demo", "--port", str(port), "--data-dir", data, "--log-level", "warning"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        key = ""
        deadline = time.time() + 60
        while time.time() < deadline and not key:
            line = process.stdout.readline()
            if line.startswith("API key:"):
                key = line.split()[2]
        yield DemoServer(binary, data, f"http://127.0.0.1:{port}/api/mcp", key)
    finally:
        process.terminate()
        process.wait(30)

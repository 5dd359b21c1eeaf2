"""What an agent's context pays for Portico's tools before it calls one: the bytes of `tools/list`
(2026-07-28, as the wire carries them) for the first list of an admin and of a viewer, and for each
package named alone. Usage: tool_bytes.py BINARY OUT_DIR (writes OUT_DIR/tool-bytes.json)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

PACKAGES = ["data", "schema", "users", "applications", "apikeys", "acl", "ask", "workflow"]
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}}


def listed(url: str, key: str, packages: str | None = None) -> tuple[int, int]:
    """The bytes and tools of the whole list, every page of it (a page holds 50 tools)."""
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
    if packages:
        headers["x-mcp-packages"] = packages
    size, tools, cursor = 0, 0, None
    while True:
        params = {"_meta": META, **({"cursor": cursor} if cursor else {})}
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params}).encode()
        with urllib.request.urlopen(urllib.request.Request(url, data=body, headers=headers), timeout=30) as response:
            raw = response.read()
        result = json.loads(raw)["result"]
        size, tools, cursor = size + len(raw), tools + len(result["tools"]), result.get("nextCursor")
        if not cursor:
            return size, tools


def main() -> None:
    binary, out = sys.argv[1], Path(sys.argv[2])
    data = tempfile.mkdtemp(prefix="portico-bench-tools-")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([binary, "serve", "--demo", "--port", str(port), "--data-dir", data, "--log-level", "warning"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        key = ""
        deadline = time.time() + 60
        while time.time() < deadline and not key:
            line = server.stdout.readline()
            if line.startswith("API key:"):
                key = line.split()[2]
        url = f"http://127.0.0.1:{port}/api/mcp"
        subprocess.run([binary, "user", "create", "bench-viewer", "--role", "viewer", "--data-dir", data], check=True, capture_output=True)
        viewer = subprocess.run([binary, "apikey", "create", "--user", "bench-viewer", "--data-dir", data], check=True, capture_output=True,
                                text=True).stdout.strip().splitlines()[-1]
        figures = {"first_list_admin": listed(url, key), "first_list_viewer": listed(url, viewer),
                   "old_default_admin": listed(url, key, "data,schema,ask"), "all_packages_admin": listed(url, key, ",".join(PACKAGES)),
                   "packages": {p: listed(url, key, p) for p in PACKAGES}}
    finally:
        server.terminate()
        server.wait(30)
    (out / "tool-bytes.json").write_text(json.dumps(figures, indent=2))
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()

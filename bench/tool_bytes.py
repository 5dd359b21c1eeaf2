"""What an agent's context pays for Portico's tools before it calls one: the bytes of `tools/list`
(2026-07-28, as the wire carries them) for the first list of an admin and of a viewer, and for each
package named alone; and the first list of the initialize era, where a session also gets `tools_load`.
Usage: tool_bytes.py BINARY OUT_DIR (writes OUT_DIR/tool-bytes.json)."""

from __future__ import annotations

import json
import sys
import urllib.request
from pathlib import Path

from demo_server import DemoServer, demo_server

PACKAGES = ["data", "schema", "users", "applications", "apikeys", "acl", "ask", "workflow"]


def listed(server: DemoServer, key: str, packages: str | None = None) -> tuple[int, int]:
    """The bytes and tools of the whole list, every page of it (a page holds 50 tools)."""
    size, tools, cursor = 0, 0, None
    while True:
        raw, result = server.post("tools/list", {"cursor": cursor} if cursor else {}, key=key,
                                  headers={"x-mcp-packages": packages} if packages else None)
        size, tools, cursor = size + len(raw), tools + len(result["tools"]), result.get("nextCursor")
        if not cursor:
            return size, tools


def handshake_listed(server: DemoServer, key: str) -> tuple[int, int]:
    """The first list of a 2025-11-25 session: initialize, then tools/list (one page)."""
    def post(body: dict, session: str | None = None) -> urllib.request.addinfourl:
        headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                   **({"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"} if session else {})}
        return urllib.request.urlopen(urllib.request.Request(server.url, data=json.dumps(body).encode(), headers=headers), timeout=30)

    with post({"jsonrpc": "2.0", "id": 0, "method": "initialize",
               "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}) as r:
        session = r.headers["Mcp-Session-Id"]
    with post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, session) as r:
        raw = r.read()
    return len(raw), len(json.loads(raw)["result"]["tools"])


def main() -> None:
    binary, out = sys.argv[1], Path(sys.argv[2])
    with demo_server(binary, "portico-bench-tools-") as server:
        server.cli("user", "create", "bench-viewer", "--role", "viewer")
        viewer = server.cli("apikey", "create", "--user", "bench-viewer")
        key = server.key
        figures = {"first_list_admin": listed(server, key), "first_list_viewer": listed(server, viewer),
                   "first_list_handshake_admin": handshake_listed(server, key), "first_list_handshake_viewer": handshake_listed(server, viewer),
                   "old_default_admin": listed(server, key, "data,schema,ask"), "all_packages_admin": listed(server, key, ",".join(PACKAGES)),
                   "packages": {p: listed(server, key, p) for p in PACKAGES}}
    (out / "tool-bytes.json").write_text(json.dumps(figures, indent=2))
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()

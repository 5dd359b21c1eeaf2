"""What an agent's context pays for Portico's tools before it calls one: the bytes of `tools/list`
(2026-07-28, as the wire carries them) for the first list of an admin and of a viewer, and for each
package named alone. Usage: tool_bytes.py BINARY OUT_DIR (writes OUT_DIR/tool-bytes.json)."""

from __future__ import annotations

import json
import sys
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


def main() -> None:
    binary, out = sys.argv[1], Path(sys.argv[2])
    with demo_server(binary, "portico-bench-tools-") as server:
        server.cli("user", "create", "bench-viewer", "--role", "viewer")
        viewer = server.cli("apikey", "create", "--user", "bench-viewer")
        key = server.key
        figures = {"first_list_admin": listed(server, key), "first_list_viewer": listed(server, viewer),
                   "old_default_admin": listed(server, key, "data,schema,ask"), "all_packages_admin": listed(server, key, ",".join(PACKAGES)),
                   "packages": {p: listed(server, key, p) for p in PACKAGES}}
    (out / "tool-bytes.json").write_text(json.dumps(figures, indent=2))
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()

"""Raw MCP-over-HTTP helpers for checks the official client cannot express (bad input, headers)."""

from __future__ import annotations

import json
import threading

import httpx2

MODERN = "2026-07-28"


def modern_meta(version: str = MODERN, **extra) -> dict:
    meta = {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "e2e", "version": "1"},
    }
    meta.update(extra)
    return meta


def modern_request(method: str, params: dict | None = None, id=1, version: str = MODERN, meta_extra: dict | None = None) -> tuple[dict, dict]:
    """A 2026-07-28 request body and its matching routing headers."""
    params = dict(params or {})
    params["_meta"] = modern_meta(version, **(meta_extra or {}))
    body = {"jsonrpc": "2.0", "id": id, "method": method, "params": params}
    headers = {"MCP-Protocol-Version": version, "Mcp-Method": method, "Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    name = params.get("name") or params.get("uri") or params.get("taskId")
    if name is not None:
        headers["Mcp-Name"] = name
    return body, headers


def post(client: httpx2.Client, url: str, body, headers: dict | None = None, raw: bytes | None = None) -> httpx2.Response:
    h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    h.update(headers or {})
    content = raw if raw is not None else json.dumps(body).encode()
    return client.post(url, content=content, headers=h)


def initialize(client: httpx2.Client, url: str, version: str = "2025-11-25") -> tuple[str, dict]:
    r = post(client, url, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "e2e", "version": "1"}}})
    assert r.status_code == 200, r.text
    session = r.headers["mcp-session-id"]
    post(client, url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, {"Mcp-Session-Id": session, "MCP-Protocol-Version": version})
    return session, r.json()


def sse_events(text: str) -> list[dict]:
    events = []
    for block in text.split("\n\n"):
        data = [line[5:].strip() for line in block.splitlines() if line.startswith("data:")]
        if data and data[0]:
            events.append(json.loads("\n".join(data)))
    return events


class StreamListener:
    """Holds a session's GET event stream open in a thread until `marker` arrives (or 20 s pass)."""

    def __init__(self, url: str, headers: dict, marker: bytes):
        self.received: list[bytes] = []
        self.opened = threading.Event()
        self.url, self.headers, self.marker = url, {**headers, "Accept": "text/event-stream"}, marker
        self.thread = threading.Thread(target=self._listen, daemon=True)
        self.thread.start()

    def _listen(self):
        with httpx2.Client(timeout=20) as c, c.stream("GET", self.url, headers=self.headers) as r:
            for chunk in r.iter_raw():
                self.received.append(chunk)
                self.opened.set()
                if self.marker in b"".join(self.received):
                    return

    def wait(self, seconds: float = 10) -> bytes:
        self.thread.join(seconds)
        return b"".join(self.received)

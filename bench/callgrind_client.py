"""Drives a Portico under callgrind: for each kind of call, a warm-up, then CALLS calls with
instrumentation on, dumped to a file of its own; prints instructions per call for each kind."""

import http.client
import json
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

url, key, pid, calls, out = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), Path(sys.argv[5])
target = urlsplit(url)
connection = http.client.HTTPConnection(target.hostname, target.port, timeout=60)
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
KINDS = {
    "get": ("resource_get", lambda i: {"resource": "Album", "filterByTk": i % 347 + 1}),
    "list": ("resource_list", lambda i: {"resource": "Track", "pageSize": 20, "page": i % 150 + 1}),
}


def call(name, arguments, i):
    body = json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": name, "arguments": arguments, "_meta": META}})
    connection.request("POST", target.path, body, {
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Authorization": f"Bearer {key}",
        "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": name})
    response = connection.getresponse()
    text = response.read()
    if response.status != 200 or b'"isError":true' in text or b'"error":{' in text:
        sys.exit(f"{name} failed under callgrind: {response.status} {text[:300]!r}")


def session(i):
    """A whole session per call, as the session-per-call load makes them (2025-11-25): initialize, the initialized
    notification, a get, DELETE."""
    base = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Authorization": f"Bearer {key}"}

    def send(method, body, headers):
        connection.request(method, target.path, body, headers)
        response = connection.getresponse()
        return response, response.read()

    response, text = send("POST", json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "callgrind", "version": "1"}}}), base)
    nonce = response.getheader("Mcp-Session-Id")
    if response.status != 200 or not nonce:
        sys.exit(f"initialize failed under callgrind: {response.status} {text[:300]!r}")
    headers = {**base, "Mcp-Session-Id": nonce, "MCP-Protocol-Version": "2025-11-25"}
    steps = [("POST", json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}), 202),
             ("POST", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                 "name": "resource_get", "arguments": {"resource": "Album", "filterByTk": i % 347 + 1}}}), 200),
             ("DELETE", None, 200)]
    for method, body, status in steps:
        response, text = send(method, body, headers)
        if response.status != status or b'"isError":true' in text or b'"error":{' in text:
            sys.exit(f"{method} in a session failed under callgrind: {response.status} {text[:300]!r}")


def control(*args):
    subprocess.run(["callgrind_control", *args, pid], check=True, capture_output=True)


def dumped_total(before):
    """The totals of the dump that appeared since `before` (callgrind.out.1, .2, ...)."""
    new = sorted(set(out.glob("callgrind.out.*")) - before, key=lambda p: int(p.suffix[1:]))
    text = new[-1].read_text(errors="replace")
    return int(re.search(r"^totals: (\d+)", text, re.M).group(1))


KINDS["session"] = (None, None)
for kind, (name, arguments) in KINDS.items():
    one = session if name is None else (lambda i: call(name, arguments(i), i))
    for i in range(200):
        one(i)
    control("-z")
    control("-i", "on")
    for i in range(calls):
        one(i)
    control("-i", "off")
    before = set(out.glob("callgrind.out.*"))
    control("-d")
    print(f"COST {kind} instructions_per_call={dumped_total(before) // calls} calls={calls}")

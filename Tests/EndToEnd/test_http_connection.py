"""Portico's own HTTP/1.1 connection, as clients use it over a raw socket: requests sent ahead
(pipelined) answered in order, `Connection: close` and a client that half-closes after its request
honoured, a request NIO cannot parse answered 400, and a client that hangs up on a streamed call
cancelling the call (MCP 2026-07-28: closing the stream is the cancellation)."""

import json
import socket
import time

import pytest
from conftest import BACKEND, cpu_seconds, running_statements, start_server
from mcp_http import modern_request

ENDLESS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) AS hangup_marker FROM c"


@pytest.fixture(scope="module")
def server():
    s = start_server("--query-timeout", "120", "--request-timeout", "120")
    yield s
    s.stop()


def request(method: str, path: str, headers: dict | None = None, body: bytes = b"") -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1"] + [f"{k}: {v}" for k, v in (headers or {}).items()]
    if body or method == "POST":
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def tool_call(server, name: str, arguments: dict, meta: dict | None = None) -> bytes:
    body, headers = modern_request("tools/call", {"name": name, "arguments": arguments}, meta_extra=meta)
    headers["Authorization"] = f"Bearer {server.api_key}"
    return request("POST", "/api/mcp?packages=data,ask", headers, json.dumps(body).encode())


class Reader:
    """Reads HTTP/1.1 responses of known length, one after another, off one socket."""

    def __init__(self, sock: socket.socket):
        self.sock, self.buffer = sock, b""
        sock.settimeout(15)

    def fill(self) -> bool:
        chunk = self.sock.recv(65536)
        self.buffer += chunk
        return bool(chunk)

    def head(self) -> tuple[int, dict]:
        while b"\r\n\r\n" not in self.buffer:
            assert self.fill(), f"the connection closed before a response head: {self.buffer[:200]!r}"
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        lines = head.decode().split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
        return int(lines[0].split()[1]), headers

    def response(self) -> tuple[int, dict, bytes]:
        status, headers = self.head()
        length = int(headers["content-length"])
        while len(self.buffer) < length:
            assert self.fill(), "the connection closed inside a body"
        body, self.buffer = self.buffer[:length], self.buffer[length:]
        return status, headers, body

    def closed(self) -> bool:
        """Whether the server closes the connection (and sends nothing more) within the timeout."""
        try:
            return not self.fill() and not self.buffer
        except socket.timeout:
            return False


def connect(server) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port))


def test_requests_sent_ahead_are_answered_in_order(server):
    with connect(server) as sock:
        sock.sendall(request("GET", "/healthz") + tool_call(server, "resource_get", {"resource": "Genre", "filterByTk": 1}) + request("GET", "/readyz")
                     + tool_call(server, "resource_get", {"resource": "Genre", "filterByTk": 2}))
        reader = Reader(sock)
        answers = [reader.response() for _ in range(4)]
    assert [status for status, _, _ in answers] == [200, 200, 200, 200]
    assert answers[0][2] == b"ok\n"
    assert json.loads(answers[1][2])["result"]["structuredContent"]["data"]["Name"] == "Rock"
    assert json.loads(answers[2][2]) == {"status": "ready"}
    assert json.loads(answers[3][2])["result"]["structuredContent"]["data"]["Name"] == "Jazz"
    assert all("date" in headers for _, headers, _ in answers)


def test_connection_close_is_honoured_after_the_response(server):
    with connect(server) as sock:
        sock.sendall(request("GET", "/healthz", {"Connection": "close"}))
        reader = Reader(sock)
        assert reader.response()[0] == 200
        assert reader.closed(), "the server closes the connection once it has answered"


def test_a_client_that_half_closes_after_its_request_gets_its_answer(server):
    with connect(server) as sock:
        sock.sendall(tool_call(server, "resource_get", {"resource": "Genre", "filterByTk": 1}))
        sock.shutdown(socket.SHUT_WR)
        reader = Reader(sock)
        status, _, body = reader.response()
        assert status == 200 and json.loads(body)["result"]["structuredContent"]["data"]["Name"] == "Rock"
        assert reader.closed()


def test_a_request_that_cannot_be_parsed_gets_400_and_the_connection_closes(server):
    with connect(server) as sock:
        sock.sendall(b"NOT AN HTTP REQUEST\r\n\r\n")
        reader = Reader(sock)
        status, headers = reader.head()
        assert status == 400 and headers.get("connection") == "close"
        reader.buffer = b""
        assert reader.closed()
    # The server answers the next client as before.
    with connect(server) as sock:
        sock.sendall(request("GET", "/healthz"))
        assert Reader(sock).response()[2] == b"ok\n"


def test_an_unparsable_request_sent_ahead_lets_the_one_before_it_be_answered(server):
    with connect(server) as sock:
        sock.sendall(tool_call(server, "resource_get", {"resource": "Genre", "filterByTk": 1}) + b"NOT AN HTTP REQUEST\r\n\r\n")
        reader = Reader(sock)
        status, _, body = reader.response()
        assert status == 200 and json.loads(body)["result"]["structuredContent"]["data"]["Name"] == "Rock"
        assert reader.closed(), "then the connection closes"


def busy(server) -> bool:
    """Whether the endless statement is running: in PostgreSQL's activity, or as the process's CPU time in SQLite."""
    if BACKEND == "postgres":
        return running_statements(server.data_dir, "hangup_marker") == 1
    before = cpu_seconds(server.process.pid)
    time.sleep(1.5)
    return cpu_seconds(server.process.pid) - before > 0.5


def test_hanging_up_on_a_streamed_call_cancels_it(server):
    sock = connect(server)
    # Asking for progress makes the answer an event stream; the statement never ends by itself.
    sock.sendall(tool_call(server, "sql_query", {"sql": ENDLESS}, meta={"progressToken": "hangup"}))
    status, headers = Reader(sock).head()
    assert status == 200 and headers["content-type"].startswith("text/event-stream")
    time.sleep(0.5)
    assert busy(server), "the statement runs while the client listens"
    sock.close()
    deadline = time.monotonic() + 10
    while busy(server):
        assert time.monotonic() < deadline, "the statement stopped once the client hung up"
    with connect(server) as again:
        again.sendall(tool_call(server, "resource_get", {"resource": "Genre", "filterByTk": 1}))
        assert Reader(again).response()[0] == 200

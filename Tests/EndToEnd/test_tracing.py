"""OpenTelemetry traces: spans for HTTP requests, tool calls, SQL statements and LLM calls, sent over OTLP/HTTP to a
collector. The collector here is a small local server that records what it receives; it stands for an external one
(the OpenTelemetry Collector, Jaeger, Tempo) and reads both of OTLP/HTTP's encodings, protobuf (the default) and JSON."""

from __future__ import annotations

import base64
import json
import re
import secrets
import subprocess
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from conftest import BACKEND, start_server, throwaway_server
from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest, ExportTraceServiceResponse
from fake_llm import FakeLLM
from mcp_http import modern_request, post


class Collector:
    def __init__(self):
        self.spans: list[dict] = []
        self.resources: list[dict] = []
        self.content_types: list[str] = []
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                collector.content_types.append(self.headers.get("Content-Type", ""))
                protobuf = self.headers.get("Content-Type", "").startswith("application/x-protobuf")
                payload = None
                if self.path == "/v1/traces" and self.headers.get("Content-Type", "").startswith("application/json"):
                    payload = json.loads(body)
                elif self.path == "/v1/traces" and protobuf:
                    # OTLP/HTTP's default encoding, read as the collector reads it, into protobuf's JSON mapping.
                    payload = MessageToDict(ExportTraceServiceRequest.FromString(body))
                for resource in (payload or {}).get("resourceSpans", []):
                    collector.resources.append(resource.get("resource", {}))
                    for scope in resource.get("scopeSpans", []):
                        collector.spans.extend(normalized(span) for span in scope.get("spans", []))
                answer = ExportTraceServiceResponse().SerializeToString() if protobuf else b"{}"
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf" if protobuf else "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def trace(self, trace_id: str, want: int, timeout: float = 15) -> list[dict]:
        deadline = time.time() + timeout
        while time.time() < deadline:
            found = [s for s in self.spans if s.get("traceId", "").lower() == trace_id]
            if len(found) >= want:
                time.sleep(0.5)  # the rest of the batch
                return [s for s in self.spans if s.get("traceId", "").lower() == trace_id]
            time.sleep(0.1)
        raise AssertionError(f"{want} spans of trace {trace_id} did not arrive; got {[s.get('name') for s in self.spans]}")


def hex_id(value: str) -> str:
    """OTLP/JSON writes ids as hex; protobuf's JSON mapping writes bytes as base64. Either is read."""
    if re.fullmatch(r"[0-9a-fA-F]{16}|[0-9a-fA-F]{32}", value):
        return value.lower()
    return base64.b64decode(value).hex()


def normalized(span: dict) -> dict:
    for key in ("traceId", "spanId", "parentSpanId"):
        if span.get(key):
            span[key] = hex_id(span[key])
    return span


def attributes(span: dict) -> dict:
    out = {}
    for a in span.get("attributes", []):
        value = a["value"]
        out[a["key"]] = next(iter(value.values())) if value else None
    return out


def by_name(spans: list[dict], prefix: str) -> list[dict]:
    return [s for s in spans if s["name"].startswith(prefix)]


@pytest.fixture(scope="module")
def collector():
    c = Collector()
    yield c
    c.httpd.shutdown()


@pytest.fixture(scope="module")
def traced(collector):
    env = {"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json", "OTEL_BSP_SCHEDULE_DELAY": "100"}
    s = start_server("--otel-endpoint", collector.url, env=env)
    yield s
    s.stop()


def new_parent() -> tuple[str, str]:
    return secrets.token_hex(16), secrets.token_hex(8)


def test_a_tool_call_is_a_child_of_the_callers_trace_with_its_sql_beneath(traced, collector):
    trace_id, parent_id = new_parent()
    with traced.http() as http:
        r = post(http, traced.mcp, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "resource_list", "arguments": {"resource": "Artist", "filter": {"Name": "AC/DC"}}}},
            {"traceparent": f"00-{trace_id}-{parent_id}-01", "MCP-Protocol-Version": "2025-11-25"})
        assert r.status_code == 200 and r.json()["result"]["structuredContent"]["data"][0]["Name"] == "AC/DC"
    spans = collector.trace(trace_id, want=3)
    (request,) = [s for s in spans if s.get("parentSpanId", "").lower() == parent_id]
    assert attributes(request)["http.request.method"] == "POST" and attributes(request)["http.response.status_code"] in (200, "200")
    (tool,) = by_name(spans, "tools/call resource_list")
    assert tool["parentSpanId"].lower() == request["spanId"].lower()
    tool_attributes = attributes(tool)
    assert tool_attributes["gen_ai.tool.name"] == "resource_list" and tool_attributes["portico.app"] == "main"
    assert tool_attributes["portico.outcome"] == "ok" and tool_attributes["portico.principal"].startswith("key:")
    statements = [s for s in spans if s.get("parentSpanId", "").lower() == tool["spanId"].lower() and s["name"].endswith(" portico")]
    assert statements and all(attributes(s)["db.namespace"] == "portico" for s in statements)
    assert any(attributes(s)["db.operation.name"] == "SELECT" and int(attributes(s)["db.response.returned_rows"]) >= 1 for s in statements)
    # Never a value: the filter's literal is in no span.
    assert "AC/DC" not in json.dumps(spans)
    resource = json.dumps(collector.resources[-1])
    assert '"portico"' in resource and "service.version" in resource


def test_the_2026_07_28_traceparent_in_meta_is_the_tool_calls_parent(traced, collector):
    trace_id, parent_id = new_parent()
    body, headers = modern_request("tools/call", {"name": "sql_query", "arguments": {"datasource": "main", "sql": "SELECT COUNT(*) AS n FROM Track"}},
                                   meta_extra={"traceparent": f"00-{trace_id}-{parent_id}-01"})
    with traced.http() as http:
        r = post(http, traced.mcp, body, headers)
        assert r.status_code == 200 and r.json()["result"]["structuredContent"]["rows"] == [[3503]], r.text
    spans = collector.trace(trace_id, want=2)
    (tool,) = by_name(spans, "tools/call sql_query")
    assert tool["parentSpanId"].lower() == parent_id
    (query,) = by_name(spans, "SELECT main")
    assert query["parentSpanId"].lower() == tool["spanId"].lower()
    # `main` is the app's own database: the embedded SQLite file, or PostgreSQL in the second pass.
    system = "postgresql" if BACKEND == "postgres" else "sqlite"
    assert attributes(query)["db.system.name"] == system and int(attributes(query)["db.response.returned_rows"]) == 1
    assert "3503" not in json.dumps(query)


def test_an_llm_call_is_a_span_and_the_trace_goes_on_to_the_model(traced, collector):
    llm = FakeLLM(lambda messages: "```sql\nSELECT COUNT(*) AS n FROM Album\n```")
    try:
        traced.cli("llm", "add", "--name", "fake", "--base-url", llm.base_url, "--model", "fake-sql-1")
        trace_id, parent_id = new_parent()
        with traced.http() as http:
            r = post(http, traced.mcp, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                "name": "ask", "arguments": {"question": "How many albums are there?", "model": "fake"}}},
                {"traceparent": f"00-{trace_id}-{parent_id}-01", "tracestate": "client=private", "MCP-Protocol-Version": "2025-11-25"})
            assert r.status_code == 200 and r.json()["result"]["structuredContent"]["engine"] == "llm:fake", r.text
        spans = collector.trace(trace_id, want=4)
        (chat,) = by_name(spans, "chat fake-sql-1")
        assert attributes(chat)["gen_ai.request.model"] == "fake-sql-1"
        (tool,) = by_name(spans, "tools/call ask")
        assert chat["traceId"].lower() == trace_id
        # The model's server sees the same trace, with the LLM span as its parent.
        sent = [h for h in llm.headers if h.get("traceparent", "").startswith(f"00-{trace_id}-")]
        assert sent and sent[-1]["traceparent"].split("-")[2] == chat["spanId"].lower()
        assert not any(name.lower() == "tracestate" for name in sent[-1]), "a client's trace state is not handed to an outside provider"
        assert "How many albums" not in json.dumps(spans), "no prompt in a span"
    finally:
        llm.stop()
        traced.cli("llm", "remove", "fake")


@pytest.fixture(scope="module")
def pg_cluster():
    """A cluster of its own, whose server log the test reads (with every statement logged)."""
    with throwaway_server("pg_cluster.sh", "portico-pg-trace-") as directory:
        url = (directory / "url").read_text().strip()
        plain = url.replace("?sslmode=disable", "")
        subprocess.run(["psql", plain, "-Atc", "ALTER SYSTEM SET log_statement = 'all'"], check=True, capture_output=True)
        subprocess.run(["psql", plain, "-Atc", "SELECT pg_reload_conf()"], check=True, capture_output=True)
        yield url, directory / "server.log"


def counted_album_in_a_trace(traced, collector, datasource: str, table: str, systems: tuple[str, ...]) -> tuple[str, str]:
    """Counts `table` on `datasource` with `sql_query` inside a trace the caller started; checks the
    query's span, and returns the marker in the statement and the sqlcommenter comment it must carry."""
    trace_id, parent_id = new_parent()
    marker = secrets.token_hex(4)
    with traced.http() as http:
        r = post(http, traced.mcp, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "sql_query", "arguments": {"datasource": datasource, "sql": f"SELECT COUNT(*) AS n_{marker} FROM {table}"}}},
            {"traceparent": f"00-{trace_id}-{parent_id}-01", "MCP-Protocol-Version": "2025-11-25"})
        result = r.json()["result"]
        assert not result.get("isError"), result
        assert result["structuredContent"]["rows"] == [[347]]
    spans = collector.trace(trace_id, want=3)
    (query,) = by_name(spans, f"SELECT {datasource}")
    assert attributes(query)["db.system.name"] in systems
    return marker, f"/*application='portico',traceparent='00-{trace_id}-{query['spanId']}-01'*/"


def test_sql_sent_to_postgresql_carries_the_trace_as_a_sqlcommenter_comment(traced, collector, pg_cluster):
    url, log = pg_cluster
    traced.cli("datasource", "add", "--name", "chinook_pg", "--postgres", url)
    marker, comment = counted_album_in_a_trace(traced, collector, "chinook_pg", "album", ("postgresql",))
    deadline = time.time() + 5
    while comment not in log.read_text(errors="replace") and time.time() < deadline:
        time.sleep(0.1)
    logged = [line for line in log.read_text(errors="replace").splitlines() if f"n_{marker}" in line or "traceparent=" in line]
    assert any(comment in line for line in logged), logged
    # The comment is all that is added: the statement the log shows is the one asked for.
    assert any(f"SELECT COUNT(*) AS n_{marker} FROM album" in line for line in logged), logged


def test_the_default_protobuf_export_carries_a_tool_errors_outcome(collector):
    # No protocol chosen: what an operator gets by default is protobuf, and the collector reads it.
    s = start_server("--otel-endpoint", collector.url, env={"OTEL_BSP_SCHEDULE_DELAY": "100"})
    try:
        trace_id, parent_id = new_parent()
        with s.http() as http:
            r = post(http, s.mcp, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                "name": "resource_get", "arguments": {"resource": "NoSuchCollection", "filterByTk": 1}}},
                {"traceparent": f"00-{trace_id}-{parent_id}-01", "MCP-Protocol-Version": "2025-11-25"})
            assert r.status_code == 200 and r.json()["result"]["isError"] is True, r.text
        spans = collector.trace(trace_id, want=2)
        assert any(kind.startswith("application/x-protobuf") for kind in collector.content_types)
        (tool,) = by_name(spans, "tools/call resource_get")
        assert attributes(tool)["portico.outcome"] == "tool_error" and tool["status"]["code"] in ("STATUS_CODE_ERROR", 2), tool
        (request,) = [x for x in spans if x.get("parentSpanId", "").lower() == parent_id]
        assert tool["parentSpanId"].lower() == request["spanId"].lower()
    finally:
        s.stop()


def test_without_an_endpoint_nothing_is_traced(server):
    # The session's default server runs without --otel-endpoint: a traceparent changes nothing and no span leaves.
    trace_id, parent_id = new_parent()
    with server.http() as http:
        r = post(http, server.mcp, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "resource_get", "arguments": {"resource": "Artist", "filterByTk": 1}}},
                 {"traceparent": f"00-{trace_id}-{parent_id}-01", "MCP-Protocol-Version": "2025-11-25"})
        assert r.status_code == 200
    assert "traceparent" not in r.headers


def test_a_bad_endpoint_stops_the_start_with_a_clear_message():
    from conftest import run_cli
    bad = run_cli("serve", "--otel-endpoint", "collector:4318", "--port", "0", data_dir=tempfile.mkdtemp(prefix="portico-otel-bad-"), check=False)
    assert bad.returncode != 0 and "--otel-endpoint must be an http(s) URL" in bad.stderr


@pytest.fixture(scope="module")
def mariadb_logged():
    """A MariaDB of its own with the general query log on, read by the test (root on the server's socket)."""
    with throwaway_server("mysql_server.sh", "portico-mariadb-trace-") as directory:
        log = directory / "general.log"
        subprocess.run(["mariadb", "--no-defaults", f"--socket={directory / 'mysql.sock'}", "-uroot", "-e",
                        f"SET GLOBAL log_output = 'FILE'; SET GLOBAL general_log_file = '{log}'; SET GLOBAL general_log = 1"],
                       check=True, capture_output=True)
        yield (directory / "url").read_text().strip(), log


def test_sql_sent_to_mysql_carries_the_trace_as_a_sqlcommenter_comment(traced, collector, mariadb_logged):
    url, log = mariadb_logged
    traced.cli("datasource", "add", "--name", "chinook_my", "--mysql", url)
    marker, comment = counted_album_in_a_trace(traced, collector, "chinook_my", "Album", ("mysql", "mariadb"))
    # The general log keeps the statement as sent: the comment on the line after the SQL asked for.
    sent = f"SELECT COUNT(*) AS n_{marker} FROM Album\n{comment}"
    deadline = time.time() + 5
    while sent not in log.read_text(errors="replace") and time.time() < deadline:
        time.sleep(0.1)
    text = log.read_text(errors="replace")
    assert sent in text, [line for line in text.splitlines() if marker in line or "traceparent" in line]

"""Rate limits and quotas: per credential and per app each minute, tool calls per credential each day,
an API key's own rate; 429 with Retry-After over HTTP, tool errors inside a batch, refusals in /metrics."""

from __future__ import annotations

import asyncio
import re
import tempfile
import time
from urllib.parse import urlencode

import httpx2
import pytest
from conftest import free_port, run_cli, start_server, wait_healthy
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_http import modern_request, post
from oauth_helpers import console_sign_in, form_fields, forms

CALL = {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "resource_get", "arguments": {"resource": "Artist", "filterByTk": 1}}}


def call(id: int) -> dict:
    return {**CALL, "id": id}


def fresh_minute(margin: float = 15) -> None:
    """Starts a test at the beginning of a minute, so that its window does not end half-way."""
    left = 60 - time.time() % 60
    if left < margin:
        time.sleep(left + 0.5)


@pytest.fixture(scope="module")
def limited():
    s = start_server("--rate-limit", "5/min", "--app-rate-limit", "40/min")
    yield s
    s.stop()


def test_a_credential_over_its_rate_gets_429_with_retry_after(limited):
    key = limited.new_key()
    fresh_minute()
    with limited.http(key) as http:
        for i in range(5):
            r = post(http, limited.mcp, call(i))
            assert r.status_code == 200 and not r.json()["result"].get("isError"), r.text
        r = post(http, limited.mcp, call(6))
        assert r.status_code == 429
        assert 1 <= int(r.headers["retry-after"]) <= 60
        error = r.json()["error"]
        assert error["code"] == -32029 and error["message"] == "Too many requests"
        assert "at most 5 requests a minute for this API key" in error["data"]
        # The modern era is refused the same way, before anything runs.
        body, headers = modern_request("tools/list")
        r = post(http, limited.mcp, body, headers)
        assert r.status_code == 429 and r.json()["error"]["code"] == -32029
    # Another key has its own budget.
    with limited.http(limited.new_key()) as http:
        assert post(http, limited.mcp, call(1)).status_code == 200


def test_inside_a_batch_the_calls_over_the_limit_are_tool_errors(limited):
    key = limited.new_key()
    fresh_minute()
    with limited.http(key) as http:
        batch = [call(i) for i in range(1, 5)] + [{"jsonrpc": "2.0", "id": 5, "method": "tools/list"}] + [call(6), call(7), {"jsonrpc": "2.0", "id": 8, "method": "ping"}]
        r = post(http, limited.mcp, batch)
        assert r.status_code == 200
        by_id = {entry["id"]: entry for entry in r.json()}
        for i in range(1, 5):
            assert by_id[i]["result"]["structuredContent"]["data"]["Name"] == "AC/DC"
        assert "tools" in by_id[5]["result"]
        for i in (6, 7):
            result = by_id[i]["result"]
            assert result["isError"] is True
            assert "rate limit reached: at most 5 requests a minute" in result["content"][0]["text"]
        assert by_id[8]["error"]["code"] == -32029


def test_a_key_made_with_its_own_rate_keeps_it(limited):
    created = run_cli("apikey", "create", "--user", "admin", "--rate", "2/min", data_dir=limited.data_dir).stdout
    assert "at most 2 requests a minute" in created
    key = created.strip().splitlines()[-1]
    listing = run_cli("apikey", "list", data_dir=limited.data_dir).stdout
    assert any(line.startswith(key[3:15]) and line.endswith("\t2/min") for line in listing.splitlines()), listing
    bad = run_cli("apikey", "create", "--user", "admin", "--rate", "fast", data_dir=limited.data_dir, check=False)
    assert bad.returncode != 0 and "'fast' is not a rate" in bad.stderr
    fresh_minute()
    with limited.http(key) as http:
        assert [post(http, limited.mcp, call(i)).status_code for i in range(3)] == [200, 200, 429]


def test_the_official_client_reads_the_refusal(limited):
    key = run_cli("apikey", "create", "--user", "admin", "--rate", "3/min", data_dir=limited.data_dir).stdout.strip().splitlines()[-1]
    fresh_minute()

    async def go():
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=30)
        async with Client(streamable_http_client(limited.mcp, http_client=http), mode="legacy") as client:
            # initialize and the client's own tools/list count too: within three requests the budget is spent.
            answered = 0
            for artist in range(1, 5):
                try:
                    result = await client.call_tool("resource_get", {"resource": "Artist", "filterByTk": artist})
                except MCPError as refused:
                    return answered, refused.error
                assert not result.is_error
                answered += 1
            return answered, None

    answered, error = asyncio.run(go())
    assert 1 <= answered < 3 and error is not None
    assert error.code == -32029 and "at most 3 requests a minute for this API key" in error.data


def test_refusals_are_counted_in_metrics(limited):
    metrics = httpx2.get(limited.base + "/metrics", timeout=10).text
    counted = [line for line in metrics.splitlines() if line.startswith("portico_rate_limited_total") and 'limit="credential"' in line]
    assert counted and float(counted[0].rsplit(" ", 1)[1]) >= 3, metrics[-2000:]


def test_the_app_limit_holds_for_all_its_callers_together():
    server = start_server("--app-rate-limit", "6/min")
    try:
        keys = [server.new_key() for _ in range(3)]
        fresh_minute()
        statuses = []
        for i in range(9):
            with server.http(keys[i % 3]) as http:
                statuses.append(post(http, server.mcp, call(i)).status_code)
        assert statuses == [200] * 6 + [429] * 3
        with server.http(keys[0]) as http:
            assert "for app 'main'" in post(http, server.mcp, call(10)).json()["error"]["data"]
    finally:
        server.stop()


def test_the_daily_tool_call_quota_survives_a_restart():
    server = start_server("--tool-call-quota", "2/day")
    data_dir = server.data_dir
    key = server.api_key
    try:
        with server.http(key) as http:
            assert [post(http, server.mcp, call(i)).status_code for i in range(2)] == [200, 200]
            r = post(http, server.mcp, call(3))
            assert r.status_code == 429 and int(r.headers["retry-after"]) > 0
            assert "daily quota reached: at most 2 tool calls a day" in r.json()["error"]["data"]
            # Other requests are not tool calls.
            assert post(http, server.mcp, {"jsonrpc": "2.0", "id": 4, "method": "tools/list"}).status_code == 200
        time.sleep(1.5)  # one exchange with the table
    finally:
        server.stop()
    again = start_server("--tool-call-quota", "2/day", data_dir=data_dir, demo=False)
    try:
        with again.http(key) as http:
            assert post(http, again.mcp, call(5)).status_code == 429
    finally:
        again.stop()


def test_a_bad_rate_flag_stops_the_start_with_a_clear_message():
    bad = run_cli("serve", "--rate-limit", "10/hour", "--port", "0", data_dir="/tmp/portico-rate-bad", check=False)
    assert bad.returncode != 0 and "--rate-limit" in bad.stderr and "60/min" in bad.stderr


def test_an_apps_daily_quota_holds_for_all_its_callers():
    server = start_server("--app-tool-call-quota", "3/day")
    try:
        keys = [server.new_key() for _ in range(2)]
        statuses = []
        for i in range(4):
            with server.http(keys[i % 2]) as http:
                statuses.append(post(http, server.mcp, call(i)).status_code)
        assert statuses == [200, 200, 200, 429]
        metrics = httpx2.get(server.base + "/metrics", timeout=10).text
        assert any(line.startswith("portico_rate_limited_total") and 'limit="app_daily"' in line for line in metrics.splitlines())
    finally:
        server.stop()


def test_the_sqlbot_routes_and_the_ask_page_are_counted_too():
    """SQLBot's token argument and its JSON routes, and questions from the ask page, spend the same budgets as MCP requests."""
    port = free_port()
    server = start_server("--rate-limit", "3/min", "--sqlbot-port", str(port), data_dir=tempfile.mkdtemp(prefix="portico-rate-sqlbot-"))
    try:
        password = re.search(r"Admin user:\s+admin / (\S+)", server.banner).group(1)
        sqlbot = f"http://127.0.0.1:{port}"
        wait_healthy(sqlbot)
        fresh_minute()
        # An API key given as SQLBot's token, on the plain JSON route: three a minute, then 429 with Retry-After.
        key = server.new_key()
        statuses = [httpx2.post(f"{sqlbot}/mcp/mcp_ws_list", json={"token": key}, timeout=10) for _ in range(4)]
        assert [r.status_code for r in statuses] == [200, 200, 200, 429], [r.text for r in statuses]
        assert "at most 3 requests a minute" in statuses[-1].json()["detail"] and 1 <= int(statuses[-1].headers["retry-after"]) <= 60
        # The ask page: a signed-in user's questions are counted as theirs.
        with httpx2.Client(timeout=30, follow_redirects=False) as browser:
            assert console_sign_in(browser, server.base, "admin", password).status_code == 303
            page = browser.get(f"{server.base}/console/ask")
            form = next(f for f in forms(page.text) if f["action"] == "/console/ask")
            csrf = next(v for k, v in form_fields(form) if k == "csrf")
            answers = [
                browser.post(f"{server.base}/console/ask", content=urlencode([("csrf", csrf), ("app", "main"), ("question", "How many albums are there?")]),
                             headers={"Content-Type": "application/x-www-form-urlencoded"})
                for _ in range(4)
            ]
            assert [r.status_code for r in answers] == [200, 200, 200, 429], [r.text[-300:] for r in answers]
            assert "rate limit reached" in answers[-1].text and "retry-after" in answers[-1].headers
    finally:
        server.stop()

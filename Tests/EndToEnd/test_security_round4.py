"""Security, round four (issue 54), against the real binary: what an attack probe broke. A
calculation, an offset or a record's value that ended the process (and, left running, ended every
replica that took it up again); a narrowed key that set off writes; a record's value that became
filter operators; anonymous registration without end; and the lows. Each test fails without its
fix; `make test` runs them on SQLite and on PostgreSQL."""

from __future__ import annotations

import http.server
import json
import signal
import tempfile
import threading
import time

import httpx2
import pytest

from conftest import BACKEND, start_server, store_rows
from test_official_client import connect, run
from test_workflows import HOOK_ARGS, call, crm, wait_for


def alive(server) -> bool:
    return server.process.poll() is None and httpx2.get(f"{server.base}/healthz", timeout=5).status_code == 200


def ended(server, key, execution_id, timeout=30.0):
    return wait_for(
        lambda: (e := call(server, key, "executions_get", {"id": execution_id}))["status"] in ("resolved", "failed", "canceled") and e,
        timeout=timeout, what=f"execution {execution_id} to end")


@pytest.fixture(scope="module")
def s():
    server = start_server(data_dir=tempfile.mkdtemp(prefix="portico-round4-"))
    crm(server, server.api_key)
    server.cli("user", "create", "mia", "--role", "member")
    server.extra["member"] = server.new_key(user="mia")
    yield server
    server.stop()


@pytest.mark.parametrize("expression, status, expected", [
    ("substring('abc', 1, 9223372036854775807)", "resolved", "bc"),
    ("(-9223372036854775807 - 1) % -1", "resolved", 0),
    ("round(1.5, 99999999999999999999)", "failed", "0 to 12 digits"),
])
def test_a_calculation_that_trapped_the_process_ends_with_a_value_or_a_reason(s, expression, status, expected):
    key = s.api_key
    flow = call(s, key, "workflows_create", {
        "title": expression, "enabled": True, "trigger": {"type": "manual"},
        "nodes": [{"key": "c", "type": "calculation", "config": {"expression": expression}}],
    })
    done = ended(s, key, call(s, key, "workflows_trigger", {"id": flow["id"]})["execution"]["id"])
    assert alive(s)
    assert done["status"] == status, done
    if status == "resolved":
        assert done["jobs"][0]["result"] == expected
    else:
        assert expected in done["error"], done["error"]


def test_a_members_record_cannot_stop_the_server_through_an_admins_rule(s):
    key = s.api_key
    call(s, key, "collections_create", {"name": "Lead", "fields": [{"name": "name", "type": "string"}]})
    call(s, key, "workflows_create", {
        "title": "Round the lead", "enabled": True, "trigger": {"type": "beforeAction", "collection": "Lead", "on": "create"},
        "nodes": [{"key": "c", "type": "calculation", "config": {"expression": "round(1, {{$context.data.name}})"}}],
    })
    refused = call(s, s.extra["member"], "resource_create", {"resource": "Lead", "values": {"name": "1e300"}}, expect_error=True)
    assert "0 to 12 digits" in refused, refused
    assert alive(s)
    created = call(s, s.extra["member"], "resource_create", {"resource": "Lead", "values": {"name": "2"}})
    assert created["data"]["name"] == "2"


def test_a_schedule_offset_past_ten_years_is_refused_when_saved(s):
    key = s.api_key
    for offset in ("9223372036854775807d", "-9223372036854775807w", 1e300):
        refused = call(s, key, "workflows_create", {
            "title": "far", "trigger": {"type": "schedule", "collection": "Deal", "field": "createdAt", "offset": offset}, "nodes": [],
        }, expect_error=True)
        assert "ten years" in refused or "integer" in refused, refused
        assert alive(s)
    saved = call(s, key, "workflows_create", {
        "title": "near", "trigger": {"type": "schedule", "collection": "Deal", "field": "createdAt", "offset": "-3650d"}, "nodes": [],
    })
    assert saved["trigger"]["offset"] == "-3650d"


def test_a_key_narrowed_to_workflows_cannot_set_off_writes_saved_by_a_wider_one(s):
    key = s.api_key
    flow = call(s, key, "workflows_create", {
        "title": "Writes a task", "enabled": False, "trigger": {"type": "manual"},
        "nodes": [{"key": "t", "type": "create", "config": {"collection": "Task", "values": {"title": "set off"}}}],
    })
    narrowed = s.new_key(scopes="read:workflow write:workflow")
    assert call(s, narrowed, "workflows_get", {"id": flow["id"]})["title"] == "Writes a task", "it may still read it"
    for tool, arguments in [
        ("workflows_trigger", {"id": flow["id"]}),
        ("workflows_update", {"id": flow["id"], "enabled": True}),
        ("workflows_update", {"id": flow["id"], "title": "renamed"}),
    ]:
        refused = call(s, narrowed, tool, arguments, expect_error=True)
        assert "write:data" in refused, f"{tool} {arguments}: {refused}"
    current = call(s, key, "workflows_get", {"id": flow["id"]})
    assert current["enabled"] is False and current["title"] == "Writes a task"
    assert call(s, key, "executions_list", {"workflow": flow["id"]})["data"] == []
    titles = [t["title"] for t in call(s, key, "resource_list", {"resource": "Task", "pageSize": 100})["data"]]
    assert "set off" not in titles


def test_a_records_value_never_becomes_filter_operators(s):
    key = s.api_key
    call(s, key, "collections_create", {"name": "Client", "fields": [
        {"name": "name", "type": "string"}, {"name": "email", "type": "string"}, {"name": "phone", "type": "string"}]})
    call(s, key, "collections_create", {"name": "Signup", "fields": [{"name": "name", "type": "string"}, {"name": "details", "type": "json"}]})
    call(s, key, "resource_create", {"resource": "Client", "values": {"name": "Other", "email": "other@example.com", "phone": "555-0100"}})
    call(s, key, "workflows_create", {
        "title": "One signup per client email", "enabled": True, "trigger": {"type": "beforeAction", "collection": "Signup", "on": "create"},
        "nodes": [
            {"key": "dup", "type": "query", "config": {"collection": "Client", "filter": {"email": "{{$context.data.details.email}}"}}},
            {"key": "found", "type": "condition", "config": {"filter": {"$jobsMapByNodeKey.dup.id": {"$notEmpty": True}}},
             "then": [{"key": "refuse", "type": "end", "config": {
                 "status": "failed", "message": "already a client: {{$jobsMapByNodeKey.dup.email}} {{$jobsMapByNodeKey.dup.phone}}"}}]},
        ],
    })
    member = s.extra["member"]
    for injected in ({"$ne": "zzz"}, {"$startsWith": "oth"}, {"$notEmpty": True}):
        refused = call(s, member, "resource_create", {"resource": "Signup", "values": {"name": "probe", "details": {"email": injected}}},
                       expect_error=True)
        assert "other@example.com" not in refused and "555-0100" not in refused, refused
        assert "holds an object" in refused, refused
    for listed in (["other@example.com", {"$ne": 1}],):
        refused = call(s, member, "resource_create", {"resource": "Signup", "values": {"name": "probe", "details": {"email": listed}}},
                       expect_error=True)
        assert "555-0100" not in refused and "holds a list" in refused, refused
    # The rule still does its job with a value.
    same = call(s, member, "resource_create", {"resource": "Signup", "values": {"name": "x", "details": {"email": "other@example.com"}}},
                expect_error=True)
    assert "already a client" in same
    assert call(s, member, "resource_create", {"resource": "Signup", "values": {"name": "new", "details": {"email": "new@example.com"}}})


class Hook:
    """A local endpoint for request nodes: records each call (path and headers); `hang` makes
    every call wait until the test ends, long past any replica that makes it."""

    def __init__(self, hang=False, redirect_to=None):
        self.calls = []
        self.release = threading.Event()
        calls, release = self.calls, self.release

        class Handler(http.server.BaseHTTPRequestHandler):
            def handle_one(self):
                calls.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}})
                if hang:
                    release.wait(120)
                if redirect_to and not self.path.startswith("/here"):
                    self.send_response(302)
                    self.send_header("Location", redirect_to(self.path))
                    self.end_headers()
                    return
                body = json.dumps({"ok": True}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = handle_one

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self):
        self.release.set()
        self.server.shutdown()


def test_an_execution_that_keeps_killing_its_replica_is_failed_after_two_takeovers():
    """A node the replica dies in (here: kill -9 while it waits on a request) is taken up again
    after the lease, at most twice; the next replica fails it with the reason, and it runs no more."""
    hook = Hook(hang=True)
    data_dir = tempfile.mkdtemp(prefix="portico-round4-poison-")
    clock = f"{data_dir}/clock"
    now = int(time.time())
    with open(clock, "w") as f:
        f.write(str(now))
    env = {"PORTICO_TEST_CLOCK_FILE": clock}
    server = start_server(*HOOK_ARGS, data_dir=data_dir, env=env)
    key = server.api_key
    try:
        flow = call(server, key, "workflows_create", {
            "title": "Dies in its request", "enabled": True, "trigger": {"type": "manual"},
            "nodes": [{"key": "hook", "type": "request", "config": {"url": hook.url + "/slow"}}],
        })
        started = call(server, key, "workflows_trigger", {"id": flow["id"]})["execution"]
        for run in range(1, 4):
            wait_for(lambda: len(hook.calls) >= run, what=f"run {run} to reach the request")
            server.stop(signal.SIGKILL)
            server = start_server(*HOOK_ARGS, data_dir=data_dir, env=env)
            now += 61  # past the 60-second lease
            with open(clock, "w") as f:
                f.write(str(now))
            if run < 3:
                continue
            done = ended(server, key, started["id"])
            assert done["status"] == "failed", done
            assert "not taken up again without a person" in done["error"], done["error"]
            assert done.get("takeovers") == 2, done
        time.sleep(3)
        assert len(hook.calls) == 3, "run once and taken over twice, then never again"
        assert alive(server)
    finally:
        server.stop()
        hook.close()


def test_an_execution_can_be_canceled_from_the_command_line(s):
    key = s.api_key
    flow = call(s, key, "workflows_create", {
        "title": "Waits", "enabled": True, "trigger": {"type": "manual"},
        "nodes": [{"key": "d", "type": "delay", "config": {"seconds": 3600}},
                  {"key": "t", "type": "create", "config": {"collection": "Task", "values": {"title": "after the wait"}}}],
    })
    started = call(s, key, "workflows_trigger", {"id": flow["id"]})["execution"]
    wait_for(lambda: call(s, key, "executions_get", {"id": started["id"]})["jobs"], what="the delay to start")
    assert "is canceled" in s.cli("execution", "cancel", str(started["id"])).stdout
    assert call(s, key, "executions_get", {"id": started["id"]})["status"] == "canceled"
    again = s.cli("execution", "cancel", str(started["id"]), check=False)
    assert again.returncode != 0 and "already ended" in again.stderr + again.stdout


def test_a_redirect_to_another_origin_gets_none_of_the_nodes_headers():
    other = Hook()
    first = Hook(redirect_to=lambda path: f"{other.url}/there" if path.startswith("/away") else "/here")
    server = start_server(*HOOK_ARGS, data_dir=tempfile.mkdtemp(prefix="portico-round4-redirect-"))
    key = server.api_key
    try:
        for path in ("/away", "/stay"):
            flow = call(server, key, "workflows_create", {
                "title": path, "enabled": True, "trigger": {"type": "manual"},
                "nodes": [{"key": "r", "type": "request", "config": {
                    "method": "GET", "url": first.url + path,
                    "headers": {"Authorization": "Bearer hook-secret", "X-Api-Key": "k-secret", "Accept": "application/json"}}}],
            })
            done = ended(server, key, call(server, key, "workflows_trigger", {"id": flow["id"]})["execution"]["id"])
            assert done["status"] == "resolved", done
        assert first.calls[0]["headers"]["authorization"] == "Bearer hook-secret"
        moved = other.calls[0]["headers"]
        assert "authorization" not in moved and "x-api-key" not in moved, moved
        assert moved.get("accept") == "application/json"
        stayed = next(c for c in first.calls if c["path"] == "/here")
        assert stayed["headers"]["authorization"] == "Bearer hook-secret", "a redirect on the same origin keeps them"
    finally:
        server.stop()
        first.close()
        other.close()


def register(server, headers=None, grant_types=None):
    body = {"client_name": "probe", "redirect_uris": ["http://127.0.0.1:9/cb"], "token_endpoint_auth_method": "none"}
    if grant_types:
        body.update(grant_types=grant_types, token_endpoint_auth_method="client_secret_basic")
    return httpx2.post(f"{server.base}/oauth/register", headers=headers or {}, json=body)


def test_registration_is_bounded_per_address_and_unused_clients_make_room_and_expire():
    data_dir = tempfile.mkdtemp(prefix="portico-round4-dcr-")
    clock = f"{data_dir}/clock"
    now = int(time.time())
    with open(clock, "w") as f:
        f.write(str(now))
    server = start_server("--trusted-proxy", "127.0.0.1", "--registrations-per-address", "3", "--max-unused-clients", "7",
                          data_dir=data_dir, env={"PORTICO_TEST_CLOCK_FILE": clock})
    try:
        def from_(address):
            return register(server, {"X-Forwarded-For": address})

        def dynamic():
            return sorted(r[0] for r in store_rows(data_dir, "SELECT client_id FROM portico_oauth_clients WHERE kind = 'dynamic'"))

        first = from_("203.0.113.7")
        assert first.status_code == 201
        assert [from_("203.0.113.7").status_code for _ in range(2)] == [201, 201]
        refused = from_("203.0.113.7")
        assert refused.status_code == 429 and refused.json()["error"] == "temporarily_unavailable", refused.text
        assert "in the last hour" in refused.json()["error_description"] and refused.headers.get("retry-after")
        # An IPv6 address counts by its /64.
        assert [from_(f"2001:db8:1:2::{n}").status_code for n in range(1, 5)] == [201, 201, 201, 429]
        # Past seven unused clients the oldest make room: registration never closes for everyone.
        assert len(dynamic()) == 6
        with open(clock, "w") as f:
            f.write(str(now + 10))
        time.sleep(1.5)
        seventh = from_("203.0.113.8")
        assert seventh.status_code == 201 and len(dynamic()) == 7
        latest = from_("203.0.113.9")
        assert latest.status_code == 201 and len(dynamic()) == 7
        kept = dynamic()
        assert seventh.json()["client_id"] in kept and latest.json()["client_id"] in kept, "one of the oldest made room"
        # A day later the clients no one authorised are gone.
        with open(clock, "w") as f:
            f.write(str(now + 86_500))
        time.sleep(1.5)
        assert from_("203.0.113.7").status_code == 201
        assert len(dynamic()) == 1
        machine = register(server, {"X-Forwarded-For": "203.0.113.10"}, grant_types=["client_credentials"])
        assert machine.status_code == 400 and "add_application" in machine.json()["error_description"], machine.text
        assert alive(server)
    finally:
        server.stop()


def test_registration_can_need_an_initial_access_token_or_be_off():
    token = "registration-token-0123456789"
    server = start_server("--client-registration", "token", env={"PORTICO_REGISTRATION_TOKEN": token})
    try:
        missing = register(server)
        assert missing.status_code == 401 and missing.json()["error"] == "invalid_token"
        assert 'error="invalid_token"' in missing.headers["www-authenticate"]
        assert register(server, {"Authorization": "Bearer wrong-token-0123456789"}).status_code == 401
        assert register(server, {"Authorization": f"Bearer {token}"}).status_code == 201
        assert "registration_endpoint" in httpx2.get(f"{server.base}/.well-known/oauth-authorization-server").json()
    finally:
        server.stop()
    server = start_server("--client-registration", "off")
    try:
        off = register(server)
        assert off.status_code == 403 and "off on this server" in off.json()["error_description"]
        assert "registration_endpoint" not in httpx2.get(f"{server.base}/.well-known/oauth-authorization-server").json()
    finally:
        server.stop()


def ask_call(server, key, tool, arguments):
    async def go():
        async with connect(server, "auto", key=key, url=server.mcp + "?packages=ask") as client:
            r = await client.call_tool(tool, arguments)
            assert not r.is_error, r.content
            return r.structured_content

    return run(go())


def test_a_plan_shows_a_role_that_reads_part_of_a_table_no_figures_of_the_whole(s):
    """On PostgreSQL the planner's rows and costs are the whole table's (its statistics); a role
    that sees some of its rows gets the plan without them. (On SQLite plans carry no figures.)"""
    key = s.api_key
    call(s, key, "roles_create", {"name": "rep"})
    call(s, key, "roles_set_permissions", {"role": "rep", "collection": "Invoice", "actions": {"list": {"filter": {"CustomerId": 1}}}})
    s.cli("user", "create", "rex", "--role", "member")
    call(s, key, "users_set_roles", {"user": "rex", "roles": ["rep"]})
    rep = s.new_key(user="rex")
    sql = {"datasource": "main", "sql": "SELECT InvoiceId, Total FROM Invoice WHERE Total > 1"}
    whole = ask_call(s, key, "sql_explain", sql)
    part = ask_call(s, rep, "sql_explain", sql)
    if BACKEND == "postgres":
        assert whole.get("estimatedRows") is not None and "Plan Rows" in json.dumps(whole["plan"]), whole
    assert "estimatedRows" not in part and "estimatedCost" not in part, part
    for figure in ("Plan Rows", "Total Cost", "Startup Cost", "Plan Width"):
        assert figure not in json.dumps(part["plan"]), part["plan"]
    rows = ask_call(s, rep, "sql_query", {"datasource": "main", "sql": "SELECT COUNT(*) AS n FROM Invoice"})["rows"]
    assert rows == [[7]], rows

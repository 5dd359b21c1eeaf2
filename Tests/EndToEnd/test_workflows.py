"""Workflows (issue 25): NocoBase's automation package through the official MCP client, on the
real binary, on SQLite and PostgreSQL (`make test` runs the suite both ways). The CRM story — a
deal won starts a task for its owner, a before-action rule refuses a deal without an amount —
and what must hold around it: executions and their jobs as the agent reads them, runs as the
owner's role, durability across kill -9, and the request node's address checks."""

from __future__ import annotations

import signal
import tempfile
import time

import pytest
from conftest import start_server, store_rows
from test_official_client import connect, run

PACKAGES = "?packages=data,schema,acl,workflow"


def call(server, key, tool, arguments, expect_error=False):
    async def go():
        async with connect(server, "auto", key=key, url=server.mcp + PACKAGES) as client:
            r = await client.call_tool(tool, arguments)
            text = " ".join(c.text for c in r.content if getattr(c, "text", None))
            assert r.is_error == expect_error, f"{tool} {arguments}: {text}"
            return r.structured_content if not r.is_error else text

    return run(go())


def legacy_call(server, key, tool, arguments):
    async def go():
        async with connect(server, "legacy", key=key, url=server.mcp + PACKAGES) as client:
            r = await client.call_tool(tool, arguments)
            assert not r.is_error, r.content
            return r.structured_content

    return run(go())


def wait_for(predicate, timeout=20.0, what="the condition"):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def crm(server, key):
    """The CRM collections: deals and the tasks made for them."""
    call(server, key, "collections_create", {
        "name": "Deal",
        "fields": [{"name": "title", "type": "string"}, {"name": "amount", "type": "float"}, {"name": "status", "type": "string"}],
    })
    call(server, key, "collections_create", {
        "name": "Task",
        "fields": [{"name": "title", "type": "string"}, {"name": "ownerId", "type": "integer"}, {"name": "dealId", "type": "integer"}],
    })


WON = {
    "title": "Onboarding task when a deal is won",
    "enabled": True,
    "trigger": {"type": "collection", "collection": "Deal", "on": "update", "changed": ["status"], "condition": {"status": "won"}},
    "nodes": [
        {"key": "big", "type": "condition", "config": {"filter": {"amount": {"$gte": 1000}}},
         "then": [{"key": "bonus", "type": "calculation", "config": {"expression": "round({{$context.data.amount}} * 0.05, 2)"}}]},
        {"key": "task", "type": "create", "config": {"collection": "Task", "values": {
            "title": "Onboard {{$context.data.title}}", "ownerId": "{{$context.data.createdById}}", "dealId": "{{$context.data.id}}"}}},
    ],
}

RULE = {
    "title": "A deal needs an amount",
    "enabled": True,
    "trigger": {"type": "beforeAction", "collection": "Deal", "on": ["create", "update"]},
    "nodes": [
        {"key": "missing", "type": "condition", "config": {"filter": {"$or": [{"amount": {"$empty": True}}, {"amount": {"$lte": 0}}]}},
         "then": [{"key": "refuse", "type": "end", "config": {"status": "failed", "message": "give the deal a positive amount"}}]},
    ],
}


@pytest.fixture(scope="module")
def story():
    data_dir = tempfile.mkdtemp(prefix="portico-workflows-")
    server = start_server(data_dir=data_dir)
    key = server.api_key
    crm(server, key)
    yield {"server": server, "key": key}
    server.stop()


def test_a_deal_won_makes_a_task_for_its_owner(story):
    server, key = story["server"], story["key"]
    workflow = call(server, key, "workflows_create", WON)
    assert workflow["enabled"] and workflow["version"] == 1
    deal = call(server, key, "resource_create", {"resource": "Deal", "values": {"title": "Acme", "amount": 2000, "status": "open"}})["data"]
    # A change of another field does not start it; setting status to won does, once.
    call(server, key, "resource_update", {"resource": "Deal", "filterByTk": deal["id"], "values": {"title": "Acme Corp"}})
    call(server, key, "resource_update", {"resource": "Deal", "filterByTk": deal["id"], "values": {"status": "won"}})

    def finished():
        runs = call(server, key, "executions_list", {"workflow": workflow["id"]})["data"]
        return runs if runs and all(r["status"] in ("resolved", "failed") for r in runs) else None

    runs = wait_for(finished, what="the execution to finish")
    assert [r["status"] for r in runs] == ["resolved"], runs
    execution = call(server, key, "executions_get", {"id": runs[0]["id"]})
    jobs = {j["node"]: j for j in execution["jobs"]}
    assert jobs["big"]["result"] == {"result": True}
    assert jobs["bonus"]["result"] == 100
    assert jobs["task"]["result"]["title"] == "Onboard Acme Corp"
    tasks = call(server, key, "resource_list", {"resource": "Task"})["data"]
    assert len(tasks) == 1
    assert tasks[0]["dealId"] == deal["id"]
    assert tasks[0]["ownerId"] == deal["createdById"] and tasks[0]["ownerId"] is not None
    # The task was written by the workflow's owner: it carries their id too.
    assert tasks[0]["createdById"] == deal["createdById"]
    # The older era's client reads the same.
    assert legacy_call(server, key, "executions_get", {"id": runs[0]["id"]})["status"] == "resolved"


def test_a_before_action_rule_refuses_a_deal_without_an_amount(story):
    server, key = story["server"], story["key"]
    rule = call(server, key, "workflows_create", RULE)
    before = len(call(server, key, "resource_list", {"resource": "Deal", "pageSize": 500})["data"])
    text = call(server, key, "resource_create", {"resource": "Deal", "values": {"title": "Nothing yet"}}, expect_error=True)
    assert "give the deal a positive amount" in text and "A deal needs an amount" in text, text
    text = call(server, key, "resource_create", {"resource": "Deal", "values": {"title": "Free", "amount": 0}}, expect_error=True)
    assert "positive amount" in text
    assert len(call(server, key, "resource_list", {"resource": "Deal", "pageSize": 500})["data"]) == before
    made = call(server, key, "resource_create", {"resource": "Deal", "values": {"title": "Globex", "amount": 50}})["data"]
    assert made["amount"] == 50
    call(server, key, "workflows_update", {"id": rule["id"], "enabled": False})
    assert call(server, key, "resource_create", {"resource": "Deal", "values": {"title": "Allowed now"}})["data"]["title"] == "Allowed now"


def test_definitions_are_checked_when_saved(story):
    server, key = story["server"], story["key"]
    cases = [
        ({"type": "collection", "collection": "Nope", "on": "create"}, [], "Nope"),
        ({"type": "collection", "collection": "Deal", "on": "create", "changed": ["colour"]}, [], "colour"),
        ({"type": "manual"}, [{"key": "a", "type": "create", "config": {"collection": "Task", "values": {"missing": 1}}}], "missing"),
        ({"type": "manual"}, [{"key": "a", "type": "calculation", "config": {"expression": "{{$jobsMapByNodeKey.b.x}} + 1"}}], "no node 'b'"),
        ({"type": "manual"}, [{"key": "a", "type": "calculation", "config": {"expression": "system('ls')"}}], "unknown name"),
        ({"type": "schedule", "cron": "61 * * * *"}, [], "minute"),
        ({"type": "manual"}, [{"key": "a", "type": "end", "config": {}}, {"key": "a", "type": "end", "config": {}}], "unique"),
        ({"type": "beforeAction", "collection": "Deal", "on": "create"}, [{"key": "w", "type": "create", "config": {"collection": "Task", "values": {}}}],
         "may only use"),
    ]
    for trigger, nodes, expected in cases:
        text = call(server, key, "workflows_create", {"title": "bad", "trigger": trigger, "nodes": nodes}, expect_error=True)
        assert expected in text, (trigger, nodes, text)
    # At most 200 nodes, counted down the branches too.
    nested = [{"key": f"t{i}", "type": "calculation", "config": {"expression": "1"}} for i in range(110)]
    too_many = [{"key": f"n{i}", "type": "calculation", "config": {"expression": "1"}} for i in range(100)]
    too_many.append({"key": "branch", "type": "condition", "config": {"filter": {}}, "then": nested})
    text = call(server, key, "workflows_create", {"title": "big", "trigger": {"type": "manual"}, "nodes": too_many}, expect_error=True)
    assert "at most 200 nodes" in text, text


def test_manual_runs_versions_and_cancel(story):
    server, key = story["server"], story["key"]
    flow = call(server, key, "workflows_create", {
        "title": "Count deals", "enabled": True, "trigger": {"type": "manual"},
        "nodes": [
            {"key": "q", "type": "query", "config": {"collection": "Deal", "filter": {"title": "{{$context.data.title}}"}}},
            {"key": "c", "type": "calculation", "config": {"expression": "concat('found ', {{$jobsMapByNodeKey.q.title}})"}},
        ],
    })
    started = call(server, key, "workflows_trigger", {"id": flow["id"], "context": {"title": "Globex"}})["execution"]
    assert started["status"] == "queued"
    done = wait_for(lambda: (e := call(server, key, "executions_get", {"id": started["id"]}))["status"] == "resolved" and e, what="the manual run")
    assert {j["node"]: j["result"] for j in done["jobs"]}["c"] == "found Globex"
    # New nodes for a workflow that has run make a new version; the run keeps the old one.
    changed = call(server, key, "workflows_update", {"id": flow["id"], "nodes": [{"key": "d", "type": "delay", "config": {"seconds": 3600}}]})
    assert changed["id"] != flow["id"] and changed["version"] == 2 and changed["key"] == flow["key"]
    assert call(server, key, "workflows_get", {"id": flow["id"]})["current"] is False
    assert call(server, key, "executions_get", {"id": started["id"]})["workflow"] == flow["id"]
    waiting = call(server, key, "workflows_trigger", {"id": changed["id"]})["execution"]
    wait_for(lambda: call(server, key, "executions_get", {"id": waiting["id"]})["jobs"], what="the delay to be recorded")
    canceled = call(server, key, "executions_cancel", {"id": waiting["id"]})
    assert canceled["status"] == "canceled"
    assert "already ended" in call(server, key, "executions_cancel", {"id": waiting["id"]}, expect_error=True)

"""Long work as tasks (PRODUCT.md, "Tasks"; the MCP tasks extension, `io.modelcontextprotocol/tasks`):
a long `sql_query`, `ask`, `resource_query` or `workflows_trigger` of a client that declares the
extension answers with a task after about a second; `tasks/get` polls it, `tasks/cancel` stops its
statement in the database; another caller cannot see it; clients without the extension get the
result as before."""

from __future__ import annotations

import asyncio
import time
from typing import Any, Literal

import httpx2
import pytest
from mcp import Client
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.streamable_http import streamable_http_client
from mcp_http import modern_request, post
from mcp_types import CallToolResult, Request, RequestParams, Result
from pydantic import ConfigDict

from conftest import BACKEND, cpu_seconds, running_statements, start_server
from fake_llm import FakeLLM

TASKS = "io.modelcontextprotocol/tasks"
DECLARED = {"extensions": {TASKS: {}}}


def counting(n: int, name: str = "n") -> str:
    """A query that counts to `n` the slow way (a few seconds for ten million)."""
    return f"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < {n}) SELECT count(*) AS {name} FROM c"


# Counted to in about two and a half seconds (SQLite) or more (PostgreSQL): past the second after which
# a call becomes a task, well within the query time limit the server below is given.
LONG = 8_000_000
ENDLESS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) AS endless_marker FROM c"


@pytest.fixture(scope="module")
def server():
    s = start_server("--query-timeout", "120", "--request-timeout", "120")
    yield s
    s.stop()


# The client's side of the extension, written from its specification: the claim of
# `resultType: "task"` on tools/call, resolved by polling tasks/get.
class TaskParams(RequestParams):
    task_id: str


class GetTask(Request[TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    name_param = "taskId"


class DetailedTask(Result):
    model_config = ConfigDict(extra="allow")
    result_type: str | None = None
    task_id: str
    status: str
    poll_interval_ms: int | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class CreateTaskResult(Result):
    model_config = ConfigDict(extra="allow")
    result_type: Literal["task"]
    task_id: str
    status: str
    created_at: str
    last_updated_at: str
    ttl_ms: int | None
    poll_interval_ms: int | None = None


class Tasks(ClientExtension):
    identifier = TASKS

    def __init__(self):
        self.created: list[CreateTaskResult] = []
        self.polls = 0

    def claims(self):
        return [ResultClaim(result_type="task", model=CreateTaskResult, resolve=self.resolve)]

    async def resolve(self, created: CreateTaskResult, ctx: ClaimContext) -> CallToolResult:
        self.created.append(created)
        while True:
            await asyncio.sleep((created.poll_interval_ms or 1000) / 1000)
            self.polls += 1
            task = await ctx.session.send_request(GetTask(params=TaskParams(task_id=created.task_id)), DetailedTask)
            if task.status == "completed":
                return CallToolResult.model_validate(task.result)
            if task.status != "working":
                raise AssertionError(f"the task ended {task.status}: {task.model_dump()}")


def official_call(server, tool: str, arguments: dict, extension: Tasks | None) -> CallToolResult:
    async def go():
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {server.api_key}"}, timeout=120)
        extensions = [extension] if extension else None
        async with Client(streamable_http_client(server.mcp + "?packages=data,ask", http_client=http), extensions=extensions) as client:
            assert client.protocol_version == "2026-07-28"
            return await client.call_tool(tool, arguments)
    return asyncio.run(go())


def raw(server, method: str, params: dict, key: str | None = None, capabilities: dict | None = DECLARED) -> httpx2.Response:
    body, headers = modern_request(method, params, meta_extra={"io.modelcontextprotocol/clientCapabilities": capabilities or {}})
    with server.http(key or "default") as c:
        return post(c, server.mcp + "?packages=data,ask", body, headers)


def test_discovery_offers_the_extension(server):
    result = raw(server, "server/discover", {}).json()["result"]
    assert result["capabilities"]["extensions"][TASKS] == {}


def test_a_long_query_answers_with_a_task_that_the_official_client_polls_to_its_result(server):
    tasks = Tasks()
    started = time.monotonic()
    result = official_call(server, "sql_query", {"sql": counting(LONG)}, tasks)
    assert not result.is_error, result
    assert result.structured_content["rows"] == [[LONG]]
    assert len(tasks.created) == 1 and tasks.polls >= 1, "the call answered with a task, polled to its end"
    created = tasks.created[0]
    assert created.status == "working" and created.ttl_ms == 3_600_000 and created.poll_interval_ms == 1000
    assert created.created_at.endswith("Z") and "T" in created.created_at
    print(f"FIGURE a {LONG:,}-step count as a task: {time.monotonic() - started:.2f} s, {tasks.polls} polls")

    # A call done within the second answers at once, without a task.
    quick = Tasks()
    answered = official_call(server, "sql_query", {"sql": "SELECT count(*) FROM " + ('"Genre"' if BACKEND == "postgres" else "Genre")}, quick)
    assert answered.structured_content["rows"] == [[25]] and quick.created == []


def test_a_question_whose_model_is_slow_becomes_a_task(server):
    def slow_model(messages):
        time.sleep(2.5)
        return '{"sql": "SELECT count(*) AS tracks FROM \\"Track\\""}'

    llm = FakeLLM(slow_model)
    try:
        server.cli("llm", "add", "--name", "slow", "--base-url", llm.base_url, "--model", "fake-sql-1")
        tasks = Tasks()
        answer = official_call(server, "ask", {"question": "How many tracks are there?"}, tasks)
        assert not answer.is_error, answer
        assert answer.structured_content["engine"].startswith("llm") and answer.structured_content["rows"] == [[3503]], answer.structured_content
        assert len(tasks.created) == 1 and len(llm.requests) == 1
    finally:
        server.cli("llm", "remove", "slow")
        llm.stop()


def test_a_client_without_the_extension_gets_the_result_as_before(server):
    answer = raw(server, "tools/call", {"name": "sql_query", "arguments": {"sql": counting(LONG)}}, capabilities={}).json()["result"]
    assert answer["resultType"] == "complete" and answer["structuredContent"]["rows"] == [[LONG]]


def test_a_task_is_polled_raw_and_only_by_its_caller(server):
    created = raw(server, "tools/call", {"name": "sql_query", "arguments": {"sql": counting(LONG, "polled")}}).json()["result"]
    assert created["resultType"] == "task" and created["status"] == "working", created
    task_id = created["taskId"]
    assert len(task_id) >= 22, "task ids are unguessable"

    # Another credential of the same user, and another user, are told no such task exists; neither can cancel it.
    server.cli("user", "create", "task-stranger", "--role", "member")
    for key in [server.new_key(), server.new_key(user="task-stranger")]:
        refused = raw(server, "tasks/get", {"taskId": task_id}, key=key)
        assert refused.status_code == 400 and refused.json()["error"]["code"] == -32602
        assert "Task not found" in refused.json()["error"]["message"]
        assert raw(server, "tasks/cancel", {"taskId": task_id}, key=key).json()["error"]["code"] == -32602
    assert raw(server, "tasks/get", {"taskId": "nope"}).json()["error"]["message"].endswith("Task not found")
    assert raw(server, "tasks/get", {}).json()["error"]["code"] == -32602

    # The routing header must name the task (the extension's Mcp-Name rule).
    body, headers = modern_request("tasks/get", {"taskId": task_id}, meta_extra={"io.modelcontextprotocol/clientCapabilities": DECLARED})
    headers["Mcp-Name"] = "another"
    with server.http() as c:
        mismatch = post(c, server.mcp, body, headers)
    assert mismatch.status_code == 400 and "Mcp-Name" in mismatch.text

    # tasks/update has nothing outstanding to answer: acknowledged.
    ack = raw(server, "tasks/update", {"taskId": task_id, "inputResponses": {"x": {"action": "accept"}}}).json()["result"]
    assert ack["resultType"] == "complete"

    deadline = time.monotonic() + 60
    while True:
        polled = raw(server, "tasks/get", {"taskId": task_id}).json()["result"]
        assert polled["resultType"] == "complete" and polled["taskId"] == task_id
        if polled["status"] != "working":
            break
        assert time.monotonic() < deadline, "the task ended"
        time.sleep(polled["pollIntervalMs"] / 1000)
    assert polled["status"] == "completed", polled
    assert polled["result"]["structuredContent"]["columns"] == ["polled"]
    assert polled["result"]["structuredContent"]["rows"] == [[LONG]]
    # Read again, the same result: kept until the task expires.
    assert raw(server, "tasks/get", {"taskId": task_id}).json()["result"]["result"] == polled["result"]


def test_cancelling_a_task_stops_its_statement(server):
    created = raw(server, "tools/call", {"name": "sql_query", "arguments": {"sql": ENDLESS}}).json()["result"]
    assert created["resultType"] == "task", created
    task_id = created["taskId"]
    time.sleep(0.5)
    if BACKEND == "postgres":
        assert running_statements(server.data_dir, "endless_marker") == 1
    else:
        before = cpu_seconds(server.process.pid)
        time.sleep(1)
        assert cpu_seconds(server.process.pid) - before > 0.5, "the statement runs"

    ack = raw(server, "tasks/cancel", {"taskId": task_id}).json()["result"]
    assert ack["resultType"] == "complete" and set(ack) <= {"resultType", "_meta"}, ack
    polled = raw(server, "tasks/get", {"taskId": task_id}).json()["result"]
    assert polled["status"] == "cancelled" and "result" not in polled, polled
    time.sleep(1)
    if BACKEND == "postgres":
        assert running_statements(server.data_dir, "endless_marker") == 0, "the statement stopped in the database"
    else:
        before = cpu_seconds(server.process.pid)
        time.sleep(1.5)
        assert cpu_seconds(server.process.pid) - before < 0.3, "the statement stopped"
    # It stays cancelled.
    assert raw(server, "tasks/get", {"taskId": task_id}).json()["result"]["status"] == "cancelled"

    metrics = httpx2.get(server.base + "/metrics").text
    counts = {line.split("{")[1].split("}")[0]: float(line.split()[-1]) for line in metrics.splitlines()
              if line.startswith("portico_mcp_tasks_total{")}
    assert counts['state="created"'] >= 1 and counts['state="cancelled"'] >= 1, counts
    assert "portico_mcp_tasks_running 0" in metrics


def test_a_revoked_key_cannot_read_its_task(server):
    key = server.new_key()
    created = raw(server, "tools/call", {"name": "sql_query", "arguments": {"sql": counting(LONG)}}, key=key).json()["result"]
    assert created["resultType"] == "task"
    server.cli("apikey", "revoke", key.split("_")[1])
    deadline = time.monotonic() + 5
    while raw(server, "tasks/get", {"taskId": created["taskId"]}, key=key).status_code != 401:
        assert time.monotonic() < deadline, "the revoked key is refused"
        time.sleep(0.2)

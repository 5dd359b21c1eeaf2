"""Nothing destroyed on the model's word alone (PRODUCT.md, "The first tool list"): destructive tools
ask first, naming what would be lost: input-required in the 2026-07-28 era, elicitation/create in
the handshake era, and otherwise a tool result that says what would be lost and how to confirm
(`confirm: true`). An app's administrator may turn the question off."""

from __future__ import annotations

import asyncio

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_http import modern_request, post
from mcp_types import ElicitResult

DATA = "?packages=data,schema,acl,users,workflow"


def run(coro):
    return asyncio.run(coro)


def genres(server, key=None) -> list[str]:
    body, headers = modern_request("tools/call", {"name": "resource_list", "arguments": {"resource": "Genre", "paginate": False}})
    with server.http(key or "default") as c:
        return [g["Name"] for g in post(c, server.mcp, body, headers).json()["result"]["structuredContent"]["data"]]


def add_genres(server, names: list[str]) -> None:
    with server.http() as c:
        for name in names:
            body, headers = modern_request("tools/call", {"name": "resource_create", "arguments": {"resource": "Genre", "values": {"Name": name}}})
            assert "error" not in post(c, server.mcp, body, headers).json()


def modern_call(server, name: str, arguments: dict, capabilities: dict | None = None, **params) -> dict:
    body, headers = modern_request("tools/call", {"name": name, "arguments": arguments, **params},
                                   meta_extra={"io.modelcontextprotocol/clientCapabilities": capabilities or {}})
    with server.http() as c:
        return post(c, server.mcp + DATA, body, headers).json()


FILTER = {"resource": "Genre", "filter": {"Name": {"$startsWith": "Doomed "}}}


def test_a_client_that_cannot_be_asked_is_told_what_would_be_lost(server):
    add_genres(server, ["Doomed A", "Doomed B"])
    refused = modern_call(server, "resource_destroy", FILTER)["result"]
    assert refused["isError"] is True
    assert "Nothing was destroyed yet: This deletes 2 records of collection 'Genre'" in refused["content"][0]["text"]
    assert "confirm: true" in refused["content"][0]["text"]
    assert {"Doomed A", "Doomed B"} <= set(genres(server)), "nothing lost"
    done = modern_call(server, "resource_destroy", {**FILTER, "confirm": True})["result"]
    assert done.get("isError") is not True and done["structuredContent"]["data"] == 2
    assert not {"Doomed A", "Doomed B"} & set(genres(server))
    # Nothing to lose, nothing to ask.
    assert modern_call(server, "resource_destroy", FILTER)["result"]["structuredContent"]["data"] == 0


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_user_is_asked_and_a_no_loses_nothing(server, mode):
    forms = []

    def answer(yes: bool):
        async def callback(context, params):
            forms.append(params)
            return ElicitResult(action="accept", content={"confirm": True}) if yes else ElicitResult(action="decline")
        return callback

    async def destroy(yes: bool):
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {server.api_key}"}, timeout=30)
        async with Client(streamable_http_client(server.mcp, http_client=http), mode=mode, elicitation_callback=answer(yes)) as client:
            assert client.protocol_version == ("2026-07-28" if mode == "auto" else "2025-11-25")
            return await client.call_tool("resource_destroy", FILTER)

    add_genres(server, [f"Doomed {mode} 1"])
    declined = run(destroy(False))
    assert declined.is_error and "Nothing was destroyed: the user did not confirm" in declined.content[0].text
    assert f"Doomed {mode} 1" in genres(server), "a no loses nothing"
    assert len(forms) == 1 and "This deletes 1 record of collection 'Genre'" in forms[0].message
    assert forms[0].requested_schema["required"] == ["confirm"]
    accepted = run(destroy(True))
    assert not accepted.is_error and accepted.structured_content["data"] == 1, accepted.content
    assert f"Doomed {mode} 1" not in genres(server)
    assert len(forms) == 2


def test_the_answer_counts_only_with_the_state_sealed_for_this_call(server):
    add_genres(server, ["Doomed sealed"])
    can_ask = {"elicitation": {"form": {}}}
    first = modern_call(server, "resource_destroy", FILTER, can_ask)["result"]
    assert first["resultType"] == "input_required" and set(first["inputRequests"]) == {"confirm"}
    question = first["inputRequests"]["confirm"]["params"]
    assert "This deletes 1 record of collection 'Genre'" in question["message"]
    state = first["requestState"]
    yes = {"confirm": {"action": "accept", "content": {"confirm": True}}}
    tampered = modern_call(server, "resource_destroy", FILTER, can_ask, requestState=state[:-4] + "AAAA", inputResponses=yes)
    assert tampered["error"]["code"] == -32602 and "not one this server gave" in tampered["error"]["message"]
    other = modern_call(server, "resource_destroy", {"resource": "Genre", "filterByTk": 1}, can_ask, requestState=state, inputResponses=yes)
    assert "another call" in other["error"]["message"]
    assert "Doomed sealed" in genres(server)
    no = modern_call(server, "resource_destroy", FILTER, can_ask, requestState=state,
                     inputResponses={"confirm": {"action": "accept", "content": {"confirm": False}}})["result"]
    assert no["isError"] is True and "did not confirm" in no["content"][0]["text"] and "Doomed sealed" in genres(server)
    done = modern_call(server, "resource_destroy", FILTER, can_ask, requestState=state, inputResponses=yes)["result"]
    assert done["structuredContent"]["data"] == 1 and "Doomed sealed" not in genres(server)


def test_every_destructive_tool_names_what_it_would_destroy(server):
    ok = lambda name, arguments: modern_call(server, name, {**arguments, "confirm": True})["result"]  # noqa: E731
    assert ok("collections_create", {"name": "doomed", "fields": [{"name": "title", "type": "string"}]}).get("isError") is not True
    assert ok("roles_create", {"name": "doomed-role"}).get("isError") is not True
    server.cli("user", "create", "doomed-user", "--role", "member")
    flow = ok("workflows_create", {"title": "doomed flow", "trigger": {"type": "manual"}, "nodes": []})
    expected = {
        "fields_destroy": ({"collection": "doomed", "name": "title"}, "field 'title' of collection 'doomed' and its value in every record"),
        "collections_destroy": ({"name": "doomed"}, "collection 'doomed' and every record in it"),
        "roles_destroy": ({"name": "doomed-role"}, "role 'doomed-role' of app 'main'"),
        "delete_user": ({"user": {"owner": "main", "name": "doomed-user"}}, "user 'doomed-user' from app 'main'"),
        "workflows_destroy": ({"id": flow["structuredContent"]["id"]}, f"workflow {flow['structuredContent']['id']}, every version of it"),
    }
    for name, (arguments, loss) in expected.items():
        asked = modern_call(server, name, arguments)["result"]
        assert asked["isError"] is True and loss in asked["content"][0]["text"], (name, asked)
        assert "confirm: true" in asked["content"][0]["text"]
    for name, (arguments, _) in expected.items():
        done = modern_call(server, name, {**arguments, "confirm": True})["result"]
        assert done.get("isError") is not True, (name, done)
    # The annotations still say so.
    listed = modern_call_list(server)
    assert all(listed[name]["annotations"]["destructiveHint"] is True for name in [*expected, "resource_destroy"])


def modern_call_list(server) -> dict:
    body, headers = modern_request("tools/list")
    with server.http() as c:
        return {t["name"]: t for t in post(c, server.mcp + DATA, body, headers).json()["result"]["tools"]}


def test_an_app_administrator_turns_the_question_off(server):
    server.cli("app", "create", "trusted", "--admin", "admin")
    key = server.new_key(app="trusted")
    url = f"{server.base}/api/__app/trusted/mcp"

    def call(name, arguments):
        body, headers = modern_request("tools/call", {"name": name, "arguments": arguments})
        with server.http(key) as c:
            return post(c, url + DATA, body, headers).json()["result"]

    assert call("collections_create", {"name": "batch", "fields": [{"name": "n", "type": "integer"}]}).get("isError") is not True
    assert call("resource_create", {"resource": "batch", "values": {"n": 1}}).get("isError") is not True
    assert "destructive tools ask before they act" in server.cli("app", "confirmations", "trusted").stdout
    assert call("resource_destroy", {"resource": "batch", "filter": {"n": 1}})["isError"] is True
    assert "act without asking" in server.cli("app", "confirmations", "trusted", "--off").stdout
    assert call("resource_destroy", {"resource": "batch", "filter": {"n": 1}})["structuredContent"]["data"] == 1
    # Another app still asks (and the shared demo data is left as it was).
    add_genres(server, ["Doomed elsewhere"])
    assert modern_call(server, "resource_destroy", FILTER)["result"]["isError"] is True
    assert modern_call(server, "resource_destroy", {**FILTER, "confirm": True})["result"]["structuredContent"]["data"] == 1
    assert "ask before they act" in server.cli("app", "confirmations", "trusted", "--on").stdout
    assert call("resource_create", {"resource": "batch", "values": {"n": 2}}).get("isError") is not True
    assert call("resource_destroy", {"resource": "batch", "filter": {"n": 2}})["isError"] is True
    # The app's own administrator, through the acl package.
    assert call("app_confirmations_set", {"confirm": False})["structuredContent"]["data"] == {"app": "trusted", "confirm": False}
    assert "act without asking" in server.cli("app", "confirmations", "trusted").stdout
    assert call("resource_destroy", {"resource": "batch", "filter": {"n": 2}})["structuredContent"]["data"] == 1
    assert call("app_confirmations_set", {"confirm": True})["structuredContent"]["data"]["confirm"] is True
    assert "no app named 'nope'" in server.cli("app", "confirmations", "nope", check=False).stderr

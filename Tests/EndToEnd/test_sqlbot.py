"""SQLBot's surface on its own port (`--sqlbot-port`): the official MCP client in both eras
without credentials (mcp_start signs in), and the plain JSON routes an n8n or Dify workflow
calls, streamed and not. Answers come from a scripted chat-completions server."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import re
import tempfile

import httpx2
import pytest
from conftest import as_run, free_port, start_server, wait_healthy
from fake_llm import FakeLLM, question_of
from mcp import Client
from mcp_http import modern_request
from mcp.client.streamable_http import streamable_http_client
from PIL import Image

TOP5 = "SELECT BillingCountry AS country, ROUND(SUM(Total), 2) AS revenue FROM Invoice GROUP BY BillingCountry ORDER BY revenue DESC LIMIT 5"
SQLBOT_TOOLS = {"mcp_start", "mcp_question", "mcp_ws_list", "mcp_datasource_list", "mcp_assistant", "mcp_model_list", "get_model_list", "access_token"}


def responder(messages):
    if "countries" in question_of(messages):
        return json.dumps({"sql": TOP5, "chart": "column", "title": "收入最高的国家"})
    return json.dumps({"sql": None, "reason": "not scripted"})


@pytest.fixture(scope="module")
def bot():
    llm = FakeLLM(responder)
    port = free_port()
    server = start_server("--sqlbot-port", str(port), data_dir=tempfile.mkdtemp(prefix="portico-sqlbot-"))
    server.extra["password"] = re.search(r"Admin user:\s+admin / (\S+)", server.banner).group(1)
    server.extra["sqlbot"] = f"http://127.0.0.1:{port}"
    server.cli("llm", "add", "--name", "fake", "--base-url", llm.base_url, "--model", "fake-sql-1")
    wait_healthy(server.extra["sqlbot"])
    yield server
    server.stop()
    llm.stop()


def anonymous(bot, mode: str) -> Client:
    return Client(streamable_http_client(bot.extra["sqlbot"] + "/mcp", http_client=httpx2.AsyncClient(timeout=30)), mode=mode)


def run(coro):
    return asyncio.run(coro)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_mcp_start_then_mcp_question_over_mcp_without_credentials(bot, mode):
    async def go():
        async with anonymous(bot, mode) as client:
            assert {t.name for t in (await client.list_tools()).tools} == SQLBOT_TOOLS
            bad = await client.call_tool("mcp_start", {"username": "admin", "password": "wrong-password"})
            assert bad.is_error and "Incorrect account or password" in bad.content[0].text
            start = (await client.call_tool("mcp_start", {"username": "admin", "password": bot.extra["password"]})).structured_content
            token, chat = start["access_token"], start["chat_id"]
            assert isinstance(chat, int) and len(token) > 20

            r = await client.call_tool(
                "mcp_question", {"token": token, "chat_id": chat, "question": "Which 5 countries earn most?", "stream": False, "lang": "zh-CN"})
            assert not r.is_error, r.content
            answer = r.structured_content
            assert answer["success"] is True and answer["sql"] == as_run(TOP5) and answer["chat_id"] == chat
            assert isinstance(answer["record_id"], int) and answer["title"] == "收入最高的国家"
            assert answer["data"]["fields"] == ["country", "revenue"]
            assert answer["data"]["data"][0] == {"country": "USA", "revenue": pytest.approx(523.06)}
            assert answer["chart"]["type"] == "column" and answer["chart"]["axis"]["x"]["value"] == "country"
            assert answer["image_url"].startswith(bot.extra["sqlbot"] + "/images/")
            image = next(c for c in r.content if c.type == "image")
            picture = Image.open(io.BytesIO(base64.b64decode(image.data)))
            assert picture.size == (960, 560)
            assert len(picture.convert("RGB").getcolors(1 << 20)) > 20, "a chart with a CJK title was drawn"
            assert httpx2.get(answer["image_url"]).status_code == 200

            streamed = await client.call_tool("mcp_question", {"token": token, "chat_id": chat, "question": "Which 5 countries earn most?", "return_img": False})
            text = streamed.content[0].text
            # SQLBot's streamed form: the answer id and the question quoted, the SQL fence, the table.
            assert re.match(r"> 响应ID: \d+\n> Which 5 countries earn most\?\n\n```sql\n", text), text
            assert "```sql\n" + as_run(TOP5) in text and "| country | revenue |" in text and "| USA | 523.06 |" in text
            assert "![" not in text, "no chart image without return_img"
            assert not [c for c in streamed.content if c.type == "image"]
            pictured = await client.call_tool(
                "mcp_question", {"token": token, "chat_id": chat, "question": "Which 5 countries earn most?", "lang": "en"})
            assert pictured.content[0].text.startswith("> Answer ID: ")
            assert re.search(r"!\[column\]\(http://127\.0\.0\.1:\d+/images/\w+\.png\)$", pictured.content[0].text)
            assert [c for c in pictured.content if c.type == "image"]

            assert (await client.call_tool("mcp_ws_list", {"token": token})).structured_content["data"] == [{"id": "main", "name": "main"}]
            sources = (await client.call_tool("mcp_datasource_list", {"token": token})).structured_content["data"]
            assert sources[0]["id"] == "main" and all(set(s) == {"id", "name", "type", "description", "oid"} for s in sources)
            models = (await client.call_tool("mcp_model_list", {})).structured_content["data"]
            assert models == [{"id": "fake", "name": "fake", "model": "fake-sql-1", "default": True}]
            assert (await client.call_tool("get_model_list", {})).structured_content["data"] == models

            refused = await client.call_tool("mcp_question", {"question": "Which 5 countries earn most?"})
            assert refused.is_error and "token is required" in refused.content[0].text
            forged = await client.call_tool("mcp_question", {"token": "x" * 43, "question": "Which 5 countries earn most?"})
            assert forged.is_error and "Could not validate credentials" in forged.content[0].text

    run(go())


def test_an_api_key_works_as_token_or_as_the_request_credential(bot):
    async def go():
        async with anonymous(bot, "auto") as client:
            r = await client.call_tool("mcp_question", {"token": bot.api_key, "question": "Which 5 countries earn most?", "stream": False})
            assert r.structured_content["success"] and r.structured_content["chat_id"]
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {bot.api_key}"}, timeout=30)
        async with Client(streamable_http_client(bot.extra["sqlbot"] + "/mcp", http_client=http), mode="auto") as client:
            r = await client.call_tool("mcp_question", {"question": "Which 5 countries earn most?", "stream": False})
            assert r.structured_content["success"] and r.structured_content["sql"] == as_run(TOP5)
        narrow = bot.new_key(scopes="read:data")
        async with anonymous(bot, "auto") as client:
            r = await client.call_tool("mcp_question", {"token": narrow, "question": "Which 5 countries earn most?"})
            assert r.is_error and "read:datasource" in r.content[0].text

    run(go())


def test_the_json_routes_stream_and_answer_as_sqlbot_does(bot):
    base = bot.extra["sqlbot"]
    start = httpx2.post(f"{base}/mcp/mcp_start", json={"username": "admin", "password": bot.extra["password"]})
    assert start.status_code == 200, start.text
    token, chat = start.json()["access_token"], start.json()["chat_id"]
    bad = httpx2.post(f"{base}/mcp/mcp_start", json={"username": "admin", "password": "nope-nope"})
    assert bad.status_code == 400 and bad.json() == {"detail": "Incorrect account or password"}

    answer = httpx2.post(f"{base}/mcp/mcp_question", json={"token": token, "chat_id": chat, "question": "Which 5 countries earn most?", "stream": False}, timeout=30)
    assert answer.status_code == 200 and answer.json()["success"] is True and answer.json()["data"]["data"][1]["country"] == "Canada"

    with httpx2.stream("POST", f"{base}/mcp/mcp_question", json={"token": token, "chat_id": chat, "question": "Which 5 countries earn most?"}, timeout=30) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        body = r.read().decode()
    # What SQLBot writes for mcp_question with stream on (its in_chat=False path), chunk by chunk.
    assert re.match(r"> 响应ID: \d+\n> Which 5 countries earn most\?\n\n```sql\n" + re.escape(as_run(TOP5)) + r"\n```\n\n\| country \| revenue \|", body), body
    url = re.search(r"!\[column\]\((http[^)]+)\)$", body).group(1)
    assert httpx2.get(url).headers["content-type"] == "image/png"
    with httpx2.stream("POST", f"{base}/mcp/mcp_question", json={"token": token, "question": "What is the weather?", "lang": "en"}, timeout=30) as r:
        error = r.read().decode()
    assert error.startswith("&#x274c; **ERROR:**\n> ") and "not scripted" in error, error

    failed = httpx2.post(f"{base}/mcp/mcp_question", json={"token": token, "question": "What is the weather?", "stream": False})
    assert failed.json() == {"success": False, "message": failed.json()["message"], "chat_id": failed.json()["chat_id"]}
    assert "not scripted" in failed.json()["message"]

    # No one can confirm a reading through SQLBot's API: the built-in engine answers from its sure band
    # and refuses a reading it is less sure of, saying how to have it answered.
    sure = httpx2.post(f"{base}/mcp/mcp_question", json={"token": token, "question": "How many customers are there?", "custom_model": "builtin",
                                                       "stream": False}, timeout=30)
    assert sure.json()["success"] is True, sure.text
    unsure = httpx2.post(f"{base}/mcp/mcp_question", json={"token": token, "question": "Which media type has the most tracks?",
                                                         "custom_model": "builtin", "stream": False}, timeout=30)
    assert unsure.json()["success"] is False and "save it as an example" in unsure.json()["message"], unsure.text

    # SQLBot takes the token of the list routes in the query string.
    assert httpx2.post(f"{base}/mcp/mcp_ws_list", params={"token": token}).json() == [{"id": "main", "name": "main"}]
    assert httpx2.post(f"{base}/mcp/mcp_ds_list", json={"token": token}).json()[0]["id"] == "main"
    assert httpx2.post(f"{base}/mcp/mcp_ws_list", params={"token": "forged"}).status_code == 403
    assert httpx2.post(f"{base}/mcp/mcp_ws_list").status_code == 401
    assert httpx2.get(f"{base}/mcp/get_model_list").json()[0]["name"] == "fake"
    assistant = httpx2.post(
        f"{base}/mcp/mcp_assistant",
        json={"question": "Which 5 countries earn most?", "url": "http://169.254.169.254/latest", "authorization": bot.api_key, "stream": False})
    assert assistant.json()["success"] is True
    garbage = httpx2.post(f"{base}/mcp/mcp_question", content=b"{not json", headers={"Content-Type": "application/json"})
    assert garbage.status_code == 422 and "JSON object" in garbage.json()["detail"]

    # An unknown datasource is the caller's mistake, said plainly (it was a 500), streamed or not.
    unknown = httpx2.post(f"{base}/mcp/mcp_question", json={"token": token, "question": "Which 5 countries earn most?", "datasource_id": "nope", "stream": False})
    assert unknown.status_code == 400 and "no datasource 'nope'" in unknown.json()["detail"] and "main" in unknown.json()["detail"], unknown.text
    with httpx2.stream("POST", f"{base}/mcp/mcp_question", json={"token": token, "question": "Which 5 countries earn most?", "datasource_id": "nope"}, timeout=30) as r:
        error = r.read().decode()
    assert error.startswith("&#x274c; **ERROR:**") and "no datasource 'nope'" in error, error


def test_the_main_port_and_the_sqlbot_port_keep_their_own_tools(bot):
    body, headers = modern_request("tools/list")
    listed = httpx2.post(bot.mcp, json=body, headers={**headers, "Authorization": f"Bearer {bot.api_key}"})
    names = {t["name"] for t in listed.json()["result"]["tools"]}
    assert "ask" in names and not names & SQLBOT_TOOLS
    assert httpx2.post(bot.mcp, json=body, headers=headers).status_code == 401, "the main port still needs credentials"
    on_sqlbot = httpx2.post(bot.extra["sqlbot"] + "/mcp", json=body, headers={**headers, "Authorization": f"Bearer {bot.api_key}"})
    assert {t["name"] for t in on_sqlbot.json()["result"]["tools"]} == SQLBOT_TOOLS

"""MCP Apps (io.modelcontextprotocol/ui): the answer view is offered only to clients that declare the extension, read as
one self-contained HTML document, and rendered in a real browser (chromium) inside a minimal host page that speaks the
view's postMessage protocol and passes its tools/call on to the real server. Screenshots are kept in test-artifacts/."""

from __future__ import annotations

import asyncio

import httpx2
import pytest
from mcp import Client
from mcp.client.extension import advertise
from mcp.client.streamable_http import streamable_http_client

from mcp_http import modern_request, post

VIEW = "ui://portico/answer"
UI = "io.modelcontextprotocol/ui"
MIME = "text/html;profile=mcp-app"

# A host as small as the protocol allows: the view in a sandboxed frame with an opaque origin, ui/initialize
# answered, the tool's input and result sent after `initialized`, the view's tools/call passed to the server.
HOST = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>test host</title>
<style>body{margin:16px;font-family:sans-serif;background:#eef0f3} iframe{width:720px;height:300px;border:1px solid #99a;background:#fff}</style>
</head><body><h3>Test host</h3><iframe id="view" sandbox="allow-scripts"></iframe><script>
window.hostLog = [];
window.start = (html, input, result) => {
  const frame = document.getElementById("view");
  const post = (message) => frame.contentWindow.postMessage(Object.assign({jsonrpc: "2.0"}, message), "*");
  window.sendToView = post;
  window.addEventListener("message", async (event) => {
    if (event.source !== frame.contentWindow) return;
    const m = event.data;
    window.hostLog.push(m);
    if (m.method === "ui/initialize") {
      post({id: m.id, result: {protocolVersion: "2026-01-26", hostInfo: {name: "test-host", version: "1"},
        hostCapabilities: {serverTools: {}}, hostContext: {theme: "light", displayMode: "inline", containerDimensions: {width: 720, maxHeight: 2000}}}});
    } else if (m.method === "ui/notifications/initialized") {
      post({method: "ui/notifications/tool-input", params: {arguments: input}});
      post({method: "ui/notifications/tool-result", params: result});
    } else if (m.method === "tools/call") {
      try { post({id: m.id, result: await window.callTool(m.params.name, m.params.arguments)}); }
      catch (error) { post({id: m.id, error: {code: -32000, message: String(error)}}); }
    } else if (m.method === "ui/notifications/size-changed") {
      frame.style.height = Math.min(2000, m.params.height + 4) + "px";
    }
  });
  frame.srcdoc = html;
};
</script></body></html>"""


def declared(server, mode: str):
    async def go():
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {server.api_key}", "x-mcp-packages": "data,schema,ask"}, timeout=30)
        extensions = [advertise(UI, {"mimeTypes": [MIME]})] if mode != "plain" else None
        async with Client(streamable_http_client(server.mcp, http_client=http), mode="legacy" if mode != "modern" else "auto", extensions=extensions) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            resource = await client.read_resource(VIEW) if mode != "plain" else None
            return tools, resource

    return asyncio.run(go())


def view_html(server) -> str:
    with server.http() as http:
        r = post(http, server.mcp, {"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": VIEW}}, {"MCP-Protocol-Version": "2025-11-25"})
        assert r.status_code == 200, r.text
        return r.json()["result"]["contents"][0]["text"]


def call(server, name: str, arguments: dict) -> dict:
    with server.http() as http:
        r = post(http, server.mcp, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}},
                 {"MCP-Protocol-Version": "2025-11-25"})
        assert r.status_code == 200, r.text
        return r.json()["result"]


@pytest.mark.parametrize("mode", ["legacy", "modern"])
def test_the_view_is_offered_to_clients_that_declare_the_extension(server, mode):
    tools, resource = declared(server, mode)
    for name in ("ask", "resource_query"):
        assert tools[name].meta == {"ui": {"resourceUri": VIEW}}, tools[name].meta
    assert tools["resource_list"].meta is None, "only the tools whose answers the view shows name it"
    assert len(resource.contents) == 1
    page = resource.contents[0]
    assert page.mime_type == MIME and str(page.uri) == VIEW
    assert page.text.startswith("<!DOCTYPE html>") and "ui/initialize" in page.text
    # Self-contained: nothing to fetch, nowhere to connect.
    assert "src=\"http" not in page.text and "href=\"http" not in page.text and "fetch(" not in page.text
    assert page.meta["ui"]["csp"] == {"connectDomains": [], "resourceDomains": []}


def test_the_server_names_the_extension_only_to_a_client_that_declared_it(server):
    def capabilities(client_capabilities):
        with server.http() as http:
            r = post(http, server.mcp, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": client_capabilities, "clientInfo": {"name": "e2e", "version": "1"}}})
            return r.json()["result"]["capabilities"]

    assert capabilities({"extensions": {UI: {"mimeTypes": [MIME]}}})["extensions"] == {UI: {}}
    assert "extensions" not in capabilities({})
    assert "extensions" not in capabilities({"extensions": {UI: {"mimeTypes": ["text/uri-list"]}}})

    # In 2026-07-28 the discovery answer follows the request's own capabilities: a shared cache may not hand it on.
    def discover(client_capabilities):
        body, headers = modern_request("server/discover", meta_extra={"io.modelcontextprotocol/clientCapabilities": client_capabilities})
        with server.http() as http:
            return post(http, server.mcp, body, headers).json()["result"]

    # (The tasks extension is offered to every client: each request says whether it takes a task.)
    tasks = "io.modelcontextprotocol/tasks"
    declared = discover({"extensions": {UI: {"mimeTypes": [MIME]}}})
    assert declared["capabilities"]["extensions"] == {UI: {}, tasks: {}} and declared["cacheScope"] == "private"
    plain = discover({})
    assert plain["capabilities"]["extensions"] == {tasks: {}} and plain["cacheScope"] == "public"


def test_a_client_without_the_extension_sees_plain_tools(server):
    tools, _ = declared(server, "plain")
    assert tools["ask"].meta is None and tools["resource_query"].meta is None
    with server.http() as http:
        body = post(http, server.mcp, {"jsonrpc": "2.0", "id": 1, "method": "resources/list"}, {"MCP-Protocol-Version": "2025-11-25"}).json()
        assert all(not r["uri"].startswith("ui://") for r in body["result"]["resources"])
        # Reading it needs credentials like any resource.
    anonymous = httpx2.post(server.mcp, json={"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": VIEW}},
                            headers={"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"})
    assert anonymous.status_code == 401



def render(browser, server, html: str, arguments: dict, result: dict):
    page = browser.new_page(viewport={"width": 800, "height": 900})
    calls = []

    def call_tool(name, args):
        calls.append((name, args))
        return call(server, name, args)

    page.expose_function("callTool", call_tool)
    page.set_content(HOST)
    page.evaluate("([html, input, result]) => window.start(html, input, result)", [html, arguments, result])
    return page, page.frame_locator("#view"), calls


def test_an_answer_renders_as_a_chart_a_sortable_table_and_its_sql_and_asks_follow_ups(server, browser, artifacts):
    html = view_html(server)
    arguments = {"question": "How many tracks are in each genre?"}
    result = call(server, "ask", arguments)
    answer = result["structuredContent"]
    assert answer["chart"]["type"] in ("bar", "column") and answer["chat_id"]
    page, view, calls = render(browser, server, html, arguments, result)

    rows = view.locator("#rows tbody tr")
    rows.first.wait_for(timeout=15000)
    assert rows.count() == len(answer["rows"])
    assert view.locator("h1").inner_text() == answer["title"]
    assert view.locator(f"svg[data-chart='{answer['chart']['type']}'] rect.mark").count() == len(answer["rows"])
    assert view.locator("#sql").inner_text(timeout=5000) == answer["sql"] or view.locator("#sql").text_content() == answer["sql"]

    # Sorting by the count, both ways.
    counts = sorted(row[1] for row in answer["rows"])
    view.locator("#rows th").nth(1).click()
    assert view.locator("#rows tbody tr").first.locator("td").nth(1).inner_text() == str(counts[0])
    view.locator("#rows th").nth(1).click()
    assert view.locator("#rows tbody tr").first.locator("td").nth(1).inner_text() == str(counts[-1])
    log = page.evaluate("window.hostLog")
    assert [m.get("method") for m in log][:2] == ["ui/initialize", "ui/notifications/initialized"]
    assert any(m.get("method") == "ui/notifications/size-changed" for m in log)
    page.screenshot(path=str(artifacts / "mcp-app-1-answer.png"), full_page=True)

    # A follow-up goes through the host to the real server, in the same chat, and replaces the answer.
    view.locator("#question").fill("How many albums does each artist have?")
    view.locator("#send").click()
    view.locator("#rows th", has_text="Name").first.wait_for(timeout=15000)
    page.wait_for_function("window.hostLog.filter(m => m.method === 'tools/call').length === 1")
    assert calls == [("ask", {"question": "How many albums does each artist have?", "chat_id": answer["chat_id"], "datasource": answer["datasource"]})]
    view.locator("#rows tbody tr").nth(100).wait_for(timeout=15000)
    assert view.locator("#rows tbody tr").count() > len(answer["rows"])
    page.screenshot(path=str(artifacts / "mcp-app-2-follow-up.png"), full_page=True)
    page.close()


def test_a_query_result_renders_and_data_stays_text(server, browser, artifacts):
    html = view_html(server)
    arguments = {"resource": "Invoice", "measures": [{"field": "Total", "aggregation": "sum", "alias": "revenue"}],
                 "dimensions": [{"field": "BillingCountry", "alias": "country"}], "orders": [{"alias": "revenue", "order": "desc"}], "limit": 5}
    result = call(server, "resource_query", arguments)
    assert not result.get("isError"), result
    page, view, _ = render(browser, server, html, arguments, result)
    view.locator("#rows tbody tr").first.wait_for(timeout=15000)
    assert view.locator("#rows tbody tr").count() == len(result["structuredContent"]["data"]) == 5
    # No chart spec comes with a query: one text column and a number make a column chart.
    assert view.locator("svg[data-chart='column'] rect.mark").count() == 5
    page.screenshot(path=str(artifacts / "mcp-app-3-query.png"), full_page=True)
    page.close()

    # Rows are data: markup in a value is shown as text, never run or parsed.
    hostile = {"content": [{"type": "text", "text": "x"}], "structuredContent": {
        "title": "<b>t</b>", "sql": "SELECT 1", "columns": ["name", "n"], "rows": [["<img src=x onerror=\"parent.hacked=1\">", 1], ["ok", 2]],
        "chart": {"type": "bar", "title": "", "axis": {"x": {"name": "name", "value": "name"}, "y": [{"name": "n", "value": "n"}]}}}}
    page, view, _ = render(browser, server, html, {}, hostile)
    view.locator("#rows tbody tr").first.wait_for(timeout=15000)
    assert view.locator("#rows img").count() == 0 and view.locator("h1 b").count() == 0
    assert view.locator("#rows tbody tr").first.locator("td").first.inner_text() == "<img src=x onerror=\"parent.hacked=1\">"
    assert page.evaluate("window.hacked") is None
    page.screenshot(path=str(artifacts / "mcp-app-4-data-as-text.png"), full_page=True)
    page.close()


@pytest.mark.parametrize("kind", ["bar", "column", "line", "pie", "table"])
def test_each_kind_of_chart_renders(server, browser, artifacts, kind):
    html = view_html(server)
    rows = [["Rock", 1297], ["Latin", 579], ["Metal", 374], ["Jazz", 130]]
    result = {"content": [{"type": "text", "text": "x"}], "structuredContent": {
        "title": f"Tracks per genre ({kind})", "sql": "SELECT g.Name, COUNT(*) FROM Track t JOIN Genre g USING (GenreId) GROUP BY 1",
        "columns": ["Name", "tracks"], "rows": rows,
        "chart": {"type": kind, "title": "Tracks per genre", "axis": {"x": {"name": "Name", "value": "Name"}, "y": [{"name": "tracks", "value": "tracks"}]}}}}
    page, view, _ = render(browser, server, html, {}, result)
    view.locator("#rows tbody tr").first.wait_for(timeout=15000)
    assert view.locator("#rows tbody tr").count() == len(rows)
    marks = view.locator(f"svg[data-chart='{kind}'] .mark")
    if kind == "table":
        assert view.locator("svg").count() == 0, "a table answer is the table alone"
    elif kind == "line":
        assert marks.count() == 1 and len(marks.first.get_attribute("points").split()) == len(rows)
    else:
        assert marks.count() == len(rows)
        boxes = [marks.nth(i).bounding_box() for i in range(len(rows))]
        if kind == "bar":
            # Lying down: one row a label, top to bottom, all starting at the same x, the length the value.
            assert len({round(b["x"]) for b in boxes}) == 1 and len({round(b["height"]) for b in boxes}) == 1, boxes
            assert boxes[0]["y"] < boxes[1]["y"] < boxes[3]["y"]
            assert boxes[0]["width"] > boxes[1]["width"] > boxes[3]["width"] and boxes[0]["width"] > boxes[0]["height"]
        elif kind == "column":
            # Standing up: left to right, all on the same baseline, the height the value.
            assert len({round(b["y"] + b["height"]) for b in boxes}) == 1 and len({round(b["width"]) for b in boxes}) == 1, boxes
            assert boxes[0]["x"] < boxes[1]["x"] < boxes[3]["x"]
            assert boxes[0]["height"] > boxes[1]["height"] > boxes[3]["height"]
        else:  # pie: a slice each, the largest the widest
            assert boxes[0]["width"] * boxes[0]["height"] > boxes[3]["width"] * boxes[3]["height"]
    page.screenshot(path=str(artifacts / f"mcp-app-5-{kind}.png"), full_page=True)
    page.close()

"""The official MCP Python client (`mcp` 2.3.0) against the real binary, in both of its modes."""

from __future__ import annotations

import asyncio

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

CRUD_TOOLS = {"resource_list", "resource_get", "resource_create", "resource_update", "resource_destroy", "resource_query"}
SCHEMA_TOOLS = {"collections_list", "collections_get", "collections_create", "collections_update", "collections_destroy", "fields_create", "fields_update", "fields_destroy"}
# The default packages are data, schema and ask.
ASK_TOOLS = {"ask", "datasources_list", "datasource_describe", "sql_query", "sql_explain", "terms_list", "terms_create", "terms_update", "terms_destroy",
             "examples_list", "examples_create", "examples_destroy", "semantic_model_get", "query_metric", "relationships_create"} | {
                 f"{kind}_{action}" for kind in ("metrics", "dimensions", "segments") for action in ("create", "update", "destroy")} | {"relationships_destroy"}
DEFAULT_TOOLS = CRUD_TOOLS | SCHEMA_TOOLS | ASK_TOOLS


def connect(server, mode: str, key: str | None = None, url: str | None = None) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key or server.api_key}"}, timeout=30)
    return Client(streamable_http_client(url or server.mcp, http_client=http), mode=mode)


def run(coro):
    return asyncio.run(coro)


@pytest.mark.parametrize("mode,version", [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
def test_negotiates_the_era_and_lists_the_crud_tools(server, mode, version):
    async def go():
        async with connect(server, mode, url=server.mcp + "?packages=data,schema,ask") as client:
            assert client.protocol_version == version
            tools = (await client.list_tools()).tools
            names = {t.name for t in tools}
            assert names == DEFAULT_TOOLS
            for tool in tools:
                assert tool.input_schema["type"] == "object"
                assert tool.output_schema is not None
                assert tool.annotations is not None
            by_name = {t.name: t for t in tools}
            assert by_name["resource_list"].annotations.read_only_hint is True
            assert by_name["resource_destroy"].annotations.destructive_hint is True
    run(go())


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_every_tool_has_a_title_and_its_package_icon(server, mode):
    packages = ["data", "schema", "users", "applications", "apikeys", "acl", "ask", "workflow"]

    async def go():
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {server.api_key}", "x-mcp-packages": ",".join(packages)}, timeout=30)
        async with Client(streamable_http_client(server.mcp, http_client=http), mode=mode) as client:
            info = client.server_info
            assert info is not None and info.title == "Portico"
            page = await client.list_tools()
            tools = list(page.tools)
            while page.next_cursor:  # more than one page of 50
                page = await client.list_tools(cursor=page.next_cursor)
                tools += page.tools
            return info, tools

    info, tools = run(go())
    assert len(tools) > 40
    titles = [t.title for t in tools]
    assert all(title and title.strip() and title != t.name for title, t in zip(titles, tools)), [t.name for t in tools if not t.title]
    assert len(set(titles)) == len(titles), "two tools share a title"
    icon_urls = set()
    for tool in tools:
        assert tool.annotations.title == tool.title
        assert len(tool.icons) == 1 and tool.icons[0].mime_type == "image/svg+xml" and tool.icons[0].sizes == ["any"]
        icon_urls.add(str(tool.icons[0].src))
    # One icon per package, each served by Portico itself as a script-free SVG.
    assert {url.rsplit("/", 1)[1] for url in icon_urls} == {p + ".svg" for p in packages}
    if mode == "legacy":
        # The whole identity (icons, description) comes with initialize; 2026-07-28 results carry the brief one.
        assert info.icons and str(info.icons[0].src).endswith("/icons/portico.svg")
        assert info.description
        icon_urls.add(str(info.icons[0].src))
    with httpx2.Client(timeout=10) as http:
        for url in sorted(icon_urls):
            assert url.startswith(server.base + "/icons/")
            r = http.get(url)
            assert r.status_code == 200, url
            assert r.headers["content-type"] == "image/svg+xml"
            assert "default-src 'none'" in r.headers["content-security-policy"]
            assert r.text.startswith("<svg") and "<script" not in r.text and "href" not in r.text
        missing = http.get(server.base + "/icons/nothing.svg")
        assert missing.status_code == 404 and "data.svg" in missing.text


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_reads_filters_sorts_and_paginates_chinook(server, mode):
    async def go():
        async with connect(server, mode) as client:
            r = await client.call_tool("resource_get", {"resource": "Artist", "filterByTk": 1})
            assert not r.is_error
            assert r.structured_content == {"data": {"ArtistId": 1, "Name": "AC/DC"}}

            r = await client.call_tool("resource_list", {"resource": "Customer", "filter": {"Country": "Canada"}, "fields": ["CustomerId", "LastName"], "sort": ["LastName"], "pageSize": 3})
            data = r.structured_content["data"]
            assert [c["LastName"] for c in data] == ["Brown", "Francis", "Mitchell"]
            assert r.structured_content["meta"] == {"count": 8, "page": 1, "pageSize": 3, "totalPage": 3}
            assert set(data[0]) == {"CustomerId", "LastName"}

            page3 = await client.call_tool("resource_list", {"resource": "Customer", "filter": {"Country": "Canada"}, "sort": ["LastName"], "pageSize": 3, "page": 3})
            assert len(page3.structured_content["data"]) == 2

            r = await client.call_tool("resource_list", {"resource": "Track", "filter": {"$and": [{"Milliseconds": {"$gt": 1_200_000}}, {"genre.Name": {"$includes": "sci"}}]}, "sort": ["-Milliseconds"], "pageSize": 50})
            names = [t["Name"] for t in r.structured_content["data"]]
            assert names and all(isinstance(n, str) for n in names)
            assert r.structured_content["meta"]["count"] == len(names)

            r = await client.call_tool("resource_list", {"resource": "Invoice", "filter": {"InvoiceDate": {"$dateOn": "2024-12"}}, "paginate": False})
            assert all(i["InvoiceDate"].startswith("2024-12") for i in r.structured_content["data"])
            assert len(r.structured_content["data"]) > 0
    run(go())


def test_relations_appends_and_association_resources(server):
    async def go():
        async with connect(server, "auto") as client:
            r = await client.call_tool("resource_get", {"resource": "Album", "filterByTk": 1, "appends": ["artist", "tracks.genre"], "except": ["ArtistId"]})
            album = r.structured_content["data"]
            assert album["artist"] == {"ArtistId": 1, "Name": "AC/DC"}
            assert "ArtistId" not in album
            assert len(album["tracks"]) == 10
            assert album["tracks"][0]["genre"]["Name"] == "Rock"

            r = await client.call_tool("resource_list", {"resource": "Album.tracks", "sourceId": 1, "fields": ["Name"], "pageSize": 100})
            assert r.structured_content["meta"]["count"] == 10
            assert {t["Name"] for t in r.structured_content["data"]} == {t["Name"] for t in album["tracks"]}

            r = await client.call_tool("resource_list", {"resource": "Playlist.tracks", "sourceId": 18, "fields": ["TrackId"]})
            assert [t["TrackId"] for t in r.structured_content["data"]] == [597]

            r = await client.call_tool("resource_get", {"resource": "Employee", "filterByTk": 2, "appends": ["manager", "reports", "customers"]})
            e = r.structured_content["data"]
            assert e["manager"]["EmployeeId"] == 1
            assert {x["EmployeeId"] for x in e["reports"]} == {3, 4, 5}
            assert e["customers"] == []
    run(go())


def test_aggregates_with_measures_dimensions_and_having(server):
    async def go():
        async with connect(server, "auto") as client:
            r = await client.call_tool("resource_query", {
                "resource": "Invoice",
                "measures": [{"field": "Total", "aggregation": "sum", "alias": "revenue"}, {"field": "InvoiceId", "aggregation": "count", "alias": "n"}],
                "dimensions": [{"field": "BillingCountry", "alias": "country"}],
                "orders": [{"alias": "revenue", "order": "desc"}],
                "having": {"n": {"$gte": 10}},
                "limit": 5,
            })
            rows = r.structured_content["data"]
            assert [row["country"] for row in rows] == ["USA", "Canada", "France", "Brazil", "Germany"]
            assert rows[0]["n"] == 91
            assert abs(rows[0]["revenue"] - 523.06) < 0.01

            r = await client.call_tool("resource_query", {
                "resource": "Invoice",
                "measures": [{"field": "Total", "aggregation": "sum", "alias": "total"}],
                "dimensions": [{"field": "InvoiceDate", "format": "YYYY-MM", "alias": "month"}],
                "filter": {"InvoiceDate": {"$dateOn": "2024"}},
                "orders": [{"alias": "month"}],
            })
            months = [row["month"] for row in r.structured_content["data"]]
            assert months == [f"2024-{m:02d}" for m in range(1, 13)]

            r = await client.call_tool("resource_query", {"resource": "Track", "measures": [{"field": "TrackId", "aggregation": "count", "alias": "tracks"}], "dimensions": [{"field": "genre.Name", "alias": "genre"}], "orders": [{"alias": "tracks", "order": "desc"}], "limit": 1})
            assert r.structured_content["data"] == [{"genre": "Rock", "tracks": 1297}]
    run(go())


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_create_update_destroy_round_trip(server, mode):
    async def go():
        async with connect(server, mode) as client:
            r = await client.call_tool("resource_create", {"resource": "Artist", "values": {"Name": f"E2E {mode}"}})
            assert not r.is_error, r.content
            artist = r.structured_content["data"]
            artist_id = artist["ArtistId"]
            assert artist["Name"] == f"E2E {mode}"

            r = await client.call_tool("resource_create", {"resource": "Artist.albums", "sourceId": artist_id, "values": {"Title": "First"}})
            album = r.structured_content["data"]
            assert album["ArtistId"] == artist_id

            r = await client.call_tool("resource_update", {"resource": "Album", "filterByTk": album["AlbumId"], "values": {"Title": "Renamed"}})
            assert r.structured_content["data"][0]["Title"] == "Renamed"

            r = await client.call_tool("resource_destroy", {"confirm": True, "resource": "Artist", "filterByTk": artist_id})
            assert r.is_error, "an artist with albums cannot be deleted"
            assert "link" in r.content[0].text

            r = await client.call_tool("resource_destroy", {"confirm": True, "resource": "Album", "filter": {"ArtistId": artist_id}})
            assert r.structured_content == {"data": 1}
            r = await client.call_tool("resource_destroy", {"confirm": True, "resource": "Artist", "filterByTk": artist_id})
            assert r.structured_content == {"data": 1}
            r = await client.call_tool("resource_get", {"resource": "Artist", "filterByTk": artist_id})
            assert r.structured_content == {"data": None}
    run(go())


def test_tool_errors_are_precise_and_change_nothing(server):
    async def go():
        async with connect(server, "auto") as client:
            before = (await client.call_tool("resource_list", {"resource": "Genre", "pageSize": 1})).structured_content["meta"]["count"]
            cases = [
                ({"resource": "Genre"}, "resource_destroy", "filterByTk or a non-empty filter"),
                ({"resource": "Genre", "filter": {}}, "resource_destroy", "filterByTk or a non-empty filter"),
                ({"resource": "Genre", "filter": {"Nope": 1}}, "resource_destroy", "unknown field 'Nope'"),
                ({"resource": "Genre", "filter": {"Name": {"$frobnicate": 1}}}, "resource_list", "unknown operator '$frobnicate'"),
                ({"resource": "Genre", "values": {"GenreId": "abc"}}, "resource_create", "integer"),
                ({"resource": "Nope"}, "resource_list", "unknown collection 'Nope'"),
                ({"resource": "Genre", "values": {"Name": None}}, "resource_update", "filterByTk or a non-empty filter"),
                ({"resource": "Track", "values": {"Name": "x"}}, "resource_create", "required"),
            ]
            for arguments, tool, message in cases:
                r = await client.call_tool(tool, arguments)
                assert r.is_error, (tool, arguments)
                assert message in r.content[0].text, (tool, r.content[0].text)
            after = (await client.call_tool("resource_list", {"resource": "Genre", "pageSize": 1})).structured_content["meta"]["count"]
            assert before == after
    run(go())

"""The benchmark peer: the official `mcp` package's high-level server (formerly FastMCP), stateless JSON mode,
one worker, serving the same two tools over the same SQLite file Portico uses."""

import json
import sqlite3
import sys

import uvicorn
from mcp.server.mcpserver import MCPServer

DB = sys.argv[1]
PORT = int(sys.argv[2])
connection = sqlite3.connect(DB, check_same_thread=False)
connection.row_factory = sqlite3.Row
TABLES = {"Album": "AlbumId", "Track": "TrackId", "Artist": "ArtistId"}

server = MCPServer("fastmcp-peer")


@server.tool()
def resource_get(resource: str, filterByTk: int) -> dict:
    """Get one record by primary key."""
    key = TABLES[resource]
    row = connection.execute(f'SELECT * FROM "{resource}" WHERE "{key}" = ?', (filterByTk,)).fetchone()
    return {"data": dict(row) if row else None}


@server.tool()
def resource_list(resource: str, page: int = 1, pageSize: int = 20) -> dict:
    """List records, paginated."""
    key = TABLES[resource]
    rows = connection.execute(f'SELECT * FROM "{resource}" ORDER BY "{key}" LIMIT ? OFFSET ?', (pageSize, (page - 1) * pageSize)).fetchall()
    count = connection.execute(f'SELECT COUNT(*) FROM "{resource}"').fetchone()[0]
    return {"data": [dict(r) for r in rows], "meta": {"count": count, "page": page, "pageSize": pageSize, "totalPage": -(-count // pageSize)}}


app = server.streamable_http_app(stateless_http=True, json_response=True)
uvicorn.run(app, host="127.0.0.1", port=PORT, workers=1, log_level="warning")

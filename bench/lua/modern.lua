-- tools/call in the 2026-07-28 era (no session; the envelope in every request):
--   wrk -s modern.lua URL -- get|list KEY
-- KEY "-" sends no Authorization header (the peers check none).
dofile("bench/lua/tools_call.lua")

function init(args)
  tool, key = args[1], args[2] or "-"
  name = tool == "get" and "resource_get" or "resource_list"
  headers = {
    ["Content-Type"] = "application/json", ["Accept"] = "application/json, text/event-stream",
    ["MCP-Protocol-Version"] = "2026-07-28", ["Mcp-Method"] = "tools/call", ["Mcp-Name"] = name,
  }
  if key ~= "-" then headers["Authorization"] = "Bearer " .. key end
  meta = '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"1"}}'
end

function request()
  counter = counter + 1
  local arguments
  if tool == "get" then
    arguments = '{"resource":"Album","filterByTk":' .. (counter % 347 + 1) .. '}'
  else
    arguments = '{"resource":"Track","pageSize":20,"page":' .. (counter % 150 + 1) .. '}'
  end
  local body = '{"jsonrpc":"2.0","id":' .. counter .. ',"method":"tools/call","params":{"name":"' .. name .. '","arguments":' .. arguments .. ',' .. meta .. '}}'
  return wrk.format("POST", nil, headers, body)
end

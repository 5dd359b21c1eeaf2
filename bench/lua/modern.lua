-- tools/call in the 2026-07-28 era (no session; the envelope in every request):
--   wrk -s modern.lua URL -- get|list KEY
-- KEY "-" sends no Authorization header (the peers check none).
local threads = {}
counter, errors = 0, 0

function setup(thread)
  table.insert(threads, thread)
end

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

function response(status, hdrs, body)
  if status ~= 200 or string.find(body, '"error":{', 1, true) or string.find(body, '"isError":true', 1, true) then
    errors = errors + 1
  end
end

function done(summary, latency, requests)
  local e = 0
  for _, t in ipairs(threads) do e = e + t:get("errors") end
  io.write(string.format("RESULT requests=%d duration_us=%d jsonrpc_errors=%d p50_us=%d p99_us=%d\n",
    summary.requests, summary.duration, e, latency:percentile(50), latency:percentile(99)))
end

-- (a) tools/call in one long session: `wrk -s call.lua URL -- get|list KEY SESSION`.
local threads = {}
counter, errors = 0, 0

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  tool, key, session = args[1], args[2], args[3] or ""
  headers = {["Content-Type"] = "application/json", ["Accept"] = "application/json, text/event-stream"}
  if key ~= "" and key ~= "-" then headers["Authorization"] = "Bearer " .. key end
  if session ~= "" and session ~= "-" then
    headers["Mcp-Session-Id"] = session
    headers["MCP-Protocol-Version"] = "2025-11-25"
  end
end

function request()
  counter = counter + 1
  local body
  if tool == "get" then
    body = '{"jsonrpc":"2.0","id":' .. counter .. ',"method":"tools/call","params":{"name":"resource_get","arguments":{"resource":"Album","filterByTk":' .. (counter % 347 + 1) .. '}}}'
  else
    body = '{"jsonrpc":"2.0","id":' .. counter .. ',"method":"tools/call","params":{"name":"resource_list","arguments":{"resource":"Track","pageSize":20,"page":' .. (counter % 150 + 1) .. '}}}'
  end
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

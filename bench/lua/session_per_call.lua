-- (b) a whole session per call: initialize, notifications/initialized, tools/call, DELETE.
-- Run with one connection per thread (-t N -c N) so each thread's state is one connection's.
local threads = {}
step, session, counter, errors, calls = 0, nil, 0, 0, 0

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  key = args[1] or ""
  base = {["Content-Type"] = "application/json", ["Accept"] = "application/json, text/event-stream"}
  if key ~= "" and key ~= "-" then base["Authorization"] = "Bearer " .. key end
end

local function with_session(version)
  local h = {}
  for k, v in pairs(base) do h[k] = v end
  if session then h["Mcp-Session-Id"] = session end
  if version then h["MCP-Protocol-Version"] = version end
  return h
end

function request()
  counter = counter + 1
  if step == 0 then
    session = nil
    return wrk.format("POST", nil, base, '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"wrk","version":"1"}}}')
  elseif step == 1 then
    return wrk.format("POST", nil, with_session("2025-11-25"), '{"jsonrpc":"2.0","method":"notifications/initialized"}')
  elseif step == 2 then
    return wrk.format("POST", nil, with_session("2025-11-25"), '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"resource_get","arguments":{"resource":"Album","filterByTk":' .. (counter % 347 + 1) .. '}}}')
  else
    return wrk.format("DELETE", nil, with_session("2025-11-25"), nil)
  end
end

function response(status, hdrs, body)
  if step == 0 then
    session = hdrs["Mcp-Session-Id"] or hdrs["mcp-session-id"]
    if status ~= 200 then errors = errors + 1 end
  elseif step == 1 then
    if status ~= 202 then errors = errors + 1 end
  elseif step == 2 then
    if status ~= 200 or string.find(body, '"error":{', 1, true) or string.find(body, '"isError":true', 1, true) then errors = errors + 1 end
    calls = calls + 1
  end
  step = (step + 1) % 4
end

function done(summary, latency, requests)
  local e, c = 0, 0
  for _, t in ipairs(threads) do
    e = e + t:get("errors")
    c = c + t:get("calls")
  end
  io.write(string.format("RESULT requests=%d duration_us=%d jsonrpc_errors=%d calls=%d p50_us=%d p99_us=%d\n",
    summary.requests, summary.duration, e, c, latency:percentile(50), latency:percentile(99)))
end

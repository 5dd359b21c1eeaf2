-- Mixed load for `wrk`: each request uses one of many MCP sessions in turn; 80% reads
-- (resource_get, resource_list), 20% writes (resource_create). Usage:
--   wrk -s mixed.lua URL -- KEY SESSIONS_FILE WRITE_PERCENT
local threads = {}

function setup(thread)
  thread:set("id", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  key, sessions_file, write_percent = args[1], args[2], tonumber(args[3] or "20")
  sessions = {}
  for line in io.lines(sessions_file) do
    if line ~= "" then table.insert(sessions, line) end
  end
  counter, errors, writes, reads, failed_bodies = 0, 0, 0, 0, 0
  last_error = ""
  pending = {}
end

function request()
  counter = counter + 1
  local session = sessions[(counter + id * 7919) % #sessions + 1]
  local headers = {
    ["Content-Type"] = "application/json", ["Accept"] = "application/json, text/event-stream",
    ["Authorization"] = "Bearer " .. key, ["Mcp-Session-Id"] = session, ["MCP-Protocol-Version"] = "2025-11-25",
  }
  local body
  local roll = counter % 100
  if roll < write_percent then
    body = '{"jsonrpc":"2.0","id":' .. counter .. ',"method":"tools/call","params":{"name":"resource_create","arguments":{"resource":"Genre","values":{"Name":"load-' .. id .. '-' .. counter .. '"}}}}'
  elseif roll % 2 == 0 then
    body = '{"jsonrpc":"2.0","id":' .. counter .. ',"method":"tools/call","params":{"name":"resource_get","arguments":{"resource":"Album","filterByTk":' .. (counter % 347 + 1) .. ',"appends":["artist"]}}}'
  else
    body = '{"jsonrpc":"2.0","id":' .. counter .. ',"method":"tools/call","params":{"name":"resource_list","arguments":{"resource":"Track","pageSize":20,"page":' .. (counter % 150 + 1) .. ',"filter":{"Milliseconds":{"$gt":1000}}}}}'
  end
  return wrk.format("POST", nil, headers, body)
end

function response(status, hdrs, body)
  if status ~= 200 or string.find(body, '"error":{', 1, true) or string.find(body, '"isError":true', 1, true) then
    errors = errors + 1
    last_error = status .. " " .. string.sub(body, 1, 300)
  elseif string.find(body, '"GenreId"', 1, true) and string.find(body, 'load-', 1, true) then
    writes = writes + 1
  else
    reads = reads + 1
  end
end

function done(summary, latency, requests)
  local e, w, r, last = 0, 0, 0, ""
  for _, t in ipairs(threads) do
    e = e + t:get("errors")
    w = w + t:get("writes")
    r = r + t:get("reads")
    if t:get("last_error") ~= "" then last = t:get("last_error") end
  end
  io.write(string.format("RESULT requests=%d duration_us=%d errors=%d socket_errors=%d writes=%d reads=%d p50_us=%d p99_us=%d max_us=%d\n",
    summary.requests, summary.duration, e, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    w, r, latency:percentile(50), latency:percentile(99), latency.max))
  if last ~= "" then io.write("LAST_ERROR " .. last .. "\n") end
end

-- What call.lua and modern.lua share: one tools/call per request, a call counted as an error on
-- a non-200 status, a JSON-RPC error or a tool error, and a RESULT line at the end.
-- Loaded with dofile from the repository root (where make bench runs wrk).
local threads = {}
counter, errors = 0, 0

function setup(thread)
  table.insert(threads, thread)
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

-- (a) tools/call in one long session: `wrk -s call.lua URL -- get|list KEY SESSION`.
dofile("bench/lua/tools_call.lua")

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

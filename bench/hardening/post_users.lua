-- POST /users with a fresh id per request, for bench/hardening/compare.sh (wrk -s).
counter = 0
request = function()
  counter = counter + 1
  local body = string.format('{"id":%d,"name":"user %d","age":%d}', counter, counter, counter % 90)
  return wrk.format("POST", "/users", {["Content-Type"] = "application/json"}, body)
end
done = function(summary, latency, requests)
  io.write(string.format("non2xx=%d\n", summary.errors.status))
end

-- bench/server_get.lua: GET of the URL given to wrk (driven by bench/server.sh);
-- prints the same BENCH line as bench/server_post.lua.

function done(summary, latency, requests)
	local s = summary.duration / 1e6
	local e = summary.errors
	io.write(string.format(
		"BENCH requests=%d seconds=%.3f rps=%.1f p50_ms=%.3f p90_ms=%.3f p99_ms=%.3f " ..
		"max_ms=%.3f non2xx=%d socket_errors=%d\n",
		summary.requests, s, summary.requests / s, latency:percentile(50) / 1000,
		latency:percentile(90) / 1000, latency:percentile(99) / 1000, latency.max / 1000,
		e.status, e.connect + e.read + e.write + e.timeout))
end

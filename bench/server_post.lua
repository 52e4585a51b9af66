-- bench/server_post.lua: POST /api/v1/runs under wrk (driven by bench/server.sh).
--
-- Each request creates one run: a job asking for 100m CPU and 64Mi. bench/server.sh
-- first starts a "blocker" run that holds every CPU of the machine, so each of these
-- runs is validated, planned and stored, then waits as Pending: no process is spawned.
--
--   wrk -t2 -c16 -d10s -s bench/server_post.lua URL                  as fast as it goes
--   wrk -t2 -c16 -d10s -s bench/server_post.lua URL -- RATE THREADS  RATE requests/s in all
--
-- Fixed rate: wrk calls delay() before every request of a connection. Each thread keeps
-- a schedule with one slot every THREADS/RATE seconds (clock_gettime through LuaJIT's
-- ffi); a connection that is free takes the next slot and waits until it comes. A slot
-- already past is taken at once, and the schedule is not caught up later, so the rate
-- achieved is below RATE when every connection of a thread is busy (the script reports
-- the rate achieved). Latency is measured by wrk from the moment the request is written,
-- so it is the server's answer time, not the time since the slot.

wrk.method = "POST"
wrk.body = '{"function": {"name": "b", "command": ["true"]}, ' ..
	'"resources": {"cpu": "100m", "mem": "64Mi"}}'
wrk.headers["Content-Type"] = "application/json"

local ffi = require("ffi")
ffi.cdef [[
typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
int clock_gettime(int clk, bench_timespec *ts);
]]
local ts = ffi.new("bench_timespec")
local CLOCK_MONOTONIC = 1

local function now_ms()
	ffi.C.clock_gettime(CLOCK_MONOTONIC, ts)
	return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
end

local interval_ms -- between two requests of this thread
local next_ms     -- the next free slot of this thread

function init(args)
	local rate, threads = tonumber(args[1]), tonumber(args[2] or "1")
	if rate and rate > 0 then
		interval_ms = 1000 * threads / rate
	else
		delay = nil -- wrk checks after init() whether delay() exists
	end
end

function delay()
	local now = now_ms()
	local slot = next_ms or now
	if slot < now then
		slot = now
	end
	next_ms = slot + interval_ms
	return math.floor(slot - now + 0.5)
end

-- one line for bench/server.sh: rate, latency percentiles (ms), error counts
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

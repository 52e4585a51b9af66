#!/usr/bin/env bash
# bench/memory.sh - memory of `berth serve`: idle, and with 100,000 runs in its store.
#
#   bench/memory.sh            (OUT=FILE: where the Markdown goes, default build/bench/memory.md)
#
# Builds build/berth (make -j2, -O2), then starts one server
# (`berth serve --listen 127.0.0.1:0 --insecure-local`) on a fresh $BERTH_HOME under a
# temporary dir, with BERTH_CGROUP_ROOT in that dir (no cgroup is made), and:
#   1. idle: VmRSS and VmHWM (/proc/PID/status) once it has answered /healthz;
#   2. a blocker run that takes every CPU (cpu: nproc; `sleep 900.<unique>`, 300 s more
#      than BENCH_FILL_TIMEOUT, so that it outlives the fill) and 20 Pending runs (a full
#      page of 20; the first is the probe whose record GET /api/v1/runs/ID reads);
#      GET /api/v1/runs/ID and GET /api/v1/runs?limit=20 under wrk (5 s each,
#      bench/server_get.lua); the server's memory then ("before");
#   3. fills the store with BENCH_MEM_RUNS (100,000) more Pending runs through
#      POST /api/v1/runs, with wrk (-t2 -c8) and a script made here from
#      bench/server_post.lua (the same job: 100m CPU, 64Mi) in which each thread stops
#      after its share of the runs; this script watches berth_queue_length on /metrics,
#      samples VmRSS every second, interrupts wrk when the queue stops growing, and posts
#      with curl the few runs that wrk lost on reconnects, so that exactly that many are
#      created;
#   4. after two reconciles (12 s): the server's memory ("after"), and the store's size
#      (berth.db + berth.db-wal); per run: (after - before) / runs;
#   5. the same GETs again, with the runs stored, and the memory after them.
# A run must not start: the blocker holds every CPU, so every created run is Pending (it is
# checked). Cleanup (at the end, and on any exit): the server (SIGTERM), then the blocker's
# supervisor (SIGKILL: stopping it would start the queue), then its sleep, each found by its
# exact command line (`berth __supervise ID`, `sleep 900.<unique>`); the temporary dir is
# removed.
# Knobs (environment): BENCH_MEM_RUNS (100000), BENCH_GET_DURATION (5s),
# BENCH_FILL_CONNECTIONS (8), BENCH_FILL_TIMEOUT (600 s; the blocker sleeps 300 s longer), OUT.
# Exit status: 0, or 1 when a step failed (wrk errors, a run not Pending, the fill too slow).
set -eu -o pipefail
cd "$(dirname "$0")/.."

NRUNS=${BENCH_MEM_RUNS:-100000}
GET_DURATION=${BENCH_GET_DURATION:-5s}
FILL_CONNS=${BENCH_FILL_CONNECTIONS:-8}
FILL_TIMEOUT=${BENCH_FILL_TIMEOUT:-600}
OUT=${OUT:-build/bench/memory.md}

for c in wrk curl make nproc; do
	command -v "$c" >/dev/null || { echo "memory.sh: $c is missing (scripts/deps.sh)" >&2; exit 1; }
done
make -j2 >/dev/null
berth=$PWD/build/berth
ncpu=$(nproc)
cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/berth-memory.XXXXXX")
export BERTH_CGROUP_ROOT=$tmp/no-cgroup
unset BERTH_CONFIG BERTH_TOKEN BERTH_SERVER 2>/dev/null || true

spid=          # the server
wrk_pid=       # the fill's wrk, while it runs
blocker=       # the blocker's run id
blocker_arg=   # its sleep's unique argument
rows=()        # "metric|value|how"

die() {
	echo "memory.sh: $*" >&2
	exit 1
}

# pids_of CMDLINE: the processes whose command line is exactly CMDLINE (words joined by
# spaces), read from /proc/PID/cmdline
pids_of() {
	local f p c
	for f in /proc/[0-9]*/cmdline; do
		p=${f#/proc/}
		p=${p%/cmdline}
		c=$(tr '\0' ' ' <"$f" 2>/dev/null) || continue
		[ "$c" = "$1 " ] && echo "$p"
	done
	return 0
}

cleanup() {
	local p
	[ -z "$wrk_pid" ] || kill -INT "$wrk_pid" 2>/dev/null || true
	if [ -n "$spid" ]; then
		kill -TERM "$spid" 2>/dev/null || true
		wait "$spid" 2>/dev/null || true
	fi
	if [ -n "$blocker" ]; then
		for p in $(pids_of "berth __supervise $blocker"); do kill -KILL "$p" 2>/dev/null || true; done
		for p in $(pids_of "sleep $blocker_arg"); do kill -KILL "$p" 2>/dev/null || true; done
		sleep 0.2
		if [ -n "$(pids_of "berth __supervise $blocker")$(pids_of "sleep $blocker_arg")" ]; then
			echo "memory.sh: processes of blocker $blocker are still running" >&2
		fi
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# mem: sets rss, hwm, anon, file (kB) of the server
mem() {
	local f=/proc/$spid/status
	rss=$(awk '$1 == "VmRSS:" {print $2}' "$f")
	hwm=$(awk '$1 == "VmHWM:" {print $2}' "$f")
	anon=$(awk '$1 == "RssAnon:" {print $2}' "$f")
	file=$(awk '$1 == "RssFile:" {print $2}' "$f")
}
cpu_ticks() { awk '{print $14 + $15}' "/proc/$spid/stat"; } # utime + stime
mib() { awk -v k="$1" 'BEGIN {printf "%.1f MiB", k / 1024}'; }

home=$tmp/home
mkdir -p "$home"
BERTH_HOME=$home "$berth" serve --listen 127.0.0.1:0 --insecure-local >"$tmp/server.log" 2>&1 &
spid=$!
port=
for _ in $(seq 100); do
	port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$tmp/server.log")
	[ -n "$port" ] && break
	kill -0 "$spid" 2>/dev/null || die "the server did not start: $(cat "$tmp/server.log")"
	sleep 0.05
done
[ -n "$port" ] || die "the server did not say its port: $(cat "$tmp/server.log")"
url=http://127.0.0.1:$port

post() { # BODY: prints the id of the run created (201) or fails
	local out
	out=$(curl -s -o "$tmp/post.json" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
		--data-binary "$1" "$url/api/v1/runs")
	[ "$out" = 201 ] || die "POST /api/v1/runs answered $out: $(cat "$tmp/post.json")"
	sed -n 's/^ *"id": "\([^"]*\)".*/\1/p' "$tmp/post.json" | head -n1
}
state_of() { curl -s "$url/api/v1/runs/$1" | sed -n 's/^ *"state": "\([^"]*\)".*/\1/p'; }
metric() { curl -s "$url/metrics" | awk -v n="$1" '$1 == n {print $2}'; }
db_bytes() { # the store's files: berth.db + berth.db-wal (the -shm index is left out)
	local t=0 f
	for f in "$home/berth.db" "$home/berth.db-wal"; do
		[ -f "$f" ] && t=$((t + $(stat -c %s "$f")))
	done
	echo "$t"
}

# run_get LABEL PATH: wrk on a GET; sets rps, p50, p99
run_get() {
	local out=$tmp/$1.out line
	wrk -t2 -c16 -d"$GET_DURATION" -s bench/server_get.lua "$url$2" >"$out" 2>&1 ||
		die "wrk failed ($1): $(cat "$out")"
	line=$(grep '^BENCH ' "$out") || die "no BENCH line from wrk ($1): $(cat "$out")"
	field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$line"; }
	rps=$(printf %.0f "$(field rps)") p50=$(field p50_ms) p99=$(field p99_ms)
	[ "$(field non2xx)" = 0 ] && [ "$(field socket_errors)" = 0 ] && ! grep -q 'Non-2xx' "$out" ||
		die "wrk had errors ($1): $line"
	echo "-- $1: $line"
}

echo "$("$berth" --version 2>/dev/null | head -n1); $ncpu CPUs: $cpu_model; wrk shares them"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- 1. idle -------------------------------------------------------------------------------
for _ in $(seq 100); do
	curl -sf "$url/healthz" >/dev/null && break
	sleep 0.05
done
curl -sf "$url/healthz" | grep -q '"status": "ok"' || die "/healthz is not ok"
mem
idle_rss=$rss idle_hwm=$hwm
echo "-- idle: VmRSS $rss kB, VmHWM $hwm kB"
rows+=("idle server, after /healthz: VmRSS / VmHWM|$(mib "$idle_rss") / $(mib "$idle_hwm")|berth serve --listen 127.0.0.1:0 --insecure-local; curl URL/healthz; /proc/PID/status")

# ---- 2. the blocker, a probe, GETs on a nearly empty store ------------------------------------
# the blocker must outlive the fill and the GETs, or the queue would start: its sleep
# lasts 600 s, or longer when BENCH_FILL_TIMEOUT asks for more
blocker_arg=$((FILL_TIMEOUT + 300 > 600 ? FILL_TIMEOUT + 300 : 600)).$$$RANDOM
blocker=$(post "{\"function\": {\"name\": \"blocker\", \"command\": [\"sleep\", \"$blocker_arg\"]}, \"resources\": {\"cpu\": \"$ncpu\"}}")
[ -n "$blocker" ] || die "no id for the blocker"
st=
for _ in $(seq 100); do
	st=$(state_of "$blocker")
	[ "$st" = Running ] && break
	sleep 0.05
done
[ "$st" = Running ] || die "the blocker $blocker is $st, not Running"
post_body='{"function": {"name": "b", "command": ["true"]}, "resources": {"cpu": "100m", "mem": "64Mi"}}'
probe=$(post "$post_body")
[ "$(state_of "$probe")" = Pending ] || die "run $probe is not Pending: the blocker does not hold the machine"
# 19 more, so that a page of 20 is full before the fill as after it
for _ in $(seq 19); do post "$post_body" >/dev/null; done
run_get get-run-before "/api/v1/runs/$probe"
g1_before="$rps /s, p50 $p50 ms, p99 $p99 ms"
run_get list-before "/api/v1/runs?limit=20"
g2_before="$rps /s, p50 $p50 ms, p99 $p99 ms"
mem
before_rss=$rss before_hwm=$hwm before_anon=$anon before_file=$file
q0=$(metric berth_queue_length)
db0=$(db_bytes)
echo "-- before: VmRSS $rss kB, VmHWM $hwm kB; queue $q0; store $db0 bytes"

# ---- 3. the fill -----------------------------------------------------------------------------
cat >"$tmp/fill.lua" <<'EOF'
-- POST /api/v1/runs as bench/server_post.lua does (its body and headers), each thread
-- its share of args[1] runs in all (args[2] threads), then it stops. A request made by
-- request() can be lost when wrk reconnects; bench/memory.sh posts what is missing.
dofile("bench/server_post.lua")
delay = nil
local nthreads = 0
function setup(thread)
	thread:set("idx", nthreads)
	nthreads = nthreads + 1
end
local quota, sent = 0, 0
local post_req, idle_req
function init(args)
	local total, threads = tonumber(args[1]), tonumber(args[2])
	quota = math.floor(total / threads) + ((idx < total % threads) and 1 or 0)
	post_req = wrk.format("POST", nil, nil, wrk.body)
	idle_req = wrk.format("GET", "/healthz", {}, "")
end
function request()
	if sent < quota then
		sent = sent + 1
		return post_req
	end
	return idle_req
end
-- a thread that has sent its share stops (wrk itself runs until interrupted)
function response(status, headers, body)
	if sent >= quota then
		wrk.thread:stop()
	end
end
EOF
fill_cmd="wrk -t2 -c$FILL_CONNS -d${FILL_TIMEOUT}s -s fill.lua URL/api/v1/runs -- $NRUNS 2"
target=$((q0 + NRUNS))
t0=$(date +%s%N)
wrk -t2 -c"$FILL_CONNS" -d"${FILL_TIMEOUT}s" -s "$tmp/fill.lua" "$url/api/v1/runs" -- "$NRUNS" 2 \
	>"$tmp/fill.out" 2>&1 &
wrk_pid=$!
peak_rss=0
q=$q0
last=$q0
still=0
while :; do
	sleep 1
	kill -0 "$wrk_pid" 2>/dev/null || die "wrk ended before the queue was full (queue $q): $(cat "$tmp/fill.out")"
	mem
	[ "$rss" -gt "$peak_rss" ] && peak_rss=$rss
	q=$(metric berth_queue_length)
	[ -n "$q" ] || q=$last
	el=$((($(date +%s%N) - t0) / 1000000000))
	[ $((el % 10)) != 0 ] || echo "   ${el}s: queue $q, VmRSS $rss kB"
	[ "$q" -ge "$target" ] && break
	# both threads done (a request lost on a reconnect leaves the queue short of the target)
	if [ "$q" = "$last" ] && [ "$q" -gt "$q0" ]; then still=$((still + 1)); else still=0; fi
	[ "$still" -lt 5 ] || break
	last=$q
	[ "$el" -lt "$FILL_TIMEOUT" ] || die "the queue holds only $q of $target runs after ${el}s"
	[ $((el % 30)) != 0 ] || [ "$(state_of "$blocker")" = Running ] || die "the blocker is not Running any more"
done
kill -INT "$wrk_pid" 2>/dev/null || true
wait "$wrk_pid" 2>/dev/null || true
wrk_pid=
q=$(metric berth_queue_length)
missing=$((target - q))
[ "$missing" -le 100 ] || die "the queue holds only $q of $target runs: $(cat "$tmp/fill.out")"
for ((i = 0; i < missing; i++)); do post "$post_body" >/dev/null; done
t1=$(date +%s%N)
q=$(metric berth_queue_length)
echo "-- wrk: $(grep '^BENCH ' "$tmp/fill.out"); $missing posted with curl after it"
fill_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", (b - a) / 1e9}')
created=$((q - q0))
echo "-- filled: $created runs in ${fill_s}s ($(awk -v n="$created" -v s="$fill_s" 'BEGIN {printf "%.0f", n / s}')/s)"
grep -q 'Non-2xx' "$tmp/fill.out" && die "the fill had non-2xx answers: $(cat "$tmp/fill.out")"
[ "$created" = "$NRUNS" ] || die "$created runs were queued, not $NRUNS"
[ "$(state_of "$probe")" = Pending ] || die "run $probe is not Pending any more"
[ "$(state_of "$blocker")" = Running ] || die "the blocker stopped during the fill"

# ---- 4. after ----------------------------------------------------------------------------------
# two reconciles (every 5 s): the server's CPU then says what a reconcile costs with the
# queue full
c0=$(cpu_ticks)
for _ in $(seq 12); do
	sleep 1
	mem
	[ "$rss" -gt "$peak_rss" ] && peak_rss=$rss
done
c1=$(cpu_ticks)
idle_cpu=$(awk -v t="$((c1 - c0))" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.0f", 1000 * t / hz / 12}')
for _ in 1 2 3 4 5 6; do
	mem
	[ "$rss" -gt "$peak_rss" ] && peak_rss=$rss
	sleep 0.5
done
after_rss=$rss after_hwm=$hwm after_anon=$anon after_file=$file
db1=$(db_bytes)
db_main=$(stat -c %s "$home/berth.db")
db_wal=$( [ -f "$home/berth.db-wal" ] && stat -c %s "$home/berth.db-wal" || echo 0)
echo "-- after: VmRSS $after_rss kB (anon $after_anon, file $after_file), VmHWM $after_hwm kB (peak VmRSS seen $peak_rss kB); server CPU while idle: $idle_cpu ms/s; store $db1 bytes (db $db_main, wal $db_wal)"
per_run=$(awk -v a="$after_rss" -v b="$before_rss" -v n="$created" 'BEGIN {printf "%.0f", (a - b) * 1024 / n}')
per_run_hwm=$(awk -v a="$after_hwm" -v b="$before_hwm" -v n="$created" 'BEGIN {printf "%.0f", (a - b) * 1024 / n}')
db_per_run=$(awk -v a="$db1" -v b="$db0" -v n="$created" 'BEGIN {printf "%.0f", (a - b) / n}')

# ---- 5. GETs with the runs stored ------------------------------------------------------------------
run_get get-run-after "/api/v1/runs/$probe"
g1_after="$rps /s, p50 $p50 ms, p99 $p99 ms"
run_get list-after "/api/v1/runs?limit=20"
g2_after="$rps /s, p50 $p50 ms, p99 $p99 ms"
mem
end_rss=$rss end_hwm=$hwm
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

rows+=("with the blocker and 20 Pending runs, after 5 s of each GET (\"before\"): VmRSS / VmHWM (RssAnon + RssFile)|$(mib "$before_rss") / $(mib "$before_hwm") ($(mib "$before_anon") + $(mib "$before_file"))|(same server)")
rows+=("fill: $created Pending runs created|${fill_s} s, $(awk -v n="$created" -v s="$fill_s" 'BEGIN {printf "%.0f", n / s}') /s|$fill_cmd (fill.lua: bench/server_post.lua's job, a quota per thread)")
rows+=("with $((q)) Pending runs, 12 s after the fill (\"after\"): VmRSS / VmHWM (RssAnon + RssFile)|$(mib "$after_rss") / $(mib "$after_hwm") ($(mib "$after_anon") + $(mib "$after_file"))|(same server)")
rows+=("server CPU in those 12 s, idle but for its reconcile every 5 s|$idle_cpu ms per s|/proc/PID/stat utime + stime")
rows+=("highest VmRSS sampled (every 1 s during the fill, and after it)|$(mib "$peak_rss")|/proc/PID/status")
rows+=("**server memory per queued run**: (after - before) / $created, VmRSS (VmHWM)|**$per_run bytes** ($per_run_hwm bytes)|")
rows+=("store: berth.db + berth.db-wal, before / after|$db0 / $db1 bytes (db $db_main, wal $db_wal)|stat -c %s")
rows+=("**store per run**: (after - before) / $created|**$db_per_run bytes**|")
rows+=("GET /api/v1/runs/ID, $((q0 + 1)) runs stored|$g1_before|wrk -t2 -c16 -d$GET_DURATION -s bench/server_get.lua URL/api/v1/runs/ID")
rows+=("GET /api/v1/runs/ID, $((q + 1)) runs stored|$g1_after|(same)")
rows+=("GET /api/v1/runs?limit=20, $((q0 + 1)) runs stored|$g2_before|wrk -t2 -c16 -d$GET_DURATION -s bench/server_get.lua 'URL/api/v1/runs?limit=20'")
rows+=("GET /api/v1/runs?limit=20, $((q + 1)) runs stored|$g2_after|(same)")
rows+=("after those GETs: VmRSS / VmHWM (RssAnon + RssFile)|$(mib "$end_rss") / $(mib "$end_hwm") ($(mib "$anon") + $(mib "$file"))|")

{
	echo "## Memory"
	echo
	echo "- Machine: $ncpu CPUs ($cpu_model), $(uname -sr); $(date -u '+%Y-%m-%d %H:%M UTC'); wrk and curl share the CPUs with the server"
	echo "- Build: \`make -j2\` (-O2), $("$berth" --version 2>/dev/null | head -n1)"
	echo "- Command: \`bench/memory.sh\`; one server: \`BERTH_HOME=TMP/home BERTH_CGROUP_ROOT=TMP/no-cgroup berth serve --listen 127.0.0.1:0 --insecure-local\`"
	echo "- Every created run waits as Pending behind a blocker run (\`sleep ${blocker_arg%%.*}.<unique>\`, cpu: $ncpu): no process is started"
	echo
	echo "| metric | value | command |"
	echo "|---|---|---|"
	for r in "${rows[@]}"; do
		IFS='|' read -r m v c <<<"$r"
		case $c in
		"" | "("*) echo "| $m | $v | $c |" ;;
		*) echo "| $m | $v | \`$c\` |" ;;
		esac
	done
} >"$tmp/table.md"
mkdir -p "$(dirname "$OUT")"
cp "$tmp/table.md" "$OUT"
echo
cat "$OUT"
echo
echo "(written to $OUT)"

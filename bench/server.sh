#!/usr/bin/env bash
# bench/server.sh - throughput and latency of `berth serve` under wrk, on loopback.
#
#   bench/server.sh            (make bench runs it)
#
# Builds build/berth (make -j2, -O2), then for each part starts a fresh server
# (`berth serve --listen 127.0.0.1:0 --insecure-local`) on a fresh $BERTH_HOME under a
# temporary dir:
#   1. creates as fast as they go: wrk -t2 -c16 -d10s, POST /api/v1/runs (server_post.lua)
#   2. creates at a fixed rate of 1,000/s in all (server_post.lua -- 1000 2), then at
#      50/s (below what this server sustains on 2 cores), each on a new server
#   3. GET /api/v1/runs/ID and GET /api/v1/runs?limit=20 (server_get.lua), on the store
#      that part 1 filled
#   4. creates with 0 and with 100 log followers open, side by side (a fresh server for
#      each): at 50/s, then as fast as they go; the followers (curl, ?follow=true) follow
#      the blocker, whose log stays empty, as a team's terminals follow quiet runs
#   5. creates at a fixed rate on a store of 100,000 runs, with 0 and 20 open run pages
#   6. creates as fast as they go with SQLite NORMAL (BERTH_STORE_SYNC=normal) and
#      durable (the default), side by side, each on a new server, BENCH_SYNC_ROUNDS (3)
#      rounds in turn
#   7. the stores side by side: creates as fast as they go (as part 1) on SQLite, on
#      PostgreSQL with one server, and with two servers (replicas) on one PostgreSQL, wrk
#      sending half its connections to each (their rates added, the higher p99 kept);
#      the PostgreSQL is the benchmark's own (tests/pg_lib.sh: initdb in $tmp, a unix
#      socket, stopped at the end), skipped with the reason when it cannot run
# A create must not start a process: each server first gets a "blocker" run that asks
# for every CPU (nproc) and sleeps, so every benchmarked run waits as Pending. At the
# end the server, the blocker's supervisor and its sleep are killed (never stopped:
# stopping the blocker would start the queued runs) and the temporary dir is removed.
#
# Knobs (environment): BENCH_DURATION (10s), BENCH_RATES ("1000 50": one part 2 each),
# BENCH_THREADS (2), BENCH_CONNECTIONS (16), BENCH_FOLLOWERS (100: part 4),
# BENCH_FOLLOW_RATE (50: part 4's fixed rate), BENCH_PARTS ("1 2 4 5 6 7": part 3 goes
# with 1), BENCH_STORED (100000: part 5's runs stored), BENCH_PAGES (20: part 5's open
# run pages), BENCH_SYNC_ROUNDS (3: part 6's rounds), BENCH_SERVE_ARGS (flags of every
# berth serve), BENCH_PERF=FILE: `perf record --call-graph
# dwarf` of the server during part 1, written to FILE (`perf report -i FILE`).
# Exit status: 0, or 1 when a wrk run had errors (non-2xx answers, socket errors) or a
# setup step failed.
set -eu -o pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

DURATION=${BENCH_DURATION:-10s}
RATES=${BENCH_RATES:-1000 50}
THREADS=${BENCH_THREADS:-2}
CONNS=${BENCH_CONNECTIONS:-16}
PERF_OUT=${BENCH_PERF:-}
FOLLOWERS=${BENCH_FOLLOWERS:-100}
FOLLOW_RATE=${BENCH_FOLLOW_RATE:-50}
PARTS=" ${BENCH_PARTS:-1 2 4 5 6 7} "
STORED=${BENCH_STORED:-100000}
PAGES=${BENCH_PAGES:-20}
part() { [[ $PARTS == *" $1 "* ]]; }

for c in wrk curl make nproc; do
	command -v "$c" >/dev/null || { echo "server.sh: $c is missing (scripts/deps.sh)" >&2; exit 1; }
done
make -j2 >/dev/null
berth=$PWD/build/berth
ncpu=$(nproc)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/berth-bench.XXXXXX")
# no cgroup is made for the blocker (rlimits instead), so nothing is left under /sys/fs/cgroup
export BERTH_CGROUP_ROOT=$tmp/no-cgroup
unset BERTH_CONFIG BERTH_TOKEN BERTH_SERVER 2>/dev/null || true

server_pids=()   # servers started
follower_pids=() # part 4's curls
blockers=()      # "RUN_ID SLEEP_ARG" of each blocker
failures=0
rows=()          # "metric|value|command" of the table

die() {
	echo "server.sh: $*" >&2
	exit 1
}

# Kills what this script started: servers first (so that nothing schedules the
# queue again), then each blocker's supervisor, then its sleep; removes $tmp.
cleanup() {
	local pid b id arg
	for pid in "${follower_pids[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in "${server_pids[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
	done
	for pid in "${server_pids[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	for b in "${blockers[@]}"; do
		read -r id arg <<<"$b"
		pkill -KILL -f "^berth __supervise $id\$" 2>/dev/null || true
		pkill -KILL -f "^sleep $arg\$" 2>/dev/null || true
	done
	sleep 0.2
	for b in "${blockers[@]}"; do
		read -r id arg <<<"$b"
		if pgrep -f "^(berth __supervise $id|sleep $arg)\$" >/dev/null; then
			echo "server.sh: processes of blocker $id are still running" >&2
		fi
	done
	[ -z "${PG_DIR:-}" ] || pg_stop
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start_server NAME [HOME]: a fresh server on $tmp/NAME (or on $tmp/HOME, which another
# server may have: replicas); sets $port, $url, $spid
start_server() {
	local home=$tmp/${2:-$1} log=$tmp/$1.log
	mkdir -p "$home"
	BERTH_HOME=$home "$berth" serve --listen 127.0.0.1:0 --insecure-local ${BENCH_SERVE_ARGS:-} >"$log" 2>&1 &
	spid=$!
	server_pids+=("$spid")
	port=
	for _ in $(seq 100); do
		port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$log")
		[ -n "$port" ] && break
		kill -0 "$spid" 2>/dev/null || die "the server did not start: $(cat "$log")"
		sleep 0.05
	done
	[ -n "$port" ] || die "the server did not say its port: $(cat "$log")"
	url=http://127.0.0.1:$port
}

# stop_server: kills the last server started, then its blocker (supervisor first, so
# that nothing starts the queued runs), as cleanup does for everything at the end
stop_server() {
	local id arg
	kill -TERM "$spid" 2>/dev/null || true
	wait "$spid" 2>/dev/null || true
	read -r id arg <<<"${blockers[${#blockers[@]} - 1]}"
	pkill -KILL -f "^berth __supervise $id\$" 2>/dev/null || true
	pkill -KILL -f "^sleep $arg\$" 2>/dev/null || true
}

# post BODY: prints the id of the run created (201) or fails
post() {
	local out
	out=$(curl -s -o "$tmp/post.json" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
		--data-binary "$1" "$url/api/v1/runs")
	[ "$out" = 201 ] || die "POST /api/v1/runs answered $out: $(cat "$tmp/post.json")"
	sed -n 's/^ *"id": "\([^"]*\)".*/\1/p' "$tmp/post.json" | head -n1
}

state_of() {
	curl -s "$url/api/v1/runs/$1" | sed -n 's/^ *"state": "\([^"]*\)".*/\1/p'
}

# start_blocker NAME: a run holding every CPU, Running; sets $blocker
start_blocker() {
	local arg=600.$$$RANDOM st
	blocker=$(post "{\"function\": {\"name\": \"blocker\", \"command\": [\"sleep\", \"$arg\"]}, \"resources\": {\"cpu\": \"$ncpu\"}}")
	[ -n "$blocker" ] || die "no id for the blocker"
	blockers+=("$blocker $arg")
	for _ in $(seq 100); do
		st=$(state_of "$blocker")
		[ "$st" = Running ] && return 0
		sleep 0.05
	done
	die "the blocker $blocker is $st, not Running"
}

metric() { # NAME: the value of an unlabelled metric
	curl -s "$url/metrics" | awk -v n="$1" '$1 == n {print $2}'
}

# run_wrk LABEL SCRIPT PATH [-- ARGS]: runs wrk, keeps its output in $tmp/LABEL.out,
# sets rps, p50, p99, nreq from the BENCH line; counts errors
run_wrk() {
	local label=$1 script=$2 path=$3 out=$tmp/$1.out line
	shift 3
	wrk -t"$THREADS" -c"$CONNS" -d"$DURATION" -s "$script" "$url$path" "$@" >"$out" 2>&1 ||
		die "wrk failed ($label): $(cat "$out")"
	line=$(grep '^BENCH ' "$out") || die "no BENCH line from wrk ($label): $(cat "$out")"
	field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$line"; }
	rps=$(field rps) p50=$(field p50_ms) p99=$(field p99_ms) nreq=$(field requests)
	local non2xx sock
	non2xx=$(field non2xx) sock=$(field socket_errors)
	if grep -q 'Non-2xx or 3xx responses' "$out" || [ "$non2xx" != 0 ] || [ "$sock" != 0 ]; then
		echo "!! $label: $(grep -E 'Non-2xx|Socket errors' "$out" | tr -s ' ' | tr '\n' ';')" \
			"(BENCH: non2xx=$non2xx socket_errors=$sock)"
		failures=$((failures + 1))
	fi
	echo "-- $label: $line"
}

wrk_cmd="wrk -t$THREADS -c$CONNS -d$DURATION"
post_body='{"function": {"name": "b", "command": ["true"]}, "resources": {"cpu": "100m", "mem": "64Mi"}}'

echo "$("$berth" version 2>/dev/null | head -n1 || true); $(nproc) CPUs:" \
	"$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1); wrk shares them"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- 1. creates, as fast as they go ----------------------------------------------------
if part 1; then
start_server throughput
start_blocker
probe=$(post "$post_body")
[ "$(state_of "$probe")" = Pending ] || die "run $probe is not Pending: the blocker does not hold the machine"
q0=$(metric berth_queue_length)
perf_pid=
if [ -n "$PERF_OUT" ]; then
	perf record -F 499 --call-graph dwarf,8192 -o "$PERF_OUT" -p "$spid" >"$tmp/perf.log" 2>&1 &
	perf_pid=$!
	sleep 0.5
fi
run_wrk create bench/server_post.lua /api/v1/runs
[ -z "$perf_pid" ] || { kill -INT "$perf_pid"; wait "$perf_pid" || true; }
q1=$(metric berth_queue_length)
echo "   queue: $q0 Pending before, $q1 after ($((q1 - q0)) created; wrk counted $nreq answers)"
[ $((q1 - q0)) -ge "$nreq" ] || die "wrk counted $nreq creates, but only $((q1 - q0)) runs were queued"
[ "$(state_of "$blocker")" = Running ] || die "the blocker stopped during the run"
hsum=$(curl -s "$url/metrics" | awk '/^berth_http_request_duration_seconds_sum\{route="\/api\/v1\/runs",method="POST",code="2xx"\}/ {print $2}')
hcnt=$(curl -s "$url/metrics" | awk '/^berth_http_request_duration_seconds_count\{route="\/api\/v1\/runs",method="POST",code="2xx"\}/ {print $2}')
echo "   server side (/metrics): $hcnt creates, mean $(awk -v s="$hsum" -v c="$hcnt" 'BEGIN {printf "%.3f", 1000 * s / c}') ms in the handler"
rows+=("runs created per second (max; queue $q0 to $q1)|$(printf %.0f "$rps") /s|$wrk_cmd -s bench/server_post.lua URL/api/v1/runs")
rows+=("create latency p50 / p99 at max rate|$p50 / $p99 ms|(same run)")
created=$q1

# ---- 3. GETs, on the store part 1 filled --------------------------------------------------
run_wrk get-run bench/server_get.lua "/api/v1/runs/$probe"
rows+=("GET /api/v1/runs/ID: requests/s, p99 ($((created + 1)) runs stored)|$(printf %.0f "$rps") /s, $p99 ms|$wrk_cmd -s bench/server_get.lua URL/api/v1/runs/ID")
run_wrk list-runs bench/server_get.lua "/api/v1/runs?limit=20"
rows+=("GET /api/v1/runs?limit=20: requests/s, p99 ($((created + 1)) runs stored)|$(printf %.0f "$rps") /s, $p99 ms|$wrk_cmd -s bench/server_get.lua 'URL/api/v1/runs?limit=20'")
echo "   (the store held $((created + 1)) runs, $created of them Pending)"
stop_server
fi

# ---- 2. creates at fixed rates, each on a fresh server -----------------------------------
part 2 || RATES=
for rate in $RATES; do
	start_server "rate-$rate"
	start_blocker
	run_wrk "create-at-$rate" bench/server_post.lua /api/v1/runs -- "$rate" "$THREADS"
	q=$(metric berth_queue_length)
	rows+=("create latency p50 / p99 at $rate/s (achieved $(printf %.0f "$rps")/s; queue 0 to $q)|$p50 / $p99 ms|$wrk_cmd -s bench/server_post.lua URL/api/v1/runs -- $rate $THREADS")
	if awk -v a="$rps" -v r="$rate" 'BEGIN {exit !(a < 0.95 * r)}'; then
		echo "!! the server kept up with only $rps/s of $rate/s: latency here is that of a saturated server"
	fi
	stop_server
done

# ---- 4. creates with 0 and with FOLLOWERS log followers open ------------------------------
# sockets SPID: the server's open sockets (its listener, and one per connection)
sockets() {
	local n=0 fd
	for fd in /proc/"$1"/fd/*; do
		[[ $(readlink "$fd" 2>/dev/null) == socket:* ]] && n=$((n + 1))
	done
	echo "$n"
}
# stop_followers: the followers (and pages) started, stopped and waited for
stop_followers() {
	local pid
	for pid in "${follower_pids[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in "${follower_pids[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	follower_pids=()
}
# with_followers N: on a fresh server, N followers of the blocker (its log stays empty)
# held open while creates go at FOLLOW_RATE/s, then as fast as they go; sets
# f_rps f_p99 (max rate), f_rate_rps f_rate_p99 (fixed rate), f_threads
with_followers() {
	local n=$1 base held
	start_server "followers-$n"
	start_blocker
	base=$(sockets "$spid")
	for _ in $(seq "$n"); do
		curl -sN -o /dev/null "$url/api/v1/runs/$blocker/logs?follow=true" &
		follower_pids+=($!)
	done
	for _ in $(seq 100); do
		[ "$(sockets "$spid")" -ge $((base + n)) ] && break
		sleep 0.05
	done
	held=$(($(sockets "$spid") - base))
	[ "$held" -ge "$n" ] || die "only $held of $n followers are connected"
	f_threads=$(awk '/^Threads:/ {print $2}' /proc/"$spid"/status)
	echo "   $n followers connected; the server has $f_threads threads"
	run_wrk "create-at-$FOLLOW_RATE-$n-followers" bench/server_post.lua /api/v1/runs -- "$FOLLOW_RATE" "$THREADS"
	f_rate_rps=$rps f_rate_p99=$p99
	run_wrk "create-$n-followers" bench/server_post.lua /api/v1/runs
	f_rps=$rps f_p99=$p99
	held=$(($(sockets "$spid") - base))
	[ "$held" -ge "$n" ] || die "followers were dropped during the runs: $held of $n left"
	stop_followers
	stop_server
}
if part 4; then
with_followers 0
rps0=$f_rps p99_0=$f_p99 rrps0=$f_rate_rps rp99_0=$f_rate_p99 th0=$f_threads
with_followers "$FOLLOWERS"
rows+=("create latency p99 at $FOLLOW_RATE/s, 0 / $FOLLOWERS log followers open (achieved $(printf %.0f "$rrps0") / $(printf %.0f "$f_rate_rps")/s; threads $th0 / $f_threads)|$rp99_0 / $f_rate_p99 ms|$wrk_cmd -s bench/server_post.lua URL/api/v1/runs -- $FOLLOW_RATE $THREADS (followers: curl -N URL/api/v1/runs/ID/logs?follow=true)")
rows+=("creates per second (max), 0 / $FOLLOWERS followers|$(printf %.0f "$rps0") / $(printf %.0f "$f_rps") /s|$wrk_cmd -s bench/server_post.lua URL/api/v1/runs, after the above")
rows+=("create latency p99 at max rate, 0 / $FOLLOWERS followers|$p99_0 / $f_p99 ms|(same runs)")
fi

# ---- 5. a store of STORED runs, and PAGES open run pages ---------------------------------
# Each open run page (the web UI's) holds a watch of its project's runs, asked again as it
# answers (bench/server_watch.lua), and follows its run's log. Creates at FOLLOW_RATE/s, on
# a store filled with STORED runs first (as fast as they go), with 0 and with PAGES pages.
if part 5; then
	start_server stored
	start_blocker
	fill_s=$(awk -v n="$STORED" 'BEGIN {printf "%d", n / 6000 + 1}')
	echo "   filling the store with $STORED runs (at most ${fill_s}s)"
	have=0
	while [ "$have" -lt "$STORED" ]; do
		wrk -t"$THREADS" -c"$CONNS" -d"${fill_s}s" -s bench/server_post.lua "$url/api/v1/runs" >"$tmp/fill.out" 2>&1 ||
			die "wrk failed (fill): $(cat "$tmp/fill.out")"
		have=$(metric berth_queue_length)
		fill_s=$(awk -v n="$((STORED - have))" 'BEGIN {printf "%d", n / 2000 + 2}')
	done
	run_wrk "create-at-$FOLLOW_RATE-$have-stored" bench/server_post.lua /api/v1/runs -- "$FOLLOW_RATE" "$THREADS"
	s_rps0=$rps s_p99_0=$p99
	rv=$(curl -s "$url/api/v1/projects/default/runs?limit=1" | sed -n 's/.*"rv": "\([0-9]*\)".*/\1/p')
	wrk -t1 -c"$PAGES" -d3600s -s bench/server_watch.lua "$url" -- "$rv" >"$tmp/watch.out" 2>&1 &
	follower_pids+=($!)
	for _ in $(seq "$PAGES"); do
		curl -sN -o /dev/null "$url/api/v1/runs/$blocker/logs?follow=true" &
		follower_pids+=($!)
	done
	sleep 1
	s_threads=$(awk '/^Threads:/ {print $2}' /proc/"$spid"/status)
	run_wrk "create-at-$FOLLOW_RATE-$have-stored-$PAGES-pages" bench/server_post.lua /api/v1/runs -- "$FOLLOW_RATE" "$THREADS"
	s_rps=$rps s_p99=$p99
	stop_followers
	echo "   the pages' watches: $(grep -E 'requests in' "$tmp/watch.out" | tr -s ' ')"
	stop_server
	rows+=("create latency p99 at $FOLLOW_RATE/s, $have runs stored, 0 / $PAGES open run pages (achieved $(printf %.0f "$s_rps0") / $(printf %.0f "$s_rps")/s; threads $s_threads)|$s_p99_0 / $s_p99 ms|$wrk_cmd -s bench/server_post.lua URL/api/v1/runs -- $FOLLOW_RATE $THREADS (pages: wrk -t1 -c$PAGES -s bench/server_watch.lua URL -- RV, and curl -N URL/api/v1/runs/ID/logs?follow=true each)")
fi

# ---- 6. SQLite NORMAL vs durable, side by side --------------------------------------------
# The same creates as part 1 (as fast as they go), on a fresh server each: one with
# BERTH_STORE_SYNC=normal (a commit survives a crash of berth, not a power cut) and one
# durable (the default: the WAL fsynced before the 201, one fsync shared by the commits
# of the moment, src/store/sync.c). SYNC_ROUNDS rounds, the two modes in turn, so that a
# change in the machine's load falls on both; the row gives the median round and every
# round. /metrics counts the commits and the fsyncs.
SYNC_ROUNDS=${BENCH_SYNC_ROUNDS:-3}
median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
if part 6; then
	declare -A s_rps s_p50 s_p99 s_per
	for round in $(seq "$SYNC_ROUNDS"); do
		for mode in normal durable; do
			BERTH_STORE_SYNC=$mode start_server "sync-$mode-$round"
			start_blocker
			c0=$(metric berth_store_commits_total) f0=$(metric berth_store_fsyncs_total)
			run_wrk "create-$mode-$round" bench/server_post.lua /api/v1/runs
			c1=$(metric berth_store_commits_total) f1=$(metric berth_store_fsyncs_total)
			s_rps[$mode]+="$(printf %.0f "$rps") " s_p50[$mode]+="$p50 " s_p99[$mode]+="$p99 "
			if [ "$mode" = durable ]; then
				s_per[$mode]+="$(awk -v c=$((c1 - c0)) -v f=$((f1 - f0)) 'BEGIN {printf "%.1f", f ? c / f : 0}') "
				echo "   durable: $((c1 - c0)) commits, $((f1 - f0)) fsyncs"
			fi
			stop_server
		done
	done
	for mode in normal durable; do
		label=NORMAL per=
		[ "$mode" = durable ] && label=durable per="; commits per fsync: ${s_per[$mode]% }"
		rows+=("SQLite $label: creates per second (max), p50 / p99, median of $SYNC_ROUNDS rounds (each round's /s: ${s_rps[$mode]% }$per)|$(median <<<"${s_rps[$mode]}") /s, $(median <<<"${s_p50[$mode]}") / $(median <<<"${s_p99[$mode]}") ms|BERTH_STORE_SYNC=$mode; $wrk_cmd -s bench/server_post.lua URL/api/v1/runs")
	done
fi

# ---- 7. the stores side by side: SQLite, PostgreSQL with one server and with two -------------
# wrk2 LABEL URL1 URL2: creates as fast as they go, half the connections to each server at
# once; sets rps (the sum) and p99 (the higher)
wrk2() {
	local half=$((CONNS / 2)) a b
	[ "$half" -ge "$THREADS" ] || half=$THREADS
	wrk -t"$THREADS" -c"$half" -d"$DURATION" -s bench/server_post.lua "$2/api/v1/runs" >"$tmp/$1.a.out" 2>&1 &
	a=$!
	wrk -t"$THREADS" -c"$half" -d"$DURATION" -s bench/server_post.lua "$3/api/v1/runs" >"$tmp/$1.b.out" 2>&1 &
	b=$!
	wait "$a" || die "wrk failed ($1): $(cat "$tmp/$1.a.out")"
	wait "$b" || die "wrk failed ($1): $(cat "$tmp/$1.b.out")"
	local la lb
	la=$(grep '^BENCH ' "$tmp/$1.a.out") || die "no BENCH line ($1)"
	lb=$(grep '^BENCH ' "$tmp/$1.b.out") || die "no BENCH line ($1)"
	for l in "$la" "$lb"; do
		if [ "$(sed -n 's/.* non2xx=\([^ ]*\).*/\1/p' <<<"$l")" != 0 ] ||
			[ "$(sed -n 's/.* socket_errors=\([^ ]*\).*/\1/p' <<<"$l")" != 0 ]; then
			echo "!! $1: $l"
			failures=$((failures + 1))
		fi
	done
	rps=$(awk -v a="$(sed -n 's/.* rps=\([^ ]*\).*/\1/p' <<<"$la")" -v b="$(sed -n 's/.* rps=\([^ ]*\).*/\1/p' <<<"$lb")" 'BEGIN {print a + b}')
	p99=$(awk -v a="$(sed -n 's/.* p99_ms=\([^ ]*\).*/\1/p' <<<"$la")" -v b="$(sed -n 's/.* p99_ms=\([^ ]*\).*/\1/p' <<<"$lb")" 'BEGIN {print (a > b ? a : b)}')
	echo "-- $1: $la"
	echo "-- $1: $lb"
}
if part 7; then
	. tests/pg_lib.sh
	why=$(pg_missing)
	if [ -n "$why" ]; then
		echo "   part 7 skipped: $why"
	else
		start_server store-sqlite
		start_blocker
		run_wrk store-sqlite bench/server_post.lua /api/v1/runs
		l_rps=$rps l_p50=$p50 l_p99=$p99
		stop_server
		pg_start >"$tmp/pg.log" 2>&1 || die "PostgreSQL did not start: $(cat "$tmp/pg.log")"
		pg_newdb bench1 && pg_newdb bench2 || die "no database for the benchmark"
		BERTH_STORE=$(pg_url bench1) start_server store-pg1
		BERTH_STORE=$(pg_url bench1) start_blocker
		run_wrk store-pg1 bench/server_post.lua /api/v1/runs
		p1_rps=$rps p1_p50=$p50 p1_p99=$p99
		stop_server
		export BERTH_STORE
		BERTH_STORE=$(pg_url bench2)
		start_server store-pg2a store-pg2
		url_a=$url spid_a=$spid
		start_blocker
		start_server store-pg2b store-pg2
		wrk2 store-pg2 "$url_a" "$url"
		p2_rps=$rps p2_p99=$p99
		kill -TERM "$spid_a" 2>/dev/null || true
		wait "$spid_a" 2>/dev/null || true
		stop_server
		unset BERTH_STORE
		pg_stop
		rows+=("creates per second (max): SQLite / PostgreSQL, 1 server / PostgreSQL, 2 servers|$(printf %.0f "$l_rps") / $(printf %.0f "$p1_rps") / $(printf %.0f "$p2_rps") /s|$wrk_cmd -s bench/server_post.lua URL/api/v1/runs (2 servers: -c$((CONNS / 2)) to each at once)")
		rows+=("create latency p99 at max rate: SQLite / PostgreSQL, 1 / 2 servers|$l_p99 / $p1_p99 / $p2_p99 ms|(same runs; 2 servers: the higher of the two)")
	fi
fi

echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

table() {
	echo "| metric | value | command |"
	echo "|---|---|---|"
	for r in "${rows[@]}"; do
		IFS='|' read -r m v c <<<"$r"
		case $c in
		"("*) echo "| $m | $v | $c |" ;;
		*) echo "| $m | $v | \`$c\` |" ;;
		esac
	done
}
echo
table
# the fragment of docs/performance.md (bench/report.sh puts them together)
out=${OUT:-$root/build/bench/server.md}
mkdir -p "$(dirname "$out")"
{
	echo "## Server (berth serve)"
	echo
	echo "\`bench/server.sh\`, $(date -u +%Y-%m-%d), commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?'),"
	echo "$(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)), wrk on the same CPUs."
	echo "Each create is \`POST /api/v1/runs\` (validated, planned, committed to SQLite in WAL mode)"
	echo "of a job queued behind a blocker run, so that no process is started."
	echo
	table
} >"$out"
if [ "$failures" -gt 0 ]; then
	echo "server.sh: $failures wrk run(s) had errors (see the !! lines)" >&2
	exit 1
fi

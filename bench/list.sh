#!/usr/bin/env bash
# bench/list.sh - what a page of runs costs at 1,000, 100,000 and 1,000,000 runs,
# side by side (bench/list.c says what it measures), then what the CLI pays for a
# whole filtered list from a server: `berth get runs --server URL --state
# Succeeded` of a store of 100,000 finished runs (40,000 Succeeded).
#
#   bench/list.sh [SIZE...]      (default: 1000 100000 1000000)
#
# Builds libberth.a and berth (-O2) in $BENCH_BUILD (build/bench-list), then
# bench/list.c against the library, and runs it on stores made under a
# temporary dir (about 2 GB at 1,000,000 runs), removed at the end with the
# server it started. Leaves the tables in build/bench/list.md, and prints them.
# BENCH_CLI_RUNS (100000): the runs of the CLI's store; 0 leaves that part out.
set -eu -o pipefail
cd "$(dirname "$0")/.."
B=${BENCH_BUILD:-build/bench-list}
CLI_RUNS=${BENCH_CLI_RUNS:-100000}
make -j2 B="$B" "$B/libberth.a" "$B/berth" >/dev/null
# the store's internals are not exported by libberth.a: the benchmark links its objects
cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -Iinclude -Isrc -o "$B/list" bench/list.c $(find "$B/obj/src" -name '*.o' | sort) \
	$(pkg-config --libs libfyaml sqlite3 libsodium libseccomp) -lpthread
tmp=$(mktemp -d "${TMPDIR:-/tmp}/berth-list.XXXXXX")
spid=
cleanup() {
	[ -z "$spid" ] || kill "$spid" 2>/dev/null || true
	[ -z "$spid" ] || wait "$spid" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p build/bench

cli_part() {
	local home=$tmp/cli log=$tmp/serve.log port= t0 t1 n
	"$B/list" --final "$home" "$CLI_RUNS"
	BERTH_HOME=$home BERTH_CGROUP_ROOT=$tmp/no-cgroup "$B/berth" serve --listen 127.0.0.1:0 \
		--insecure-local >"$log" 2>&1 &
	spid=$!
	for _ in $(seq 100); do
		port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$log")
		[ -n "$port" ] && break
		sleep 0.1
	done
	[ -n "$port" ] || { echo "list.sh: the server did not say its port: $(cat "$log")" >&2; exit 1; }
	echo
	echo "| \`berth get runs --server URL --state S\`, $CLI_RUNS finished runs | runs listed | seconds |"
	echo "|---|---|---|"
	for st in Succeeded Stopped; do
		t0=$EPOCHREALTIME
		n=$(BERTH_HOME=$tmp/none "$B/berth" get runs --server "http://127.0.0.1:$port" --state $st |
			awk 'NR > 1' | wc -l)
		t1=$EPOCHREALTIME
		echo "| --state $st | $n | $(echo "$t1 - $t0" | bc -l | sed 's/^\./0./' | cut -c1-5) |"
	done
}

# in this shell, not a pipeline's: the trap must see the server's pid
{
	echo "## Lists of runs as the store grows: \`bench/list.sh $*\`"
	echo
	"$B/list" "$tmp" "$@"
	if [ "$CLI_RUNS" -gt 0 ]; then cli_part; fi
} >build/bench/list.md
cat build/bench/list.md

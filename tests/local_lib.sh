# tests/local_lib.sh - what the local backend's test scripts share, sourced by
# tests/local.sh and tests/local_distributed.sh with $1 the berth binary and
# $tier the word their lines start with: a fresh data dir in a temporary
# directory (the working directory), every run still running stopped at the
# end, and ok / skip / fail / field.
berth=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
tmp=$(mktemp -d)
export BERTH_HOME=$tmp/home
unset BERTH_CONFIG BERTH_CGROUP_ROOT BERTH_GPU_DIR
cleanup() {
	# nothing a test started may outlive it
	for id in $("$berth" get runs --state Running -o json 2>/dev/null | sed -n 's/.*"id": "\(.*\)".*/\1/p'); do
		"$berth" stop "$id" --grace 0 >/dev/null 2>&1
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
cd "$tmp" || exit 1

ok() { echo "ok $tier $1"; }
skip() { echo "skip $tier $1 ($2)"; }
fail() {
	echo "FAIL $tier $1: $2"
	[ -f "$tmp/out" ] && sed 's/^/    /' "$tmp/out" | head -20
}
# field ID KEY: a scalar of `berth get run ID -o json`
field() {
	"$berth" get run "$1" -o json |
		sed -n -e "s/^ *\"$2\": \"\(.*\)\",\{0,1\}$/\1/p" -e "s/^ *\"$2\": \([0-9a-z.-]*\),\{0,1\}$/\1/p"
}
# a run id of this script's own, for what it starts by hand (an MPI worker): no other
# test run on this machine at the same time takes its names
fakeid=t$(od -An -N5 -tx1 /dev/urandom | tr -d ' \n')
# run_procs ID: the processes of run ID (their environment names it), whatever other
# runs, of this script or of another at the same time, have running
run_procs() {
	grep -lsz "^BERTH_RUN_ID=$1\$" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3
}

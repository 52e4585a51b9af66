#!/usr/bin/env bash
# Runs the test tiers and ends with one line "N passed, N failed".
#   tests/run.sh BUILD_DIR [--valgrind] [TIER...]
# With TIERs, only those (make check: unit golden render cli). Tiers: unit
# (unit binaries), golden (tests/golden/*/, tests/data/render/*/), render
# (merge, policy rules, objects), cli, local (the local backend), security
# (hostile specs and runs against it), server (and tests/server_tls.sh, tests/server_tokens.sh,
# tests/faces.sh: one run, every face, the same numbers), load (the server under load and
# abuse), kube (the kubernetes backend against a stand-in API server), kube-real
# (the same against a real control plane, ../shared/k8s, when there), sdk (the
# Python SDK), ui (the web UI in a browser), schema (rendered objects against
# the Kubernetes API), fuzz (short runs); unit-pg and server-pg: the store's unit
# tests and the server tier again on a PostgreSQL of their own, with two replicas
# of berth serve on it (tests/replicas.sh; skipped, with the reason, where its
# binaries are missing). Under --valgrind: unit, golden, render.
set -u
bt=${1:-build/test}
shift || true
mode=
if [ "${1:-}" = --valgrind ]; then mode=--valgrind; shift; fi
all_tiers="unit golden render cli local security server load kube kube-real sdk ui schema fuzz unit-pg server-pg"
vg_tiers="unit golden render"
if [ $# -gt 0 ]; then
	tiers="$*"
	for t in $tiers; do
		case " $all_tiers " in *" $t "*) ;; *) echo "tests/run.sh: no tier '$t' (tiers: $all_tiers)" >&2; exit 2 ;; esac
	done
elif [ "$mode" = --valgrind ]; then
	tiers=$vg_tiers
else
	tiers=$all_tiers
fi
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
cd "$root"
pass=0 fail=0 skip=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
export LSAN_OPTIONS=suppressions=$root/tests/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# validate, explain and the verbs that read runs ask a server when $BERTH_SERVER is set: the
# tiers test this machine's berth unless a test names a server itself
unset BERTH_SERVER BERTH_TOKEN
if [ "$mode" = --valgrind ]; then
	export BERTH_WRAP="valgrind -q --error-exitcode=99 --leak-check=full"
fi

count() { # reads "ok NAME" / "FAIL NAME" lines
	while IFS= read -r line; do
		case "$line" in
		ok\ *) pass=$((pass + 1)) ;;
		skip\ *) skip=$((skip + 1)) ;;
		FAIL\ *) fail=$((fail + 1)); echo "$line" ;;
		esac
	done
}

# tier TITLE LINES COMMAND...: runs a tier's script, counts its lines and shows
# up to LINES of what was not "ok"
tier() {
	local title=$1 lines=$2
	shift 2
	echo "== $title"
	"$@" >"$log" 2>&1
	count <"$log"
	grep -v '^ok ' "$log" | sed 's/^/    /' | head -"$lines"
}

unit() {
	echo "== unit"
	local t
	for t in "$bt"/test_*; do
		[ -x "$t" ] || continue
		if [ "$mode" = --valgrind ]; then
			unit_bin "$t" valgrind -q --error-exitcode=99 --leak-check=full "$t"
		else
			unit_bin "$t" "$t"
		fi
	done
}

# unit_bin BINARY COMMAND...: counts a unit binary's lines and shows what was not "ok"
unit_bin() {
	local t=$1 rc
	shift
	"$@" >"$log" 2>&1
	rc=$?
	count <"$log"
	if [ $rc -ne 0 ]; then
		grep -v '^ok ' "$log" | sed 's/^/    /' | head -40
		# a crash or sanitizer report that left no FAIL line still fails
		grep -q '^FAIL ' "$log" || { fail=$((fail + 1)); echo "FAIL $(basename "$t") (exit $rc)"; }
	fi
}

# on_pg TIER COMMAND...: COMMAND with BERTH_TEST_STORE=postgresql and a PostgreSQL
# of its own (tests/pg_lib.sh), stopped after it; the tier is skipped when the
# binaries are missing
on_pg() {
	local name=$1 why rc
	shift
	. "$here/pg_lib.sh"
	why=$(pg_missing)
	if [ -n "$why" ]; then
		echo "== $name"
		count <<<"skip $name ($why)"
		echo "    skip $name ($why)"
		return
	fi
	if ! pg_start >"$log" 2>&1; then
		echo "== $name"
		count <<<"FAIL $name (PostgreSQL did not start)"
		sed 's/^/    /' "$log" | head -20
		pg_stop
		return
	fi
	BERTH_TEST_STORE=postgresql "$@"
	rc=$?
	pg_stop
	return $rc
}

unit_pg() {
	echo "== unit-pg (the store's unit tests on PostgreSQL)"
	unit_bin "$bt/test_store" "$bt/test_store"
}

server_pg() {
	tier "server on PostgreSQL (berth serve over HTTP, its store a PostgreSQL)" 80 "$here/server.sh" "$bt/berth"
	tier "replicas (two berth serve on one PostgreSQL: one leads, kill -9 of it under load)" 40 \
		"$here/replicas.sh" "$bt/berth"
}

fuzz() {
	echo "== fuzz (short runs)"
	local f n corpus
	for f in "$bt"/fuzz_*; do
		[ -x "$f" ] || continue
		n=$(basename "$f")
		corpus=$(mktemp -d)
		if "$f" -max_total_time="${FUZZ_SMOKE_SECONDS:-10}" -timeout=5 -rss_limit_mb=2048 \
			"$corpus" "tests/fuzz/corpus/$n" >"$log" 2>&1; then
			count <<<"ok fuzz $n"
		else
			count <<<"FAIL fuzz $n"
			tail -30 "$log" | sed 's/^/    /'
		fi
		rm -rf "$corpus"
	done
}

for t in $tiers; do
	case $t in
	unit) unit ;;
	golden) tier golden 60 "$here/golden.sh" "$bt/berth" ;;
	render) tier "render (merge, policy rules, objects)" 60 "$here/render.sh" "$bt/berth" ;;
	cli) tier cli 60 "$here/cli.sh" "$bt/berth" ;;
	local)
		tier "local backend (real processes, cgroups)" 80 "$here/local.sh" "$bt/berth"
		tier "local backend: distributed jobs (workers, a real all-reduce)" 40 \
			"$here/local_distributed.sh" "$bt/berth"
		;;
	security) tier "security (hostile specs and runs against the local backend)" 80 "$here/security.sh" "$bt/berth" ;;
	server)
		tier "server (berth serve over HTTP)" 80 "$here/server.sh" "$bt/berth"
		tier "server over TLS (certificates checked by the CLI and SDK, reloaded)" 40 \
			"$here/server_tls.sh" "$bt/berth"
		tier "tokens through the API (who makes and revokes which, expiry, CLI, SDK)" 40 \
			"$here/server_tokens.sh" "$bt/berth"
		tier "one run, every face, the same numbers (explain, get, table, API, client, SDK, cgroup)" 40 \
			"$here/faces.sh" "$bt/berth"
		tier "one check everywhere (validate, explain, render, run --dry-run, the server's validate)" 40 \
			"$here/differential.sh" "$bt/berth"
		;;
	load) tier "load and abuse (berth serve: streams held, floods, caps; loopback, bounded)" 80 "$here/load.sh" "$bt/berth" ;;
	kube) tier "kubernetes backend (a stand-in API server over TLS)" 80 "$here/kube.sh" "$bt/berth" ;;
	kube-real) tier "kubernetes backend on a real control plane (../shared/k8s: kube-apiserver, controllers, scheduler 1.26)" 80 \
		"$here/kube_real.sh" "$bt/berth" ;;
	sdk) tier "python sdk (berth serve on loopback, the seeds' func.run examples)" 80 \
		env BERTH_BIN="$bt/berth" python3 "$root/sdk/python/tests/run.py" ;;
	ui) tier "web ui (playwright-core, Debian's chromium, berth serve on loopback)" 80 "$here/ui.sh" "$bt/berth" ;;
	schema) tier "schema (rendered objects against the Kubernetes API, kubernetes-models)" 60 "$here/schema.sh" "$bt/berth" ;;
	fuzz) fuzz ;;
	unit-pg) on_pg unit-pg unit_pg ;;
	server-pg) on_pg server-pg server_pg ;;
	esac
done

if [ "$skip" -gt 0 ]; then
	echo "$pass passed, $fail failed, $skip skipped"
else
	echo "$pass passed, $fail failed"
fi
[ "$fail" -eq 0 ]

#!/usr/bin/env bash
# Runs every test tier and ends with one line "N passed, N failed".
#   tests/run.sh BUILD_DIR [--valgrind]
# Tiers: unit binaries, golden cases (tests/golden/*/, tests/data/render/*/),
# Kubernetes schema checks, CLI checks, the local backend, hostile specs and
# runs against it (security), the server, the server under load and abuse, the
# kubernetes backend against a stand-in API server, the Python SDK, the web UI
# in a browser, fuzz smoke.
set -u
bt=${1:-build/test}
mode=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
cd "$root"
pass=0 fail=0 skip=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
export LSAN_OPTIONS=suppressions=$root/tests/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

count() { # reads "ok NAME" / "FAIL NAME" lines
	while IFS= read -r line; do
		case "$line" in
		ok\ *) pass=$((pass + 1)) ;;
		skip\ *) skip=$((skip + 1)) ;;
		FAIL\ *) fail=$((fail + 1)); echo "$line" ;;
		esac
	done
}

echo "== unit"
for t in "$bt"/test_*; do
	[ -x "$t" ] || continue
	if [ "$mode" = --valgrind ]; then
		run=(valgrind -q --error-exitcode=99 --leak-check=full "$t")
	else
		run=("$t")
	fi
	"${run[@]}" >"$log" 2>&1
	rc=$?
	count <"$log"
	if [ $rc -ne 0 ]; then
		grep -v '^ok ' "$log" | sed 's/^/    /' | head -40
		# a crash or sanitizer report that left no FAIL line still fails
		grep -q '^FAIL ' "$log" || { fail=$((fail + 1)); echo "FAIL $(basename "$t") (exit $rc)"; }
	fi
done

echo "== golden"
if [ "$mode" = --valgrind ]; then
	export BERTH_WRAP="valgrind -q --error-exitcode=99 --leak-check=full"
fi
"$here/golden.sh" "$bt/berth" >"$log" 2>&1
count <"$log"
grep -v '^ok ' "$log" | sed 's/^/    /' | head -60

echo "== render (merge, policy rules, objects)"
"$here/render.sh" "$bt/berth" >"$log" 2>&1
count <"$log"
grep -v '^ok ' "$log" | sed 's/^/    /' | head -60

if [ "$mode" != --valgrind ]; then
	echo "== cli"
	"$here/cli.sh" "$bt/berth" >"$log" 2>&1
	count <"$log"
	grep -v '^ok ' "$log" | sed 's/^/    /' | head -60

	echo "== local backend (real processes, cgroups)"
	"$here/local.sh" "$bt/berth" >"$log" 2>&1
	count <"$log"
	grep -v '^ok ' "$log" | sed 's/^/    /' | head -80

	echo "== security (hostile specs and runs against the local backend)"
	"$here/security.sh" "$bt/berth" >"$log" 2>&1
	count <"$log"
	grep -v '^ok ' "$log" | sed 's/^/    /' | head -80

	echo "== server (berth serve over HTTP)"
	"$here/server.sh" "$bt/berth" >"$log" 2>&1
	count <"$log"
	grep -v '^ok ' "$log" | sed 's/^/    /' | head -80

	echo "== load and abuse (berth serve: streams held, floods, caps; loopback, bounded)"
	"$here/load.sh" "$bt/berth" >"$log" 2>&1
	count <"$log"
	grep -v '^ok ' "$log" | sed 's/^/    /' | head -80

	echo "== kubernetes backend (a stand-in API server over TLS)"
	"$here/kube.sh" "$bt/berth" >"$log" 2>&1
	count <"$log"
	grep -v '^ok ' "$log" | sed 's/^/    /' | head -80

	echo "== python sdk (berth serve on loopback, the seeds' func.run examples)"
	BERTH_BIN="$bt/berth" python3 "$root/sdk/python/tests/run.py" >"$log" 2>&1
	count <"$log"
	grep -v '^ok ' "$log" | sed 's/^/    /' | head -80

	echo "== web ui (playwright-core, Debian's chromium, berth serve on loopback)"
	"$here/ui.sh" "$bt/berth" >"$log" 2>&1
	count <"$log"
	grep -v '^ok ' "$log" | sed 's/^/    /' | head -80

	echo "== schema (rendered objects against the Kubernetes API, kubernetes-models)"
	"$here/schema.sh" "$bt/berth" >"$log" 2>&1
	count <"$log"
	grep -v '^ok ' "$log" | sed 's/^/    /' | head -60

	echo "== fuzz (short runs)"
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
fi

if [ "$skip" -gt 0 ]; then
	echo "$pass passed, $fail failed, $skip skipped"
else
	echo "$pass passed, $fail failed"
fi
[ "$fail" -eq 0 ]

#!/usr/bin/env bash
# bench/render_diff.sh - berth render of the benchmark's specs, byte for byte against
# another commit's: a change made for speed must print the same bytes.
#
#   bench/render_diff.sh [REV]        (REV: a commit, default main)
#
# bench/gen_specs.py writes N (10,000) specs (seed 1) as YAML files and as JSON files
# (the same specs, one JSON value a line: --json), cut as bench/render.sh cuts them;
# each file is rendered as YAML (default) and as JSON (-o json), with
# bench/render.sh's policy, secrets and run id. What REV's berth printed (stdout,
# stderr and exit status of each) is saved once under build/bench/render-diff/SHA/
# (REV built in a temporary git worktree, -O2, nothing else); this tree's
# build/berth (make -j2) is then compared with it, file by file.
# Nothing is committed: the saved outputs stay in build/.
#
# Knobs (environment): BENCH_SPECS (10000), BENCH_SEED (1), PYTHON (python3).
# Exit status: 0 the same bytes everywhere, 1 a difference (the first lines of the
# first difference are shown) or a step failed.
set -eu -o pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."

REV=${1:-main}
N=${BENCH_SPECS:-10000}
SEED=${BENCH_SEED:-1}
PY=${PYTHON:-python3}
CONFIG=examples/policy/config.yaml
SPLIT_BYTES=4000000

die() {
	echo "render_diff.sh: $*" >&2
	exit 1
}

sha=$(git rev-parse --verify "$REV^{commit}") || die "no commit $REV"
saved=build/bench/render-diff/$sha-$N-$SEED
tmp=$(mktemp -d "${TMPDIR:-/tmp}/berth-render-diff.XXXXXX")
wt=""
cleanup() {
	if [ -n "$wt" ]; then git worktree remove --force "$wt" >/dev/null 2>&1 || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mapfile -t specs < <("$PY" bench/gen_specs.py "$N" "$SEED" --split "$SPLIT_BYTES" --prefix "$tmp/specs"
	"$PY" bench/gen_specs.py "$N" "$SEED" --split "$SPLIT_BYTES" --prefix "$tmp/specs" --json)
[ ${#specs[@]} -gt 1 ] || die "gen_specs.py wrote nothing"
secrets=$("$PY" bench/gen_specs.py --secrets-list)

# render_all BERTH DIR: every spec file, as YAML and as JSON, into DIR
render_all() {
	local berth=$1 dir=$2 f o rc
	mkdir -p "$dir"
	for f in "${specs[@]}"; do
		for o in yaml json; do
			rc=0
			"$berth" render - --config "$CONFIG" --secrets "$secrets" --run-id b1 -o "$o" \
				<"$f" >"$dir/$(basename "$f").$o.out" 2>"$dir/$(basename "$f").$o.err" || rc=$?
			echo "$rc" >"$dir/$(basename "$f").$o.rc"
		done
	done
}

if [ ! -f "$saved/done" ]; then
	echo "== building $REV ($sha) in a temporary worktree" >&2
	wt=$tmp/old
	git worktree add --detach "$wt" "$sha" >/dev/null 2>&1 || die "cannot check out $REV"
	make -C "$wt" -j2 build/berth >/dev/null || die "cannot build $REV"
	rm -rf "$saved"
	render_all "$wt/build/berth" "$saved"
	touch "$saved/done"
fi
make -j2 build/berth >/dev/null
echo "== rendering with this tree's build/berth" >&2
render_all "$PWD/build/berth" "$tmp/new"
fails=0
files=0
for f in "$saved"/*.out "$saved"/*.err "$saved"/*.rc; do
	files=$((files + 1))
	new=$tmp/new/$(basename "$f")
	if ! cmp -s "$f" "$new"; then
		fails=$((fails + 1))
		if [ $fails -eq 1 ]; then
			echo "render_diff.sh: $(basename "$f") differs from $REV's:" >&2
			diff "$f" "$new" | head -20 >&2 || true
		fi
	fi
done
bytes=$(cat "$saved"/*.out | wc -c)
echo "$N specs (seed $SEED), YAML and JSON input, -o yaml and -o json: $files outputs ($bytes bytes of objects) against $REV ($sha): $fails differ"
[ $fails -eq 0 ]

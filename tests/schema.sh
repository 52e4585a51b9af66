#!/usr/bin/env bash
# Checks rendered objects against the Kubernetes API schema with a maintained
# validator from npm (kubernetes-models, tests/schema/validate.js):
#   - the expected output of every golden render case that succeeds;
#   - every example (examples/*.yaml, examples/seeds/*.yaml) rendered with the
#     example policy (it must be accepted) and with the built-in policy (it must
#     be accepted, or refused only for naming a profile the built-in policy
#     lacks);
#   - the deploy manifests (deploy/kubernetes/rbac.yaml, berth-serve.yaml, postgresql.yaml);
#   - the validator's own fixtures (tests/schema/selftest.sh), so that it is
#     known to refuse what it must.
# Prints "ok NAME" / "FAIL NAME" per file.
#   tests/schema.sh BERTH
set -u
berth=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! command -v node >/dev/null || [ ! -d tests/schema/node_modules ]; then
	echo "FAIL schema (node or tests/schema/node_modules missing: run scripts/deps.sh)"
	exit 0
fi
files=()
for d in tests/data/render/*/; do
	cmd=render
	[ -f "$d/cmd" ] && cmd=$(cat "$d/cmd")
	[ "${cmd%% *}" = render ] && [ "$(cat "$d/status")" = 0 ] && files+=("$d"expected)
done
for spec in examples/*.yaml examples/seeds/*.yaml; do
	name=$(basename "$spec" .yaml)
	out=$tmp/$name.policy.yaml
	if env -u BERTH_CONFIG "$berth" render "$spec" --run-id x1 --config examples/policy/config.yaml \
		>"$out" 2>"$tmp/err"; then
		files+=("$out")
		kept=examples/rendered/$name.yaml
		if [ "$(dirname "$spec")" = examples ]; then
			if diff -u "$kept" "$out" >"$tmp/diff" 2>&1; then
				echo "ok $kept is up to date"
			else
				echo "FAIL $kept is stale (make examples)"
				sed 's/^/    /' "$tmp/diff" | head -20
			fi
		fi
	else
		echo "FAIL render $spec with examples/policy"
		sed 's/^/    /' "$tmp/err"
	fi
	out=$tmp/$name.builtin.yaml
	if env -u BERTH_CONFIG "$berth" render "$spec" --run-id x1 >"$out" 2>"$tmp/err"; then
		files+=("$out")
	elif grep -q '^profile:' "$spec" && grep -q 'unknown profile' "$tmp/err" &&
		[ "$(grep -c . "$tmp/err")" = 1 ]; then
		echo "ok render $spec refused without a policy (its profile)"
	else
		echo "FAIL render $spec with the built-in policy"
		sed 's/^/    /' "$tmp/err"
	fi
done
files+=(deploy/kubernetes/rbac.yaml deploy/kubernetes/berth-serve.yaml deploy/kubernetes/postgresql.yaml)
# the validator itself: good fixtures pass, bad ones are refused with the expected words
# (the operators' resources among them: crds/*.json and the core types they embed)
bash tests/schema/selftest.sh 2>&1 | sed -n 's/^\(ok\|FAIL\) /\1 validator /p'
node tests/schema/validate.js "${files[@]}" 2>"$tmp/schema"
rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 1 ]; then
	echo "FAIL schema validator (exit $rc)"
	sed 's/^/    /' "$tmp/schema" | head -20
	exit 0
fi
for f in "${files[@]}"; do
	if grep -qF "$f" "$tmp/schema"; then
		echo "FAIL schema $f"
		grep -F "$f" "$tmp/schema" | sed 's/^/    /' | head -10
	else
		echo "ok schema $f"
	fi
done

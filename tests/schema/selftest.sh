#!/usr/bin/env bash
# Self-test of the schema validator: every fixture in fixtures/good must
# validate (exit 0, no output); every fixture in fixtures/bad must be rejected
# as invalid (exit 1, not a parse/usage error 2) and, when the fixture has a
# `# expect: TEXT` line, TEXT must appear in the validator's stderr.
#
# Needs the npm dependencies: scripts/deps-npm.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
validate=("${NODE:-node}" "$here/validate.js")
pass=0
fail=0
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT

result() { # result OK|FAIL NAME [detail]
	if [ "$1" = ok ]; then
		echo "ok $2"
		pass=$((pass + 1))
	else
		echo "FAIL $2${3:+: $3}"
		fail=$((fail + 1))
	fi
}

shopt -s nullglob
good=("$here"/fixtures/good/*)
bad=("$here"/fixtures/bad/*)
if [ ${#good[@]} -eq 0 ] || [ ${#bad[@]} -eq 0 ]; then
	echo "selftest: no fixtures under $here/fixtures" >&2
	exit 2
fi

for f in "${good[@]}"; do
	name="good/$(basename "$f")"
	"${validate[@]}" "$f" >"$tmp" 2>&1
	rc=$?
	if [ $rc -eq 0 ] && [ ! -s "$tmp" ]; then
		result ok "$name"
	else
		result FAIL "$name" "exit $rc"
		sed 's/^/    /' "$tmp"
	fi
done

for f in "${bad[@]}"; do
	name="bad/$(basename "$f")"
	"${validate[@]}" "$f" >"$tmp" 2>&1
	rc=$?
	expect=$(sed -n 's/^# expect: //p' "$f" | head -n 1)
	if [ $rc -ne 1 ]; then
		result FAIL "$name" "exit $rc, want 1"
		sed 's/^/    /' "$tmp"
	elif [ -n "$expect" ] && ! grep -qF -- "$expect" "$tmp"; then
		result FAIL "$name" "stderr lacks: $expect"
		sed 's/^/    /' "$tmp"
	else
		result ok "$name"
	fi
done

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]

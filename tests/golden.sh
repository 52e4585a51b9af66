#!/usr/bin/env bash
# Golden cases: tests/golden/<verb>/<case>/ holds the input (spec.yaml or
# spec.json), `expected` (what berth writes to stderr) and `status` (its exit
# status). Each case prints "ok NAME" or "FAIL NAME" with a diff.
#   tests/golden.sh BERTH [--update]   (--update rewrites expected/status: review the diff!)
set -u
berth=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
update=${2:-}
root=$(cd "$(dirname "$0")" && pwd)/golden
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
for dir in "$root"/validate/*/; do
	name=validate/$(basename "$dir")
	spec=$(cd "$dir" && ls spec.* 2>/dev/null | head -1)
	(cd "$dir" && ${BERTH_WRAP:-} "$berth" validate "$spec" >"$out" 2>"$err")
	status=$?
	if [ "$update" = --update ]; then
		cp "$err" "$dir/expected"
		echo "$status" >"$dir/status"
	fi
	want=$(cat "$dir/status" 2>/dev/null || echo missing)
	if [ "$status" = "$want" ] && diff -u "$dir/expected" "$err" >/dev/null 2>&1; then
		echo "ok $name"
	else
		echo "FAIL $name (exit $status, expected $want)"
		diff -u "$dir/expected" "$err" | sed 's/^/    /' | head -40
	fi
done

#!/usr/bin/env bash
# Golden cases of the merge and the renderer: tests/data/render/<case>/ holds
#   spec.yaml      the run spec(s)
#   policy.yaml    the platform policy (optional; with profiles.d/ beside it)
#   cmd            the verb and flags (optional; default "render")
#   expected       what berth writes to stdout
#   stderr         what it writes to stderr (optional: must then be empty)
#   status         its exit status
# berth runs in the case's folder with --run-id t1 (byte-stable output).
# Each case prints "ok NAME" or "FAIL NAME" with a diff.
#   tests/render.sh BERTH [--update]   (--update rewrites the expectations: review the diff!)
set -u
berth=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
update=${2:-}
root=$(cd "$(dirname "$0")" && pwd)/data/render
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
for dir in "$root"/*/; do
	name=render/$(basename "$dir")
	cmd="render"
	[ -f "$dir/cmd" ] && cmd=$(cat "$dir/cmd")
	config=()
	[ -f "$dir/policy.yaml" ] && config=(--config policy.yaml)
	read -r verb flags <<<"$cmd"
	args=(spec.yaml --run-id t1)
	[ "$verb" = profiles ] && args=()
	# shellcheck disable=SC2086 # flags are words
	(cd "$dir" && env -u BERTH_CONFIG ${BERTH_WRAP:-} "$berth" "$verb" "${args[@]}" "${config[@]}" $flags \
		>"$out" 2>"$err")
	status=$?
	if [ "$update" = --update ]; then
		cp "$out" "$dir/expected"
		if [ -s "$err" ]; then cp "$err" "$dir/stderr"; else rm -f "$dir/stderr"; fi
		echo "$status" >"$dir/status"
	fi
	want=$(cat "$dir/status" 2>/dev/null || echo missing)
	experr=/dev/null
	[ -f "$dir/stderr" ] && experr=$dir/stderr
	if [ "$status" = "$want" ] && diff -u "$dir/expected" "$out" >/dev/null 2>&1 &&
		diff -u "$experr" "$err" >/dev/null 2>&1; then
		echo "ok $name"
	else
		echo "FAIL $name (exit $status, expected $want)"
		diff -u "$dir/expected" "$out" | sed 's/^/    /' | head -30
		diff -u "$experr" "$err" | sed 's/^/    /' | head -20
	fi
done

#!/usr/bin/env bash
# CLI behaviour: exit statuses, stdin, help, version, several files.
# Prints "ok NAME" / "FAIL NAME" per check.
set -u
berth=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$(dirname "$0")/.." && pwd)
g=$root/tests/golden/validate
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# check NAME WANT_STATUS WANT_GREP_PATTERN(stdout+stderr) -- CMD...
check() {
	local name=$1 want=$2 pat=$3
	shift 4
	"$@" >"$tmp/out" 2>&1
	local st=$?
	local seen=1
	if [ "$pat" = EMPTY ]; then [ -s "$tmp/out" ] || seen=0; else grep -qE -- "$pat" "$tmp/out" && seen=0; fi
	if [ "$st" = "$want" ] && [ $seen = 0 ]; then
		echo "ok cli $name"
	else
		echo "FAIL cli $name (exit $st, want $want, pattern '$pat')"
		sed 's/^/    /' "$tmp/out" | head -10
	fi
}

check valid-file 0 'spec.yaml: valid \(1 run\)' -- sh -c "cd $g/001-seed001-resources && $berth validate spec.yaml"
check invalid-file 2 '^spec.yaml:1:10: project: "Vision"' -- sh -c "cd $g/104-names && $berth validate spec.yaml"
check stdin 0 '<stdin>: valid \(11 runs\)' -- sh -c "$berth validate - < $g/005-seed001-each-field/spec.yaml"
check stdin-invalid 2 '^<stdin>:3:3: resources.memory: unknown key' -- sh -c "$berth validate - < $g/100-unknown-keys/spec.yaml"
check stdin-twice 2 'standard input given twice' -- sh -c "$berth validate - - < /dev/null"
check missing-file 1 'cannot open "nope.yaml": No such file' -- "$berth" validate nope.yaml
check several-files 2 'valid \(1 run\).*|104-names' -- "$berth" validate "$g/001-seed001-resources/spec.yaml" "$g/104-names/spec.yaml"
check all-reported 2 '104-names/spec.yaml:9:78' -- "$berth" validate "$g/001-seed001-resources/spec.yaml" "$g/104-names/spec.yaml"
check quiet 0 EMPTY -- "$berth" validate -q "$g/001-seed001-resources/spec.yaml"
check no-file 2 'no file given' -- "$berth" validate
check bad-option 2 'unknown option "--frobnicate"' -- "$berth" validate --frobnicate x.yaml
check dashdash 1 'cannot open "-q"' -- "$berth" validate -- -q
check help 0 '^usage: berth' -- "$berth" --help
check help-verb 0 '^usage: berth validate' -- "$berth" help validate
check help-flag 0 '^usage: berth validate' -- "$berth" validate --help
check help-unknown 2 'no verb "frob"' -- "$berth" help frob
check unknown-verb 2 'unknown verb "frob"' -- "$berth" frob
check no-verb 2 '^usage: berth' -- "$berth"
check version 0 "^berth $(cat "$root/VERSION")\$" -- "$berth" --version
check version-verb 0 "^berth $(cat "$root/VERSION")\$" -- "$berth" version
printf 'resources: {cpu: "1"}\n' >"$tmp/big.yaml"
head -c 5000000 /dev/zero | tr '\0' '#' >>"$tmp/big.yaml"
check too-big 2 'larger than 4194304 bytes' -- "$berth" validate "$tmp/big.yaml"
check directory 1 'cannot read' -- "$berth" validate "$tmp"

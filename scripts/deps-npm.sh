#!/usr/bin/env bash
# Installs the npm packages of the tests from each directory's package-lock.json:
#   tests/schema: the Kubernetes schema tests (kubernetes-models, yaml);
#   tests/ui:     the browser tests of the web UI (playwright-core, which drives
#                 Debian's chromium and never downloads a browser of its own).
# Idempotent and quiet when they are there already; prints one line per
# directory when it does work.  Needs node >= 18 and npm (Debian 12: apt
# packages nodejs, npm; scripts/deps.sh installs them).
set -eu
cd "$(dirname "$0")/.."
dirs=(tests/schema tests/ui)

die() {
	echo "deps-npm: $*" >&2
	exit 1
}

command -v node >/dev/null 2>&1 || die "node not found; install Debian's nodejs and npm (apt-get install nodejs npm), or run scripts/deps.sh"
command -v npm >/dev/null 2>&1 || die "npm not found; install Debian's npm (apt-get install npm), or run scripts/deps.sh"
major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null) || die "node does not run"
[ "$major" -ge 18 ] 2>/dev/null || die "node $(node --version) is too old; need >= 18"

log=$(mktemp)
trap 'rm -f "$log"' EXIT
for dir in "${dirs[@]}"; do
	lock=$dir/package-lock.json
	stamp=$dir/node_modules/.berth-npm-ci
	[ -f "$lock" ] || die "$lock missing"

	# Up to date: a completed `npm ci` left the stamp, newer than the manifests.
	if [ -f "$stamp" ] && [ ! "$lock" -nt "$stamp" ] && [ ! "$dir/package.json" -nt "$stamp" ]; then
		continue
	fi

	echo "deps: npm ci $dir"
	# --ignore-scripts: nothing in the tree needs an install script; never let one
	# fetch binaries (a browser, above all).
	if ! npm ci --no-audit --no-fund --ignore-scripts --loglevel=error --prefix "$dir" >"$log" 2>&1; then
		cat "$log" >&2
		die "npm ci failed in $dir"
	fi
	touch "$stamp"
done

#!/usr/bin/env bash
# Installs the npm packages of the Kubernetes schema tests (tests/schema:
# kubernetes-models, yaml) from tests/schema/package-lock.json.
# Idempotent and quiet when they are there already; prints one line when it
# does work.  Needs node >= 18 and npm (Debian 12: apt packages nodejs, npm;
# scripts/deps.sh installs them).
set -eu
cd "$(dirname "$0")/.."
dir=tests/schema
lock=$dir/package-lock.json
stamp=$dir/node_modules/.berth-npm-ci

die() {
	echo "deps-npm: $*" >&2
	exit 1
}

command -v node >/dev/null 2>&1 || die "node not found; install Debian's nodejs and npm (apt-get install nodejs npm), or run scripts/deps.sh"
command -v npm >/dev/null 2>&1 || die "npm not found; install Debian's npm (apt-get install npm), or run scripts/deps.sh"
major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null) || die "node does not run"
[ "$major" -ge 18 ] 2>/dev/null || die "node $(node --version) is too old; need >= 18"
[ -f "$lock" ] || die "$lock missing"

# Up to date: a completed `npm ci` left the stamp, newer than the manifests.
if [ -f "$stamp" ] && [ ! "$lock" -nt "$stamp" ] && [ ! "$dir/package.json" -nt "$stamp" ]; then
	exit 0
fi

echo "deps: npm ci $dir"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# --ignore-scripts: nothing in the tree needs an install script; never let one
# fetch binaries.
if ! npm ci --no-audit --no-fund --ignore-scripts --loglevel=error --prefix "$dir" >"$log" 2>&1; then
	cat "$log" >&2
	die "npm ci failed in $dir"
fi
touch "$stamp"

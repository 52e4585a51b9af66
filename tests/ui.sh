#!/usr/bin/env bash
# The browser tests of the web UI: playwright-core (tests/ui/node_modules) driving
# Debian's chromium (/usr/bin/chromium, or $CHROMIUM) headless against a
# `berth serve` on loopback with the example policy; the cases are in
# tests/ui/cases.mjs, the runner is tests/ui/run.mjs.  Screenshots stay in
# $BERTH_ARTIFACTS (default build/test/ui-artifacts, emptied first).
# Prints "ok NAME" / "FAIL NAME: why" per case, then whether the server's log
# is free of sanitizer reports.
#   tests/ui.sh BERTH
set -u
berth=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
chromium=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$chromium" ]; then
	echo "FAIL ui: $chromium missing (Debian's chromium: run scripts/deps.sh)"
	exit 0
fi
if ! command -v node >/dev/null || [ ! -d tests/ui/node_modules/playwright-core ]; then
	echo "FAIL ui: node or tests/ui/node_modules/playwright-core missing: run scripts/deps.sh"
	exit 0
fi
artifacts=${BERTH_ARTIFACTS:-build/test/ui-artifacts}
case "$artifacts" in /*) ;; *) artifacts=$root/$artifacts ;; esac
rm -rf "$artifacts"
mkdir -p "$artifacts"

tmp=$(mktemp -d)
export BERTH_HOME=$tmp/home
unset BERTH_CONFIG BERTH_SERVER BERTH_TOKEN
spid=
cleanup() {
	[ -n "$spid" ] && kill -9 "$spid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# the example policy, on a machine big enough for every example, with the labels
# the seeds' node selectors ask for (as sdk/python/tests/test_sdk.py)
cp -r examples/policy "$tmp/policy"
cfg=$tmp/policy/config.yaml
sed -i 's/  disable_root: true/  disable_root: false/' "$cfg"
cat >>"$cfg" <<'EOF'

local:
  capacity: {cpu: "96", mem: 2Ti, gpu: "8", disk: 10Ti}
  labels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB, app.iguazio.com/lifecycle: non-preemptible}
  grace_period: 1
  # the queue's order (tests/ui/cases.mjs: the queue page)
  priority_values: {berth-high: 1000, berth-medium: 500, berth-low: 100}
# a team's overlay (tests/ui/cases.mjs: project-view-and-volume-mode)
projects:
  team:
    profiles:
      - {id: team-gpu, description: the team's own, resources: {gpu: 1}}
    defaults:
      volumes:
        - {volume_type: empty_dir, name: team-scratch, mount_path: /team-scratch}
EOF

# token ROLE: a token of project demo; the token is the last line printed
token() {
	"$berth" token create --project demo --role "$1" 2>"$tmp/err" | tail -n 1
}
admin=$(token admin) && user=$(token user) && viewer=$(token viewer)
# an admin of every project (the projects page creates one)
star=$("$berth" token create --project '*' --role admin 2>>"$tmp/err" | tail -n 1)
if [ -z "$admin" ] || [ -z "$user" ] || [ -z "$viewer" ] || [ -z "$star" ]; then
	echo "FAIL ui: berth token create"
	sed 's/^/    /' "$tmp/err" | head -20
	exit 0
fi

slog=$tmp/serve.log
: >"$slog" # there before the server writes it: the wait below reads it at once
# each run's use sampled every 200 ms (the charts of a run's page), not 5 s
BERTH_SAMPLE_MS=200 "$berth" serve --listen 127.0.0.1:0 --config "$cfg" 2>"$slog" &
spid=$!
port=
for _ in $(seq 200); do
	port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$slog" | head -n 1)
	[ -n "$port" ] && break
	kill -0 "$spid" 2>/dev/null || break
	sleep 0.05
done
if [ -z "$port" ]; then
	echo "FAIL ui: berth serve did not start"
	tail -30 "$slog" | sed 's/^/    /'
	exit 0
fi

BERTH_URL=http://127.0.0.1:$port BERTH_ADMIN_TOKEN=$admin BERTH_USER_TOKEN=$user \
	BERTH_VIEWER_TOKEN=$viewer BERTH_STAR_TOKEN=$star BERTH_ARTIFACTS=$artifacts CHROMIUM=$chromium \
	node tests/ui/run.mjs >"$tmp/out" 2>&1
rc=$?
cat "$tmp/out"
if [ $rc -ne 0 ]; then
	echo "FAIL ui: tests/ui/run.mjs exited $rc"
	grep -Ev '^(ok|FAIL|skip) ' "$tmp/out" | tail -20 | sed 's/^/    /'
fi

# SIGTERM, then 10 s for the server to finish what it has in hand
kill -TERM "$spid" 2>/dev/null
for _ in $(seq 200); do
	kill -0 "$spid" 2>/dev/null || break
	sleep 0.05
done
if kill -0 "$spid" 2>/dev/null; then
	echo "FAIL ui-server-stop: berth serve still runs 10 s after SIGTERM"
	kill -9 "$spid" 2>/dev/null
fi
wait "$spid" 2>/dev/null
spid=
if grep -q -e AddressSanitizer -e 'runtime error:' "$slog"; then
	echo "FAIL ui-server-clean: the server's log has a sanitizer report"
	tail -40 "$slog" | sed 's/^/    /'
else
	echo "ok ui-server-clean"
fi

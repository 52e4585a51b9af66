# tests/serve_lib.sh - what the tiers that drive `berth serve` over HTTP share (sourced by
# tests/server.sh and tests/load.sh, which set berth, tmp, tier and pids first):
#   ok NAME / fail NAME WHY   a check's line ("ok TIER NAME", "FAIL TIER NAME: WHY")
#   json EXPR < body          a value of a JSON document (python3's json, the reference parser)
#   start [FLAGS]             a server on a free port, with $tmp/policy.yaml; sets port, url,
#                             spid and slog (one log per start: every one is checked at the end);
#                             fails when it does not listen
#   alive                     the server runs and /healthz answers 200
#   stop_server               SIGTERM, and waits for it
#   call [-t TOKEN] METHOD PATH [curl args]
#                             the status; the body in $tmp/body (and appended to $tmp/all-bodies)
#   serve_setup [TAG]         for a tier of its own: tmp (removed at exit, with every server
#                             started killed, and every `sleep TAG` the tier's runs left),
#                             BERTH_HOME in it, no BERTH_* of the caller's, a small
#                             $tmp/policy.yaml; cd there
#   wait_final ID             the run's final state (as TOKEN tok if set; polled, 60 s at most),
#                             else its last state
#   count_final FILE          of the run IDs in FILE (one a line), sets missing (not found) and
#                             unfinished (not Succeeded or Failed)
#   on_test_store             with BERTH_TEST_STORE=postgresql (tests/run.sh server-pg), a new
#                             database of the tier's PostgreSQL in $BERTH_STORE (every berth of
#                             the tier reads it), else nothing: the store is $BERTH_HOME/berth.db
#   store_sql < SQL           SQL on the store itself, past berth (a state set up by hand)
#   store_dump                every byte the store keeps (what must never hold a secret)

ok() { echo "ok $tier $1"; }
fail() {
	echo "FAIL $tier $1: $2"
	[ -f "$tmp/out" ] && sed 's/^/    /' "$tmp/out" | head -15
}
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

on_test_store() {
	[ "${BERTH_TEST_STORE:-}" = postgresql ] || return 0
	. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/pg_lib.sh"
	PG_DIR=$BERTH_TEST_PG_HOST PG_PORT=$BERTH_TEST_PG_PORT
	pg_newdb "berth_${tier//-/_}_$$" || return 1
	export BERTH_STORE
	BERTH_STORE=$(pg_url "berth_${tier//-/_}_$$")
}
store_sql() {
	if [ -n "${BERTH_STORE:-}" ]; then
		psql -q -X -v ON_ERROR_STOP=1 "$BERTH_STORE" -f - >/dev/null
	else
		python3 -c 'import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); db.executescript(sys.stdin.read()); db.commit()' \
			"$BERTH_HOME/berth.db"
	fi
}
store_dump() {
	if [ -n "${BERTH_STORE:-}" ]; then
		"${PG_BIN:-/usr/lib/postgresql/15/bin}/pg_dump" -a "$BERTH_STORE"
	else
		cat "$BERTH_HOME"/berth.db*
	fi
}

start() {
	starts=$((${starts:-0} + 1))
	slog=$tmp/serve.$starts.log
	"$berth" serve --listen 127.0.0.1:0 --config "$tmp/policy.yaml" "$@" 2>"$slog" &
	spid=$!
	pids+=("$spid")
	port=
	for _ in $(seq 100); do
		port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$slog" 2>/dev/null)
		[ -n "$port" ] && break
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.05
	done
	url=http://127.0.0.1:$port
	[ -n "$port" ]
}
alive() { kill -0 "$spid" 2>/dev/null && [ "$(call GET /healthz)" = 200 ]; }
stop_server() { kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null; }

call() {
	local auth=()
	if [ "$1" = -t ]; then auth=(-H "Authorization: Bearer $2"); shift 2; fi
	local m=$1 p=$2
	shift 2
	curl -s -m 30 -o "$tmp/body" -w '%{http_code}' -X "$m" "${auth[@]}" "$url$p" "$@"
	cat "$tmp/body" >>"$tmp/all-bodies" 2>/dev/null
}

serve_setup() {
	tmp=$(mktemp -d)
	export BERTH_HOME=$tmp/home
	unset BERTH_CONFIG BERTH_SERVER BERTH_TOKEN BERTH_CACERT BERTH_STORE
	pids=()
	sleep_tag=${1:-}
	trap serve_cleanup EXIT
	cd "$tmp" || exit 1
	printf 'local:\n  capacity: {cpu: "1", mem: 1Gi}\n' >policy.yaml
}
serve_cleanup() {
	local p
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	if [ -n "$sleep_tag" ]; then
		for p in $(pgrep -f "^sleep $sleep_tag\$"); do kill -9 "$p" 2>/dev/null; done
	fi
	rm -rf "$tmp"
}

wait_final() {
	local s=
	for _ in $(seq 1200); do
		call ${tok:+-t "$tok"} GET "/api/v1/runs/$1" >/dev/null
		s=$(json 'd["state"]' <"$tmp/body" 2>/dev/null)
		case "$s" in Succeeded | Failed | Stopped) break ;; esac
		sleep 0.05
	done
	echo "$s"
}
# wait_idle: until no run is Pending or Running (a run admitted by a server killed before it
# recorded its supervisor holds what it asked for until recovery takes it: 30 s); prints
# what is still not final after 45 s. A list that cannot be read (not answered, not 200: the
# body is then another call's, or an error) is not an idle store
wait_idle() {
	local left= code
	for _ in $(seq 450); do
		code=$(call GET '/api/v1/runs?limit=1000')
		if [ "$code" = 200 ] &&
			left=$(json '"; ".join("%s %s %s" % (r["id"], r["name"], r["state"]) for r in d["items"] if r["state"] in ("Pending", "Running"))' <"$tmp/body" 2>/dev/null); then
			[ -z "$left" ] && return 0
		else
			left="the list of runs unread (HTTP $code)"
		fi
		sleep 0.1
	done
	echo "$left"
}
count_final() {
	local id s
	missing=0 unfinished=0
	for id in $(cat "$1"); do
		s=$(wait_final "$id")
		case "$s" in Succeeded | Failed) ;; "") missing=$((missing + 1)) ;; *) unfinished=$((unfinished + 1)) ;; esac
	done
}

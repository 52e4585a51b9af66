#!/usr/bin/env bash
# berth serve, driven over HTTP on loopback (curl): the run lifecycle, auth
# across projects, secrets never shown, 422 with positions, 413, 404, 405,
# the OpenAPI document against the route table, metrics, and recovery after
# kill -9 of the server while runs are being submitted.
# Prints "ok NAME" / "FAIL NAME" per check.
#   tests/server.sh BERTH
set -u
berth=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
export BERTH_HOME=$tmp/home
unset BERTH_CONFIG BERTH_SERVER BERTH_TOKEN
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	pkill -f "sleep 3600.5" 2>/dev/null
	for id in $("$berth" get runs --state Running -o json 2>/dev/null | sed -n 's/.*"id": "\(.*\)".*/\1/p'); do
		"$berth" stop "$id" --grace 0 >/dev/null 2>&1
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
cd "$tmp" || exit 1
ok() { echo "ok server $1"; }
fail() {
	echo "FAIL server $1: $2"
	[ -f "$tmp/out" ] && sed 's/^/    /' "$tmp/out" | head -15
}
# json EXPR < body: a value of a JSON document (python3's json, the reference parser)
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

cat >policy.yaml <<'EOF'
local:
  capacity: {cpu: "2", mem: 2Gi}
  grace_period: 1
EOF

# start [FLAGS]: a server on a free port; sets url and spid
start() {
	: >"$tmp/serve.log"
	"$berth" serve --listen 127.0.0.1:0 --config "$tmp/policy.yaml" "$@" 2>>"$tmp/serve.log" &
	spid=$!
	pids+=("$spid")
	for _ in $(seq 100); do
		port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$tmp/serve.log" | tail -1)
		[ -n "$port" ] && break
		sleep 0.05
	done
	url=http://127.0.0.1:$port
}
stop_server() { kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null; }

# call [-t TOKEN] METHOD PATH [curl args]: body in $tmp/body, status echoed
call() {
	local auth=()
	if [ "$1" = -t ]; then auth=(-H "Authorization: Bearer $2"); shift 2; fi
	local m=$1 p=$2
	shift 2
	curl -s -o "$tmp/body" -w '%{http_code}' -X "$m" "${auth[@]}" "$url$p" "$@"
	cat "$tmp/body" >>"$tmp/all-bodies"
}

spec() { # NAME CMD [PROJECT]
	printf 'project: %s\nfunction:\n  name: %s\n  image: busybox\n  command: [sh, -c, %s]\nresources: {cpu: 100m, mem: 32Mi}\n' \
		"${3:-default}" "$1" "'$2'"
}

# wait_final ID: the run's final state (as TOKEN tok if set)
wait_final() {
	for _ in $(seq 200); do
		call ${tok:+-t "$tok"} GET "/api/v1/runs/$1" >/dev/null
		s=$(json 'd["state"]' <"$tmp/body" 2>/dev/null)
		case "$s" in Succeeded | Failed | Stopped) echo "$s"; return 0 ;; esac
		sleep 0.05
	done
	echo "$s"
}

# ---- tokens, then a server that needs them -------------------------------------------
admin=$("$berth" token create --project '*' --role admin 2>/dev/null)
usera=$("$berth" token create --project alpha --role user 2>/dev/null)
viewa=$("$berth" token create --project alpha --role viewer 2>/dev/null)
adminb=$("$berth" token create --project beta --role admin 2>/dev/null)
if [ -n "$admin" ] && [ -n "$usera" ] && "$berth" token list >out && grep -q 'role: viewer' out &&
	! grep -q "$usera" out && ! grep -q "${usera#berth_}" "$BERTH_HOME/berth.db"; then
	ok token-create-hashed
else
	fail token-create-hashed "tokens: '$admin' '$usera'"
fi
start
[ -n "${port:-}" ] || { fail start "no port in the log"; cat "$tmp/serve.log"; exit 0; }

# ---- health, metrics, OpenAPI ----------------------------------------------------------
if [ "$(call GET /healthz)" = 200 ] && [ "$(json 'd["status"]' <body)" = ok ]; then
	ok healthz
else
	fail healthz "$(cat body)"
fi
st=$(call GET /api/v1/openapi.json)
"$berth" serve --routes | sort >routes
json '"\n".join(sorted(m.upper()+" "+p for p,o in d["paths"].items() for m in o if m in ("get","post","put","delete","patch")))' <body >documented
if [ "$st" = 200 ] && [ -s routes ] && diff routes documented >out; then
	ok openapi-every-route
else
	fail openapi-every-route "routes (<) and the document (>) differ"
fi
if [ -d "$root/tests/schema/node_modules/@apidevtools/swagger-parser" ]; then
	node "$root/tests/schema/openapi.js" body >out 2>&1 && grep -q '^ok' out && ok openapi-valid ||
		fail openapi-valid "$(cat out)"
else
	echo "skip server openapi-valid (tests/schema has no node_modules: scripts/deps-npm.sh)"
fi

# ---- refusals: 401, 403, 404, 405, 413 -------------------------------------------------
spec hello 'echo hello from $BERTH_RUN_ID' alpha >hello.yaml
s1=$(call POST /api/v1/runs --data-binary @hello.yaml)
grep -q '"unauthorized"' body && h1=$(curl -s -D - -o /dev/null -X POST "$url/api/v1/runs" | grep -ci 'www-authenticate: bearer')
s2=$(call -t berth_not-a-real-token GET /api/v1/runs)
if [ "$s1" = 401 ] && [ "${h1:-0}" = 1 ] && [ "$s2" = 401 ] && grep -q '"error"' body; then
	ok auth-401
else
	fail auth-401 "no token: $s1, bad token: $s2"
fi
s1=$(call -t "$viewa" POST /api/v1/runs --data-binary @hello.yaml)
s2=$(call -t "$adminb" POST /api/v1/projects/alpha/runs --data-binary @hello.yaml)
s3=$(call -t "$usera" PUT /api/v1/projects/alpha/secrets/db -d '{"value": "x"}')
s4=$(call -t "$usera" GET /api/v1/projects/beta/runs)
s5=$(call -t "$usera" POST /api/v1/projects --data '{"name": "gamma"}')
s6=$(call -t "$usera" GET /api/v1/policy)
if [ "$s1$s2$s3$s4$s5$s6" = 403403403403403403 ] && grep -q '"forbidden"' body; then
	ok auth-403-roles-and-projects
else
	fail auth-403-roles-and-projects "viewer run $s1, other project $s2, user secret $s3, other list $s4, project $s5, policy $s6"
fi
s1=$(call -t "$admin" GET /api/v1/nothing)
s2=$(call -t "$admin" DELETE /api/v1/projects)
allow=$(curl -s -D - -o /dev/null -X DELETE -H "Authorization: Bearer $admin" "$url/api/v1/projects" | tr -d '\r' | sed -n 's/^Allow: //p')
s3=$(call -t "$admin" GET /api/v1/runs/nosuchrun)
if [ "$s1$s2$s3" = 404405404 ] && [ "$allow" = "GET, POST" ]; then
	ok 404-405
else
	fail 404-405 "route $s1, method $s2 (Allow '$allow'), run $s3"
fi
head -c 3000000 /dev/zero | tr '\0' a >huge
s1=$(call -t "$usera" POST /api/v1/runs --data-binary @huge)
s2=$(call -t "$usera" POST /api/v1/runs -H 'Transfer-Encoding: chunked' --data-binary @huge)
if [ "$s1$s2" = 413413 ] && grep -q '"too-big"' body && kill -0 "$spid"; then
	ok 413-body-cap
else
	fail 413-body-cap "declared $s1, chunked $s2"
fi

# ---- 422: every problem, with positions, as the CLI prints them ---------------------------
printf 'project: alpha\nfunction:\n  name: bad\n  command: [x]\nresources:\n  mem: 32Gb\n  cpu: "-1"\nnode_selectr: {a: b}\n' >bad.yaml
st=$(call -t "$usera" POST '/api/v1/runs?file=bad.yaml' --data-binary @bad.yaml)
"$berth" validate bad.yaml 2>cli.txt
json '"\n".join(p["text"] for p in d["error"]["problems"])' <body >api.txt
if [ "$st" = 422 ] && [ "$(json 'len(d["error"]["problems"])' <body)" = 3 ] &&
	[ "$(json 'd["error"]["problems"][0]["line"]' <body)" = 6 ] &&
	[ "$(json 'd["error"]["problems"][0]["column"]' <body)" = 8 ] && diff cli.txt api.txt >out; then
	ok 422-problems-with-positions
else
	fail 422-problems-with-positions "status $st"
fi
"$berth" get runs -o json >out 2>&1
if grep -q '"name": "bad' out; then fail 422-nothing-created "a refused run was stored"; else ok 422-nothing-created; fi

# ---- the lifecycle of a run -------------------------------------------------------------
st=$(call -t "$usera" POST /api/v1/projects/alpha/runs --data-binary @hello.yaml)
id=$(json 'd["id"]' <body 2>/dev/null)
final=$(tok=$usera wait_final "$id")
if [ "$st" = 201 ] && [ "$final" = Succeeded ]; then ok create-to-succeeded; else fail create-to-succeeded "status $st, state $final"; fi
call -t "$viewa" GET "/api/v1/runs/$id/logs" >/dev/null
if grep -qx "hello from $id" body; then ok logs; else fail logs "$(head -3 body)"; fi
call -t "$viewa" GET "/api/v1/runs/$id/spec" >/dev/null
if json 'd["run"]["id"]' <body | grep -qx "$id" && grep -q '"origin"' body; then ok effective-spec-origins; else fail effective-spec-origins "$(head -c 300 body)"; fi
st=$(call -t "$viewa" GET "/api/v1/runs/$id/manifests")
if [ "$st" = 200 ] && json '[o["kind"] for o in (d if isinstance(d, list) else d.get("items", [d]))]' <body | grep -q Job &&
	[ "$(call -t "$viewa" GET "/api/v1/runs/$id/manifests?format=yaml")" = 200 ] && grep -q '^kind: Job' body; then
	ok manifests
else
	fail manifests "status $st: $(head -c 200 body)"
fi
call -t "$viewa" GET "/api/v1/runs/$id/events" >/dev/null
if [ "$(json '",".join(e["kind"] for e in d["items"])' <body)" = "Submitted,Scheduled,Started,Succeeded" ]; then ok events; else fail events "$(cat body)"; fi
s1=$(call -t "$viewa" DELETE "/api/v1/runs/$id")
s2=$(call -t "$usera" DELETE "/api/v1/runs/$id")
s3=$(call -t "$usera" GET "/api/v1/runs/$id")
if [ "$s1$s2$s3" = 403204404 ] && [ ! -d "$BERTH_HOME/runs/$id" ]; then ok delete; else fail delete "viewer $s1, user $s2, after $s3"; fi

# stop: a long run, stopped and waited for; delete refused while it runs
spec sleeper 'sleep 3600.5' alpha >sleeper.yaml
call -t "$usera" POST /api/v1/runs --data-binary @sleeper.yaml >/dev/null
sid=$(json 'd["id"]' <body)
s1=$(call -t "$usera" DELETE "/api/v1/runs/$sid")
s2=$(call -t "$usera" POST "/api/v1/runs/$sid/stop?grace=0&wait=true")
if [ "$s1" = 409 ] && [ "$s2" = 200 ] && [ "$(json 'd["state"]' <body)" = Stopped ] && ! pgrep -f "sleep 3600.5" >/dev/null; then
	ok stop
else
	fail stop "delete while running $s1, stop $s2: $(json 'd.get("state")' <body)"
fi

# logs -f streams while the run writes
spec ticker 'for i in 1 2 3; do echo tick $i; sleep 0.3; done' alpha >ticker.yaml
call -t "$usera" POST /api/v1/runs --data-binary @ticker.yaml >/dev/null
tid=$(json 'd["id"]' <body)
curl -s -N -H "Authorization: Bearer $usera" "$url/api/v1/runs/$tid/logs?follow=true" >follow.txt
if [ "$(cat follow.txt)" = "$(printf 'tick 1\ntick 2\ntick 3')" ]; then ok logs-follow; else fail logs-follow "$(cat follow.txt)"; fi

# paging: every run once, newest first
for i in 1 2 3 4; do call -t "$usera" POST /api/v1/runs --data-binary @hello.yaml >/dev/null; done
seen="" after=""
for _ in 1 2 3 4 5 6 7 8; do
	call -t "$usera" GET "/api/v1/projects/alpha/runs?limit=2${after:+&after=$after}" >/dev/null
	seen="$seen $(json '" ".join(r["id"] for r in d["items"])' <body)"
	after=$(json 'd.get("next", "")' <body)
	[ -n "$after" ] || break
done
all=$(call -t "$usera" GET "/api/v1/projects/alpha/runs?limit=1000" >/dev/null; json '" ".join(r["id"] for r in d["items"])' <body)
if [ "$(echo $seen)" = "$all" ] && [ "$(echo $all | wc -w)" = 6 ]; then ok paging; else fail paging "pages '$seen' vs '$all'"; fi
s1=$(call -t "$adminb" GET "/api/v1/runs")
if [ "$s1" = 200 ] && [ "$(json 'len(d["items"])' <body)" = 0 ]; then ok list-only-own-projects; else fail list-only-own-projects "$s1 $(head -c 200 body)"; fi

# ---- secrets: set by an admin, used by a run, never shown ----------------------------------
value="v4lue-$RANDOM-never-shown"
s1=$(call -t "$admin" PUT /api/v1/projects/alpha/secrets/dbpass --data "{\"value\": \"$value\"}")
s2=$(call -t "$viewa" GET /api/v1/projects/alpha/secrets)
names=$(json '",".join(s["name"] for s in d["items"])' <body)
want=$(printf %s "$value" | sha256sum | cut -d' ' -f1)
printf 'project: alpha\nfunction:\n  name: usesecret\n  command: [sh, -c, "printf %%s \\"$dbpass\\" | sha256sum | cut -d\\" \\" -f1"]\nsecrets: [dbpass]\n' >usesecret.yaml
call -t "$usera" POST /api/v1/runs --data-binary @usesecret.yaml >/dev/null
uid=$(json 'd["id"]' <body)
final=$(tok=$usera wait_final "$uid")
call -t "$usera" GET "/api/v1/runs/$uid/logs" >/dev/null
matched=$(cat body)
for p in "/api/v1/runs/$uid" "/api/v1/runs/$uid/spec" "/api/v1/runs/$uid/manifests" "/api/v1/runs/$uid/events"; do
	call -t "$admin" GET "$p" >/dev/null
done
if [ "$s1$s2" = 204200 ] && [ "$names" = dbpass ] && [ "$final" = Succeeded ] && [ "$matched" = "$want" ] &&
	! grep -q "$value" "$tmp/all-bodies" "$tmp/serve.log" && ! grep -aq "$value" "$BERTH_HOME"/berth.db*; then
	ok secret-never-shown
else
	fail secret-never-shown "set $s1, list $s2 ($names), run $final ($matched)"
fi
s1=$(call -t "$usera" DELETE /api/v1/projects/alpha/secrets/dbpass)
s2=$(call -t "$admin" DELETE /api/v1/projects/alpha/secrets/dbpass)
s3=$(call -t "$admin" DELETE /api/v1/projects/alpha/secrets/dbpass)
if [ "$s1$s2$s3" = 403204404 ]; then ok secret-delete; else fail secret-delete "user $s1, admin $s2, again $s3"; fi

# ---- functions: registered once, named by runs --------------------------------------------
printf 'function:\n  name: train\n  command: [sh, -c, "echo epochs $0", "3"]\nresources: {cpu: 200m, mem: 48Mi}\nenvs: [{name: MODE, value: fn}]\n' >fn.yaml
s1=$(call -t "$usera" POST /api/v1/projects/alpha/functions --data-binary @fn.yaml)
s2=$(call -t "$usera" POST /api/v1/projects/alpha/functions --data-binary @fn.yaml)
printf 'project: alpha\nfunction: train\nresources: {mem: 64Mi}\n' >byname.yaml
call -t "$usera" POST /api/v1/runs --data-binary @byname.yaml >/dev/null
fid=$(json 'd["id"]' <body)
final=$(tok=$usera wait_final "$fid")
call -t "$usera" GET "/api/v1/runs/$fid/spec" >/dev/null
cpu_origin=$(json '[f["origin"] for f in d["fields"] if f["path"]=="resources.cpu.requests"][0]' <body 2>/dev/null)
mem_origin=$(json '[f["origin"] for f in d["fields"] if f["path"]=="resources.mem.requests"][0]' <body 2>/dev/null)
printf 'project: alpha\nfunction: nosuch\n' >nosuch.yaml
s3=$(call -t "$usera" POST /api/v1/runs --data-binary @nosuch.yaml)
if [ "$s1$s2" = 201200 ] && [ "$final" = Succeeded ] && [ "$cpu_origin" = function ] &&
	[ "$mem_origin" = "run spec" ] && [ "$s3" = 422 ] && grep -q 'no function \\"nosuch\\"' body; then
	ok functions
else
	fail functions "register $s1/$s2, run $final, origins cpu '$cpu_origin' mem '$mem_origin', unknown $s3"
fi

# ---- the CLI as a client ------------------------------------------------------------------
if id=$(BERTH_SERVER=$url BERTH_TOKEN=$usera "$berth" run hello.yaml --wait 2>out) &&
	BERTH_SERVER=$url BERTH_TOKEN=$usera "$berth" get run "$id" -o json | grep -q '"state": "Succeeded"' &&
	[ "$("$berth" --server "$url" --token "$usera" logs "$id")" = "hello from $id" ] &&
	BERTH_SERVER=$url BERTH_TOKEN=$viewa "$berth" get runs | grep -q "^$id "; then
	ok cli-client-run-get-logs
else
	fail cli-client-run-get-logs "id '$id'"
fi
BERTH_SERVER=$url BERTH_TOKEN=$usera "$berth" run bad.yaml 2>out
rc=$?
if [ $rc = 2 ] && diff cli.txt out >/dev/null; then ok cli-client-422-as-local; else fail cli-client-422-as-local "exit $rc"; fi
BERTH_SERVER=$url BERTH_TOKEN=$viewa "$berth" run hello.yaml 2>out
rc=$?
if [ $rc != 0 ] && grep -q 'viewer' out; then ok cli-client-403; else fail cli-client-403 "exit $rc"; fi

# ---- metrics -------------------------------------------------------------------------------
call GET /metrics >/dev/null
if grep -q '^berth_runs{state="Succeeded"} [1-9]' body && grep -q '^berth_queue_length ' body &&
	grep -q 'berth_http_request_duration_seconds_bucket{route="/api/v1/runs",method="POST",code="2xx",le="+Inf"}' body &&
	grep -q '^berth_store_duration_seconds_count [1-9]' body; then
	ok metrics
else
	fail metrics "$(head -20 body)"
fi
stop_server

# ---- insecure-local only on loopback ------------------------------------------------------------
"$berth" serve --listen 0.0.0.0:0 --insecure-local 2>out
if [ $? = 2 ] && grep -q loopback out; then ok insecure-local-loopback-only; else fail insecure-local-loopback-only "$(cat out)"; fi

# ---- kill -9 while runs are submitted: every 201 survives and ends ----------------------------
start --insecure-local
spec quick 'echo done' >quick.yaml
: >accepted
(
	for _ in $(seq 60); do
		id=$(curl -s -X POST --data-binary @quick.yaml "$url/api/v1/runs" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])' 2>/dev/null) &&
			echo "$id" >>accepted
	done
) &
loader=$!
sleep 0.6
kill -9 "$spid"
wait "$spid" 2>/dev/null
wait "$loader"
n=$(wc -l <accepted)
start --insecure-local
missing=0 unfinished=0
for id in $(cat accepted); do
	s=$(wait_final "$id")
	case "$s" in Succeeded | Failed) ;; "") missing=$((missing + 1)) ;; *) unfinished=$((unfinished + 1)) ;; esac
done
if [ "$n" -gt 0 ] && [ "$missing" = 0 ] && [ "$unfinished" = 0 ]; then
	ok "kill9-every-accepted-run-ends ($n accepted before and after the kill)"
else
	fail kill9-every-accepted-run-ends "$n accepted, $missing missing, $unfinished not final"
fi
stop_server
if [ -s "$tmp/serve.log" ] && grep -qi "sanitizer\|runtime error" "$tmp/serve.log"; then
	fail server-clean "$(grep -i -m3 'sanitizer\|runtime error' "$tmp/serve.log")"
else
	ok server-clean
fi

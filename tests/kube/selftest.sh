#!/usr/bin/env bash
# Self-check of the Kubernetes stand-in (tests/kube/apiserver.py), driven with curl.
# Prints "ok NAME" / "FAIL NAME" per check; exits nonzero on any failure.
#   tests/kube/selftest.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fails=0
ok() { echo "ok $1"; }
fail() {
	echo "FAIL $1: $2"
	[ -f "$tmp/out" ] && sed 's/^/    /' "$tmp/out" | head -10
	fails=$((fails + 1))
}
# check NAME CONDITION-EXIT-STATUS MESSAGE
check() { if [ "$2" = 0 ]; then ok "$1"; else fail "$1" "$3"; fi; }

"$here/certs.sh" "$tmp" || { echo "FAIL certs: certs.sh failed"; exit 1; }
token=selftest-token-123
python3 "$here/apiserver.py" --cert "$tmp/server.pem" --key "$tmp/server.key" \
	--client-ca "$tmp/ca.pem" --token "$token" --port-file "$tmp/port" \
	--log "$tmp/requests.jsonl" --bookmark-interval 0.3 2>"$tmp/server.err" &
pid=$!
for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
[ -s "$tmp/port" ] || { echo "FAIL start: no port file"; cat "$tmp/server.err"; exit 1; }
base=https://127.0.0.1:$(cat "$tmp/port")
ns=/api/v1/namespaces/t
batch=/apis/batch/v1/namespaces/t
APPLY='Content-Type: application/apply-patch+yaml'

# api METHOD PATH [CURL-ARGS...]: client-cert request; body to $tmp/${out:-out}, prints the HTTP code
api() {
	local m=$1 p=$2
	shift 2
	curl -sS -o "$tmp/${out:-out}" -w '%{http_code}' --cacert "$tmp/ca.pem" \
		--cert "$tmp/client.pem" --key "$tmp/client.key" -X "$m" "$base$p" "$@"
}
# apply PATH JSON [QUERY]: server-side apply as berth (fieldManager=berth unless QUERY overrides)
apply() { api PATCH "$1?${3:-fieldManager=berth}" -H "$APPLY" --data-binary "$2"; }
# ctl NAME JSON: a POST to the test controls
ctl() { curl -sS -o "$tmp/out" -w '%{http_code}' --cacert "$tmp/ca.pem" -X POST \
	-H 'Content-Type: application/json' "$base/_test/$1" -d "${2:-{\}}"; }
# j EXPR: evaluate a Python expression over d = the JSON in $tmp/out (or l = its lines' JSON)
j() { python3 -c "import json,sys; t=open('$tmp/out').read(); l=[json.loads(x) for x in t.splitlines() if x.strip()]; d=l[0] if len(l)==1 else None; print($1)"; }
t() { [ "$(j "$1")" = True ]; }
# started N: wait until the server has answered N streaming requests (watch or follow) so far
started() {
	for _ in $(seq 50); do
		curl -sS --cacert "$tmp/ca.pem" "$base/_test/requests" | python3 -c "import json,sys; sys.exit(sum(1 for e in json.load(sys.stdin) if ('watch' in e['query'] or 'follow' in e['query']) and e.get('code')==200) < $1)" && return
		sleep 0.1
	done
}

job() { # job NAME IMAGE: a Job body
	printf '{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"%s","namespace":"t","labels":{"app":"berth"}},"spec":{"template":{"metadata":{"labels":{"run":"%s"}},"spec":{"restartPolicy":"Never","containers":[{"name":"main","image":"%s"}]}}}}' "$1" "$1" "$2"
}
cm() { printf '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"%s","labels":{"app":"%s"}},"data":{"k":"%s"}}' "$1" "$2" "$3"; }

# --- auth and TLS
code=$(curl -sS -o "$tmp/out" -w '%{http_code}' --cacert "$tmp/ca.pem" "$base/version")
[ "$code" = 401 ] && t 'd["reason"]=="Unauthorized" and d["kind"]=="Status" and d["message"]=="Unauthorized"'
check unauthorized $? "want 401 Status, got $code"
code=$(curl -sS -o "$tmp/out" -w '%{http_code}' --cacert "$tmp/ca.pem" -H "Authorization: Bearer $token" "$base/version")
[ "$code" = 200 ] && t 'd["gitVersion"]=="v1.30.0-berth-standin"'
check token-auth $? "got $code"
code=$(curl -sS -o "$tmp/out" -w '%{http_code}' --cacert "$tmp/ca.pem" --cert "$tmp/rogue-client.pem" \
	--key "$tmp/rogue-client.key" "$base/version" 2>/dev/null)
rc=$?
[ "$rc" != 0 ] && [ "$code" = 000 ]
check rogue-cert-refused $? "curl rc=$rc code=$code"
code=$(curl -sS -o /dev/null -w '%{http_code}' --cacert "$tmp/other-ca.pem" "$base/version" 2>/dev/null)
[ "$code" = 000 ]
check server-cert-needs-ca $? "verified against other-ca: $code"
# keep-alive: two requests in one curl run share one connection id in the log
api GET /version -o /dev/null "$base/api" >/dev/null
curl -sS -o "$tmp/out" --cacert "$tmp/ca.pem" "$base/_test/requests"
t '[e["conn"] for e in d if e["path"] in ("/version","/api") and e["auth"]=="cert"][-2:] == [d[-1]["conn"]]*2'
check keep-alive $? "two requests of one curl run should share a connection"

# --- server-side apply
code=$(apply $ns/configmaps/c1 "$(cm c1 a v1)")
[ "$code" = 201 ] && t 'len(d["metadata"]["uid"])==36 and d["metadata"]["managedFields"][0]["manager"]=="berth"'
check apply-create $? "got $code"
uid=$(j 'd["metadata"]["uid"]')
rv1=$(j 'd["metadata"]["resourceVersion"]')
code=$(apply $ns/configmaps/c1 "$(cm c1 a v2)")
[ "$code" = 200 ] && t "d['metadata']['uid']=='$uid' and int(d['metadata']['resourceVersion'])>$rv1 and d['data']['k']=='v2'"
check apply-update $? "got $code"
code=$(api PATCH $ns/configmaps/c1 -H "$APPLY" --data-binary "$(cm c1 a v2)")
[ "$code" = 400 ] && t '"fieldManager: Required value" in d["message"] and d["reason"]=="BadRequest"'
check missing-fieldmanager $? "got $code"
code=$(api PATCH "$ns/configmaps/c1?fieldManager=berth" -H 'Content-Type: application/merge-patch+json' --data-binary '{}')
[ "$code" = 415 ] && t 'd["reason"]=="UnsupportedMediaType"'
check wrong-content-type $? "got $code"
code=$(apply $ns/configmaps/c2 "$(cm c1 a v)")
[ "$code" = 400 ] && t '"does not match the name on the URL" in d["message"]'
check name-mismatch $? "got $code"
code=$(apply $batch/jobs/bad "$(job bad '')")
[ "$code" = 422 ] && t 'd["reason"]=="Invalid" and d["details"]["causes"]==[{"reason":"FieldValueRequired","message":"Required value","field":"spec.template.spec.containers[0].image"}] and d["message"]=="Job.batch \"bad\" is invalid: spec.template.spec.containers[0].image: Required value"'
check invalid-job $? "got $code"
code=$(apply $ns/configmaps/c1 "$(cm c1 a v3)" fieldManager=other)
[ "$code" = 409 ] && t 'd["reason"]=="Conflict" and "conflict with \"berth\"" in d["message"] and ".data.k" in d["message"]'
check conflict $? "got $code"
code=$(apply $ns/configmaps/c1 "$(cm c1 a v3)" 'fieldManager=other&force=true')
[ "$code" = 200 ] && t 'd["data"]["k"]=="v3" and [m["manager"] for m in d["metadata"]["managedFields"]]==["other"]'
check force-apply $? "got $code"
code=$(apply $ns/configmaps/dry "$(cm dry a v)" 'fieldManager=berth&dryRun=All')
c2=$(api GET $ns/configmaps/dry)
[ "$code" = 201 ] && [ "$c2" = 404 ]
check dry-run $? "apply $code then get $c2"

# --- get / list
code=$(api GET $batch/jobs/nope)
[ "$code" = 404 ] && t 'd["kind"]=="Status" and d["message"]=="jobs.batch \"nope\" not found" and d["details"]=={"name":"nope","group":"batch","kind":"jobs"}'
check get-404 $? "got $code"
apply $ns/configmaps/c3 "$(cm c3 b x)" >/dev/null
code=$(api GET "$ns/configmaps?labelSelector=app%3Da")
[ "$code" = 200 ] && t 'd["kind"]=="ConfigMapList" and [i["metadata"]["name"] for i in d["items"]]==["c1"] and "kind" not in d["items"][0]'
check list-selector $? "got $code"
code=$(api GET "$ns/configmaps?labelSelector=app,app!%3Da")
[ "$code" = 200 ] && t '[i["metadata"]["name"] for i in d["items"]]==["c3"]'
check list-selector-ops $? "got $code"

# --- watch
code=$(api GET "$ns/configmaps?watch=1&resourceVersion=$rv1&allowWatchBookmarks=true&timeoutSeconds=1" -N --max-time 3)
[ "$code" = 200 ] && t '[(e["type"],e["object"]["metadata"]["name"]) for e in l if e["type"]!="BOOKMARK"]==[("MODIFIED","c1"),("MODIFIED","c1"),("ADDED","c3")] and l[-1]["type"]=="BOOKMARK" and l[-1]["object"]["kind"]=="ConfigMap"'
check watch-replay-bookmark $? "got $code"
out="bg" api GET "$ns/configmaps?watch=true&labelSelector=app%3Da&timeoutSeconds=2" -N --max-time 4 >/dev/null &
wpid=$!
started 2
apply $ns/configmaps/c4 "$(cm c4 a x)" >/dev/null
apply $ns/configmaps/c4 "$(cm c4 b x)" >/dev/null # leaves the selection: DELETED
wait $wpid
mv "$tmp/bg" "$tmp/out"
t '[(e["type"],e["object"]["metadata"]["name"]) for e in l]==[("ADDED","c1"),("ADDED","c4"),("DELETED","c4")]'
check watch-live-selector $? "unexpected events"
ctl compact >/dev/null
code=$(api GET "$ns/configmaps?watch=1&resourceVersion=$rv1" -N --max-time 3)
[ "$code" = 200 ] && t 'd["type"]=="ERROR" and d["object"]["code"]==410 and d["object"]["reason"]=="Expired" and "too old resource version" in d["object"]["message"]'
check watch-expired-event $? "got $code"
ctl gone-mode '{"http":true}' >/dev/null
code=$(api GET "$ns/configmaps?watch=1&resourceVersion=$rv1" -N --max-time 3)
[ "$code" = 410 ] && t 'd["kind"]=="Status" and d["code"]==410'
check watch-expired-http $? "got $code"
ctl gone-mode '{"http":false}' >/dev/null
out="bg" api GET "$ns/configmaps?watch=1&timeoutSeconds=5" -N --max-time 6 >/dev/null &
wpid=$!
started 4
ctl expire-watches >/dev/null
wait $wpid
mv "$tmp/bg" "$tmp/out"
t 'l[-1]["type"]=="ERROR" and l[-1]["object"]["code"]==410'
check expire-watches $? "no ERROR event"

# --- job controller, status control, logs
code=$(apply $batch/jobs/j1 "$(job j1 busybox)")
[ "$code" = 201 ] && t '"status" not in d'
check job-create $? "got $code"
api GET "$ns/pods?labelSelector=job-name%3Dj1" >/dev/null
t 'len(d["items"])==1 and d["items"][0]["status"]["phase"]=="Pending" and d["items"][0]["metadata"]["ownerReferences"][0]["kind"]=="Job" and d["items"][0]["metadata"]["labels"]["run"]=="j1"'
check job-makes-pod $? "no pod"
pod=$(j 'd["items"][0]["metadata"]["name"]')
api GET $batch/jobs/j1 >/dev/null
t 'd["status"]["active"]==1'
check job-active $? "job status"
code=$(api GET "$ns/pods/$pod/log")
[ "$code" = 400 ] && t '"is waiting to start: ContainerCreating" in d["message"]'
check log-pending $? "got $code"
ctl status "{\"resource\":\"pods\",\"namespace\":\"t\",\"name\":\"$pod\",\"status\":{\"phase\":\"Running\"}}" >/dev/null
ctl log "{\"namespace\":\"t\",\"name\":\"$pod\",\"text\":\"line one\\n\"}" >/dev/null
out="bg" api GET "$ns/pods/$pod/log?follow=true" -N --max-time 5 >/dev/null &
lpid=$!
started 5
ctl log "{\"namespace\":\"t\",\"labelSelector\":\"job-name=j1\",\"text\":\"line two\\n\"}" >/dev/null
sleep 0.3
ctl status "{\"resource\":\"pods\",\"namespace\":\"t\",\"name\":\"$pod\",\"status\":{\"phase\":\"Succeeded\"},\"merge\":true}" >/dev/null
wait $lpid
lrc=$?
mv "$tmp/bg" "$tmp/out"
[ "$lrc" = 0 ] && [ "$(cat "$tmp/out")" = "$(printf 'line one\nline two')" ]
check log-follow $? "curl rc=$lrc"
api GET $batch/jobs/j1 >/dev/null
t 'd["status"]["succeeded"]==1 and d["status"]["conditions"][0]["type"]=="Complete" and "completionTime" in d["status"]'
check job-complete $? "job status"

# --- delete with garbage collection
secret="{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"s1\",\"ownerReferences\":[{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"name\":\"j1\",\"uid\":\"$(j 'd["metadata"]["uid"]')\"}]},\"stringData\":{\"a\":\"b\"}}"
code=$(apply $ns/secrets/s1 "$secret")
[ "$code" = 201 ] && t 'd["data"]=={"a":"Yg=="} and "stringData" not in d'
check secret-stringdata $? "got $code"
code=$(api DELETE $batch/jobs/j1 -H 'Content-Type: application/json' -d '{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Foreground"}')
[ "$code" = 200 ]
check delete-job $? "got $code"
curl -sS -o "$tmp/out" --cacert "$tmp/ca.pem" "$base/_test/objects"
t 'not [o for o in d if o["kind"] in ("Job","Pod","Secret")]'
check delete-gc $? "left behind: $(j '[o["metadata"]["name"] for o in d]')"
curl -sS -o "$tmp/out" --cacert "$tmp/ca.pem" "$base/_test/requests"
t 'd[-1]["method"]=="DELETE" and d[-1]["propagation"]=="Foreground" and d[-1]["body"]["propagationPolicy"]=="Foreground"'
check request-log $? "last entry"
code=$(api DELETE $batch/jobs/j1)
[ "$code" = 404 ]
check delete-404 $? "got $code"

# --- deployment controller
dep='{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d1"},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"d1"}},"template":{"metadata":{"labels":{"app":"d1"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}'
apply /apis/apps/v1/namespaces/t/deployments/d1 "$dep" >/dev/null
api GET "$ns/pods?labelSelector=app%3Dd1" >/dev/null
t 'len(d["items"])==2'
check deployment-pods $? "pods"
ctl status '{"resource":"pods","namespace":"t","labelSelector":"app=d1","status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}' >/dev/null
api GET /apis/apps/v1/namespaces/t/deployments/d1 >/dev/null
t 'd["status"]["readyReplicas"]==2 and d["status"]["availableReplicas"]==2'
check deployment-ready $? "status"

# --- injected fault
ctl fail '{"method":"PATCH","resource":"services","code":403}' >/dev/null
svc='{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"ports":[{"port":80}]}}'
code=$(apply $ns/services/s "$svc")
[ "$code" = 403 ] && t 'd["reason"]=="Forbidden" and d["message"]=="services \"s\" is forbidden: User \"system:serviceaccount:berth:berth\" cannot patch resource \"services\" in API group \"\" in the namespace \"t\""'
check fault-403 $? "got $code"
code=$(apply $ns/services/s "$svc")
[ "$code" = 201 ]
check fault-once $? "got $code"
# a flood: a 200 of N bytes, or one that never ends (until the client stops reading)
ctl fail '{"verb":"list","resource":"pods","namespace":"t","flood":3000000}' >/dev/null
code=$(api GET $ns/pods)
[ "$code" = 200 ] && [ "$(wc -c <"$tmp/out")" = 3000000 ] && ! grep -q '[^x]' "$tmp/out"
check fault-flood $? "got $code, $(wc -c <"$tmp/out") bytes"
ctl fail '{"verb":"list","resource":"pods","namespace":"t","flood":"endless"}' >/dev/null
got=$(curl -sS --cacert "$tmp/ca.pem" --cert "$tmp/client.pem" --key "$tmp/client.key" "$base$ns/pods" 2>/dev/null | head -c 5000000 | wc -c)
code=$(api GET $ns/pods)
[ "$got" = 5000000 ] && [ "$code" = 200 ] && t 'd["kind"]=="PodList"'
check fault-flood-endless $? "read $got bytes, then $code"

# --- reset, log file, clean exit
ctl reset >/dev/null
curl -sS -o "$tmp/out" --cacert "$tmp/ca.pem" "$base/_test/objects"
t 'd==[]'
check reset $? "objects left"
[ "$(wc -l <"$tmp/requests.jsonl")" -gt 20 ] && head -1 "$tmp/requests.jsonl" | python3 -c 'import json,sys; e=json.load(sys.stdin); assert {"conn","method","path","query","content_type","auth","body","code"} <= set(e)'
check log-file $? "requests.jsonl"
kill -TERM "$pid"
for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$pid" 2>/dev/null; then fail sigterm "still running"; else wait "$pid"; check sigterm $? "exit status"; fi
pid=
if [ -s "$tmp/server.err" ]; then fail server-stderr "$(head -20 "$tmp/server.err")"; fi
[ "$fails" = 0 ]

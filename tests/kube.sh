#!/usr/bin/env bash
# The kubernetes backend against a stand-in API server on loopback
# (tests/kube/apiserver.py): TLS with a test CA and a client certificate,
# bearer tokens, a kubeconfig written by kubectl, tls-server-name and
# insecure-skip-tls-verify, in-cluster config, refusals before any request,
# server-side apply, Status errors (422 with causes, 409, 403, 404), rollback
# of a refused submission, watches with bookmarks and 410 Gone expiry, state
# mapping, pod logs, stop with foreground deletion, and berth serve
# --backend kubernetes across a restart.
# Prints "ok NAME" / "FAIL NAME" / "skip NAME" per check.
#   tests/kube.sh BERTH
set -u
berth=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
export BERTH_HOME=$tmp/home
unset BERTH_CONFIG BERTH_SERVER BERTH_TOKEN KUBERNETES_SERVICE_HOST KUBERNETES_SERVICE_PORT
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
cd "$tmp" || exit 1
ok() { echo "ok kube $1"; }
fail() {
	echo "FAIL kube $1: $2"
	[ -f "$tmp/out" ] && sed 's/^/    /' "$tmp/out" | head -15
}
check() { # NAME CONDITION-COMMAND... : ok when the command succeeds
	local name=$1
	shift
	if "$@"; then ok "$name"; else fail "$name" "$*"; fi
}
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
for tool in python3 openssl curl; do
	if ! command -v $tool >/dev/null; then
		echo "FAIL kube ($tool is missing: run scripts/deps.sh)"
		exit 0
	fi
done

# ---- the stand-in API server -------------------------------------------------------------
bash "$root/tests/kube/certs.sh" "$tmp" || { echo "FAIL kube certs"; exit 0; }
TOKEN=stand-in-token-$RANDOM
python3 "$root/tests/kube/apiserver.py" --cert server.pem --key server.key --client-ca ca.pem \
	--token "$TOKEN" --port-file port --log requests.jsonl --bookmark-interval 0.3 2>api.log &
pids+=($!)
for _ in $(seq 100); do [ -s port ] && break; sleep 0.05; done
P=$(cat port)
api=https://127.0.0.1:$P
ctl() { curl -s --cacert ca.pem -X "${3:-POST}" "$api/_test/$1" -d "${2:-}"; }
# requests [FILTER]: the request log as "conn METHOD PATH?QUERY CT AUTH CODE [propagation]"
requests() {
	ctl requests '' GET | python3 -c '
import json, sys
for d in json.load(sys.stdin):
    q = "&".join("%s=%s" % kv for kv in sorted(d.get("query", {}).items()))
    print(d["conn"], d["method"], d["path"] + ("?" + q if q else ""), d.get("content_type") or "-",
          d["auth"], d.get("code"), d.get("propagation") or "")' 2>/dev/null
}
objects() { # the stored objects as "Kind ns/name"
	ctl objects '' GET | python3 -c '
import json, sys
for o in json.load(sys.stdin):
    m = o["metadata"]
    print(o.get("kind"), m.get("namespace") + "/" + m["name"])' 2>/dev/null
}
pod_status() { # RUN STATUS-JSON
	ctl status "{\"resource\":\"pods\",\"namespace\":\"ml\",\"labelSelector\":\"berth.dev/run=$1\",\"status\":$2}" >/dev/null
}
job_status() { # NAME STATUS-JSON
	ctl status "{\"resource\":\"jobs\",\"namespace\":\"ml\",\"name\":\"$1\",\"status\":$2}" >/dev/null
}
state_of() { "$berth" get run "$1" -o json 2>/dev/null | json 'd["state"] + "|" + (d.get("reason") or "")'; }
# wait_state RUN PATTERN [TENTHS]: polls berth get until the "STATE|reason" line matches
wait_state() {
	for _ in $(seq "${3:-60}"); do
		s=$(state_of "$1")
		case "$s" in $2) return 0 ;; esac
		sleep 0.1
	done
	echo "last: $s" >"$tmp/out"
	return 1
}

# ---- a kubeconfig written by kubectl ----------------------------------------------------------
export KUBECONFIG=$tmp/kubeconfig
if command -v kubectl >/dev/null; then
	kubectl config set-cluster stand-in --server="$api" --certificate-authority=ca.pem --embed-certs >/dev/null &&
	kubectl config set-credentials cert-user --client-certificate=client.pem --client-key=client.key --embed-certs >/dev/null &&
	kubectl config set-credentials token-user --token="$TOKEN" >/dev/null &&
	kubectl config set-credentials wrong-token --token=not-the-token >/dev/null &&
	kubectl config set-context certs --cluster=stand-in --user=cert-user --namespace=ml >/dev/null &&
	kubectl config set-context tokens --cluster=stand-in --user=token-user --namespace=ml >/dev/null &&
	kubectl config set-context wrong --cluster=stand-in --user=wrong-token --namespace=ml >/dev/null &&
	kubectl config use-context certs >/dev/null || echo "FAIL kube kubectl config"
else
	echo "skip kube kubectl (not installed: the kubeconfig is written by hand)"
	b64() { base64 -w0 "$1"; }
	cat >"$KUBECONFIG" <<EOF
apiVersion: v1
kind: Config
current-context: certs
clusters:
- name: stand-in
  cluster: {server: "$api", certificate-authority-data: $(b64 ca.pem)}
users:
- name: cert-user
  user: {client-certificate-data: $(b64 client.pem), client-key-data: $(b64 client.key)}
- name: token-user
  user: {token: "$TOKEN"}
- name: wrong-token
  user: {token: not-the-token}
contexts:
- name: certs
  context: {cluster: stand-in, user: cert-user, namespace: ml}
- name: tokens
  context: {cluster: stand-in, user: token-user, namespace: ml}
- name: wrong
  context: {cluster: stand-in, user: wrong-token, namespace: ml}
EOF
fi

spec() { # NAME [EXTRA-YAML]
	printf 'name: %s\nfunction:\n  name: %s\n  image: python:3.11\n  command: [python, train.py]\nresources: {cpu: "1", mem: 1Gi}\n%s' \
		"$1" "$1" "${2:-}"
}
pvc='volumes:
  - volume_type: persistent_volume_claim
    name: data
    mount_path: /data
    spec: {size: 1Gi}
'
run() { "$berth" run "$@" --backend kubernetes >"$tmp/out" 2>&1; }

# ---- submit: client certificate, server-side apply, owner references, secrets ------------------
printf 's3cr3t-value' | "$berth" secrets set hf-token >/dev/null 2>&1
spec train "$pvc"'secrets: [hf-token]
' >train.yaml
ctl requests '' DELETE >/dev/null
if run train.yaml --run-id k1 && grep -q '^k1$' "$tmp/out"; then ok "submit"; else fail "submit" "berth run failed"; fi
requests >req.txt
check "client certificate" grep -q ' PATCH .* cert 201' req.txt
patches=$(grep ' PATCH ' req.txt)
if [ "$(grep -c ' PATCH ' req.txt)" = 5 ] &&
	! grep ' PATCH ' req.txt | grep -vq 'application/apply-patch+yaml' &&
	! grep ' PATCH ' req.txt | grep -vq 'fieldManager=berth'; then
	ok "server-side apply (content type, field manager)"
else
	echo "$patches" >"$tmp/out"
	fail "server-side apply (content type, field manager)" "5 PATCHes of application/apply-patch+yaml with fieldManager=berth"
fi
# in order: Secret, PVC, Job, then Secret and PVC again with their owner
order=$(grep ' PATCH ' req.txt | sed 's/.*namespaces\/ml\/\([a-z]*\)\/.*/\1/' | tr '\n' ' ')
check "apply order" [ "$order" = "secrets persistentvolumeclaims jobs secrets persistentvolumeclaims " ]
ctl objects '' GET >objs.json
owners=$(json '" ".join(sorted(o["kind"] + ":" + ("ok" if o["metadata"].get("ownerReferences", [{}])[0].get("uid") == [j for j in d if j["kind"] == "Job"][0]["metadata"]["uid"] else "none") for o in d if o["kind"] in ("Secret", "PersistentVolumeClaim")))' <objs.json)
check "owner references carry the Job's uid" [ "$owners" = "PersistentVolumeClaim:ok Secret:ok" ]
value=$(json '[o for o in d if o["kind"] == "Secret"][0]["data"]["hf-token"]' <objs.json | base64 -d)
check "the Secret holds the secret's value" [ "$value" = s3cr3t-value ]
# hf-token reaches the container as HF_TOKEN (a shell reads it), from the Secret's hf-token key
env=$(json '[e for e in [o for o in d if o["kind"] == "Job"][0]["spec"]["template"]["spec"]["containers"][0]["env"] if e["name"] == "HF_TOKEN"][0]["valueFrom"]["secretKeyRef"]' <objs.json 2>&1)
check "the secret's variable HF_TOKEN reads its key" [ "$env" = "{'name': 'train-k1', 'key': 'hf-token'}" ]
if ! grep -rq s3cr3t-value "$BERTH_HOME" && ! "$berth" get run k1 -o yaml | grep -q s3cr3t; then
	ok "the value is not in berth's records"
else fail "the value is not in berth's records" "found"; fi
conns=$(grep -v ' GET .*watch=' req.txt | awk '{print $1}' | sort -u | wc -l)
check "one connection for a submission" [ "$conns" = 1 ]
"$berth" get run k1 -o json >"$tmp/out"
check "recorded: target and backend" grep -q "\"target\": \"Job ml/train-k1 on $api\"" "$tmp/out"

# ---- states ---------------------------------------------------------------------------------------
check "Pending while the pod waits" wait_state k1 'Pending|waiting for its pod*'
pod_status k1 '{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable","message":"0/3 nodes are available: 3 Insufficient nvidia.com/gpu."}]}'
check "Pending: unschedulable with the scheduler's reason" wait_state k1 'Pending|unschedulable: 0/3 nodes are available: 3 Insufficient nvidia.com/gpu.'
pod_status k1 '{"phase":"Pending","containerStatuses":[{"name":"train","state":{"waiting":{"reason":"ImagePullBackOff","message":"Back-off pulling image \"python:3.11\""}}}]}'
check "Pending: image pull backoff" wait_state k1 'Pending|ImagePullBackOff: Back-off pulling image*'
# the cluster's words are one printable line: ESC and the C1 controls (CSI, NEL) of a terminal
# or of a YAML 1.1 reader become spaces
pod_status k1 '{"phase":"Pending","containerStatuses":[{"name":"train","state":{"waiting":{"reason":"ErrImagePull","message":"a\u001b[31mb\u009b31mc\u0085d\u2028e"}}}]}'
wait_state k1 'Pending|ErrImagePull: a*'
state_of k1 >"$tmp/out"
if grep -q 'ErrImagePull: a \[31mb 31mc d e$' "$tmp/out" && ! LC_ALL=C grep -q $'\xc2[\x80-\x9f]\|\xe2\x80[\xa8\xa9]' "$tmp/out"; then
	ok "the cluster's words: control characters become spaces"
else fail "the cluster's words: control characters become spaces" "$(od -c "$tmp/out" | head -5)"; fi
pod_status k1 '{"phase":"Running","startTime":"2026-11-22T10:00:00Z","conditions":[{"type":"Ready","status":"True"}]}'
check "Running" wait_state k1 'Running|'
# follow: berth run --wait of a second run, finished while it watches
spec w "" >w.yaml
ctl requests '' DELETE >/dev/null
"$berth" run w.yaml --backend kubernetes --run-id k2 --wait >wait.out 2>&1 &
wpid=$!
for _ in $(seq 50); do grep -q 'watch=1' <(requests) && break; sleep 0.1; done
sleep 0.8 # a few bookmarks
ctl compact >/dev/null
ctl expire-watches >/dev/null # every watch gets ERROR 410: berth lists again
for _ in $(seq 50); do
	[ "$(requests | grep -c 'GET /api/v1/namespaces/ml/pods?.*watch=1')" -ge 2 ] && break
	sleep 0.1
done
pod_status k2 '{"phase":"Running","startTime":"2026-11-22T10:00:00Z"}'
sleep 0.3
pod_status k2 '{"phase":"Succeeded","containerStatuses":[{"name":"w","state":{"terminated":{"exitCode":0,"reason":"Completed"}}}]}'
for _ in $(seq 100); do kill -0 $wpid 2>/dev/null || break; sleep 0.1; done
if ! kill -0 $wpid 2>/dev/null && wait $wpid; then ok "run --wait follows the watch to Succeeded"
else kill $wpid 2>/dev/null; cp wait.out "$tmp/out"; fail "run --wait follows the watch to Succeeded" "exit"; fi
requests >req.txt
watch_pods=$(grep -c 'GET /api/v1/namespaces/ml/pods?.*watch=1' req.txt)
lists=$(grep 'GET /api/v1/namespaces/ml/pods?labelSelector' req.txt | grep -vc watch=)
rv_watch=$(grep 'watch=1' req.txt | grep -c 'allowWatchBookmarks=true.*resourceVersion=')
check "watch with bookmarks from a resourceVersion" [ "$rv_watch" -ge 2 ]
if [ "$watch_pods" -ge 2 ] && [ "$lists" -ge 2 ]; then ok "410 Gone (ERROR event): lists again and watches on"
else grep 'pods' req.txt >"$tmp/out"; fail "410 Gone (ERROR event): lists again and watches on" "watches $watch_pods lists $lists"; fi
# the HTTP form of 410
ctl gone-mode '{"http": true}' >/dev/null
spec g "" >g.yaml
"$berth" run g.yaml --backend kubernetes --run-id k3 --wait >wait.out 2>&1 &
wpid=$!
sleep 1
ctl compact >/dev/null
ctl expire-watches >/dev/null
sleep 0.5
pod_status k3 '{"phase":"Succeeded","containerStatuses":[{"name":"g","state":{"terminated":{"exitCode":0,"reason":"Completed"}}}]}'
for _ in $(seq 100); do kill -0 $wpid 2>/dev/null || break; sleep 0.1; done
if ! kill -0 $wpid 2>/dev/null && wait $wpid; then ok "410 Gone (HTTP status): lists again"
else kill $wpid 2>/dev/null; cp wait.out "$tmp/out"; fail "410 Gone (HTTP status): lists again" "exit"; fi
ctl gone-mode '{"http": false}' >/dev/null

# failures and their reasons
spec oom "" >oom.yaml
run oom.yaml --run-id k4
pod_status k4 '{"phase":"Failed","containerStatuses":[{"name":"oom","state":{"terminated":{"exitCode":137,"reason":"OOMKilled"}}}]}'
check "Failed: OOMKilled" wait_state k4 'Failed|OOMKilled: *BackoffLimitExceeded*'
"$berth" get run k4 -o json >"$tmp/out"
check "OOMKilled: exit code and oom_killed" grep -q '"oom_killed": true' "$tmp/out"
check "no usage is claimed for a run on a cluster" bash -c "! grep -q '\"usage\"' '$tmp/out'"
spec late "" >late.yaml
run late.yaml --run-id k5
job_status late-k5 '{"failed":1,"conditions":[{"type":"Failed","status":"True","reason":"DeadlineExceeded","message":"Job was active longer than specified deadline"}]}'
check "Failed: DeadlineExceeded" wait_state k5 'Failed|DeadlineExceeded: Job was active longer than specified deadline'
spec ev "" >ev.yaml
run ev.yaml --run-id k6
pod_status k6 '{"phase":"Failed","reason":"Evicted","message":"The node was low on resource: memory."}'
check "Failed: evicted" wait_state k6 'Failed|evicted: The node was low on resource: memory.*'
spec pre "" >pre.yaml
run pre.yaml --run-id k7
pod_status k7 '{"phase":"Running","conditions":[{"type":"DisruptionTarget","status":"True","reason":"PreemptionByScheduler","message":"Preempted in order to admit critical pod"}]}'
check "preemption is reported as such" wait_state k7 '*|preempted: Preempted in order to admit critical pod; its Job starts it again'
"$berth" get runs >"$tmp/out" 2>&1
check "get runs shows kubernetes runs" grep -q 'k7 .*preempted' "$tmp/out"
# an identity that may not list Events: the wait says so, and what grants it
spec quiet "" >quiet.yaml
run quiet.yaml --run-id k7b
sleep 2.2 # (a run submitted a moment ago has no Events yet)
ctl fail '{"method":"GET","resource":"events","code":403,"times":1}' >/dev/null
state_of k7b >"$tmp/out"
check "Events forbidden: the wait says what would say why" grep -q '^Pending|waiting for its pod to start; berth may not list the Events of namespace ml.*rbac.yaml' "$tmp/out"
"$berth" stop k7b >/dev/null 2>&1

# ---- logs -----------------------------------------------------------------------------------------
ctl log '{"namespace":"ml","labelSelector":"berth.dev/run=k1","text":"epoch 1\n"}' >/dev/null
"$berth" logs k1 >"$tmp/out" 2>&1
check "logs" grep -qx 'epoch 1' "$tmp/out"
# follow_to_end RUN CONTAINER QUIET TEXT OUT: berth logs RUN -f into OUT; after QUIET seconds the
# pod writes the line TEXT and succeeds. The follower's exit status once it ended (within 5 s
# more), or 1 (it is killed)
follow_to_end() {
	"$berth" logs "$1" -f >"$5" 2>&1 &
	local fpid=$!
	sleep "$3"
	ctl log "{\"namespace\":\"ml\",\"labelSelector\":\"berth.dev/run=$1\",\"text\":\"$4\\n\",\"append\":true}" >/dev/null
	sleep 0.3
	pod_status "$1" "{\"phase\":\"Succeeded\",\"containerStatuses\":[{\"name\":\"$2\",\"state\":{\"terminated\":{\"exitCode\":0,\"reason\":\"Completed\"}}}]}"
	for _ in $(seq 50); do kill -0 $fpid 2>/dev/null || break; sleep 0.1; done
	if kill -0 $fpid 2>/dev/null; then
		kill $fpid
		return 1
	fi
	wait $fpid
}
if follow_to_end k1 train 0.5 'epoch 2' logf.out && [ "$(cat logf.out)" = "$(printf 'epoch 1\nepoch 2')" ]; then
	ok "logs -f streams until the pod ends"
else cp logf.out "$tmp/out"; fail "logs -f streams until the pod ends" "output"; fi
check "Succeeded" wait_state k1 'Succeeded|*'
requests | grep '/log' >"$tmp/out"
check "logs through the API (follow=true)" grep -q 'pods/train-k1-[a-z]*/log?follow=true' "$tmp/out"
# its pods leave the cluster (a TTL, a delete outside berth): berth kept the log
check "the log is kept in berth when the run ends" [ "$(cat "$BERTH_HOME/runs/k1/log" 2>&1)" = "$(printf 'epoch 1\nepoch 2')" ]
for pod in $(objects | sed -n 's#^Pod ml/\(train-k1-.*\)#\1#p'); do
	curl -s --cacert ca.pem --cert client.pem --key client.key -X DELETE "$api/api/v1/namespaces/ml/pods/$pod" >/dev/null
done
"$berth" logs k1 >"$tmp/out" 2>&1
if ! objects | grep -q '^Pod ml/train-k1-' && [ "$(cat "$tmp/out")" = "$(printf 'epoch 1\nepoch 2')" ]; then
	ok "logs of an ended run whose pods are gone: the kept copy"
else fail "logs of an ended run whose pods are gone: the kept copy" "output"; fi

# the kept log is the head of what the pod wrote, KEPT_LOG_MAX (16 MiB) at most, whatever the
# API sends (the stand-in does not honour limitBytes); a log that cannot be written whole (here
# a file size limit, as a full disk) is not kept as if it were the whole
big_log() { # RUN MiB: the pod's log, that many MiB of numbered lines
	python3 -c "import json,sys; t=''.join('line %07d %s\n' % (i, 'x' * 50) for i in range($2 * 16384)); json.dump({'namespace': 'ml', 'labelSelector': 'berth.dev/run=$1', 'text': t}, sys.stdout)" >biglog.json
	curl -s --cacert ca.pem -X POST "$api/_test/log" --data-binary @biglog.json >/dev/null
}
spec big "" >big.yaml
run big.yaml --run-id k40
big_log k40 17
pod_status k40 '{"phase":"Succeeded","containerStatuses":[{"name":"big","state":{"terminated":{"exitCode":0,"reason":"Completed"}}}]}'
wait_state k40 'Succeeded|*'
size=$(stat -c %s "$BERTH_HOME/runs/k40/log" 2>/dev/null)
# (asked with timestamps=true: the 16 MiB of the API's reply hold each line's time, which
# goes to the log's times, so the log itself is two thirds of it)
if [ "${size:-0}" -gt 10000000 ] && [ "$size" -lt 16777216 ] &&
	head -c "$size" <(python3 -c "import json; print(json.load(open('biglog.json'))['text'], end='')") | cmp -s - "$BERTH_HOME/runs/k40/log"; then
	ok "a huge log: its head is kept, 16 MiB of the API's reply"
else fail "a huge log: its head is kept, 16 MiB of the API's reply" "kept ${size:-none} bytes"; fi
spec full "" >full.yaml
run full.yaml --run-id k41
big_log k41 12
pod_status k41 '{"phase":"Succeeded","containerStatuses":[{"name":"full","state":{"terminated":{"exitCode":0,"reason":"Completed"}}}]}'
(trap '' XFSZ; ulimit -f 8192; state_of k41 >/dev/null)
"$berth" logs k41 >"$tmp/full.out" 2>&1
if [ "$(state_of k41)" = 'Succeeded|' ] && [ ! -e "$BERTH_HOME/runs/k41/log" ] && [ ! -e "$BERTH_HOME/runs/k41/log.part" ] &&
	[ "$(stat -c %s "$tmp/full.out")" = $((12 * 1048576)) ]; then
	ok "a log that cannot be written whole is not kept: the pod's is read"
else fail "a log that cannot be written whole is not kept: the pod's is read" \
	"$(state_of k41); kept $(stat -c %s "$BERTH_HOME/runs/k41/log" 2>&1); read $(stat -c %s "$tmp/full.out")"; fi

# a kept log is its run's: one left under a run id that a new run takes (a run deleted while its
# log was being kept) is not the new run's log
mkdir -p "$BERTH_HOME/runs/k42" && printf 'an earlier run of this id\n' >"$BERTH_HOME/runs/k42/log"
spec reused "" >reused.yaml
run reused.yaml --run-id k42
"$berth" stop k42 --grace 0 >/dev/null 2>&1
"$berth" logs k42 >"$tmp/out" 2>&1
if [ "$(state_of k42 | cut -d'|' -f1)" = Stopped ] && ! grep -q 'an earlier run' "$tmp/out"; then
	ok "a new run does not show a log kept under its id before it"
else fail "a new run does not show a log kept under its id before it" "$(state_of k42)"; fi

# --tail, --since and --timestamps: the API's tailLines, sinceSeconds and timestamps while the pod
# is there; the kept log has each line's time (asked with timestamps=true) in its times
spec timed "" >timed.yaml
run timed.yaml --run-id k43
pod_status k43 '{"phase":"Running","containerStatuses":[{"name":"timed","state":{"running":{}}}]}'
wait_state k43 'Running|*'
hour_ago=$(($(date +%s) - 3600))
ctl log "{\"namespace\":\"ml\",\"labelSelector\":\"berth.dev/run=k43\",\"text\":\"old line\\n\",\"append\":false,\"time\":$hour_ago.25}" >/dev/null
ctl log '{"namespace":"ml","labelSelector":"berth.dev/run=k43","text":"new line\n"}' >/dev/null
"$berth" logs k43 --since 10m >live.since 2>&1
"$berth" logs k43 --tail 1 --timestamps >live.tail 2>&1
q=$(requests | grep 'pods/timed-k43-[a-z0-9]*/log?' | tail -1)
pod_status k43 '{"phase":"Succeeded","containerStatuses":[{"name":"timed","state":{"terminated":{"exitCode":0,"reason":"Completed"}}}]}'
wait_state k43 'Succeeded|*'
"$berth" logs k43 --since 10m >kept.since 2>&1
"$berth" logs k43 --timestamps >kept.ts 2>&1
"$berth" logs k43 --tail 1 >kept.tail 2>&1
old_at=$(sed -n 's/^\([0-9T:.-]*Z\) old line$/\1/p' kept.ts)
if [ "$(cat live.since)" = "new line" ] && grep -qE '^20[0-9-]{8}T[0-9:]{8}\.[0-9]{9}Z new line$' live.tail &&
	echo "$q" | grep -q 'tailLines=1&timestamps=true' &&
	[ "$(cat "$BERTH_HOME/runs/k43/log")" = "$(printf 'old line\nnew line')" ] &&
	[ "$(cat kept.since)" = "new line" ] && [ "$(cat kept.tail)" = "new line" ] &&
	[ "$(date -d "$old_at" +%s%3N)" = "${hour_ago}250" ] && grep -qE '^20[0-9-]{8}T[0-9:]{8}\.[0-9]{3}Z new line$' kept.ts; then
	ok "logs --tail, --since, --timestamps: the pod's through the API, the kept log's from its times"
else
	cat live.since live.tail kept.since kept.ts kept.tail >"$tmp/out"
	fail "logs --tail, --since, --timestamps: the pod's through the API, the kept log's from its times" "request: $q; old line at '$old_at'"
fi
# berth delete of the ended run: its kept log and its times go with it
"$berth" delete run k43 >"$tmp/out" 2>&1
if grep -qx 'run k43 (timed-k43) deleted' "$tmp/out" && [ ! -e "$BERTH_HOME/runs/k43" ]; then
	ok "delete: the kept log and its times go"
else ls -la "$BERTH_HOME/runs/k43" >>"$tmp/out" 2>&1; fail "delete: the kept log and its times go" "-"; fi

# ---- a reply past berth's caps (a hostile or broken API server): an error that names the URL and
# the cap, not memory or time without bound. A list's Content-Length over 64 MiB is refused before
# its body; a body that never ends, at 64 MiB; a watch event that never ends, at 16 MiB
spec flood "" >flood.yaml
run flood.yaml --run-id k44
pod_status k44 '{"phase":"Running","containerStatuses":[{"name":"flood","state":{"running":{}}}]}'
wait_state k44 'Running|*'
pods_url="$api/api/v1/namespaces/ml/pods?labelSelector="
for flood in 67108865 '"endless"'; do
	ctl fail "{\"verb\":\"list\",\"resource\":\"pods\",\"namespace\":\"ml\",\"flood\":$flood}" >/dev/null
	"$berth" logs k44 >"$tmp/out" 2>&1
	rc=$?
	if [ $rc = 1 ] && grep -qF "the reply to GET $pods_url" "$tmp/out" &&
		grep -q "is over berth's cap of 64 MiB" "$tmp/out"; then
		ok "a reply over 64 MiB ($flood bytes): refused, the URL and the cap said, exit 1"
	else fail "a reply over 64 MiB ($flood bytes): refused, the URL and the cap said, exit 1" "exit $rc"; fi
done
"$berth" logs k44 >"$tmp/out" 2>&1
check "the next reply is read again" [ $? = 0 ]
# a log read whole (not followed) that stops coming fails (KUBE_STALL_S, here 1 s); a followed
# log may be quiet as long as its container is
ctl fail '{"resource":"pods/log","namespace":"ml","stall":true}' >/dev/null
BERTH_TEST_KUBE_STALL_S=1 "$berth" logs k44 >"$tmp/out" 2>&1
rc=$?
if [ $rc = 1 ] && grep -qx 'the first line, and then nothing' "$tmp/out" &&
	grep -qF "the reply to GET $api/api/v1/namespaces/ml/pods/flood-k44-" "$tmp/out" &&
	grep -q '/log stalled: nothing came for 1 s' "$tmp/out"; then
	ok "a log that stalls: what came is shown, then an error naming it, exit 1"
else fail "a log that stalls: what came is shown, then an error naming it, exit 1" "exit $rc"; fi
if BERTH_TEST_KUBE_STALL_S=1 follow_to_end k44 flood 2.5 'after a quiet while' follow.out &&
	grep -qx 'after a quiet while' follow.out; then
	ok "logs -f: a followed log may be quiet (no stall cap)"
else cp follow.out "$tmp/out"; fail "logs -f: a followed log may be quiet (no stall cap)" "output"; fi
spec flooded "" >flooded.yaml
ctl fail '{"verb":"watch","resource":"jobs","namespace":"ml","flood":"endless"}' >/dev/null
run flooded.yaml --run-id k45 --wait
rc=$?
if [ $rc = 1 ] && grep -qF "an event of the watch $api/apis/batch/v1/namespaces/ml/jobs?watch=1&" "$tmp/out" &&
	grep -q "is over berth's cap of 16 MiB" "$tmp/out"; then
	ok "a watch event over 16 MiB: the watch ends with an error naming it and the cap"
else fail "a watch event over 16 MiB: the watch ends with an error naming it and the cap" "exit $rc"; fi
ctl fail '' DELETE >/dev/null
"$berth" stop k45 --grace 0 >/dev/null 2>&1

# ---- stop: foreground deletion, nothing left ---------------------------------------------------------
spec svc "action: serve
" >svc.yaml
run svc.yaml --run-id k8
ctl requests '' DELETE >/dev/null
if "$berth" stop k8 --grace 0 >"$tmp/out" 2>&1; then ok "stop"; else fail "stop" "exit"; fi
requests >req.txt
check "stop: Foreground deletion of the Deployment" grep -q 'DELETE /apis/apps/v1/namespaces/ml/deployments/svc-k8 .* Foreground' req.txt
objects >"$tmp/out"
ctl objects '' GET >objs2.json
left=$(json 'len([o for o in d if o["metadata"].get("labels", {}).get("berth.dev/run") == "k8"])' <objs2.json)
check "stop: no object of the run remains" [ "$left" = 0 ]
check "stop: Stopped" wait_state k8 'Stopped|*'

# ---- refusals: nothing is left behind, the Status message verbatim ------------------------------------
ctl fail '{"method":"PATCH","resource":"jobs","code":422,"reason":"Invalid","message":"Job.batch \"bad-k9\" is invalid: spec.template.spec.containers[0].image: Required value","causes":[{"reason":"FieldValueRequired","message":"Required value","field":"spec.template.spec.containers[0].image"}],"times":1}' >/dev/null
spec bad "$pvc" >bad.yaml
run bad.yaml --run-id k9
rc=$?
if [ $rc = 2 ] && grep -qF 'Job ml/bad-k9: Job.batch "bad-k9" is invalid: spec.template.spec.containers[0].image: Required value' "$tmp/out"; then
	ok "422 Invalid: the Status message verbatim, exit 2"
else fail "422 Invalid: the Status message verbatim, exit 2" "exit $rc"; fi
objects >"$tmp/out"
if grep -q bad-k9 "$tmp/out"; then fail "422: nothing is left on the cluster" "left"; else ok "422: nothing is left on the cluster"; fi
if "$berth" get run k9 >/dev/null 2>&1; then fail "422: no run is recorded" "k9 exists"; else ok "422: no run is recorded"; fi
ctl fail '{"method":"PATCH","resource":"services","code":409,"reason":"Conflict","message":"Apply failed with 1 conflict: conflict with \"kubectl\": .spec.ports","times":1}' >/dev/null
spec conflict "action: serve
" >conflict.yaml
run conflict.yaml --run-id k10
rc=$?
if [ $rc != 0 ] && grep -qF 'Service ml/conflict-k10: Apply failed with 1 conflict: conflict with "kubectl": .spec.ports' "$tmp/out" &&
	! objects | grep -q conflict-k10; then
	ok "409 Conflict on the Service: message, and the Deployment is deleted"
else fail "409 Conflict on the Service: message, and the Deployment is deleted" "exit $rc"; fi
ctl fail '{"method":"PATCH","resource":"jobs","code":403,"reason":"Forbidden","times":1}' >/dev/null
spec nope "" >nope.yaml
run nope.yaml --run-id k11
rc=$?
if [ $rc = 1 ] && grep -qF 'jobs.batch "nope-k11" is forbidden: User' "$tmp/out"; then ok "403 Forbidden: the Status message"
else fail "403 Forbidden: the Status message" "exit $rc"; fi
"$berth" run nope.yaml --backend kubernetes --context wrong --run-id k12 >"$tmp/out" 2>&1
rc=$?
if [ $rc = 1 ] && grep -q 'Unauthorized' "$tmp/out"; then ok "401: a wrong token"; else fail "401: a wrong token" "exit $rc"; fi
ctl requests '' DELETE >/dev/null
if "$berth" run nope.yaml --backend kubernetes --context tokens --run-id k13 >"$tmp/out" 2>&1 &&
	requests | grep -q 'PATCH .* token 201'; then ok "bearer token"; else fail "bearer token" "no token request"; fi
ctl fail '{"method":"GET","resource":"jobs","code":404,"reason":"NotFound","times":1}' >/dev/null
spec gone "" >gone.yaml
run gone.yaml --run-id k14 || fail "404 on a read after submission" "exit $?"
# gone before berth deletes it (and not seen gone, the API being busy): 404 is as good
curl -s --cacert ca.pem --cert client.pem --key client.key -X DELETE \
	"$api/apis/batch/v1/namespaces/ml/jobs/gone-k14?propagationPolicy=Background" >/dev/null
ctl fail '{"verb":"list","resource":"jobs","code":503,"reason":"ServiceUnavailable","times":1}' >/dev/null
if "$berth" stop k14 --grace 0 >"$tmp/out" 2>&1 && wait_state k14 'Stopped|*' &&
	requests | grep -q 'DELETE /apis/batch/v1/namespaces/ml/jobs/gone-k14 .* 404'; then
	ok "404 on delete: already gone is stopped"
else fail "404 on delete: already gone is stopped" "exit"; fi

# a project's namespace that someone else made between berth's look (404) and its create (409):
# a ResourceQuota refused then takes away only a namespace that berth made, never that one
printf 'namespace: "ml-{project}"\nquotas:\n  p1: {cpu: "4"}\n' >perproject.yaml
curl -s --cacert ca.pem --cert client.pem --key client.key -H 'Content-Type: application/json' -X POST \
	"$api/api/v1/namespaces" -d '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ml-p1"}}' >/dev/null
ctl fail '{"method":"GET","resource":"namespaces","name":"ml-p1","code":404,"reason":"NotFound","times":1}' >/dev/null
ctl fail '{"method":"POST","resource":"resourcequotas","namespace":"ml-p1","code":500,"times":1}' >/dev/null
{ echo 'project: p1'; spec other ""; } >p1.yaml
ctl requests '' DELETE >/dev/null
"$berth" run p1.yaml --backend kubernetes --config perproject.yaml --run-id k23 >"$tmp/out" 2>&1
rc=$?
ctl fail '' DELETE >/dev/null
there=$(curl -s -o /dev/null -w '%{http_code}' --cacert ca.pem --cert client.pem --key client.key "$api/api/v1/namespaces/ml-p1")
if [ $rc = 1 ] && grep -q 'ResourceQuota of namespace ml-p1' "$tmp/out" && [ "$there" = 200 ]; then
	ok "a project's namespace made by someone else is not taken away with berth's refused quota"
else fail "a project's namespace made by someone else is not taken away with berth's refused quota" \
	"exit $rc, the namespace: HTTP $there, $(requests | grep -c 'DELETE /api/v1/namespaces/ml-p1 ') DELETEs"; fi

# ---- a run is followed on the cluster it went to ----------------------------------------------------------
# the same stand-in under another name: another cluster as far as berth knows
sed "s|https://127.0.0.1:$P|https://localhost:$P|" "$KUBECONFIG" >other.config
"$berth" logs k1 --kubeconfig other.config >"$tmp/out" 2>&1
rc=$?
if [ $rc = 2 ] && grep -q "run \"k1\" is on the cluster at $api" "$tmp/out"; then ok "another cluster's context is refused"
else fail "another cluster's context is refused" "exit $rc"; fi

# ---- server-side dry run ---------------------------------------------------------------------------------
ctl requests '' DELETE >/dev/null
spec dry "$pvc" >dry.yaml
if "$berth" run dry.yaml --backend kubernetes --dry-run=server --run-id k15 >"$tmp/out" 2>&1 &&
	grep -q 'Job ml/dry-k15 accepted (server dry run)' "$tmp/out"; then ok "--dry-run=server"
else fail "--dry-run=server" "exit"; fi
requests >req.txt
n_dry=$(grep -c 'PATCH .*dryRun=All' req.txt)
n_patch=$(grep -c 'PATCH' req.txt)
check "--dry-run=server: every apply has dryRun=All" [ "$n_dry" -ge 2 -a "$n_dry" = "$n_patch" ]
if objects | grep -q dry-k15 || "$berth" get run k15 >/dev/null 2>&1; then fail "--dry-run=server: nothing created" "created"
else ok "--dry-run=server: nothing created"; fi
"$berth" run dry.yaml --dry-run=server >"$tmp/out" 2>&1
check "--dry-run=server needs the kubernetes backend" grep -q 'needs the kubernetes backend' "$tmp/out"

# ---- TLS: the server's certificate must be the cluster's -----------------------------------------------
sed "s|certificate-authority-data: .*|certificate-authority-data: $(base64 -w0 other-ca.pem)|" "$KUBECONFIG" >bad-ca.config
"$berth" run nope.yaml --backend kubernetes --kubeconfig bad-ca.config --run-id k16 >"$tmp/out" 2>&1
rc=$?
if [ $rc = 1 ] && grep -qi 'certificate' "$tmp/out"; then ok "TLS: an unknown CA is refused"; else fail "TLS: an unknown CA is refused" "exit $rc"; fi
cat >rogue.config <<EOF
apiVersion: v1
kind: Config
current-context: rogue
clusters: [{name: c, cluster: {server: "$api", certificate-authority: $tmp/ca.pem}}]
users: [{name: u, user: {client-certificate: $tmp/rogue-client.pem, client-key: $tmp/rogue-client.key}}]
contexts: [{name: rogue, context: {cluster: c, user: u, namespace: ml}}]
EOF
"$berth" run nope.yaml --backend kubernetes --kubeconfig rogue.config --run-id k17 >"$tmp/out" 2>&1
check "TLS: a client certificate of another CA is refused" [ $? = 1 ]

# ---- in-cluster: the pod's service account ---------------------------------------------------------------
mkdir -p sa && cp ca.pem sa/ca.crt && printf '%s\n' "$TOKEN" >sa/token && printf 'ml' >sa/namespace
ctl requests '' DELETE >/dev/null
if env -u KUBECONFIG HOME="$tmp/nohome" KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT="$P" \
	BERTH_SERVICEACCOUNT_DIR="$tmp/sa" "$berth" run nope.yaml --backend kubernetes --run-id k18 >"$tmp/out" 2>&1 &&
	requests | grep -q 'PATCH /apis/batch/v1/namespaces/ml/jobs/nope-k18.* token 201'; then
	ok "in-cluster service account"
else fail "in-cluster service account" "exit"; fi

# ---- what must not happen -------------------------------------------------------------------------------
"$berth" run train.yaml --backend kubernetes --run-id k1 >"$tmp/out" 2>&1
rc=$?
if [ $rc != 0 ] && grep -q 'run id "k1" is in use' "$tmp/out" && objects | grep -q 'Job ml/train-k1'; then
	ok "a run id in use is refused, and its objects are left alone"
else fail "a run id in use is refused, and its objects are left alone" "exit $rc"; fi
# a Job gone whose Events do not say how it ended is not taken for deleted outside berth until
# they have had time (10 s): the controller manager writes them after the fact, and the TTL
# controller may take a finished Job first. Its Completed Event, written late, then ends it.
spec ext "" >ext.yaml
run ext.yaml --run-id k19
spec told "" >told.yaml
run told.yaml --run-id k19b
for j in ext-k19 told-k19b; do
	curl -s --cacert ca.pem --cert client.pem --key client.key -X DELETE \
		"$api/apis/batch/v1/namespaces/ml/jobs/$j?propagationPolicy=Background" >/dev/null
done
check "a Job gone, its end untold: not final while its Events may come" \
	wait_state k19b 'Pending|its Job is gone from the cluster, and its Events do not say yet how it ended'
curl -s --cacert ca.pem --cert client.pem --key client.key -X PATCH -H 'Content-Type: application/apply-patch+yaml' \
	"$api/api/v1/namespaces/ml/events/told-k19b.1?fieldManager=test" -d '{"apiVersion":"v1","kind":"Event",
"metadata":{"name":"told-k19b.1","namespace":"ml"},"involvedObject":{"kind":"Job","namespace":"ml","name":"told-k19b"},
"type":"Normal","reason":"Completed","message":"Job completed"}' >/dev/null
check "a Job gone, its Completed Event written late: Succeeded" \
	wait_state k19b 'Succeeded|its Job was removed by the cluster after it finished'
check "a workload deleted outside berth: Failed with the reason, once its Events had time" \
	wait_state k19 'Failed|its Job was deleted from the cluster outside berth' 150
# a Deployment past its progress deadline is not final: it may still come up
spec slow "action: serve
" >slow.yaml
run slow.yaml --run-id k20
ctl status '{"resource":"deployments","namespace":"ml","name":"slow-k20","status":{"conditions":[{"type":"Progressing","status":"False","reason":"ProgressDeadlineExceeded","message":"ReplicaSet has timed out progressing."}]}}' >/dev/null
check "ProgressDeadlineExceeded: Pending with the reason, not final" \
	wait_state k20 'Pending|ProgressDeadlineExceeded: ReplicaSet has timed out progressing.'
# a busy API server (503 on a watch): berth waits a little and watches again
spec busy "" >busy.yaml
ctl fail '{"verb":"watch","resource":"pods","code":503,"reason":"ServiceUnavailable","message":"the server is busy","times":2}' >/dev/null
"$berth" run busy.yaml --backend kubernetes --run-id k21 --wait >wait.out 2>&1 &
wpid=$!
for _ in $(seq 100); do [ "$(requests | grep -c 'pods?.*watch=1.* 503')" -ge 2 ] && break; sleep 0.1; done
sleep 0.5
pod_status k21 '{"phase":"Succeeded","containerStatuses":[{"name":"busy","state":{"terminated":{"exitCode":0,"reason":"Completed"}}}]}'
for _ in $(seq 100); do kill -0 $wpid 2>/dev/null || break; sleep 0.1; done
if ! kill -0 $wpid 2>/dev/null && wait $wpid; then ok "503 on a watch: watched again after a pause"
else kill $wpid 2>/dev/null; cp wait.out "$tmp/out"; fail "503 on a watch: watched again after a pause" "exit"; fi
# a Service has no deletecollection on a real API server: stop deletes by name
spec svc2 "action: serve
" >svc2.yaml
run svc2.yaml --run-id k22
if "$berth" stop k22 --grace 0 >"$tmp/out" 2>&1 && ! objects | grep -q svc2-k22; then
	ok "stop deletes the Service by name"
else fail "stop deletes the Service by name" "left or failed"; fi

# ---- refusals before anything reaches a cluster -------------------------------------------------------------
cluster_config() { # FILE EXTRA-CLUSTER-KEYS: the token user on the stand-in, with these cluster keys
	cat >"$1" <<EOF
apiVersion: v1
kind: Config
current-context: c
clusters: [{name: c, cluster: {server: "${3:-$api}", $2}}]
users: [{name: u, user: {token: "$TOKEN"}}]
contexts: [{name: c, context: {cluster: c, user: u, namespace: ml}}]
EOF
}
env -u KUBECONFIG HOME="$tmp/nohome" "$berth" run nope.yaml --backend kubernetes --run-id k30 >"$tmp/out" 2>&1
rc=$?
if [ $rc != 0 ] && grep -q 'no kubeconfig' "$tmp/out"; then ok "no kubeconfig: said so"; else fail "no kubeconfig: said so" "exit $rc"; fi
cluster_config down.config "certificate-authority: $tmp/ca.pem" "https://127.0.0.1:1"
"$berth" run nope.yaml --backend kubernetes --kubeconfig down.config --run-id k31 >"$tmp/out" 2>&1
rc=$?
if [ $rc = 1 ] && grep -q 'cannot reach the Kubernetes API at https://127.0.0.1:1' "$tmp/out" &&
	! "$berth" get run k31 >/dev/null 2>&1; then ok "API server down: said so, nothing recorded"
else fail "API server down: said so, nothing recorded" "exit $rc"; fi
# tls-server-name: the certificate is checked against that name, not the address
cluster_config sni-ok.config "certificate-authority: $tmp/ca.pem, tls-server-name: localhost"
cluster_config sni-bad.config "certificate-authority: $tmp/ca.pem, tls-server-name: wrong.example"
if "$berth" run nope.yaml --backend kubernetes --kubeconfig sni-ok.config --run-id k32 >"$tmp/out" 2>&1 &&
	! "$berth" run nope.yaml --backend kubernetes --kubeconfig sni-bad.config --run-id k33 >"$tmp/out" 2>&1; then
	ok "tls-server-name: the name the certificate must have"
else fail "tls-server-name: the name the certificate must have" "accepted a wrong name or refused the right one"; fi
# insecure-skip-tls-verify: the only way past an unknown CA
cluster_config insecure.config "insecure-skip-tls-verify: true"
cluster_config strict.config ""
if "$berth" run nope.yaml --backend kubernetes --kubeconfig insecure.config --run-id k34 >"$tmp/out" 2>&1 &&
	! "$berth" run nope.yaml --backend kubernetes --kubeconfig strict.config --run-id k35 >"$tmp/out" 2>&1; then
	ok "insecure-skip-tls-verify"
else fail "insecure-skip-tls-verify" "exit"; fi
"$berth" run nope.yaml --backend kubernetes --dry-run=bogus >"$tmp/out" 2>&1
rc=$?
if [ $rc = 2 ] && grep -q -- '--dry-run takes client or server, not "bogus"' "$tmp/out"; then ok "--dry-run=bogus refused"; else fail "--dry-run=bogus refused" "exit $rc"; fi
"$berth" logs k1 --kubeconfig "$KUBECONFIG" --server http://127.0.0.1:1 >"$tmp/out" 2>&1
rc=$?
if [ $rc = 2 ] && grep -q -- '--kubeconfig' "$tmp/out"; then ok "--kubeconfig with --server refused"; else fail "--kubeconfig with --server refused" "exit $rc"; fi

# ---- a spec of two runs is submitted whole: the cluster refusing the second takes the first off again --------
{ spec first; echo '---'; spec second; } >two.yaml
ctl fail '{"resource": "jobs", "name": "second-kw-2", "code": 403, "times": 5}' >/dev/null
if run two.yaml --run-id kw; then rc=0; else rc=$?; fi
ctl fail '' DELETE >/dev/null
stored=$("$berth" get runs -o json 2>/dev/null | grep -c '"id": "kw')
if [ "$rc" != 0 ] && grep -q 'forbidden' "$tmp/out" && ! objects | grep -q 'first-kw' && [ "$stored" = 0 ]; then
	ok "two runs, the second refused by the cluster: neither is left, on the cluster or in the store"
else
	fail "two runs, the second refused by the cluster: neither is left, on the cluster or in the store" \
		"exit $rc, objects: $(objects | grep -c kw), stored: $stored"
fi

# ---- operators: a PyTorchJob, an MPIJob, a JobSet (distributed.operator) ---------------------------------
printf 'distributed: {operator: kubeflow}\n' >kubeflow.yaml
printf 'distributed: {operator: jobset}\n' >jobset.yaml
printf 'distributed: {operator: kubeflow}\nkueue: {local_queue: team-a}\n' >kubeflow-kueue.yaml
named_pod_status() { ctl status "{\"resource\":\"pods\",\"namespace\":\"ml\",\"name\":\"$1\",\"status\":$2}" >/dev/null; }
pod_log() { ctl log "{\"namespace\":\"ml\",\"name\":\"$1\",\"text\":\"$2\\n\"}" >/dev/null; }
finished='{"phase":"Succeeded","containerStatuses":[{"name":"pytorch","state":{"terminated":{"exitCode":0,"reason":"Completed"}}}]}'
run_pods() { objects | sed -n "s#^Pod ml/\\($1-.*\\)#\\1#p" | sort | tr '\n' ' '; }
spec ptj 'replicas: 3
distributed: {launcher: torchrun, procs_per_worker: 2}
' >ptj.yaml
ctl requests '' DELETE >/dev/null
run ptj.yaml --config kubeflow.yaml --run-id ko1
rc=$?
requests >req.txt
if [ $rc = 0 ] && grep -q 'PATCH /apis/kubeflow.org/v1/namespaces/ml/pytorchjobs/ptj-ko1?.* 201' req.txt &&
	! grep -q 'PATCH /api/v1/namespaces/ml/services' req.txt; then
	ok "kubeflow: run applies a PyTorchJob, and no Service of berth's"
else fail "kubeflow: run applies a PyTorchJob, and no Service of berth's" "exit $rc, $(grep PATCH req.txt | tr '\n' '|')"; fi
"$berth" get run ko1 -o json >"$tmp/out"
check "kubeflow: the run's target is its PyTorchJob" grep -q "\"target\": \"PyTorchJob ml/ptj-ko1 on $api\"" "$tmp/out"
check "kubeflow: the operator's pods, Master 1 and Worker 2" [ "$(run_pods ptj-ko1)" = "ptj-ko1-master-0 ptj-ko1-worker-0 ptj-ko1-worker-1 " ]
check "kubeflow: Pending while its pods wait" wait_state ko1 'Pending|waiting for its pod to start'
named_pod_status ptj-ko1-master-0 '{"phase":"Running","startTime":"2026-11-22T10:00:00Z"}'
check "kubeflow: Running once a pod runs" wait_state ko1 'Running|'
wstates() { "$berth" get run "$1" -o json 2>/dev/null | python3 -c 'import json, sys; print(",".join(json.load(sys.stdin).get("worker_states") or []))'; }
check "kubeflow: worker 0 is the Master in the run's worker_states" [ "$(wstates ko1)" = "Running,Pending,Pending" ]
named_pod_status ptj-ko1-worker-1 '{"phase":"Running"}'
wait_state ko1 'Running|' >/dev/null
check "kubeflow: worker 2 is Worker 1 (replica type and index)" [ "$(wstates ko1)" = "Running,Pending,Running" ]
pod_log ptj-ko1-master-0 "rank 0 says"
pod_log ptj-ko1-worker-0 "rank 1 says"
pod_log ptj-ko1-worker-1 "rank 2 says"
for p in ptj-ko1-worker-0 ptj-ko1-worker-1; do named_pod_status $p '{"phase":"Running"}'; done
"$berth" logs ko1 >"$tmp/out" 2>&1
check "kubeflow: logs are the Master's" grep -qx 'rank 0 says' "$tmp/out"
ctl requests '' DELETE >/dev/null
"$berth" logs ko1 --rank 2 >"$tmp/out" 2>&1
if grep -qx 'rank 2 says' "$tmp/out" && requests | grep -q \
	'pods?labelSelector=berth.dev/run=ko1,training.kubeflow.org/replica-type=worker,training.kubeflow.org/replica-index=1 '; then
	ok "kubeflow: logs --rank 2 are Worker 1's, by the operator's replica type and index"
else fail "kubeflow: logs --rank 2 are Worker 1's, by the operator's replica type and index" "$(cat "$tmp/out")"; fi
"$berth" logs ko1 --rank 3 >"$tmp/out" 2>&1
check "kubeflow: a rank past its workers is refused" grep -q 'rank 3' "$tmp/out"
for p in ptj-ko1-worker-0 ptj-ko1-worker-1 ptj-ko1-master-0; do named_pod_status $p "$finished"; done
check "kubeflow: Succeeded with the PyTorchJob's condition" wait_state ko1 'Succeeded|'
check "kubeflow: the log kept in berth is the Master's" [ "$(cat "$BERTH_HOME/runs/ko1/log" 2>&1)" = "rank 0 says" ]
spec ptf 'replicas: 2
' >ptf.yaml
run ptf.yaml --config kubeflow.yaml --run-id ko2
named_pod_status ptf-ko2-worker-0 '{"phase":"Failed","containerStatuses":[{"name":"pytorch","state":{"terminated":{"exitCode":3,"reason":"Error"}}}]}'
check "kubeflow: a failed Worker fails the run, in the operator's words" wait_state ko2 'Failed|*PyTorchJobFailed: PyTorchJob ml/ptf-ko2 is failed*'
spec pts 'replicas: 2
' >pts.yaml
run pts.yaml --config kubeflow.yaml --run-id ko3
ctl requests '' DELETE >/dev/null
"$berth" stop ko3 --grace 0 >"$tmp/out" 2>&1
rc=$?
if [ $rc = 0 ] && requests | grep -q 'DELETE /apis/kubeflow.org/v1/namespaces/ml/pytorchjobs/pts-ko3 .* Foreground' &&
	! objects | grep -q pts-ko3 && wait_state ko3 'Stopped|*'; then
	ok "kubeflow: stop deletes the PyTorchJob (foreground: its pods with it)"
else fail "kubeflow: stop deletes the PyTorchJob (foreground: its pods with it)" "exit $rc, left: $(objects | grep -c pts-ko3)"; fi
if "$berth" run ptj.yaml --config kubeflow.yaml --backend kubernetes --dry-run=server --run-id ko4 >"$tmp/out" 2>&1 &&
	grep -q 'PyTorchJob ml/ptj-ko4 accepted (server dry run)' "$tmp/out"; then ok "kubeflow: --dry-run=server"
else fail "kubeflow: --dry-run=server" "$(cat "$tmp/out")"; fi

# an MPIJob: the Launcher's log is the ranks' output; rank N is Worker N
spec mpi 'replicas: 2
distributed: {launcher: mpi, procs_per_worker: 2}
' >mpi.yaml
run mpi.yaml --config kubeflow.yaml --run-id km1
rc=$?
launcher=$(run_pods mpi-km1 | tr ' ' '\n' | grep launcher)
if [ $rc = 0 ] && objects | grep -q '^MPIJob ml/mpi-km1$' && [ -n "$launcher" ] &&
	[ "$(run_pods mpi-km1 | tr ' ' '\n' | grep -c worker)" = 2 ]; then ok "kubeflow: mpi runs as an MPIJob, Launcher and 2 Workers"
else fail "kubeflow: mpi runs as an MPIJob, Launcher and 2 Workers" "exit $rc, pods $(run_pods mpi-km1)"; fi
pod_log "$launcher" "4 ranks say hello"
pod_log mpi-km1-worker-1 "sshd of worker 1"
pod_status km1 '{"phase":"Running"}'
"$berth" logs km1 >"$tmp/out" 2>&1
check "kubeflow: an MPIJob's log is its Launcher's" grep -qx '4 ranks say hello' "$tmp/out"
"$berth" logs km1 --rank 1 >"$tmp/out" 2>&1
check "kubeflow: an MPIJob's rank 1 is Worker 1 (the MPI Operator's role and index)" grep -qx 'sshd of worker 1' "$tmp/out"
check "kubeflow: an MPIJob's worker_states are its Workers' (not its Launcher's)" [ "$(wstates km1)" = "Running,Running" ]
named_pod_status "$launcher" '{"phase":"Succeeded","containerStatuses":[{"name":"mpi","state":{"terminated":{"exitCode":0,"reason":"Completed"}}}]}'
check "kubeflow: an MPIJob succeeds with its Launcher" wait_state km1 'Succeeded|'

# a JobSet: its Indexed Job's pods; the JobSet makes the workers' Service, not berth
spec js 'replicas: 2
distributed: {launcher: torchrun}
' >js.yaml
ctl requests '' DELETE >/dev/null
run js.yaml --config jobset.yaml --run-id kj1
rc=$?
requests >req.txt
if [ $rc = 0 ] && grep -q 'PATCH /apis/jobset.x-k8s.io/v1alpha2/namespaces/ml/jobsets/js-kj1?.* 201' req.txt &&
	! grep -q 'PATCH /api/v1/namespaces/ml/services' req.txt; then ok "jobset: run applies a JobSet, and no Service of berth's"
else fail "jobset: run applies a JobSet, and no Service of berth's" "exit $rc"; fi
for pod in $(run_pods js-kj1); do
	i=$(ctl objects '' GET | python3 -c "import json,sys; print([o for o in json.load(sys.stdin) if o['metadata']['name'] == '$pod'][0]['metadata']['labels']['batch.kubernetes.io/job-completion-index'])")
	pod_log "$pod" "index $i"
done
pod_status kj1 '{"phase":"Running"}'
"$berth" logs kj1 --rank 1 >"$tmp/out" 2>&1
check "jobset: logs --rank 1 are the pod of completion index 1" grep -qx 'index 1' "$tmp/out"
pod_status kj1 "$finished"
check "jobset: Succeeded once the JobSet is Completed" wait_state kj1 'Succeeded|'

# Kueue admits an operator's job whole: it waits suspended (runPolicy.suspend), with no pod
run ptf.yaml --config kubeflow-kueue.yaml --run-id kq1
if wait_state kq1 'Pending|suspended, waiting for Kueue (LocalQueue team-a), but the cluster has no Kueue*' &&
	[ -z "$(run_pods ptf-kq1)" ]; then ok "kueue: a PyTorchJob waits suspended, and says why"
else fail "kueue: a PyTorchJob waits suspended, and says why" "pods: $(run_pods ptf-kq1)"; fi

# refusals: mpi with no MPI Operator; an operator whose API the cluster does not serve
ctl requests '' DELETE >/dev/null
run mpi.yaml --run-id kr1
rc=$?
if [ $rc = 2 ] && grep -q 'distributed.launcher: launcher "mpi" needs the MPI Operator on a cluster.*distributed.operator: kubeflow' "$tmp/out" &&
	! requests | grep -q PATCH && ! "$berth" get run kr1 >/dev/null 2>&1; then
	ok "mpi without an operator: refused naming the policy key, nothing applied or recorded"
else fail "mpi without an operator: refused naming the policy key, nothing applied or recorded" "exit $rc"; fi
ctl crds '{"absent": ["pytorchjobs", "mpijobs"]}' >/dev/null
ctl requests '' DELETE >/dev/null
run ptj.yaml --config kubeflow.yaml --run-id kr2
rc=$?
if [ $rc = 1 ] && grep -q "run \"ptj\": the cluster at $api does not serve PyTorchJob: the API has no kubeflow.org/v1, and the policy's distributed.operator kubeflow renders this run as one; install the Kubeflow Training Operator" "$tmp/out" &&
	! requests | grep -q PATCH && ! "$berth" get run kr2 >/dev/null 2>&1; then
	ok "an operator's API the cluster lacks: the run is refused before anything is applied"
else fail "an operator's API the cluster lacks: the run is refused before anything is applied" "exit $rc"; fi
"$berth" cluster check --config kubeflow.yaml >check.out 2>&1
rc=$?
if [ $rc = 1 ] && grep -q '^missing PyTorchJob API: the API has no kubeflow.org/v1; distributed.operator kubeflow renders torchrun and env jobs as PyTorchJobs' check.out &&
	grep -q '^missing MPIJob API: the API has no kubeflow.org/v2beta1' check.out; then
	ok "cluster check: an operator's missing API"
else cp check.out "$tmp/out"; fail "cluster check: an operator's missing API" "exit $rc"; fi
ctl crds '{"absent": []}' >/dev/null
"$berth" cluster check --config kubeflow.yaml >check.out 2>&1
if grep -q '^ok PyTorchJob API (kubeflow.org/v1, the Kubeflow Training Operator' check.out &&
	grep -q '^ok MPIJob API (kubeflow.org/v2beta1, the MPI Operator' check.out && ! grep -q 'missing .* API' check.out; then
	ok "cluster check: the operator's APIs served"
else cp check.out "$tmp/out"; fail "cluster check: the operator's APIs served" "lines"; fi
ctl crds '{"absent": ["jobsets"]}' >/dev/null
"$berth" cluster check --config jobset.yaml >check.out 2>&1
check "cluster check: JobSet's missing API" grep -q '^missing JobSet API: the API has no jobset.x-k8s.io/v1alpha2' check.out
ctl crds '{"absent": []}' >/dev/null

# ---- berth serve --backend kubernetes ---------------------------------------------------------------------
admin=$("$berth" token create --project '*' --role admin 2>/dev/null | tail -1)
start() {
	"$berth" serve --listen 127.0.0.1:0 --backend kubernetes --kubeconfig "$KUBECONFIG" 2>"$tmp/serve.$1.log" &
	spid=$!
	pids+=("$spid")
	for _ in $(seq 100); do
		port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$tmp/serve.$1.log" 2>/dev/null)
		[ -n "$port" ] && break
		sleep 0.05
	done
	url=http://127.0.0.1:$port
}
# its sweep at start finds what a stopped run left, however many objects of runs it has no record
# of (GitOps', another berth's) come first in the namespace: 600 Secrets of 600 such runs, more
# than a page of a list and than the ids one sweep deletes
python3 - "$api" <<'PY' || echo "FAIL kube (the stand-in's Secrets)"
import http.client, json, ssl, sys
port = int(sys.argv[1].rsplit(':', 1)[1])
ctx = ssl.create_default_context(cafile='ca.pem')
ctx.load_cert_chain('client.pem', 'client.key')
c = http.client.HTTPSConnection('127.0.0.1', port, context=ctx)
def put(name, run):
    body = json.dumps({'apiVersion': 'v1', 'kind': 'Secret', 'metadata': {'name': name, 'namespace': 'ml',
                       'labels': {'app.kubernetes.io/managed-by': 'berth', 'berth.dev/run': run}}})
    c.request('PATCH', f'/api/v1/namespaces/ml/secrets/{name}?fieldManager=test', body,
              {'Content-Type': 'application/apply-patch+yaml'})
    r = c.getresponse(); r.read()
    assert r.status in (200, 201), r.status
for i in range(600):
    put(f'a-gitops-{i:03d}', f'gitops-{i:03d}')
put('z-left-k22', 'k22')
PY
start 1
if ! objects | grep -q '^Secret ml/z-left-k22$' && [ "$(objects | grep -c '^Secret ml/a-gitops-')" = 600 ]; then
	ok "serve: the sweep finds a stopped run's leftover behind 600 objects it has no record of"
else fail "serve: the sweep finds a stopped run's leftover behind 600 objects it has no record of" \
	"left: $(objects | grep -c z-left-k22), gitops: $(objects | grep -c '^Secret ml/a-gitops-')"; fi
spec served "" >served.yaml
code=$(curl -s -o body -w '%{http_code}' -H "Authorization: Bearer $admin" -H 'Content-Type: application/yaml' \
	--data-binary @served.yaml "$url/api/v1/projects/default/runs")
sid=$(json 'd["items"][0]["id"] if "items" in d else d["id"]' <body 2>/dev/null)
if [ "$code" = 201 ] && objects | grep -q "Job ml/served-$sid"; then ok "serve: POST /runs applies the Job"
else cp body "$tmp/out"; fail "serve: POST /runs applies the Job" "HTTP $code"; fi
pod_status "$sid" '{"phase":"Running","startTime":"2026-11-22T10:00:00Z"}'
st=
for _ in $(seq 80); do
	st=$(curl -s -H "Authorization: Bearer $admin" "$url/api/v1/runs/$sid" | json 'd["state"]' 2>/dev/null)
	[ "$st" = Running ] && break
	sleep 0.1
done
check "serve: the reconciler follows the cluster" [ "$st" = Running ]
ctl log "{\"namespace\":\"ml\",\"labelSelector\":\"berth.dev/run=$sid\",\"text\":\"served line\\n\"}" >/dev/null
curl -s -H "Authorization: Bearer $admin" "$url/api/v1/runs/$sid/logs" >"$tmp/out"
check "serve: logs through the API server" grep -qx 'served line' "$tmp/out"
# followers of the quiet running pod that leave: their readers stop within a second or two
# (asked by libcurl's progress callback), not at the pod's next line
threads() { sed -n 's/^Threads:[[:space:]]*//p' "/proc/$spid/status"; }
base=$(threads)
for _ in $(seq 10); do
	curl -s -m 1 -H "Authorization: Bearer $admin" "$url/api/v1/runs/$sid/logs?follow=true" >/dev/null &
done
sleep 0.5
held=$(threads)
wait_threads=
for i in $(seq 50); do
	[ "$(threads)" -le "$base" ] && { wait_threads=$i; break; }
	sleep 0.1
done
if [ "$held" -gt "$base" ] && [ -n "$wait_threads" ]; then
	ok "serve: followers of a quiet pod that leave free their threads (${wait_threads}00 ms after)"
else
	fail "serve: followers of a quiet pod that leave free their threads" "threads $base, then $held with 10 followers, $(threads) 5 s after they left"
fi
# usage over time from the metrics API: a cluster without it is asked, then left alone (no
# samples, no error); with it, the server samples each Running run's pods as it reconciles
# (in the units metrics-server writes: nanocores, rounded up to millicores, and Ki)
usage() { curl -s -H "Authorization: Bearer $admin" "$url/api/v1/runs/$sid/usage"; }
asked=$(requests | awk '$3 ~ /^\/apis\/metrics\.k8s\.io\// {print $6}' | paste -sd,)
n=$(usage | json 'len(d["items"])' 2>/dev/null)
if [ "$asked" = 404 ] && [ "$n" = 0 ] && ! grep -qi 'metrics' "$tmp/serve.1.log"; then
	ok "serve: a cluster without the metrics API is asked once: no samples, nothing said"
else fail "serve: a cluster without the metrics API is asked once: no samples, nothing said" "asked: $asked, samples: $n"; fi
ctl metrics "{\"namespace\":\"ml\",\"labelSelector\":\"berth.dev/run=$sid\",\"cpu\":\"250000001n\",\"memory\":\"65536Ki\"}" >/dev/null
kill "$spid"
wait "$spid" 2>/dev/null
BERTH_SAMPLE_MS=100 start 3
got=
for _ in $(seq 100); do
	got=$(usage | json '",".join("%d:%d:%d:%s" % (x["rank"], x["cpu_milli"], x["mem_bytes"], x.get("gpu_util", "-")) for x in d["items"])' 2>/dev/null)
	[ -n "$got" ] && break
	sleep 0.1
done
query=$(requests | grep -cE " GET /apis/metrics\.k8s\.io/v1beta1/namespaces/ml/pods\?labelSelector=berth\.dev/run=$sid&limit=1000 - [a-z]+ 200")
if [ "${got%%,*}" = "0:251:67108864:-" ] && [ "${query:-0}" -ge 1 ]; then
	ok "serve: samples a Running run's use from the metrics API"
else fail "serve: samples a Running run's use from the metrics API" "samples: $got, asked for its pods by label: $query times"; fi
kill "$spid"
wait "$spid" 2>/dev/null
pod_status "$sid" '{"phase":"Succeeded","containerStatuses":[{"name":"served","state":{"terminated":{"exitCode":0,"reason":"Completed"}}}]}'
start 2
st=$(curl -s -H "Authorization: Bearer $admin" "$url/api/v1/runs/$sid" | json 'd["state"]' 2>/dev/null)
check "serve: after a restart, finds its run again" [ "$st" = Succeeded ]
code=$(curl -s -o body -w '%{http_code}' -X DELETE -H "Authorization: Bearer $admin" "$url/api/v1/runs/$sid")
if [ "$code" = 204 ] && ! objects | grep -q "served-$sid"; then ok "serve: DELETE of a finished run deletes its objects"
else cp body "$tmp/out"; fail "serve: DELETE of a finished run deletes its objects" "HTTP $code"; fi
kill "$spid"
wait "$spid" 2>/dev/null

# ---- no sanitizer report anywhere -------------------------------------------------------------------------
if grep -l 'ERROR: AddressSanitizer\|runtime error:\|LeakSanitizer' "$tmp"/*.out "$tmp"/serve.*.log "$tmp/out" 2>/dev/null; then
	fail "sanitizers" "a report"
else ok "no sanitizer report"; fi

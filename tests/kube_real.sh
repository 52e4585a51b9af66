#!/usr/bin/env bash
# The kubernetes backend against a real control plane (kube-apiserver,
# controller-manager and scheduler 1.26 with etcd, on loopback, and a fake
# kubelet that runs pods to Succeeded): ../shared/k8s, or $BERTH_K8S_FIXTURE.
# A clone without it skips the tier with a line that says so.
#   - a seed spec with the example policy runs to Succeeded once the
#     PriorityClasses of deploy/kubernetes/ exist, and berth stop leaves none
#     of the run's objects behind;
#   - a PriorityClass the cluster does not have: refused at submit when berth may read
#     PriorityClasses; as the ServiceAccount of deploy/kubernetes/rbac.yaml (which may
#     not), the run's reason is the cluster's words, and the run fails, instead of waiting
#     for ever, a Job's or a Deployment's alike; a server says at its start what is missing;
#   - a claim that cannot bind: the claim's own Events are the run's reason;
#   - a server's sweep deletes what is left of stopped and TTL'd runs, nothing else;
#   - berth render's output applies with kubectl apply and --server-side;
#   - queueing through Kueue (kueue.local_queue), with stand-ins for Kueue's CRDs and the
#     test playing its controller: the Job is made suspended with its queue's label, the
#     run's reason is its Workload's (or says the cluster has no Kueue), and the Job runs
#     once resumed;
#   - berth cluster setup makes what the policy needs (its dry run applies with kubectl), and
#     its ServiceAccount has the rights berth uses; a namespace per project gets a LimitRange
#     that defaults and caps pods made around berth, or is taken away again;
#   - a policy that names an operator this cluster does not run (distributed.operator): the
#     run is refused before anything is applied, and berth cluster check says what is missing;
#   - every example and seed runs, and comes to the state a table below says (Succeeded,
#     Running, or Pending with the scheduler's words); berth stop leaves nothing of what had
#     not ended, and cleanup.ttl_after_finished nothing of the jobs, in any namespace.
# Prints "ok NAME" / "FAIL NAME" / "skip NAME" per check.
#   tests/kube_real.sh BERTH
set -u
berth=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$(dirname "$0")/.." && pwd)
fixture=${BERTH_K8S_FIXTURE:-$root/../shared/k8s}
ok() { echo "ok kube-real $1"; }
fail() {
	echo "FAIL kube-real $1: $2"
	[ -f "$tmp/out" ] && sed 's/^/    /' "$tmp/out" | head -15
}
skip() { echo "skip kube-real $1 ($2)"; }
if [ ! -x "$fixture/cluster" ]; then
	skip control-plane "no real control plane here: $fixture/cluster is missing (../shared/k8s)"
	exit 0
fi
tmp=$(mktemp -d)
state=$tmp/cluster
cleanup() {
	"$fixture/cluster" stop "$state" --wipe >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
export BERTH_HOME=$tmp/home
unset BERTH_CONFIG BERTH_SERVER BERTH_TOKEN KUBERNETES_SERVICE_HOST KUBERNETES_SERVICE_PORT
cd "$tmp" || exit 1

# Jobs complete 2 s after their pod starts
if ! KUBECONFIG=$(FAKE_KUBELET_ARGS="--pod-phase=running --complete-after=2s" \
	CLUSTER_BIN_DIR=${BERTH_K8S_BIN_DIR:-$tmp/bin} "$fixture/cluster" start "$state" 2>start.log); then
	echo "FAIL kube-real control-plane: it did not start"
	tail -20 start.log | sed 's/^/    /'
	exit 0
fi
export KUBECONFIG
. "$state/cluster.env"
ok control-plane
api() { # METHOD PATH [BODY]: the API server's answer, as the admin
	curl -s --cacert "$K8S_CA_FILE" -H "Authorization: Bearer $(cat "$K8S_TOKEN_FILE")" \
		-H 'Content-Type: application/json' -X "$1" "$K8S_API_URL$2" ${3:+-d "$3"}
}
field() { "$berth" get run "$1" -o json 2>/dev/null | python3 -c "import json,sys; print(json.load(sys.stdin).get('$2',''))"; }
# wait_for ID STATE SECONDS: until the run's state is STATE (get asks the cluster)
wait_for() {
	for _ in $(seq $((${3} * 2))); do
		[ "$(field "$1" state)" = "$2" ] && return 0
		sleep 0.5
	done
	return 1
}
# leftovers ID...: the runs' objects still on the cluster, by their label, in every namespace,
# of every namespaced kind berth makes, and the ReplicaSets its Deployments make:
# "RESOURCE NAMESPACE/NAME (run ID)" each, or a line that says a kind could not be listed
leftovers() {
	local ids=$*
	for p in api/v1/pods api/v1/secrets api/v1/persistentvolumeclaims api/v1/services \
		apis/batch/v1/jobs apis/batch/v1/cronjobs apis/apps/v1/deployments apis/apps/v1/replicasets \
		apis/autoscaling/v2/horizontalpodautoscalers; do
		printf '\x1e%s\n' "${p##*/}"
		api GET "/$p?labelSelector=berth.dev/run+in+(${ids// /,})"
	done | python3 -c '
import json, sys
for part in sys.stdin.read().split("\x1e")[1:]:
	kind, _, body = part.partition("\n")
	try:
		items = json.loads(body)["items"]
	except (ValueError, KeyError, TypeError):
		print(kind, "could not be listed:", " ".join(body.split())[:200])
		continue
	for i in items:
		m = i["metadata"]
		print(kind, m["namespace"] + "/" + m["name"], "(run " + m["labels"]["berth.dev/run"] + ")")
'
}
api POST /api/v1/namespaces '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ml-jobs"}}' >/dev/null
for _ in $(seq 40); do
	api GET /api/v1/namespaces/ml-jobs/serviceaccounts/default | grep -q '"uid"' && break
	sleep 0.25
done
policy=$root/examples/policy/config.yaml
cat >job.yaml <<'EOF'
name: train
function:
  image: python:3.11
  command: ["python", "-c", "print(1)"]
resources:
  cpu: "1"
  mem: 1Gi
EOF

# ---- berth cluster check names what is missing, and what fixes it --------------------------
"$berth" cluster check --config "$policy" >check.out 2>out
status=$?
if [ $status = 1 ] && grep -q '^missing PriorityClass berth-medium: .*deploy/kubernetes/priorityclasses.yaml' check.out &&
	grep -q '^ok namespace ml-jobs' check.out && grep -q '^ok rights on batch/jobs in namespace ml-jobs' check.out &&
	grep -q '^missing StorageClass standard: ' check.out && grep -q '^4 missing$' check.out; then
	ok cluster-check-names-missing
else
	fail cluster-check-names-missing "exit $status: $(tr '\n' '|' <check.out)"
fi

# ---- a PriorityClass the cluster does not have ----------------------------------------------
# as the admin, who may read PriorityClasses: refused at once, nothing recorded, nothing left
"$berth" run job.yaml --backend kubernetes --config "$policy" --run-id nopc0 >/dev/null 2>out
status=$?
if [ $status = 1 ] && grep -q 'has no PriorityClass "berth-medium" (the policy.s for priority medium)' out &&
	! "$berth" get run nopc0 >/dev/null 2>&1 && [ -z "$(leftovers nopc0)" ]; then
	ok missing-priorityclass-refused-at-submit
else
	fail missing-priorityclass-refused-at-submit "exit $status: $(head -c 300 out)"
fi
# a server says at its start, before its first submit, what the cluster lacks
"$berth" serve --listen 127.0.0.1:0 --backend kubernetes --config "$policy" 2>serve0.log &
spid=$!
for _ in $(seq 60); do grep -q 'cluster check: [0-9]* missing' serve0.log && break; sleep 0.25; done
kill $spid 2>/dev/null
wait $spid 2>/dev/null
if grep -q '^berth serve: cluster check: missing PriorityClass berth-medium: ' serve0.log &&
	grep -q '^berth serve: cluster check: 4 missing' serve0.log; then
	ok serve-start-checks-cluster
else
	fail serve-start-checks-cluster "$(grep 'cluster check' serve0.log | tr '\n' '|')"
fi
# as berth's own identity (deploy/kubernetes/rbac.yaml: a Role in the runs' namespace, which
# may not read PriorityClasses), the run goes to the cluster, which refuses its pods: the
# cluster's words, then Failed. Every later step of these runs is done with that Role's rights.
if ! command -v kubectl >/dev/null; then
	skip rbac-identity "no kubectl here"
	cp "$KUBECONFIG" sa.kubeconfig
elif kubectl apply -f "$root/deploy/kubernetes/rbac.yaml" >out 2>&1 &&
	token=$(kubectl -n berth create token berth 2>>out) && [ -n "$token" ]; then
	sed "s#token: .*#token: $token#" "$KUBECONFIG" >sa.kubeconfig
	ok rbac-identity
else
	fail rbac-identity "the ServiceAccount of deploy/kubernetes/rbac.yaml could not be made"
	cp "$KUBECONFIG" sa.kubeconfig
fi
id=$("$berth" run job.yaml --backend kubernetes --config "$policy" --run-id nopc1 --kubeconfig sa.kubeconfig 2>out)
ok=0
for _ in $(seq 60); do
	reason=$(field nopc1 reason)
	case $reason in *"no PriorityClass with name berth-medium was found"*) ok=1; break ;; esac
	sleep 0.5
done
if [ "$id" = nopc1 ] && [ $ok = 1 ]; then ok missing-priorityclass-reason; else
	fail missing-priorityclass-reason "id $id, reason: $(field nopc1 reason)"
fi
if wait_for nopc1 Failed 40 && field nopc1 reason | grep -q 'FailedCreate'; then
	ok missing-priorityclass-fails
	# its Job would be retried for ever: it went with the run's end
	for _ in $(seq 20); do [ -z "$(leftovers nopc1)" ] && break; sleep 0.5; done
	if [ -z "$(leftovers nopc1)" ]; then ok refused-run-leaves-nothing; else
		fail refused-run-leaves-nothing "left: $(leftovers nopc1 | tr '\n' ' ')"
	fi
else
	fail missing-priorityclass-fails "$(field nopc1 state): $(field nopc1 reason)"
fi
timeout 90 "$berth" run job.yaml --backend kubernetes --config "$policy" --run-id nopc2 --kubeconfig sa.kubeconfig --wait >/dev/null 2>out
status=$?
if [ $status = 1 ] && [ "$(field nopc2 state)" = Failed ]; then ok missing-priorityclass-wait-ends; else
	fail missing-priorityclass-wait-ends "exit $status, $(field nopc2 state): $(field nopc2 reason)"
fi
"$berth" stop nopc1 nopc2 >/dev/null 2>&1
# ... for a serve run too: its Deployment's ReplicaSet is refused, which the Deployment's
# ReplicaFailure condition says; the run fails with those words and leaves nothing
cat >web.yaml <<'EOF'
name: web
action: serve
function:
  image: python:3.11
  command: ["python", "-m", "http.server"]
EOF
"$berth" run web.yaml --backend kubernetes --config "$policy" --run-id nopc3 --kubeconfig sa.kubeconfig >/dev/null 2>out
if wait_for nopc3 Failed 40 && field nopc3 reason | grep -q 'FailedCreate: .*no PriorityClass with name berth-medium was found.*ReplicaSet'; then
	ok missing-priorityclass-serve-fails
	for _ in $(seq 20); do [ -z "$(leftovers nopc3)" ] && break; sleep 0.5; done
	if [ -z "$(leftovers nopc3)" ]; then ok refused-serve-leaves-nothing; else
		fail refused-serve-leaves-nothing "left: $(leftovers nopc3 | tr '\n' ' ')"
	fi
else
	fail missing-priorityclass-serve-fails "$(field nopc3 state): $(field nopc3 reason)"
fi

# a cluster that cannot be reached is not "ready"
sed "s#server: .*#server: https://127.0.0.1:1#" "$KUBECONFIG" >unreachable.kubeconfig
"$berth" cluster check --config "$policy" --kubeconfig unreachable.kubeconfig >check.out 2>out
status=$?
if [ $status = 1 ] && grep -q 'nothing could be asked' check.out; then ok cluster-check-unreachable; else
	fail cluster-check-unreachable "exit $status: $(tail -2 check.out | tr '\n' '|')"
fi

# ---- berth cluster setup makes what the policy needs; its dry run applies with kubectl ----
"$berth" cluster setup --config "$policy" >setup.out 2>out
status=$?
# ml-jobs was made above as setup makes it: nothing of it changes; the rest of
# deploy/kubernetes/rbac.yaml was applied above with kubectl: berth takes their fields over
if [ $status = 0 ] && [ "$(tr '\n' '|' <setup.out)" = "created PriorityClass berth-high|created PriorityClass berth-medium|\
created PriorityClass berth-low|configured Namespace berth|unchanged Namespace ml-jobs|configured ServiceAccount berth/berth|\
configured Role ml-jobs/berth-runs|configured RoleBinding ml-jobs/berth-runs|" ]; then
	ok setup-creates
else
	fail setup-creates "exit $status: $(tr '\n' '|' <setup.out)"
fi
"$berth" cluster setup --config "$policy" >setup.out 2>out
status=$?
if [ $status = 0 ] && [ "$(grep -c '^unchanged ' setup.out)" = 8 ] && [ "$(wc -l <setup.out)" = 8 ]; then
	ok setup-again-unchanged
else
	fail setup-again-unchanged "exit $status: $(tr '\n' '|' <setup.out)"
fi
if command -v kubectl >/dev/null; then
	# what an admin reviews and applies instead, as it is: client-side and server-side apply
	"$berth" cluster setup --dry-run --config "$policy" >setup.yaml 2>out
	if kubectl apply -f setup.yaml >out 2>&1 && grep -q 'priorityclass.scheduling.k8s.io/berth-low' out; then
		ok setup-dry-run-kubectl-apply
	else
		fail setup-dry-run-kubectl-apply "kubectl apply -f refused berth cluster setup --dry-run"
	fi
	if kubectl apply --server-side -f setup.yaml >out 2>&1 && grep -q 'rolebinding.rbac.authorization.k8s.io/berth-runs serverside-applied' out; then
		ok setup-dry-run-kubectl-apply-server-side
	else
		fail setup-dry-run-kubectl-apply-server-side "kubectl apply --server-side refused berth cluster setup --dry-run"
	fi
else
	skip setup-dry-run-kubectl-apply "no kubectl here"
	skip setup-dry-run-kubectl-apply-server-side "no kubectl here"
fi
# the example policy's storage.default_class
api POST /apis/storage.k8s.io/v1/storageclasses \
	'{"apiVersion":"storage.k8s.io/v1","kind":"StorageClass","metadata":{"name":"standard"},"provisioner":"kubernetes.io/no-provisioner"}' >/dev/null
"$berth" cluster check --config "$policy" >check.out 2>out
status=$?
if [ $status = 0 ] && grep -q '^ok PriorityClass berth-medium' check.out && grep -q '^0 missing$' check.out; then
	ok cluster-check-ready
else
	fail cluster-check-ready "exit $status: $(tr '\n' '|' <check.out)"
fi
# the ServiceAccount setup made has every right berth uses, and no more than it needs to run
sa_kubeconfig() { # the admin's kubeconfig with a token of berth's ServiceAccount instead
	local token
	token=$(api POST /api/v1/namespaces/berth/serviceaccounts/berth/token \
		'{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{"expirationSeconds":3600}}' |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["status"]["token"])')
	sed "s#^\( *token:\).*#\1 $token#" "$KUBECONFIG" >sa.kubeconfig
}
sa_kubeconfig
"$berth" cluster check --config "$policy" --kubeconfig sa.kubeconfig >check.out 2>out
status=$?
if [ $status = 0 ] && grep -q '^ok rights on batch/jobs in namespace ml-jobs' check.out &&
	! grep -q '^missing' check.out && grep -q '^unknown PriorityClass berth-high: this identity may not read it' check.out; then
	ok setup-identity-has-the-rights
else
	fail setup-identity-has-the-rights "exit $status: $(tr '\n' '|' <check.out)"
fi
"$berth" run job.yaml --backend kubernetes --config "$policy" --kubeconfig sa.kubeconfig --run-id sa1 --wait >/dev/null 2>out
status=$?
if [ $status = 0 ] && [ "$(field sa1 state)" = Succeeded ]; then ok setup-identity-runs; else
	fail setup-identity-runs "exit $status, $(field sa1 state): $(field sa1 reason)"
fi
"$berth" run job.yaml --backend kubernetes --config "$policy" --run-id seed1 --wait >/dev/null 2>out
status=$?
if [ $status = 0 ] && [ "$(field seed1 state)" = Succeeded ]; then ok seed-job-succeeds; else
	fail seed-job-succeeds "exit $status, $(field seed1 state): $(field seed1 reason)"
fi
# a claim that cannot bind: its pod is unschedulable, and the claim's own Events say why
cat >claimy.yaml <<'EOF'
name: claimy
function:
  image: python:3.11
  command: ["python", "-c", "print(1)"]
volumes:
  - volume_type: persistent_volume_claim
    name: data
    mount_path: /data
    spec: {size: 1Gi, storage_class: nope, access_mode: ReadWriteOnce}
EOF
"$berth" run claimy.yaml --backend kubernetes --config "$policy" --run-id pvc1 >/dev/null 2>out
ok=0
for _ in $(seq 60); do
	case $(field pvc1 reason) in *'storageclass.storage.k8s.io "nope" not found (PersistentVolumeClaim claimy-pvc1-data'*) ok=1; break ;; esac
	sleep 0.5
done
if [ $ok = 1 ] && [ "$(field pvc1 state)" = Pending ]; then ok unbound-claim-reason; else
	fail unbound-claim-reason "$(field pvc1 state): $(field pvc1 reason)"
fi
"$berth" stop pvc1 >/dev/null 2>&1
# cleanup.ttl_after_finished: the cluster's TTL controller removes the finished Job and its
# pods; berth keeps the run's record
cp "$policy" ttl-policy.yaml
printf 'cleanup:\n  ttl_after_finished: 2\n' >>ttl-policy.yaml
"$berth" run job.yaml --backend kubernetes --config ttl-policy.yaml --run-id ttl1 --wait >/dev/null 2>out
for _ in $(seq 60); do [ -z "$(leftovers ttl1)" ] && break; sleep 0.5; done
if [ "$(field ttl1 state)" = Succeeded ] && [ -z "$(leftovers ttl1)" ]; then ok ttl-after-finished; else
	fail ttl-after-finished "$(field ttl1 state); left: $(leftovers ttl1 | tr '\n' ' ')"
fi
# a namespace per project: made on the project's first run with a ResourceQuota from the
# project's quota, which the cluster then holds for pods made around berth too
cat >ns-policy.yaml <<'EOF2'
namespace: "ml-{project}"
defaults:
  resources: {cpu: 100m, mem: 256Mi}
  mem_limit_ratio: 1.1
limits: {cpu: "12", mem: 16Gi, gpu: "4"}
quotas:
  vision: {cpu: "8", mem: 32Gi, gpu: "2"}
  audio: {cpu: "4"}
EOF2
sed 's/^name: train$/project: vision\nname: train/' job.yaml >vision.yaml
"$berth" run vision.yaml --backend kubernetes --config ns-policy.yaml --run-id nsp1 --wait >/dev/null 2>out
status=$?
hard=$(api GET /api/v1/namespaces/ml-vision/resourcequotas/berth-quota |
	python3 -c 'import json,sys; h=json.load(sys.stdin).get("spec",{}).get("hard",{}); print(h.get("requests.cpu"), h.get("requests.memory"), h.get("requests.nvidia.com/gpu"))')
label=$(api GET /api/v1/namespaces/ml-vision | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"].get("labels",{}).get("berth.dev/project"))')
if [ $status = 0 ] && [ "$(field nsp1 state)" = Succeeded ] && [ "$hard" = "8 32Gi 2" ] && [ "$label" = vision ]; then
	ok namespace-per-project
else
	fail namespace-per-project "exit $status, $(field nsp1 state): $(field nsp1 reason); quota $hard; label $label"
fi
# ... and a LimitRange from the policy's limits and defaults: a pod made around berth without
# resources gets what a run that asks for nothing gets (the LimitRanger sets them at create)
limits=$(api GET /api/v1/namespaces/ml-vision/limitranges/berth-limits |
	python3 -c 'import json,sys; l=json.load(sys.stdin)["spec"]["limits"][0]; print(l["type"], *(f"{k}={sorted(l[k].items())}" for k in ("max","default","defaultRequest")))')
want_limits="Container max=[('cpu', '12'), ('memory', '16Gi'), ('nvidia.com/gpu', '4')] \
default=[('cpu', '12'), ('memory', '282Mi'), ('nvidia.com/gpu', '0')] \
defaultRequest=[('cpu', '100m'), ('memory', '256Mi'), ('nvidia.com/gpu', '0')]"
if [ "$limits" = "$want_limits" ]; then ok project-limit-range; else
	fail project-limit-range "$limits"
fi
if command -v kubectl >/dev/null; then
	kubectl -n ml-vision run plain --image=x --restart=Never >out 2>&1
	got=$(kubectl -n ml-vision get pod plain -o json 2>>out |
		python3 -c 'import json,sys; r=json.load(sys.stdin)["spec"]["containers"][0]["resources"]; print(sorted(r["requests"].items()), sorted(r["limits"].items()))')
	if [ "$got" = "[('cpu', '100m'), ('memory', '256Mi'), ('nvidia.com/gpu', '0')] [('cpu', '12'), ('memory', '282Mi'), ('nvidia.com/gpu', '0')]" ]; then
		ok project-limit-range-defaults-a-pod
	else
		fail project-limit-range-defaults-a-pod "$got"
	fi
else
	skip project-limit-range-defaults-a-pod "no kubectl here"
fi
over=$(api POST /api/v1/namespaces/ml-vision/pods '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"over"},"spec":{"containers":[{"name":"c","image":"x","resources":{"limits":{"cpu":"13"}}}]}}')
if echo "$over" | grep -q 'maximum cpu usage per Container is 12, but limit is 13'; then ok project-limit-range-max; else
	fail project-limit-range-max "$(echo "$over" | head -c 300)"
fi
# a pod made around berth, under the policy's limits but over the project's quota: the cluster
# refuses it
big=$(api POST /api/v1/namespaces/ml-vision/pods '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"around"},"spec":{"containers":[{"name":"c","image":"x","resources":{"requests":{"cpu":"10","memory":"1Gi"},"limits":{"cpu":"10","memory":"1Gi"}}}]}}')
if echo "$big" | grep -q 'exceeded quota: berth-quota'; then ok project-quota-held-by-cluster; else
	fail project-quota-held-by-cluster "$(echo "$big" | head -c 300)"
fi
# berth cluster setup of that policy: the namespace of each project quotas names, with its quota,
# LimitRange and berth's RoleBinding, and the ClusterRoles; as berth's ServiceAccount, then,
# namespaces can be made
"$berth" cluster setup --config ns-policy.yaml >setup.out 2>out
status=$?
if [ $status = 0 ] && grep -q '^created ClusterRole berth-namespaces$' setup.out &&
	grep -Eq '^(configured|unchanged) LimitRange ml-vision/berth-limits$' setup.out &&
	grep -q '^created LimitRange ml-audio/berth-limits$' setup.out && grep -q '^created RoleBinding ml-audio/berth-runs$' setup.out &&
	[ "$(api GET /api/v1/namespaces/ml-audio/resourcequotas/berth-quota | python3 -c 'import json,sys; print(json.load(sys.stdin)["spec"]["hard"])')" = "{'requests.cpu': '4'}" ]; then
	ok setup-namespace-per-project
else
	fail setup-namespace-per-project "exit $status: $(tr '\n' '|' <setup.out)"
fi
if command -v kubectl >/dev/null; then
	"$berth" cluster setup --dry-run --config ns-policy.yaml >setup.yaml 2>out
	if kubectl apply -f setup.yaml >out 2>&1 && kubectl apply --server-side -f setup.yaml >>out 2>&1; then
		ok setup-namespace-per-project-kubectl-apply
	else
		fail setup-namespace-per-project-kubectl-apply "kubectl apply refused berth cluster setup --dry-run"
	fi
fi
"$berth" cluster check --config ns-policy.yaml --kubeconfig sa.kubeconfig >check.out 2>out
if grep -q '^ok rights to create namespaces$' check.out; then ok setup-identity-makes-namespaces; else
	fail setup-identity-makes-namespaces "$(tr '\n' '|' <check.out)"
fi
# a policy whose LimitRange the API would refuse (a default request over the max) is refused
# when it is loaded, at its place, before any namespace is made (issue 23: a default over a
# limit could only ever refuse runs); a ratio that would take the default limit over the max
# gets a LimitRange capped at it, which the API takes
cat >bad-limits.yaml <<'EOF2'
namespace: "ml-{project}"
defaults:
  resources: {cpu: "2"}
limits: {cpu: "1"}
EOF2
cat >ratio-limits.yaml <<'EOF2'
namespace: "ml-{project}"
defaults:
  resources: {mem: 64Mi}
  mem_limit_ratio: 4
limits: {mem: 128Mi}
EOF2
sed 's/^name: train$/project: rollback\nname: train/; s/cpu: "1"/cpu: 500m/' job.yaml >rollback.yaml
"$berth" run rollback.yaml --backend kubernetes --config bad-limits.yaml --run-id rb1 >/dev/null 2>out
status=$?
gone=
for _ in $(seq 20); do
	api GET /api/v1/namespaces/ml-rollback | python3 -c 'import json,sys; o=json.load(sys.stdin); sys.exit(0 if o.get("code") == 404 or o.get("metadata",{}).get("deletionTimestamp") else 1)' && { gone=1; break; }
	sleep 0.5
done
sed 's/^name: train$/project: ratio\nname: train/; s/cpu: "1"/cpu: 500m/; s/mem: 1Gi/mem: 64Mi/' job.yaml >ratio.yaml
"$berth" run ratio.yaml --backend kubernetes --config ratio-limits.yaml --run-id rt1 --wait >/dev/null 2>ratio.out
rstatus=$?
lr=$(api GET /api/v1/namespaces/ml-ratio/limitranges/berth-limits | python3 -c 'import json,sys; l=json.load(sys.stdin)["spec"]["limits"][0]; print(l["max"]["memory"], l["default"]["memory"])' 2>/dev/null)
if [ $status = 2 ] && grep -q 'bad-limits.yaml:3:.*defaults.resources.cpu.requests: cpu 2 is over the platform.s limit of 1 per run' out &&
	[ -n "$gone" ] && [ $rstatus = 0 ] && [ "$lr" = "128Mi 128Mi" ]; then
	ok project-limit-range-consistent-with-limits
else
	fail project-limit-range-consistent-with-limits "exit $status, namespace ml-rollback gone or never made: ${gone:-no}; ratio run exit $rstatus, LimitRange [$lr]; $(head -c 300 ratio.out)"
fi
"$berth" stop rt1 >/dev/null 2>&1
# ... also when nothing followed the run until its Job was gone: its end is read from the Job's
# Events, not taken for a deletion outside berth
"$berth" run job.yaml --backend kubernetes --config ttl-policy.yaml --run-id ttl2 >/dev/null 2>out
for _ in $(seq 60); do
	api GET /apis/batch/v1/namespaces/ml-jobs/jobs/train-ttl2 | grep -q '"code": 404' && break
	sleep 0.5
done
# (its Events may be written after the Job is gone: the run waits for them)
if wait_for ttl2 Succeeded 15 && field ttl2 reason | grep -q 'removed by the cluster after it finished'; then
	ok ttl-after-finished-unfollowed
else
	fail ttl-after-finished-unfollowed "$(field ttl2 state): $(field ttl2 reason)"
fi
# a run with a secret: the Secret with its values is on the cluster while the run needs it,
# and gone once the run has ended (the Job and its pods stay, for their logs)
printf %s 's3cr3t' | "$berth" secrets set api-token >/dev/null 2>&1
sed 's/^name: train$/name: train\nsecrets: [api-token]/' job.yaml >secret.yaml
"$berth" run secret.yaml --backend kubernetes --config "$policy" --run-id sec1 >/dev/null 2>out
secrets_of() { # ID: how many Secrets carry the run's label
	api GET "/api/v1/namespaces/ml-jobs/secrets?labelSelector=berth.dev/run%3D$1" |
		python3 -c 'import json,sys; print(len(json.load(sys.stdin).get("items",[])))'
}
held=$(secrets_of sec1)
wait_for sec1 Succeeded 30
if [ "$held" = 1 ] && [ "$(field sec1 state)" = Succeeded ] && [ "$(secrets_of sec1)" = 0 ] &&
	[ -n "$(leftovers sec1)" ]; then
	ok secret-gone-when-run-ends
else
	fail secret-gone-when-run-ends "Secrets while it ran $held, after $(secrets_of sec1); $(field sec1 state)"
fi
cat >sleepy.yaml <<'EOF'
name: sleepy
action: serve
function:
  image: python:3.11
  command: ["python", "-m", "http.server"]
EOF
"$berth" run sleepy.yaml --backend kubernetes --config "$policy" --run-id serve1 >/dev/null 2>out
wait_for serve1 Running 30
"$berth" stop serve1 >/dev/null 2>out
left=$(leftovers serve1)
if [ "$(field serve1 state)" = Stopped ] && [ -z "$left" ]; then ok stop-leaves-nothing; else
	fail stop-leaves-nothing "$(field serve1 state); left: $left"
fi
# berth's own sweep (a server's, at its start and every minute): what a stop or a TTL left
# behind (here made by hand: a delete that failed) goes; what berth has no record of stays
leftover() { # NAME RUN KIND-PATH BODY-KIND
	api POST "/api/v1/namespaces/ml-jobs/$3" "{\"apiVersion\":\"v1\",\"kind\":\"$4\",\"metadata\":{\"name\":\"$1\",\"labels\":{\"app.kubernetes.io/managed-by\":\"berth\",\"berth.dev/run\":\"$2\"}}${5:-}}" >/dev/null
}
leftover left-serve1 serve1 secrets Secret
leftover left-ttl1 ttl1 services Service ',"spec":{"ports":[{"port":80}]}'
leftover left-norecord norecord1 secrets Secret
"$berth" serve --listen 127.0.0.1:0 --backend kubernetes --config ttl-policy.yaml 2>serve.log &
spid=$!
for _ in $(seq 60); do [ -z "$(leftovers serve1)$(leftovers ttl1)" ] && break; sleep 0.5; done
kill $spid 2>/dev/null
wait $spid 2>/dev/null
if [ -z "$(leftovers serve1)$(leftovers ttl1)" ] && [ -n "$(leftovers norecord1)" ]; then ok sweep-takes-what-was-left; else
	fail sweep-takes-what-was-left "left: $(leftovers serve1) $(leftovers ttl1); no record's: $(leftovers norecord1)"
	tail -5 serve.log
fi
# what is left being deleted, held by a finalizer not berth's, is not deleted again and again
# (each sweep, every minute) with a "Cleaned" event each time while it stays
cleaned() { python3 -c "import sqlite3; print(sqlite3.connect('$BERTH_HOME/berth.db').execute(\"select count(*) from events where run_id='serve1' and kind='Cleaned'\").fetchone()[0])"; }
api POST /api/v1/namespaces/ml-jobs/secrets '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"held-serve1","finalizers":["berth.test/hold"],"labels":{"app.kubernetes.io/managed-by":"berth","berth.dev/run":"serve1"}}}' >/dev/null
api DELETE /api/v1/namespaces/ml-jobs/secrets/held-serve1 >/dev/null
before=$(cleaned)
for i in 1 2; do
	"$berth" serve --listen 127.0.0.1:0 --backend kubernetes --config ttl-policy.yaml 2>serve.held.log &
	spid=$!
	for _ in $(seq 60); do grep -q 'listening on' serve.held.log && break; sleep 0.25; done # (it sweeps first)
	kill $spid 2>/dev/null
	wait $spid 2>/dev/null
done
if [ "$(cleaned)" = "$before" ] && [ -n "$(leftovers serve1)" ]; then ok sweep-leaves-what-finalizers-hold; else
	fail sweep-leaves-what-finalizers-hold "Cleaned events: $before, then $(cleaned); left: $(leftovers serve1)"
fi
curl -s --cacert "$K8S_CA_FILE" -H "Authorization: Bearer $(cat "$K8S_TOKEN_FILE")" -H 'Content-Type: application/merge-patch+json' \
	-X PATCH "$K8S_API_URL/api/v1/namespaces/ml-jobs/secrets/held-serve1" -d '{"metadata":{"finalizers":null}}' >/dev/null

# ---- queueing through Kueue (kueue.local_queue) -------------------------------------------
# No Kueue controller runs here: the test plays it. The Job is made suspended with its queue's
# label; the test writes its Workload (owned by the Job, as Kueue's controller makes it) and the
# Workload's conditions, then resumes the Job as Kueue does on admission.
apipatch() { # PATH JSON: a merge patch, as the admin
	curl -s --cacert "$K8S_CA_FILE" -H "Authorization: Bearer $(cat "$K8S_TOKEN_FILE")" \
		-H 'Content-Type: application/merge-patch+json' -X PATCH "$K8S_API_URL$1" -d "$2"
}
job_field() { # NAME PYTHON-EXPR(j): of the Job in ml-jobs
	api GET "/apis/batch/v1/namespaces/ml-jobs/jobs/$1" |
		python3 -c "import json,sys; j=json.load(sys.stdin); print($2)" 2>/dev/null
}
# reason_has ID TEXT SECONDS: until the run's reason (get asks the cluster) holds TEXT
reason_has() {
	for _ in $(seq $((${3} * 2))); do
		case $(field "$1" reason) in *"$2"*) return 0 ;; esac
		sleep 0.5
	done
	return 1
}
# workload NAME JOB UID LABELLED(yes/no): the Workload, as Kueue makes it for a Job
workload() {
	local labels=
	[ "$4" = yes ] && labels="\"labels\":{\"kueue.x-k8s.io/job-uid\":\"$3\"},"
	api POST /apis/kueue.x-k8s.io/v1beta1/namespaces/ml-jobs/workloads \
		"{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":\"Workload\",\"metadata\":{\"name\":\"$1\",$labels\"ownerReferences\":[{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"name\":\"$2\",\"uid\":\"$3\",\"controller\":true,\"blockOwnerDeletion\":true}]},\"spec\":{\"queueName\":\"team-a\"}}" >/dev/null
}
# conditions NAME JSON-LIST: the Workload's status, through its status subresource, as Kueue writes it
conditions() {
	apipatch "/apis/kueue.x-k8s.io/v1beta1/namespaces/ml-jobs/workloads/$1/status" "{\"status\":{\"conditions\":$2}}" >/dev/null
}
printf 'namespace: ml-jobs\nkueue:\n  local_queue: team-a\n' >kq-policy.yaml

# a cluster without Kueue: the Job waits suspended, and the reason says why it will not start
"$berth" run job.yaml --backend kubernetes --config kq-policy.yaml --run-id kq0 >/dev/null 2>out
if reason_has kq0 'the cluster has no Kueue' 20 && [ "$(field kq0 state)" = Pending ] &&
	field kq0 reason | grep -q 'the Workload CRD is missing'; then
	ok kueue-missing-crd-named
else
	fail kueue-missing-crd-named "$(field kq0 state): $(field kq0 reason)"
fi
"$berth" cluster check --config kq-policy.yaml >check.out 2>out
status=$?
if [ $status = 1 ] && grep -q '^missing Kueue: the API has no kueue.x-k8s.io/v1beta1' check.out; then
	ok kueue-cluster-check-no-kueue
else
	fail kueue-cluster-check-no-kueue "exit $status: $(tr '\n' '|' <check.out)"
fi
"$berth" stop kq0 >/dev/null 2>&1

# Kueue's resources (stand-ins for its CRDs: tests/data/kueue/)
for crd in workload localqueue; do
	api POST /apis/apiextensions.k8s.io/v1/customresourcedefinitions "$(cat "$root/tests/data/kueue/$crd-crd.json")" >/dev/null
done
for _ in $(seq 40); do
	discovery=$(api GET /apis/kueue.x-k8s.io/v1beta1)
	case $discovery in *'"localqueues"'*'"workloads"'* | *'"workloads"'*'"localqueues"'*) break ;; esac
	sleep 0.25
done
"$berth" cluster check --config kq-policy.yaml >check.out 2>out
status=$?
if [ $status = 1 ] && grep -q '^ok Kueue' check.out &&
	grep -q '^missing LocalQueue team-a: .*create the LocalQueue team-a in namespace ml-jobs' check.out &&
	grep -q '^ok rights on kueue.x-k8s.io/workloads in namespace ml-jobs' check.out; then
	ok kueue-cluster-check-missing-localqueue
else
	fail kueue-cluster-check-missing-localqueue "exit $status: $(tr '\n' '|' <check.out)"
fi
api POST /apis/kueue.x-k8s.io/v1beta1/namespaces/ml-jobs/localqueues \
	'{"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"LocalQueue","metadata":{"name":"team-a"},"spec":{"clusterQueue":"cq"}}' >/dev/null
"$berth" cluster check --config kq-policy.yaml >check.out 2>out
status=$?
if [ $status = 0 ] && grep -q '^ok LocalQueue team-a' check.out; then ok kueue-cluster-check-ready; else
	fail kueue-cluster-check-ready "exit $status: $(tr '\n' '|' <check.out)"
fi

# the Job is made suspended, with its queue's label, and no pod is made for it
"$berth" run job.yaml --backend kubernetes --config kq-policy.yaml --run-id kq1 >/dev/null 2>out
made=$(job_field train-kq1 "j['spec'].get('suspend'), j['metadata']['labels'].get('kueue.x-k8s.io/queue-name')")
sleep 1
pods=$(api GET "/api/v1/namespaces/ml-jobs/pods?labelSelector=berth.dev/run%3Dkq1" |
	python3 -c 'import json,sys; print(len(json.load(sys.stdin)["items"]))')
if [ "$made" = "True team-a" ] && [ "$pods" = 0 ]; then ok kueue-job-suspended-with-queue; else
	fail kueue-job-suspended-with-queue "suspend, queue: $made; pods $pods"
fi
if reason_has kq1 'waiting for Kueue to make its Workload (LocalQueue team-a)' 10 &&
	! field kq1 reason | grep -q 'waiting for its pod'; then
	ok kueue-waits-for-workload
else
	fail kueue-waits-for-workload "$(field kq1 state): $(field kq1 reason)"
fi
# its Workload, found by Kueue's label; the queue's words are the run's reason
workload job-train-kq1-3f2a1 train-kq1 "$(job_field train-kq1 "j['metadata']['uid']")" yes
# (a line break in Kueue's words is a space in the reason)
msg="couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default, 1 more needed"
conditions job-train-kq1-3f2a1 "[{\"type\":\"QuotaReserved\",\"status\":\"False\",\"reason\":\"Pending\",\"message\":\"${msg/default, /default,\\n}\",\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}]"
if reason_has kq1 "queued in LocalQueue team-a: $msg (Workload job-train-kq1-3f2a1, Kueue's words)" 10 &&
	[ "$(field kq1 state)" = Pending ]; then
	ok kueue-queued-reason-is-kueues
else
	fail kueue-queued-reason-is-kueues "$(field kq1 state): $(field kq1 reason)"
fi
# admitted: Kueue resumes the Job, and the run goes on as any Job's
apipatch /apis/batch/v1/namespaces/ml-jobs/jobs/train-kq1 '{"spec":{"suspend":false}}' >/dev/null
if wait_for kq1 Succeeded 40; then ok kueue-resumed-job-succeeds; else
	fail kueue-resumed-job-succeeds "$(field kq1 state): $(field kq1 reason)"
fi

# a Workload without the job-uid label (an older Kueue) is found by its owner; Kueue finished
# it as failed, and so the run is
"$berth" run job.yaml --backend kubernetes --config kq-policy.yaml --run-id kq2 >/dev/null 2>out
workload job-train-kq2-9c8d7 train-kq2 "$(job_field train-kq2 "j['metadata']['uid']")" no
conditions job-train-kq2-9c8d7 '[{"type":"Finished","status":"True","reason":"Failed","message":"the admission check was rejected","lastTransitionTime":"2026-01-01T00:00:00Z"}]'
if wait_for kq2 Failed 20 &&
	field kq2 reason | grep -q 'Kueue finished its Workload as failed: Failed: the admission check was rejected'; then
	ok kueue-finished-failed-by-owner
else
	fail kueue-finished-failed-by-owner "$(field kq2 state): $(field kq2 reason)"
fi

# followed (--wait): evicted while it waits, then admitted; the wait ends with Succeeded
timeout 90 "$berth" run job.yaml --backend kubernetes --config kq-policy.yaml --run-id kq3 --wait >/dev/null 2>kq3.err &
waiter=$!
for _ in $(seq 40); do [ -n "$(job_field train-kq3 "j['metadata']['uid']")" ] && break; sleep 0.25; done
workload job-train-kq3-1a2b3 train-kq3 "$(job_field train-kq3 "j['metadata']['uid']")" yes
conditions job-train-kq3-1a2b3 '[{"type":"Evicted","status":"True","reason":"Preempted","message":"Preempted to accommodate a higher priority Workload","lastTransitionTime":"2026-01-01T00:00:00Z"},{"type":"QuotaReserved","status":"False","reason":"Pending","message":"waiting for quota","lastTransitionTime":"2026-01-01T00:00:00Z"}]'
if reason_has kq3 'evicted by Kueue: Preempted: Preempted to accommodate a higher priority Workload; queued again in LocalQueue team-a: waiting for quota' 15; then
	ok kueue-evicted-queued-again
else
	fail kueue-evicted-queued-again "$(field kq3 state): $(field kq3 reason)"
fi
apipatch /apis/batch/v1/namespaces/ml-jobs/jobs/train-kq3 '{"spec":{"suspend":false}}' >/dev/null
wait $waiter
status=$?
if [ $status = 0 ] && [ "$(field kq3 state)" = Succeeded ]; then ok kueue-followed-run-succeeds; else
	fail kueue-followed-run-succeeds "exit $status, $(field kq3 state): $(field kq3 reason); $(head -3 kq3.err)"
fi

# ---- a distributed job: an Indexed Job whose workers find each other by name ---------------
cat >dist.yaml <<'EOF'
name: allreduce
function: {image: python:3.11, command: [python, allreduce.py]}
replicas: 2
distributed: {launcher: env}
resources: {cpu: 100m, mem: 64Mi}
EOF
"$berth" run dist.yaml --backend kubernetes --config "$policy" --run-id dist1 --wait >/dev/null 2>out
status=$?
# each worker's pod: its index, its host name in the headless Service, and the rank it is told
workers=$(api GET "/api/v1/namespaces/ml-jobs/pods?labelSelector=berth.dev/run%3Ddist1" | python3 -c '
import json, sys
for p in sorted(json.load(sys.stdin)["items"], key=lambda p: p["metadata"]["annotations"].get("batch.kubernetes.io/job-completion-index", "")):
    env = {e["name"]: e.get("value") or e["valueFrom"]["fieldRef"]["fieldPath"] for e in p["spec"]["containers"][0]["env"]}
    print(p["metadata"]["annotations"].get("batch.kubernetes.io/job-completion-index"), p["spec"].get("hostname"),
          p["spec"].get("subdomain"), env.get("WORLD_SIZE"), env.get("MASTER_ADDR"), "rank" if "completion-index" in env.get("RANK", "") else env.get("RANK"))' | tr '\n' '|')
svc=$(api GET /api/v1/namespaces/ml-jobs/services/allreduce-dist1 | python3 -c '
import json, sys; s = json.load(sys.stdin)
print(s["spec"].get("clusterIP"), [o["kind"] for o in s["metadata"].get("ownerReferences", [])])')
# worker 1's log is asked of worker 1's pod, found by its completion index (an annotation on
# 1.26; the label is 1.28's): the fake kubelet serves no log, and the API's answer names the pod
"$berth" logs dist1 --rank 1 >rank1.out 2>&1
rank1_pod=$(grep -o 'allreduce-dist1-1-[a-z0-9]*' rank1.out | head -1)
# each worker's state in the run's record, from its pod's phase
wstates=$("$berth" get run dist1 -o json | python3 -c 'import json, sys; print(json.load(sys.stdin).get("worker_states"))')
if [ $status = 0 ] && [ "$(field dist1 state)" = Succeeded ] && [ "$wstates" = "['Succeeded', 'Succeeded']" ] &&
	[ "$workers" = "0 allreduce-dist1-0 allreduce-dist1 2 allreduce-dist1-0.allreduce-dist1 rank|1 allreduce-dist1-1 allreduce-dist1 2 allreduce-dist1-0.allreduce-dist1 rank|" ] &&
	[ "$svc" = "None ['Job']" ] && [ -n "$rank1_pod" ]; then
	ok distributed-indexed-job
else
	fail distributed-indexed-job "exit $status, $(field dist1 state): $(field dist1 reason); workers $workers ($wstates); service $svc; rank 1: $(head -c 300 rank1.out)"
fi
"$berth" run dist.yaml --backend kubernetes --config ttl-policy.yaml --run-id dist2 --wait >/dev/null 2>out
for _ in $(seq 60); do [ -z "$(leftovers dist2)" ] && break; sleep 0.5; done
"$berth" stop dist1 >/dev/null 2>&1
if [ "$(field dist2 state)" = Succeeded ] && [ -z "$(leftovers dist2)" ]; then ok distributed-ttl-leaves-nothing; else
	fail distributed-ttl-leaves-nothing "$(field dist2 state); left: $(leftovers dist2 | tr '\n' ' ')"
fi

# ---- an operator the cluster does not run: refused, and berth cluster check says so ----------
# (this control plane has no Training Operator, MPI Operator or JobSet: only their absence is
# checked here; tests/kube.sh runs their workloads against the stand-in API server)
printf 'namespace: ml-jobs\ndistributed: {operator: kubeflow}\n' >kubeflow-policy.yaml
printf 'namespace: ml-jobs\ndistributed: {operator: jobset}\n' >jobset-policy.yaml
"$berth" run dist.yaml --backend kubernetes --config kubeflow-policy.yaml --run-id op1 >/dev/null 2>out
status=$?
if [ $status = 1 ] && grep -q 'does not serve PyTorchJob: the API has no kubeflow.org/v1, and the policy.s distributed.operator kubeflow renders this run as one; install the Kubeflow Training Operator' out &&
	! "$berth" get run op1 >/dev/null 2>&1 && [ -z "$(leftovers op1)" ]; then
	ok operator-absent-run-refused
else
	fail operator-absent-run-refused "exit $status"
fi
"$berth" run dist.yaml --backend kubernetes --config jobset-policy.yaml --run-id op2 >/dev/null 2>out
status=$?
if [ $status = 1 ] && grep -q 'does not serve JobSet: the API has no jobset.x-k8s.io/v1alpha2' out &&
	! "$berth" get run op2 >/dev/null 2>&1 && [ -z "$(leftovers op2)" ]; then
	ok operator-absent-jobset-refused
else
	fail operator-absent-jobset-refused "exit $status"
fi
"$berth" cluster check --config kubeflow-policy.yaml >check.out 2>out
status=$?
if [ $status = 1 ] && grep -q '^missing PyTorchJob API: the API has no kubeflow.org/v1; distributed.operator kubeflow renders torchrun and env jobs as PyTorchJobs' check.out &&
	grep -q '^missing MPIJob API: the API has no kubeflow.org/v2beta1' check.out; then
	ok operator-absent-cluster-check
else
	cp check.out "$tmp/out"
	fail operator-absent-cluster-check "exit $status"
fi

# ---- every example and seed, run for real ---------------------------------------------------
# Each runs with the example policy, and comes to what its action and what it asks of this
# cluster's one node (cpu 64, memory 512Gi, nvidia.com/gpu 8 and no other GPU; no zone, GPU
# product or other label a spec selects) make of it: a job Succeeded (the fake kubelet ends
# its pod 2 s after it starts; no container runs, so only the objects and their states are
# checked, not what the program would do), serve and deploy Running, a cronjob Running and
# scheduled, and a pod no node can take Pending, with the scheduler's words. The last two
# rows are not examples: a Deployment alone and a CronJob, which no example makes.
# FILE STATE [WORDS THE REASON HOLDS]
cat >expect.txt <<'EOF'
examples/local.yaml Succeeded
examples/serve.yaml Running
examples/train.yaml Pending unschedulable: 0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.
examples/seeds/001-seed001-resources.yaml Succeeded
examples/seeds/002-seed001-sdk-deforestation.yaml Succeeded
examples/seeds/003-seed001-sdk-profile-1xa100.yaml Pending unschedulable: 0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.
examples/seeds/004-seed001-volume-pvc.yaml Succeeded
examples/seeds/005-seed001-sdk-volume-pvc.yaml Succeeded
examples/seeds/006-seed001-cpu.yaml Succeeded
examples/seeds/007-seed001-sdk-cpu.yaml Succeeded
examples/seeds/008-seed001-mem.yaml Succeeded
examples/seeds/009-seed001-sdk-mem.yaml Succeeded
examples/seeds/010-seed001-gpu.yaml Succeeded
examples/seeds/011-seed001-sdk-gpu.yaml Succeeded
examples/seeds/012-seed001-disk.yaml Succeeded
examples/seeds/013-seed001-sdk-disk.yaml Succeeded
examples/seeds/014-seed001-secrets.yaml Succeeded
examples/seeds/015-seed001-sdk-secrets.yaml Succeeded
examples/seeds/016-seed001-envs.yaml Succeeded
examples/seeds/017-seed001-sdk-envs.yaml Succeeded
examples/seeds/018-seed001-fs-group.yaml Succeeded
examples/seeds/019-seed001-sdk-fs-group.yaml Succeeded
examples/seeds/020-seed001-run-as-user.yaml Succeeded
examples/seeds/021-seed001-sdk-run-as-user.yaml Succeeded
examples/seeds/022-seed001-run-as-group.yaml Succeeded
examples/seeds/023-seed001-sdk-run-as-group.yaml Succeeded
examples/seeds/024-seed002-autoscaling.yaml Running
examples/seeds/025-seed002-gpu-type.yaml Pending unschedulable: 0/1 nodes are available: 1 Insufficient amd.com/gpu.
examples/seeds/026-seed002-mount-pvc.yaml Succeeded
examples/seeds/027-seed002-preemption-prevent.yaml Succeeded
examples/seeds/028-seed002-non-preemptible.yaml Pending unschedulable: 0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.
examples/seeds/029-seed004-node-selector.yaml Pending unschedulable: 0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.
examples/seeds/030-seed004-volume-pvc.yaml Succeeded
examples/seeds/031-seed004-cpu.yaml Succeeded
examples/seeds/032-seed004-mem.yaml Succeeded
examples/seeds/033-seed004-gpu.yaml Succeeded
examples/seeds/034-seed004-secrets.yaml Succeeded
examples/seeds/035-seed004-envs.yaml Succeeded
examples/seeds/036-seed004-tolerations.yaml Succeeded
examples/seeds/037-seed004-affinity.yaml Pending unschedulable: 0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.
examples/seeds/038-seed004-fs-group.yaml Succeeded
examples/seeds/039-seed004-run-as-user.yaml Succeeded
examples/seeds/040-seed004-run-as-group.yaml Succeeded
examples/seeds/041-seed004-resources.yaml Succeeded
tests/data/render/005-deploy/spec.yaml Running
tests/data/render/007-cronjob/spec.yaml Running scheduled; 
EOF
listed=$(grep '^examples/' expect.txt | cut -d' ' -f1 | sort)
if [ "$listed" = "$(cd "$root" && printf '%s\n' examples/*.yaml examples/seeds/*.yaml | sort)" ]; then
	ok examples-all-expected
else
	fail examples-all-expected "the table above and examples/ differ: $(cd "$root" && printf '%s\n' examples/*.yaml examples/seeds/*.yaml | sort | diff - <(echo "$listed") | grep '^[<>]' | tr '\n' ' ')"
fi
# what an admin has made for them: the StorageClass fast (train.yaml's); volumes for their
# claims (no provisioner here: hostPath PersistentVolumes, never mounted), twice what one
# pass claims, since a released volume is not bound again; the shared claim data-claim that
# 026-seed002-mount-pvc.yaml mounts; and, as each user, the secrets the specs name
api POST /apis/storage.k8s.io/v1/storageclasses \
	'{"apiVersion":"storage.k8s.io/v1","kind":"StorageClass","metadata":{"name":"fast"},"provisioner":"kubernetes.io/no-provisioner"}' >/dev/null
pv() { # NAME SIZE CLASS
	api POST /api/v1/persistentvolumes "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\",\"metadata\":{\"name\":\"$1\"},\
\"spec\":{\"capacity\":{\"storage\":\"$2\"},\"accessModes\":[\"ReadWriteOnce\"],\"storageClassName\":\"$3\",\"hostPath\":{\"path\":\"/srv/$1\"}}}" >/dev/null
}
for i in 1 2; do pv "ex-1gi-$i" 1Gi standard; pv "ex-350gi-$i" 350Gi standard; done
for i in $(seq 8); do pv "ex-10gi-$i" 10Gi standard; done
pv ex-fast 10Gi fast
pv ex-shared 100Gi ""
api POST /api/v1/namespaces/ml-jobs/persistentvolumeclaims '{"apiVersion":"v1","kind":"PersistentVolumeClaim",
"metadata":{"name":"data-claim"},"spec":{"storageClassName":"","volumeName":"ex-shared","accessModes":["ReadWriteOnce"],
"resources":{"requests":{"storage":"100Gi"}}}}' >/dev/null
# (before its secret is set, a spec that names one is refused, and nothing is made)
"$berth" run "$root/examples/seeds/014-seed001-secrets.yaml" --backend kubernetes --config "$policy" --run-id ex0 >/dev/null 2>out
status=$?
if [ $status = 2 ] && grep -q 'secrets\[0\]: unknown secret "my-secret-key" in project "default" (set it with .berth secrets set.)' out &&
	! "$berth" get run ex0 >/dev/null 2>&1 && [ -z "$(leftovers ex0)" ]; then
	ok example-secret-not-set-refused
else
	fail example-secret-not-set-refused "exit $status"
fi
for s in my-secret-key CDSETOOL_ESA_USER CDSETOOL_ESA_PASSWORD; do printf v | "$berth" secrets set "$s" >/dev/null 2>&1; done
printf v | "$berth" secrets set my-secret-key --project vision >/dev/null 2>&1
# submit PREFIX TABLE POLICY: runs each row's file, as run PREFIX<row>; prints what was refused
submit() {
	local n=0 file id status
	while read -r file _; do
		n=$((n + 1))
		id=$("$berth" run "$root/$file" --backend kubernetes --config "$3" --run-id "$1$n" 2>out)
		status=$?
		[ $status = 0 ] && [ "$id" = "$1$n" ] || echo "$file (exit $status: $(tail -1 out))"
	done <"$2"
}
# unmet PREFIX TABLE: the rows whose run is not in the row's state with its words in the reason
unmet() {
	"$berth" get runs -o json 2>out | python3 -c '
import json, sys
runs = {r["id"]: r for r in json.load(sys.stdin)}
for n, row in enumerate(open(sys.argv[2]), 1):
	file, want, *words = row.split()
	words = " ".join(words)
	r = runs.get(sys.argv[1] + str(n), {})
	state, reason = r.get("state", "not recorded"), " ".join(r.get("reason", "").split())
	if state != want or words not in reason:
		print(f"{file}: {state} ({reason[:150]}), not {want} {words}".rstrip())
' "$1" "$2" 2>&1
}
# runs PREFIX TABLE [STATE...]: the run ids of the rows (of those STATEs)
runs() {
	awk -v p="$1" -v s=" ${*:3} " 's == "  " || index(s, " " $2 " ") {printf "%s%s%d", sep, p, NR; sep = " "}' "$2"
}
shared_kept() { # the claim 026-seed002-mount-pvc.yaml mounts, an admin's, is there as it was
	api GET /api/v1/namespaces/ml-jobs/persistentvolumeclaims/data-claim |
		python3 -c 'import json,sys; m=json.load(sys.stdin).get("metadata",{}); sys.exit(not ("uid" in m and "deletionTimestamp" not in m))'
}
lines() { paste -sd'|' | head -c 1200; } # a list, on one line of a FAIL
bad=$(submit ex expect.txt "$policy")
for _ in $(seq 120); do
	left=$(unmet ex expect.txt)
	[ -z "$left" ] && break
	sleep 0.5
done
if [ -z "$bad$left" ]; then
	ok "examples-reach-their-state ($(cut -d' ' -f2 expect.txt | sort | uniq -c | awk '{printf "%s%s %s", s, $1, $2; s = ", "}'))"
else
	fail examples-reach-their-state "refused: $(lines <<<"$bad"); not there: $(lines <<<"$left")"
fi
# berth stop: what had not ended is Stopped, and nothing of it is left in any namespace; a run
# that has ended keeps its result (and its log, kept in berth), and what was left of it on the
# cluster goes too. The claim made by the admin stays.
"$berth" stop $(runs ex expect.txt) >stop.out 2>&1
status=$?
awk '{print $1, ($2 == "Succeeded" ? $2 : "Stopped")}' expect.txt >stopped.txt
left=$(unmet ex stopped.txt)
unfinished=$(leftovers $(runs ex expect.txt))
if [ $status = 0 ] && [ -z "$left$unfinished" ] && shared_kept; then ok examples-stop-leaves-nothing; else
	fail examples-stop-leaves-nothing "exit $status; $(shared_kept || echo 'data-claim is gone; ')not Stopped: $(lines <<<"$left"); left: $(lines <<<"$unfinished")"
fi
# cleanup.ttl_after_finished: each job again; once it has ended, the cluster takes all it had
grep ' Succeeded$' expect.txt >ttl-expect.txt
bad=$(submit tx ttl-expect.txt ttl-policy.yaml)
for _ in $(seq 120); do
	left=$(unmet tx ttl-expect.txt)
	gone=$(leftovers $(runs tx ttl-expect.txt))
	[ -z "$left$gone" ] && break
	sleep 0.5
done
if [ -z "$bad$left$gone" ] && shared_kept; then ok "examples-ttl-leaves-nothing ($(wc -l <ttl-expect.txt) jobs)"; else
	fail examples-ttl-leaves-nothing "$(shared_kept || echo 'data-claim is gone; ')refused: $(lines <<<"$bad"); not Succeeded: $(lines <<<"$left"); left: $(lines <<<"$gone")"
fi

# ---- berth render applies as it is --------------------------------------------------------
if command -v kubectl >/dev/null; then
	# every example and seed, rendered with the example policy, through the API server's
	# validation and admission (server-side apply, dry run; run ids of their own: the runs
	# ex1... above are still there)
	n=0 bad=
	for f in "$root"/examples/*.yaml "$root"/examples/seeds/*.yaml; do
		n=$((n + 1))
		if ! "$berth" render "$f" --config "$policy" --run-id "dry$n" >ex.yaml 2>ex.err; then
			bad="$bad $(basename "$f") (render: $(head -1 ex.err))"
		elif ! kubectl apply --server-side --dry-run=server -f ex.yaml >ex.out 2>&1; then
			bad="$bad $(basename "$f") ($(grep -i error ex.out | head -1))"
		fi
	done
	if [ -z "$bad" ] && [ $n -gt 30 ]; then ok "examples-and-seeds-apply ($n specs)"; else
		fail examples-and-seeds-apply "of $n:$bad"
	fi
	"$berth" render "$root/examples/train.yaml" --config "$policy" --run-id gitops1 >rendered.yaml 2>out
	kubectl create namespace "$(sed -n 's/^  namespace: //p' rendered.yaml | head -1)" >/dev/null 2>&1
	if kubectl apply -f rendered.yaml >out 2>&1; then ok render-kubectl-apply; else
		fail render-kubectl-apply "kubectl apply -f refused berth render's output"
	fi
	"$berth" render "$root/examples/train.yaml" --config "$policy" --run-id gitops2 >rendered2.yaml 2>out
	if kubectl apply --server-side -f rendered2.yaml >out 2>&1; then ok render-kubectl-apply-server-side; else
		fail render-kubectl-apply-server-side "kubectl apply --server-side refused berth render's output"
	fi
	# queued in Kueue: the suspended Job and the CronJob's jobTemplate apply as they are, with
	# kubectl apply (run ids 5, 6) and --server-side (7, 8)
	for i in 5 7; do
		"$berth" render job.yaml --config kq-policy.yaml --run-id "gitops$i" >"kueue$i.yaml" 2>out
		"$berth" render "$root/tests/data/render/134-kueue-cronjob/spec.yaml" --config kq-policy.yaml \
			--run-id "gitops$((i + 1))" >>"kueue$i.yaml" 2>out
	done
	if [ "$(grep -c 'suspend: true' kueue5.yaml)" = 2 ] &&
		[ "$(grep -c 'kueue.x-k8s.io/queue-name: team-a' kueue5.yaml)" = 2 ] &&
		kubectl apply -f kueue5.yaml >out 2>&1 && kubectl apply --server-side -f kueue7.yaml >>out 2>&1; then
		ok render-kueue-kubectl-apply
	else
		fail render-kueue-kubectl-apply "kubectl apply refused berth render's output with kueue.local_queue"
	fi
else
	skip examples-and-seeds-apply "no kubectl here"
	skip render-kubectl-apply "no kubectl here"
	skip render-kubectl-apply-server-side "no kubectl here"
	skip render-kueue-kubectl-apply "no kubectl here"
fi

#!/usr/bin/env bash
# CLI behaviour: exit statuses, stdin, help, version, several files.
# Prints "ok NAME" / "FAIL NAME" per check.
set -u
berth=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$(dirname "$0")/.." && pwd)
g=$root/tests/golden/validate
tmp=$(mktemp -d)
# no check reads or writes the data dir of the user who runs the tests
export BERTH_HOME=$tmp/home
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

# ---- render, explain, profiles ---------------------------------------------
ex=$root/examples
pol=$ex/policy/config.yaml
r=$root/tests/data/render
check render-stdin-stream 0 'name: second-t1-2' -- sh -c "$berth render - --run-id t1 < $r/009-stream/spec.yaml"
check render-stdin-positions 2 '^<stdin>:5:10: profile: unknown profile' -- \
	sh -c "env -u BERTH_CONFIG $berth render - < $r/101-unknown-profile-no-profiles/spec.yaml"
check render-stable 0 EMPTY -- sh -c "cd $r/001-job-example-policy && \
	$berth render spec.yaml --run-id s1 --config policy.yaml > $tmp/a 2>/dev/null && \
	$berth render spec.yaml --run-id s1 --config policy.yaml > $tmp/b 2>/dev/null && cmp $tmp/a $tmp/b"
check render-random-id 0 'name: minimal-[a-z][a-z0-9]{9}$' -- \
	sh -c "env -u BERTH_CONFIG $berth render $r/002-job-builtin-policy/spec.yaml | grep -m1 'name: minimal-'"
check berth-config-env 0 'berth.dev/profile: "1xa100"' -- \
	sh -c "BERTH_CONFIG=$pol $berth render $ex/train.yaml --run-id t1"
: >"$tmp/empty.yaml" # an empty policy: every key at its default
check config-flag-wins 2 'unknown profile "1xa100": the platform defines no profiles \(.*empty.yaml\)' -- \
	sh -c "BERTH_CONFIG=$pol $berth render $ex/train.yaml --config $tmp/empty.yaml"
printf 'namespace: a\n---\nnamespace: b\n' >"$tmp/two.yaml"
check policy-two-documents 2 'two.yaml: a policy file holds one document' -- "$berth" profiles --config "$tmp/two.yaml"
check config-missing-value 2 'option --config needs a value' -- "$berth" render "$ex/train.yaml" --config
check config-equals 0 'priorityClassName: berth-high' -- "$berth" render "$ex/train.yaml" --config="$pol"
check config-unreadable 1 'cannot open "nope.yaml"' -- "$berth" render "$ex/train.yaml" --config nope.yaml
check render-bad-format 2 '-o takes yaml or json, not "xml"' -- "$berth" render "$ex/train.yaml" -o xml
check render-two-specs 2 'one spec file at a time' -- "$berth" render "$ex/train.yaml" "$ex/serve.yaml"
check render-no-spec 2 'no spec given' -- "$berth" render --config "$pol"
# a stream read one document at a time says what a whole file's read says of no run
check render-empty-input 2 '^<stdin>: holds no run spec \(the input is empty\)' -- sh -c "printf '' | $berth render -"
check render-all-documents-empty 2 '^<stdin>: holds no run spec \(every document is empty\)' -- \
	sh -c "printf -- '---\\n---\\n' | $berth render - -o json"
check render-unknown-option 2 'unknown option "--dry"' -- "$berth" render "$ex/train.yaml" --dry
check render-bad-run-id 2 'run id "a_b" must consist of' -- "$berth" render "$ex/train.yaml" --run-id a_b
# a stream of two valid runs and a refused one prints nothing at all
check render-nothing-on-refusal 2 EMPTY -- \
	sh -c "{ cat $r/009-stream/spec.yaml; echo ---; cat $r/101-unknown-profile-no-profiles/spec.yaml; } |
	env -u BERTH_CONFIG $berth render - > $tmp/o 2>/dev/null; st=\$?; [ -s $tmp/o ] || exit \$st"
# a long output (over the 256 KiB the renderer keeps in memory: the rest waits in a
# memory file) comes whole and in order to a pipe, a file and a file opened to append
# (which takes no sendfile), and a refusal at its end still prints nothing
for i in $(seq 200); do cat "$r/009-stream/spec.yaml"; echo ---; done >"$tmp/long.yaml"
check render-long-output 0 '^400 second-t1-400$' -- sh -c "
	$berth render - --run-id t1 < $tmp/long.yaml | cat > $tmp/l1 &&
	$berth render - --run-id t1 < $tmp/long.yaml > $tmp/l2 && : > $tmp/l3 &&
	$berth render - --run-id t1 < $tmp/long.yaml >> $tmp/l3 && cmp $tmp/l1 $tmp/l2 && cmp $tmp/l1 $tmp/l3 &&
	[ \$(wc -c < $tmp/l1) -gt 300000 ] &&
	echo \$(grep -cE '^kind: (Job|Deployment)\$' $tmp/l1) \$(grep -o 'second-t1-[0-9]*' $tmp/l1 | tail -1)"
check render-long-output-json 0 '^400 \]\}$' -- sh -c "
	$berth render - --run-id t1 -o json < $tmp/long.yaml > $tmp/l4 &&
	echo \$(grep -cE '^      \"kind\": \"(Job|Deployment)\",\$' $tmp/l4) \$(tail -n 2 $tmp/l4 | tr -d ' \\n')"
check render-long-output-refused 2 EMPTY -- \
	sh -c "{ cat $tmp/long.yaml; cat $r/101-unknown-profile-no-profiles/spec.yaml; } |
	env -u BERTH_CONFIG $berth render - > $tmp/o 2>/dev/null; st=\$?; [ -s $tmp/o ] || exit \$st"
check explain-json 0 '"status": "accepted"' -- "$berth" explain "$ex/serve.yaml" --config "$pol" -o json
check explain-bad-format 2 '-o takes table, yaml or json' -- "$berth" explain "$ex/train.yaml" -o html
check explain-refused-status 2 'refused:' -- sh -c "env -u BERTH_CONFIG $berth explain $ex/train.yaml"
check profiles-none 0 '^no profiles defined$' -- env -u BERTH_CONFIG "$berth" profiles
check profiles-json 0 '"id": "4xh100"' -- "$berth" profiles --config "$pol" -o json
check profiles-stray-arg 2 'unexpected argument "x.yaml"' -- "$berth" profiles x.yaml
check profiles-bad-policy 2 'policy.yaml:2:1: defauts: unknown key' -- "$berth" profiles --config "$r/112-policy-errors/policy.yaml"
# security.secret_writers: admin or user, checked when the policy is loaded, at its place
printf 'security:\n  secret_writers: viewer\n' >"$tmp/writers.yaml"
check policy-secret-writers-viewer 2 'writers.yaml:2:19: security.secret_writers: "viewer" is not one of admin, user' -- \
	"$berth" profiles --config "$tmp/writers.yaml"
printf 'security:\n  secret_writers: user\n' >"$tmp/writers.yaml"
check policy-secret-writers-user 0 '^no profiles defined$' -- "$berth" profiles --config "$tmp/writers.yaml"
# berth cluster check: its usage errors, and a kubeconfig that is not there (before any request)
check cluster-no-subverb 2 "say 'cluster check'" -- "$berth" cluster
check cluster-unknown-option 2 'cluster: unknown option "--bogus"' -- "$berth" cluster check --bogus
check cluster-no-kubeconfig 1 'cannot open "/nonexistent/kubeconfig"' -- "$berth" cluster check --kubeconfig /nonexistent/kubeconfig
check cluster-not-remote 2 'not options of cluster' -- "$berth" --server http://127.0.0.1:1 cluster check
check cluster-bad-policy 2 'policy.yaml:2:1: defauts: unknown key' -- "$berth" cluster check --config "$r/112-policy-errors/policy.yaml"
# berth cluster setup: the same refusals; --dry-run writes the objects and asks the
# cluster nothing (the kubeconfig's server cannot be reached), each after its comment
kc=$tmp/unreachable.kubeconfig
cat >"$kc" <<'EOK'
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t0k3n}}]
contexts: [{name: x, context: {cluster: c, user: u, namespace: team-a}}]
current-context: x
EOK
check cluster-help-setup 0 '^       berth cluster setup \[--dry-run\]' -- "$berth" help cluster
check cluster-setup-unknown-option 2 'cluster: unknown option "--bogus"' -- "$berth" cluster setup --bogus
check cluster-check-no-dry-run 2 'cluster: unknown option "--dry-run"' -- "$berth" cluster check --dry-run
check cluster-setup-no-kubeconfig 1 'cannot open "/nonexistent/kubeconfig"' -- \
	"$berth" cluster setup --dry-run --kubeconfig /nonexistent/kubeconfig
check cluster-setup-not-remote 2 'not options of cluster' -- "$berth" --server http://127.0.0.1:1 cluster setup
check cluster-setup-bad-policy 2 'policy.yaml:2:1: defauts: unknown key' -- \
	"$berth" cluster setup --dry-run --kubeconfig "$kc" --config "$r/112-policy-errors/policy.yaml"
check cluster-setup-unreachable 1 '^cannot reach the Kubernetes API at https://127.0.0.1:1' -- \
	"$berth" cluster setup --kubeconfig "$kc" --config "$pol"
# the example policy: its three PriorityClasses (values from their order), the namespaces
# berth and ml-jobs, the ServiceAccount, the Role and its RoleBinding, in that order
"$berth" cluster setup --dry-run --kubeconfig "$kc" --config "$pol" >"$tmp/setup.yaml" 2>"$tmp/setup.err"
st=$?
kinds=$(sed -n 's/^kind: //p' "$tmp/setup.yaml" | tr '\n' ' ')
values=$(sed -n 's/^value: //p' "$tmp/setup.yaml" | tr '\n' ' ')
# every document opens with its "# why" comment
uncommented=$(awk 'NR == 1 || prev == "---" { if ($0 !~ /^# /) n++ } { prev = $0 } END { print n + 0 }' "$tmp/setup.yaml")
if [ $st = 0 ] && [ ! -s "$tmp/setup.err" ] && [ "$uncommented" = 0 ] &&
	[ "$kinds" = "PriorityClass PriorityClass PriorityClass Namespace Namespace ServiceAccount Role RoleBinding " ] &&
	[ "$values" = "100000 10000 1000 " ] && grep -q '^  namespace: ml-jobs$' "$tmp/setup.yaml" &&
	grep -q '^preemptionPolicy: Never$' "$tmp/setup.yaml"; then
	echo "ok cli cluster-setup-dry-run"
else
	echo "FAIL cli cluster-setup-dry-run (exit $st; kinds: $kinds; values: $values; $uncommented uncommented)"
	head -5 "$tmp/setup.err" | sed 's/^/    /'
fi
# no policy namespace: the Role goes to the kubeconfig context's, and no Namespace of runs is made
check cluster-setup-context-namespace 0 '^  namespace: team-a$' -- \
	"$berth" cluster setup --dry-run --kubeconfig "$kc" --config "$tmp/empty.yaml"
# a namespace per project: ClusterRoles, and each project quotas names with its namespace, quota
# and LimitRange; the comment says that the others are made on their first run
cat >"$tmp/projects.yaml" <<'EOP'
namespace: "ml-{project}"
defaults: {resources: {cpu: 100m, mem: 256Mi}}
limits: {cpu: "8", gpu: "2"}
quotas: {vision: {cpu: "16"}}
EOP
"$berth" cluster setup --dry-run --kubeconfig "$kc" --config "$tmp/projects.yaml" >"$tmp/setup.yaml" 2>&1
st=$?
kinds=$(sed -n 's/^kind: //p' "$tmp/setup.yaml" | tr '\n' ' ')
if [ $st = 0 ] && grep -q "^# the project's first run" "$tmp/setup.yaml" &&
	[ "$kinds" = "Namespace ServiceAccount ClusterRole ClusterRole ClusterRoleBinding Namespace ResourceQuota LimitRange RoleBinding " ] &&
	grep -q '^  name: ml-vision$' "$tmp/setup.yaml" &&
	grep -A6 '^    max:$' "$tmp/setup.yaml" | tr -d ' \n' | grep -q '^max:cpu:"8"nvidia.com/gpu:"2"default:cpu:"8"nvidia.com/gpu:"0"'; then
	echo "ok cli cluster-setup-dry-run-per-project"
else
	echo "FAIL cli cluster-setup-dry-run-per-project (exit $st; kinds: $kinds)"
	sed 's/^/    /' "$tmp/setup.yaml" | head -10
fi
# kueue.local_queue: refused at its own position, before any request, by every verb that reads
# the policy
printf 'kueue:\n  local_queue: "Team-A"\n' >"$tmp/kq-upper.yaml"
printf 'kueue:\n  local_queue: "{project}-{project}"\n' >"$tmp/kq-twice.yaml"
printf 'kueue:\n  local_queue: "q-%s{project}"\n' "$(printf 'a%.0s' $(seq 56))" >"$tmp/kq-long.yaml"
printf 'kueue: batch\n' >"$tmp/kq-scalar.yaml"
printf 'kueue:\n  local_queue: [a]\n' >"$tmp/kq-list.yaml"
check kueue-queue-uppercase 2 '^kq-upper.yaml:2:17: kueue.local_queue: "Team-A" is not a valid LocalQueue name: it must consist of lowercase' -- \
	sh -c "cd $tmp && $berth cluster check --config kq-upper.yaml --kubeconfig /nonexistent/kubeconfig"
check kueue-queue-twice 2 'kq-twice.yaml:2:17: kueue.local_queue: "\{project\}-\{project\}" names \{project\} twice' -- \
	"$berth" render "$ex/train.yaml" --config "$tmp/kq-twice.yaml"
check kueue-queue-default-too-long 2 'kq-long.yaml:2:17: kueue.local_queue: "q-a+\{project\}" is not a valid LocalQueue name for project default .*: it must be at most 63 characters' -- \
	"$berth" explain "$ex/train.yaml" --config "$tmp/kq-long.yaml"
check kueue-not-a-map 2 'kq-scalar.yaml:1:8: kueue: must be a map' -- "$berth" profiles --config "$tmp/kq-scalar.yaml"
check kueue-queue-not-a-string 2 'kq-list.yaml:2:16: kueue.local_queue: ' -- "$berth" profiles --config "$tmp/kq-list.yaml"
# (a cluster that cannot be reached: nothing is asked of it)
printf 'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n' >"$tmp/unreachable.kubeconfig"
check kueue-run-refused-before-cluster 2 'spec.yaml:4:3: labels: kueue.x-k8s.io/queue-name is set by the policy' -- \
	sh -c "cd $r/137-kueue-queue-per-project-refused && BERTH_HOME=$tmp/home $berth run spec.yaml --backend kubernetes --config policy.yaml --kubeconfig $tmp/unreachable.kubeconfig"
# a profile decides the resources it sets whole: `berth run` names each value of the
# user's it overrides on standard error, at the user's place, and runs (issue 23)
printf 'profiles:\n  - {id: tiny, resources: {mem: 48Mi}}\n' >"$tmp/tiny-policy.yaml"
printf 'function: {name: t, command: ["true"]}\nprofile: tiny\nresources:\n  mem: {requests: 16Mi, limits: 24Mi}\n' >"$tmp/tiny.yaml"
check run-warns-profile-overrides 0 'tiny.yaml:4:33: warning: resources.mem.limits: 24Mi from the run spec is overridden by profile "tiny", which decides resources.mem whole, requests and limits \(.*tiny-policy.yaml:2:33\)' -- \
	"$berth" run "$tmp/tiny.yaml" --config "$tmp/tiny-policy.yaml" --wait

# ---- issue 24: delete, describe, events, logs' options, the server's checks: their usage errors
check help-delete 0 '^usage: berth delete \[run\] ID\.\.\. \[--force\]' -- "$berth" help delete
check help-describe 0 '^usage: berth describe \[run\] ID' -- "$berth" help describe
check help-events 0 '^usage: berth events \[ID\.\.\.\]' -- "$berth" help events
check delete-no-id 2 'delete: no run id given' -- "$berth" delete run
check delete-grace-without-force 2 'delete: --grace is for --force' -- "$berth" delete x --grace 3
check delete-unknown-option 2 'delete: unknown option "--now"' -- "$berth" delete x --now
check describe-no-id 2 'describe: no run id given' -- "$berth" describe
check describe-two-ids 2 'describe: one run at a time' -- "$berth" describe run a b
check events-bad-output 2 'events: -o takes table or json, not "yaml"' -- "$berth" events x -o yaml
check events-ids-and-project 2 'events: --project picks the runs when no ID is given' -- "$berth" events x --project p
check logs-tail-negative 2 'logs: --tail takes a number of lines, 0 to 10000000 \("-1" given\)' -- "$berth" logs x --tail -1
check logs-tail-too-many 2 'logs: --tail takes a number of lines' -- "$berth" logs x --tail 10000001
check logs-since-bad 2 'logs: --since: "5x" is not a duration' -- "$berth" logs x --since 5x
check logs-since-too-long 2 'logs: --since: "401d" is over the longest duration, 400 days' -- "$berth" logs x --since 401d
check logs-since-no-unit-after-unit 2 'is not a duration' -- "$berth" logs x --since 1h30
check validate-project-without-server 2 'validate: --project is for a server' -- "$berth" validate --project p "$ex/train.yaml"
check explain-project-without-server 2 'explain: --project is for a server' -- "$berth" explain "$ex/train.yaml" --project p
check explain-server-and-config 2 'explain: --config is for this machine, not for a server' -- \
	"$berth" explain "$ex/train.yaml" --server http://127.0.0.1:1 --config "$pol"
check validate-server-unreachable 1 'cannot reach the berth server at http://127.0.0.1:1' -- \
	"$berth" --server http://127.0.0.1:1 validate "$ex/train.yaml"
check dry-run-server-with-a-server 2 'run: --dry-run=server is for this machine' -- \
	"$berth" run "$ex/train.yaml" --dry-run=server --server http://127.0.0.1:1
check render-no-server 2 'render: unknown option "--server"' -- "$berth" render "$ex/train.yaml" --server http://127.0.0.1:1
# what describe and events read, and what delete refuses, on this machine
check describe-unknown-run 2 'no run "nope"' -- "$berth" describe nope
check events-unknown-run 2 'no run "nope"' -- "$berth" events nope
check events-none 0 '^\(no events\)$' -- env BERTH_HOME="$tmp/no-runs" "$berth" events

# ---- issue 23, finding 3: what validate and explain accept, render and run accept too --------
printf 'function: {name: noimg, command: [python]}\n' >"$tmp/noimg.yaml"
printf 'function: {name: nocmd, image: python:3.11}\n' >"$tmp/nocmd.yaml"
printf 'function: {name: big, image: b, command: ["true"]}\nresources: {cpu: "4000", mem: 100Ti, gpu: 64}\n' >"$tmp/big.yaml"
check validate-kubernetes-needs-image 2 'noimg.yaml:1:18: function.image: run "noimg" needs an image on Kubernetes' -- \
	"$berth" validate --backend kubernetes "$tmp/noimg.yaml"
check render-needs-image-at-position 2 'noimg.yaml:1:18: function.image: run "noimg" needs an image' -- \
	"$berth" render "$tmp/noimg.yaml"
check validate-local-needs-command 2 'nocmd.yaml:1:18: function.command: run "nocmd" needs a command on the local backend' -- \
	"$berth" validate --backend local "$tmp/nocmd.yaml"
check explain-local-needs-command 2 'function.command: run "nocmd" needs a command' -- \
	"$berth" explain --backend local "$tmp/nocmd.yaml"
check dry-run-local-needs-command 2 'nocmd.yaml:1:18: function.command: run "nocmd" needs a command' -- \
	"$berth" run --dry-run "$tmp/nocmd.yaml"
check dry-run-creates-nothing 0 'valid \(1 run\) for the local backend; nothing was created' -- \
	sh -c "export BERTH_HOME=$tmp/dry-home; $berth run --dry-run $root/examples/local.yaml && test -z \"\$($berth get runs -o json | grep '\"id\"')\""
# every reason a run can never fit, each at its field, in every face
for v in "validate --backend local" "explain --backend local" "run --dry-run"; do
	check "never-fit-every-reason-${v%% *}" 2 \
		'big.yaml:2:19: resources.cpu.requests: run "big" can never fit here: 4000 CPUs.*big.yaml:2:31: resources.mem.requests: run "big" can never fit here: 100Ti.*big.yaml:2:43: resources.gpu.limits: run "big" can never fit here: 64 GPUs' -- \
		bash -o pipefail -c "$berth $v $tmp/big.yaml 2>&1 | tr '\\n' ' '"
done

# ---- issue 24: a kubectl user's habits ---------------------------------------------------
# did-you-mean, from each verb's grammar (cli/opts.c): verbs, options, words, enumerated values
check dym-verb 2 '^berth: unknown verb "gte"; did you mean "get"\?$' -- "$berth" gte runs
check dym-help-verb 2 'no verb "lgos"; did you mean "logs"\?' -- "$berth" help lgos
check dym-global-option 2 'unknown option "--verison"; did you mean "--version"\?' -- "$berth" --verison
check dym-option 2 '^berth: run: unknown option "--folow"; did you mean "--follow"\?$' -- "$berth" run --folow x.yaml
check dym-option-with-value 2 'get: unknown option "--sort"; did you mean "--sort-by"\?' -- "$berth" get runs --sort=name
check dym-option-single-dash 2 'unknown option "-follow"; did you mean "--follow"\?' -- "$berth" logs x -follow
check dym-backend 2 'run: --backend takes local or kubernetes, not "kubernets"; did you mean "kubernetes"\?' -- \
	"$berth" run x.yaml --backend kubernets
check dym-output 2 'get: -o takes table, yaml, json or name, not "jsn"; did you mean "json"\?' -- "$berth" get runs -o jsn
check dym-dry-run 2 'run: --dry-run takes client or server, not "sever"; did you mean "server"\?' -- "$berth" run x.yaml --dry-run=sever
check dym-sort-by 2 'did you mean "name"\?' -- "$berth" get runs --sort-by nmae
check dym-role 2 'token: --role takes admin, user or viewer, not "viewr"; did you mean "viewer"\?' -- \
	"$berth" token create --project p --role viewr
check dym-word 2 'get: unknown argument "rnus"; did you mean "runs"\?' -- "$berth" get rnus
check dym-shell 2 'completion: unknown argument "bsh"; did you mean "bash"\?' -- "$berth" completion bsh
check dym-none-when-far 2 '^berth: run: unknown option "--zzzzzz" \(see .berth help run.\)$' -- "$berth" run --zzzzzz x.yaml
check switch-takes-no-value 2 'run: --wait takes no value' -- "$berth" run x.yaml --wait=yes
check option-needs-value 2 'option --sort-by needs a value' -- "$berth" get runs --sort-by
check state-any-case 0 '^ID +NAME' -- env BERTH_HOME="$tmp/home" "$berth" get runs --state running
check short-option-joined 0 '^\[\]$' -- env BERTH_HOME="$tmp/empty-home" "$berth" get runs -ojson
check after-dashdash-no-check 1 'cannot open "--folow"' -- "$berth" validate -- --folow
# every option of every verb's table is one its parser reads (the table and the parser
# agree): each is given alone, after each word of its verb (an option of one of them is
# enough), where nothing runs (a run that is not there, a dry run, no cluster); a verb's
# options in the background, the verbs side by side
drift_verb() { # VERB: "VERB:OPTION" for each option its parser does not read
	local v=$1 o h read after val help first tail=() heads=("") args
	case $v in serve) tail=(--routes) ;; esac
	case $v in get) heads=("run nosuch") ;; secrets) heads=(list) ;; token) heads=(create list) ;;
		cluster) heads=("setup --dry-run" check) ;; esac
	help=$("$berth" help "$v")
	first=$("$berth" __complete "$v" "")
	for o in $("$berth" __complete "$v" -); do
		# an option takes a value when what may follow it is not what may follow the verb
		after=$("$berth" __complete "$v" "$o" "")
		val=$(grep -v '^:' <<<"$after" | head -1)
		args=("$o")
		if [ "$after" != "$first" ] || grep -qE -- "$o [A-Z]|$o, [-a-z]+ [A-Z]" <<<"$help"; then
			args+=("${val:-x}")
		fi
		read=0
		for h in "${heads[@]}"; do
			# shellcheck disable=SC2086
			KUBECONFIG=/nonexistent BERTH_HOME=$tmp/drift-home timeout 10 "$berth" "$v" $h "${args[@]}" \
				"${tail[@]}" </dev/null 2>&1 | grep -q "unknown option .*(see 'berth help" || read=1
		done
		[ $read = 1 ] || echo " $v:$o"
	done
}
verbs=$("$berth" __complete "")
for v in $verbs; do
	case $v in help | version | completion) continue ;; esac
	drift_verb "$v" >"$tmp/drift.$v" &
done
wait
drift=$(cat "$tmp"/drift.* 2>/dev/null | tr -d '\n')
if [ -z "$drift" ] && [ -n "$verbs" ] && [ "$(ls "$tmp"/drift.* | wc -l)" -ge 12 ]; then
	echo "ok cli grammar-and-parsers-agree"
else echo "FAIL cli grammar-and-parsers-agree:$drift"; fi

# completion: the bash script, sourced in bash, answers COMPREPLY from the same grammar
mkdir -p "$tmp/bin" && ln -sf "$berth" "$tmp/bin/berth"
"$berth" completion bash >"$tmp/berth.bash"
comp() { # comp LINE: the candidates bash would offer at the end of LINE, space-separated
	PATH=$tmp/bin:$PATH BERTH_HOME=$tmp/home bash -c 'source "$1"; COMP_LINE=$2; COMP_POINT=${#2}
		COMP_WORDBREAKS=${COMP_WORDBREAKS:-"'"'"'><=;|&(:"}; _berth; echo "${COMPREPLY[*]}"' _ "$tmp/berth.bash" "$1"
}
compcheck() { # NAME LINE WANT: the candidates, exactly
	local got
	got=$(comp "$2")
	if [ "$got" = "$3" ]; then echo "ok cli completion-$1"; else echo "FAIL cli completion-$1: '$2' gave '$got', want '$3'"; fi
}
compcheck verbs "berth s" "stop secrets serve"
compcheck words "berth get " "runs run"
compcheck options "berth get runs --so" "--sort-by"
compcheck option-values "berth run x.yaml --backend " "local kubernetes"
compcheck option-value-prefix "berth run --backend k" "kubernetes"
compcheck option-equals "berth run --dry-run=s" "server"
compcheck output "berth get runs -o j" "json"
compcheck global-options "berth --v" "--version"
compcheck help-verbs "berth help ex" "explain"
compcheck shells "berth completion z" "zsh"
compcheck files "berth validate $g/001-seed001-resources/sp" "$g/001-seed001-resources/spec.yaml"
compcheck after-value "berth get runs --project demo --st" "--state"
compcheck unknown-verb "berth frob " ""
check completion-no-shell 2 'say which shell: bash, zsh or fish' -- "$berth" completion
check completion-bash-syntax 0 EMPTY -- bash -n "$tmp/berth.bash"
for sh in zsh fish; do
	if command -v $sh >/dev/null; then
		check completion-$sh-syntax 0 EMPTY -- sh -c "$berth completion $sh >$tmp/berth.$sh && $sh -n $tmp/berth.$sh"
	else
		echo "skip cli completion-$sh-syntax ($sh is not installed)"
	fi
done
check completion-zsh-calls-berth 0 '__complete' -- "$berth" completion zsh
check completion-fish-calls-berth 0 '__complete' -- "$berth" completion fish

# the man page: made of the same help, and troff reads it without a warning
"$berth" help --man >"$tmp/berth.1"
missing=
for v in $("$berth" __complete ""); do
	grep -q "^\.SS $v\$" "$tmp/berth.1" || missing+=" $v"
done
if [ -z "$missing" ] && grep -q '^\.SH SYNOPSIS' "$tmp/berth.1" && grep -q '^berth get runs \[\\-l SELECTOR\]' "$tmp/berth.1"; then
	echo "ok cli man-page-has-every-verb"
else echo "FAIL cli man-page-has-every-verb (missing:$missing)"; fi
if command -v groff >/dev/null; then
	check man-page-renders 0 '^ +berth get runs \[-l SELECTOR\]' -- sh -c "groff -man -Tutf8 -ww $tmp/berth.1 2>$tmp/groff.err | col -b; test ! -s $tmp/groff.err"
else
	echo "skip cli man-page-renders (groff is not installed)"
fi

# colours: on a terminal, never with NO_COLOR, never in a pipe
if command -v script >/dev/null; then
	check color-error-on-tty 2 $'\e\\[1;31mberth:' -- script -qec "$berth gte" /dev/null
	check color-no-color 0 EMPTY -- sh -c "NO_COLOR=1 script -qec '$berth gte' /dev/null | grep -q \$(printf '\\033') && echo coloured; true"
	check color-not-in-pipe 0 EMPTY -- sh -c "$berth gte 2>&1 | grep -q \$(printf '\\033') && echo coloured; true"
else
	echo "skip cli colours (script is not installed)"
fi

# ---- berth admin backup / restore (docs/cli-server.md) ---------------------------------
# a data dir with runs, tokens and a secret; a backup taken while its server runs (0600,
# not over a file without --force); a restore refused while a server or a run's
# supervisor uses the data dir; a restore into a fresh data dir, where everything is, a
# token still authenticates and the secrets open; a truncated or foreign file, and a
# backup of a newer schema, refused with nothing changed
bk=$tmp/bk
mkdir -p "$bk"
serve_pid=
bk_serve() { # HOME: a server on HOME; sets serve_pid, serve_url
	"$berth" serve --listen 127.0.0.1:0 >"$bk/serve.log" 2>&1 &
	serve_pid=$!
	local port=
	for _ in $(seq 100); do
		port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$bk/serve.log")
		[ -n "$port" ] && break
		kill -0 "$serve_pid" 2>/dev/null || break
		sleep 0.05
	done
	serve_url=http://127.0.0.1:$port
}
bk_stop() { [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null; serve_pid=; }
trap 'bk_stop; rm -rf "$tmp"' EXIT
nap=60.7$$
(
	export BERTH_HOME=$bk/a
	"$berth" token create --project '*' --role admin --description all >"$bk/admin.tok" 2>/dev/null
	"$berth" token create --project p --role viewer --description view >/dev/null 2>&1
	echo sekrit | "$berth" secrets set pw --project p >/dev/null 2>&1
	printf 'project: p\nname: done\nfunction: {name: f, command: ["true"]}\nresources: {cpu: 100m, mem: 16Mi}\n' >"$bk/done.yaml"
	printf 'project: p\nname: nap\nfunction: {name: f, command: [sleep, "%s"]}\nresources: {cpu: 100m, mem: 16Mi}\n' "$nap" >"$bk/nap.yaml"
	"$berth" run "$bk/done.yaml" >/dev/null 2>&1
	"$berth" run "$bk/nap.yaml" >/dev/null 2>&1
)
admin_tok=$(cat "$bk/admin.tok")
export BERTH_HOME=$bk/a
bk_serve
check backup-while-serving 0 'backed up to .*holds|holds the secret key' -- "$berth" admin backup "$bk/full.db" --include-key
check backup-is-0600 0 '^600$' -- stat -c %a "$bk/full.db"
check backup-no-overwrite 1 'full.db exists: --force replaces it' -- "$berth" admin backup "$bk/full.db"
check backup-force 0 'backed up to' -- "$berth" admin backup "$bk/full.db" --include-key --force
# a backup into the data dir is refused, --force or not, by any path to it: it replaced the
# secret key with a copy of the store (every secret lost), or the store under the server
key_size=$(stat -c %s "$bk/a/secret.key")
check backup-into-data-dir-refused 2 'secret.key is in the data dir .*: write the backup outside it' -- "$berth" admin backup "$bk/a/secret.key" --force
ln -s "$bk/a" "$bk/a-link"
check backup-into-data-dir-by-link-refused 2 'is in the data dir .*: write the backup outside it' -- "$berth" admin backup "$bk/a-link/berth.db" --force
check backup-into-data-dir-changes-nothing 0 "^$key_size\$" -- stat -c %s "$bk/a/secret.key"
check backup-without-key 0 'backed up to' -- "$berth" admin backup "$bk/nokey.db"
check restore-refused-while-serving 1 'a server \(berth serve\) uses the data dir' -- "$berth" admin restore "$bk/full.db"
bk_stop
check restore-refused-while-a-run-runs 1 'run .* is running in .*its supervisor is pid' -- "$berth" admin restore "$bk/full.db"
for id in $("$berth" get runs -o json 2>/dev/null | sed -n 's/.*"id": "\(.*\)".*/\1/p'); do
	"$berth" stop "$id" --grace 0 >/dev/null 2>&1
done
pkill -f "sleep $nap" 2>/dev/null
export BERTH_HOME=$bk/b
check restore-into-fresh 0 'restored from' -- "$berth" admin restore "$bk/full.db"
check restore-no-key-warning 0 EMPTY -- sh -c "'$berth' admin restore '$bk/full.db' 2>&1 | grep -i warning; true"
check restored-runs 0 'done-.*Succeeded' -- "$berth" get runs
check restored-tokens 0 'description: view' -- "$berth" token list
check restored-secrets 0 '^pw$' -- "$berth" secrets list --project p
check restored-key-0600 0 '^600$' -- stat -c %a "$bk/b/secret.key"
bk_serve
check restored-token-authenticates 0 '^200 .*"done-' -- sh -c "curl -s -w '%{http_code} ' -o '$bk/runs.json' -H 'Authorization: Bearer $admin_tok' '$serve_url/api/v1/projects/p/runs'; tr -d '\\n' <'$bk/runs.json'"
bk_stop
"$berth" get runs -o json >"$bk/before" 2>&1
"$berth" token list >>"$bk/before" 2>&1
head -c 6000 "$bk/full.db" >"$bk/truncated.db"
echo 'not a store' >"$bk/foreign.db"
cp "$bk/full.db" "$bk/newer.db"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('PRAGMA user_version=999'); c.commit()" "$bk/newer.db"
cp "$bk/full.db" "$bk/extra.db"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('CREATE TRIGGER t AFTER INSERT ON runs BEGIN DELETE FROM tokens; END'); c.commit()" "$bk/extra.db"
check restore-foreign-schema-refused 2 'extra.db is not a berth backup: its tables are not those of a berth store' -- "$berth" admin restore "$bk/extra.db"
# a trigger is refused also under the key table's name, and under a name of SQLite's own
# (sqlite_..., written into the schema past SQLite's checks): each made a viewer's token
# an admin of every project once restored
cp "$bk/full.db" "$bk/keynamed.db"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('CREATE TRIGGER berth_backup_key AFTER INSERT ON tokens BEGIN UPDATE tokens SET role=3, projects=\'*\' WHERE id=new.id; END'); c.commit()" "$bk/keynamed.db"
check restore-trigger-named-as-key-refused 2 'keynamed.db is not a berth backup: its tables are not those' -- "$berth" admin restore "$bk/keynamed.db"
cp "$bk/full.db" "$bk/sqlitenamed.db"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('PRAGMA writable_schema=ON'); c.execute('INSERT INTO sqlite_schema VALUES (\'trigger\', \'sqlite_t\', \'tokens\', 0, \'CREATE TRIGGER sqlite_t AFTER INSERT ON tokens BEGIN UPDATE tokens SET role=3 WHERE id=new.id; END\')'); c.commit()" "$bk/sqlitenamed.db"
check restore-trigger-named-sqlite-refused 2 'sqlitenamed.db is not a berth backup: its tables are not those' -- "$berth" admin restore "$bk/sqlitenamed.db"
cp "$bk/full.db" "$bk/keyview.db"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('DROP TABLE berth_backup_key'); c.execute('CREATE VIEW berth_backup_key AS SELECT zeroblob(32) AS key'); c.commit()" "$bk/keyview.db"
check restore-view-named-as-key-refused 2 'keyview.db is not a berth backup: its tables are not those' -- "$berth" admin restore "$bk/keyview.db"
check restore-truncated-refused 2 'truncated.db is not a whole berth backup' -- "$berth" admin restore "$bk/truncated.db"
check restore-foreign-refused 2 'foreign.db is not a whole berth backup' -- "$berth" admin restore "$bk/foreign.db"
check restore-newer-refused 2 'newer.db is a store of schema version 999, newer than this berth knows' -- "$berth" admin restore "$bk/newer.db"
"$berth" get runs -o json >"$bk/after" 2>&1
"$berth" token list >>"$bk/after" 2>&1
check restore-refused-changes-nothing 0 EMPTY -- sh -c "diff '$bk/before' '$bk/after'; ls -a '$bk/b' | grep -F .tmp-; true"
if command -v flock >/dev/null; then
	check serve-refused-during-restore 1 'a restore \(berth admin restore\) is replacing its store' -- \
		flock -x "$bk/b/serve.lock" "$berth" serve --listen 127.0.0.1:0
else
	echo "skip cli serve-refused-during-restore (flock is not installed)"
fi
export BERTH_HOME=$bk/c
echo other | "$berth" secrets set x >/dev/null 2>&1
check restore-other-key-warns 0 'warning: the restored secrets do not open with the key' -- "$berth" admin restore "$bk/nokey.db"
check restore-missing-file 2 'nope.db: No such file' -- env BERTH_HOME="$bk/d" "$berth" admin restore "$bk/nope.db"
check restore-missing-makes-nothing 2 'No such file' -- ls -d "$bk/d"
# a store on PostgreSQL is restored by PostgreSQL: refused before the data dir is touched
check restore-on-postgresql-refused 2 'the store is on PostgreSQL .*: restore it with PostgreSQL' -- env BERTH_HOME="$bk/e" BERTH_STORE=postgresql://127.0.0.1:1/none "$berth" admin restore "$bk/full.db"
check restore-on-postgresql-makes-nothing 2 'No such file' -- ls -d "$bk/e"
check restore-directory-refused 2 'is not a file' -- env BERTH_HOME="$bk/e" "$berth" admin restore "$bk/a"
check admin-usage 2 '^usage: berth admin backup FILE' -- "$berth" admin
export BERTH_HOME=$tmp/home

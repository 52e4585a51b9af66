#!/usr/bin/env bash
# The local backend with real processes: limits, OOM, queue, refusals, stop,
# users, envs and secrets, volumes, logs, timeout, GPUs, recovery, rlimits.
# Prints "ok NAME" / "FAIL NAME" / "skip NAME (why)" per check.
#   tests/local.sh BERTH
set -u
tier=local
# shellcheck source=tests/local_lib.sh
. "$(dirname "$0")/local_lib.sh"

cat >policy.yaml <<'EOF'
local:
  capacity: {cpu: "2", mem: 2Gi, gpu: "2"}
  labels: {zone: lab}
  taints: ["dedicated=ml:NoSchedule"]
  grace_period: 2
  priority_values: {urgent: 1000}
priority_classes: {high: urgent}
EOF
export BERTH_CONFIG=$tmp/policy.yaml

# spec NAME CMD [EXTRA YAML]: a job that tolerates the node's taint
spec() {
	cat >"$1.yaml" <<EOF
function:
  name: $1
  image: busybox
  command: [sh, -c, '$2']
tolerations: [{key: dedicated, operator: Equal, value: ml, effect: NoSchedule}]
${3:-}
EOF
}

# ---- an end-to-end run: id on stdout, state, log, exit status ----------------------
spec hello 'echo "hello $BERTH_RUN_ID"; echo to-stderr >&2' 'resources: {cpu: 100m, mem: 32Mi}'
if id=$("$berth" run hello.yaml --wait 2>out) && [ "$(field "$id" state)" = Succeeded ] &&
	"$berth" logs "$id" >log && grep -qx "hello $id" log && grep -qx to-stderr log &&
	grep -q 'is recorded, not pulled' out; then
	ok run-wait
else
	fail run-wait "id=$id"
fi

spec exit3 'exit 3'
id=$("$berth" run exit3.yaml --wait 2>out)
st=$?
if [ $st = 1 ] && [ "$(field "$id" state)" = Failed ] && [ "$(field "$id" exit_code)" = 3 ] &&
	[ "$(field "$id" reason)" = "exit code 3" ]; then ok exit-code; else fail exit-code "status $st"; fi

# ---- memory: over the limit is OOM-killed, and reported so -----------------------------
spec oom 'tail /dev/zero' 'resources: {mem: {requests: 32Mi, limits: 32Mi}}'
id=$("$berth" run oom.yaml --wait 2>out)
if [ "$(field "$id" state)" = Failed ] && [ "$(field "$id" oom_killed)" = true ] &&
	field "$id" reason | grep -q '^OOMKilled: the memory limit 32Mi was reached' &&
	field "$id" enforcement | grep -q '^cgroup v'; then
	ok oom-killed
else
	"$berth" get run "$id" >out
	fail oom-killed "$id"
fi

# ---- CPU: a busy loop limited to 200m uses no more than its quota ------------------------
spec busy 'end=$(($(date +%s) + 3)); while [ $(date +%s) -lt $end ]; do :; done' \
	'resources: {cpu: {requests: 200m, limits: 200m}}'
id=$("$berth" run busy.yaml --wait 2>out)
used=$(field "$id" cpu_seconds)
wall_ms=$(("$(date -d "$(field "$id" finished)" +%s%3N)" - "$(date -d "$(field "$id" started)" +%s%3N)"))
# 200m of the wall time, with 15% for the scheduler's rounding; a busy loop
# without the limit would use ~100% of a core
if awk -v u="$used" -v w="$wall_ms" 'BEGIN { q = w / 1000 * 0.2; exit !(u > q * 0.5 && u <= q * 1.15) }'; then
	ok cpu-quota
else
	"$berth" get run "$id" >out
	fail cpu-quota "used ${used}s of CPU in ${wall_ms}ms"
fi

# ---- queue: two runs that cannot both fit run one after the other; priority first -------
spec big1 'sleep 1' 'resources: {cpu: "2"}'
spec big2 'true' 'resources: {cpu: "2"}'
spec big3 'true' 'resources: {cpu: "2"}
priority_class: high'
a=$("$berth" run big1.yaml 2>/dev/null)
b=$("$berth" run big2.yaml 2>out)
c=$("$berth" run big3.yaml 2>/dev/null)
reason=$(field "$b" reason)
while [ "$(field "$b" state)" != Succeeded ] && [ $SECONDS -lt 600 ]; do sleep 0.2; done
af=$(date -d "$(field "$a" finished)" +%s%3N)
bs=$(date -d "$(field "$b" started)" +%s%3N)
cs=$(date -d "$(field "$c" started)" +%s%3N)
if grep -q 'Pending: waiting for capacity: cpu 2 asked, 0 free of 2' out &&
	[ "$reason" = "waiting for capacity: cpu 2 asked, 0 free of 2" ] &&
	[ "$bs" -ge "$af" ] && [ "$cs" -le "$bs" ]; then
	ok queue-one-after-the-other
else
	fail queue-one-after-the-other "a finished $af, b started $bs, c (high) started $cs: $reason"
fi

# --wait on a run that queues: no pipe from a supervisor (another one starts it), so the
# waiter watches runs/ until the run's directory is made, then the directory
spec qhold 'sleep 0.5' 'resources: {cpu: "2"}'
spec qwait 'echo waited' 'resources: {cpu: "2"}'
"$berth" run qhold.yaml >/dev/null 2>&1
id=$(timeout 30 "$berth" run qwait.yaml --wait 2>out)
st=$?
if [ $st = 0 ] && [ "$(field "$id" state)" = Succeeded ] && grep -q 'Pending: waiting for capacity' out &&
	grep -q 'Succeeded' out; then
	ok wait-for-a-queued-run
else
	fail wait-for-a-queued-run "status $st (124: still waiting after 30 s), $(field "$id" state)"
fi

# the end of a run starts the next one by itself: no berth command in between (only files are read)
spec tail1 'sleep 0.5' 'resources: {cpu: "2"}'
spec tail2 'true' 'resources: {cpu: "2"}'
a=$("$berth" run tail1.yaml 2>/dev/null)
b=$("$berth" run tail2.yaml 2>/dev/null)
for _ in $(seq 100); do [ -e "$BERTH_HOME/runs/$b/done" ] && break; sleep 0.1; done
if [ -e "$BERTH_HOME/runs/$a/done" ] && [ -e "$BERTH_HOME/runs/$b/done" ] &&
	[ "$(field "$b" state)" = Succeeded ]; then
	ok queue-started-by-the-end-of-another
else
	fail queue-started-by-the-end-of-another "second run $(field "$b" state) after 10 s"
fi

# what a run leaves behind when it exits (a daemon of its own session) goes with it, found
# without a cgroup to kill (the supervisor is their subreaper)
spec leaver '(setsid sleep 3015 &); for i in 1 2 3 4 5 6 7 8 9 10; do pgrep -f "^sleep 3015" && break; sleep 0.1; done; exit 0'
id=$(BERTH_CGROUP_ROOT=$tmp/none "$berth" run leaver.yaml --wait 2>/dev/null)
sleep 0.2
if [ "$(field "$id" state)" = Succeeded ] && ! pgrep -f '^sleep 3015' >/dev/null; then
	ok exit-kills-leftovers
else
	fail exit-kills-leftovers "$(field "$id" state), sleep 3015 left: $(pgrep -fc '^sleep 3015')"
	pkill -f '^sleep 3015'
fi

# ---- refused at once: more than the machine, a label it lacks, a taint ------------------------
spec huge 'true' 'resources: {cpu: "64"}'
"$berth" run huge.yaml >out 2>&1
st=$?
if [ $st = 2 ] && grep -q '^huge.yaml:[0-9]*:[0-9]*: resources.cpu.requests: run "huge" can never fit here: 64 CPUs asked, the machine has 2' out &&
	[ -z "$("$berth" get runs | grep huge)" ]; then ok refused-capacity; else fail refused-capacity "status $st"; fi
spec label 'true' 'node_selector: {zone: cloud}'
"$berth" run label.yaml >out 2>&1
if [ $? = 2 ] && grep -q 'node_selector: run "label" can never fit here: the node has "zone=lab", the run asks "zone=cloud"' out; then
	ok refused-label
else fail refused-label "-"; fi
cat >taint.yaml <<'EOF'
function: {name: taint, image: busybox, command: ["true"]}
EOF
"$berth" run taint.yaml >out 2>&1
if [ $? = 2 ] && grep -q "taint \"dedicated=ml:NoSchedule\" is not tolerated" out; then
	ok refused-taint
else fail refused-taint "-"; fi

# ---- stop: the whole process tree goes, daemons included ---------------------------------------
spec tree 'sleep 3011 & (setsid sleep 3012 &); trap "" TERM; sleep 3013; wait'
id=$("$berth" run tree.yaml 2>/dev/null)
for _ in $(seq 50); do [ "$(pgrep -fc '^sleep 301[123]')" = 3 ] && break; sleep 0.1; done
n_before=$(pgrep -fc '^sleep 301[123]')
"$berth" stop "$id" --grace 1 >out 2>&1
sleep 0.2
n_after=$(pgrep -fc '^sleep 301[123]')
# with a grace too, stop says what it did; a second stop says the run had ended
"$berth" stop "$id" --grace 1 >>out 2>&1
if [ "$n_before" = 3 ] && [ "$n_after" = 0 ] && [ "$(field "$id" state)" = Stopped ] &&
	grep -qx "run $id (tree-$id): Stopped: stopped by berth stop" out &&
	grep -qx "run $id (tree-$id): had ended already (Stopped): nothing to stop" out; then
	ok stop-kills-tree
else
	pkill -f 'sleep 301[123]'
	fail stop-kills-tree "processes before $n_before, after $n_after"
fi

# a queued run is stopped at once
spec hold 'sleep 2' 'resources: {cpu: "2"}'
spec queued 'true' 'resources: {cpu: "2"}'
h=$("$berth" run hold.yaml 2>/dev/null)
q=$("$berth" run queued.yaml 2>/dev/null)
"$berth" stop "$q" >out 2>&1
if [ "$(field "$q" state)" = Stopped ] && [ "$(field "$q" reason)" = "stopped before it started" ]; then
	ok stop-queued
else fail stop-queued "$(field "$q" state)"; fi
"$berth" stop "$h" --grace 0 >/dev/null 2>&1

# ---- users: run_as_user, run_as_group, fs_group -------------------------------------------
if [ "$(id -u)" = 0 ]; then
	spec user 'echo "uid=$(id -u) gid=$(id -g) groups=$(id -G)"; touch /mnt/berth-test-vol/f; stat -c %g /mnt/berth-test-vol/f' \
		'run_as_user: 1000
run_as_group: 2000
fs_group: 3000
volumes:
- {volume_type: empty_dir, name: scratch, mount_path: /mnt/berth-test-vol}'
	id=$("$berth" run user.yaml --wait 2>out)
	"$berth" logs "$id" >log
	if grep -qx 'uid=1000 gid=2000 groups=2000 3000' log && grep -qx 3000 log &&
		[ ! -e /mnt/berth-test-vol ]; then ok run-as-user; else cp log out; fail run-as-user "$id"; fi
else
	echo "skip local run-as-user (berth is not root)"
fi

# ---- envs and secrets arrive; secrets are nowhere in clear ----------------------------------
printf 's3cr3t-value-42\n' | "$berth" secrets set api-token >/dev/null 2>&1
printf 'file-secret-77' >sec.txt
"$berth" secrets set tls-key --from-file sec.txt >/dev/null 2>&1
# a secret reaches the shell as the variable its name makes (api-token: API_TOKEN), and by
# that name only; a secret volume's file keeps the secret's name
spec envs 'echo "MODE=$MODE"; echo "TOKEN=$API_TOKEN"; echo "as-is=$(tr "\\0" "\\n" </proc/$$/environ | grep -c "^api-token=")"; cat /etc/berth-test-secret/tls-key; echo' \
	'envs: [{name: MODE, value: train}]
secrets: [api-token]
volumes:
- {volume_type: secret, name: tls, mount_path: /etc/berth-test-secret, spec: {name: tls-key}}'
id=$("$berth" run envs.yaml --wait 2>out)
"$berth" logs "$id" >log
if grep -qx 'MODE=train' log && grep -qx 'TOKEN=s3cr3t-value-42' log && grep -qx 'as-is=0' log &&
	grep -qx 'file-secret-77' log &&
	! grep -rqa 's3cr3t-value-42\|file-secret-77' "$BERTH_HOME"/berth.db* &&
	[ "$("$berth" secrets list)" = "$(printf 'api-token\ntls-key')" ] &&
	[ "$(stat -c %a "$BERTH_HOME/secret.key")" = 600 ]; then
	ok envs-and-secrets
else
	cat log >>out
	fail envs-and-secrets "$id"
fi
spec nosecret 'true' 'secrets: [missing-one]'
"$berth" run nosecret.yaml >out 2>&1
if [ $? = 2 ] && grep -q 'missing-one' out; then ok secret-unknown; else fail secret-unknown "-"; fi
# two secrets that make one variable: refused at the second, naming both and the variable
spec clash 'true' 'secrets: [api-token, API.token]'
"$berth" run clash.yaml >out 2>&1
if [ $? = 2 ] && grep -q '^clash.yaml:6:22: secrets\[1\]: secrets "API.token" and "api-token" (secrets\[0\]) both reach the processes as API_TOKEN' out; then
	ok secret-env-clash
else fail secret-env-clash "-"; fi

# ---- volumes: files written in one run are visible at the mount path of the next ------------
spec writer 'echo from-writer > /mnt/berth-test-shared/f; echo tmp > /mnt/berth-test-pvc/g' \
	'volumes:
- {volume_type: shared_volume, name: data, mount_path: /mnt/berth-test-shared, spec: {claim_name: team-data}}
- {volume_type: persistent_volume_claim, name: out, mount_path: /mnt/berth-test-pvc, spec: {size: 1Gi}}'
spec reader 'cat /mnt/berth-test-shared/f' \
	'volumes:
- {volume_type: shared_volume, name: data, mount_path: /mnt/berth-test-shared, spec: {claim_name: team-data}}'
w=$("$berth" run writer.yaml --wait 2>out)
r=$("$berth" run reader.yaml --wait 2>>out)
"$berth" logs "$r" >log
if grep -qx from-writer log && [ -f "$BERTH_HOME/volumes/shared/default/team-data/f" ] &&
	[ ! -e "$BERTH_HOME/volumes/$w" ] && [ ! -e /mnt/berth-test-shared ] && [ ! -e /mnt/berth-test-pvc ]; then
	ok volumes
else
	cat log >>out
	fail volumes "writer $w reader $r"
fi

# ---- logs -f follows a running run to its end ------------------------------------------------
spec slowlog 'echo first; sleep 1; echo second'
id=$("$berth" run slowlog.yaml 2>/dev/null)
"$berth" logs -f "$id" >log 2>&1
if [ "$(cat log)" = "$(printf 'first\nsecond')" ] && [ "$(field "$id" state)" = Succeeded ]; then
	ok logs-follow
else cp log out; fail logs-follow "$id"; fi

# ---- logs --tail, --since, --timestamps: each line's time is when it was written -----------------
# three lines 1.5 s apart, the last without its newline
spec timed 'echo one; sleep 1.5; echo two; sleep 1.5; printf three'
id=$("$berth" run timed.yaml --wait 2>/dev/null)
"$berth" logs "$id" --timestamps >ts 2>&1
# the times: RFC 3339 in UTC with ms, in order, about 1.5 s apart (the supervisor sees a
# line within 0.1 s; another test run on the machine may slow it: 1.2 to 2.5 s)
gaps=$(sed -n 's/^\([0-9T:.-]*Z\) .*/\1/p' ts | while read -r t; do date -d "$t" +%s%3N; done |
	awk 'NR > 1 { printf "%s ", ($1 - prev >= 1200 && $1 - prev <= 2500) ? "ok" : $1 - prev } { prev = $1 }')
if [ "$(sed 's/^[0-9T:.-]*Z //' ts | tr '\n' ' ')" = "one two three " ] && [ "$(wc -l <ts)" = 3 ] &&
	grep -qE '^20[0-9]{2}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9]\.[0-9]{3}Z one$' ts &&
	[ "$gaps" = "ok ok " ]; then
	ok logs-timestamps
else cp ts out; fail logs-timestamps "gaps: $gaps"; fi
"$berth" logs "$id" --tail 2 >t2 2>&1
"$berth" logs "$id" --tail 0 >t0 2>&1
"$berth" logs "$id" --tail 9 >t9 2>&1
if [ "$(cat t2)" = "$(printf 'two\nthree')" ] && [ "$(cat t9)" = "$(printf 'one\ntwo\nthree')" ] &&
	[ "$(cat t0)" = "$(cat t9)" ]; then
	ok logs-tail
else cat t2 t0 t9 >out; fail logs-tail "-"; fi
# --since: from the line written since then; the time the log ended is long past for a
# short --since
t_two=$(sed -n 's/^\([0-9T:.-]*Z\) two$/\1/p' ts)
ago=$((($(date +%s%3N) - $(date -d "$t_two" +%s%3N) + 700) ))
"$berth" logs "$id" --since "${ago}ms" >s2 2>&1
"$berth" logs "$id" --since 1h --tail 1 --timestamps >s1 2>&1
sleep 0.2
"$berth" logs "$id" --since 100ms >s0 2>&1
if [ "$(cat s2)" = "$(printf 'two\nthree')" ] && [ "$(tail -1 ts)" = "$(cat s1)" ] && [ ! -s s0 ]; then
	ok logs-since
else cat s2 s1 s0 >out; fail logs-since "since ${ago}ms"; fi
# follow with --timestamps: lines come with their times as they are written
spec followts 'echo a; sleep 0.5; echo b'
id=$("$berth" run followts.yaml 2>/dev/null)
"$berth" logs -f --timestamps "$id" >fts 2>&1
if [ "$(sed 's/^[0-9T:.-]*Z //' fts | tr '\n' ' ')" = "a b " ]; then ok logs-follow-timestamps
else cp fts out; fail logs-follow-timestamps "$id"; fi
# a run that writes nothing has no times file (one file less to make in its launch); one that
# writes has it, and its lines their times
spec silent 'true'
sid=$("$berth" run silent.yaml --wait 2>/dev/null)
if [ -n "$sid" ] && [ -e "$BERTH_HOME/runs/$sid/log" ] && [ ! -e "$BERTH_HOME/runs/$sid/log.times" ] &&
	[ -z "$("$berth" logs "$sid" --timestamps 2>&1)" ] && [ -s "$BERTH_HOME/runs/$id/log.times" ]; then
	ok logs-times-file-only-when-written
else
	fail logs-times-file-only-when-written "$sid: $(ls "$BERTH_HOME/runs/$sid" 2>&1 | tr '\n' ' ')"
fi
check() { # NAME WANT_STATUS PATTERN -- CMD...
	local name=$1 want=$2 pat=$3
	shift 4
	"$@" >out 2>&1
	local st=$?
	if [ $st = "$want" ] && grep -qE -- "$pat" out; then ok "$name"; else fail "$name" "exit $st, want $want"; fi
}
check logs-bad-since 2 '--since: "2x" is not a duration' -- "$berth" logs "$id" --since 2x
check logs-bad-tail 2 '--tail takes a number of lines, 0 to 10000000' -- "$berth" logs "$id" --tail -3

# ---- describe, events, delete ----------------------------------------------------------------
"$berth" describe run "$id" >desc 2>&1
st=$?
if [ $st = 0 ] && grep -q "^ID: *$id\$" desc && grep -q '^State: *Succeeded$' desc &&
	grep -q "^Log: *.*/runs/$id/log ('berth logs $id')\$" desc &&
	grep -q '^Resources (each value, and where it came from):$' desc &&
	grep -q '^  function.command  .*function (followts.yaml:' desc &&
	grep -qE '^  [0-9T:.-]+Z  Started +pid [0-9]+, attempt 1$' desc &&
	grep -qE '^  [0-9T:.-]+Z  Succeeded' desc; then
	ok describe
else cp desc out; fail describe "exit $st"; fi
"$berth" events "$id" >ev 2>&1
"$berth" events "$id" -o json >evj 2>&1
kinds=$(awk 'NR > 1 { print $2 }' ev | tr '\n' ' ')
if [ "$kinds" = "Submitted Scheduled Started Succeeded " ] && head -1 ev | grep -q '^TIME  *KIND  *MESSAGE$' &&
	python3 -c 'import json,sys; d=json.load(open("evj")); assert [e["kind"] for e in d["items"]] == ["Submitted", "Scheduled", "Started", "Succeeded"] and d["items"][0]["run"] == sys.argv[1]' "$id"; then
	ok events
else cat ev evj >out; fail events "kinds: $kinds"; fi
spec holdon 'echo up; sleep 60'
h=$("$berth" run holdon.yaml 2>/dev/null)
check delete-running-refused 1 "delete: run \"$h\" is Running: stop it first \('berth stop $h'\), or give --force" -- "$berth" delete run "$h"
st_after=$(field "$h" state)
"$berth" delete "$h" "$id" --force --grace 0 >out 2>&1
st=$?
if [ "$st_after" = Running ] && [ $st = 0 ] && grep -qx "run $h (holdon-$h) stopped and deleted" out &&
	grep -qx "run $id (followts-$id) deleted" out && [ ! -d "$BERTH_HOME/runs/$h" ] &&
	! "$berth" get run "$id" >/dev/null 2>&1 && ! "$berth" get runs | grep -q "$h"; then
	ok delete-force
else fail delete-force "state before $st_after, exit $st"; fi
check delete-gone 2 "no run \"$h\"" -- "$berth" delete "$h"

# ---- timeout ------------------------------------------------------------------------------------
spec slow 'sleep 30' 'timeout: 1'
start=$(date +%s)
id=$("$berth" run slow.yaml --wait 2>out)
took=$(($(date +%s) - start))
if [ "$(field "$id" state)" = Failed ] && field "$id" reason | grep -q '^DeadlineExceeded' && [ $took -lt 10 ]; then
	ok timeout
else fail timeout "took ${took}s"; fi

# a stop that is not final in time (its supervisor frozen) is a timeout: exit 1, not 2 ("invalid input")
spec frozen 'sleep 3031'
id=$("$berth" run frozen.yaml 2>out)
for _ in $(seq 50); do pgrep -f 'sleep 3031' >/dev/null && break; sleep 0.1; done
sup=$(pgrep -of "__supervise $id")
kill -STOP "$sup"
"$berth" stop "$id" --grace 0 2>out
status=$?
kill -CONT "$sup"
"$berth" stop "$id" --grace 0 2>/dev/null
if [ $status -eq 1 ] && grep -q 'is not finished after' out; then
	ok stop-timeout-exits-1
else fail stop-timeout-exits-1 "exit $status: $(cat out)"; fi

# ---- retries: a failing job is started retries + 1 times ---------------------------------------
spec flaky 'exit 1' 'retries: 1'
id=$("$berth" run flaky.yaml --wait 2>out)
if [ "$(field "$id" attempts)" = 2 ] && [ "$(field "$id" state)" = Failed ]; then ok retries; else fail retries "$id"; fi

# ---- GPUs: handed out by index, never shared (the first two hold theirs 3 s: the third is still
# queued when the checks below look, on a loaded machine too, where each berth command here takes 0.3 s)
spec gpu 'echo "cuda=$CUDA_VISIBLE_DEVICES nvidia=$NVIDIA_VISIBLE_DEVICES"; sleep 3' 'resources: {gpu: 1}'
spec nogpu 'echo "cuda=[$CUDA_VISIBLE_DEVICES] nvidia=$NVIDIA_VISIBLE_DEVICES"'
g1=$("$berth" run gpu.yaml 2>/dev/null)
g2=$("$berth" run gpu.yaml 2>/dev/null)
g3=$("$berth" run gpu.yaml 2>out)
n0=$("$berth" run nogpu.yaml --wait 2>/dev/null)
i1=$(field "$g1" gpu_ids) i2=$(field "$g2" gpu_ids) s3=$(field "$g3" state)
"$berth" logs -f "$g1" >log1
"$berth" logs -f "$g3" >log3
"$berth" logs "$n0" >log0
if [ "$i1$i2" = 01 ] && [ "$s3" = Pending ] && grep -qx 'cuda=0 nvidia=0' log1 &&
	grep -qx 'cuda=[01] nvidia=[01]' log3 && grep -qx 'cuda=\[\] nvidia=void' log0 &&
	grep -q 'gpu 1 asked, 0 free of 2' out; then
	ok gpus
else
	cat log1 log3 log0 >>out
	fail gpus "ids $i1 $i2, third $s3"
fi

# ---- an nvidia-smi that hangs (a GPU in a bad state) holds no supervisor: the sampler's query
# is killed after 2 s and not asked again, and the run stops at once ------------------------------
mkdir -p hangbin
cat >hangbin/nvidia-smi <<EOF
#!/bin/sh
case "\$1" in
-L) printf 'GPU 0: Fake (UUID: GPU-0)\nGPU 1: Fake (UUID: GPU-1)\n' ;;
--query-gpu=*) echo \$\$ >>$tmp/smi.pids; exec sleep 3022 ;;
*) exit 2 ;;
esac
EOF
chmod +x hangbin/nvidia-smi
spec smihang 'sleep 30' 'resources: {cpu: 100m, mem: 32Mi, gpu: 1}'
id=$(PATH=$tmp/hangbin:$PATH BERTH_SAMPLE_MS=100 "$berth" run smihang.yaml 2>/dev/null)
for _ in $(seq 50); do [ -s smi.pids ] && break; sleep 0.1; done
sleep 3 # the query is killed at 2 s; the CPU and memory samples go on
t0=$(date +%s%N)
timeout 20 "$berth" stop "$id" --grace 0 >/dev/null 2>&1
t1=$(date +%s%N)
asked=$(wc -l <smi.pids 2>/dev/null)
left=
for p in $(cat smi.pids 2>/dev/null); do kill -0 "$p" 2>/dev/null && left="$left $p"; done
said=$(python3 -c "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(\"SELECT count(*) FROM events WHERE run_id = ? AND kind = 'Warning' AND message LIKE 'nvidia-smi did not answer in 2 s%'\", (sys.argv[2],)).fetchone()[0])" "$BERTH_HOME/berth.db" "$id")
if [ "$(field "$id" state)" = Stopped ] && [ $(((t1 - t0) / 1000000)) -lt 3000 ] && [ "$asked" = 1 ] &&
	[ -z "$left" ] && [ "$said" = 1 ]; then
	ok gpu-sampler-hung-nvidia-smi
else
	for p in $left; do kill -9 "$p"; done
	fail gpu-sampler-hung-nvidia-smi "$(field "$id" state) after a stop of $(((t1 - t0) / 1000000)) ms; nvidia-smi asked $asked times, alive:$left; warned $said"
fi

# ---- recovery: a run whose supervisor is killed is failed and its processes stopped -------------
spec orphan 'sleep 3021'
id=$("$berth" run orphan.yaml 2>/dev/null)
for _ in $(seq 50); do pgrep -f 'sleep 3021' >/dev/null && break; sleep 0.1; done
pkill -9 -f "__supervise $id"
sleep 0.3
"$berth" get runs >/dev/null 2>&1
if [ "$(field "$id" state)" = Failed ] && field "$id" reason | grep -q 'supervisor died' &&
	! pgrep -f 'sleep 3021' >/dev/null; then
	ok recover-dead-supervisor
else
	pkill -f 'sleep 3021'
	fail recover-dead-supervisor "$(field "$id" state)"
fi

# ---- the command is looked up in the run's own PATH (its envs'), as a container's runtime looks
# it up, not in berth's: berth started with a PATH without env finds it in the run's; a run's PATH
# without it does not find it in berth's
lookup() {
	cat >"$1.yaml" <<EOF
function:
  name: $1
  image: busybox
  command: [${3:-env}]
tolerations: [{key: dedicated, operator: Equal, value: ml, effect: NoSchedule}]
envs: [{name: PATH, value: "$2"}]
EOF
}
lookup inpath "/nowhere-$fakeid:/usr/bin:/bin"
lookup notinpath "/nowhere-$fakeid"
id=$(PATH=/nowhere-$fakeid "$berth" run inpath.yaml --wait 2>out)
found=$?
"$berth" logs "$id" >log 2>>out
nid=$("$berth" run notinpath.yaml --wait 2>>out)
if [ "$found" = 0 ] && grep -qx "PATH=/nowhere-$fakeid:/usr/bin:/bin" log &&
	[ "$(field "$nid" state)" = Failed ] &&
	[ "$(field "$nid" reason)" = 'cannot run \"env\": No such file or directory' ]; then
	ok command-in-the-runs-path
else
	fail command-in-the-runs-path "with the run's PATH: $(field "$id" state) $(field "$id" reason); without: $(field "$nid" state) $(field "$nid" reason)"
fi
# a command that is nowhere is not found, also past a directory the run cannot search (pid 1's
# root: not the run's to look into), where execvp says "Permission denied"
lookup unsearchable "/proc/1/root/bin:/nowhere-$fakeid" "nothing-$fakeid"
id=$("$berth" run unsearchable.yaml --wait 2>out)
if [ "$(field "$id" reason)" = "cannot run \\\"nothing-$fakeid\\\": No such file or directory" ]; then
	ok command-nowhere-is-not-found
else
	fail command-nowhere-is-not-found "$(field "$id" state): $(field "$id" reason)"
fi

# ---- berth run --wait: woken by a pipe from its supervisor, which the run never sees ---------------
# Its supervisor is forked from it (no exec of berth again), or, where it cannot be, spawned as
# `berth __supervise ID` as a server's is (BERTH_TEST_SPAWN_SUPERVISOR, test builds): both ways,
# the run sees no fd of berth's, a stop reaches it, and a supervisor killed is recovered.
# (ls with no pipeline: a pipeline's pipe is open in the shell while ls reads its fds)
spec fds 'ls /proc/$$/fd; echo END; env | grep -c "^BERTH_DONE_FD=" || true'
spec stopwait 'sleep 3024'
spec orphanwait 'sleep 3023'
spec quick 'true'
for how in forked exec; do
	export BERTH_TEST_SUPERVISOR_HOW=$tmp/how
	[ "$how" = exec ] && export BERTH_TEST_SPAWN_SUPERVISOR=1
	: >how
	if id=$("$berth" run fds.yaml --wait 2>out) && "$berth" logs "$id" >log &&
		[ "$(sed '/^END$/,$d' log | tr '\n' ' ')" = "0 1 2 " ] && [ "$(tail -n1 log)" = 0 ] &&
		[ "$(cat how)" = "$how" ]; then
		ok "wait-pipe-not-inherited-$how"
	else
		cat log >>out 2>/dev/null
		fail "wait-pipe-not-inherited-$how" "supervisor $(cat how); the run's fds and BERTH_DONE_FD count: $(tr '\n' '|' <log 2>/dev/null)"
	fi

	# a stop from another berth reaches the supervisor, which the waiter hears
	"$berth" run stopwait.yaml --wait >id 2>out &
	waiter=$!
	for _ in $(seq 50); do pgrep -f 'sleep 3024' >/dev/null && break; sleep 0.1; done
	id=$(head -n1 id)
	pgrep -f "__supervise $id" >/dev/null && sup_seen=1 || sup_seen=0
	"$berth" stop "$id" --grace 0 >>out 2>&1
	wait "$waiter"
	status=$?
	if [ "$status" = 1 ] && [ "$sup_seen" = 1 ] && [ "$(field "$id" state)" = Stopped ] &&
		! pgrep -f 'sleep 3024' >/dev/null; then
		ok "wait-stop-$how"
	else
		pkill -f 'sleep 3024'
		fail "wait-stop-$how" "status $status, supervisor seen by name $sup_seen, state $(field "$id" state)"
	fi

	# the supervisor killed while berth run --wait waits: the waiter recovers the run, and ends
	timeout 30 "$berth" run orphanwait.yaml --wait >id 2>out &
	waiter=$!
	for _ in $(seq 50); do pgrep -f 'sleep 3023' >/dev/null && break; sleep 0.1; done
	pkill -9 -f "__supervise $(head -n1 id)"
	wait "$waiter"
	status=$?
	id=$(head -n1 id)
	if [ "$status" = 1 ] && [ "$(field "$id" state)" = Failed ] && grep -q 'Failed' out &&
		field "$id" reason | grep -q 'supervisor died' && ! pgrep -f 'sleep 3023' >/dev/null; then
		ok "wait-dead-supervisor-$how"
	else
		pkill -f 'sleep 3023'
		fail "wait-dead-supervisor-$how" "status $status (124: still waiting after 30 s), state $(field "$id" state)"
	fi

	# ... or killed before it started the run: the waiter ends at once all the same
	start=$(date +%s)
	BERTH_TEST_SUPERVISOR_DIES=1 timeout 30 "$berth" run quick.yaml --wait >id 2>out
	status=$?
	id=$(head -n1 id)
	if [ "$status" = 1 ] && [ $(($(date +%s) - start)) -lt 10 ] && [ "$(field "$id" state)" = Failed ] &&
		field "$id" reason | grep -q 'supervisor died'; then
		ok "wait-supervisor-died-early-$how"
	else
		fail "wait-supervisor-died-early-$how" "status $status after $(($(date +%s) - start)) s, state $(field "$id" state)"
	fi
	unset BERTH_TEST_SPAWN_SUPERVISOR BERTH_TEST_SUPERVISOR_HOW
done

# a supervisor done and gone before its spawner looks at it (a slow spawner, in test builds):
# the run keeps its end, with --wait (the supervisor is a child of berth run) or without
# (the double fork: init reaps it)
w=$(BERTH_TEST_SPAWN_DELAY_MS=400 "$berth" run quick.yaml --wait 2>out)
nw=$(BERTH_TEST_SPAWN_DELAY_MS=400 "$berth" run quick.yaml 2>>out)
for _ in $(seq 50); do [ -e "$BERTH_HOME/runs/$nw/done" ] && break; sleep 0.1; done
if [ "$(field "$w" state)" = Succeeded ] && [ "$(field "$nw" state)" = Succeeded ]; then
	ok spawner-slower-than-the-run
else
	fail spawner-slower-than-the-run "with --wait $(field "$w" state): $(field "$w" reason); without $(field "$nw" state): $(field "$nw" reason)"
fi

# ---- a launch's WAL fsyncs: the submission's and the end's; the start's record (its supervisor,
# Started) is not fsynced on its own: the end's commit makes it durable too (test builds log
# each WAL fsync: BERTH_TEST_FSYNC_LOG)
"$berth" run quick.yaml --wait >/dev/null 2>&1 # the WAL's entries fsynced and marked already
: >fsyncs
id=$(BERTH_TEST_FSYNC_LOG=$tmp/fsyncs "$berth" run quick.yaml --wait 2>out)
if [ "$(field "$id" state)" = Succeeded ] && [ "$(wc -l <fsyncs)" = 2 ] &&
	"$berth" events "$id" 2>/dev/null | grep -q Started; then
	ok launch-two-wal-fsyncs
else
	fail launch-two-wal-fsyncs "$(wc -l <fsyncs) WAL fsyncs (by pid: $(sort fsyncs | uniq -c | tr '\n' ' ')), state $(field "$id" state)"
fi

# ---- berth run --wait ends once its supervisor says the end is recorded (a byte on the pipe),
# not when the done marker, made for the other waiters, is there (made 0.8 s late here: before
# the waiter's next look at the store, 1 s after its last, which would find the end too)
for how in forked exec; do
	[ "$how" = exec ] && export BERTH_TEST_SPAWN_SUPERVISOR=1
	id=$(BERTH_TEST_MARKER_DELAY_MS=800 timeout 20 "$berth" run quick.yaml --wait 2>out)
	status=$?
	marked=no
	[ -e "$BERTH_HOME/runs/$id/done" ] && marked=yes
	for _ in $(seq 100); do [ -e "$BERTH_HOME/runs/$id/done" ] && break; sleep 0.1; done
	if [ "$status" = 0 ] && [ "$marked" = no ] && [ "$(field "$id" state)" = Succeeded ] &&
		[ -e "$BERTH_HOME/runs/$id/done" ]; then
		ok "wait-ends-before-the-marker-$how"
	else
		fail "wait-ends-before-the-marker-$how" "status $status, marker there when berth run ended: $marked, state $(field "$id" state)"
	fi
	unset BERTH_TEST_SPAWN_SUPERVISOR
done

# ---- berth run --wait hears the end from its supervisor with the run's record (the pipe, not
# the store): the store is opened twice a launch, by berth run before its fork and by the
# supervisor, not a third time by the waiter. Test builds check every record so told against
# the store's: one told wrong (its reason) fails the wait, naming the field
: >opens
id=$(BERTH_TEST_STORE_OPEN_LOG=$tmp/opens "$berth" run quick.yaml --wait 2>out)
status=$?
if [ "$status" = 0 ] && [ "$(field "$id" state)" = Succeeded ] && [ "$(wc -l <opens)" = 2 ] &&
	[ "$(sort -u opens | wc -l)" = 2 ]; then
	ok waiter-hears-the-record
else
	fail waiter-hears-the-record "status $status, state $(field "$id" state), store opened by pids: $(tr '\n' ' ' <opens)"
fi
id=$(BERTH_TEST_END_TOLD_REASON=forged "$berth" run quick.yaml --wait 2>out)
status=$?
if [ "$status" != 0 ] && grep -q "differs from the store's in reason" out &&
	[ "$(field "$id" state)" = Succeeded ]; then
	ok told-record-checked-against-the-store
else
	fail told-record-checked-against-the-store "status $status: $(cat out)"
fi

# ---- the end told to a waiter that does not read (stopped: kill -STOP, or reading another run's
# pipe first) through a pipe smaller than the record (what a user past fs.pipe-user-pages-soft
# gets: a page or two): the supervisor does not wait for it (it ends: a zombie of the stopped
# waiter), and the waiter, let go, ends with the run's record (the store's)
big=$(head -c 12000 /dev/zero | tr '\0' x)
spec bigend 'sleep 3' "envs: [{name: BIG, value: $big}]"
for how in forked exec; do
	[ "$how" = exec ] && export BERTH_TEST_SPAWN_SUPERVISOR=1
	"$berth" run bigend.yaml --wait >bigend.id 2>out &
	waiter=$!
	unset BERTH_TEST_SPAWN_SUPERVISOR
	# the one pipe the waiter reads (its output goes to files) is the one from its supervisor
	sup= pipe=
	for _ in $(seq 100); do
		sup=$(pgrep -P "$waiter" | head -1)
		pipe=$(ls -l "/proc/$waiter/fd" 2>/dev/null | awk '/^lr.*pipe:/ {print $9; exit}')
		[ -n "$sup" ] && [ -n "$pipe" ] && break
		sleep 0.1
	done
	shrunk=$(python3 -c 'import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
print(fcntl.fcntl(fd, 1031, 4096))  # F_SETPIPE_SZ' "/proc/$waiter/fd/$pipe" 2>&1)
	kill -STOP "$waiter"
	for _ in $(seq 300); do [ "$(awk '{print $3}' "/proc/$sup/stat" 2>/dev/null)" = Z ] && break; sleep 0.1; done
	sup_state=$(awk '{print $3}' "/proc/$sup/stat" 2>/dev/null)
	sup_in=$(cat "/proc/$sup/wchan" 2>/dev/null)
	kill -CONT "$waiter"
	wait "$waiter"
	status=$?
	id=$(cat bigend.id)
	if [ "$shrunk" = 4096 ] && [ "$sup_state" = Z ] && [ "$status" = 0 ] && [ -n "$id" ] &&
		[ "$(field "$id" state)" = Succeeded ]; then
		ok "end-told-to-a-stopped-waiter-$how"
	else
		fail "end-told-to-a-stopped-waiter-$how" "pipe shrunk to: $shrunk; supervisor $sup: ${sup_state:-gone} (Z: ended), in ${sup_in:-?}; berth run --wait: $status, state $(field "$id" state)"
	fi
done

# ---- berth run --wait of two runs, the first of which cannot start (its end comes with no start
# before it): once it has said how the first ended, it holds the second's pipe only
cat >nostart.yaml <<'EOF'
function: {name: nostart, image: busybox, command: [/no/such/command]}
tolerations: [{key: dedicated, operator: Equal, value: ml, effect: NoSchedule}]
---
function: {name: after, image: busybox, command: [sh, -c, 'sleep 3']}
tolerations: [{key: dedicated, operator: Equal, value: ml, effect: NoSchedule}]
EOF
"$berth" run nostart.yaml --wait >nostart.ids 2>out &
waiter=$!
for _ in $(seq 100); do grep -q 'nostart-.*: Failed' out && break; sleep 0.1; done
pipes=$(ls -l "/proc/$waiter/fd" 2>/dev/null | grep -c '^lr.*pipe:')
wait "$waiter"
status=$?
if grep -q 'nostart-.*: Failed' out && [ "$pipes" = 1 ] && [ "$status" = 1 ] &&
	[ "$(field "$(tail -1 nostart.ids)" state)" = Succeeded ]; then
	ok wait-closes-the-pipe-of-a-run-that-did-not-start
else
	fail wait-closes-the-pipe-of-a-run-that-did-not-start "pipes read while waiting for the second: $pipes; status $status"
fi

# ---- a record over 32 KiB (its effective spec: a 40 KB variable) is told as "e" alone: the
# waiter reads the store (opened a third time), and reports the run as it is
big=$(head -c 40000 /dev/zero | tr '\0' x)
spec bigrecord 'true' "envs: [{name: BIG, value: $big}]"
: >opens
id=$(BERTH_TEST_STORE_OPEN_LOG=$tmp/opens "$berth" run bigrecord.yaml --wait 2>out)
status=$?
if [ "$status" = 0 ] && [ "$(field "$id" state)" = Succeeded ] && [ "$(wc -l <opens)" = 3 ] &&
	grep -q "): Succeeded$" out; then
	ok large-record-read-from-the-store
else
	fail large-record-read-from-the-store "status $status, state $(field "$id" state), store opened by pids: $(tr '\n' ' ' <opens): $(tail -2 out)"
fi

# ---- the end's commit made but its fsync failed (a full disk): recorded once, not twice, and
# berth run --wait still ends with it (test builds: BERTH_TEST_SUPERVISOR_FSYNC_ERRNO=28)
id=$(BERTH_TEST_SUPERVISOR_FSYNC_ERRNO=28 timeout 30 "$berth" run quick.yaml --wait 2>out)
status=$?
ends=$("$berth" events "$id" 2>/dev/null | grep -c Succeeded)
if [ "$status" = 0 ] && [ "$(field "$id" state)" = Succeeded ] && [ "$ends" = 1 ]; then
	ok end-recorded-once-when-its-fsync-fails
else
	fail end-recorded-once-when-its-fsync-fails "status $status, state $(field "$id" state), Succeeded events: $ends"
fi

# ---- berth run --wait, then berth delete at once, while the supervisor still makes the done
# marker (0.8 s late): the deleted run's directory is not made again (the marker is for the
# other waiters; only an end the store could not record needs it made whatever)
id=$(BERTH_TEST_MARKER_DELAY_MS=800 timeout 20 "$berth" run quick.yaml --wait 2>out) &&
	"$berth" delete run "$id" >>out 2>&1
deleted=$?
# until its supervisor ("berth __supervise ID") is gone
for _ in $(seq 200); do grep -qsa "__supervis[e].$id" /proc/[0-9]*/cmdline || break; sleep 0.1; done
if [ "$deleted" = 0 ] && [ -n "$id" ] && [ ! -e "$BERTH_HOME/runs/$id" ]; then
	ok deleted-at-once-leaves-no-dir
else
	fail deleted-at-once-leaves-no-dir "delete: $deleted; left: $(ls -A "$BERTH_HOME/runs/$id" 2>&1)"
fi

# ---- no writable cgroup: rlimits, said so -----------------------------------------------------------
spec rl 'tail /dev/zero' 'resources: {mem: {requests: 32Mi, limits: 32Mi}}'
id=$(BERTH_CGROUP_ROOT=$tmp/none "$berth" run rl.yaml --wait 2>out)
if [ "$(field "$id" enforcement)" = rlimits ] && [ "$(field "$id" state)" = Failed ] &&
	grep -q 'no writable cgroup under .*none: memory is limited with rlimits' out; then
	ok rlimits-fallback
else fail rlimits-fallback "$id"; fi

# ---- cgroup v2: where the host has it ----------------------------------------------------------------
if [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw memory /sys/fs/cgroup/cgroup.controllers; then
	id=$("$berth" run oom.yaml --wait 2>out)
	if [ "$(field "$id" enforcement)" = "cgroup v2" ] && [ "$(field "$id" oom_killed)" = true ]; then
		ok cgroup-v2-oom
	else fail cgroup-v2-oom "$id"; fi
else
	echo "skip local cgroup-v2-oom (this host has no cgroup v2 memory controller; the v2 writer is tested in test_cgroup)"
fi

# ---- a store of schema 3 (before the queue index held the fit columns) is migrated on open --------
mig=$tmp/migrate-home
BERTH_HOME=$mig "$berth" run hello.yaml --wait >/dev/null 2>&1
# what schemas 5 and later added, taken away (a store of schema 4, less its version)
undo_5_on="ALTER TABLE runs DROP COLUMN pids_max; ALTER TABLE runs DROP COLUMN disk_limit;
ALTER TABLE runs DROP COLUMN quota_cpu_milli; ALTER TABLE runs DROP COLUMN quota_mem;
ALTER TABLE runs DROP COLUMN quota_gpus; ALTER TABLE runs DROP COLUMN workers;
ALTER TABLE runs DROP COLUMN worker_states; ALTER TABLE runs DROP COLUMN worker_env;
ALTER TABLE runs DROP COLUMN launcher; ALTER TABLE runs DROP COLUMN quota_of;
ALTER TABLE runs DROP COLUMN qlim_cpu_milli; ALTER TABLE runs DROP COLUMN qlim_mem;
ALTER TABLE runs DROP COLUMN qlim_gpus; ALTER TABLE runs DROP COLUMN qlim_runs;
ALTER TABLE runs DROP COLUMN labels; DROP TRIGGER runs_rv_insert; DROP TRIGGER runs_rv_update;
DROP TRIGGER runs_rv_delete; DROP INDEX runs_rv; ALTER TABLE runs DROP COLUMN rv; DROP TABLE rv;
DROP TABLE tombstones; DROP TABLE samples; ALTER TABLE runs DROP COLUMN submitted_by;
DROP TABLE project_uids; ALTER TABLE tokens DROP COLUMN expires; ALTER TABLE tokens DROP COLUMN revoked;
ALTER TABLE tokens DROP COLUMN last_used; ALTER TABLE tokens DROP COLUMN maker;"
python3 - "$mig/berth.db" "$undo_5_on" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.executescript("DROP INDEX runs_queue; CREATE INDEX runs_queue ON runs(state, priority DESC, created);"
                 + sys.argv[2] + "PRAGMA user_version = 3;")
db.close()
PY
n3=$(BERTH_HOME=$mig "$berth" get runs 2>out | awk 'NR > 1' | wc -l)
read -r v idx < <(python3 - "$mig/berth.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
v = db.execute("PRAGMA user_version").fetchone()[0]
cols = [r[2] for r in db.execute("PRAGMA index_info(runs_queue)")]
print(v, ",".join(cols))
PY
)
if [ "$n3" = 1 ] && [ "$v" = 17 ] && [ "$idx" = "state,priority,created,cpu_milli,mem,gpus,disk,backend" ]; then
	ok store-migrated-from-schema-3
else
	fail store-migrated-from-schema-3 "$n3 runs listed, schema $v, queue index ($idx)"
fi

# ---- a migration that cannot be written (a full disk) says the disk is full, and never blames
# another build of berth (as a schema whose tables do not match is: test_migration)
mf=$tmp/migrate-full
mkdir -p "$mf"
if [ "$(id -u)" != 0 ] || ! mount -t tmpfs -o size=1m tmpfs "$mf" 2>/dev/null; then
	skip store-migration-on-a-full-disk "cannot mount a tmpfs"
else
	BERTH_HOME=$mf/home "$berth" get runs >/dev/null 2>&1
	python3 - "$mf/home/berth.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.executescript("DROP INDEX samples_worker; PRAGMA user_version = 16;")
db.close()
PY
	# room for SQLite's shared memory and a page or two, not for the migration's commit
	fallocate -l $(($(stat -f -c '%a * %S' "$mf") - 40960)) "$mf/filler"
	BERTH_HOME=$mf/home "$berth" get runs >out 2>&1
	rc=$?
	v=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("PRAGMA user_version").fetchone()[0])' "$mf/home/berth.db")
	if [ "$rc" != 0 ] && grep -q 'disk is full' out && ! grep -q 'another build' out && [ "$v" = 16 ]; then
		ok store-migration-on-a-full-disk
	else
		fail store-migration-on-a-full-disk "exit $rc, schema $v: $(head -2 out)"
	fi
	umount "$mf"
fi

# ---- a run queued in a schema-4 store kept its volumes as tab-separated text, which is
# never read again: the migration to 5 fails it with the reason, nothing is made or removed --------
mig4=$tmp/migrate4-home
mkdir -p "$tmp/legacy-victim"
BERTH_HOME=$mig4 "$berth" run hello.yaml --wait >/dev/null 2>&1
python3 - "$mig4/berth.db" "$tmp/legacy-victim" "$undo_5_on" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.executescript(sys.argv[3] + "PRAGMA user_version = 4;")
cols = [r[1] for r in db.execute("PRAGMA table_info(runs)") if r[1] not in ("id", "state", "volumes")]
db.execute("INSERT INTO runs (id, state, volumes, %s) SELECT 'legacyq1', 0, ?, %s FROM runs LIMIT 1"
           % (", ".join(cols), ", ".join(cols)), ("dir\tx\t%s\t/mnt/x\trun\t0\n" % sys.argv[2],))
db.commit()
PY
st=$(BERTH_HOME=$mig4 field legacyq1 state)
reason=$(BERTH_HOME=$mig4 field legacyq1 reason)
if [ "$st" = Failed ] && echo "$reason" | grep -q 'queued before an upgrade of berth' && [ -d "$tmp/legacy-victim" ]; then
	ok store-migrated-from-schema-4-fails-a-text-volume-table
else
	fail store-migrated-from-schema-4-fails-a-text-volume-table "$st: $reason"
fi

# ---- get: filters and formats ------------------------------------------------------------------------------
"$berth" get runs --state Succeeded >out
if grep -q ' hello-' out && ! grep -q ' oom-' out && "$berth" get runs -o json | grep -q '"state": "Failed"' &&
	"$berth" get run nope >out 2>&1; [ $? = 2 ] && grep -q 'no run "nope"' out; then
	ok get
else fail get "-"; fi

# ---- get as kubectl users know it (issue 24): labels, sorting, a limit, aligned columns,
# colours on a terminal, a watch, run ids completed ------------------------------------------
kh=$tmp/kubectl-home
kspec() { # kspec FILE NAME LABELS CMD
	printf 'name: %s\nlabels: {%s}\nfunction: {name: f, command: [sh, -c, "%s"]}\nresources: {cpu: 50m, mem: 16Mi}\n%s\n' \
		"$2" "$3" "$4" 'tolerations: [{key: dedicated, operator: Exists}]' >"$1"
}
kspec ka.yaml a "team: a, tier: gpu" true
kspec kb.yaml b-run-with-a-name-longer-than-the-old-column-of-twenty-eight "team: b" true
kspec kc.yaml c "" "exit 1"
ka=$(BERTH_HOME=$kh "$berth" run ka.yaml --wait 2>/dev/null)
kb=$(BERTH_HOME=$kh "$berth" run kb.yaml --wait 2>/dev/null)
kc=$(BERTH_HOME=$kh "$berth" run kc.yaml --wait 2>/dev/null)
kget() { BERTH_HOME=$kh "$berth" get "$@" 2>&1 | tr '\n' ' ' | sed 's/ $//'; }
kcheck() { # NAME WANT GET-ARGS...
	local name=$1 want=$2 got
	shift 2
	got=$(kget "$@")
	if [ "$got" = "$want" ]; then ok "$name"; else fail "$name" "get $* gave '$got', want '$want'"; fi
}
kcheck get-name-newest-first "$kc $kb $ka" runs -o name
kcheck get-selector-equal "$ka" runs -l team=a -o name
kcheck get-selector-double-equal "$ka" runs -l team==a -o name
kcheck get-selector-not-equal "$kc $kb" runs -l 'team!=a' -o name
kcheck get-selector-exists "$kb $ka" runs -l team -o name
kcheck get-selector-not-exists "$kc" runs -l '!team' -o name
kcheck get-selector-and "$ka" runs --selector 'tier=gpu,team=a' -o name
kcheck get-selector-and-state "$kb" runs -l team --state Succeeded --limit 1 -o name
kcheck get-sort-by-name "$ka $kb $kc" runs --sort-by name -o name
kcheck get-sort-by-created "$ka $kb $kc" runs --sort-by created -o name
kcheck get-sort-by-state "$kb $ka $kc" runs --sort-by state -o name
kcheck get-limit "$kc $kb" runs --limit 2 -o name
kcheck get-sort-then-limit "$ka" runs --sort-by name --limit 1 -o name
BERTH_HOME=$kh "$berth" get runs -l 'team in (a' >out 2>&1
st=$?
if [ $st = 2 ] && grep -q 'label selector "team in (a": "team in (a" is not a term' out; then
	ok get-selector-refused
else fail get-selector-refused "exit $st"; fi
if BERTH_HOME=$kh "$berth" get run "$ka" | grep -A2 '^labels:' | tr -d ' \n' | grep -q '^labels:team:atier:gpu$'; then
	ok get-run-labels
else fail get-run-labels "$(BERTH_HOME=$kh "$berth" get run "$ka")"; fi
# the columns: as wide as their widest cell, three spaces apart; nothing after the last cell
BERTH_HOME=$kh "$berth" get runs >table.out 2>&1
cols=$(python3 - table.out <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
starts = []
for l in lines:
    # each cell starts after 3 blanks (or at 0): the start of STATE, PROFILE, CPU in every line
    cells, pos, i = [], [], 0
    while i < len(l):
        if l[i] != ' ' and (i == 0 or l[i-3:i] == '   '):
            pos.append(i)
        i += 1
    starts.append(tuple(pos[2:5]))
print(len(set(starts)), len(lines))
PY
)
if [ "$cols" = "1 4" ] && ! grep -q ' $' table.out && grep -q "^$kb   b-run-with-a-name-longer-than-the-old-column-of-[a-z-]*-$kb   Succeeded" table.out &&
	grep -q "^$kc .*Failed .*exit code 1$" table.out; then
	ok get-table-aligned
else fail get-table-aligned "columns: $cols"; cp table.out out; fi
# the state in colour on a terminal only, and never with NO_COLOR
if command -v script >/dev/null; then
	script -qec "env BERTH_HOME=$kh $berth get runs" /dev/null >tty.out 2>&1
	NO_COLOR=1 script -qec "env BERTH_HOME=$kh $berth get runs" /dev/null >notty.out 2>&1
	if grep -q $'\e\\[32mSucceeded\e\\[0m' tty.out && grep -q $'\e\\[31mFailed' tty.out &&
		! grep -q $'\e' notty.out && grep -q Succeeded notty.out && ! grep -q $'\e' table.out; then
		ok get-state-colours
	else fail get-state-colours "$(cat -v tty.out | head -3)"; fi
else
	skip get-state-colours "script is not installed"
fi
# --watch: the table, then a line for each change, until it is stopped
kspec kw.yaml watched "team: w" "sleep 1"
BERTH_HOME=$kh timeout 8 "$berth" get runs -w -l team=w >watch.out 2>&1 &
wpid=$!
sleep 1
kw=$(BERTH_HOME=$kh "$berth" run kw.yaml 2>/dev/null)
BERTH_HOME=$kh "$berth" run ka.yaml >/dev/null 2>&1 # not selected: not shown
wait $wpid
wst=$?
if [ $wst = 124 ] && [ "$(head -1 watch.out | awk '{print $1, $2, $3}')" = "ID NAME STATE" ] &&
	grep -qE "^$kw +watched-$kw +(Pending|Running)" watch.out && grep -qE "^$kw +watched-$kw +Succeeded" watch.out &&
	[ "$(grep -c "^$kw" watch.out)" -le 3 ] && [ "$(wc -l <watch.out)" -le 4 ]; then
	ok get-watch
else fail get-watch "exit $wst: $(cat watch.out)"; fi
# ... and the runs past --limit, which the table did not show, are no change
BERTH_HOME=$kh timeout 3 "$berth" get runs -w --limit 1 >watch.out 2>&1
if [ $? = 124 ] && [ "$(wc -l <watch.out)" = 2 ]; then ok get-watch-limit; else fail get-watch-limit "$(cat watch.out)"; fi
# run ids are completed from the store, as get lists them
mkdir -p bin && ln -sf "$berth" bin/berth
comp=$(PATH=$tmp/bin:$PATH BERTH_HOME=$kh bash -c 'source <(berth completion bash); COMP_LINE="berth logs "; COMP_POINT=11; _berth; echo "${COMPREPLY[*]}"')
if [ "$comp" = "$(kget runs -o name)" ] && [ -n "$comp" ]; then ok completion-run-ids; else fail completion-run-ids "'$comp'"; fi

# ---- a signal ends the run: reported with its name --------------------------------------------
spec killed 'kill -9 $$'
id=$("$berth" run killed.yaml --wait 2>out)
if [ "$(field "$id" reason)" = "killed by signal 9 (SIGKILL)" ] && [ "$(field "$id" signal)" = 9 ]; then
	ok killed-by-signal
else fail killed-by-signal "$(field "$id" reason)"; fi

# ---- refusals and mistakes: each with its message and exit status ------------------------------
# (check NAME WANT_STATUS PATTERN -- CMD..., defined above)
tol='tolerations: [{key: dedicated, operator: Exists}]'
printf 'function: {name: nocmd, image: busybox}\n%s\n' "$tol" >nocmd.yaml
printf 'function: {name: c, image: b, command: ["true"]}\naction: cronjob\nschedule: "0 * * * *"\n%s\n' "$tol" >cron.yaml
spec cm 'true' 'volumes: [{volume_type: config_map, name: conf, mount_path: /etc/conf, spec: {name: app-conf}}]'
check run-missing-file 1 'cannot open nope.yaml' -- "$berth" run nope.yaml
check run-no-command 2 '^nocmd.yaml:1:18: function.command: run "nocmd" needs a command on the local backend, which runs it on this machine' -- "$berth" run nocmd.yaml
check run-cronjob 2 'action "cronjob" needs a scheduler' -- "$berth" run cron.yaml
check run-configmap-missing 2 'config_map "app-conf" does not exist on this machine' -- "$berth" run cm.yaml
check run-secrets-flag 2 'run: unknown option "--secrets"' -- "$berth" run hello.yaml --secrets a
check run-bad-backend 2 'run: --backend takes local or kubernetes, not "cloud"' -- "$berth" run hello.yaml --backend cloud
check logs-unknown 2 'no run "nope"' -- "$berth" logs nope
check stop-unknown 2 'no run "nope"' -- "$berth" stop nope
check stop-bad-grace 2 'grace takes seconds' -- "$berth" stop x --grace soon
check get-bad-state 2 'state takes Pending, Running' -- "$berth" get runs --state Done
check secret-bad-name 2 'secret name "a/b" may hold only' -- sh -c "echo v | '$berth' secrets set a/b"
check secret-value-on-command-line 2 'never from the command line' -- "$berth" secrets set name value
check secret-rm-unknown 2 'no secret "nope" in project "default"' -- "$berth" secrets rm nope
if "$berth" secrets rm tls-key >out 2>&1 && [ "$("$berth" secrets list)" = api-token ]; then
	ok secret-rm
else fail secret-rm "-"; fi

# ---- not root: no cgroup, no mount namespace, no user switch ---------------------------------------
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	nr=$tmp/nonroot
	mkdir -p "$nr" && chown 1000:1000 "$nr" && chmod 755 "$tmp"
	cp "$berth" "$nr/berth" && chown 1000 "$nr/berth"
	spec nrvol 'echo "vol=$BERTH_VOLUME_SCRATCH_DIR uid=$(id -u)"; test -d "$BERTH_VOLUME_SCRATCH_DIR"' \
		'resources: {mem: {requests: 64Mi, limits: 1Gi}}
volumes: [{volume_type: empty_dir, name: scratch-dir, mount_path: /mnt/berth-test-nonroot}]'
	spec nruser 'true' 'run_as_user: 4321'
	chmod 644 nrvol.yaml nruser.yaml
	asuser() { setpriv --reuid 1000 --regid 1000 --clear-groups env -u BERTH_CONFIG HOME="$nr" BERTH_HOME="$nr/home" "$nr/berth" "$@"; }
	id=$(cd "$nr" && asuser run "$tmp/nrvol.yaml" --wait 2>"$tmp/out")
	log=$(cd "$nr" && asuser logs "$id" 2>&1)
	enf=$(cd "$nr" && asuser get run "$id" -o json | sed -n 's/^ *"enforcement": "\(.*\)",*$/\1/p')
	if [ "$enf" = rlimits ] && echo "$log" | grep -q "^vol=$nr/home/volumes/$id/scratch-dir uid=1000$" &&
		grep -q 'no writable cgroup' out; then
		ok nonroot-rlimits-and-volume-env
	else
		echo "$log" >>out
		fail nonroot-rlimits-and-volume-env "enforcement $enf"
	fi
	# what isolation the run did not get is said, not left out
	warned=$(python3 - "$nr/home/berth.db" "$id" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print("|".join(m for (m,) in db.execute("SELECT message FROM events WHERE run_id = ? AND kind = 'Warning'",
                                         (sys.argv[2],))))
PY
)
	if echo "$warned" | grep -q 'no pid namespace (berth is not root)' && echo "$warned" | grep -q 'no mount namespace'; then
		ok nonroot-missing-namespaces-reported
	else
		fail nonroot-missing-namespaces-reported "warnings: $warned"
	fi
	(cd "$nr" && asuser run "$tmp/nruser.yaml") >out 2>&1
	if [ $? = 2 ] && grep -q 'run_as_user: 4321 asked, but berth runs as uid 1000, not root' out; then
		ok nonroot-refuses-user-switch
	else fail nonroot-refuses-user-switch "-"; fi
else
	echo "skip local nonroot (needs root to act as uid 1000)"
fi

# ---- berth quota: what a project's running runs use of its quota, and what waits ------------------
qh=$tmp/quota-home
printf 'quotas:\n  qp: {cpu: "1", runs: 1}\n' >quota-policy.yaml
printf 'project: qp\nfunction: {name: q, command: [sh, -c, "exec sleep 3041"]}\nresources: {cpu: 300m}\n' >q.yaml
q1=$(BERTH_HOME=$qh "$berth" run q.yaml --config quota-policy.yaml 2>/dev/null)
q2=$(BERTH_HOME=$qh "$berth" run q.yaml --config quota-policy.yaml 2>/dev/null)
BERTH_HOME=$qh "$berth" quota --project qp --config quota-policy.yaml >quota.out 2>&1
qs=$?
BERTH_HOME=$qh "$berth" quota --project nope --config quota-policy.yaml >none.out 2>&1
BERTH_HOME=$qh "$berth" quota --bogus >bad.out 2>&1
qb=$?
# explain --backend local reads the same use: a third run would wait, a run of
# another project would not; without --backend it says what it did not check
BERTH_HOME=$qh "$berth" explain q.yaml --backend local --config quota-policy.yaml >qx.out 2>&1
qxs=$?
sed 's/^project: qp/project: other/' q.yaml >q-other.yaml
BERTH_HOME=$qh "$berth" explain q-other.yaml --backend local --config quota-policy.yaml >qo.out 2>&1
BERTH_HOME=$qh "$berth" explain q.yaml --config quota-policy.yaml >qn.out 2>&1
# and makes nothing: without a data dir, nothing is held, and none is made
BERTH_HOME=$tmp/no-such-home "$berth" explain q.yaml --backend local --config quota-policy.yaml >qe.out 2>&1
qes=$?
# a command given no policy runs the queue too: the waiting run keeps the quota it was
# accepted under (schema 10), it does not start because this command knows no quota
BERTH_HOME=$qh BERTH_CONFIG= "$berth" get runs >/dev/null 2>&1
q2state=$(BERTH_HOME=$qh BERTH_CONFIG= field "$q2" state)
q2reason=$(BERTH_HOME=$qh BERTH_CONFIG= field "$q2" reason)
BERTH_HOME=$qh "$berth" stop "$q1" "$q2" --grace 0 >/dev/null 2>&1
if [ "$q2state" = Pending ] && [ "$q2reason" = "waiting for quota: runs 1 of 1 in use" ]; then
	ok quota-held-whoever-runs-the-queue
else
	fail quota-held-whoever-runs-the-queue "the waiting run: $q2state ($q2reason)"
fi
if [ $qxs = 0 ] && grep -qx 'status: accepted' qx.out &&
	grep -qx 'quota: would wait for quota: runs 1 of 1 in use' qx.out &&
	! grep -q 'would wait' qo.out && ! grep -q 'would wait' qn.out && [ $qes = 0 ] &&
	grep -qx 'status: accepted' qe.out && [ ! -e "$tmp/no-such-home" ] &&
	grep -q 'explain: the spec and the policy are checked; --backend local' qn.out; then
	ok quota-explain
else
	cat qx.out qo.out qn.out >out
	fail quota-explain "exit $qxs"
fi
if [ $qs = 0 ] && grep -Eq '^cpu +300m +1 +700m$' quota.out && grep -Eq '^runs +1 +1 +0$' quota.out &&
	grep -qx '1 run waiting for quota' quota.out && grep -qx 'project "nope" has no quota' none.out &&
	[ $qb = 2 ] && grep -q 'quota: unknown option "--bogus"' bad.out; then
	ok quota-cli
else
	cat quota.out none.out bad.out >out
	fail quota-cli "exit $qs, bogus $qb"
fi

# ---- the supervisors said nothing (no crash, no sanitizer report) ------------------------------------
if cat "$BERTH_HOME"/runs/*/supervisor.log "$tmp"/nonroot/home/runs/*/supervisor.log 2>/dev/null | grep -q .; then
	cat "$BERTH_HOME"/runs/*/supervisor.log "$tmp"/nonroot/home/runs/*/supervisor.log >out 2>/dev/null
	fail supervisors-quiet "a supervisor wrote to its diagnostics"
else
	ok supervisors-quiet
fi

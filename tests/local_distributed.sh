#!/usr/bin/env bash
# A distributed job on the local backend: its workers as processes of one run,
# each in a cgroup of its own with its own GPUs, a real collective across them,
# their variables, their logs, gang admission, one failing worker failing the
# run, stop. Prints "ok NAME" / "FAIL NAME" / "skip NAME (why)" per check.
#   tests/local_distributed.sh BERTH
set -u
tier=local-distributed
# shellcheck source=tests/local_lib.sh
. "$(dirname "$0")/local_lib.sh"
# the states of a run's workers, comma-separated
states() {
	"$berth" get run "$1" -o json | python3 -c \
		'import json, sys; print(",".join(json.load(sys.stdin).get("worker_states", [])))'
}

cat >policy.yaml <<'EOF'
local:
  capacity: {cpu: "2", mem: 4Gi, gpu: "4"}
  grace_period: 2
EOF
export BERTH_CONFIG=$tmp/policy.yaml

# job NAME WORKERS CMD [EXTRA YAML]: a distributed job of WORKERS workers
job() {
	cat >"$1.yaml" <<EOF
name: $1
function:
  command: [sh, -c, '$3']
action: job
replicas: $2
${4:-}
EOF
}

# ---- a real collective: torch.distributed's all-reduce (gloo) across 2 workers -----------------
if /usr/bin/python3 -c 'import torch.distributed as d; assert d.is_gloo_available()' 2>/dev/null; then
	cat >allreduce.yaml <<'EOF'
name: allreduce
function:
  command:
    - /usr/bin/python3
    - -c
    - |
      import torch, torch.distributed as dist
      dist.init_process_group("gloo")  # env://: WORLD_SIZE, RANK, MASTER_ADDR, MASTER_PORT
      rank = dist.get_rank()
      t = torch.tensor([float(rank + 1)])
      dist.all_reduce(t)  # 1 + 2 on every rank
      print(f"rank {rank} of {dist.get_world_size()}: sum {t.item():g}", flush=True)
      dist.destroy_process_group()
action: job
replicas: 2
resources: {cpu: 500m, mem: 1Gi}
EOF
	id=$("$berth" run allreduce.yaml --wait 2>out)
	"$berth" logs "$id" >all 2>>out
	"$berth" logs "$id" --rank 1 >r1 2>>out
	if [ "$(field "$id" state)" = Succeeded ] && grep -qx '\[rank 0\] rank 0 of 2: sum 3' all &&
		grep -qx '\[rank 1\] rank 1 of 2: sum 3' all && grep -qx 'rank 1 of 2: sum 3' r1 &&
		! grep -q 'rank 0' r1; then
		ok allreduce-gloo-two-workers
	else
		cat all >>out
		fail allreduce-gloo-two-workers "$id: $(field "$id" state) $(field "$id" reason)"
	fi
else
	skip allreduce-gloo-two-workers "no torch.distributed with gloo for /usr/bin/python3: apt install python3-torch"
fi

# ---- what each worker is told, and its own cgroup ------------------------------------------------
show='echo "w=$BERTH_WORKER/$BERTH_WORKERS c=$BERTH_COORDINATOR ws=$WORLD_SIZE r=$RANK nr=$NODE_RANK lr=$LOCAL_RANK m=$MASTER_ADDR:$MASTER_PORT"; grep -o "berth/[^/]*$" /proc/self/cgroup | sort -u'
job env 2 "$show" 'resources: {cpu: 100m, mem: 64Mi}'
id=$("$berth" run env.yaml --wait 2>out)
"$berth" logs "$id" --rank 0 >r0 2>>out
"$berth" logs "$id" --rank 1 >r1 2>>out
port=$(sed -n 's/.*m=127\.0\.0\.1:\([0-9]*\)$/\1/p' r0)
if [ -n "$port" ] && [ "$port" != 29500 ] &&
	grep -qx "w=0/2 c=127.0.0.1:$port ws=2 r=0 nr=0 lr=0 m=127.0.0.1:$port" r0 &&
	grep -qx "w=1/2 c=127.0.0.1:$port ws=2 r=1 nr=1 lr=0 m=127.0.0.1:$port" r1; then
	ok env-launcher-variables
else
	cat r0 r1 >>out
	fail env-launcher-variables "port [$port]"
fi
# each worker in a cgroup of its own (ID.RANK), where there is a cgroup tree
if [ "$(field "$id" enforcement)" = rlimits ]; then
	skip worker-cgroups "no writable cgroup tree here"
elif grep -qx "berth/$id.0" r0 && grep -qx "berth/$id.1" r1 && ! grep -q "berth/$id.1" r0; then
	ok worker-cgroups
else
	cat r0 r1 >>out
	fail worker-cgroups "$(field "$id" enforcement)"
fi
# a spec's envs that name berth's variables: one value each, berth's, whatever reads it
# (getenv in C and Python takes the first of a name given twice, a shell the last)
cat >dup.yaml <<'EOF'
name: dup
function:
  command:
    - /usr/bin/python3
    - -c
    - |
      import os, subprocess
      env = open("/proc/self/environ", "rb").read().split(b"\0")
      twice = sorted({e.split(b"=")[0].decode() for e in env if e and sum(x.split(b"=")[0] == e.split(b"=")[0] for x in env) > 1})
      sh = subprocess.run(["sh", "-c", "echo $RANK $WORLD_SIZE $BERTH_WORKER $CUDA_VISIBLE_DEVICES"], capture_output=True, text=True).stdout.split()
      e = os.environ
      print("py", e["RANK"], e["WORLD_SIZE"], e["BERTH_WORKER"], e["CUDA_VISIBLE_DEVICES"], "sh", *sh, "twice", twice, "mine", e["MINE"])
action: job
replicas: 2
resources: {gpu: 1}
envs: {RANK: "9", WORLD_SIZE: "7", BERTH_WORKER: "5", CUDA_VISIBLE_DEVICES: "3", MINE: kept}
EOF
id=$("$berth" run dup.yaml --wait 2>out)
if "$berth" logs "$id" --rank 1 2>>out | grep -qx "py 1 2 1 1 sh 1 2 1 1 twice \[\] mine kept"; then
	ok spec-envs-do-not-shadow-berths
else
	"$berth" logs "$id" >>out 2>&1
	fail spec-envs-do-not-shadow-berths "$id: $(field "$id" state)"
fi
# the spec's port, when it names one
job port 2 'echo "$MASTER_PORT $BERTH_COORDINATOR"' 'distributed: {port: 29555}'
id=$("$berth" run port.yaml --wait 2>out)
if "$berth" logs "$id" --rank 1 | grep -qx '29555 127.0.0.1:29555'; then
	ok spec-port
else
	fail spec-port "$id"
fi
job trun 2 'echo "$PET_NNODES $PET_NODE_RANK $PET_NPROC_PER_NODE $PET_MASTER_ADDR ${PET_MASTER_PORT:+port}"' \
	'distributed: {launcher: torchrun, procs_per_worker: 2}'
job jax 2 'echo "$JAX_NUM_PROCESSES $JAX_PROCESS_ID ${JAX_COORDINATOR_ADDRESS%:*}"' 'distributed: {launcher: jax}'
t=$("$berth" run trun.yaml --wait 2>out)
j=$("$berth" run jax.yaml --wait 2>>out)
if "$berth" logs "$t" | grep -qx '\[rank 1\] 2 1 2 127.0.0.1 port' &&
	"$berth" logs "$j" | grep -qx '\[rank 1\] 2 1 127.0.0.1'; then
	ok torchrun-and-jax-variables
else
	"$berth" logs "$t" >>out
	"$berth" logs "$j" >>out
	fail torchrun-and-jax-variables "$t $j"
fi

# ---- logs: a rank past the workers is refused -------------------------------------------------------
if ! "$berth" logs "$id" --rank 2 >out 2>&1 && grep -q "run $id has 2 workers: there is no rank 2" out &&
	! "$berth" logs "$id" --rank x >out 2>&1 && grep -q 'rank takes a worker' out &&
	! "$berth" logs "$id" --rank +1 >out 2>&1 && grep -q 'rank takes a worker' out &&
	! "$berth" logs "$id" --rank=' 1' >out 2>&1 && grep -q 'rank takes a worker' out &&
	! "$berth" logs "$id" --rank -0 >out 2>&1 && grep -q 'rank takes a worker' out; then
	ok logs-rank-checked
else
	fail logs-rank-checked "$id"
fi

# ---- GPUs: each worker its own, by index ----------------------------------------------------------
job gpus 2 'echo "cuda=$CUDA_VISIBLE_DEVICES nvidia=$NVIDIA_VISIBLE_DEVICES"' 'resources: {gpu: 2}'
id=$("$berth" run gpus.yaml --wait 2>out)
if [ "$(field "$id" gpu_ids)" = 0,1,2,3 ] && "$berth" logs "$id" --rank 0 | grep -qx 'cuda=0,1 nvidia=0,1' &&
	"$berth" logs "$id" --rank 1 | grep -qx 'cuda=2,3 nvidia=2,3'; then
	ok gpus-split-by-index
else
	"$berth" logs "$id" >>out
	fail gpus-split-by-index "ids $(field "$id" gpu_ids)"
fi

# ---- a failing worker fails the run, names itself, and stops the others ---------------------------
job failing 2 'if [ "$RANK" = 1 ]; then sleep 0.3; exit 3; fi; exec sleep 61'
t0=$(date +%s)
id=$("$berth" run failing.yaml --wait 2>out)
took=$(($(date +%s) - t0))
if [ "$(field "$id" state)" = Failed ] && [ "$(field "$id" reason)" = "worker 1 of 2: exit code 3" ] &&
	[ "$(states "$id")" = Stopped,Failed ] && [ "$took" -lt 20 ] && [ -z "$(run_procs "$id")" ]; then
	ok failing-rank-fails-run
else
	fail failing-rank-fails-run "$id: $(field "$id" state) [$(field "$id" reason)] [$(states "$id")] ${took}s"
fi
# an OOM kill says which worker had it: the worker whose process was killed (its command
# went on) fails, and a worker that fails otherwise is not called OOMKilled for another's
if [ "$(field "$id" enforcement)" = rlimits ]; then
	skip oom-names-its-worker "no writable cgroup tree here"
else
	hog='/usr/bin/python3 -c "b\"x\" * (200 << 20)"'
	job oomchild 2 "if [ \"\$RANK\" = 1 ]; then $hog; fi; exit 0" 'resources: {mem: {limits: 64Mi}}'
	job oomother 2 "if [ \"\$RANK\" = 1 ]; then $hog; exec sleep 60; fi; sleep 1; exit 3" 'resources: {mem: {limits: 64Mi}}'
	a=$("$berth" run oomchild.yaml --wait 2>out)
	b=$("$berth" run oomother.yaml --wait 2>>out)
	if [ "$(field "$a" reason)" = "worker 1 of 2: OOMKilled: the memory limit 64Mi was reached" ] &&
		[ "$(states "$a")" = Succeeded,Failed ] && [ "$(field "$b" reason)" = "worker 0 of 2: exit code 3" ] &&
		[ "$(field "$b" oom_killed)" = false ] && [ "$(states "$b")" = Failed,Stopped ]; then
		ok oom-names-its-worker
	else
		fail oom-names-its-worker "$a [$(field "$a" reason)] [$(states "$a")]; $b [$(field "$b" reason)] [$(states "$b")]"
	fi
fi
# retries start every worker again
job flaky 2 'echo try; [ "$RANK" = 0 ] || exit 1' 'retries: 1'
id=$("$berth" run flaky.yaml --wait 2>out)
if [ "$(field "$id" attempts)" = 2 ] && [ "$("$berth" logs "$id" --rank 0 | grep -c try)" = 2 ]; then
	ok retries-restart-every-worker
else
	fail retries-restart-every-worker "$id: attempts $(field "$id" attempts)"
fi

# ---- disk: resources.disk is each worker's, as the machine's disk it asks for (N x) -------------------
# 3 workers of 10Mi: 6MB of log each fits; 16MB each (two files of 8MB, under the 10Mi a
# file may reach) is over the 30Mi of the three, and evicted
job diskok 3 'head -c 6000000 /dev/zero; sleep 2' 'resources: {disk: 10Mi}'
job diskover 3 'head -c 8000000 /dev/zero >/tmp/a$RANK; head -c 8000000 /dev/zero >/tmp/b$RANK; sleep 5' 'resources: {disk: 10Mi}'
a=$("$berth" run diskok.yaml --wait 2>out)
b=$("$berth" run diskover.yaml --wait 2>>out)
if [ "$(field "$a" state)" = Succeeded ] && [ "$(field "$b" state)" = Failed ] &&
	field "$b" reason | grep -q '^Evicted: ephemeral storage: the run used .*, over its disk limit 30Mi, 3 workers of 10Mi'; then
	ok disk-limit-is-each-workers
else
	fail disk-limit-is-each-workers "$a $(field "$a" state) [$(field "$a" reason)]; $b $(field "$b" state) [$(field "$b" reason)]"
fi

# ---- a worker that ends while the others run: its state at once ------------------------------------
job early 2 '[ "$RANK" = 1 ] && exit 0; exec sleep 3'
id=$("$berth" run early.yaml 2>out)
for _ in $(seq 50); do [ "$(states "$id")" = Running,Succeeded ] && break; sleep 0.1; done
mid=$(states "$id")
"$berth" stop "$id" >/dev/null 2>&1
if [ "$mid" = Running,Succeeded ]; then
	ok worker-state-as-it-ends
else
	fail worker-state-as-it-ends "$id: [$mid]"
fi

# ---- stop stops every worker ------------------------------------------------------------------------
job stopme 2 'echo up; exec sleep 62'
id=$("$berth" run stopme.yaml 2>out)
for _ in $(seq 50); do [ "$(states "$id")" = Running,Running ] && break; sleep 0.1; done
"$berth" stop "$id" >>out 2>&1
if [ "$(field "$id" state)" = Stopped ] && [ "$(states "$id")" = Stopped,Stopped ] && [ -z "$(run_procs "$id")" ]; then
	ok stop-stops-every-worker
else
	fail stop-stops-every-worker "$id: $(field "$id" state) [$(states "$id")]"
fi

# ---- kill -9 of the supervisor, berth not root (no cgroup, no pid namespace): recovery kills -------
# every worker's processes, not worker 0's group alone (each worker's first process dies with
# the supervisor, PR_SET_PDEATHSIG; what it started lives on in a group no one names)
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	nr=$tmp/nr
	mkdir -p "$nr/pids" && cp "$berth" "$nr/berth" && chown -R 1000:1000 "$nr" && chmod 755 "$tmp"
	cat >"$nr/orphans.yaml" <<EOF
name: orphans
function: {command: [sh, -c, 'sleep 300 & echo \$! >$nr/pids/\$RANK; wait']}
action: job
replicas: 3
EOF
	chmod 644 "$nr/orphans.yaml"
	asuser() { setpriv --reuid 1000 --regid 1000 --clear-groups env -u BERTH_CONFIG HOME="$nr" BERTH_HOME="$nr/home" "$@"; }
	id=$(cd "$nr" && asuser "$nr/berth" run "$nr/orphans.yaml" 2>"$tmp/out")
	for _ in $(seq 50); do [ "$(ls "$nr/pids" | wc -l)" = 3 ] && break; sleep 0.1; done
	sup=$(pgrep -o -f "__supervise $id")
	[ -n "$sup" ] && kill -9 "$sup"
	sleep 0.3
	st=$(cd "$nr" && asuser "$nr/berth" get run "$id" -o json | sed -n 's/^ *"state": "\(.*\)",\{0,1\}$/\1/p')
	sleep 0.3
	left=
	for f in "$nr"/pids/*; do
		p=$(cat "$f")
		if [ -n "$(awk '$3 != "Z"' "/proc/$p/stat" 2>/dev/null)" ]; then
			left="$left worker ${f##*/} ($p)"
			kill -9 "$p"
		fi
	done
	if [ -n "$sup" ] && [ "$st" = Failed ] && [ "$(ls "$nr/pids" | wc -l)" = 3 ] && [ -z "$left" ]; then
		ok supervisor-killed-no-cgroup-every-worker-stopped
	else
		fail supervisor-killed-no-cgroup-every-worker-stopped "$id ($sup): $st, left:$left"
	fi
else
	skip supervisor-killed-no-cgroup-every-worker-stopped "needs root (to run berth as another user) and setpriv"
fi

# ---- gang admission: all workers start together, or none does ----------------------------------
cat >blocker.yaml <<'EOF'
name: blocker
function: {command: [sh, -c, 'sleep 2']}
resources: {cpu: "1"}
EOF
job gang 2 'echo started' 'resources: {cpu: "1"}'
b=$("$berth" run blocker.yaml 2>out)
g=$("$berth" run gang.yaml 2>>out)
st=$(field "$g" state) why=$(field "$g" reason)
started=$(ls "$BERTH_HOME/runs/$g/" 2>/dev/null | grep -c '^log')
"$berth" wait "$g" >/dev/null 2>&1 || "$berth" logs -f "$g" >/dev/null 2>&1
for _ in $(seq 100); do [ "$(field "$g" state)" = Succeeded ] && break; sleep 0.1; done
if [ "$st" = Pending ] && [ "$started" = 0 ] && echo "$why" | grep -q 'cpu 2 asked, 1 free of 2' &&
	[ "$(field "$g" state)" = Succeeded ] && [ "$("$berth" logs "$g" | grep -c started)" = 2 ]; then
	ok gang-waits-for-every-worker
else
	fail gang-waits-for-every-worker "$st [$why] logs $started, then $(field "$g" state)"
fi
# one that can never fit is refused, and nothing is recorded
job big 3 'true' 'resources: {cpu: "1"}'
if ! "$berth" run big.yaml >out 2>&1 &&
	grep -q 'resources.cpu.requests: run "big" can never fit here: 3 workers together: 3 CPUs asked, the machine has 2' out &&
	! "$berth" get runs | grep -q ' big-'; then
	ok never-fitting-gang-refused
else
	fail never-fitting-gang-refused "$(cat out)"
fi

# ---- MPI: mpirun on worker 0 starts every worker's ranks through berth's agent ------------------
if command -v mpirun >/dev/null && /usr/bin/python3 -c 'import mpi4py' 2>/dev/null; then
	cat >mpi.yaml <<'YAML'
name: mpi
function:
  command:
    - /usr/bin/python3
    - -c
    - |
      import os, sys
      from mpi4py import MPI
      c = MPI.COMM_WORLD
      total = c.allreduce(c.Get_rank() + 1)  # 1 + 2 + 3 + 4 on every rank
      print(f"rank {c.Get_rank()} of {c.Get_size()}: sum {total} worker {os.environ['BERTH_WORKER']}"
            f" cuda {os.environ['CUDA_VISIBLE_DEVICES']}", flush=True)
      if os.environ.get("FAIL_RANK") == str(c.Get_rank()):
          sys.exit(5)
action: job
replicas: 2
distributed: {launcher: mpi, procs_per_worker: 2}
resources: {cpu: 500m, mem: 1Gi, gpu: 1}
YAML
	id=$("$berth" run mpi.yaml --wait 2>out)
	"$berth" logs "$id" --rank 0 >all 2>>out
	want=$(printf 'rank 0 of 4: sum 10 worker 0 cuda 0\nrank 1 of 4: sum 10 worker 0 cuda 0\nrank 2 of 4: sum 10 worker 1 cuda 1\nrank 3 of 4: sum 10 worker 1 cuda 1')
	if [ "$(field "$id" state)" = Succeeded ] && [ "$(grep '^rank' all | sort)" = "$want" ] &&
		[ "$(states "$id")" = Succeeded,Succeeded ]; then
		ok mpi-allreduce-ranks-in-their-workers
	else
		cat all >>out
		fail mpi-allreduce-ranks-in-their-workers "$id: $(field "$id" state) [$(field "$id" reason)] [$(states "$id")]"
	fi
	# a rank that fails fails the run (mpirun's status, worker 0's), and stops the others
	sed 's/^action: job/action: job\nenvs: {FAIL_RANK: "3"}/' mpi.yaml >mpifail.yaml
	id=$("$berth" run mpifail.yaml --wait 2>out)
	if [ "$(field "$id" state)" = Failed ] && field "$id" reason | grep -q '^worker 0 of 2: exit code' &&
		[ -z "$(run_procs "$id")" ]; then
		ok mpi-failing-rank-fails-run
	else
		"$berth" logs "$id" >>out
		fail mpi-failing-rank-fails-run "$id: $(field "$id" state) [$(field "$id" reason)]"
	fi
	# mpirun that ends well without asking every worker for a daemon (here its --version, as a
	# command starting with - is its option): the run ends as mpirun did, the others stopped
	cat >mpiversion.yaml <<'YAML'
name: mpiversion
function: {command: ["--version"]}
action: job
replicas: 2
distributed: {launcher: mpi}
timeout: 30
YAML
	t0=$(date +%s)
	id=$("$berth" run mpiversion.yaml --wait 2>out)
	took=$(($(date +%s) - t0))
	if [ "$(field "$id" state)" = Succeeded ] && [ "$(states "$id")" = Succeeded,Stopped ] && [ "$took" -lt 30 ]; then
		ok mpi-run-ends-with-mpirun
	else
		fail mpi-run-ends-with-mpirun "$id: $(field "$id" state) [$(field "$id" reason)] [$(states "$id")] ${took}s"
	fi
	# a worker runs what carries its run's token alone: a request with another token,
	# sent to the name the worker listens on (as /proc/net/unix lists it), is refused
	# (an agent with another token would not even find that name: it is keyed by the token)
	(
		export BERTH_RUN_ID=$fakeid BERTH_WORKERS=2 BERTH_MPI_SLOTS=1 BERTH_WORKER=1 TMPDIR=$tmp
		BERTH_MPI_TOKEN=$(printf '%064d' 1) timeout 20 "$berth" __mpi-worker >stub.log 2>&1 &
		for _ in $(seq 50); do grep -q "@berth-mpi/$fakeid/1/" /proc/net/unix && break; sleep 0.1; done
		name=$(grep -o "@berth-mpi/$fakeid/1/[0-9a-f]*" /proc/net/unix | head -1)
		/usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect("\0" + sys.argv[1][1:])
req = b"2" * 64 + b"\0" + ("touch " + sys.argv[2]).encode()
s.sendmsg([req], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, bytes(__import__("array").array("i", [0, 1, 2])))])
print("answer", len(s.recv(16)))' "$name" "$tmp/pwned" >agent.log 2>&1
		echo "name $name" >>agent.log
		kill %1 2>/dev/null
		wait
	)
	if [ ! -e "$tmp/pwned" ] && grep -q 'answer 0' agent.log &&
		grep -q "name @berth-mpi/$fakeid/1/" agent.log && grep -q 'a request was refused' stub.log; then
		ok mpi-agent-without-token-refused
	else
		cat stub.log agent.log >out
		fail mpi-agent-without-token-refused "a command ran, or no refusal said"
	fi
else
	skip mpi "no mpirun or mpi4py for /usr/bin/python3: apt install openmpi-bin python3-mpi4py"
fi

# ---- many workers: the supervisor's fds (a log, a pipe, a cgroup each) past a shell's ulimit -n --------
# 150 workers under a soft limit of 128 open files (the hard one as it is): the supervisor
# raises its own, and each worker gets the caller's back
job many 150 'echo "files $(ulimit -n)"'
hard=$(ulimit -Hn)
if [ "$hard" = unlimited ] || [ "$hard" -ge 600 ]; then
	id=$(ulimit -Sn 128 && "$berth" run many.yaml --wait 2>out)
	if [ "$(field "$id" state)" = Succeeded ] && [ "$("$berth" logs "$id" | grep -c 'files 128$')" = 150 ]; then
		ok many-workers-past-ulimit-n
	else
		fail many-workers-past-ulimit-n "$id: $(field "$id" state) [$(field "$id" reason)]"
	fi
else
	skip many-workers-past-ulimit-n "hard limit of open files $hard"
fi

# ---- a gang's demand past what an int64 holds is refused as never fitting, not wrapped ------------
job huge 1000 'true' 'resources: {mem: 7Ei, cpu: "9000000000000", gpu: 9000000000000}'
if ! "$berth" run huge.yaml >out 2>&1 && grep -q 'resources.cpu.requests: run "huge" can never fit here: 1000 workers together' out &&
	! grep -qi 'runtime error' out; then
	ok huge-gang-refused
else
	fail huge-gang-refused "$(head -3 out)"
fi

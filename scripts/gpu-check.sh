#!/usr/bin/env bash
# scripts/gpu-check.sh [BERTH]: the local backend's GPU paths on a machine with an NVIDIA GPU
# (nvidia-smi, and python3 with PyTorch for the CUDA part): detection, handout by index, a
# run without GPUs that sees none, a second GPU run queued while the first holds the only
# GPU, a run asking more GPUs than the machine has refused, CUDA under the run's isolation
# (pid + mount namespaces, seccomp, per-project uid when root), and the launch time.
# Prints what it sees; docs/local.md ("GPUs") has what it printed on an H100. Data in
# /tmp/bh, /tmp/bh2, /tmp/bh3 (removed first).
set -u
B=$(command -v "${1:-build/berth}") || { echo "no berth at ${1:-build/berth}" >&2; exit 1; }
B=$(cd "$(dirname "$B")" && pwd)/$(basename "$B")
export BERTH_HOME=/tmp/bh
rm -rf "$BERTH_HOME" /tmp/bh2 /tmp/bh3 /tmp/gw
mkdir -p /tmp/gw && cd /tmp/gw || exit 1
echo "== machine"
uname -r; id; nproc
nvidia-smi -L
ls -l /proc/driver/nvidia/gpus/ 2>&1
ls -l /dev/nvidia* 2>&1 | head
stat -fc %T /sys/fs/cgroup; cat /proc/self/cgroup | head -3
which python3; python3 -c 'import torch; print("torch", torch.__version__, torch.cuda.is_available())'
$B version

cat >g1.yaml <<'EOF'
name: gpu-one
function:
  name: g
  command: [sh, -c, 'echo "CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES NVIDIA_VISIBLE_DEVICES=$NVIDIA_VISIBLE_DEVICES ORDER=$CUDA_DEVICE_ORDER uid=$(id -u) HOME=$HOME"; nvidia-smi -L; python3 -c "import torch; print(\"count\", torch.cuda.device_count(), torch.cuda.get_device_name(0)); x=torch.ones(1<<24, device=\"cuda\"); print(\"sum\", float(x.sum())); a=torch.randn(4096,4096,device=\"cuda\",dtype=torch.bfloat16); import time; torch.cuda.synchronize(); t=time.time(); [a@a for _ in range(50)]; torch.cuda.synchronize(); print(\"tflops\", round(50*2*4096**3/(time.time()-t)/1e12))"']
resources: {gpu: 1, cpu: "2", mem: 16Gi}
EOF
cat >g0.yaml <<'EOF'
name: gpu-none
function:
  name: n
  command: [sh, -c, 'echo "CUDA_VISIBLE_DEVICES=[$CUDA_VISIBLE_DEVICES] NVIDIA_VISIBLE_DEVICES=$NVIDIA_VISIBLE_DEVICES"; python3 -c "import torch; print(\"count\", torch.cuda.device_count())"']
resources: {cpu: "1", mem: 8Gi}
EOF
cat >g2.yaml <<'EOF'
name: gpu-two
function: {name: t, command: ["true"]}
resources: {gpu: 2}
EOF
cat >hold.yaml <<'EOF'
name: gpu-hold
function: {name: h, command: [sh, -c, 'echo held $CUDA_VISIBLE_DEVICES; sleep 6']}
resources: {gpu: 1}
EOF

echo "== one GPU, CUDA inside the run's isolation"
t0=$(date +%s%N)
id=$($B run g1.yaml --wait | head -1)
echo "run $id: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
$B logs "$id"
$B get run "$id" -o yaml | grep -E 'state|gpu|exit|reason|enforcement'
echo "== no GPU asked: none seen"
id0=$($B run g0.yaml --wait | head -1)
$B logs "$id0"
$B get run "$id0" -o yaml | grep -E 'state|exit'
echo "== two GPUs on a one-GPU machine: refused"
$B run g2.yaml; echo "exit $?"
echo "== the only GPU held: the next GPU run waits, then gets it"
h=$($B run hold.yaml | head -1)
sleep 0.5
q=$($B run hold.yaml | head -1)
$B get runs
$B get run "$q" -o yaml | grep -E 'state|reason'
for _ in $(seq 40); do
	s=$($B get run "$q" -o yaml | sed -n 's/^state: //p')
	[ "$s" = Succeeded ] && break
	sleep 0.5
done
$B logs "$h"; $B logs "$q"
$B get runs
echo "== GPU dir override (BERTH_GPU_DIR) and capacity from the policy"
mkdir -p /tmp/fakegpus/0 /tmp/fakegpus/1 /tmp/fakegpus/2
BERTH_HOME=/tmp/bh2 BERTH_GPU_DIR=/tmp/fakegpus $B run g2.yaml --wait; echo "exit $? (3 fake GPUs detected)"
echo "== launch: 30 x berth run --wait of /bin/true, and /bin/true"
cat >t.yaml <<'EOF'
function: {name: t, image: x, command: [/bin/true]}
resources: {cpu: 100m, mem: 32Mi}
EOF
export BERTH_HOME=/tmp/bh3
for _ in 1 2 3; do $B run t.yaml --wait >/dev/null 2>&1; done
ts=()
for _ in $(seq 30); do
	a=$(date +%s%N); $B run t.yaml --wait >/dev/null 2>&1; b=$(date +%s%N)
	ts+=($(( (b - a) / 1000 )))
done
tt=()
for _ in $(seq 30); do a=$(date +%s%N); /bin/true; b=$(date +%s%N); tt+=($(( (b - a) / 1000 ))); done
printf '%s\n' "${ts[@]}" | sort -n | awk '{a[NR]=$1} END {print "berth run --wait median", a[int((NR+1)/2)], "us"}'
printf '%s\n' "${tt[@]}" | sort -n | awk '{a[NR]=$1} END {print "/bin/true median", a[int((NR+1)/2)], "us"}'
$B get runs -o json | grep -c '"Succeeded"'

#!/usr/bin/env bash
# bench/kube.sh - the time to create a run's objects on a real control plane
# (../shared/k8s, or $BERTH_K8S_FIXTURE: kube-apiserver 1.26 and etcd on loopback):
#   1. kubectl create -f of the objects berth renders for the spec (a new process each)
#   2. berth run --backend kubernetes of the spec (a new process, a new TLS connection)
#   3. POST /api/v1/runs to berth serve --backend kubernetes (one server, its connection to
#      the API server kept alive between creates), with curl, one request after the other
# Each BENCH_KUBE_RUNS times (30), sequentially; the median and the 90th percentile of
# each, and the ratio of kubectl's median to the server's. The spec is a Job with no
# secrets or volumes (one object). Without the fixture, says so and exits 0.
#   bench/kube.sh            (OUT=FILE: the Markdown, default build/bench/kube.md)
set -eu -o pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
RUNS=${BENCH_KUBE_RUNS:-30}
OUT=${OUT:-build/bench/kube.md}
fixture=${BERTH_K8S_FIXTURE:-$root/../shared/k8s}
if [ ! -x "$fixture/cluster" ]; then
	echo "kube.sh: no real control plane ($fixture/cluster): skipped"
	exit 0
fi
for c in kubectl curl python3; do
	command -v "$c" >/dev/null || { echo "kube.sh: $c is missing: skipped"; exit 0; }
done
make -j2 >/dev/null
berth=$root/build/berth
tmp=$(mktemp -d)
spid=
cleanup() {
	[ -z "$spid" ] || kill "$spid" 2>/dev/null || true
	"$fixture/cluster" stop "$tmp/cluster" --wipe >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT
cd "$tmp"
KUBECONFIG=$("$fixture/cluster" start "$tmp/cluster" 2>start.log)
export KUBECONFIG BERTH_HOME=$tmp/home
unset BERTH_CONFIG
cat >job.yaml <<'EOF'
name: bench
function:
  image: python:3.11
  command: ["python", "-c", "print(1)"]
resources: {cpu: 100m, mem: 64Mi}
EOF
now_us() { date +%s%6N; }
stats() { # reads microseconds, one a line: "median p90" in ms
	sort -n | awk '{a[NR]=$1} END {m=a[int((NR+1)/2)]; p=a[int(NR*0.9+0.5)]; printf "%.1f %.1f\n", m/1000, p/1000}'
}
# 1. kubectl create -f
: >kubectl.us
for i in $(seq "$RUNS"); do
	"$berth" render job.yaml --run-id "k$i" >k.yaml
	t0=$(now_us)
	kubectl create -f k.yaml >/dev/null
	echo $(($(now_us) - t0)) >>kubectl.us
done
# 2. berth run --backend kubernetes (the CLI)
: >cli.us
for i in $(seq "$RUNS"); do
	t0=$(now_us)
	"$berth" run job.yaml --backend kubernetes --run-id "c$i" >/dev/null 2>&1
	echo $(($(now_us) - t0)) >>cli.us
done
# 3. berth serve --backend kubernetes, one request after the other
"$berth" serve --backend kubernetes --listen 127.0.0.1:0 --insecure-local 2>serve.log &
spid=$!
for _ in $(seq 100); do grep -q 'listening on' serve.log && break; sleep 0.1; done
port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' serve.log | head -1)
: >serve.us
for i in $(seq "$RUNS"); do
	t=$(curl -s -o /dev/null -w '%{http_code} %{time_total}\n' -X POST --data-binary @job.yaml \
		-H 'Content-Type: application/yaml' "http://127.0.0.1:$port/api/v1/runs")
	case $t in 201\ *) ;; *) echo "kube.sh: the server answered $t" >&2; exit 1 ;; esac
	python3 -c "print(int(float('${t#* }') * 1e6))" >>serve.us
done
read -r km kp < <(stats <kubectl.us)
read -r cm cp < <(stats <cli.us)
read -r sm sp < <(stats <serve.us)
ratio=$(python3 -c "print(round($km / $sm, 1))")
mkdir -p "$root/$(dirname "$OUT")"
{
	echo "## Creating a run on a real control plane (kube-apiserver 1.26, loopback; $RUNS each)"
	echo
	echo "| how | median ms | p90 ms |"
	echo "|---|---|---|"
	echo "| kubectl create -f (the rendered Job) | $km | $kp |"
	echo "| berth run --backend kubernetes (a new process, a new TLS connection) | $cm | $cp |"
	echo "| POST /api/v1/runs to berth serve --backend kubernetes (connection kept alive) | $sm | $sp |"
	echo
	echo "berth serve creates ${ratio}x faster than kubectl create (medians)."
} | tee "$root/$OUT"

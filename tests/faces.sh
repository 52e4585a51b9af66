#!/usr/bin/env bash
# One run, every face, the same numbers (issue 23, finding 4): a run with odd
# values (cpu 150m, mem 1Gi whose limit 1127Mi comes from mem_limit_ratio 1.1,
# a GPU) on the local backend, read back through `berth explain -o json`,
# `berth get run -o json`, the `berth get runs` table, the API's
# GET /api/v1/runs/{id} (berth serve on loopback), the CLI as the server's
# client, the Python SDK's Run, and the cgroup's memory limit when the run has
# one: each says cpu 150m, mem 1Gi, limit 1127Mi, gpu 1, spelled so.
# Prints "ok NAME" / "FAIL NAME" / "skip NAME (why)" per check.
#   tests/faces.sh BERTH
set -u
berth=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
tier=faces
. "$(cd "$(dirname "$0")" && pwd)/serve_lib.sh"
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
export BERTH_HOME=$tmp/home
unset BERTH_CONFIG BERTH_SERVER BERTH_TOKEN BERTH_GPU_DIR
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
cd "$tmp" || exit 1

cat >policy.yaml <<'EOF'
defaults:
  mem_limit_ratio: 1.1
local:
  capacity: {cpu: "2", mem: 2Gi, gpu: "1"}
  grace_period: 1
EOF
export BERTH_CONFIG=$tmp/policy.yaml
# the run prints its cgroup's memory limit in bytes (v1 or v2), when it has one
cat >odd.yaml <<'EOF'
project: demo
function:
  name: odd
  image: busybox
  command:
    - sh
    - -c
    - |
      cg=$(sed -n 's/^[0-9]*:memory:\(.*\)/\1/p' /proc/self/cgroup)
      if [ -n "$cg" ] && [ -r /sys/fs/cgroup/memory$cg/memory.limit_in_bytes ]; then
        echo "limit $(cat /sys/fs/cgroup/memory$cg/memory.limit_in_bytes)"
      else
        cg=$(sed -n 's/^0::\(.*\)/\1/p' /proc/self/cgroup)
        [ -r /sys/fs/cgroup$cg/memory.max ] && echo "limit $(cat /sys/fs/cgroup$cg/memory.max)"
      fi
      exit 0
resources:
  cpu: 150m
  mem: 1Gi
  gpu: 1
EOF

want_cpu=150m want_mem=1Gi want_lim=1127Mi want_gpu=1 lim_bytes=$((1127 * 1024 * 1024))

# same NAME GOT: GOT must be "cpu mem limit gpu" as wanted
same() {
	local want="$want_cpu $want_mem $want_lim $want_gpu"
	if [ "$2" = "$want" ]; then ok "$1"; else fail "$1" "got '$2', want '$want'"; fi
}
# a record (get run -o json, the API, the client) as "cpu mem limit gpu"
record() {
	json '" ".join(str(x) for x in (d["resources"]["requests"]["cpu"], d["resources"]["requests"]["mem"], d["resources"].get("limits", {}).get("mem"), d["resources"]["requests"]["gpu"]))'
}

# ---- explain, before anything runs ------------------------------------------------------
"$berth" explain odd.yaml -o json >explain.json 2>out
# an effective spec (explain -o json, the API's /spec) as "cpu mem limit gpu"
effective() {
	json '" ".join(next(f["value"] for f in d["fields"] if f["path"] == p) for p in ("resources.cpu.requests", "resources.mem.requests", "resources.mem.limits", "resources.gpu.limits"))'
}
same explain "$(effective <explain.json 2>&1)"
# the ratio is a number, printed as written, never "1100m"
note=$(json 'next(f.get("note", "") for f in d["fields"] if f["path"] == "resources.mem.limits")' <explain.json 2>&1)
case "$note" in
*"mem_limit_ratio 1.1,"*) ok explain-ratio ;;
*) fail explain-ratio "$note" ;;
esac

# ---- the run on the local backend, and its record --------------------------------------
id=$("$berth" run odd.yaml --wait 2>out)
if [ -z "$id" ] || [ "$(json 'd["state"]' < <("$berth" get run "$id" -o json))" != Succeeded ]; then
	fail run "no run succeeded: $id"
	"$berth" get run "$id" -o yaml 2>&1 | sed 's/^/    /' | head -30
	exit 0
fi
rm -f out
"$berth" get run "$id" -o json >rec.json
same get-run-json "$(record <rec.json 2>&1)"

# the table: CPU, MEM, GPU columns
row=$("$berth" get runs | awk -v id="$id" '$1 == id {print $5, $6, $7}')
if [ "$row" = "$want_cpu $want_mem $want_gpu" ]; then ok get-runs-table; else fail get-runs-table "got '$row'"; fi

# the cgroup: the limit in bytes is 1127Mi exactly
enf=$(json 'd.get("enforcement", "")' <rec.json)
cg=$("$berth" logs "$id" 2>/dev/null | sed -n 's/^limit \([0-9]*\)$/\1/p')
case "$enf" in
cgroup*)
	if [ "$cg" = "$lim_bytes" ]; then ok cgroup-limit; else fail cgroup-limit "cgroup says '$cg' bytes, want $lim_bytes ($enf)"; fi
	;;
*) echo "skip $tier cgroup-limit (enforcement '$enf': no cgroup on this host)" ;;
esac

# ---- the server, the CLI as its client, the SDK ---------------------------------------
if ! start --insecure-local; then
	fail serve "berth serve did not start"
	sed 's/^/    /' "$slog" | head
	exit 0
fi
st=$(call GET "/api/v1/runs/$id")
if [ "$st" = 200 ]; then same api-get-run "$(record <"$tmp/body" 2>&1)"; else fail api-get-run "HTTP $st"; fi
# the run's effective spec, as the UI shows it
st=$(call GET "/api/v1/runs/$id/spec")
if [ "$st" = 200 ]; then same api-run-spec "$(effective <"$tmp/body" 2>&1)"; else fail api-run-spec "HTTP $st"; fi
st=$(call GET "/api/v1/projects/demo/runs")
same api-list-runs "$(json 'next(r for r in d["items"] if r["id"] == "'"$id"'")' <"$tmp/body" 2>/dev/null |
	python3 -c 'import ast,json,sys; print(json.dumps(ast.literal_eval(sys.stdin.read())))' | record 2>&1)"

# the CLI reads the server's record and writes it again: the same bytes, the same spelling
BERTH_SERVER=$url "$berth" get run "$id" -o json >client.json 2>out
same client-get-run "$(record <client.json 2>&1)"
row=$(BERTH_SERVER=$url "$berth" get runs 2>/dev/null | awk -v id="$id" '$1 == id {print $5, $6, $7}')
if [ "$row" = "$want_cpu $want_mem $want_gpu" ]; then ok client-get-runs-table; else fail client-get-runs-table "got '$row'"; fi

got=$(PYTHONPATH=$root/sdk/python python3 - "$url" "$id" <<'EOF' 2>&1
import sys, berth
c = berth.connect(sys.argv[1], token=None)
r = c.get_run(sys.argv[2])
res = r.resources
print(res["requests"]["cpu"], res["requests"]["mem"], res.get("limits", {}).get("mem"), res["requests"]["gpu"])
EOF
)
same sdk-run "$got"
stop_server

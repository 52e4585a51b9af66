#!/usr/bin/env bash
# bench/render.sh - how fast `berth render` turns run specs into Kubernetes objects,
# against kubectl and against the Kubernetes Python client.
#
#   bench/render.sh                    (needs scripts/deps-bench.sh; kubectl optional)
#
# Builds build/berth (make -j2, -O2; nothing else is built), then:
#   1. one spec, whole process: `berth render examples/train.yaml` against
#      `kubectl create job --dry-run=client -o yaml` of the same Job (name, image,
#      command), and against that piped into `kubectl set resources --local`
#      (bench/kubectl_job.sh) for the same requests and limits. hyperfine
#      (--warmup 3 --runs 30), else a loop on bash's clock.
#   2. throughput: bench/gen_specs.py writes N (10,000) varied specs, as YAML and as
#      JSON (the same specs, one JSON value a line: --json); each must render, the
#      JSON to the same objects (else exit 1); then `taskset -c 0 berth render -` of all of them, 5 times for each
#      format (berth reads at most 4 MiB per input, so the specs are cut into files
#      under 4,000,000 bytes, rendered one process after the other, all inside each
#      timed run); bench/yaml_floor.c (built here: libfyaml's events and each scalar's
#      text for the same files, nothing else: the most any reader on libfyaml can
#      do), 5 times for each format, its run alternating with berth's so that both
#      see the same machine; callgrind's instruction count per spec ((Ir of 1,000
#      specs - Ir of 1) / 999), by phase (bench/render_phases.py; with
#      BENCH_BERTH_BEFORE=PATH, another berth binary's too, side by side); and
#      bench/k8s_models.py (Debian's /usr/bin/python3 with python3-kubernetes)
#      building and serialising the same objects from the same files (YAML, and the
#      JSON files read as JSON lines), 3 times for each format, also on core 0, each
#      run followed by one of berth's on the same files.
# Prints a table | benchmark | berth | alternative | ratio (median, min–max) | and
# writes it with the machine, the date and the exact commands as Markdown to $OUT
# (build/bench/render.md) for docs/performance.md. The callgrind profiles and their
# callgrind_annotate listings are kept next to it (render-callgrind.*).
#
# A ratio is alternative / berth (time) or berth / alternative (rate), of the medians;
# min–max pairs the least and the most favourable runs (slowest berth run against the
# fastest alternative run, and the other way round). Against Python, each Python run
# and the berth run right after it make a pair (one state of the shared machine): the
# ratio is the median of the pairs' ratios, and min–max their least and most.
#
# Knobs (environment): BENCH_SPECS (10000), BENCH_SEED (1), BENCH_RUNS (30),
# BENCH_WARMUP (3), BENCH_THROUGHPUT_RUNS (5), BENCH_PY_RUNS (3),
# BENCH_CALLGRIND_SPECS (1000; 0 skips callgrind), BENCH_BERTH_BEFORE (a berth binary
# whose instructions per phase are shown beside build/berth's), OUT (build/bench/render.md),
# PYTHON (python3: runs the standard-library helpers).
# Exit status: 0, or 1 when berth failed to render a generated spec or a step failed.
# Missing kubectl, hyperfine, valgrind or python3-kubernetes skip their part (said so).
set -eu -o pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."

N=${BENCH_SPECS:-10000}
SEED=${BENCH_SEED:-1}
RUNS=${BENCH_RUNS:-30}
WARMUP=${BENCH_WARMUP:-3}
TP_RUNS=${BENCH_THROUGHPUT_RUNS:-5}
PY_RUNS=${BENCH_PY_RUNS:-3}
CG_N=${BENCH_CALLGRIND_SPECS:-1000}
OUT=${OUT:-build/bench/render.md}
PY=${PYTHON:-python3}
K8S_PY=/usr/bin/python3 # Debian's python: the one python3-kubernetes is installed for
CONFIG=examples/policy/config.yaml
SPLIT_BYTES=4000000 # berth reads at most 4 MiB (4,194,304 bytes) per input
SPEC=examples/train.yaml

die() {
	echo "render.sh: $*" >&2
	exit 1
}

for c in make "$PY" nproc; do
	command -v "$c" >/dev/null || die "$c is missing (scripts/deps.sh)"
done
make -j2 >/dev/null
berth=$PWD/build/berth
keep=$(dirname "$OUT") # the Markdown and the callgrind profiles stay here
mkdir -p "$keep"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/berth-render-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
export KUBECONFIG=$tmp/no-kubeconfig # kubectl only works client-side here

hyperfine=$(command -v hyperfine || true)
kubectl=$(command -v kubectl || true)
valgrind=$(command -v valgrind || true)
taskset=(taskset -c 0)
command -v taskset >/dev/null || taskset=()
secrets=$("$PY" bench/gen_specs.py --secrets-list)
load=$(cut -d' ' -f1-3 /proc/loadavg)

rows=()     # "benchmark<TAB>berth<TAB>alternative<TAB>ratio" of the table
tab=$'\t'
notes=()    # lines under the table
commands=() # the exact commands, for the Markdown

# ---- helpers ---------------------------------------------------------------

# bench NAME RUNS WARMUP CMD [ARG...]: runs CMD (no shell, stdout to /dev/null) WARMUP
# times, then RUNS timed times, and writes each run's seconds to $tmp/NAME.times, and
# the CPU time of the runs (user + system, the command and its children: the mean of
# the runs, so one run's own with RUNS 1) to $tmp/NAME.cpu.
# With hyperfine (-N: no shell to subtract), its JSON goes to $tmp/NAME.json;
# without, bash's $EPOCHREALTIME (microseconds, no fork) around each run, and bash's
# time for the CPU.
bench() {
	local name=$1 runs=$2 warmup=$3 i t0 t1
	shift 3
	if [ -n "$hyperfine" ]; then
		"$hyperfine" -N --style basic --warmup "$warmup" --runs "$runs" \
			--export-json "$tmp/$name.json" --command-name "$name" -- "$(printf '%q ' "$@")" >&2
		"$PY" -c 'import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
open(sys.argv[2], "w").write("%r\n" % (r["user"] + r["system"]))
for t in r["times"]: print(t)' \
			"$tmp/$name.json" "$tmp/$name.cpu" >"$tmp/$name.times"
	else
		for ((i = 0; i < warmup; i++)); do "$@" >/dev/null; done
		: >"$tmp/$name.times"
		: >"$tmp/$name.cpu.runs"
		for ((i = 0; i < runs; i++)); do
			t0=${EPOCHREALTIME/./}
			{ TIMEFORMAT='%3U %3S' && time "$@" >/dev/null 2>&1; } 2>>"$tmp/$name.cpu.runs"
			t1=${EPOCHREALTIME/./}
			echo "$((t1 - t0))e-6" >>"$tmp/$name.times"
		done
		awk '{ s += $1 + $2 } END { print s / NR }' "$tmp/$name.cpu.runs" >"$tmp/$name.cpu"
	fi
}

# stats FILE: "median min max" of the numbers in FILE, one a line
stats() {
	"$PY" -c 'import statistics, sys
xs = sorted(float(l) for l in open(sys.argv[1]) if l.strip())
print(statistics.median(xs), xs[0], xs[-1])' "$1"
}

# calc FORMAT EXPR: awk's printf of an arithmetic expression
calc() {
	awk "BEGIN { printf \"$1\", $2 }"
}

# group INTEGER: 1234567 -> 1,234,567
group() {
	sed -e ':a' -e 's/\([0-9]\)\([0-9]\{3\}\)\($\|,\)/\1,\2\3/' -e 'ta' <<<"$1"
}

# time_cell MED MIN MAX (seconds): "7.12 ms (6.20–9.40)"
time_cell() {
	echo "$(calc '%.2f' "$1 * 1000") ms ($(calc '%.2f' "$2 * 1000")–$(calc '%.2f' "$3 * 1000"))"
}

# rate_cell MED MIN MAX (specs/s): "98,000 specs/s (95,000–99,000)"
rate_cell() {
	echo "$(group "$(calc '%d' "$1")") specs/s ($(group "$(calc '%d' "$2")")–$(group "$(calc '%d' "$3")"))"
}

# ratio_cell MED LOW HIGH: "12.3× (9.8–14.1×)"
ratio_cell() {
	echo "$(calc '%.1f' "$1")× ($(calc '%.1f' "$2")–$(calc '%.1f' "$3")×)"
}

# met VALUE TARGET: "met" or "NOT met"
met() {
	if awk "BEGIN { exit !($1 >= $2) }"; then echo met; else echo "NOT met"; fi
}

# ---- 1. one spec, whole process --------------------------------------------
# examples/train.yaml: job train-resnet, image python:3.11, command python train.py,
# args --epochs 5; after the policy (profile 1xa100 wins): requests cpu 8, memory 64Gi,
# ephemeral-storage 10Gi; limits memory 64Gi, nvidia.com/gpu 1.
berth_one=("$berth" render "$SPEC" --config "$CONFIG" --run-id r1 --secrets my-secret-key)
job=(train-resnet-r1 --image=python:3.11 --dry-run=client -o yaml -- python train.py --epochs 5)
kjob=(bench/kubectl_job.sh train-resnet-r1 python:3.11 "cpu=8,memory=64Gi,ephemeral-storage=10Gi"
	"memory=64Gi,nvidia.com/gpu=1" -- python train.py --epochs 5)
"${berth_one[@]}" >"$tmp/one.yaml" || die "berth render $SPEC failed"
echo "== 1. one spec, whole process ($RUNS runs)" >&2
bench one-berth "$RUNS" "$WARMUP" "${berth_one[@]}"
read -r b_med b_min b_max < <(stats "$tmp/one-berth.times")
commands+=("build/berth render $SPEC --config $CONFIG --run-id r1 --secrets my-secret-key")
if [ -n "$kubectl" ]; then
	kv=$("$kubectl" version --client -o json 2>/dev/null |
		"$PY" -c 'import json, sys; print(json.load(sys.stdin)["clientVersion"]["gitVersion"])' ||
		echo unknown)
	for alt in kubectl-job kubectl-job-resources; do
		if [ $alt = kubectl-job ]; then
			cmd=("$kubectl" create job "${job[@]}")
			label="kubectl create job --dry-run=client"
			commands+=("kubectl create job ${job[*]}")
		else
			cmd=("${kjob[@]}")
			label="kubectl create job \\| kubectl set resources --local"
			commands+=("${kjob[*]}   # kubectl create job ... | kubectl set resources --local -f - --requests=... --limits=... -o yaml")
		fi
		"${cmd[@]}" >"$tmp/$alt.yaml" || die "${cmd[*]} failed"
		bench "$alt" "$RUNS" "$WARMUP" "${cmd[@]}"
		read -r k_med k_min k_max < <(stats "$tmp/$alt.times")
		ratio=$(calc '%.4f' "$k_med / $b_med")
		rows+=("render one spec, whole process ($RUNS runs each)$tab$(time_cell "$b_med" "$b_min" "$b_max")$tab$label: $(time_cell "$k_med" "$k_min" "$k_max")$tab$(ratio_cell "$ratio" "$k_min / $b_max" "$k_max / $b_min")")
		if [ $alt = kubectl-job ]; then one_ratio=$ratio; fi
	done
	notes+=("Target berth ≥ 20× faster than kubectl create job (median): $(met "$one_ratio" 20) ($(calc '%.1f' "$one_ratio")×).")
	notes+=("Objects: berth prints $(grep -c '^kind:' "$tmp/one.yaml") ($(grep '^kind:' "$tmp/one.yaml" | cut -d' ' -f2 | paste -sd, - | sed 's/,/, /g')) in $(wc -c <"$tmp/one.yaml") bytes; kubectl $kv prints 1 Job of $(wc -c <"$tmp/kubectl-job.yaml") bytes (name, image, command; with set resources: $(wc -c <"$tmp/kubectl-job-resources.yaml") bytes).")
else
	echo "kubectl not found: skipped" >&2
	rows+=("render one spec, whole process ($RUNS runs each)$tab$(time_cell "$b_med" "$b_min" "$b_max")${tab}kubectl not found: skipped$tab–")
	kv="not found"
fi

# ---- 2. throughput -----------------------------------------------------------
echo "== 2. throughput: $N specs (seed $SEED), YAML and JSON" >&2
mapfile -t chunks < <("$PY" bench/gen_specs.py "$N" "$SEED" --split "$SPLIT_BYTES" --prefix "$tmp/specs")
mapfile -t jchunks < <("$PY" bench/gen_specs.py "$N" "$SEED" --split "$SPLIT_BYTES" --prefix "$tmp/specs" --json)
[ ${#chunks[@]} -gt 0 ] && [ ${#jchunks[@]} -gt 0 ] || die "gen_specs.py wrote nothing"
spec_bytes=$(cat "${chunks[@]}" | wc -c)
json_bytes=$(cat "${jchunks[@]}" | wc -c)
render=("$berth" render - --config "$CONFIG" --secrets "$secrets" --run-id b1)

# Every spec must render: each file once, untimed, with its objects kept for the counts;
# the JSON files must give the same objects.
: >"$tmp/kinds.berth"
out_bytes=0
for f in "${chunks[@]}"; do
	if ! "${render[@]}" <"$f" >"$tmp/out.yaml" 2>"$tmp/err.txt"; then
		head -20 "$tmp/err.txt" >&2
		die "berth failed to render the generated specs in $(basename "$f") (seed $SEED)"
	fi
	grep '^kind:' "$tmp/out.yaml" >>"$tmp/kinds.berth" || true
	out_bytes=$((out_bytes + $(wc -c <"$tmp/out.yaml")))
done
runs_rendered=$(grep -cE '^kind: (Job|Deployment|CronJob)$' "$tmp/kinds.berth" || true)
[ "$runs_rendered" -eq "$N" ] || die "berth rendered $runs_rendered runs of $N specs"
berth_kinds=$(cut -d' ' -f2 "$tmp/kinds.berth" | sort | uniq -c | awk '{ printf "%s%s %s", sep, $2, $1; sep = ", " }')
: >"$tmp/kinds.json"
for f in "${jchunks[@]}"; do
	"${render[@]}" <"$f" >"$tmp/out.yaml" 2>/dev/null || die "berth failed to render $(basename "$f")"
	grep '^kind:' "$tmp/out.yaml" >>"$tmp/kinds.json" || true
done
# the files are cut elsewhere, so the run ids (b1, b1-2, ...) differ: the objects' kinds
# are compared (bench/render_diff.sh compares bytes)
cmp -s "$tmp/kinds.berth" "$tmp/kinds.json" || die "the JSON specs gave other objects than the YAML specs"

# shq WORD...: each word in single quotes, for sh
shq() {
	local w q="'\\''"
	for w in "$@"; do printf "'%s' " "${w//\'/$q}"; done
}

# the timed commands: every file, one berth process each, one after the other, run
# by sh (dash where it is /bin/sh), whose start (about 1 ms) is less of berth's time
# than bash's (2 ms more for a script of three commands, here): the floor runs with
# no shell at all
for fmt in yaml json; do
	{
		echo 'set -eu'
		if [ $fmt = yaml ]; then files=("${chunks[@]}"); else files=("${jchunks[@]}"); fi
		for f in "${files[@]}"; do
			shq "${render[@]}"
			printf '< '
			shq "$f"
			echo
		done
	} >"$tmp/render-$fmt.sh"
done

# the floor: libfyaml alone on the same files (events and each scalar's text, nothing
# else), the most any reader of these specs built on libfyaml could reach
floor_bin=$keep/yaml_floor
cc -O2 -o "$floor_bin" bench/yaml_floor.c $(pkg-config --cflags --libs libfyaml) ||
	die "cannot build bench/yaml_floor.c"
for fmt in yaml json; do
	if [ $fmt = yaml ]; then files=("${chunks[@]}"); else files=("${jchunks[@]}"); fi
	read -r floor_docs _ _ < <("$floor_bin" "${files[@]}") || die "yaml_floor failed"
	[ "$floor_docs" -eq "$N" ] || die "yaml_floor read $floor_docs documents of $N ($fmt)"
done

# berth and the floor in turns, one run of each at a time: the machine's load, which
# changes (it is shared), weighs on both alike
for fmt in yaml json; do
	if [ $fmt = yaml ]; then files=("${chunks[@]}"); else files=("${jchunks[@]}"); fi
	: >"$tmp/throughput-$fmt.all"
	: >"$tmp/floor-$fmt.all"
	: >"$tmp/throughput-$fmt.cpu.all"
	: >"$tmp/floor-$fmt.cpu.all"
	bench throughput-$fmt 1 1 "${taskset[@]}" sh "$tmp/render-$fmt.sh" # a warm-up
	for ((i = 0; i < TP_RUNS; i++)); do
		bench throughput-$fmt 1 0 "${taskset[@]}" sh "$tmp/render-$fmt.sh"
		cat "$tmp/throughput-$fmt.times" >>"$tmp/throughput-$fmt.all"
		cat "$tmp/throughput-$fmt.cpu" >>"$tmp/throughput-$fmt.cpu.all"
		bench floor-$fmt 1 0 "${taskset[@]}" "$floor_bin" "${files[@]}"
		cat "$tmp/floor-$fmt.times" >>"$tmp/floor-$fmt.all"
		cat "$tmp/floor-$fmt.cpu" >>"$tmp/floor-$fmt.cpu.all"
	done
done
read -r t_med t_min t_max < <(stats "$tmp/throughput-yaml.all")
read -r j_med j_min j_max < <(stats "$tmp/throughput-json.all")
read -r f_med f_min f_max < <(stats "$tmp/floor-yaml.all")
read -r fj_med fj_min fj_max < <(stats "$tmp/floor-json.all")
# specs/s: the median time gives the median rate; the slowest run gives the lowest
r_med=$(calc '%.1f' "$N / $t_med")
r_min=$(calc '%.1f' "$N / $t_max")
r_max=$(calc '%.1f' "$N / $t_min")
rj_med=$(calc '%.1f' "$N / $j_med")
fr_med=$(calc '%.1f' "$N / $f_med")
frj_med=$(calc '%.1f' "$N / $fj_med")
floor_pct=$(calc '%.1f' "100 * $r_med / $fr_med")
floor_pct_json=$(calc '%.1f' "100 * $rj_med / $frj_med")
# the same by CPU time (user + system of each run, medians): on a shared machine a run
# waits for the core as long as the others' work takes, and the wall clock counts it
median() { stats "$1" | cut -d' ' -f1; }
tc_med=$(median "$tmp/throughput-yaml.cpu.all")
jc_med=$(median "$tmp/throughput-json.cpu.all")
fc_med=$(median "$tmp/floor-yaml.cpu.all")
fjc_med=$(median "$tmp/floor-json.cpu.all")
cpu_pct=$(calc '%.1f' "100 * $fc_med / $tc_med")
cpu_pct_json=$(calc '%.1f' "100 * $fjc_med / $jc_med")
commands+=("$PY bench/gen_specs.py $N $SEED --split $SPLIT_BYTES --prefix \$TMP/specs   # ${#chunks[@]} file(s), $(group "$spec_bytes") bytes")
commands+=("$PY bench/gen_specs.py $N $SEED --split $SPLIT_BYTES --prefix \$TMP/specs --json   # ${#jchunks[@]} file(s), $(group "$json_bytes") bytes")
commands+=("${taskset[*]} sh \$TMP/render-yaml.sh > /dev/null   # one line a file: build/berth render - --config $CONFIG --secrets $secrets --run-id b1 < \$TMP/specs-00K.yaml (.json: the same)")
commands+=("cc -O2 -o $keep/yaml_floor bench/yaml_floor.c \$(pkg-config --cflags --libs libfyaml)")
commands+=("${taskset[*]} $keep/yaml_floor \$TMP/specs-*.yaml   # the same files (.json: the same), $TP_RUNS runs, each after one of berth's")
notes+=("Throughput: $(group "$N") specs ($(group "$spec_bytes") bytes of YAML, cut into ${#chunks[@]} file(s) of at most $(group "$SPLIT_BYTES") bytes as berth reads at most 4 MiB per input: one process per file; as JSON, one value a line: $(group "$json_bytes") bytes in ${#jchunks[@]} file(s)) give $(group "$out_bytes") bytes of objects (the same objects from the JSON): $berth_kinds.")
notes+=("Target berth ≥ 100,000 specs/s on one core (median): $(met "$r_med" 100000) ($(group "$(calc '%d' "$r_med")") specs/s, $(calc '%.2f' "1000000 / $r_med") µs per spec).")
notes+=("Floor: libfyaml alone, parsing the same files into events and reading each scalar's text (bench/yaml_floor.c; no tree, no rules, no output), reaches $(group "$(calc '%d' "$fr_med")") specs/s for YAML ($(calc '%.2f' "1000000 / $fr_med") µs per spec) and $(group "$(calc '%d' "$frj_med")") for JSON; no reader built on libfyaml can pass it.")
notes+=("Target berth ≥ 60 % of the floor (each format against its own floor), by CPU time (user + system of each run, the medians: berth $(calc '%.1f' "$tc_med * 1000") ms for YAML and $(calc '%.1f' "$jc_med * 1000") ms for JSON, the floor $(calc '%.1f' "$fc_med * 1000") and $(calc '%.1f' "$fjc_med * 1000") ms; the machine's other work does not lengthen it): YAML $(met "$cpu_pct" 60) ($cpu_pct %), JSON $(met "$cpu_pct_json" 60) ($cpu_pct_json %). By the wall clock's rates (the rows above; load average $load before the run): YAML $floor_pct %, JSON $floor_pct_json %.")

# the same specs through the Kubernetes Python client, from the same files (YAML, then
# the JSON lines, which it reads with its json module): each Python run is followed by
# one of berth's on the same files, and the ratio is each pair's (Python's CPU seconds /
# berth's), their median reported: a pair sees one state of the shared machine, where
# berth's median of its own runs against Python's, taken minutes apart, did not; and
# CPU time is what the machine's other work does not lengthen (the wall clock's pairs
# are shown beside)
py_cell="python3-kubernetes not found: skipped"
py_ratio="–"
py_ratio_json="–"
py_json_cell="python3-kubernetes not found: skipped"
if "$K8S_PY" -c 'import kubernetes, yaml' 2>/dev/null; then
	pyv=$("$K8S_PY" -c 'import sys, kubernetes, yaml
print("Python %d.%d.%d" % sys.version_info[:3], "kubernetes", kubernetes.__version__,
      "PyYAML", yaml.__version__, "(libyaml)" if yaml.__with_libyaml__ else "(pure Python)")')
	for fmt in yaml json; do
		if [ $fmt = yaml ]; then files=("${chunks[@]}"); else files=("${jchunks[@]}"); fi
		: >"$tmp/py-$fmt.times"
		: >"$tmp/py-wall-$fmt.times"
		: >"$tmp/py-pair-$fmt.ratios"
		: >"$tmp/py-pairwall-$fmt.ratios"
		for ((i = 1; i <= PY_RUNS; i++)); do
			echo "   python run $i of $PY_RUNS ($fmt), then berth" >&2
			t0=${EPOCHREALTIME/./}
			"${taskset[@]}" "$K8S_PY" bench/k8s_models.py "${files[@]}" >/dev/null 2>"$tmp/py-$fmt-$i.json" ||
				{ cat "$tmp/py-$fmt-$i.json" >&2; die "bench/k8s_models.py failed"; }
			t1=${EPOCHREALTIME/./}
			echo "$((t1 - t0))e-6" >>"$tmp/py-wall-$fmt.times"
			read -r py_s py_c < <("$PY" -c 'import json, sys
d = json.loads(open(sys.argv[1]).readlines()[-1]); print(d["seconds"], d["cpu_seconds"])' \
				"$tmp/py-$fmt-$i.json")
			echo "$py_s" >>"$tmp/py-$fmt.times"
			bench pair-$fmt 1 0 "${taskset[@]}" sh "$tmp/render-$fmt.sh"
			calc '%.4f\n' "$py_c / $(cat "$tmp/pair-$fmt.cpu")" >>"$tmp/py-pair-$fmt.ratios"
			calc '%.4f\n' "$py_s / $(cat "$tmp/pair-$fmt.times")" >>"$tmp/py-pairwall-$fmt.ratios"
		done
	done
	read -r p_med p_min p_max < <(stats "$tmp/py-yaml.times")
	read -r pj_med _ _ < <(stats "$tmp/py-json.times")
	read -r pw_med _ _ < <(stats "$tmp/py-wall-yaml.times")
	read -r py_ratio_num q_min q_max < <(stats "$tmp/py-pair-yaml.ratios")
	read -r py_ratio_json_num qj_min qj_max < <(stats "$tmp/py-pair-json.ratios")
	read -r pyw_ratio _ _ < <(stats "$tmp/py-pairwall-yaml.ratios")
	read -r pyw_ratio_json _ _ < <(stats "$tmp/py-pairwall-json.ratios")
	pr_med=$(calc '%.1f' "$N / $p_med")
	py_cell="python3-kubernetes models + PyYAML: $(rate_cell "$pr_med" "$N / $p_max" "$N / $p_min")"
	py_ratio="$(ratio_cell "$py_ratio_num" "$q_min" "$q_max") of $PY_RUNS pairs"
	py_ratio_json="$(ratio_cell "$py_ratio_json_num" "$qj_min" "$qj_max") of $PY_RUNS pairs"
	py_json_cell="python3-kubernetes models, reading with its json module: $(group "$(calc '%d' "$N / $pj_med")") specs/s"
	py_summary=$("$PY" -c 'import json, sys
d = json.loads(open(sys.argv[1]).readlines()[-1])
print("read %.2f s, build %.2f s, serialise %.2f s; %s bytes; %s" % (d["read"], d["build"],
      d["serialise"], format(d["bytes"], ","),
      ", ".join("%s %d" % kv for kv in d["objects"].items())))' "$tmp/py-yaml-$PY_RUNS.json")
	commands+=("${taskset[*]} /usr/bin/python3 bench/k8s_models.py \$TMP/specs-*.yaml > /dev/null   # $PY_RUNS runs, each followed by one of berth's (.json: the same, read as JSON lines)")
	notes+=("Python ($pyv): one run took $py_summary. Its rate counts reading, building and serialising only; with the interpreter's start and \`import kubernetes\` the whole process took $(calc '%.2f' "$pw_med") s (median). From the JSON lines (json.loads) it renders $(group "$(calc '%d' "$N / $pj_med")") specs/s (median).")
	notes+=("Target berth ≥ 50× the Python client (issue 28; by CPU time, the median of $PY_RUNS pairs, each a Python run and the berth run after it, on the same files): YAML $(met "$py_ratio_num" 50) ($(calc '%.1f' "$py_ratio_num")×, pairs $(calc '%.1f' "$q_min")–$(calc '%.1f' "$q_max")×), JSON $(met "$py_ratio_json_num" 50) ($(calc '%.1f' "$py_ratio_json_num")×, pairs $(calc '%.1f' "$qj_min")–$(calc '%.1f' "$qj_max")×). By the wall clock, the same pairs: $(calc '%.1f' "$pyw_ratio")× and $(calc '%.1f' "$pyw_ratio_json")×.")
else
	echo "python3-kubernetes not found for /usr/bin/python3 (scripts/deps-bench.sh): skipped" >&2
fi
rows+=("render throughput, $(group "$N") specs as YAML, one core (berth $TP_RUNS runs, Python $PY_RUNS)$tab$(rate_cell "$r_med" "$r_min" "$r_max")$tab$py_cell$tab$py_ratio")
rows+=("the floor: libfyaml's events for the same YAML files, nothing else ($TP_RUNS runs)$tab$(rate_cell "$fr_med" "$N / $f_max" "$N / $f_min")$tab–${tab}berth at $cpu_pct % of it by CPU time ($floor_pct % by rate)")
rows+=("render throughput, the same specs as JSON lines, one core ($TP_RUNS runs)$tab$(rate_cell "$rj_med" "$N / $j_max" "$N / $j_min")$tab$py_json_cell$tab$py_ratio_json")
rows+=("the floor: libfyaml's events for the same JSON files ($TP_RUNS runs)$tab$(rate_cell "$frj_med" "$N / $fj_max" "$N / $fj_min")$tab–${tab}berth at $cpu_pct_json % of it by CPU time ($floor_pct_json % by rate)")

# ---- instructions per spec (callgrind) ----------------------------------------
cg_row="valgrind not found: skipped"
phases=() # Markdown lines: the table of instructions per spec by phase
if [ -n "$valgrind" ] && [ "$CG_N" -gt 1 ]; then
	echo "== callgrind: $CG_N specs and 1 spec, YAML and JSON" >&2
	for n in "$CG_N" 1; do
		"$PY" bench/gen_specs.py "$n" "$SEED" --jsonl "$tmp/cg-$n.json" >"$tmp/cg-$n.yaml"
	done
	# profile WHO BERTH FMT: the two profiles of BERTH over $CG_N specs and 1, as FMT
	profile() {
		local who=$1 bin=$2 fmt=$3 n
		for n in "$CG_N" 1; do
			"$valgrind" --tool=callgrind --callgrind-out-file="$keep/render-callgrind.$who.$fmt.$n.out" \
				"$bin" render - --config "$CONFIG" --secrets "$secrets" --run-id b1 \
				<"$tmp/cg-$n.$fmt" >/dev/null 2>"$tmp/cg-$n.log" ||
				{ tail -20 "$tmp/cg-$n.log" >&2; die "$bin under callgrind failed ($n specs, $fmt)"; }
		done
	}
	ir() { awk '/^(summary|totals):/ { print $2; exit }' "$1"; }
	whos=(after)
	profile after "$berth" yaml
	profile after "$berth" json
	if [ -n "${BENCH_BERTH_BEFORE:-}" ]; then
		whos=(before after)
		profile before "$BENCH_BERTH_BEFORE" yaml
		profile before "$BENCH_BERTH_BEFORE" json
	fi
	ir_n=$(ir "$keep/render-callgrind.after.yaml.$CG_N.out")
	ir_1=$(ir "$keep/render-callgrind.after.yaml.1.out")
	ir_spec=$(calc '%d' "($ir_n - $ir_1) / ($CG_N - 1)")
	irj_spec=$(calc '%d' "($(ir "$keep/render-callgrind.after.json.$CG_N.out") - $(ir "$keep/render-callgrind.after.json.1.out")) / ($CG_N - 1)")
	cg_row="$(group "$ir_spec") instructions per spec (JSON: $(group "$irj_spec"))"
	# the phases, each profile a column
	for who in "${whos[@]}"; do
		for fmt in yaml json; do
			bench/render_phases.py "$CG_N" "$keep/render-callgrind.$who.$fmt.$CG_N.out" \
				"$keep/render-callgrind.$who.$fmt.1.out" >"$tmp/phases.$who.$fmt" ||
				die "bench/render_phases.py failed"
		done
	done
	head="| phase |"
	rule="|---|"
	for who in "${whos[@]}"; do
		head+=" $who, YAML | $who, JSON |"
		rule+="---|---|"
	done
	phases+=("$head" "$rule")
	mapfile -t names < <(cut -d'|' -f2 "$tmp/phases.after.yaml" | sed 's/^ //; s/ $//')
	for ((k = 0; k < ${#names[@]}; k++)); do
		line="| ${names[$k]} |"
		for who in "${whos[@]}"; do
			for fmt in yaml json; do
				line+=" $(sed -n "$((k + 1))p" "$tmp/phases.$who.$fmt" | cut -d'|' -f3- | sed 's/ |$//; s/ | / (/; s/$/)/; s/^ //') |"
			done
		done
		phases+=("$line")
	done
	for mode in inclusive self; do
		inc=no
		[ $mode = inclusive ] && inc=yes
		callgrind_annotate --inclusive=$inc --threshold=99 "$keep/render-callgrind.after.yaml.$CG_N.out" \
			>"$keep/render-callgrind.$mode.txt" 2>/dev/null || true
	done
	commands+=("valgrind --tool=callgrind --callgrind-out-file=$keep/render-callgrind.WHO.FMT.N.out build/berth render - --config $CONFIG --secrets $secrets --run-id b1 < specs-N.FMT > /dev/null   # N = $CG_N and 1, FMT = yaml and json (gen_specs.py --jsonl)")
	commands+=("bench/render_phases.py $CG_N $keep/render-callgrind.WHO.FMT.$CG_N.out $keep/render-callgrind.WHO.FMT.1.out")
	notes+=("Instructions: $(group "$ir_n") for $(group "$CG_N") specs, $(group "$ir_1") for 1 (the start: loading and relocating the shared libraries, reading the policy); ($(group "$ir_n") − $(group "$ir_1")) / $(group "$((CG_N - 1))") = $(group "$ir_spec") per spec. Profiles: $keep/render-callgrind.*.out; \`callgrind_annotate\` listings: $keep/render-callgrind.{inclusive,self}.txt.")
fi
rows+=("instructions per spec (callgrind, $(group "$CG_N") specs − 1 spec)$tab$cg_row$tab–$tab–")

# ---- the table and the Markdown ------------------------------------------------
table() {
	echo "| benchmark | berth | alternative | ratio (median, min–max) |"
	echo "|---|---|---|---|"
	local r
	for r in "${rows[@]}"; do
		echo "| ${r//$tab/ | } |"
	done
}
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
timer="a bash loop on \$EPOCHREALTIME (hyperfine not found)"
[ -z "$hyperfine" ] || timer="$("$hyperfine" --version) (-N, --warmup $WARMUP)"
{
	echo "## Render (berth render)"
	echo
	echo "**Setup**"
	echo "- Command: \`bench/render.sh\` (BENCH_SPECS=$N, BENCH_SEED=$SEED)."
	echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC')."
	echo "- Machine: \`nproc\` = $(nproc), \`model name: $cpu\`; load average $load before the run."
	echo "- Build: \`make -j2\` (-O2), $("$berth" --version)."
	echo "- Timing: $timer; throughput and Python pinned to core 0 (\`${taskset[*]:-no taskset}\`)."
	echo "- kubectl: $kv ($kubectl)."
	echo
	table
	echo
	for n in "${notes[@]}"; do echo "- $n"; done
	if [ ${#phases[@]} -gt 0 ]; then
		echo
		echo "**Instructions per spec by phase** (callgrind, bench/render_phases.py; inclusive, share of the total)${BENCH_BERTH_BEFORE:+; before: \`$BENCH_BERTH_BEFORE\`}"
		echo
		for l in "${phases[@]}"; do echo "$l"; done
	fi
	echo
	echo "**Commands** (\$TMP is a temporary directory)"
	echo
	echo '```sh'
	for c in "${commands[@]}"; do echo "$c"; done
	echo '```'
} >"$OUT"

echo
table
echo
for n in "${notes[@]}"; do echo "- $n"; done
if [ ${#phases[@]} -gt 0 ]; then
	echo
	for l in "${phases[@]}"; do echo "$l"; done
fi
echo
echo "Markdown: $OUT"

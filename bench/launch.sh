#!/usr/bin/env bash
# bench/launch.sh - local launch latency: `berth run SPEC --wait` of a spec whose command
# is /bin/true, against /bin/true run directly, and where the difference goes.
#
#   bench/launch.sh            (OUT=FILE: where the Markdown goes, default build/bench/launch.md)
#
# Builds build/berth (make -j2, -O2). Every variant gets a fresh $BERTH_HOME under a
# temporary dir. The spec (written to the temporary dir):
#   function: {name: t, image: x, command: [/bin/true]}
#   resources: {cpu: 100m, mem: 32Mi}
#
# 1. Latency, with hyperfine (-N --warmup 3 --runs 30 --export-json), or, without it, a
#    loop timed with `date +%s%N` (the same number of runs):
#      - /bin/true
#      - berth run --wait with BERTH_CGROUP_ROOT in the temporary dir: no cgroup is made,
#        the run is limited with rlimits (docs/local.md, "Neither writable")
#      - berth run --wait with the real cgroups (default BERTH_CGROUP_ROOT), when root and
#        a cgroup tree is writable; skipped otherwise
#    Each berth variant is checked: every run Succeeded, with the enforcement expected.
#    BENCH_ROUNDS (4) rounds of all three, one after the other (berth's rows each after a
#    pause of 0.5 s; with BENCH_BASELINE, the two builds' rows in turns, this build's first
#    in odd rounds: 4 puts each first as often): a row pools the rounds'
#    runs, and the overhead is the median of the rounds' own (berth median - /bin/true
#    median of the same round), so that a drift of the machine's speed counts once.
# 2. Parts, timed the same way (BENCH_PART_RUNS runs each): berth's process start
#    (`berth --version`), + policy and spec (`berth validate`), + store open and the
#    backend's open (`berth get run ID`), that with BERTH_GPU_DIR (one entry: no nvidia-smi
#    probe), `berth run` without --wait, `berth run --wait` with BERTH_GPU_DIR; a main() that
#    returns 0 linked with libc only, with the libraries berth links, and with all of the
#    Makefile's PKGS; the least a launch is, with no berth in it (a C probe: a fork that vforks
#    and execs /bin/true, + the run's init in new pid and mount namespaces, + two fdatasyncs),
#    whose overhead over /bin/true is this machine's floor for berth's. Then small C probes,
#    compiled here: SQLite's WAL header sync and the
#    directory fsync; an inotify instance with a watch, and its close (what a waiter in
#    another process pays per wakeup: berth run --wait itself is woken by a pipe from its
#    supervisor); a run's directory and files; one scan of /proc/N/stat (signal_all).
# 3. Timeline: BENCH_STRACE_RUNS (5) runs of one `berth run --wait` under
#    strace -f [--seccomp-bpf] -tt -T -y -e trace=execve,clone,clone3,fork,vfork,wait4,
#    inotify_add_watch,poll,openat,fsync,fdatasync,close; the phases are read from the
#    trace (median over the runs): the supervisor is the process that opens supervisor.log,
#    a fork of berth run --wait, or (an older berth, a server) `berth __supervise ID`
#    spawned, whose rows are then those of its execve. strace slows every traced syscall
#    (the /proc scan opens hundreds of files): the phases' shares count, not their sum.
#    With real cgroups, one more run under strace -y -T gives the time of the syscalls on
#    /sys/fs/cgroup.
# 4. Profile: `perf record -e cpu-clock --call-graph dwarf` over 10 launches (when perf can
#    sample; hardware counters such as instructions are often missing in a VM, cpu-clock
#    works there), inclusive shares of the functions that matter.
# Knobs (environment): BENCH_RUNS (30), BENCH_ROUNDS (4), BENCH_WARMUP (3), BENCH_PART_RUNS (20),
# BENCH_STRACE_RUNS (5), BENCH_PERF_LAUNCHES (10), BENCH_NO_PERF=1, BENCH_NO_STRACE=1,
# BENCH_NO_HYPERFINE=1 (the date loop even where hyperfine is installed), OUT,
# BENCH_BASELINE=PATH (another berth binary, timed in the same rounds: before and after).
# Exit status: 0, or 1 when a step failed (a run did not succeed, a tool failed).
set -eu -o pipefail
cd "$(dirname "$0")/.."

RUNS=${BENCH_RUNS:-30}
ROUNDS=${BENCH_ROUNDS:-4}
WARMUP=${BENCH_WARMUP:-3}
PART_RUNS=${BENCH_PART_RUNS:-20}
STRACE_RUNS=${BENCH_STRACE_RUNS:-5}
PERF_LAUNCHES=${BENCH_PERF_LAUNCHES:-10}
OUT=${OUT:-build/bench/launch.md}

for c in make cc nproc; do
	command -v "$c" >/dev/null || { echo "launch.sh: $c is missing" >&2; exit 1; }
done
make -j2 >/dev/null
berth=$PWD/build/berth
ncpu=$(nproc)
cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)
have_hf=0
if [ "${BENCH_NO_HYPERFINE:-0}" != 1 ] && command -v hyperfine >/dev/null &&
	hyperfine --help 2>/dev/null | grep -q -- '--shell'; then
	have_hf=1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/berth-launch.XXXXXX")
unset BERTH_CONFIG BERTH_TOKEN BERTH_SERVER BERTH_GPU_DIR 2>/dev/null || true
export BERTH_CGROUP_ROOT=$tmp/no-cgroup

die() {
	echo "launch.sh: $*" >&2
	exit 1
}

# PIDs of the processes whose environment has BERTH_HOME under $tmp: the supervisors
# this script started (a run of /bin/true ends by itself; this is for an interrupted run)
own_pids() {
	local e p
	for e in /proc/[0-9]*/environ; do
		p=${e#/proc/}
		p=${p%/environ}
		[ "$p" != $$ ] || continue
		grep -qz "^BERTH_HOME=$tmp/" "$e" 2>/dev/null && echo "$p"
	done
	return 0
}

cleanup() {
	local p id c
	for p in $(own_pids); do
		kill -KILL "$p" 2>/dev/null || true
	done
	# a supervisor killed here leaves its cgroup: remove those of this script's runs
	for id in "$tmp"/*/runs/*; do
		[ -d "$id" ] || continue
		id=${id##*/}
		for c in /sys/fs/cgroup/*/berth/"$id" /sys/fs/cgroup/berth/"$id"; do
			[ -d "$c" ] && rmdir "$c" 2>/dev/null || true
		done
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

spec=$tmp/spec.yaml
cat >"$spec" <<'EOF'
function: {name: t, image: x, command: [/bin/true]}
resources: {cpu: 100m, mem: 32Mi}
EOF
mkdir -p "$tmp/gpu" && : >"$tmp/gpu/0000:00:00.0" # BERTH_GPU_DIR: one "GPU", no nvidia-smi

# ---- timing ------------------------------------------------------------------------------

# measure LABEL NRUNS ENV CMD...: times CMD (hyperfine, else a date loop) in a subshell
# with ENV ("VAR=VALUE ...", an empty VALUE unsets VAR); sets med, min, max (ms)
measure() {
	local label=$1 n=$2 envs=$3
	shift 3
	(
		local kv
		for kv in $envs; do
			if [ -n "${kv#*=}" ]; then export "${kv?}"; else unset "${kv%%=*}"; fi
		done
		if [ "$have_hf" = 1 ]; then
			hyperfine -N --warmup "$WARMUP" --runs "$n" --export-json "$tmp/$label.json" \
				--command-name "$label" "$*" >"$tmp/$label.hf" 2>&1 ||
				{ cat "$tmp/$label.hf" >&2; exit 1; }
		else
			local i s e
			for ((i = 0; i < WARMUP; i++)); do "$@" >/dev/null 2>&1; done
			: >"$tmp/$label.ns"
			for ((i = 0; i < n; i++)); do
				s=$(date +%s%N)
				"$@" >/dev/null 2>&1
				e=$(date +%s%N)
				echo $((e - s)) >>"$tmp/$label.ns"
			done
		fi
	) || {
		# what went wrong: the runs of that home that did not succeed, and their reasons
		local kv h=
		for kv in $envs; do [ "${kv%%=*}" != BERTH_HOME ] || h=${kv#*=}; done
		[ -z "$h" ] || BERTH_HOME=$h "$berth" get runs 2>&1 | awk 'NR == 1 || $3 != "Succeeded"' | head -5 >&2
		die "timing $label failed"
	}
	if [ "$have_hf" = 1 ]; then
		local j=$tmp/$label.json
		med=$(sed -n 's/^ *"median": \([0-9.e+-]*\),*$/\1/p' "$j" | head -n1)
		min=$(sed -n 's/^ *"min": \([0-9.e+-]*\),*$/\1/p' "$j" | head -n1)
		max=$(sed -n 's/^ *"max": \([0-9.e+-]*\),*$/\1/p' "$j" | head -n1)
		med=$(awk -v v="$med" 'BEGIN {printf "%.2f", v * 1000}')
		min=$(awk -v v="$min" 'BEGIN {printf "%.2f", v * 1000}')
		max=$(awk -v v="$max" 'BEGIN {printf "%.2f", v * 1000}')
	else
		read -r med min max < <(sort -n "$tmp/$label.ns" | awk '{v[NR] = $1}
			END {m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
			     printf "%.2f %.2f %.2f\n", m / 1e6, v[1] / 1e6, v[NR] / 1e6}')
	fi
	echo "-- $label: median $med ms, min $min, max $max ($n runs)"
}

# check_runs HOME N ENFORCEMENT: N runs in HOME, all Succeeded, enforced as said
check_runs() {
	local home=$1 n=$2 enf=$3 got ok id
	got=$(BERTH_HOME=$home "$berth" get runs 2>/dev/null | awk 'NR > 1' | wc -l)
	ok=$(BERTH_HOME=$home "$berth" get runs 2>/dev/null | awk 'NR > 1 && $3 == "Succeeded"' | wc -l)
	[ "$got" -ge "$n" ] && [ "$ok" = "$got" ] ||
		die "$home: $ok of $got runs Succeeded (expected $n)"
	id=$(BERTH_HOME=$home "$berth" get runs 2>/dev/null | awk 'NR == 2 {print $1}')
	BERTH_HOME=$home "$berth" get run "$id" -o yaml 2>/dev/null | grep -q "^enforcement: \"*$enf\"*$" ||
		die "$home: run $id is not enforced with $enf: $(BERTH_HOME=$home "$berth" get run "$id" -o yaml | grep enforcement)"
}

rows=()  # "what|median|min|max|runs|command"
parts=() # "part|median|min|max|command"
hf_cmd="hyperfine -N --warmup $WARMUP --runs $RUNS --export-json FILE"
[ "$have_hf" = 1 ] || hf_cmd="date +%s%N around each of $RUNS runs, after $WARMUP warmups (no hyperfine; each time includes about one start of date, the same for every row: compare the overheads)"

echo "$("$berth" --version 2>/dev/null | head -n1); $ncpu CPUs: $cpu_model"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- 1. latency ---------------------------------------------------------------------------------
# ROUNDS rounds, each of /bin/true and then every variant: a drift of this machine's speed
# (a shared VM's often is) shows in all of them alike. A row pools every round's runs; the
# overhead is the median of the rounds' own (variant median - /bin/true median).

# times_ms LABEL: each run's time in ms, one a line
times_ms() {
	if [ "$have_hf" = 1 ]; then
		tr -d ' \n' <"$tmp/$1.json" | sed -n 's/.*"times":\[\([^]]*\)\].*/\1/p' | tr ',' '\n' |
			awk 'NF {printf "%.4f\n", $1 * 1000}'
	else
		awk '{printf "%.4f\n", $1 / 1e6}' "$tmp/$1.ns"
	fi
}
# med_of: "median min max" of the numbers on stdin
med_of() {
	sort -n | awk '{v[NR] = $1} END {m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.2f %.2f %.2f\n", m, v[1], v[NR]}'
}

cg_note=
if [ "$(id -u)" != 0 ]; then
	cg_note="skipped: not root"
elif [ -f /sys/fs/cgroup/cgroup.controllers ] && [ -w /sys/fs/cgroup ]; then
	cg_ver=v2
elif [ -d /sys/fs/cgroup/memory ] && [ -w /sys/fs/cgroup/memory ]; then
	cg_ver=v1
else
	cg_note="skipped: no writable cgroup tree under /sys/fs/cgroup"
fi
[ -z "$cg_note" ] || echo "-- cgroup variant $cg_note"
variants="true rlimits"
[ -n "$cg_note" ] || variants="$variants cgroup"
# BENCH_BASELINE=BERTH: another build (the commit before a change) in the same rounds
base=${BENCH_BASELINE:-}
if [ -n "$base" ]; then
	[ -x "$base" ] || die "BENCH_BASELINE $base is not an executable"
	variants="$variants base-rlimits"
	[ -n "$cg_note" ] || variants="$variants base-cgroup"
fi
# each berth row after a pause (the last row's supervisors end at idle priority, after their
# waiters: a row that starts at once meets them, 0.8 ms a launch in an A/B of two builds), and
# with BENCH_BASELINE the two builds in turns: this one first in odd rounds, the baseline first
# in even ones (the first row of a round is the faster one)
this_build() {
	sleep 0.5
	measure "rlimits-$1" "$RUNS" "BERTH_HOME=$tmp/rlimits" "$berth" run "$spec" --wait
	[ -n "$cg_note" ] || { sleep 0.5 &&
		measure "cgroup-$1" "$RUNS" "BERTH_HOME=$tmp/cgroup BERTH_CGROUP_ROOT=" "$berth" run "$spec" --wait; }
}
baseline_build() {
	[ -n "$base" ] || return 0
	sleep 0.5
	measure "base-rlimits-$1" "$RUNS" "BERTH_HOME=$tmp/base-rlimits" "$base" run "$spec" --wait
	[ -n "$cg_note" ] || { sleep 0.5 &&
		measure "base-cgroup-$1" "$RUNS" "BERTH_HOME=$tmp/base-cgroup BERTH_CGROUP_ROOT=" "$base" run "$spec" --wait; }
}
for ((round = 1; round <= ROUNDS; round++)); do
	measure "true-$round" "$RUNS" "" /bin/true
	if ((round % 2)); then
		this_build "$round"
		baseline_build "$round"
	else
		baseline_build "$round"
		this_build "$round"
	fi
done
check_runs "$tmp/rlimits" $(((RUNS + WARMUP) * ROUNDS)) rlimits
[ -n "$cg_note" ] || check_runs "$tmp/cgroup" $(((RUNS + WARMUP) * ROUNDS)) "cgroup $cg_ver"
declare -A pooled over_rounds
for v in $variants; do
	pooled[$v]=$(for ((round = 1; round <= ROUNDS; round++)); do times_ms "$v-$round"; done | med_of)
	[ "$v" = true ] && continue
	over_rounds[$v]=$(for ((round = 1; round <= ROUNDS; round++)); do
		a=$(times_ms "$v-$round" | med_of | cut -d' ' -f1)
		b=$(times_ms "true-$round" | med_of | cut -d' ' -f1)
		awk -v a="$a" -v b="$b" 'BEGIN {printf "%.2f\n", a - b}'
	done | paste -sd' ' -)
done
read -r true_med min max <<<"${pooled[true]}"
rows+=("/bin/true|$true_med|$min|$max|$((RUNS * ROUNDS))|/bin/true")
read -r rl_med min max <<<"${pooled[rlimits]}"
rows+=("berth run --wait, no cgroup (rlimits)|$rl_med|$min|$max|$((RUNS * ROUNDS))|BERTH_CGROUP_ROOT=TMP/no-cgroup berth run SPEC --wait")
cg_med=
if [ -z "$cg_note" ]; then
	read -r cg_med min max <<<"${pooled[cgroup]}"
	rows+=("berth run --wait, cgroup $cg_ver|$cg_med|$min|$max|$((RUNS * ROUNDS))|berth run SPEC --wait (BERTH_CGROUP_ROOT unset)")
fi
if [ -n "$base" ]; then
	read -r med min max <<<"${pooled[base-rlimits]}"
	rows+=("baseline: berth run --wait, no cgroup (rlimits)|$med|$min|$max|$((RUNS * ROUNDS))|BENCH_BASELINE run SPEC --wait")
	if [ -z "$cg_note" ]; then
		read -r med min max <<<"${pooled[base-cgroup]}"
		rows+=("baseline: berth run --wait, cgroup $cg_ver|$med|$min|$max|$((RUNS * ROUNDS))|BENCH_BASELINE run SPEC --wait")
	fi
fi

# ---- 2. parts -----------------------------------------------------------------------------------
ph=$tmp/parts
BERTH_HOME=$ph "$berth" run "$spec" --wait >"$tmp/id" 2>/dev/null || die "berth run failed"
pid_run=$(head -n1 "$tmp/id")
cat >"$tmp/stub.c" <<'EOF'
int main(void) { return 0; }
EOF
cc -O2 -o "$tmp/stub-libc" "$tmp/stub.c"
# shellcheck disable=SC2046
cc -O2 -o "$tmp/stub-core" "$tmp/stub.c" -Wl,--no-as-needed $(pkg-config --libs libfyaml sqlite3 libsodium)
# shellcheck disable=SC2046
cc -O2 -o "$tmp/stub-all" "$tmp/stub.c" -Wl,--no-as-needed \
	$(pkg-config --libs libfyaml sqlite3 libsodium libmicrohttpd libcurl) -lpthread
nlibs=$(ldd "$berth" | grep -c '=>' || true)
ncore=$(ldd "$tmp/stub-core" | grep -c '=>' || true)
nall=$(ldd "$tmp/stub-all" | grep -c '=>' || true)

measure part-stub-libc "$PART_RUNS" "" "$tmp/stub-libc"
parts+=("main() { return 0; } linked with libc only|$med|$min|$max|cc stub.c")
measure part-stub-core "$PART_RUNS" "" "$tmp/stub-core"
parts+=("the same, linked with libfyaml, sqlite3, libsodium ($ncore libraries)|$med|$min|$max|cc stub.c -Wl,--no-as-needed \$(pkg-config --libs libfyaml sqlite3 libsodium)")
measure part-stub-all "$PART_RUNS" "" "$tmp/stub-all"
parts+=("the same, linked with all of the Makefile's PKGS (+ libmicrohttpd, libcurl: $nall libraries)|$med|$min|$max|cc stub.c -Wl,--no-as-needed \$(pkg-config --libs \$PKGS) -lpthread")
# the least a launch is, with no berth in it: what this machine's processes, namespaces and
# fdatasyncs cost before berth does anything (the 5 ms target is berth's overhead over
# /bin/true; this floor's own overhead over /bin/true is the part of it berth cannot remove)
cat >"$tmp/floor.c" <<'EOF'
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
/* floor MODE FILE. f: a fork (the supervisor) that vforks and execs /bin/true and waits;
 * n: the same with the run's init, in new pid and mount namespaces, between them;
 * s: n with a page appended to FILE and fdatasynced before the fork and after the init's end */
static int run_true(void)
{
	int st;
	pid_t c = vfork();
	if (c == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	return c > 0 && waitpid(c, &st, 0) == c && WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
static int durable(char mode, int fd, const char *page)
{
	return mode != 's' || (write(fd, page, 4096) == 4096 && fdatasync(fd) == 0);
}
int main(int argc, char **argv)
{
	static char page[4096];
	int st, fd = argc > 2 ? open(argv[2], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600) : -1;
	char mode = argc > 1 ? argv[1][0] : 'f';
	if (fd < 0 || !durable(mode, fd, page))
		return 1;
	pid_t sup = fork();
	if (sup == 0) {
		if (mode == 'f')
			_exit(run_true());
		pid_t init = (pid_t)syscall(SYS_clone, CLONE_NEWPID | CLONE_NEWNS | SIGCHLD, NULL, NULL, NULL, NULL);
		if (init == 0)
			_exit(run_true());
		int ok = init > 0 && waitpid(init, &st, 0) == init && WIFEXITED(st) && !WEXITSTATUS(st);
		_exit(ok && durable(mode, fd, page) ? 0 : 1);
	}
	return sup > 0 && waitpid(sup, &st, 0) == sup && WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
EOF
cc -O2 -o "$tmp/floor" "$tmp/floor.c"
# /bin/true again, beside the floor: the floor's overhead is over this one, timed minutes
# after the rounds above (this VM's speed drifts within minutes)
measure part-true "$PART_RUNS" "" /bin/true
floor_true=$med
parts+=("/bin/true, timed again beside the floor below|$med|$min|$max|/bin/true")
measure part-floor-fork "$PART_RUNS" "" "$tmp/floor" f "$tmp/floor.wal"
parts+=("the least a launch is, no berth: a fork (the supervisor) that vforks and execs /bin/true|$med|$min|$max|floor f FILE (bench/launch.sh's C probe)")
floor_med=$med
# new namespaces need root (CAP_SYS_ADMIN); without them the floor stops at the fork
if "$tmp/floor" n "$tmp/floor.wal" 2>/dev/null; then
	measure part-floor-ns "$PART_RUNS" "" "$tmp/floor" n "$tmp/floor.wal"
	parts+=("+ the run's init between them, in new pid and mount namespaces|$med|$min|$max|floor n FILE")
	measure part-floor-sync "$PART_RUNS" "" "$tmp/floor" s "$tmp/floor.wal"
	parts+=("+ a page appended and fdatasynced before the fork and after the init (a submission, an end)|$med|$min|$max|floor s FILE")
	floor_med=$med
fi
measure part-version "$PART_RUNS" "" "$berth" --version
parts+=("berth --version: berth's process start ($nlibs libraries)|$med|$min|$max|berth --version")
measure part-validate "$PART_RUNS" "" "$berth" validate "$spec"
parts+=("+ policy load, spec parse and plan|$med|$min|$max|berth validate SPEC")
measure part-get "$PART_RUNS" "BERTH_HOME=$ph" "$berth" get run "$pid_run"
parts+=("+ store open, migrations check, node detection, recover + schedule|$med|$min|$max|berth get run ID")
get_med=$med
measure part-get-nogpu "$PART_RUNS" "BERTH_HOME=$ph BERTH_GPU_DIR=$tmp/gpu" "$berth" get run "$pid_run"
parts+=("the same without the nvidia-smi probe|$med|$min|$max|BERTH_GPU_DIR=DIR berth get run ID")
nogpu_get_med=$med
measure part-submit "$PART_RUNS" "BERTH_HOME=$ph" "$berth" run "$spec"
parts+=("berth run without --wait: + submit, spawn the supervisor|$med|$min|$max|berth run SPEC")
measure part-run-nogpu "$PART_RUNS" "BERTH_HOME=$ph BERTH_GPU_DIR=$tmp/gpu" "$berth" run "$spec" --wait
parts+=("berth run --wait without the nvidia-smi probes|$med|$min|$max|BERTH_GPU_DIR=DIR berth run SPEC --wait")
check_runs "$ph" 1 rlimits

# what SQLite's WAL costs this file system: a new WAL file's header sync, then the data
# dir's fsync (the unix VFS syncs the directory after creating a file)
cat >"$tmp/syncprobe.c" <<'EOF'
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
int main(int argc, char **argv)
{
	enum { N = 21 };
	double f[N], d[N];
	char path[4096], buf[32] = {0};
	for (int i = 0; i < N; i++) {
		snprintf(path, sizeof(path), "%s/probe-wal", argv[1]);
		double t = now();
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf) || fdatasync(fd))
			return 1;
		f[i] = now() - t;
		t = now();
		int dfd = open(argv[1], O_RDONLY);
		if (dfd < 0 || fsync(dfd))
			return 1;
		d[i] = now() - t;
		close(dfd);
		close(fd);
		unlink(path);
		(void)argc;
	}
	qsort(f, N, sizeof(double), cmp);
	qsort(d, N, sizeof(double), cmp);
	printf("%.2f %.2f\n", f[N / 2], d[N / 2]);
	return 0;
}
EOF
cc -O2 -o "$tmp/syncprobe" "$tmp/syncprobe.c"
read -r sync_file sync_dir < <("$tmp/syncprobe" "$ph")
echo "-- fdatasync of a new 32-byte file: $sync_file ms; fsync of its directory: $sync_dir ms (median of 21)"

# what signal_all (src/backend/local/supervisor.c) costs: it reads /proc/N/stat of every process on the
# machine to find the supervisor's children; the supervisor calls it twice after the command
# has exited (run_attempts, then reap_all) before it writes the done marker
cat >"$tmp/procscan.c" <<'EOF'
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
int main(void)
{
	enum { N = 21 };
	double t[N];
	int procs = 0, mine = 0;
	pid_t self = getpid();
	for (int i = 0; i < N; i++) {
		double t0 = now();
		DIR *d = opendir("/proc");
		struct dirent *de;
		procs = 0;
		while (d && (de = readdir(d))) {
			char path[300], buf[512];
			if (de->d_name[0] < '0' || de->d_name[0] > '9')
				continue;
			procs++;
			snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
			int fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			ssize_t n = read(fd, buf, sizeof(buf) - 1);
			close(fd);
			if (n <= 0)
				continue;
			buf[n] = 0;
			char *p = strrchr(buf, ')');
			long ppid;
			if (p && sscanf(p + 1, " %*c %ld", &ppid) == 1 && ppid == self)
				mine++;
		}
		if (d)
			closedir(d);
		t[i] = now() - t0;
	}
	qsort(t, N, sizeof(double), cmp);
	printf("%.2f %d\n", t[N / 2], procs);
	return mine > 0;
}
EOF
cc -O2 -o "$tmp/procscan" "$tmp/procscan.c"
read -r scan_ms nprocs < <("$tmp/procscan")
echo "-- one scan of /proc/N/stat as signal_all does: $scan_ms ms ($nprocs processes; median of 21)"

# what a waiter paid per wakeup before local_watch (src/backend/local/local.c): a new inotify
# instance, a watch on the run's directory, and its close; one process per sample, as in berth
cat >"$tmp/inoprobe.c" <<'EOF'
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
int main(int argc, char **argv)
{
	double t0 = now();
	int fd = inotify_init1(IN_CLOEXEC);
	if (argc < 2 || fd < 0 || inotify_add_watch(fd, argv[1], IN_CREATE | IN_MODIFY | IN_MOVED_TO) < 0)
		return 1;
	double t1 = now();
	close(fd);
	printf("%.3f %.3f\n", t1 - t0, now() - t1);
	return 0;
}
EOF
cc -O2 -o "$tmp/inoprobe" "$tmp/inoprobe.c"
mkdir -p "$tmp/inodir"
for ((i = 0; i < 21; i++)); do "$tmp/inoprobe" "$tmp/inodir"; done >"$tmp/ino.txt"
ino_add=$(cut -d' ' -f1 "$tmp/ino.txt" | sort -n | awk '{v[NR] = $1} END {printf "%.2f", v[int((NR + 1) / 2)]}')
read -r ino_close ino_close_min ino_close_max < <(cut -d' ' -f2 "$tmp/ino.txt" | sort -n |
	awk '{v[NR] = $1} END {printf "%.2f %.2f %.2f\n", v[int((NR + 1) / 2)], v[1], v[NR]}')
echo "-- inotify: init + add_watch $ino_add ms, close $ino_close ms (min $ino_close_min, max $ino_close_max; median of 21 processes)"

# what a run's files cost this file system: HOME/runs/ID and its supervisor.log, log, done
cat >"$tmp/inodeprobe.c" <<'EOF'
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
int main(int argc, char **argv)
{
	enum { N = 21 };
	double t[N];
	char d[4096], f[4200];
	static const char *const names[] = {"supervisor.log", "log", "done"};
	for (int i = 0; i < N && argc > 1; i++) {
		snprintf(d, sizeof(d), "%s/r%d", argv[1], i);
		double t0 = now();
		if (mkdir(d, 0700))
			return 1;
		for (int k = 0; k < 3; k++) {
			snprintf(f, sizeof(f), "%s/%s", d, names[k]);
			int fd = open(f, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
			if (fd < 0)
				return 1;
			close(fd);
		}
		t[i] = now() - t0;
	}
	qsort(t, N, sizeof(double), cmp);
	printf("%.2f\n", t[N / 2]);
	return 0;
}
EOF
cc -O2 -o "$tmp/inodeprobe" "$tmp/inodeprobe.c"
mkdir -p "$ph/inodes"
inode_ms=$("$tmp/inodeprobe" "$ph/inodes")
fs_type=$(df -T "$ph" | awk 'NR == 2 {print $2}')
echo "-- a run's directory and its 3 files on $fs_type: $inode_ms ms (median of 21)"

# ---- 3. timeline under strace ----------------------------------------------------------------------
strace_rows=()
cg_rows=()
if [ "${BENCH_NO_STRACE:-0}" != 1 ] && command -v strace >/dev/null; then
	sh_home=$tmp/strace
	# --seccomp-bpf (strace >= 5.3): the syscalls not asked for do not stop the process,
	# which keeps the trace much closer to the untraced timing
	seccomp=
	strace -f --seccomp-bpf -e trace=openat -o /dev/null true 2>/dev/null && seccomp=--seccomp-bpf
	BERTH_HOME=$sh_home "$berth" run "$spec" --wait >/dev/null 2>&1 # the store exists
	: >"$tmp/phases"
	for ((i = 1; i <= STRACE_RUNS; i++)); do
		st=$tmp/strace.$i
		BERTH_HOME=$sh_home strace -f $seccomp -tt -T -o "$st" \
			-e trace=execve,clone,clone3,fork,vfork,wait4,inotify_add_watch,poll,openat,fsync,fdatasync,close -y \
			"$berth" run "$spec" --wait >/dev/null 2>&1 || die "berth run under strace failed"
		awk -v spec="$spec" -v nlibs="$nlibs" '
		function ts(s, a) { split(s, a, ":"); return a[1] * 3600 + a[2] * 60 + a[3] }
		function dur(l) { return match(l, /<[0-9.]+>$/) ? substr(l, RSTART + 1, RLENGTH - 2) + 0 : 0 }
		# first pass: who is the supervisor: the process that opens supervisor.log, the
		# child that berth run --wait forks (or spawns, then it execs __supervise)
		NR == FNR { if (!spid && $0 ~ /openat\(.*\/supervisor\.log"/) spid = $1; next }
		{
			pid = $1; t = ts($2); l = $0
			if (p0 == "") { p0 = pid; t0 = t }
			if (pid == p0) {
				if (!tspec && l ~ /openat\(/ && index(l, "\"" spec "\"")) tspec = t
				if (!tdb && l ~ /openat\(.*berth\.db"/) tdb = t
				if (!tnv0 && l ~ / clone3?\(/ && tdb) tnv0 = t
				if (l ~ / f(data)?sync\(/) { nsync++; syncs += dur(l) }
				# the spawn or fork that made the supervisor (the double fork: the first
				# clone after the store open)
				if (!tfork && l ~ / clone3?\(/ && (l ~ ("= " spid "$") || l ~ ("= " spid " <"))) tfork = t
				if (l ~ / poll\(\[/) npoll++
				if (l ~ / close\([0-9]+<anon_inode:inotify>/) nino++
				if (l ~ /\+\+\+ exited/) tend = t
				if (!tfirstclone && tdb && l ~ / clone3?\(/) tfirstclone = t
			}
			if (!nvpid && l ~ /execve\("[^"]*nvidia-smi"/) nvpid = pid
			if (nvpid && pid == nvpid && l ~ /\+\+\+ exited/) tnv1 = t
			if (spid && pid == spid) {
				# its start: the execve of __supervise (spawned), else its first call (forked)
				if (!tsfirst) tsfirst = t
				if (!tsexec && l ~ /execve\(.*"__supervise"/) tsexec = t
				if (!tsdb && l ~ /openat\(.*berth\.db"/) tsdb = t
				if (!tcfork && l ~ / clone3?\(/) tcfork = t
				if (!tdone && l ~ /openat\(.*\/done"/) tdone = t
				if (!tdone && l ~ / f(data)?sync\(/) { ssync++; ssyncs += dur(l) }
				if (l ~ /\+\+\+ exited/) tsend = t
				# (its own stat, read for its start time, is not one of the scan)
				if (!tdone && l ~ /openat\(AT_FDCWD[^,]*, "\/proc\/[0-9]+\/stat"/ && index(l, "/proc/" spid "/stat") == 0) nstat++
			}
			if (!cpid && l ~ /execve\("\/bin\/true"/) { cpid = pid; tcexec = t }
			if (cpid && pid == cpid && l ~ /\+\+\+ exited/) tcexit = t
		}
		function ms(a, b) { return (b > 0 && a > 0) ? sprintf("%.2f", (b - a) * 1000) : "nan" }
		END {
			if (!tfork) tfork = tfirstclone
			tsstart = tsexec ? tsexec : tsfirst
			print "01 berth: exec to reading the spec (loader, " nlibs " libraries; policy)|" ms(t0, tspec)
			print "02 berth: spec parse and plan, to the store open|" ms(tspec, tdb)
			print "03 berth: store open, node detection, recover, schedule, submit (to the spawn)|" ms(tdb, tfork)
			print "04   of which the nvidia-smi probe (posix_spawnp through PATH)|" (nvpid ? ms(tnv0, tnv1) : "nan")
			print "05   of which fsync/fdatasync in berth (syscall time)|" sprintf("%.2f", syncs * 1000)
			print "06 berth: fork of the supervisor to its first call (berth run --wait forks it; spawned, to its execve)|" ms(tfork, tsstart)
			print "07 supervisor: spawned, execve to its store open (loader, " nlibs " libraries)|" (tsexec ? ms(tsexec, tsdb) : "nan")
			print "08 supervisor: its start to the clone of the run'"'"'s init (cgroup, work dir, log; spawned: the store and the record too)|" ms(tsstart, tcfork)
			print "09 supervisor: forked, the clone of the init to its store open (while the init starts the command)|" (tsexec ? "nan" : ms(tcfork, tsdb))
			print "10 command: clone of the init to the execve of /bin/true (mounts, user, seccomp)|" ms(tcfork, tcexec)
			print "11 command: /bin/true itself (execve to exit)|" ms(tcexec, tcexit)
			print "12 supervisor: command exit to the done marker|" ms(tcexit, tdone)
			print "13   /proc/N/stat files read there (signal_all: none when the run left no process)|" nstat + 0
			print "14   fsync/fdatasync in the supervisor before done (syscall time)|" sprintf("%.2f", ssyncs * 1000)
			print "15 berth: done marker to exit (the supervisor closes its pipe; store read, exit)|" ms(tdone, tend)
			print "16 total: berth exec to berth exit|" ms(t0, tend)
			print "17 berth wakeups (poll calls)|" npoll + 0
			print "18 berth: inotify instances closed (none: the pipe wakes it)|" nino + 0
			print "19 after done, not waited for: supervisor tail (a look at the queue)|" ms(tdone, tsend)
		}' "$st" "$st" >>"$tmp/phases"
	done
	cp "$tmp/strace.1" "${OUT%.md}.strace.txt" 2>/dev/null || { mkdir -p "$(dirname "$OUT")"; cp "$tmp/strace.1" "${OUT%.md}.strace.txt"; }
	while IFS= read -r key; do
		v=$(awk -F'|' -v k="$key" '$1 == k {print $2}' "$tmp/phases" | { grep -v nan || true; } | sort -n |
			awk '{v[NR] = $1} END {if (!NR) print "n/a"; else print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}')
		strace_rows+=("${key:3}|$v")
	done < <(awk -F'|' '!seen[$1]++ {print $1}' "$tmp/phases")
	echo "-- strace timeline (median of $STRACE_RUNS):"
	for r in "${strace_rows[@]}"; do echo "   ${r%%|*}: ${r##*|}"; done
	# the cgroup's own cost: its syscalls under /sys/fs/cgroup, with -y (paths of fds) and
	# -T (time in each), in one run with the real cgroups
	cg_rows=()
	if [ -n "$cg_med" ]; then
		BERTH_HOME=$tmp/cgroup BERTH_CGROUP_ROOT='' strace -f $seccomp -y -T -o "$tmp/cg.strace" \
			-e trace=mkdir,mkdirat,rmdir,unlinkat,openat,write,read \
			"$berth" run "$spec" --wait >/dev/null 2>&1 || die "berth run under strace (cgroup) failed"
		while read -r sc n ms; do
			cg_rows+=("$sc|$n|$ms")
		done < <(awk 'index($0, "/sys/fs/cgroup/") && match($0, /<[0-9.]+>$/) {
				d = substr($0, RSTART + 1, RLENGTH - 2)
				sc = $0; sub(/^[0-9]+ +/, "", sc)
				# a call another process interrupted ends as "<... NAME resumed>"
				if (sc ~ /^<\.\.\. /) { sub(/^<\.\.\. /, "", sc); sub(/ resumed>.*/, "", sc) }
				sub(/\(.*/, "", sc)
				n[sc]++; t[sc] += d; N++; T += d
			}
			END {for (k in n) printf "%s %d %.2f\n", k, n[k], 1000 * t[k]; printf "all %d %.2f\n", N, 1000 * T}' \
			"$tmp/cg.strace" | sort)
		echo "-- cgroup syscalls of one run: $(printf '%s; ' "${cg_rows[@]}")"
	fi
fi

# ---- 4. profile ----------------------------------------------------------------------------------
perf_rows=()
perf_note=
if [ "${BENCH_NO_PERF:-0}" = 1 ]; then
	perf_note="skipped (BENCH_NO_PERF=1)"
elif ! command -v perf >/dev/null; then
	perf_note="skipped: perf is not installed"
elif ! perf record -e cpu-clock -o "$tmp/probe.perf" true >/dev/null 2>&1; then
	perf_note="skipped: perf cannot sample here (perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null))"
else
	if ! perf stat -e instructions true 2>&1 | grep -q 'instructions' ||
		perf stat -e instructions true 2>&1 | grep -q 'not supported'; then
		perf_note="no hardware counters (perf stat -e instructions: not supported): sampled on cpu-clock"
	fi
	pf_home=$tmp/perf
	BERTH_HOME=$pf_home "$berth" run "$spec" --wait >/dev/null 2>&1
	# the supervisors outlive berth run; the sleep lets the last one finish under perf
	BERTH_HOME=$pf_home perf record -e cpu-clock -F 10000 --call-graph dwarf,16384 -o "$tmp/launch.perf" -- \
		sh -c "for i in \$(seq $PERF_LAUNCHES); do '$berth' run '$spec' --wait >/dev/null 2>&1; done; sleep 0.3" \
		>"$tmp/perf.log" 2>&1 || die "perf record failed: $(cat "$tmp/perf.log")"
	# berth's processes only (berth run, the middle process, the supervisors): the sh loop,
	# seq, sleep and /bin/true are left out, and the shares are of berth's samples
	perf report -i "$tmp/launch.perf" --children --sort comm,sym --stdio -g none \
		--percent-limit 0 >"$tmp/perf.sym" 2>/dev/null || true
	perf report -i "$tmp/launch.perf" --no-children --sort comm,dso --stdio -g none \
		>"$tmp/perf.dso" 2>/dev/null || true
	perf report -i "$tmp/launch.perf" --no-children -n --sort comm --stdio -g none \
		>"$tmp/perf.comm" 2>/dev/null || true
	nsamples=$(awk '$1 ~ /%$/ && $3 == "berth" {print $2}' "$tmp/perf.comm")
	berth_pct=$(awk '$1 ~ /%$/ && $3 == "berth" {sub(/%/, "", $1); print $1}' "$tmp/perf.comm")
	[ -n "$nsamples" ] && [ -n "$berth_pct" ] || die "no samples of berth in the profile"
	mkdir -p "$(dirname "$OUT")"
	{ echo "# perf report --no-children -n --sort comm"; cat "$tmp/perf.comm"
	  echo "# perf report --no-children --sort comm,dso"; cat "$tmp/perf.dso"
	  echo "# perf report --children --sort comm,sym"; cat "$tmp/perf.sym"; } >"${OUT%.md}.perf.txt"
	cpu_per=$(awk -v n="$nsamples" -v l="$PERF_LAUNCHES" 'BEGIN {printf "%.1f", n / 10 / l}')
	# self share of a DSO, inclusive share of a symbol (summed over the entries that have
	# it: the unwinder splits some callers), in % of berth's samples
	dso_share() {
		awk -v s="$1" -v b="$berth_pct" '$1 ~ /%$/ && $2 == "berth" && index($3, s) == 1 {sub(/%/, "", $1); t += $1}
			END {printf "%.1f", 100 * t / b}' "$tmp/perf.dso"
	}
	share() {
		awk -v s="$1" -v b="$berth_pct" '$1 ~ /%$/ && $3 == "berth" && $NF == s {sub(/%/, "", $1); t += $1}
			END {printf "%.1f", 100 * t / b}' "$tmp/perf.sym"
	}
	perf_rows+=("self: the kernel ([kernel.kallsyms])|$(dso_share '[kernel')")
	perf_rows+=("self: the dynamic loader (ld-linux: relocation, symbol lookup)|$(dso_share ld-linux)")
	perf_rows+=("self: libsqlite3 (a shared object; linked in, it counts as berth's below)|$(dso_share libsqlite3)")
	perf_rows+=("self: libc|$(dso_share libc.so)")
	perf_rows+=("self: berth's own code, with the libraries linked into it|$(dso_share berth)")
	perf_rows+=("self: the other libraries|$(awk -v b="$berth_pct" '$1 ~ /%$/ && $2 == "berth" && $3 !~ /^(\[kernel|ld-linux|libsqlite3|libc\.so|berth$)/ {sub(/%/, "", $1); t += $1} END {printf "%.1f", 100 * t / b}' "$tmp/perf.dso")")
	for s in "exc_page_fault|incl: page faults (many from the loader)" \
		"ksys_mmap_pgoff|incl: mmap" "__x64_sys_execve|incl: execve" "kernel_clone|incl: fork/clone" \
		"do_exit|incl: exit (unmapping everything)" \
		"cmd_run|incl: cmd_run (berth run, after the loader)" \
		"berth_local_supervise|incl: berth_local_supervise (a supervisor spawned as berth __supervise, after the loader)" \
		"local_supervise_forked|incl: local_supervise_forked (the supervisor berth run --wait forks)" \
		"seccomp_load|incl: seccomp_load (the run's filter, made into BPF in its process)" \
		"store_open|incl: store_open (sqlite open, PRAGMAs, schema check)" \
		"sqlite3RunParser|incl: SQLite compiling SQL (PRAGMAs, schema, statements)" \
		"local_node_detect|incl: local_node_detect (capacity, nvidia-smi probe)" \
		"__x64_sys_fdatasync|incl: fdatasync" "signal_all|incl: signal_all (scan of /proc)" \
		"do_task_stat|incl: reading /proc/N/stat" "local_schedule_run|incl: local_schedule_run"; do
		perf_rows+=("${s#*|}|$(share "${s%%|*}")")
	done
	echo "-- perf: $nsamples samples of berth processes at 10 kHz over $PERF_LAUNCHES launches (${cpu_per} ms of CPU per launch)"
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- the table -------------------------------------------------------------------------------------
# the overhead: the median of the rounds' own
mid() { tr ' ' '\n' <<<"$1" | med_of | cut -d' ' -f1; }
over_rl=$(mid "${over_rounds[rlimits]}")
over_cg=
[ -z "$cg_med" ] || over_cg=$(mid "${over_rounds[cgroup]}")
{
	echo "## Local launch latency"
	echo
	echo "- Machine: $ncpu CPUs ($cpu_model), $(uname -sr); $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "- Build: \`make -j2\` (-O2), $("$berth" --version 2>/dev/null | head -n1)"
	echo "- Command: \`bench/launch.sh\`; timing: \`$hf_cmd\`, $ROUNDS rounds of every row"
	echo "- Spec: \`function: {name: t, image: x, command: [/bin/true]}\`, \`resources: {cpu: 100m, mem: 32Mi}\`; a fresh BERTH_HOME per variant"
	echo
	echo "| what | median ms | min ms | max ms | runs | command |"
	echo "|---|---|---|---|---|---|"
	for r in "${rows[@]}"; do
		IFS='|' read -r w m lo hi n c <<<"$r"
		echo "| $w | $m | $lo | $hi | $n | \`$c\` |"
	done
	echo "| **overhead, no cgroup** (median of the rounds' berth median - /bin/true median: ${over_rounds[rlimits]// /, }) | **$over_rl** | | | | target: 5 |"
	if [ -n "$over_cg" ]; then
		echo "| **overhead, cgroup $cg_ver** (the same: ${over_rounds[cgroup]// /, }) | **$over_cg** | | | | target: 5 |"
	else
		echo "| overhead, real cgroups | $cg_note | | | | |"
	fi
	if [ -n "$base" ]; then
		echo "| baseline overhead, no cgroup (${over_rounds[base-rlimits]// /, }) | $(mid "${over_rounds[base-rlimits]}") | | | | |"
		[ -n "$cg_note" ] ||
			echo "| baseline overhead, cgroup $cg_ver (${over_rounds[base-cgroup]// /, }) | $(mid "${over_rounds[base-cgroup]}") | | | | |"
	fi
	echo
	echo "Parts ($PART_RUNS runs each; each row adds to the one above it unless it says otherwise):"
	echo
	echo "| part | median ms | min ms | max ms | command |"
	echo "|---|---|---|---|---|"
	for r in "${parts[@]}"; do
		IFS='|' read -r w m lo hi c <<<"$r"
		echo "| $w | $m | $lo | $hi | \`$c\` |"
	done
	echo "| this machine's floor for the overhead (the last floor part - /bin/true beside it; berth's own share is the overhead less this) | $(awk -v a="$floor_med" -v b="$floor_true" 'BEGIN {printf "%.2f", a - b}') | | | |"
	echo "| nvidia-smi probe (get run ID, with - without) | $(awk -v a="$get_med" -v b="$nogpu_get_med" 'BEGIN {printf "%.2f", a - b}') | | | |"
	echo "| fdatasync of a new file / fsync of its dir (what a new WAL costs) | $sync_file / $sync_dir | | | syncprobe (median of 21) |"
	echo "| inotify_init1 + inotify_add_watch on a fresh dir / close of that fd (min .. max), one process each: what a waiter in another process (berth wait, berth logs -f) pays per wakeup; berth run --wait has its supervisor's pipe | $ino_add / $ino_close ($ino_close_min .. $ino_close_max) | | | inoprobe (median of 21) |"
	echo "| mkdir runs/ID + create supervisor.log, log, done (the data dir is on $fs_type) | $inode_ms | | | inodeprobe (median of 21) |"
	echo "| one scan of /proc/N/stat as signal_all does ($nprocs processes; the supervisor does 2 per run) | $scan_ms | | | procscan (median of 21) |"
	if [ ${#strace_rows[@]} -gt 0 ]; then
		echo
		echo "Timeline of one \`berth run --wait\` under \`strace -f ${seccomp:+$seccomp }-tt -T -y -e trace=execve,clone,clone3,fork,vfork,wait4,inotify_add_watch,poll,openat,fsync,fdatasync,close\` (the brief's list plus close, and -y to name each fd; median of $STRACE_RUNS runs; strace slows each traced syscall, so the sum is larger than the untraced latency):"
		echo
		echo "| phase | ms |"
		echo "|---|---|"
		for r in "${strace_rows[@]}"; do echo "| ${r%%|*} | ${r##*|} |"; done
	fi
	if [ ${#cg_rows[@]} -gt 0 ]; then
		echo
		echo "The cgroup's own syscalls in one \`berth run --wait\` with the real cgroups (strace -f -y -T, the calls on paths under /sys/fs/cgroup; time inside each call):"
		echo
		echo "| syscall | calls | ms |"
		echo "|---|---|---|"
		for r in "${cg_rows[@]}"; do IFS='|' read -r a n m <<<"$r"; echo "| $a | $n | $m |"; done
	fi
	echo
	if [ ${#perf_rows[@]} -gt 0 ]; then
		echo "Profile: \`perf record -e cpu-clock -F 10000 --call-graph dwarf\` over $PERF_LAUNCHES launches; the berth processes (berth run and the supervisors) took $nsamples samples, ${cpu_per} ms of CPU per launch (perf's own sampling inflates it). ${perf_note:+($perf_note.)} Share of those samples, self (by DSO) or inclusive (by function):"
		echo
		echo "| where | % of berth's CPU |"
		echo "|---|---|"
		for r in "${perf_rows[@]}"; do echo "| ${r%%|*} | ${r##*|} |"; done
		echo
	else
		echo "Profile: $perf_note"
	fi
} >"$tmp/table.md"
mkdir -p "$(dirname "$OUT")"
cp "$tmp/table.md" "$OUT"
echo
cat "$OUT"
echo
echo "(written to $OUT; the first strace and the perf report next to it)"

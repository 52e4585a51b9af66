#!/usr/bin/env bash
# Hostile specs and runs against the local backend: injection through the
# strings that reach it, one project reading another's secrets, /proc or
# shared volumes, host ids, fork bombs, disk fill, file modes, hardening.
# Each expects a refusal with its position, or a contained run, and the host
# untouched. Prints "ok NAME" / "FAIL NAME" / "skip NAME (why)" per check.
#   tests/security.sh BERTH
set -u
berth=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
tmp=$(mktemp -d)
# a run id of this script's own for the MPI workers it starts by hand (another test run
# at the same time takes other names)
fakeid=t$(od -An -N5 -tx1 /dev/urandom | tr -d ' \n')
export BERTH_HOME=$tmp/home
unset BERTH_CONFIG BERTH_CGROUP_ROOT BERTH_GPU_DIR
victim=$tmp/victim # a host directory no run may touch
pub=/mnt/berth-sec-pub-$$ # a directory any run may write in, as /tmp is on a host
mounts=()
cleanup() {
	for id in $("$berth" get runs --state Running -o json 2>/dev/null | sed -n 's/.*"id": "\(.*\)".*/\1/p'); do
		"$berth" stop "$id" --grace 0 >/dev/null 2>&1
	done
	for m in "${mounts[@]}"; do umount -l "$m" 2>/dev/null; done
	rm -rf "$tmp" "$pub"
}
trap cleanup EXIT
cd "$tmp" || exit 1
root=false
[ "$(id -u)" = 0 ] && root=true

ok() { echo "ok security $1"; }
fail() {
	echo "FAIL security $1: $2"
	[ -f "$tmp/out" ] && sed 's/^/    /' "$tmp/out" | head -15
}
skip() { echo "skip security $1 ($2)"; }
field() {
	"$berth" get run "$1" -o json |
		sed -n -e "s/^ *\"$2\": \"\(.*\)\",\{0,1\}$/\1/p" -e "s/^ *\"$2\": \([0-9a-z.-]*\),\{0,1\}$/\1/p"
}
# spec NAME CMD [EXTRA YAML]
spec() {
	cat >"$1.yaml" <<EOF
function:
  name: $1
  command: [sh, -c, '$2']
${3:-}
EOF
}
wait_state() { # ID STATE: up to 20 s
	for _ in $(seq 200); do [ "$(field "$1" state)" = "$2" ] && return 0; sleep 0.1; done
	return 1
}
mkdir -p "$victim/keep" && echo precious >"$victim/keep/file" && chmod 0700 "$victim"
victim_intact() {
	[ "$(cat "$victim/keep/file" 2>/dev/null)" = precious ] && [ "$(stat -c '%a %g' "$victim")" = "700 0" ]
}

# ---- 1. injection: a tab or newline in a string is data, never the supervisor's syntax --------------
cat >inject.yaml <<EOF
function: {name: inject, command: ["true"]}
volumes:
- volume_type: empty_dir
  name: ok
  mount_path: "/mnt/ok\trun\t0\ndir\tx\t$victim\t/mnt/inj"
EOF
"$berth" run inject.yaml >out 2>&1
st=$?
if [ $st = 2 ] && grep -q '^inject.yaml:5:[0-9]*: volumes\[0\].mount_path: .*control character' out && victim_intact &&
	[ -z "$("$berth" get runs | grep inject)" ]; then
	ok injection-mount-path-refused
else
	fail injection-mount-path-refused "status $st"
fi
# every string field that reaches the local backend
refused=0 fields=0
for f in 'name: "a\nb"' 'function: {name: "x\ty", command: ["true"]}' \
	'volumes: [{volume_type: shared_volume, name: "d\n", mount_path: /mnt/d, spec: {claim_name: c}}]' \
	'volumes: [{volume_type: shared_volume, name: d, mount_path: /mnt/d, spec: {claim_name: "c\tx"}}]' \
	'volumes: [{volume_type: secret, name: d, mount_path: /mnt/d, spec: {name: "../../../etc/passwd"}}]' \
	'volumes: [{volume_type: config_map, name: d, mount_path: /mnt/d, spec: {name: "../../etc"}}]' \
	'envs: [{name: "A=B", value: c}]' 'secrets: ["s\nt"]' 'project: "p\n1"'; do
	printf 'function: {name: inj, command: ["true"]}\n%s\n' "$f" >inj.yaml
	# a later key wins in no parser: the function line above is only a default
	grep -q '^function:' <<<"$f" && printf '%s\n' "$f" >inj.yaml
	"$berth" run inj.yaml >out 2>&1
	st=$?
	fields=$((fields + 1))
	if [ $st = 2 ] && grep -q '^inj.yaml:[0-9]*:[0-9]*: ' out && victim_intact; then
		refused=$((refused + 1))
	else
		fail injection-field "$f: status $st"
	fi
done
if [ $refused = $fields ] && [ -z "$("$berth" get runs | grep ' inj-')" ]; then
	ok injection-every-field-refused-with-position
else
	fail injection-every-field-refused-with-position "$refused of $fields refused"
fi
# a NUL is refused, not cut: "/mnt/ok\0/etc" is not "/mnt/ok"
printf 'function: {name: nul, command: ["true"]}\nvolumes: [{volume_type: empty_dir, name: a, mount_path: "/mnt/ok\\0/etc"}]\n' >nul.yaml
"$berth" run nul.yaml >out 2>&1
if [ $? = 2 ] && grep -q '^nul.yaml:2:[0-9]*: .*NUL' out; then ok nul-refused; else fail nul-refused "-"; fi

# defence in depth: a volume table that names a host directory (a store written by
# hand) fails the run before anything is made, chowned or removed
if $root; then
	spec vhold 'sleep 1' 'resources: {cpu: "2"}'
	spec vtab 'true' 'resources: {cpu: "2"}
volumes: [{volume_type: empty_dir, name: s, mount_path: /mnt/berth-sec-s}]'
	h=$("$berth" run vhold.yaml 2>/dev/null)
	q=$("$berth" run vtab.yaml 2>/dev/null)
	python3 - "$BERTH_HOME/berth.db" "$q" "$victim" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=10)
vols = b"\0".join(x.encode() for x in ["dir", "s", sys.argv[3], "/mnt/berth-sec-s", "run", "0"]) + b"\0"
db.execute("UPDATE runs SET volumes = ? WHERE id = ?", (vols, sys.argv[2]))
db.commit()
PY
	wait_state "$q" Failed
	if victim_intact && field "$q" reason | grep -q 'names a volume berth would not make'; then
		ok volume-table-outside-the-data-dir
	else
		fail volume-table-outside-the-data-dir "$(field "$q" state): $(field "$q" reason)"
	fi
else
	skip volume-table-outside-the-data-dir "berth is not root"
fi

# ---- 2. one project's secrets, /proc and shared claims are not another's -------------------------------
printf 'p1-secret-value-91' | "$berth" secrets set tok --project p1 >/dev/null 2>&1
printf 'p1-file-secret-92' | "$berth" secrets set key --project p1 >/dev/null 2>&1
spec holder 'echo ready; sleep 30' 'project: p1
secrets: [tok]
volumes: [{volume_type: secret, name: k, mount_path: /mnt/berth-sec-key, spec: {name: key}}]'
h=$("$berth" run holder.yaml 2>/dev/null)
wait_state "$h" Running
for _ in $(seq 50); do "$berth" logs "$h" 2>/dev/null | grep -q ready && break; sleep 0.1; done
# the holder's processes, as the host sees them
hp=$(pgrep -f 'sleep 30$' | head -1)
spec snoop "cat /proc/$hp/environ; cat /proc/$hp/root/mnt/berth-sec-key/key; ls /proc/$hp/root/; for p in /proc/[0-9]*; do cat \$p/environ; done; echo snooped" 'project: p2'
s=$("$berth" run snoop.yaml --wait 2>/dev/null)
"$berth" logs "$s" >log
if [ -n "$hp" ] && grep -qx snooped log && ! grep -qa 'p1-secret-value-91\|p1-file-secret-92' log; then
	ok cross-project-proc-and-secret-volume
else
	cp log out
	fail cross-project-proc-and-secret-volume "holder pid $hp"
fi
"$berth" stop "$h" --grace 0 >/dev/null 2>&1
# a shared claim of p1 is not p2's claim of the same name
spec sw 'echo p1-data > /mnt/berth-sec-shared/f' 'project: p1
volumes: [{volume_type: shared_volume, name: d, mount_path: /mnt/berth-sec-shared, spec: {claim_name: team}}]'
spec sr 'cat /mnt/berth-sec-shared/f; ls /mnt/berth-sec-shared; echo listed' 'project: p2
volumes: [{volume_type: shared_volume, name: d, mount_path: /mnt/berth-sec-shared, spec: {claim_name: team}}]'
"$berth" run sw.yaml --wait >/dev/null 2>&1
r=$("$berth" run sr.yaml --wait 2>/dev/null)
"$berth" logs "$r" >log
if grep -qx listed log && ! grep -q p1-data log && [ -f "$BERTH_HOME/volumes/shared/p1/team/f" ]; then
	ok shared-claims-per-project
else
	cp log out
	fail shared-claims-per-project "$r"
fi

# ---- 3. ids: no host group, no root, ranges with position -----------------------------------------------
spec gid42 'cat /etc/shadow' 'fs_group: 42'
"$berth" run gid42.yaml >out 2>&1
st1=$?
spec uid0 'id' 'run_as_user: 0'
"$berth" run uid0.yaml >>out 2>&1
st2=$?
if [ $st1 = 2 ] && [ $st2 = 2 ] && grep -q '^gid42.yaml:4:[0-9]*: fs_group: ' out &&
	grep -q '^uid0.yaml:4:[0-9]*: run_as_user: ' out; then
	ok host-ids-refused-with-position
else
	fail host-ids-refused-with-position "status $st1 $st2"
fi
if $root; then
	# no run_as_user: not root, but the project's own uid; two projects, two uids
	spec who 'id -u; id -g' 'project: p1'
	a=$("$berth" run who.yaml --wait 2>/dev/null)
	sed -i 's/project: p1/project: p2/' who.yaml
	b=$("$berth" run who.yaml --wait 2>/dev/null)
	ua=$("$berth" logs "$a" | head -1)
	ub=$("$berth" logs "$b" | head -1)
	if [ -n "$ua" ] && [ -n "$ub" ] && [ "$ua" != 0 ] && [ "$ub" != 0 ] && [ "$ua" != "$ub" ] &&
		[ "$ua" -ge 1000 ] && [ "$ub" -ge 1000 ]; then
		ok uid-per-project-not-root
	else
		fail uid-per-project-not-root "p1 ran as $ua, p2 as $ub"
	fi
	# a uid range used up: the next project is refused with the reason, not given a shared uid
	printf 'local: {uid_range: "2000000000-2000000000"}\n' >onuid.yaml
	spec q1 'true' 'project: q1'
	spec q2 'true' 'project: q2'
	BERTH_HOME=$tmp/onuid BERTH_CONFIG=$tmp/onuid.yaml "$berth" run q1.yaml --wait >/dev/null 2>&1
	q1=$?
	BERTH_HOME=$tmp/onuid BERTH_CONFIG=$tmp/onuid.yaml "$berth" run q2.yaml >out 2>&1
	q2=$?
	if [ $q1 = 0 ] && [ $q2 = 2 ] && grep -q 'no uid left for project "q2"' out; then
		ok uid-range-used-up
	else
		fail uid-range-used-up "q1 status $q1, q2 status $q2"
	fi
	# a spec may not take a project's uid
	spec steal 'id' "run_as_user: $ua"
	"$berth" run steal.yaml >out 2>&1
	if [ $? = 2 ] && grep -q 'local.uid_range' out; then ok project-uid-not-for-specs; else
		fail project-uid-not-for-specs "-"
	fi
else
	skip uid-per-project-not-root "berth is not root"
	skip project-uid-not-for-specs "berth is not root"
	skip uid-range-used-up "berth is not root"
fi

# a run whose supervisor saw it end but could not write the store (a full disk), then died:
# recovery records the outcome the done marker holds, not "supervisor died"
spec marked 'sleep 30'
id=$("$berth" run marked.yaml 2>/dev/null)
wait_state "$id" Running
# Running is recorded by the scheduler; the attempt, once the supervisor started the command
# (a supervisor killed before would leave no attempt, and no exit code to show)
for _ in $(seq 50); do [ "$(field "$id" attempts)" = 1 ] && break; sleep 0.1; done
# the supervisor, not the run's init (a clone of it, with the same command line): the
# oldest of the two, whatever their pids (which one is lower depends on where pids wrapped)
sp=$(pgrep -o -f "__supervise $id")
[ -n "$sp" ] && kill -9 "$sp"
for _ in $(seq 50); do pgrep -f "__supervise $id" >/dev/null || break; sleep 0.1; done
printf '3 7 0 0\nexit code 7' >"$BERTH_HOME/runs/$id/done"
if [ -n "$sp" ] && [ "$(field "$id" state)" = Failed ] && [ "$(field "$id" exit_code)" = 7 ] &&
	[ "$(field "$id" reason)" = "exit code 7" ]; then
	ok outcome-recovered-from-the-done-marker
else
	fail outcome-recovered-from-the-done-marker "$(field "$id" state): $(field "$id" reason)"
fi

# ---- 4. processes: a fork bomb is held by pids.max ---------------------------------------------------------
cat >pids.yaml <<'EOF'
limits: {pids: 40}
EOF
spec bomb '(i=0; while [ $i -lt 200 ]; do sleep 20 & i=$((i + 1)); done) 2>/dev/null; n=0; for p in /proc/[0-9]*; do n=$((n + 1)); done; echo procs=$n; kill 0'
id=$(BERTH_CONFIG=$tmp/pids.yaml "$berth" run bomb.yaml --wait 2>out)
"$berth" logs "$id" >log
n=$(sed -n 's/^procs=//p' log)
if [ "$(field "$id" enforcement)" = rlimits ]; then
	skip pids-limit "no writable cgroup"
elif [ -n "$n" ] && [ "$n" -le 40 ] && ! pgrep -f '^sleep 20$' >/dev/null; then
	ok pids-limit
else
	cp log out
	fail pids-limit "$n processes seen (limit 40)"
fi

# ---- 5. disk: limits hold, and a full data dir loses no run's end -------------------------------------------
spec fill 'dd if=/dev/zero bs=1M count=60 2>/dev/null; sleep 5' 'resources: {disk: 10Mi}'
id=$("$berth" run fill.yaml --wait 2>out)
logsize=$(stat -c %s "$BERTH_HOME/runs/$id/log" 2>/dev/null || echo 0)
if [ "$(field "$id" state)" = Failed ] && [ "$logsize" -le $((10 << 20)) ] &&
	field "$id" reason | grep -q '^Evicted: ephemeral storage: .*disk limit 10Mi'; then
	ok disk-limit-evicts
else
	fail disk-limit-evicts "$(field "$id" state): $(field "$id" reason)"
fi
spec efill 'dd if=/dev/zero of=/mnt/berth-sec-e/f bs=1M count=30 2>/dev/null; sleep 5' \
	'volumes: [{volume_type: empty_dir, name: scratch, mount_path: /mnt/berth-sec-e, spec: {size: 1Mi}}]'
id=$("$berth" run efill.yaml --wait 2>out)
if [ "$(field "$id" state)" = Failed ] &&
	field "$id" reason | grep -q '^Evicted: volume .*scratch.* used .*, over its size 1Mi'; then
	ok empty-dir-size-evicts
else
	fail empty-dir-size-evicts "$(field "$id" state): $(field "$id" reason)"
fi
if $root && mkdir -p "$tmp/small" && mount -t tmpfs -o size=24m tmpfs "$tmp/small" 2>/dev/null; then
	mounts+=("$tmp/small")
	spec flood 'dd if=/dev/zero bs=1M count=100; echo after-the-flood' 'project: p1'
	id=$(BERTH_HOME=$tmp/small/home timeout 120 "$berth" run flood.yaml --wait 2>out)
	st=$(BERTH_HOME=$tmp/small/home field "$id" state)
	reason=$(BERTH_HOME=$tmp/small/home field "$id" reason)
	if [ -n "$id" ] && { [ "$st" = Succeeded ] || [ "$st" = Failed ]; } && ! grep -q 'supervisor died' <<<"$reason"; then
		ok full-data-dir-keeps-the-outcome
	else
		fail full-data-dir-keeps-the-outcome "$st: $reason"
	fi
else
	skip full-data-dir-keeps-the-outcome "no tmpfs mount (berth is not root)"
fi

# a mount path that one run makes a symbolic link, after berth made it for another: berth
# neither makes nor removes anything through it (each part is opened without following links)
if $root; then
	mkdir -p -m 1777 "$pub" && mkdir -p "$tmp/victim2/y"
	spec mkown "mkdir -m 755 $pub/p1dir" 'project: p1'
	"$berth" run mkown.yaml --wait >/dev/null 2>&1
	spec swap "cd $pub/p1dir && mv x x.old && ln -s $tmp/victim2 x" "project: p1
volumes: [{volume_type: empty_dir, name: s, mount_path: $pub/p1dir/x/y}]"
	id=$("$berth" run swap.yaml --wait 2>out)
	ln -s "$tmp/victim2" "$pub/p1dir/z"
	spec through "true" "project: p1
volumes: [{volume_type: empty_dir, name: s, mount_path: $pub/p1dir/z/new}]"
	id2=$("$berth" run through.yaml --wait 2>>out)
	if [ -d "$tmp/victim2/y" ] && [ ! -e "$tmp/victim2/new" ] && [ "$(field "$id" state)" = Succeeded ] &&
		[ "$(field "$id2" state)" = Failed ] && field "$id2" reason | grep -q 'symbolic link'; then
		ok mount-path-links-not-followed
	else
		fail mount-path-links-not-followed "$(ls "$tmp/victim2"); $(field "$id" state); $(field "$id2" reason)"
	fi
else
	skip mount-path-links-not-followed "berth is not root"
fi
printf 'function: {name: slash, command: ["true"]}\nvolumes: [{volume_type: secret, name: k, mount_path: /, spec: {name: tok}}]\n' >slash.yaml
"$berth" run slash.yaml >out 2>&1
if [ $? = 2 ] && grep -q '^slash.yaml:2:[0-9]*: volumes\[0\].mount_path: "/" is the root of the file system' out; then
	ok mount-path-root-refused
else
	fail mount-path-root-refused "-"
fi

# ---- 6. hardening: no new privileges, seccomp, no capabilities, no namespaces ---------------------------------
spec hard 'grep -E "^(NoNewPrivs|Seccomp|CapBnd|CapEff|CapPrm):" /proc/self/status; unshare -U true 2>/dev/null && echo userns-made; echo pid1=$(cat /proc/1/comm); echo done'
id=$("$berth" run hard.yaml --wait 2>/dev/null)
"$berth" logs "$id" >log
if grep -qP '^NoNewPrivs:\t1$' log && grep -qP '^Seccomp:\t2$' log && grep -qP '^CapBnd:\t0+$' log &&
	grep -qP '^CapEff:\t0+$' log && ! grep -q userns-made log && grep -qx done log; then
	ok hardening
else
	cp log out
	fail hardening "$id"
fi
if $root; then
	if grep -qx 'pid1=berth-init' log; then ok pid-namespace; else cp log out; fail pid-namespace "$id"; fi
	# a setuid program gives nothing: su to root fails
	spec su 'su -c "id -u" root </dev/null 2>&1; echo su=$?'
	id=$("$berth" run su.yaml --wait 2>/dev/null)
	"$berth" logs "$id" >log
	if ! grep -qx 0 log && grep -q '^su=[1-9]' log; then ok setuid-gives-nothing; else
		cp log out
		fail setuid-gives-nothing "$id"
	fi
	# its /tmp and /dev/shm are its own, and go with it; so does its work dir, which keeps its
	# path (a data dir under /tmp: the path's parts in its own /tmp are a read-only tmpfs)
	spec own 'echo mine > /tmp/berth-sec-own; echo v > /var/tmp/berth-sec-own; echo shm > /dev/shm/berth-sec-own; stat -c "tmp=%a %u" /tmp; pwd; touch w && echo work-rw; touch "$(dirname "$PWD")/x" 2>/dev/null || echo path-ro'
	id=$("$berth" run own.yaml --wait 2>/dev/null)
	# removed just after the run is done (its supervisor's last step)
	for _ in $(seq 50); do [ -e "$BERTH_HOME/runs/$id/work" ] || break; sleep 0.1; done
	if [ "$(field "$id" state)" = Succeeded ] && [ ! -e /tmp/berth-sec-own ] && [ ! -e /dev/shm/berth-sec-own ] &&
		[ ! -e /var/tmp/berth-sec-own ] && "$berth" logs "$id" | grep -q '^tmp=700 [1-9]' &&
		[ ! -e "$BERTH_HOME/runs/$id/tmp" ] && [ ! -e "$BERTH_HOME/runs/$id/work" ] &&
		"$berth" logs "$id" | grep -qx "$BERTH_HOME/runs/$id/work" && "$berth" logs "$id" | grep -qx work-rw &&
		"$berth" logs "$id" | grep -qx path-ro; then
		ok own-tmp-shm-and-work-dir
	else
		fail own-tmp-shm-and-work-dir "$id: $(field "$id" state)"
	fi
	# a data dir under /dev/shm, which the run has a tmpfs of its own of: its work dir and
	# a volume mounted under /dev/shm are made again there (never on the host's)
	shm=$(mktemp -d /dev/shm/berth-sec-home.XXXXXX)
	spec shmhome 'pwd; touch w && echo work-rw; echo v > /dev/shm/berth-sec-vol-'$$'/f && echo vol-rw' \
		"volumes: [{name: v, volume_type: empty_dir, mount_path: /dev/shm/berth-sec-vol-$$}]"
	id=$(BERTH_HOME=$shm/home "$berth" run shmhome.yaml --wait 2>out)
	BERTH_HOME=$shm/home "$berth" logs "$id" >log 2>&1
	if [ "$(BERTH_HOME=$shm/home field "$id" state)" = Succeeded ] && grep -qx "$shm/home/runs/$id/work" log &&
		grep -qx work-rw log && grep -qx vol-rw log && [ ! -e "/dev/shm/berth-sec-vol-$$" ]; then
		ok data-dir-under-dev-shm
	else
		cat log >>out
		fail data-dir-under-dev-shm "$id: $(BERTH_HOME=$shm/home field "$id" reason)"
	fi
	rm -rf "$shm" "/dev/shm/berth-sec-vol-$$"
	# a run as root itself (a policy may allow it) starts, on a kernel without
	# /proc/sysrq-trigger too; it works in its submitter's directory, and one under /tmp that
	# is gone by the time the run starts (it was queued) is no failure: it starts in "/"
	printf 'security: {disable_root: false, run_as_user_range: "0-0"}\nlocal: {capacity: {cpu: "1", mem: 1Gi}}\n' >root.yaml
	spec hold 'sleep 3' 'resources: {cpu: "1"}'
	spec rootcwd 'pwd' 'run_as_user: 0
resources: {cpu: "1"}'
	gone=$(mktemp -d /tmp/berth-sec-cwd.XXXXXX)
	hid=$(BERTH_CONFIG=$tmp/root.yaml "$berth" run hold.yaml 2>/dev/null)
	qid=$(cd "$gone" && BERTH_CONFIG=$tmp/root.yaml "$berth" run "$tmp/rootcwd.yaml" 2>"$tmp/out")
	rmdir "$gone"
	wait_state "$qid" Succeeded
	if [ -n "$qid" ] && [ "$(field "$qid" state)" = Succeeded ] && [ "$("$berth" logs "$qid")" = / ]; then
		ok gone-work-dir-starts-in-root
	else
		cat out >>log 2>/dev/null
		fail gone-work-dir-starts-in-root "$hid $qid: $(field "$qid" state): $(field "$qid" reason): log [$("$berth" logs "$qid" 2>&1)]"
	fi
	# its init killed from the host: the run failed, by that signal, not "exit code 0"
	spec initkill 'sleep 30'
	id=$("$berth" run initkill.yaml 2>/dev/null)
	wait_state "$id" Running
	for _ in $(seq 50); do
		p=$(for q in $(pgrep -x berth-init); do grep -qa "$id" "/proc/$q/cmdline" && echo "$q"; done)
		[ -n "$p" ] && break
		sleep 0.1
	done
	[ -n "$p" ] && kill -9 $p
	wait_state "$id" Failed
	if [ -n "$p" ] && [ "$(field "$id" state)" = Failed ] && field "$id" reason | grep -q 'signal 9'; then
		ok init-killed-is-failed
	else
		fail init-killed-is-failed "init $p: $(field "$id" state): $(field "$id" reason)"
	fi
else
	skip pid-namespace "berth is not root"
	skip setuid-gives-nothing "berth is not root"
	skip own-tmp-shm-and-work-dir "berth is not root"
	skip init-killed-is-failed "berth is not root"
fi

# ---- 7. files: 0600/0700 whatever the umask or an existing data dir's mode ------------------------------------
pre=$tmp/premade
mkdir -p "$pre" && chmod 0755 "$pre"
(umask 022 && BERTH_HOME=$pre "$berth" run hard.yaml --wait >/dev/null 2>&1)
dirmode=$(stat -c %a "$pre")
want=700
$root && want=711 # runs of other users pass through to their work dir
bad=$(find "$pre" -maxdepth 1 -name 'berth.db*' ! -perm 600 | wc -l)
if [ "$dirmode" = "$want" ] && [ "$bad" = 0 ] && [ -f "$pre/berth.db-wal" ] &&
	[ "$(stat -c %a "$pre/volumes")" = 700 ] &&
	[ -z "$(find "$pre/runs" -type f ! -perm 600)" ]; then
	ok file-modes
else
	ls -la "$pre" "$pre"/runs/* >out 2>&1
	fail file-modes "data dir $dirmode (want $want), $bad store files not 0600"
fi
# the supervisor, which holds the secrets, is not dumpable: another process of its
# user cannot read its environment or memory
if $root && command -v setpriv >/dev/null; then
	nr=$tmp/nr
	mkdir -p "$nr" && cp "$berth" "$nr/berth" && chown -R 1000:1000 "$nr" && chmod 755 "$tmp"
	spec nrsleep 'sleep 20'
	chmod 644 nrsleep.yaml
	asuser() { setpriv --reuid 1000 --regid 1000 --clear-groups env -u BERTH_CONFIG HOME="$nr" BERTH_HOME="$nr/home" "$@"; }
	id=$(cd "$nr" && asuser "$nr/berth" run "$tmp/nrsleep.yaml" 2>/dev/null)
	sleep 0.5
	sp=$(pgrep -o -f "__supervise $id") # the supervisor, not its init clone
	if [ -n "$sp" ] && ! asuser cat "/proc/$sp/environ" >/dev/null 2>&1 && asuser cat /proc/self/environ >/dev/null 2>&1; then
		ok supervisor-not-dumpable
	else
		fail supervisor-not-dumpable "supervisor $sp"
	fi
	(cd "$nr" && asuser "$nr/berth" stop "$id" --grace 0 >/dev/null 2>&1)
else
	skip supervisor-not-dumpable "needs root and setpriv"
fi

# ---- 8. distributed jobs: another user's process cannot take a worker's MPI socket ---------------------------
# A run's id is there to see (its cgroups, berth/ID.RANK, are listed to every user), and
# an abstract socket's name belongs to whoever binds it first: the names a worker listens
# on cannot be known before it binds them.
if $root && command -v mpirun >/dev/null && command -v setpriv >/dev/null; then
	cat >squat.yaml <<'EOF'
function: {name: squat, command: [sh, -c, 'echo "rank $OMPI_COMM_WORLD_RANK in worker $BERTH_WORKER"']}
action: job
replicas: 2
distributed: {launcher: mpi}
EOF
	sid=squatted$$
	setpriv --reuid 1000 --regid 1000 --clear-groups /usr/bin/python3 -c '
import socket, sys, time
held = []
for name in ["berth-mpi/%s/%d" % (sys.argv[1], r) for r in range(4)] + ["berth-mpi/%s/1/" % sys.argv[1]]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.bind("\0" + name)
    s.listen(1)
    held.append(s)
print("bound", flush=True)
time.sleep(60)' "$sid" >squatter.out 2>&1 &
	squatter=$!
	for _ in $(seq 50); do grep -q bound squatter.out && break; sleep 0.1; done
	"$berth" run squat.yaml --run-id "$sid" --wait >out 2>&1
	"$berth" logs "$sid" >>out 2>&1
	kill "$squatter" 2>/dev/null
	wait "$squatter" 2>/dev/null
	if grep -q bound squatter.out && [ "$(field "$sid" state)" = Succeeded ] &&
		grep -q 'rank 1 in worker 1' out; then
		ok mpi-socket-not-squattable
	else
		fail mpi-socket-not-squattable "$(field "$sid" state) [$(field "$sid" reason)]"
	fi
else
	skip mpi-socket-not-squattable "needs root, setpriv and mpirun"
fi

# berth not root: the workers' /tmp is the machine's, where another user makes the name of a
# worker's Open MPI session directory first (a directory of its own, or a link to one open to
# all): the run neither fails nor puts its daemons' files there
if $root && command -v mpirun >/dev/null && command -v setpriv >/dev/null; then
	nr=$tmp/nr
	mkdir -p "$nr" && cp "$berth" "$nr/berth" && chown -R 1000:1000 "$nr" && chmod 755 "$tmp"
	pubtmp=$tmp/pubtmp
	mkdir -p "$pubtmp/trap" && chmod 1777 "$pubtmp" && chmod 777 "$pubtmp/trap"
	# worker 0's name a link to a directory open to all, worker 1's a directory of root's
	for name in berth-ompi berth-ompi-1000; do
		ln -s "$pubtmp/trap" "$pubtmp/$name-0"
		mkdir -m 700 "$pubtmp/$name-1"
	done
	cat >"$tmp/nrmpi.yaml" <<EOF
function: {name: nrmpi, command: [sh, -c, 'echo "rank \$OMPI_COMM_WORLD_RANK in worker \$BERTH_WORKER"']}
action: job
replicas: 2
distributed: {launcher: mpi}
envs: {TMPDIR: $pubtmp}
EOF
	chmod 644 "$tmp/nrmpi.yaml"
	asuser() { setpriv --reuid 1000 --regid 1000 --clear-groups env -u BERTH_CONFIG HOME="$nr" BERTH_HOME="$nr/home" "$@"; }
	id=$(cd "$nr" && asuser "$nr/berth" run "$tmp/nrmpi.yaml" --wait 2>"$tmp/out")
	st=$(cd "$nr" && asuser "$nr/berth" get run "$id" -o json | sed -n 's/^ *"state": "\(.*\)",\{0,1\}$/\1/p')
	(cd "$nr" && asuser "$nr/berth" logs "$id") >>out 2>&1
	if [ "$st" = Succeeded ] && grep -q 'rank 1 in worker 1' out && [ -z "$(ls -A "$pubtmp/trap")" ]; then
		ok mpi-session-dir-not-taken
	else
		ls -la "$pubtmp" "$pubtmp/trap" >>out 2>&1
		fail mpi-session-dir-not-taken "$id: $st"
	fi
else
	skip mpi-session-dir-not-taken "needs root, setpriv and mpirun"
fi
# a worker's server against requests of its own user that are not mpirun's agent's: the fds a
# malformed one carries are not kept, a peer that sends nothing does not hold it, an agent
# that goes leaves no daemon behind nor a worker spinning, and the agent takes worker-N alone
mpi_stub() { # starts a worker 1 of run $fakeid with token 1: its pid in $stub, its name in $name
	TMPDIR=$tmp BERTH_RUN_ID=$fakeid BERTH_WORKERS=2 BERTH_MPI_SLOTS=1 BERTH_WORKER=1 \
		BERTH_MPI_TOKEN=$(printf '%064d' 1) "$berth" __mpi-worker >stub.log 2>&1 &
	stub=$!
	name=
	for _ in $(seq 50); do
		name=$(grep -o "@berth-mpi/$fakeid/1/[0-9a-f]*" /proc/net/unix | head -1)
		[ -n "$name" ] && break
		sleep 0.1
	done
}
agent() { BERTH_RUN_ID=$fakeid BERTH_MPI_TOKEN=$(printf '%064d' 1) timeout 20 "$berth" __mpi-exec "$@"; }
mpi_stub
fds0=$(ls /proc/$stub/fd 2>/dev/null | wc -l)
/usr/bin/python3 -c '
import array, socket, sys
for n in (2, 4, 1, 3):
    for _ in range(40):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.connect("\0" + sys.argv[1][1:])
        s.sendmsg([b"x" * 10], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [0, 1, 2, 0][:n]))])
        s.close()' "$name" >out 2>&1
sleep 0.5
fds1=$(ls /proc/$stub/fd 2>/dev/null | wc -l)
if [ -n "$name" ] && [ "$fds1" -gt 0 ] && [ "$fds1" = "$fds0" ]; then
	ok mpi-worker-keeps-no-fd-of-a-refused-request
else
	fail mpi-worker-keeps-no-fd-of-a-refused-request "fds $fds0, then $fds1 after 160 malformed requests"
fi
# a peer that connects and sends nothing, then the agent
/usr/bin/python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect("\0" + sys.argv[1][1:])
time.sleep(30)' "$name" >/dev/null 2>&1 &
silent=$!
sleep 0.3
t0=$(date +%s)
got=$(agent worker-1 echo served 2>>out)
took=$(($(date +%s) - t0))
kill "$silent" 2>/dev/null
wait "$silent" 2>/dev/null
if [ "$got" = served ] && [ "$took" -lt 15 ]; then
	ok mpi-worker-not-held-by-a-silent-peer
else
	fail mpi-worker-not-held-by-a-silent-peer "[$got] after ${took}s"
fi
kill "$stub" 2>/dev/null
wait "$stub" 2>/dev/null
# the agent killed while its command (which ignores SIGTERM) runs
mpi_stub
BERTH_RUN_ID=$fakeid BERTH_MPI_TOKEN=$(printf '%064d' 1) timeout 1 "$berth" __mpi-exec worker-1 \
	"trap '' TERM; echo \$\$ >$tmp/daemon.pid; exec sleep 63" >>out 2>&1
running() { [ -n "$(awk '$3 != "Z"' "/proc/$1/stat" 2>/dev/null)" ]; } # not a zombie
for _ in $(seq 100); do running "$stub" || break; sleep 0.1; done
ticks=$(awk '{print $14 + $15}' "/proc/$stub/stat" 2>/dev/null)
daemon=$(cat daemon.pid 2>/dev/null)
if [ -n "$daemon" ] && ! running "$stub" && ! running "$daemon"; then
	ok mpi-worker-ends-the-command-of-a-gone-agent
else
	fail mpi-worker-ends-the-command-of-a-gone-agent "worker $stub or its command [$daemon] still there after 10 s (cpu ticks $ticks)"
	kill "$stub" 2>/dev/null
	[ -n "$daemon" ] && kill -9 "$daemon" 2>/dev/null
fi
wait "$stub" 2>/dev/null
# worker-N: digits alone
mpi_stub
if ! agent worker-+1 touch "$tmp/pwned" >out 2>&1 && ! agent 'worker- 1' touch "$tmp/pwned" >>out 2>&1 &&
	! agent worker- touch "$tmp/pwned" >>out 2>&1 && [ "$(grep -c usage: out)" = 3 ] && [ ! -e "$tmp/pwned" ]; then
	ok mpi-agent-takes-worker-digits-alone
else
	fail mpi-agent-takes-worker-digits-alone "$(head -3 out)"
fi
kill "$stub" 2>/dev/null
wait "$stub" 2>/dev/null

victim_intact && ok host-untouched || fail host-untouched "$victim changed"

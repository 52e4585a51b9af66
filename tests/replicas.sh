#!/usr/bin/env bash
# Two berth serve replicas on one PostgreSQL store (tests/run.sh server-pg starts it and
# sets BERTH_TEST_STORE=postgresql; skipped without), with one data dir on this machine:
# any replica answers any request; one leads the reconciling, the other says it does not;
# under a bounded create load sent to both, kill -9 of the leader: every 201 answered by
# either exists afterwards and reaches a final state, the survivor takes the lead (polled,
# with a generous bound) and its reconciling resumes: a run whose supervisor is killed
# then fails, and the run queued behind it starts.
# Prints "ok NAME" / "FAIL NAME" per check.
#   tests/replicas.sh BERTH
set -u
berth=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
tier=replicas
. "$(cd "$(dirname "$0")" && pwd)/serve_lib.sh"
if [ "${BERTH_TEST_STORE:-}" != postgresql ]; then
	echo "skip replicas (a store that replicas share: tests/run.sh server-pg)"
	exit 0
fi
nap=3600.7$$ # a sleep of this run's own: the pids found by it are this run's
serve_setup "$nap"
on_test_store || { echo "FAIL $tier store: no database of its own"; exit 1; }

cat >policy.yaml <<'EOF'
local:
  capacity: {cpu: "2", mem: 2Gi}
  grace_period: 1
EOF

start --insecure-local && url1=$url pid1=$spid log1=$slog
start --insecure-local && url2=$url pid2=$spid log2=$slog
# one leads: the other says so at its first pass (every 5 s)
leader= follower=
for _ in $(seq 300); do
	if grep -q 'another server leads' "$log1"; then leader=2 follower=1; break; fi
	if grep -q 'another server leads' "$log2"; then leader=1 follower=2; break; fi
	sleep 0.1
done
# any replica answers any request: created on one, read on the other
printf 'function:\n  name: hello\n  command: [echo, hi]\nresources: {cpu: 100m, mem: 32Mi}\n' >quick.yaml
c=$(curl -s -X POST --data-binary @quick.yaml "$url1/api/v1/runs")
id=$(echo "$c" | json 'd["id"]' 2>/dev/null)
if [ -n "$leader" ] && [ -n "$id" ] && [ "$(url=$url2 wait_final "$id")" = Succeeded ] &&
	! grep -q 'another server leads' "$([ "$leader" = 1 ] && echo "$log1" || echo "$log2")"; then
	ok "one-leads-any-answers (replica $leader leads)"
else
	fail one-leads-any-answers "leader '$leader'; run '$id' read on the other: $(url=$url2 wait_final "$id")"
fi
if [ "$leader" = 1 ]; then
	lurl=$url1 lpid=$pid1 surl=$url2 slog=$log2
else
	lurl=$url2 lpid=$pid2 surl=$url1 slog=$log1
fi

# ---- a bounded create load on both; kill -9 of the leader in its middle ----------------------
: >accepted
(
	for i in $(seq 80); do
		u=$lurl
		[ $((i % 2)) = 0 ] && u=$surl
		body=$(curl -s -m 10 -w '\n%{http_code}' -X POST --data-binary @quick.yaml "$u/api/v1/runs")
		[ "$(echo "$body" | tail -1)" = 201 ] &&
			echo "$body" | sed '$d' | json 'd["id"]' >>accepted 2>/dev/null
	done
) &
loader=$!
sleep 1
kill -9 "$lpid"
wait "$lpid" 2>/dev/null
wait "$loader"
n=$(wc -l <accepted)
url=$surl
count_final accepted
if [ "$n" -gt 0 ] && [ "$missing" = 0 ] && [ "$unfinished" = 0 ]; then
	ok "failover-every-201-exists-and-ends ($n answered 201 by either)"
else
	fail failover-every-201-exists-and-ends "$n answered 201, $missing missing on the survivor, $unfinished not final"
fi

# ---- the survivor leads, and its reconciling resumes -------------------------------------------
led=
for _ in $(seq 300); do # its next pass (5 s) takes the lead: 30 s at most
	grep -q 'this server leads the reconciling' "$slog" && { led=1; break; }
	sleep 0.1
done
busy=$(url=$surl wait_idle)
post_json() { curl -s -X POST -H 'Content-Type: application/json' --data-binary "$1" "$url/api/v1/runs" | json 'd["id"]'; }
hold=$(post_json '{"function": {"name": "hold", "command": ["sleep", "'"$nap"'"]}, "resources": {"cpu": "2"}}')
nxt=$(post_json '{"function": {"name": "next", "command": ["true"]}, "resources": {"cpu": "1"}}')
queued=$(curl -s "$surl/api/v1/runs/$nxt" | json 'd["state"]' 2>/dev/null)
# the held run's supervisor dies: only the reconciler sees it
for _ in $(seq 100); do
	sup=$(pgrep -f "__supervise $hold")
	[ -n "$sup" ] && break
	sleep 0.1
done
for p in $sup; do kill -9 "$p"; done
for p in $(pgrep -f "^sleep $nap\$"); do kill -9 "$p" 2>/dev/null; done
h=$(wait_final "$hold")
why=$(curl -s "$surl/api/v1/runs/$hold" | json 'd.get("reason", "")' 2>/dev/null)
s=$(wait_final "$nxt")
if [ -n "$led" ] && [ "$queued" = Pending ] && [ "$h" = Failed ] && echo "$why" | grep -q 'supervisor' &&
	[ "$s" = Succeeded ]; then
	ok survivor-leads-and-reconciles
else
	fail survivor-leads-and-reconciles "lead taken: '${led:-no}'; the held run $h ($why); the queued one: $queued, then $s; not final before: ${busy:-none}"
fi
for spid in "$pid1" "$pid2"; do stop_server; done
if grep -qi "sanitizer\|runtime error" "$tmp"/serve.*.log; then
	fail replicas-clean "$(grep -i -m3 'sanitizer\|runtime error' "$tmp"/serve.*.log)"
else
	ok replicas-clean
fi

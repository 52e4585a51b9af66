#!/usr/bin/env bash
# berth serve under load and abuse, on loopback, bounded (about a minute on 2 cores):
# 100 log followers and 20 stop waits held open while /healthz and creates still answer
# at once; the followers' and waiters' threads and sockets given back when their clients
# leave; an idle and slow connection flood from 127.0.0.2 that 127.0.0.1 does not feel;
# idle connections closed; the cap on streams (503, Retry-After); unknown methods that
# cannot evict routes from /metrics; 300 warnings still answered, with bounded headers;
# a clean stop with streams open; reads that go on while another process holds the
# store's write lock; a store of 100,000 runs whose filtered lists and deep pages answer
# right. Every server must be alive at the end of its part.
# Prints "ok NAME" / "FAIL NAME" per check.
#   tests/load.sh BERTH
set -u
berth=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
tier=load
. "$(cd "$(dirname "$0")" && pwd)/serve_lib.sh"
tag=3600.$$7 # the sleeps of this test's runs: `sleep $tag`, killed by pid at the end
serve_setup "$tag"

cat >policy.yaml <<'EOF'
local:
  capacity: {cpu: "2", mem: 2Gi}
  grace_period: 1
EOF

spec() { # NAME CMD
	printf 'function:\n  name: %s\n  command: [sh, -c, %s]\nresources: {cpu: 100m, mem: 32Mi}\n' "$1" "'$2'"
}

# submit NAME CMD: the id of a new run (as $admin)
submit() {
	spec "$1" "$2" >"$1.yaml"
	call -t "$admin" POST /api/v1/runs --data-binary @"$1.yaml" >/dev/null
	json 'd["id"]' <body 2>/dev/null
}

# running ID [LINE]: waits until the run is Running (and its log has LINE)
running() {
	local st
	for _ in $(seq 100); do
		st=$(call -t "$admin" GET "/api/v1/runs/$1")
		if [ "$st" = 200 ] && [ "$(json 'd["state"]' <body)" = Running ]; then
			[ -z "${2:-}" ] && return 0
			call -t "$admin" GET "/api/v1/runs/$1/logs" >/dev/null
			grep -q "$2" body && return 0
		fi
		sleep 0.1
	done
	return 1
}

# The clients, in python: sockets from chosen source addresses (all of 127/8 is
# loopback), many at once. Each command prints one JSON object.
cat >load.py <<'EOF'
import http.client, json, os, resource, select, socket, sys, time

soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
port = int(sys.argv[2])

def open_request(src, method, path, token=None, body=b""):
    s = socket.socket()
    s.bind((src, 0))
    s.settimeout(5)
    s.connect(("127.0.0.1", port))
    head = "%s %s HTTP/1.1\r\nHost: berth\r\n" % (method, path)
    if token:
        head += "Authorization: Bearer %s\r\n" % token
    if method in ("POST", "PUT"):
        head += "Content-Length: %d\r\n" % len(body)
    s.sendall(head.encode() + b"\r\n" + body)
    s.setblocking(False)
    return s

def heads(socks, seconds):
    """reads from socks for a while: the status line of each that answered"""
    got, buf = {}, {s: b"" for s in socks}
    end = time.monotonic() + seconds
    while time.monotonic() < end and len(got) < len(socks):
        r, _, _ = select.select([s for s in socks if s not in got], [], [], 0.1)
        for s in r:
            try:
                data = s.recv(65536)
            except OSError:
                data = b""
            buf[s] += data
            if b"\r\n" in buf[s]:
                got[s] = buf[s].split(b"\r\n", 1)[0].decode(errors="replace")
            elif not data:
                got[s] = "closed"
    return got

def drain(socks):
    r, _, _ = select.select(socks, [], [], 0)
    for s in r:
        try:
            s.recv(65536)
        except OSError:
            pass

def get(path, token=None, src="127.0.0.1", method="GET", body=None, timeout=3):
    t = time.monotonic()
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout, source_address=(src, 0))
        h = {"Authorization": "Bearer " + token} if token else {}
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        data = r.read()
        c.close()
        return r.status, time.monotonic() - t, r.getheaders(), data
    except Exception as e:
        return "%s" % type(e).__name__, time.monotonic() - t, [], b""

def proc(pid):
    threads = 0
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("Threads:"):
                threads = int(line.split()[1])
    socks = 0
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            if os.readlink("/proc/%d/fd/%s" % (pid, fd)).startswith("socket:"):
                socks += 1
        except OSError:
            pass
    return threads, socks

def healthz_many(n):
    """n /healthz one after the other, each on a new connection; after 3 in a row
    that failed or took a second, the rest count as failed untried (the tier stays short)"""
    lat, bad, slow = [], [], 0
    for i in range(n):
        if slow >= 3:
            lat.append(lat[-1])
            bad.append("skipped")
            continue
        st, dt, _, _ = get("/healthz")
        lat.append(dt)
        if st != 200:
            bad.append(st)
        slow = slow + 1 if st != 200 or dt >= 1 else 0
    lat.sort()
    return {"n": n, "bad": bad, "p50": lat[n // 2], "p99": lat[min(n - 1, n * 99 // 100)],
            "max": lat[-1]}

def settle(pid, base, seconds, which=(0, 1), t=None):
    """seconds since t (default now) until the server's threads and sockets (or those of
    which: 0 threads, 1 sockets) are back to base, or None after seconds"""
    t = time.monotonic() if t is None else t
    while time.monotonic() - t < seconds:
        now = proc(pid)
        if all(now[i] <= base[i] for i in which):
            return round(time.monotonic() - t, 2)
        time.sleep(0.1)
    return None

cmd = sys.argv[1]
out = {}
if cmd == "hold":
    # hold PORT TOKEN PID FOLLOW_ID NFOLLOW WAIT_IDS NWAIT SPECFILE
    token, pid, fid, nf, wids, nw, specfile = sys.argv[3], int(sys.argv[4]), sys.argv[5], \
        int(sys.argv[6]), sys.argv[7].split(","), int(sys.argv[8]), sys.argv[9]
    base = proc(pid)
    out["base"] = base
    followers = [open_request("127.0.0.3", "GET", "/api/v1/runs/%s/logs?follow=true" % fid, token)
                 for _ in range(nf)]
    got = heads(followers, 5)
    out["followers_200"] = sum(1 for v in got.values() if " 200 " in v)
    waiters = [open_request("127.0.0.4", "POST", "/api/v1/runs/%s/stop?wait=true&grace=600"
                            % wids[i % len(wids)], token) for i in range(nw)]
    time.sleep(0.5)
    drain(followers)
    out["healthz"] = healthz_many(50)
    drain(followers)
    with open(specfile, "rb") as f:
        st, dt, _, _ = get("/api/v1/runs", token, method="POST", body=f.read(), timeout=5)
    out["create"] = {"status": st, "seconds": round(dt, 3)}
    out["held"] = proc(pid)
    # the waiters are still waiting: nothing came back
    out["waiters_answered"] = len(heads(waiters, 0.2))
    for s in followers + waiters:
        s.close()
    out["settled"] = settle(pid, base, 6)
    out["after"] = proc(pid)
elif cmd == "leave":
    # leave PORT TOKEN PID RUN_ID N: followers of a quiet run that go away
    token, pid, rid, n = sys.argv[3], int(sys.argv[4]), sys.argv[5], int(sys.argv[6])
    base = proc(pid)
    socks = [open_request("127.0.0.3", "GET", "/api/v1/runs/%s/logs?follow=true" % rid, token)
             for _ in range(n)]
    got = heads(socks, 5)
    out["followers_200"] = sum(1 for v in got.values() if " 200 " in v)
    time.sleep(0.3)
    out["held"] = proc(pid)
    for s in socks:
        s.close()
    t = time.monotonic()
    out["sockets_closed"] = settle(pid, base, 4, (1,), t)
    # and their threads end: a quiet run's reader is asked each second whether
    # its client is still there
    out["threads_back"] = settle(pid, base, 5, (0,), t)
    out["base"] = base
    out["after"] = proc(pid)
elif cmd == "full-stop":
    # full-stop PORT TOKEN FOLLOW_ID STOP_ID N: with N followers held (the cap), a stop
    # that waits is refused before it stops anything
    token, fid, sid, n = sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6])
    socks = [open_request("127.0.0.5", "GET", "/api/v1/runs/%s/logs?follow=true" % fid, token)
             for _ in range(n)]
    out["held_200"] = sum(1 for v in heads(socks, 5).values() if " 200 " in v)
    stop = open_request("127.0.0.5", "POST", "/api/v1/runs/%s/stop?wait=true&grace=0" % sid, token)
    out["stop"] = list(heads([stop], 5).values())[0].split(" ")[1]
    stop.close()
    get = open_request("127.0.0.5", "GET", "/api/v1/runs/%s" % sid, token)
    time.sleep(0.3)
    get.setblocking(True)
    body = get.recv(65536).split(b"\r\n\r\n", 1)[1]
    out["state"] = json.loads(body)["state"]
    for s in socks:
        s.close()
elif cmd == "flood":
    # flood PORT N: N connections from 127.0.0.2, idle or sending half a header
    n = int(sys.argv[3])
    socks, refused = [], 0
    for i in range(n):
        s = socket.socket()
        s.bind(("127.0.0.2", 0))
        s.settimeout(2)
        try:
            s.connect(("127.0.0.1", port))
            if i % 2:
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: berth\r\nX-Slow: ")
            socks.append(s)
        except OSError:
            refused += 1
            s.close()
    time.sleep(0.5)
    out["healthz"] = healthz_many(50)
    closed = 0
    for s in socks:
        s.setblocking(False)
        try:
            if s.recv(1) == b"":
                closed += 1
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
    out["flood"] = {"n": n, "refused": refused, "closed_by_server": closed,
                    "kept": n - refused - closed}
    for s in socks:
        s.close()
elif cmd == "idle":
    # idle PORT: a silent connection, half a header, a finished keep-alive request
    socks = []
    for what in ("silent", "half", "done"):
        s = socket.socket()
        s.settimeout(10)
        s.connect(("127.0.0.1", port))
        if what == "half":
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: berth\r\n")
        if what == "done":
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: berth\r\n\r\n")
        socks.append((what, s))
    t = time.monotonic()
    for what, s in socks:
        data = b""
        try:
            while True:
                d = s.recv(65536)
                if not d:
                    break
                data += d
        except OSError as e:
            data += ("[%s]" % type(e).__name__).encode()
        out[what] = round(time.monotonic() - t, 2)
        s.close()
elif cmd == "methods":
    # methods PORT N: N requests with made-up methods, no token, on kept-alive connections
    n = int(sys.argv[3])
    statuses = {}
    c = None
    for i in range(n):
        if c is None:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=3)
        try:
            c.request("FOO%d" % i, "/healthz")
            r = c.getresponse()
            r.read()
            statuses[r.status] = statuses.get(r.status, 0) + 1
            if r.getheader("Connection", "").lower() == "close":
                c.close()
                c = None
        except Exception as e:
            statuses[type(e).__name__] = statuses.get(type(e).__name__, 0) + 1
            c.close()
            c = None
    out["statuses"] = statuses
elif cmd == "cap":
    # cap PORT TOKEN RUN_ID N: N followers, then one more, then one more after they leave
    token, rid, n = sys.argv[3], sys.argv[4], int(sys.argv[5])
    path = "/api/v1/runs/%s/logs?follow=true" % rid
    socks = [open_request("127.0.0.3", "GET", path, token) for _ in range(n)]
    got = heads(socks, 5)
    out["held_200"] = sum(1 for v in got.values() if " 200 " in v)
    st, _, h, _ = get(path, token, timeout=3)
    out["over"] = {"status": st, "retry_after": dict((k.lower(), v) for k, v in h).get("retry-after")}
    for s in socks:
        s.close()
    out["after"] = None
    t = time.monotonic()
    while time.monotonic() - t < 5:
        s = open_request("127.0.0.3", "GET", path, token)
        line = heads([s], 2).get(s, "")
        s.close()
        if " 200 " in line:
            out["after"] = round(time.monotonic() - t, 2)
            break
        time.sleep(0.2)
print(json.dumps(out))
EOF

admin=$("$berth" token create --project '*' --role admin 2>/dev/null)
if ! start || ! alive; then
	fail start "no server: $(cat "$slog")"
	exit 0
fi

# ---- runs to follow and to wait for ---------------------------------------------------------
chatty=$(submit chatty "while :; do echo tick; sleep 0.5; done & sleep $tag")
quiet=$(submit quiet "echo quiet-start; sleep $tag")
stub1=$(submit stub1 "trap \"\" TERM; echo stubborn; sleep $tag")
stub2=$(submit stub2 "trap \"\" TERM; echo stubborn; sleep $tag")
for id in "$chatty" "$quiet" "$stub1" "$stub2"; do
	running "$id" || { fail setup "run \"$id\" is not Running: $(cat body)"; exit 0; }
done
running "$chatty" tick
spec create 'true' >create.yaml

# ---- 100 followers and 20 stop waits held: the rest of the server does not notice --------
python3 load.py hold "$port" "$admin" "$spid" "$chatty" 100 "$stub1,$stub2" 20 create.yaml >out 2>&1
r=$(json 'd["followers_200"], len(d["healthz"]["bad"]), d["healthz"]["max"] < 1, d["create"]["status"], d["create"]["seconds"] < 2, d["waiters_answered"]' <out 2>/dev/null)
if [ "$r" = "100 0 True 201 True 0" ]; then
	ok "followers-and-waiters-held-server-answers ($(json '"/healthz p50 %.1f ms, p99 %.1f ms, max %.1f ms; create %.0f ms; threads %d -> %d" % (1000*d["healthz"]["p50"], 1000*d["healthz"]["p99"], 1000*d["healthz"]["max"], 1000*d["create"]["seconds"], d["base"][0], d["held"][0])' <out))"
else
	fail followers-and-waiters-held-server-answers "followers 200, healthz failed, max<1s, create, create<2s, waiters answered: $r"
fi
r=$(json 'd["settled"] is not None' <out 2>/dev/null)
if [ "$r" = True ]; then
	ok "clients-gone-threads-and-sockets-back ($(json '"in %.1f s: threads %d, sockets %d" % (d["settled"], d["after"][0], d["after"][1])' <out))"
else
	fail clients-gone-threads-and-sockets-back "$(json '"threads and sockets: before %s, held %s, after %s" % (d["base"], d["held"], d["after"])' <out 2>/dev/null)"
fi

# ---- followers of a quiet run that leave: their connections close at once -------------------
python3 load.py leave "$port" "$admin" "$spid" "$quiet" 50 >out 2>&1
r=$(json 'd["followers_200"], d["sockets_closed"] is not None, d["threads_back"] is not None' <out 2>/dev/null)
if [ "$r" = "50 True True" ]; then
	ok "quiet-followers-leave-sockets-and-threads-back ($(json '"sockets in %.1f s, threads in %.1f s" % (d["sockets_closed"], d["threads_back"])' <out))"
else
	fail quiet-followers-leave-sockets-and-threads-back "followers 200, sockets closed, threads back: $r"
fi

# ---- a clean stop with followers and waiters open ----------------------------------------------
python3 - "$port" "$admin" "$quiet" "$stub1" >out 2>&1 <<'EOF' &
import socket, sys, time
port, token, quiet, stub = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
socks = []
for path, method in [("/api/v1/runs/%s/logs?follow=true" % quiet, "GET")] * 20 + \
        [("/api/v1/runs/%s/stop?wait=true&grace=600" % stub, "POST")] * 5:
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(("%s %s HTTP/1.1\r\nHost: b\r\nAuthorization: Bearer %s\r\nContent-Length: 0\r\n\r\n"
               % (method, path, token)).encode())
    socks.append(s)
time.sleep(15)
EOF
holder=$!
pids+=("$holder")
sleep 1.5
alive_before=no
alive && alive_before=yes
t0=$(date +%s%N)
kill -TERM "$spid"
for _ in $(seq 100); do kill -0 "$spid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$spid" 2>/dev/null && kill -9 "$spid" # hung: 137
wait "$spid"
rc=$?
took=$((($(date +%s%N) - t0) / 1000000))
kill "$holder" 2>/dev/null
if [ "$alive_before" = yes ] && [ "$rc" = 0 ] && ! grep -qi 'sanitizer\|runtime error' "$slog"; then
	ok "stop-with-streams-open (exit 0 in $took ms)"
else
	fail stop-with-streams-open "alive before: $alive_before, exit $rc: $(grep -i -m3 'sanitizer\|runtime error\|berth serve' "$slog")"
fi

# ---- a fresh server, with the default limits, for the abuse that needs no run ---------------
if ! start || ! alive; then
	fail start-again "no server: $(cat "$slog")"
	exit 0
fi

# ---- a flood of idle and half-sent connections from 127.0.0.2 -------------------------------
python3 load.py flood "$port" 1050 >out 2>&1
r=$(json 'len(d["healthz"]["bad"]), d["healthz"]["max"] < 1, d["flood"]["kept"] <= 128' <out 2>/dev/null)
if [ "$r" = "0 True True" ]; then
	ok "idle-flood-from-one-address-does-not-deny-others ($(json '"kept %d of %d; /healthz max %.1f ms" % (d["flood"]["kept"], d["flood"]["n"], 1000*d["healthz"]["max"])' <out))"
else
	fail idle-flood-from-one-address-does-not-deny-others "healthz failed, max<1s, kept<=128: $r"
fi

# ---- made-up methods do not fill the metrics table --------------------------------------------
python3 load.py methods "$port" 300 >out 2>&1
call GET /api/v1/openapi.json >/dev/null
call GET /metrics >/dev/null
cp body metrics
others=$(grep -c '^berth_http_request_duration_seconds_count{.*method="other"' metrics)
if grep -q 'route="/api/v1/openapi.json",method="GET"' metrics && [ "$others" -le 2 ] &&
	! grep -q 'method="FOO' metrics; then
	ok "unknown-methods-one-series ($others series of method \"other\")"
else
	fail unknown-methods-one-series "openapi.json not recorded, or $others other series: $(cat out)"
fi

# ---- 300 warnings: an answer, with a bounded header ---------------------------------------------
rm -f out
{
	printf 'function: {name: warned, command: ["true"]}\nresources: {cpu: 100m, mem: 32Mi}\nenvs:\n'
	for i in $(seq 300); do printf '  BERTH_X%d: "v"\n' "$i"; done
} >warned.yaml
st=$(call -t "$admin" POST /api/v1/runs --data-binary @warned.yaml -D headers)
nw=$(grep -ci '^berth-warning:' headers)
longest=$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' headers)
if [ "$st" = 201 ] && [ "$nw" -ge 2 ] && [ "$nw" -le 9 ] && [ "$longest" -le 512 ] &&
	grep -qi '^berth-warning: [0-9]* more warnings in the body' headers; then
	ok "300-warnings-answered-bounded-headers ($nw Berth-Warning headers, longest line $longest)"
else
	fail 300-warnings-answered-bounded-headers "status $st, $nw warning headers, longest $longest"
fi

if alive; then
	ok alive-after-abuse
else
	fail alive-after-abuse "the server does not answer /healthz"
fi
stop_server

# ---- the cap on streams: 503 with Retry-After past it, free again when they leave ------------
rm -f out
if start --max-streams 4 && alive; then
	python3 load.py cap "$port" "$admin" "$chatty" 4 >out 2>&1
	r=$(json 'd["held_200"], d["over"]["status"], d["over"]["retry_after"], d["after"] is not None' <out 2>/dev/null)
	if [ "$r" = "4 503 5 True" ] && alive; then
		ok "streams-capped-503-retry-after"
	else
		fail streams-capped-503-retry-after "held, over, Retry-After, free again: $r"
	fi
	# a stop that waits, with the streams full: refused, and the run not stopped
	# (the followers of the check above give their places back within a second or two)
	for _ in 1 2 3 4; do
		python3 load.py full-stop "$port" "$admin" "$chatty" "$quiet" 4 >out 2>&1
		r=$(json 'd["held_200"], d["stop"], d["state"]' <out 2>/dev/null)
		[ "${r%% *}" = 4 ] && break
		sleep 1
	done
	if [ "$r" = "4 503 Running" ]; then
		ok "stop-wait-with-streams-full-stops-nothing"
	else
		fail stop-wait-with-streams-full-stops-nothing "followers, stop, state after: $r"
	fi
	# HEAD of a log takes no stream: 200 HEADs, then 4 followers still get theirs
	python3 - "$port" "$admin" "$quiet" >heads.out 2>&1 <<'PY'
import socket, sys
port, token, rid = int(sys.argv[1]), sys.argv[2], sys.argv[3]
s = socket.create_connection(("127.0.0.1", port))
req = ("HEAD /api/v1/runs/%s/logs?follow=true HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n"
       % (rid, token)).encode()
ok, extra, buf = 0, 0, b""
for _ in range(200):
    s.sendall(req)
    while b"\r\n\r\n" not in buf:
        buf += s.recv(65536)
    head, buf = buf.split(b"\r\n\r\n", 1)
    ok += head.startswith(b"HTTP/1.1 200")
s.settimeout(0.3)
try:
    extra = len(buf) + len(s.recv(65536))  # a HEAD answer has no body
except socket.timeout:
    extra = len(buf)
print(ok, extra)
PY
	# (the followers of the check above give their places back within a second or two)
	for _ in 1 2 3 4; do
		python3 load.py cap "$port" "$admin" "$chatty" 4 >out 2>&1
		held=$(json 'd["held_200"]' <out 2>/dev/null)
		[ "$held" = 4 ] && break
		sleep 1
	done
	if [ "$(cat heads.out)" = "200 0" ] && [ "$held" = 4 ]; then
		ok "head-of-logs-takes-no-stream"
	else
		fail head-of-logs-takes-no-stream "200 HEADs (answered, bytes after them): $(cat heads.out); followers after: $held"
	fi
else
	fail streams-capped-503-retry-after "no server with --max-streams 4: $(cat "$slog")"
fi
stop_server

# ---- idle connections are closed ----------------------------------------------------------------
rm -f out
if start --idle-timeout 2 && alive; then
	python3 load.py idle "$port" >out 2>&1
	r=$(json 'd["silent"] < 5, d["half"] < 5, d["done"] < 5' <out 2>/dev/null)
	if [ "$r" = "True True True" ] && alive; then
		ok "idle-connections-closed ($(json '"silent %.1f s, half a header %.1f s, after an answer %.1f s" % (d["silent"], d["half"], d["done"])' <out))"
	else
		fail idle-connections-closed "closed within 5 s (silent, half, done): $r"
	fi
else
	fail idle-connections-closed "no server with --idle-timeout 2: $(cat "$slog")"
fi
stop_server

# ---- a writer holds the store: reads go on -------------------------------------------------------
# Another process holds the store's write lock for 3 s while a create waits for it on its
# worker thread; each worker has its own connection, so lists, runs and /healthz (WAL
# reads) answer meanwhile, and the create is stored once the writer is done.
rm -f out
if start --insecure-local && alive; then
	spec held 'true' >held.yaml
	python3 - "$BERTH_HOME/berth.db" >holder.out 2>&1 <<'PY' &
import sqlite3, sys, time
con = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10)
con.execute("BEGIN IMMEDIATE")
print("held", flush=True)
time.sleep(3)
con.execute("ROLLBACK")
PY
	holder=$!
	for _ in $(seq 50); do grep -q held holder.out 2>/dev/null && break; sleep 0.05; done
	curl -s -m 15 -o created.json -w '%{http_code}' -X POST --data-binary @held.yaml "$url/api/v1/runs" >created.status &
	poster=$!
	sleep 0.3
	t0=$(date +%s%N)
	s1=$(call GET '/api/v1/runs?limit=5')
	s2=$(call GET /healthz)
	s3=$(call GET '/api/v1/runs?state=Succeeded&limit=5')
	ms=$((($(date +%s%N) - t0) / 1000000))
	wait "$poster" "$holder"
	if [ "$s1$s2$s3" = 200200200 ] && [ "$ms" -lt 1500 ] && [ "$(cat created.status)" = 201 ] && alive; then
		ok "reads-answer-while-a-writer-holds-the-store (3 reads in $ms ms; the create stored after)"
	else
		fail reads-answer-while-a-writer-holds-the-store "reads $s1 $s2 $s3 in $ms ms, create $(cat created.status)"
	fi
else
	fail reads-answer-while-a-writer-holds-the-store "no server: $(cat "$slog")"
fi
stop_server

# ---- a store of 100,000 runs: filtered lists and deep pages answer, and are right ---------------
# The runs are copies of one real run made by SQL in the store (the columns read from the
# table, so that this follows the schema), in four projects and three final states.
rm -f out
if start --insecure-local && alive; then
	spec big 'true' >big.yaml
	call POST /api/v1/runs --data-binary @big.yaml >/dev/null
	seed=$(json 'd["id"]' <body 2>/dev/null)
	for _ in $(seq 100); do
		call GET "/api/v1/runs/$seed" >/dev/null
		[ "$(json 'd["state"]' <body 2>/dev/null)" = Succeeded ] && break
		sleep 0.05
	done
	python3 - "$BERTH_HOME/berth.db" "$seed" 100000 >fill.out 2>&1 <<'PY'
import sqlite3, sys, time
db, seed, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
con = sqlite3.connect(db, isolation_level=None, timeout=10)
cols = [r[1] for r in con.execute("PRAGMA table_info(runs)")]
made = {"id": "printf('big%06d', x)", "name": "printf('big-%06d', x)",
        "project": "'big' || (x % 4)", "state": "2 + (x % 3)", "created": "t.created + x"}
exprs = ", ".join(made.get(c, "t." + c) for c in cols)
t0 = time.time()
con.execute("BEGIN IMMEDIATE")
con.execute("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?) "
            "INSERT INTO runs (%s) SELECT %s FROM c, (SELECT * FROM runs WHERE id = ?) t"
            % (", ".join(cols), exprs), (n, seed))
con.execute("COMMIT")
print(con.execute("SELECT count(*) FROM runs WHERE project LIKE 'big%'").fetchone()[0], round(time.time() - t0, 1))
PY
	python3 - "$port" >out 2>&1 <<'PY'
import json, sys, time, urllib.request
port = int(sys.argv[1])
def get(path):
    t = time.monotonic()
    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=20) as r:
        return r.status, json.load(r), time.monotonic() - t
out = {"worst": 0.0, "bad": []}
def page(path):
    st, d, took = get(path)
    out["worst"] = max(out["worst"], took)
    return st, d
# filters: every item matches, newest first, pages continue without a gap or a repeat
for q, want in [("state=Stopped", lambda r: r["state"] == "Stopped"),
                ("project=big1", lambda r: r["project"] == "big1"),
                ("project=big2&state=Succeeded", lambda r: r["project"] == "big2" and r["state"] == "Succeeded")]:
    seen, after, ids = 0, "", []
    for _ in range(3):
        st, d = page("/api/v1/runs?%s&limit=1000%s" % (q, "&after=" + after if after else ""))
        if st != 200 or not all(want(r) for r in d["items"]):
            out["bad"].append("%s: status %d or a run that does not match" % (q, st))
        ids += [r["id"] for r in d["items"]]
        after = d.get("next", "")
        if not after:
            break
    if ids != sorted(ids, reverse=True) or len(ids) != len(set(ids)):
        out["bad"].append("%s: not newest first, or a run twice" % q)
# deep pages: a cursor near the oldest run, and past it
st, d = page("/api/v1/runs?state=Failed&limit=50&after=50")
if st != 200 or len(d["items"]) > 50 or not all(r["state"] == "Failed" for r in d["items"]):
    out["bad"].append("deep page of Failed: %d" % st)
st, d = page("/api/v1/projects/big3/runs?limit=1000&after=1")
if st != 200 or d["items"]:
    out["bad"].append("a page past the oldest run is not empty")
# bad cursors and limits are 400s
for q in ["limit=0", "limit=1001", "after=-1", "after=x", "state=Nope"]:
    try:
        get("/api/v1/runs?" + q)
        out["bad"].append(q + " answered 200")
    except urllib.error.HTTPError as e:
        if e.code != 400:
            out["bad"].append("%s answered %d" % (q, e.code))
print(json.dumps(out))
PY
	filled=$(cut -d' ' -f1 fill.out)
	if [ "$filled" = 100000 ] && [ "$(json 'len(d["bad"])' <out 2>/dev/null)" = 0 ] && alive; then
		ok "100000-runs-filtered-lists-and-deep-pages (slowest page $(json '"%.0f ms" % (1000 * d["worst"])' <out))"
	else
		fail 100000-runs-filtered-lists-and-deep-pages "filled: $(cat fill.out); $(cat out)"
	fi
else
	fail 100000-runs-filtered-lists-and-deep-pages "no server: $(cat "$slog")"
fi
# ---- watches of a project of 25,000 runs while the store changes elsewhere: a wake reads what
# changed since the watch looked (by the rv index), not all the project's runs sorted by rv, and
# 12,000 changes elsewhere while it waits are no 410 ------------------------------------------------
if [ "${filled:-0}" = 100000 ] && alive; then
	python3 - "$port" "$BERTH_HOME/berth.db" "$spid" >watch.out 2>&1 <<'PY'
import json, os, sqlite3, sys, threading, time, urllib.request
port, db, spid = int(sys.argv[1]), sys.argv[2], sys.argv[3]
def get(path):
    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=60) as r:
        return json.load(r)
def cpu():  # the server's CPU time, in seconds
    f = open("/proc/%s/stat" % spid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
rv = get("/api/v1/projects/big1/runs?limit=1")["rv"]
answers = []
def watch():
    answers.append(get("/api/v1/projects/big1/runs?watch=true&rv=%s&timeout=60" % rv))
ws = [threading.Thread(target=watch) for _ in range(20)]
for w in ws:
    w.start()
time.sleep(1)
con = sqlite3.connect(db, isolation_level=None, timeout=10)
c0 = cpu()
for i in range(20):  # a run of another project changes: each change wakes every watch
    con.execute("UPDATE runs SET reason = ? WHERE id = 'big000002'", ("r%d" % i,))
    time.sleep(0.3)
took = cpu() - c0
con.execute("UPDATE runs SET reason = 'seen' WHERE id = 'big000001'")
for w in ws:
    w.join(60)
ids = sorted(set(",".join(r["id"] for r in a["items"]) for a in answers))
# more changes elsewhere than the store keeps deletions of (10,000), in three steps the
# watch wakes between: it watches on from what it saw, not from its rv (410 there)
rv = get("/api/v1/projects/big1/runs?limit=1")["rv"]
late = []
def watch_on():
    try:
        late.append(len(get("/api/v1/projects/big1/runs?watch=true&rv=%s&timeout=60" % rv)["items"]))
    except urllib.error.HTTPError as e:
        late.append(e.code)
w = threading.Thread(target=watch_on)
w.start()
time.sleep(0.5)
for step in range(3):
    con.execute("BEGIN IMMEDIATE")
    for i in range(4000):
        con.execute("UPDATE runs SET reason = ? WHERE id = 'big000002'", ("s%d" % i,))
    con.execute("COMMIT")
    time.sleep(0.6)
con.execute("UPDATE runs SET reason = 'late' WHERE id = 'big000001'")
w.join(60)
print(json.dumps({"cpu": round(took, 2), "answers": len(answers), "ids": ids, "late": late}))
PY
	if [ "$(json 'd["answers"], d["ids"], d["late"]' <watch.out 2>/dev/null)" = "20 ['big000001'] [1]" ] &&
		[ "$(json 'int(d["cpu"] < 2)' <watch.out 2>/dev/null)" = 1 ] && alive; then
		ok "watches-of-a-big-project-read-what-changed (server CPU $(json 'd["cpu"]' <watch.out) s for 20 watches x 20 wakes)"
	else
		fail watches-of-a-big-project-read-what-changed "$(cat watch.out)"
	fi
fi
stop_server

# ---- the runs end; every server's log is clean ----------------------------------------------------
rm -f out
for p in $(pgrep -f "^sleep $tag\$"); do kill -9 "$p" 2>/dev/null; done
bad=$(grep -il 'sanitizer\|runtime error' "$tmp"/serve.*.log)
if [ -z "$bad" ]; then
	ok server-logs-clean
else
	fail server-logs-clean "$(grep -i -m3 'sanitizer\|runtime error' $bad)"
fi

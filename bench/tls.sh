#!/usr/bin/env bash
# bench/tls.sh - what TLS costs a client of berth serve: GET /api/v1/projects on one
# kept-alive connection, and with a new connection each (a TLS handshake each), over
# plain HTTP and over TLS (an ECDSA P-256 certificate of a CA made here), side by side.
# The client is Python's http.client and ssl (the SDK's), one request at a time.
#
#   bench/tls.sh [KEPT [NEW]]    (requests: default 3000 on one connection, 500 new ones)
#
# Builds berth (-O2) in $BENCH_BUILD (build/bench-tls); starts two servers on one store
# in a temporary dir, removed at the end with them.
set -eu -o pipefail
cd "$(dirname "$0")/.."
B=${BENCH_BUILD:-build/bench-tls}
make -j2 B="$B" "$B/berth" >/dev/null
berth=$PWD/$B/berth
tmp=$(mktemp -d "${TMPDIR:-/tmp}/berth-tls.XXXXXX")
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$tmp"' EXIT
cd "$tmp"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem \
	-days 1 -subj "/CN=bench CA" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout key.pem -out srv.csr \
	-subj /CN=bench 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\n' >san.ext
openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -set_serial 1 -days 1 -extfile san.ext \
	-out cert.pem 2>/dev/null
export BERTH_HOME=$tmp/home
port() { for _ in $(seq 100); do p=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$1"); [ -n "$p" ] && { echo "$p"; return; }; sleep 0.05; done; }
"$berth" serve --listen 127.0.0.1:0 --insecure-local 2>http.log &
pids+=($!)
"$berth" serve --listen 127.0.0.1:0 --insecure-local --tls-cert cert.pem --tls-key key.pem 2>https.log &
pids+=($!)
python3 - "$(port http.log)" "$(port https.log)" "${1:-3000}" "${2:-500}" <<'PY'
import http.client, ssl, sys, time
plain, tls, kept, new = (int(x) for x in sys.argv[1:])
ctx = ssl.create_default_context(cafile="ca.pem")
def conn(port, secure):
    return (http.client.HTTPSConnection("127.0.0.1", port, context=ctx) if secure
            else http.client.HTTPConnection("127.0.0.1", port))
def get(c):
    c.request("GET", "/api/v1/projects")
    r = c.getresponse(); r.read()
    assert r.status == 200, r.status
print("| | requests/s, one kept-alive connection | requests/s, a new connection each |")
print("|---|---|---|")
for name, port, secure in (("HTTP", plain, False), ("TLS", tls, True)):
    c = conn(port, secure); get(c)
    t = time.perf_counter()
    for _ in range(kept):
        get(c)
    a = kept / (time.perf_counter() - t); c.close()
    t = time.perf_counter()
    for _ in range(new):
        c = conn(port, secure); get(c); c.close()
    b = new / (time.perf_counter() - t)
    print(f"| {name} | {a:,.0f} | {b:,.0f} |")
PY

#!/usr/bin/env bash
# berth serve over TLS: a CA and two server certificates made with openssl for
# this run (never kept), the CLI and the SDK checking them (--cacert,
# $BERTH_CACERT, the system's CAs refusing a private one), and the certificate
# reloaded without a restart on SIGHUP and on a file change, a bad new pair
# refused while the one in force stays.
# Prints "ok NAME" / "FAIL NAME" per check.
#   tests/server_tls.sh BERTH
set -u
berth=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
tier=server-tls
. "$(cd "$(dirname "$0")" && pwd)/serve_lib.sh"
root=$(cd "$(dirname "$0")/.." && pwd)
serve_setup

# a CA, and server certificates it signs (NAME SERIAL) for 127.0.0.1 and localhost
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem \
	-days 2 -subj "/CN=berth test CA" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >san.ext
issue() {
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$1.key" -out "$1.csr" \
		-subj "/CN=$1" 2>/dev/null &&
		openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -set_serial "$2" -days 1 \
			-extfile san.ext -out "$1.pem" 2>/dev/null
}
issue srv-one 4097 && issue srv-two 8194 || { fail certificates "openssl could not make them"; exit 0; }
cp srv-one.pem cert.pem && cp srv-one.key key.pem
export CURL_CA_BUNDLE=$tmp/ca.pem # curl (serve_lib.sh's call) trusts this CA
# the serial of the certificate a new connection is shown ("1001" for 4097)
serial() {
	openssl s_client -connect "127.0.0.1:$port" -CAfile ca.pem </dev/null 2>/dev/null |
		openssl x509 -noout -serial 2>/dev/null | sed 's/serial=//'
}

# ---- flags that do not go alone, a pair that is none --------------------------------------
"$berth" serve --listen 127.0.0.1:0 --tls-cert cert.pem >/dev/null 2>out
st=$?
if [ $st = 2 ] && grep -q -- '--tls-cert and --tls-key go together' out; then
	ok tls-cert-needs-its-key
else
	fail tls-cert-needs-its-key "exit $st"
fi
"$berth" serve --listen 127.0.0.1:0 --tls-cert srv-one.pem --tls-key srv-two.key >/dev/null 2>out
st=$?
if [ $st = 1 ] && grep -q 'do not match' out; then
	ok tls-mismatched-pair-refused-at-start
else
	fail tls-mismatched-pair-refused-at-start "exit $st"
fi

# ---- served, and checked by each client -------------------------------------------------
if start --insecure-local --tls-cert cert.pem --tls-key key.pem; then
	url=https://127.0.0.1:$port
	if curl -s -o /dev/null -w '%{http_code}' --cacert ca.pem "$url/healthz" | grep -qx 200 &&
		grep -q "(port $port) with TLS" "$slog" && grep -q 'subject CN=srv-one, serial 1001' "$slog"; then
		ok tls-served
	else
		fail tls-served "$(cat "$slog")"
	fi
else
	fail tls-served "it did not start: $(cat "$slog")"
	exit 0
fi

if "$berth" get runs --server "$url" --cacert ca.pem >out 2>&1 && grep -q '^ID' out; then
	ok tls-cli-cacert
else
	fail tls-cli-cacert "$(cat out)"
fi
if BERTH_CACERT=$tmp/ca.pem "$berth" get runs --server "$url" >out 2>&1; then
	ok tls-cli-cacert-from-env
else
	fail tls-cli-cacert-from-env "$(cat out)"
fi
# the system's CAs do not know this one: refused, saying what was wrong with the certificate
"$berth" get runs --server "$url" >out 2>&1
st=$?
if [ $st != 0 ] && grep -q 'certificate of the berth server at https://127.0.0.1:[0-9]* is refused' out &&
	grep -q 'unable to get local issuer certificate' out && grep -q 'BERTH_CACERT' out; then
	ok tls-cli-untrusted-refused
else
	fail tls-cli-untrusted-refused "exit $st: $(cat out)"
fi
# a CA file that is another CA's: refused too
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout other.key -out other.pem \
	-days 1 -subj "/CN=another CA" 2>/dev/null
if ! "$berth" get runs --server "$url" --cacert other.pem >out 2>&1 && grep -q 'checked with the CAs of other.pem' out; then
	ok tls-cli-other-ca-refused
else
	fail tls-cli-other-ca-refused "$(cat out)"
fi
if "$berth" --insecure-skip-tls-verify get runs --server "$url" >out 2>&1; then
	ok tls-cli-insecure-skip-verify
else
	fail tls-cli-insecure-skip-verify "$(cat out)"
fi
if ! "$berth" get runs --server "$url" --cacert missing.pem >out 2>&1 && grep -q 'the CA file "missing.pem" cannot be read' out; then
	ok tls-cli-missing-ca-file
else
	fail tls-cli-missing-ca-file "$(cat out)"
fi
if PYTHONPATH=$root/sdk/python python3 - "$url" "$tmp/ca.pem" >out 2>&1 <<'PY'
import sys, berth
url, ca = sys.argv[1], sys.argv[2]
assert berth.connect(url, cacert=ca).projects() == []
try:
    berth.connect(url).projects()
    raise SystemExit("no CA: answered")
except ConnectionError as e:
    assert "certificate" in str(e) and "BERTH_CACERT" in str(e), e
PY
then
	ok tls-sdk-cacert
else
	fail tls-sdk-cacert "$(cat out)"
fi

# ---- reloaded without a restart ------------------------------------------------------------
s0=$(serial)
cp srv-two.pem cert.pem && cp srv-two.key key.pem
kill -HUP "$spid"
for _ in $(seq 50); do [ "$(serial)" = 2002 ] && break; sleep 0.1; done
s1=$(serial)
if [ "$s0" = 1001 ] && [ "$s1" = 2002 ] && grep -q 'TLS certificate cert.pem reloaded: subject CN=srv-two' "$slog"; then
	ok tls-reload-on-sighup
else
	fail tls-reload-on-sighup "serial $s0, then $s1"
fi
# the files change (no signal): seen within a few seconds
cp srv-one.key key.tmp && cp srv-one.pem cert.tmp && mv key.tmp key.pem && mv cert.tmp cert.pem
for _ in $(seq 50); do [ "$(serial)" = 1001 ] && break; sleep 0.1; done
s2=$(serial)
if [ "$s2" = 1001 ]; then
	ok tls-reload-on-file-change
else
	fail tls-reload-on-file-change "serial $s2"
fi
# a certificate whose key is not the one beside it: refused, said, and the one in force stays
cp srv-two.pem cert.pem
kill -HUP "$spid"
for _ in $(seq 50); do grep -q 'the TLS certificate in force stays' "$slog" && break; sleep 0.1; done
s3=$(serial)
if [ "$s3" = 1001 ] && grep -q 'cert.pem and key key.pem are refused: The certificate and the given key do not match' "$slog" &&
	grep -q 'the TLS certificate in force stays' "$slog" && alive; then
	ok tls-reload-bad-pair-keeps-the-old
else
	fail tls-reload-bad-pair-keeps-the-old "serial $s3: $(tail -3 "$slog")"
fi
# a certificate that expired (signed for 2020 with openssl ca): the same
mkdir cadb && : >cadb/index.txt && echo 1000 >cadb/serial &&
	printf '[ca]\ndefault_ca = c\n[c]\ndatabase = cadb/index.txt\nnew_certs_dir = cadb\nserial = cadb/serial\ndefault_md = sha256\npolicy = p\n[p]\ncommonName = supplied\n' >ca.cnf &&
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout old.key -out old.csr -subj /CN=old 2>/dev/null &&
	openssl ca -batch -config ca.cnf -cert ca.pem -keyfile ca.key -in old.csr -out old.pem -notext \
		-startdate 20200101000000Z -enddate 20200102000000Z >/dev/null 2>&1
cp old.key key.pem && cp old.pem cert.pem && kill -HUP "$spid"
for _ in $(seq 50); do grep -q 'expired at' "$slog" && break; sleep 0.1; done
if [ "$(serial)" = 1001 ] && grep -q 'the TLS certificate cert.pem (subject CN=old) expired at 2020-01-02T00:00:00Z' "$slog"; then
	ok tls-reload-expired-keeps-the-old
else
	fail tls-reload-expired-keeps-the-old "$(tail -3 "$slog")"
fi
# a key file that is gone: the same
cp srv-one.pem cert.pem && rm key.pem && kill -HUP "$spid"
for _ in $(seq 50); do grep -q 'key key.pem cannot be read' "$slog" && break; sleep 0.1; done
if [ "$(serial)" = 1001 ] && grep -q 'the TLS key key.pem cannot be read: No such file' "$slog"; then
	ok tls-reload-missing-key-keeps-the-old
else
	fail tls-reload-missing-key-keeps-the-old "$(tail -3 "$slog")"
fi
# a storm of SIGHUPs with the files as they are: nothing is loaded (each pair loaded is kept
# till the end, for the handshakes that may hold it)
cp srv-one.key key.pem && chmod 600 key.pem && kill -HUP "$spid"
for _ in $(seq 50); do grep -q 'TLS certificate cert.pem unchanged' "$slog" && break; sleep 0.1; done
n0=$(grep -c 'reloaded:' "$slog")
for _ in $(seq 10); do kill -HUP "$spid"; sleep 0.2; done
for _ in $(seq 50); do [ "$(grep -c 'cert.pem unchanged' "$slog")" -ge 11 ] && break; sleep 0.1; done
n1=$(grep -c 'reloaded:' "$slog")
if [ "$n0" = "$n1" ] && [ "$(grep -c 'cert.pem unchanged' "$slog")" -ge 11 ] && [ "$(serial)" = 1001 ]; then
	ok tls-reload-unchanged-loads-nothing
else
	fail tls-reload-unchanged-loads-nothing "$n0 then $n1 reloads: $(tail -3 "$slog")"
fi
# a FIFO in the certificate's place: refused at once (an open of it waited for a writer, and
# held the loop that sees files change until the next signal); the next pair is seen
rm cert.pem && mkfifo cert.pem && kill -HUP "$spid"
for _ in $(seq 50); do grep -q 'cert.pem cannot be read: it is not a file' "$slog" && break; sleep 0.1; done
cp srv-two.key key.tmp && chmod 644 key.tmp && cp srv-two.pem cert.tmp && mv key.tmp key.pem && mv cert.tmp cert.pem
for _ in $(seq 50); do [ "$(serial)" = 2002 ] && break; sleep 0.1; done
if grep -q 'cert.pem cannot be read: it is not a file' "$slog" && [ "$(serial)" = 2002 ]; then
	ok tls-reload-fifo-refused
else
	fail tls-reload-fifo-refused "serial $(serial): $(tail -3 "$slog")"
fi
if grep -q 'warning: the TLS key key.pem may be read by others (mode 644): chmod 600 it' "$slog"; then
	ok tls-key-readable-by-others-warns
else
	fail tls-key-readable-by-others-warns "$(tail -3 "$slog")"
fi
stop_server

# ---- plain HTTP off loopback is warned of --------------------------------------------------
start --listen 0.0.0.0:0
if grep -q 'warning: 0.0.0.0:0 is not a loopback address and there is no TLS' "$slog"; then
	ok plain-http-off-loopback-warns
else
	fail plain-http-off-loopback-warns "$(head -3 "$slog")"
fi
stop_server
start
if ! grep -q 'warning' "$slog"; then
	ok plain-http-on-loopback-quiet
else
	fail plain-http-on-loopback-quiet "$(head -3 "$slog")"
fi
stop_server

if grep -qi "sanitizer\|runtime error" "$tmp"/serve.*.log; then
	fail server-tls-clean "$(grep -i -m3 'sanitizer\|runtime error' "$tmp"/serve.*.log)"
else
	ok server-tls-clean
fi

#!/usr/bin/env bash
# certs.sh DIR: a throwaway PKI for the Kubernetes stand-in (tests/kube/apiserver.py).
#   ca.pem/ca.key               the test CA (trusted by the server for client certs)
#   server.pem/server.key       signed by ca, SAN IP:127.0.0.1, DNS:localhost
#   client.pem/client.key       signed by ca, CN=berth-test, O=system:masters, clientAuth
#   other-ca.pem/other-ca.key   an unrelated CA (clients verifying against it must fail)
#   rogue-client.pem/.key       a client cert signed by other-ca (the server must refuse it)
# EC P-256 keys, valid 2 days. Quiet on success; openssl's output is shown on failure.
set -eu
dir=${1:?usage: certs.sh DIR}
mkdir -p "$dir"
cd "$dir"
log=$(mktemp)
trap 'rm -f "$log" ./*.csr ./*.ext' EXIT
run() { "$@" >>"$log" 2>&1 || { cat "$log" >&2; echo "certs.sh: failed: $*" >&2; exit 1; }; }
serial() { printf '0x%s' "$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"; }

# ca NAME CN: a self-signed CA certificate NAME.pem with key NAME.key
ca() {
	run openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$1.key" -out "$1.pem" -days 2 -subj "/CN=$2" -set_serial "$(serial)" \
		-addext "basicConstraints=critical,CA:TRUE" \
		-addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" \
		-addext "subjectKeyIdentifier=hash"
}
# leaf NAME CA SUBJECT EXTENSIONS: NAME.pem/NAME.key signed by CA.pem/CA.key
leaf() {
	run openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$1.key" -out "$1.csr" -subj "$3"
	printf '%s\n' "basicConstraints=critical,CA:FALSE" \
		"keyUsage=critical,digitalSignature,keyEncipherment" \
		"subjectKeyIdentifier=hash" "authorityKeyIdentifier=keyid,issuer" "$4" >"$1.ext"
	run openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -set_serial "$(serial)" \
		-days 2 -out "$1.pem" -extfile "$1.ext"
}

ca ca berth-test-ca
ca other-ca berth-other-ca
leaf server ca "/CN=127.0.0.1" $'extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost'
leaf client ca "/O=system:masters/CN=berth-test" "extendedKeyUsage=clientAuth"
leaf rogue-client other-ca "/O=system:masters/CN=berth-test" "extendedKeyUsage=clientAuth"
chmod 600 ./*.key

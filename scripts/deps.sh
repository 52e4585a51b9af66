#!/usr/bin/env bash
# Installs what berth needs to build and test, from Debian 12 packages.
# Idempotent and quiet when everything is there already.
#
#   build:  gcc, make, pkg-config, libfyaml-dev (YAML 1.2 + JSON parser),
#           libsqlite3-dev (the run store), libsodium-dev (secrets encrypted at rest),
#           libseccomp-dev (the seccomp filter of local runs),
#           libmicrohttpd-dev (berth serve), libcurl4-openssl-dev (the CLI as a client
#           of a server, the Kubernetes API), libpq-dev (the store on PostgreSQL: its
#           header at build time; libpq is loaded only by a process that opens one)
#   tests:  postgresql (a PostgreSQL of the tests' own: tiers unit-pg, server-pg)
#   tests:  curl (drives berth serve over HTTP); bench: wrk (server load)
#   tests:  openssl (a test CA and certificates) and python3 (the stand-in Kubernetes
#           API server, tests/kube/, standard library only); kubectl, when present,
#           writes the tests' kubeconfig (it is not a Debian package: without it
#           the tests write one by hand and say skip)
#   tests:  clang + libclang-rt-14-dev (libFuzzer, sanitizer runtimes), valgrind,
#           nodejs + npm (kubernetes-models, the Kubernetes schema validator)
#   tests:  chromium (/usr/bin/chromium, the browser the web UI tests drive through
#           playwright-core, tests/ui/; it never downloads a browser of its own)
#   tests:  python3-torch (a real collective: torch.distributed's gloo all-reduce
#           across the workers of a distributed job on the local backend,
#           tests/local_distributed.sh; Debian's, for /usr/bin/python3); openmpi-bin and
#           python3-mpi4py (MPI ranks across those workers: launcher mpi)
set -eu
pkgs=(gcc make pkg-config libfyaml-dev libsqlite3-dev libsodium-dev libseccomp-dev libmicrohttpd-dev
	libcurl4-openssl-dev curl wrk openssl clang libclang-rt-14-dev valgrind chromium python3-torch
	openmpi-bin python3-mpi4py libpq-dev postgresql)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# node and npm run the tests' Kubernetes schema validator (tests/schema) and
# browser tests (tests/ui);
# any node >= 18 will do, so they are installed only when the commands are absent
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
if [ ${#missing[@]} -gt 0 ]; then
	echo "deps: installing ${missing[*]}"
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get update -qq >/dev/null
	$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# the npm packages of the schema and browser tests, from tests/schema/ and
# tests/ui/package-lock.json
"$(dirname "$0")/deps-npm.sh"

#!/usr/bin/env bash
# Installs what the benchmarks under bench/ need, from Debian 12 packages.
# Idempotent and quiet when everything is there already (like scripts/deps.sh).
#
#   python3-kubernetes  the Kubernetes Python client, for bench/k8s_models.py (the
#                       Python side of bench/render.sh). It is installed for Debian's
#                       /usr/bin/python3: a python3 earlier on PATH (pyenv, a venv) does
#                       not see it, so the benchmark runs /usr/bin/python3 explicitly.
#   python3-yaml        PyYAML with libyaml, which k8s_models.py uses to read the specs
#                       and to write the objects (a dependency of python3-kubernetes too)
#   hyperfine           whole-process timings of bench/render.sh (it falls back to a
#                       `date +%s%N` loop without it)
#   valgrind            callgrind: instructions per rendered spec
#   wrk                 HTTP load for bench/server.sh
# kubectl (bench/render.sh's single-spec comparison) is not a Debian package: the
# benchmark uses it when it is on PATH and skips that row otherwise.
set -eu
pkgs=(python3-kubernetes python3-yaml hyperfine valgrind wrk)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "deps-bench: installing ${missing[*]}"
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get update -qq >/dev/null
	$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

#!/usr/bin/env bash
# Installs what berth needs to build and test, from Debian 12 packages.
# Idempotent and quiet when everything is there already.
#
#   build:  gcc, make, pkg-config, libfyaml-dev (YAML 1.2 + JSON parser)
#   tests:  clang + libclang-rt-14-dev (libFuzzer, sanitizer runtimes), valgrind
set -eu
pkgs=(gcc make pkg-config libfyaml-dev clang libclang-rt-14-dev valgrind)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "deps: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq >/dev/null
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

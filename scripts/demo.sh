#!/usr/bin/env bash
# The main job, as far as berth goes today: check the example run specs.
# (Running them on the local backend comes with the local backend.)
set -eu
cd "$(dirname "$0")/.."
for f in examples/*.yaml; do
	build/berth validate "$f"
done
echo
echo "and a spec with mistakes, to show how berth reports them:"
build/berth validate examples/broken/train.yaml || echo "(exit status $?: invalid input)"

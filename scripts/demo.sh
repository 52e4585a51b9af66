#!/usr/bin/env bash
# The main job, as far as berth goes today: check the example run specs, merge
# one with the example policy and render its Kubernetes objects.
# (Running them on the local backend comes with the local backend.)
set -eu
cd "$(dirname "$0")/.."
for f in examples/*.yaml; do
	build/berth validate "$f"
done
echo
echo "and a spec with mistakes, to show how berth reports them:"
build/berth validate examples/broken/train.yaml || echo "(exit status $?: invalid input)"
echo
echo "merged with the example policy (profile 1xa100), where each value comes from:"
build/berth explain examples/train.yaml --config examples/policy/config.yaml --run-id demo
echo
echo "and the Kubernetes objects berth renders for it:"
build/berth render examples/train.yaml --config examples/policy/config.yaml --run-id demo

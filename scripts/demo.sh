#!/usr/bin/env bash
# The main job: check the example run specs, show how one merges with the
# example policy and what berth renders for Kubernetes, then run a job on this
# machine with the local backend (limits enforced by cgroups, a volume, envs).
set -eu
cd "$(dirname "$0")/.."
for f in examples/*.yaml; do
	build/berth validate "$f"
done
echo
echo "a spec with mistakes, to show how berth reports them:"
build/berth validate examples/broken/train.yaml || echo "(exit status $?: invalid input)"
echo
echo "merged with the example policy (profile 1xa100), where each value comes from:"
build/berth explain examples/train.yaml --config examples/policy/config.yaml --run-id demo
echo
echo "the Kubernetes objects berth renders for it (first 30 lines):"
build/berth render examples/train.yaml --config examples/policy/config.yaml --run-id demo | head -30
echo "..."
echo
echo "and a job run on this machine (state in \${BERTH_HOME:-~/.berth}):"
echo "\$ berth run examples/local.yaml --follow"
build/berth run examples/local.yaml --follow
echo
echo "\$ berth get runs"
build/berth get runs | head -6

#!/usr/bin/env bash
# bench/kubectl_job.sh - the kubectl way of writing a Job: `kubectl create job` piped
# into `kubectl set resources`, both client-side only (no API server is contacted).
#
#   bench/kubectl_job.sh NAME IMAGE REQUESTS LIMITS -- COMMAND [ARG...]
#   bench/kubectl_job.sh train-resnet-r1 python:3.11 cpu=8,memory=64Gi \
#       memory=64Gi,nvidia.com/gpu=1 -- python train.py --epochs 5
#
# Prints one batch/v1 Job: metadata.name NAME, one container (named NAME) with IMAGE,
# COMMAND and its ARGs as `command`, restartPolicy Never, and resources.requests
# REQUESTS and resources.limits LIMITS. bench/render.sh times it against `berth
# render` of the same run (examples/train.yaml). Two kubectl processes run, as a user
# of kubectl would run them; the bash that starts them adds about 1 ms.
set -eu -o pipefail
if [ $# -lt 6 ] || [ "$5" != -- ]; then
	echo "usage: kubectl_job.sh NAME IMAGE REQUESTS LIMITS -- COMMAND [ARG...]" >&2
	exit 2
fi
name=$1 image=$2 requests=$3 limits=$4
shift 5
kubectl create job "$name" --image="$image" --dry-run=client -o yaml -- "$@" |
	kubectl set resources --local -f - --requests="$requests" --limits="$limits" -o yaml

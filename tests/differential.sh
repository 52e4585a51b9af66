#!/usr/bin/env bash
# One check, everywhere (issue 23): validate, explain, run --dry-run and the
# server's validate route (local backend), validate, explain and render
# (kubernetes) agree on every spec of examples/ and tests/data/render/.
#   tests/differential.sh BERTH
exec python3 "$(cd "$(dirname "$0")" && pwd)/differential.py" "$@"

#!/usr/bin/env bash
# Writes docs/performance.md from the fragments the benchmarks left in
# build/bench/ (render.md, server.md, launch.md, memory.md), in that order, under
# a header that says where and when they were measured. `make bench` runs it last.
#   bench/report.sh [OUT]   (default docs/performance.md)
set -eu
cd "$(dirname "$0")/.."
out=${1:-docs/performance.md}
{
	cat <<'HEAD'
# Performance

Measured by `make bench` (bench/README.md says what each script does), never by timed
assertions in `make test`. Each section says its command; the figures are medians of
several runs where the section says so. Every benchmark runs on the same machine as its
load generator, so the figures are what is left after the load's share.

HEAD
	echo "- Date: $(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), berth $(cat VERSION 2>/dev/null || echo '?')."
	echo "- Machine: $(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)."
	echo "- Build: \`make -j2\` (-O2)."
	echo
	for part in render server launch memory; do
		f=build/bench/$part.md
		if [ -s "$f" ]; then
			cat "$f"
			echo
		else
			echo "## $part"
			echo
			echo "Not measured in this run (build/bench/$part.md is missing)."
			echo
		fi
	done
} >"$out"
echo "wrote $out"

#!/usr/bin/env bash
# bench.sh — run mcpgate's benchmark harness (bench/) on this machine.
#
# It installs the Node peers if needed (scripts/peers.sh: supergateway is one),
# builds mcpgate into .cache/bin, starts every path under test as its own
# process on loopback, runs the interleaved rounds, stops everything, and writes
# .cache/bench/results.json and results.md. A full run takes about 4 minutes on
# 2 cores; -short takes seconds and only shows that the harness works.
#
# Usage:
#   scripts/bench.sh [-short] [-only PATHS] [-rounds N] [-window 2s] [-rate 1000] [-sessions 1000,10000]
# The table in docs/benchmarks.md comes from a plain `scripts/bench.sh`; a full
# run (not -short, not -only) appends its ratios and the commit to
# docs/benchmarks.json and redraws docs/benchmarks-history.svg.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/peers.sh install >/dev/null
mkdir -p .cache/bin
go build -o .cache/bin/bench ./bench
exec .cache/bin/bench -history docs/benchmarks.json "$@"

#!/usr/bin/env bash
# Run the producer's CPU benchmarks (BENCHMARKS.md) against a private Dovecot,
# with the two pinned apart: Dovecot on the last CPU, the benchmark on CPU 0.
# Sharing cores, each one's scheduling shows up in the other's CPU time.
#
#   deploy/dovecot/bench.sh [BENCH] [BENCHTIME] [COUNT] [DIR] [PORT]
#
#   BENCH      benchmark pattern (default 'Session|Command|FetchItems')
#   BENCHTIME  -benchtime (default 3000x)
#   COUNT      -count (default 3)
#   DIR, PORT  Dovecot's state directory and port (default /tmp/imapload-bench-dovecot, 12143)
#
# Must run as root (deploy/dovecot/start.sh). Extra `go test` arguments can be
# given in GOTESTFLAGS, e.g. GOTESTFLAGS=-cpuprofile=cpu.prof.
set -euo pipefail
cd "$(dirname "$0")/../.."

BENCH=${1:-Session|Command|FetchItems}
BENCHTIME=${2:-3000x}
COUNT=${3:-3}
DIR=${4:-/tmp/imapload-bench-dovecot}
PORT=${5:-12143}

last=$(($(nproc) - 1))
env=$(taskset -c "$last" deploy/dovecot/start.sh "$DIR" "$PORT" 100 secret PLAIN $((PORT + 850)))
trap 'deploy/dovecot/stop.sh "$DIR" >&2' EXIT
set -a
eval "$env"
set +a
echo "bench.sh: Dovecot on CPU $last, benchmark on CPU 0; $(uptime)" >&2
# shellcheck disable=SC2086
taskset -c 0 go test ./producer -run '^$' -bench "$BENCH" -benchtime "$BENCHTIME" -count "$COUNT" ${GOTESTFLAGS:-}
echo "bench.sh: done; $(uptime)" >&2

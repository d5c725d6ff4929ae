#!/bin/bash
#! cpu_split.sh: where a server's CPU time goes under the HTTP bench's load, in user space
#! (its own code and libraries) and in the kernel (the socket system calls), per request. Every
#! server is pinned to CPU 0 with 1 worker and a fresh database seeded with users 1-100, wrk
#! -t2 -c64 pinned to CPU 1; after a 2 s warm-up, SECS seconds are measured, and the server's
#! user and system times (/proc/PID/stat, all its threads, in clock ticks) are read before and
#! after. Prints one line per server: executable, req/s, user µs and system µs per request, and
#! the kernel's share of the server's CPU time.
#!
#! It bounds what a user-space saving can do to req/s: with the kernel's time per request fixed,
#! a server whose kernel share is K can be at most 1 / K times as fast by its own code alone.
#!
#! usage: bench/experiments/cpu_split.sh PATH [LUA] -- EXE...
#!   PATH   the request path, e.g. /health
#!   LUA    a wrk script (e.g. bench/results/*/scripts/echo.lua), or "" for a GET
#!   EXE    service executables (`nagic build` output) or the baseline (`http-baseline`)
set -euo pipefail
# shellcheck source=bench/experiments/seed.sh
. "$(dirname "$0")/seed.sh"
URLPATH=$1; LUA=$2; shift 2; [ "${1:-}" = "--" ] && shift
SECS=${SECS:-5}
TICK=$(getconf CLK_TCK)
DIR=$(mktemp -d); trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$DIR"' EXIT
script=(); [ -n "$LUA" ] && script=(-s "$LUA")
i=0
for exe in "$@"; do
  port=$((42000 + i)); i=$((i + 1))
  taskset -c 0 "$exe" --listen 127.0.0.1:$port --db "$DIR/$i.db" --workers 1 >/dev/null 2>&1 &
  pid=$!
  seed "$port"
  taskset -c 1 wrk -t2 -c64 -d2s "${script[@]}" "http://127.0.0.1:$port$URLPATH" -- 1000000000 >/dev/null
  read -r user0 sys0 < <(awk '{print $14, $15}' "/proc/$pid/stat")
  requests=$(taskset -c 1 wrk -t2 -c64 -d"${SECS}s" "${script[@]}" "http://127.0.0.1:$port$URLPATH" -- 2000000000 \
    | awk '/requests in/ {print $1}')
  read -r user1 sys1 < <(awk '{print $14, $15}' "/proc/$pid/stat")
  kill "$pid"; wait "$pid" 2>/dev/null || true
  awk -v exe="$(basename "$exe")" -v n="$requests" -v s="$SECS" -v t="$TICK" \
    -v u=$((user1 - user0)) -v k=$((sys1 - sys0)) 'BEGIN {
      printf "%-16s %9.0f req/s  user %.3f µs  system %.3f µs per request  kernel %.0f %%\n",
        exe, n / s, u / t / n * 1e6, k / t / n * 1e6, 100 * k / (u + k) }'
done

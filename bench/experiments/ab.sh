#!/bin/bash
#! ab.sh: interleaved A/B throughput of service builds on one case, as bench/README.md's
#! "JSON-path gap" experiments were measured: every server pinned to CPU 0 with 1 worker and a
#! fresh database seeded with users 1-100, wrk -t2 -c64 pinned to CPU 1, ROUNDS rounds of SECS
#! seconds, the servers one after the other in each round. Prints one line per run: round,
#! executable, req/s.
#!
#! usage: FLAGS="--log warn" bench/experiments/ab.sh PATH [LUA] -- EXE...
#!   PATH   the request path, e.g. /users/1
#!   LUA    a wrk script (e.g. bench/results/*/scripts/post-users.lua), or "" for a GET
#!   EXE    service executables (`nagic build` output) or the baseline (`http-baseline`, given
#!          BASELINE_FLAGS instead of FLAGS)
set -euo pipefail
# shellcheck source=bench/experiments/seed.sh
. "$(dirname "$0")/seed.sh"
URLPATH=$1; LUA=$2; shift 2; [ "${1:-}" = "--" ] && shift
ROUNDS=${ROUNDS:-3}; SECS=${SECS:-3}
DIR=$(mktemp -d); trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$DIR"' EXIT
declare -A PORTS
i=0
for exe in "$@"; do
  port=$((41000 + i)); i=$((i + 1))
  if [[ $(basename "$exe") == http-baseline* ]]; then flags=${BASELINE_FLAGS:-}; else flags=${FLAGS:-}; fi
  # shellcheck disable=SC2086
  taskset -c 0 "$exe" --listen 127.0.0.1:$port --db "$DIR/$i.db" --workers 1 $flags >/dev/null 2>&1 &
  PORTS[$exe]=$port
done
for exe in "$@"; do
  port=${PORTS[$exe]}
  seed "$port"
done
for r in $(seq "$ROUNDS"); do
  for exe in "$@"; do
    port=${PORTS[$exe]}
    script=(); [ -n "$LUA" ] && script=(-s "$LUA")
    # The script argument keeps POST /users ids fresh per round and server.
    rps=$(taskset -c 1 wrk -t2 -c64 -d"${SECS}s" "${script[@]}" "http://127.0.0.1:$port$URLPATH" \
      -- $((r * 1000000000 + port * 100000)) | awk '/Requests\/sec/ {print $2}')
    echo "r$r $exe $rps"
  done
done

#!/bin/bash
#! allocs.sh: heap allocations per request of a service build, as bench/README.md counts them:
#! valgrind memcheck's "total heap usage" of the server under `wrk -t1 -c1 -d3s`, minus the same
#! server started, seeded (users 1-100) and stopped with no load, divided by wrk's request count.
#!
#! usage: FLAGS="--log warn" bench/experiments/allocs.sh EXE PATH [LUA]
set -euo pipefail
# shellcheck source=bench/experiments/seed.sh
. "$(dirname "$0")/seed.sh"
EXE=$1; URLPATH=$2; LUA=${3:-}
DIR=$(mktemp -d); trap 'rm -rf "$DIR"' EXIT
PORT=$((20000 + RANDOM % 10000))
run() { # $1: 1 to put load on the server
  rm -f "$DIR"/v.db*
  # shellcheck disable=SC2086
  valgrind --tool=memcheck --log-file="$DIR/vg.txt" "$EXE" --listen 127.0.0.1:$PORT --db "$DIR/v.db" \
    --workers 1 ${FLAGS:-} >/dev/null 2>&1 &
  local vp=$!
  seed "$PORT" 40
  local requests=1
  if [ "$1" = 1 ]; then
    script=(); [ -n "$LUA" ] && script=(-s "$LUA")
    requests=$(wrk -t1 -c1 -d3s "${script[@]}" "http://127.0.0.1:$PORT$URLPATH" -- 5000000000 \
      | awk '/requests in/ {print $1}')
  fi
  kill -TERM $vp; wait $vp || true
  echo "$(grep 'total heap usage' "$DIR/vg.txt" | sed 's/.*usage: \([0-9,]*\) allocs.*/\1/' | tr -d ,) $requests"
}
read -r idle _ < <(run 0)
read -r loaded requests < <(run 1)
python3 -c "print(f'{($loaded - $idle) / $requests:.1f} allocations per request over $requests requests')"

#!/usr/bin/env bash
# A/B costs of the runtime hardening (issue "Runtime hardening"), between two nagic builds:
#   bench/hardening/compare.sh OLD_NAGIC NEW_NAGIC
# 1. Writes: examples/users.nagi built by each, POST /users with a fresh id per request
#    (post_users.lua), server pinned to CPU 0 with 1 worker and --log warn, wrk -t1 -c16 pinned
#    to CPU 1, 3 rounds x 5 s, the two servers interleaved. Needs wrk (Debian: apt-get install wrk).
# 2. Calls: fib.nagi (recursive fib(30)) built by each on the Rust path and the LLVM path (-O2);
#    instructions counted by valgrind's callgrind (repeatable on a noisy machine), then 15
#    interleaved timed runs of fib(35)-sized work pinned to CPU 0, median seconds.
set -euo pipefail
old=$1 new=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }
for v in old new; do
  nagic=${!v}
  (cd "$root" && "$nagic" build examples/users.nagi -o "$work/users-$v" >/dev/null)
  sed 's/fib(35)/fib(30)/' "$here/fib.nagi" > "$work/fib30.nagi"
  "$nagic" build "$here/fib.nagi" -o "$work/fib-rust-$v" >/dev/null
  "$nagic" build --backend=llvm --llvm-opt=2 "$here/fib.nagi" -o "$work/fib-llvm-$v" >/dev/null
  "$nagic" build "$work/fib30.nagi" -o "$work/fib30-rust-$v" >/dev/null
  "$nagic" build --backend=llvm --llvm-opt=2 "$work/fib30.nagi" -o "$work/fib30-llvm-$v" >/dev/null
done
echo "== POST /users (req/s, mean latency, non-2xx)"
port=9400
for round in 1 2 3; do
  for v in old new; do
    port=$((port + 1))
    taskset -c 0 "$work/users-$v" --listen 127.0.0.1:$port --db "$work/w-$v-$round.db" --log warn --workers 1 >/dev/null 2>&1 &
    pid=$!
    sleep 1
    taskset -c 1 wrk -t1 -c16 -d5s -s "$here/post_users.lua" http://127.0.0.1:$port/users 2>&1 |
      awk -v v=$v -v r=$round '/Requests\/sec/ {rps=$2} /non2xx/ {e=$1} /Latency/ {lat=$2} END {print r, v, rps, lat, e}'
    kill $pid; wait $pid 2>/dev/null || true
  done
done
echo "== fib(30) instructions (callgrind)"
for f in fib30-rust-old fib30-rust-new fib30-llvm-old fib30-llvm-new; do
  echo "$f $(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$work/$f" 2>&1 | awk '/Collected/ {print $4}')"
done
echo "== fib(35) seconds, median of 15 interleaved runs"
for round in $(seq 1 15); do
  for v in rust-old rust-new llvm-old llvm-new; do
    s=$(date +%s.%N); taskset -c 0 "$work/fib-$v" >/dev/null; e=$(date +%s.%N)
    echo "$v $(echo "$e - $s" | bc)"
  done
done | sort -k1,1 -k2n | awk '{a[$1]=a[$1]" "$2; n[$1]++} END {for (k in a) {split(a[k],v," "); print k, v[int((n[k]+1)/2)]}}' | sort
rm -rf "$work"

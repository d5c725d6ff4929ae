#!/bin/bash
#! fresh_clone.sh: the seconds from a fresh clone to the first 200 of `GET /health`, as a new user
#! meets the project: `git clone`, then the README's first command
#! (`cargo run -q -- run examples/users.nagi`), timed from the end of the clone. Each run has an
#! empty cargo cache: CARGO_HOME is a new, empty directory (so the crates are downloaded from the
#! registry again and nothing is compiled yet), and the clone has no `target/`. The rustup
#! toolchain itself stays installed. Prints one line per run, and leaves
#! `cargo-timings/` of the driver's build beside each run's log (cargo run --timings).
#!
#! usage: bench/experiments/fresh_clone.sh REPO [RUNS]
#!   REPO   what to clone: a path or URL of the Nagi repository (e.g. `.`)
#!   RUNS   how many runs, one after the other (3)
set -euo pipefail
REPO=$(realpath "$1" 2>/dev/null || echo "$1"); RUNS=${2:-3}
PORT=${PORT:-18080}
OUT=$(mktemp -d /tmp/nagi-fresh-clone.XXXX)
echo "runs in $OUT"
for run in $(seq 1 "$RUNS"); do
  dir=$OUT/run$run
  export CARGO_HOME=$OUT/cargo-home$run
  mkdir -p "$CARGO_HOME"
  git clone -q "$REPO" "$dir"
  cd "$dir"
  start=$(date +%s.%N)
  cargo run --timings -q -- run examples/users.nagi -- --listen 127.0.0.1:$PORT --db "$dir/users.db" \
    > "$OUT/serve$run.log" 2>&1 &
  server=$!
  until curl -sf -o /dev/null "http://127.0.0.1:$PORT/health"; do
    kill -0 $server 2>/dev/null || { echo "run $run: the service stopped; see $OUT/serve$run.log"; exit 1; }
    sleep 0.2
  done
  end=$(date +%s.%N)
  printf 'run %d: %.1f s from the clone to the first 200 of /health\n' "$run" "$(echo "$end - $start" | bc)"
  pkill -INT -f -- "--listen 127.0.0.1:$PORT" || true
  wait $server || true
  cp -r target/cargo-timings "$OUT/cargo-timings$run"
  # The next run starts from nothing again: no build products, no downloaded crates.
  rm -rf "$dir/target" "$CARGO_HOME"
  cd /
done

#!/usr/bin/env bash
# Runs a fuzz target for SECONDS (default 60) on the stable toolchain: TARGET=parse_verify
# (Low; the default), TARGET=high_check (High Nagi) or TARGET=progen_run (random programs on
# the interpreter and the JIT at -O0 and -O2).
# Usage: [TARGET=…] fuzz/run.sh [SECONDS] [extra libFuzzer flags…]
#   e.g. fuzz/run.sh 300 -fork=2 -ignore_crashes=1   (keep going after a crash)
# Needs cargo-fuzz: `cargo install cargo-fuzz`. SANITIZER=address fuzz/run.sh … builds with
# AddressSanitizer (about 4x slower; nagi-low has no unsafe code, so the default is none).
set -euo pipefail

seconds="${1:-60}"
sanitizer="${SANITIZER:-none}"
shift || true

fuzz_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$fuzz_dir")"
target="${TARGET:-parse_verify}"
corpus="$fuzz_dir/corpus/$target"

if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "run.sh: cargo-fuzz is not installed; run: cargo install cargo-fuzz" >&2
  exit 1
fi

# Seed the corpus (git-ignored) from the golden Low files and the fuzzer's own seeds. Files
# already there, including ones the fuzzer found, are kept.
mkdir -p "$corpus"
shopt -s nullglob globstar
if [ "$target" = high_check ]; then
  seeds=("$repo"/golden/high/**/*.nagi "$repo"/examples/*.nagi)
  flags=()
elif [ "$target" = progen_run ]; then
  # The generator reads any bytes; libFuzzer's own inputs are the corpus. Its inputs start at a
  # few bytes and grow slowly (14 bytes after 10 minutes, a `main` of a few statements), so the
  # corpus starts with inputs of random bytes as long as a seeded program's (4 KiB, written
  # once), and the length limit is max_len at once.
  seeds=()
  flags=(-len_control=0)
  for i in $(seq 1 16); do
    [ -e "$corpus/random-$i" ] || head -c 4096 /dev/urandom >"$corpus/random-$i"
  done
else
  seeds=("$repo"/golden/low/**/*.low "$fuzz_dir"/seeds/*.low)
  flags=(-dict="$fuzz_dir/low.dict")
fi
for f in "${seeds[@]}"; do
  name="${f#"$repo"/}"
  cp "$f" "$corpus/seed-${name//\//_}"
done

# cargo fuzz passes -Z flags to rustc: RUSTC_BOOTSTRAP=1 lets the stable compiler take them.
cd "$repo"
RUSTC_BOOTSTRAP=1 exec cargo fuzz run --sanitizer "$sanitizer" "$target" "$corpus" -- \
  -max_total_time="$seconds" -max_len=8192 -timeout=10 "${flags[@]}" -print_final_stats=1 "$@"

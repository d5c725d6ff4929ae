// The six CPU kernels in Node, timed after a JIT warm-up.
//
// Run by `nagi-bench kernels` (pinned to one CPU) as
//
//     node kernels.js --expected JSON --level LEVEL [--check] [--warmup 50 --repeats 7 --calls 100]
//
// It prepares the shared input outside any timed region (plain arrays of numbers: small
// integers and doubles, as idiomatic JavaScript holds them), checks every kernel's result
// against JSON (the values of docs/design.md §6; floats within 1e-7) and exits with status 3 naming the
// variant and the kernel on a mismatch, before anything is timed. With --check it stops there.
// Otherwise, per kernel: `--warmup` calls (for the JIT), then `--repeats` timed batches of
// `--calls` calls each (process.hrtime.bigint around the batch). Every record is a JSON line on
// stdout, in the format of bench/src/records.rs. Numbers are doubles: exact for this input and
// these results, but not Nagi's i64 semantics over the whole range.
//
// The loops are indexed (`for (let i = 0; i < xs.length; i++)`), not `for (const x of xs)`:
// with `for…of`, V8 (Node 20) optimizes the first call's loop on stack (OSR), then the whole
// function, then deoptimizes it ("Insufficient type feedback for generic named access" at the
// iterator, `node --trace-deopt`) and did not optimize it again within the 750 calls of a run,
// so the array kernels measured about 7 ns per element, interpreter speed, instead of under 1.
'use strict';

const N = 100000;

function integerSum(xs) {
  let acc = 0;
  for (let i = 0; i < xs.length; i++) acc += xs[i];
  return acc;
}

function mapReduce(xs) {
  let acc = 0;
  for (let i = 0; i < xs.length; i++) acc += 3 * xs[i] + 1;
  return acc;
}

function filterReduce(xs) {
  let acc = 0;
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i];
    if (x > 0) acc += x;
  }
  return acc;
}

function branch(xs) {
  let acc = 0;
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i];
    if (x % 7 === 0) acc += x;
    else acc -= x;
  }
  return acc;
}

function floatSum(fs) {
  let acc = 0.0;
  for (let i = 0; i < fs.length; i++) acc += fs[i];
  return acc;
}

function loopSum(n) {
  let acc = 0;
  for (let i = 0; i < n; i++) acc += i % 7;
  return acc;
}

function parseArgs(argv) {
  const args = { check: false, warmup: 50, repeats: 7, calls: 100 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--check') args.check = true;
    else if (a === '--expected') args.expected = JSON.parse(argv[++i]);
    else if (a === '--level') args.level = argv[++i];
    else if (a === '--warmup') args.warmup = Number(argv[++i]);
    else if (a === '--repeats') args.repeats = Number(argv[++i]);
    else if (a === '--calls') args.calls = Number(argv[++i]);
  }
  if (!args.expected || !args.level) {
    process.stderr.write('usage: node kernels.js --expected JSON --level LEVEL [--check]\n');
    process.exit(2);
  }
  return args;
}

function main() {
  const args = parseArgs(process.argv.slice(2));
  const xs = [];
  for (let i = 0; i < N; i++) xs.push((i * 17 + 13) % 997 - 498);
  const fs = xs.map((x) => x / 7);
  const cases = [
    ['integer_sum', integerSum, xs],
    ['map_reduce', mapReduce, xs],
    ['filter_reduce', filterReduce, xs],
    ['branch', branch, xs],
    ['float_sum', floatSum, fs],
    ['loop', loopSum, N],
  ];
  const emit = (r) => process.stdout.write(JSON.stringify(r) + '\n');
  for (const [kernel, f, arg] of cases) {
    const got = f(arg);
    const want = args.expected[kernel];
    const ok = kernel === 'float_sum' ? Math.abs(got - want) <= 1e-7 : got === want;
    emit({ kind: 'check', level: args.level, variant: 'node', kernel, value: got, ok });
    if (!ok) {
      process.stderr.write(`checksum mismatch: variant node, kernel ${kernel}: got ${got}, expected ${want}\n`);
      process.exit(3);
    }
  }
  if (args.check) return;
  // Results are folded into a sink so the JIT cannot drop a call as unused.
  let sink = 0;
  for (const [kernel, f, arg] of cases) {
    for (let w = 0; w < args.warmup; w++) sink += f(arg);
    for (let r = 0; r < args.repeats; r++) {
      const start = process.hrtime.bigint();
      for (let c = 0; c < args.calls; c++) sink += f(arg);
      const ns = Number(process.hrtime.bigint() - start);
      emit({ kind: 'sample', tool: 'hrtime', level: args.level, variant: 'node', kernel, sample: r, iters: args.calls, ns });
    }
  }
  if (Number.isNaN(sink)) process.stderr.write('unreachable\n');
}

main();

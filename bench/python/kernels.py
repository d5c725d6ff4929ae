"""The six CPU kernels in CPython: explicit loops, plus the builtin `sum` as a reference line.

Run by `nagi-bench kernels` (pinned to one CPU) as

    python3 kernels.py --expected JSON --level LEVEL [--check] [--warmup 5 --repeats 7 --calls 25]

It prepares the shared input outside any timed region, checks every kernel's result against
JSON (the values of docs/design.md §6; floats within 1e-7) and exits with status 3 naming the variant and the
kernel on a mismatch, before anything is timed. With --check it stops there. Otherwise, per
kernel: `--warmup` calls, then `--repeats` timed batches of `--calls` calls each
(time.perf_counter_ns around the batch). Every record is a JSON line on stdout, in the format of
bench/src/records.rs.
"""

import argparse
import json
import sys
import time

N = 100_000


def integer_sum(xs):
    acc = 0
    for x in xs:
        acc += x
    return acc


def map_reduce(xs):
    acc = 0
    for x in xs:
        acc += 3 * x + 1
    return acc


def filter_reduce(xs):
    acc = 0
    for x in xs:
        if x > 0:
            acc += x
    return acc


def branch(xs):
    acc = 0
    for x in xs:
        # Python's % takes the sign of the divisor; x % 7 == 0 is the same test either way.
        if x % 7 == 0:
            acc += x
        else:
            acc -= x
    return acc


def float_sum(fs):
    acc = 0.0
    for x in fs:
        acc += x
    return acc


def loop_sum(n):
    acc = 0
    for i in range(n):
        acc += i % 7
    return acc


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--expected", required=True)
    parser.add_argument("--level", required=True)
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--calls", type=int, default=25)
    args = parser.parse_args()
    expected = json.loads(args.expected)

    xs = [(i * 17 + 13) % 997 - 498 for i in range(N)]
    fs = [x / 7 for x in xs]
    # (variant, kernel, function, argument); `python-sum` is the builtin sum, a reference line.
    cases = [
        ("python", "integer_sum", integer_sum, xs),
        ("python", "map_reduce", map_reduce, xs),
        ("python", "filter_reduce", filter_reduce, xs),
        ("python", "branch", branch, xs),
        ("python", "float_sum", float_sum, fs),
        ("python", "loop", loop_sum, N),
        ("python-sum", "integer_sum", sum, xs),
        ("python-sum", "float_sum", sum, fs),
    ]

    def emit(record):
        print(json.dumps(record), flush=True)

    for variant, kernel, f, arg in cases:
        got = f(arg)
        want = expected[kernel]
        ok = abs(got - want) <= 1e-7 if isinstance(want, float) else got == want
        emit({"kind": "check", "level": args.level, "variant": variant, "kernel": kernel, "value": got, "ok": ok})
        if not ok:
            print(f"checksum mismatch: variant {variant}, kernel {kernel}: got {got!r}, expected {want!r}",
                  file=sys.stderr)
            sys.exit(3)
    if args.check:
        return
    for variant, kernel, f, arg in cases:
        for _ in range(args.warmup):
            f(arg)
        for r in range(args.repeats):
            start = time.perf_counter_ns()
            for _ in range(args.calls):
                f(arg)
            ns = time.perf_counter_ns() - start
            emit({"kind": "sample", "tool": "perf_counter_ns", "level": args.level, "variant": variant,
                  "kernel": kernel, "sample": r, "iters": args.calls, "ns": ns})


if __name__ == "__main__":
    main()

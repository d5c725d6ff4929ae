//! `micro [--quick]`: runs the micro-benchmarks (see `lib.rs` and bench/README.md, "The
//! micro-benchmarks") and prints the table, then every variant's record as a JSON line.
//! `--quick` is a smoke run of every check with tiny timings, not a measurement.

use nagi_bench_micro::{Size, encode, json_decode, records, rows, table};

fn main() {
    let size = if std::env::args().any(|a| a == "--quick") { Size::QUICK } else { Size::FULL };
    let (d, r, e) = (json_decode(size), rows(size), encode(size));
    println!("{}", table(&d, &r, size.rows, &e));
    for record in records("json_decode", &d).into_iter().chain(records("rows", &r)).chain(records("encode", &e)) {
        println!("{record}");
    }
}

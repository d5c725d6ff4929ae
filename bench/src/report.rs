//! The Markdown report of a run: per CPU level, a matrix of ratios to hand-written Rust, then
//! the full table (µs per call, ns per item, ratio, allocations per call), and the list of
//! places where a Nagi variant is more than [`GAP`] times slower than hand-written Rust.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::kernels::Kernel;
use crate::records::Summary;

/// The variants in report order; the first is the baseline.
pub const VARIANTS: [&str; 7] = ["rust", "nagi-rust", "nagi-llvm-O2", "nagi-llvm-O3", "node", "python", "python-sum"];

/// The baseline every ratio is taken against.
pub const BASELINE: &str = "rust";

/// A Nagi variant slower than hand-written Rust by more than this factor is called out.
pub const GAP: f64 = 1.10;

/// What a variant means, for the table's legend.
pub fn describe(variant: &str) -> &'static str {
    match variant {
        "rust" => "hand-written idiomatic Rust (iterators), the baseline",
        "nagi-rust" => "examples/kernels.nagi through the Rust emitter",
        "nagi-llvm-O2" => "examples/kernels.nagi through the LLVM emitter at -O2 (its default)",
        "nagi-llvm-O3" => "examples/kernels.nagi through the LLVM emitter at -O3",
        "node" => "Node, explicit loops after a JIT warm-up",
        "python" => "CPython, explicit loops",
        "python-sum" => "CPython's builtin sum (reference line)",
        _ => "",
    }
}

/// The summaries of one level: variant → kernel.
pub type Level = BTreeMap<String, BTreeMap<Kernel, Summary>>;

/// The ratio of `variant`'s median to the baseline's on `kernel`.
pub fn ratio(level: &Level, variant: &str, kernel: Kernel) -> Option<f64> {
    let base = level.get(BASELINE)?.get(&kernel)?.median_ns?;
    let this = level.get(variant)?.get(&kernel)?.median_ns?;
    Some(this / base)
}

/// Nagi variants slower than the baseline by more than [`GAP`]: (variant, kernel, ratio).
pub fn gaps(level: &Level) -> Vec<(String, Kernel, f64)> {
    let mut out = Vec::new();
    for variant in VARIANTS.iter().filter(|v| v.starts_with("nagi-")) {
        for kernel in Kernel::ALL {
            if let Some(r) = ratio(level, variant, kernel)
                && r > GAP
            {
                out.push((variant.to_string(), kernel, r));
            }
        }
    }
    out
}

/// A number with about three significant digits.
pub fn fmt3(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else if a >= 0.1 {
        format!("{v:.3}")
    } else {
        format!("{v:.4}")
    }
}

fn fmt_ratio(r: f64) -> String {
    if r >= 10.0 { format!("{r:.0}×") } else { format!("{r:.2}×") }
}

/// The ratio matrix: a row per variant, a column per kernel; ratios above [`GAP`] for Nagi
/// variants in bold.
pub fn ratio_matrix(level: &Level) -> String {
    let mut out = String::from("| variant |");
    for k in Kernel::ALL {
        let _ = write!(out, " {k} |");
    }
    out.push_str("\n| --- |");
    for _ in Kernel::ALL {
        out.push_str(" ---: |");
    }
    out.push('\n');
    for variant in VARIANTS.iter().filter(|v| level.contains_key(**v)) {
        let _ = write!(out, "| {variant} |");
        for k in Kernel::ALL {
            match ratio(level, variant, k) {
                Some(r) if variant.starts_with("nagi-") && r > GAP => {
                    let _ = write!(out, " **{}** |", fmt_ratio(r));
                }
                Some(r) => {
                    let _ = write!(out, " {} |", fmt_ratio(r));
                }
                None => out.push_str(" – |"),
            }
        }
        out.push('\n');
    }
    out
}

/// The full table: kernel, variant, µs per call, ns per item, ratio, allocations per call.
pub fn full_table(level: &Level) -> String {
    let mut out = String::from("| kernel | variant | µs/call | ns/item | × rust | allocations/call |\n");
    out.push_str("| --- | --- | ---: | ---: | ---: | ---: |\n");
    for k in Kernel::ALL {
        for variant in VARIANTS {
            let Some(s) = level.get(variant).and_then(|m| m.get(&k)) else { continue };
            let Some(us) = s.us_per_call() else { continue };
            let item = s.ns_per_item().map(fmt3).unwrap_or_default();
            let r = ratio(level, variant, k).map(fmt_ratio).unwrap_or_else(|| "–".into());
            let allocs = s.allocations.map(|a| a.to_string()).unwrap_or_else(|| "not measured".into());
            let _ = writeln!(out, "| {k} | {variant} | {} | {item} | {r} | {allocs} |", fmt3(us));
        }
    }
    out
}

/// The variants the run skipped, with why, as Markdown list items.
pub fn skipped(notes: &[String]) -> String {
    notes.iter().map(|n| format!("- {n}\n")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(ns: f64) -> Summary {
        Summary { median_ns: Some(ns), samples: 20, allocations: Some(0), checked: true }
    }

    #[test]
    fn ratios_gaps_and_tables() {
        let mut level = Level::new();
        level.entry("rust".into()).or_default().insert(Kernel::IntegerSum, summary(10_000.0));
        level.entry("nagi-rust".into()).or_default().insert(Kernel::IntegerSum, summary(12_000.0));
        level.entry("nagi-llvm-O2".into()).or_default().insert(Kernel::IntegerSum, summary(10_500.0));
        assert_eq!(ratio(&level, "nagi-rust", Kernel::IntegerSum), Some(1.2));
        assert_eq!(gaps(&level), vec![("nagi-rust".to_string(), Kernel::IntegerSum, 1.2)]);
        let matrix = ratio_matrix(&level);
        assert!(matrix.contains("| nagi-rust | **1.20×** |"), "{matrix}");
        assert!(matrix.contains("| nagi-llvm-O2 | 1.05× |"), "{matrix}");
        let table = full_table(&level);
        assert!(table.contains("| integer_sum | nagi-rust | 12.0 | 0.120 | 1.20× | 0 |"), "{table}");
        assert_eq!((fmt3(1234.5), fmt3(0.01234)), ("1234".to_string(), "0.0123".to_string()));
    }
}

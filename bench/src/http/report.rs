//! The HTTP bench's records and what the report makes of them: medians over the rounds per
//! server and case, ratios to the plain baseline, the LLVM-built Nagi as a ratio of the
//! Rust-built one, and the Markdown tables.
//!
//! Records (`http.jsonl`, one JSON object a line), each with `kind`, `server` and `case`:
//!
//! | kind | fields |
//! | --- | --- |
//! | `check` | `round`, `ok`, `status`, `expected_status`, `body_matches` |
//! | `run` | `round`, `order` (its place among the servers in that case and round), `rps`, `p50_us`, `p99_us`, `requests`, `seconds`, `non2xx`, `socket_errors` (`[connect, read, write, timeout]`), `cpu_pct` (server CPU over the measured run, % of one CPU), `peak_rss_kib` (VmHWM over the warm-up and the run), `wrk_cpu_pct` |
//!
//! The `--soak` and `--sinks` runs write `check` records too, and their own kinds: `soak`
//! (`soak.rs`) and `sink` (`sinks.rs`: a `run` record's fields and the sink's).

use std::collections::BTreeMap;
use std::fmt::Write;

use serde_json::Value;

use super::cases::CASES;
use super::server::NAMES;
use crate::records::median;
use crate::report::fmt3;

/// The LLVM-built Nagi must reach this fraction of the Rust-built one's req/s on every case
/// (issue 39's bar).
pub const LLVM_FLOOR: f64 = 0.97;

/// The pairs compared as LLVM / Rust: (label, LLVM-built, Rust-built).
pub const LLVM_PAIRS: [(&str, &str, &str); 2] =
    [("`--log info`", "nagi-llvm", "nagi-rust"), ("`--log warn`", "nagi-llvm-warn", "nagi-rust-warn")];

/// What the records say about one server on one case.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    /// Rounds measured.
    pub rounds: usize,
    /// Median requests per second.
    pub rps: f64,
    /// Median of the rounds' p50 latency, µs.
    pub p50_us: f64,
    /// Median of the rounds' p99 latency, µs.
    pub p99_us: f64,
    /// Median server CPU, % of one CPU.
    pub cpu_pct: f64,
    /// Median peak RSS, KiB.
    pub peak_rss_kib: f64,
    /// Median wrk CPU, % of one CPU.
    pub wrk_cpu_pct: f64,
    /// Non-2xx answers over all rounds.
    pub non2xx: u64,
    /// Socket errors over all rounds.
    pub socket_errors: u64,
    /// Every round's req/s, in round order (NaN for a round without a figure).
    pub rps_rounds: Vec<f64>,
}

/// server → case → summary.
pub type Summaries = BTreeMap<String, BTreeMap<String, Summary>>;

/// Summarizes the `run` records.
pub fn summarize(records: &[Value]) -> Summaries {
    let mut runs: BTreeMap<(String, String), Vec<&Value>> = BTreeMap::new();
    for r in records.iter().filter(|r| r["kind"] == "run") {
        if let (Some(server), Some(case)) = (r["server"].as_str(), r["case"].as_str()) {
            runs.entry((server.to_string(), case.to_string())).or_default().push(r);
        }
    }
    let mut out = Summaries::new();
    for ((server, case), mut list) in runs {
        list.sort_by_key(|r| r["round"].as_u64());
        let med = |key: &str| {
            let mut v: Vec<f64> = list.iter().filter_map(|r| r[key].as_f64()).collect();
            median(&mut v).unwrap_or(f64::NAN)
        };
        let sum = |f: &dyn Fn(&Value) -> u64| list.iter().map(|r| f(r)).sum();
        let summary = Summary {
            rounds: list.len(),
            rps: med("rps"),
            p50_us: med("p50_us"),
            p99_us: med("p99_us"),
            cpu_pct: med("cpu_pct"),
            peak_rss_kib: med("peak_rss_kib"),
            wrk_cpu_pct: med("wrk_cpu_pct"),
            non2xx: sum(&|r| r["non2xx"].as_u64().unwrap_or(0)),
            socket_errors: sum(&|r| {
                r["socket_errors"].as_array().map_or(0, |a| a.iter().filter_map(Value::as_u64).sum())
            }),
            // One entry per round, NaN where a round has no figure, so that rounds stay aligned
            // between servers (`paired_ratio`).
            rps_rounds: list.iter().map(|r| r["rps"].as_f64().unwrap_or(f64::NAN)).collect(),
        };
        out.entry(server).or_default().insert(case, summary);
    }
    out
}

/// Median req/s of `server` on `case`.
fn rps(s: &Summaries, server: &str, case: &str) -> Option<f64> {
    s.get(server)?.get(case).map(|x| x.rps).filter(|v| v.is_finite())
}

/// `server`'s median req/s on `case` divided by `base`'s.
pub fn ratio(s: &Summaries, server: &str, base: &str, case: &str) -> Option<f64> {
    Some(rps(s, server, case)? / rps(s, base, case)?)
}

/// The median over the rounds of `server`'s req/s on `case` divided by `base`'s in the same
/// round: the paired ratio, which the host's drift between rounds does not move as it moves the
/// ratio of the medians (the two servers of a round run within one pass over the servers, a
/// few seconds apart). A round without a figure for either server is left out. `None` unless
/// both have the same rounds, or no round has both figures.
pub fn paired_ratio(s: &Summaries, server: &str, base: &str, case: &str) -> Option<f64> {
    let (a, b) = (&s.get(server)?.get(case)?.rps_rounds, &s.get(base)?.get(case)?.rps_rounds);
    if a.len() != b.len() {
        return None;
    }
    let mut ratios: Vec<f64> = a.iter().zip(b).map(|(x, y)| x / y).filter(|r| r.is_finite()).collect();
    median(&mut ratios)
}

/// The cases where an LLVM-built Nagi is below [`LLVM_FLOOR`] of the Rust-built:
/// (pair label, case, ratio).
pub fn llvm_shortfalls(s: &Summaries) -> Vec<(String, String, f64)> {
    let mut out = Vec::new();
    for (label, llvm, rust) in LLVM_PAIRS {
        for case in CASES {
            if let Some(r) = ratio(s, llvm, rust, case.name)
                && r < LLVM_FLOOR
            {
                out.push((label.to_string(), case.name.to_string(), r));
            }
        }
    }
    out
}

fn header(out: &mut String, first: &str) {
    let _ = write!(out, "| {first} |");
    for case in CASES {
        let _ = write!(out, " {} |", case.title);
    }
    out.push_str("\n| --- |");
    for _ in CASES {
        out.push_str(" ---: |");
    }
    out.push('\n');
}

fn servers(s: &Summaries) -> impl Iterator<Item = &'static str> + '_ {
    NAMES.iter().copied().filter(|n| s.contains_key(*n))
}

/// Median req/s, a row per server and a column per case, with the ratio to the baseline.
pub fn rps_matrix(s: &Summaries) -> String {
    let mut out = String::new();
    header(&mut out, "server (req/s, × baseline)");
    for server in servers(s) {
        let _ = write!(out, "| {server} |");
        for case in CASES {
            match (rps(s, server, case.name), ratio(s, server, NAMES[0], case.name)) {
                (Some(v), Some(r)) => {
                    let _ = write!(out, " {} ({r:.2}×) |", thousands(v));
                }
                (Some(v), None) => {
                    let _ = write!(out, " {} |", thousands(v));
                }
                _ => out.push_str(" – |"),
            }
        }
        out.push('\n');
    }
    out
}

/// LLVM-built / Rust-built per case, two rows per log level: the ratio of the median req/s,
/// and the median of the rounds' ratios ([`paired_ratio`]); below [`LLVM_FLOOR`] in bold.
pub fn llvm_matrix(s: &Summaries) -> String {
    let mut out = String::new();
    header(&mut out, "LLVM-built / Rust-built (req/s)");
    for (label, llvm, rust) in LLVM_PAIRS {
        let rows: [(String, fn(&Summaries, &str, &str, &str) -> Option<f64>); 2] =
            [(label.to_string(), ratio), (format!("{label}, median of the rounds' ratios"), paired_ratio)];
        for (row, estimate) in rows {
            let _ = write!(out, "| {row} |");
            for case in CASES {
                match estimate(s, llvm, rust, case.name) {
                    Some(r) if r < LLVM_FLOOR => {
                        let _ = write!(out, " **{r:.3}** |");
                    }
                    Some(r) => {
                        let _ = write!(out, " {r:.3} |");
                    }
                    None => out.push_str(" – |"),
                }
            }
            out.push('\n');
        }
    }
    out
}

/// Every figure per case and server: medians, error totals, and each round's req/s.
pub fn full_table(s: &Summaries) -> String {
    let mut out = String::from(
        "| case | server | req/s | × baseline | p50 µs | p99 µs | server CPU % | peak RSS MiB | non-2xx | socket errors | wrk CPU % | req/s per round |\n",
    );
    out.push_str("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
    for case in CASES {
        for server in servers(s) {
            let Some(x) = s[server].get(case.name) else { continue };
            let r = ratio(s, server, NAMES[0], case.name).map_or("–".into(), |r| format!("{r:.2}×"));
            let rounds: Vec<String> =
                x.rps_rounds.iter().map(|v| if v.is_finite() { thousands(*v) } else { "–".into() }).collect();
            let _ = writeln!(
                out,
                "| {} | {server} | {} | {r} | {} | {} | {:.0} | {:.1} | {} | {} | {:.0} | {} |",
                case.title,
                thousands(x.rps),
                fmt3(x.p50_us),
                fmt3(x.p99_us),
                x.cpu_pct,
                x.peak_rss_kib / 1024.0,
                x.non2xx,
                x.socket_errors,
                x.wrk_cpu_pct,
                rounds.join(" · ")
            );
        }
    }
    out
}

/// A number rounded to an integer with thousands separators (`58,181`).
pub fn thousands(v: f64) -> String {
    let digits = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if v < 0.0 { format!("-{out}") } else { out }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(server: &str, case: &str, round: u64, rps: f64) -> Value {
        json!({"kind": "run", "server": server, "case": case, "round": round, "rps": rps, "p50_us": rps / 100.0,
               "p99_us": 2.0 * rps, "cpu_pct": 99.0, "peak_rss_kib": 8192, "wrk_cpu_pct": 50.0,
               "non2xx": 1, "socket_errors": [0, 1, 0, 2]})
    }

    #[test]
    fn medians_ratios_and_tables() {
        let records = vec![
            run("baseline", "health", 1, 100.0),
            run("baseline", "health", 2, 300.0),
            run("baseline", "health", 3, 200.0),
            run("nagi-rust", "health", 1, 100.0),
            run("nagi-rust", "health", 2, 100.0),
            run("nagi-llvm", "health", 1, 90.0),
            run("nagi-llvm", "health", 2, 80.0),
            json!({"kind": "check", "server": "baseline", "case": "health", "ok": true}),
        ];
        let s = summarize(&records);
        let base = &s["baseline"]["health"];
        assert_eq!(
            (base.rounds, base.rps, base.p50_us, base.rps_rounds.clone()),
            (3, 200.0, 2.0, vec![100.0, 300.0, 200.0])
        );
        assert_eq!((base.non2xx, base.socket_errors, base.peak_rss_kib), (3, 9, 8192.0));
        assert_eq!(s["nagi-llvm"]["health"].rps, 85.0);
        assert_eq!(ratio(&s, "nagi-rust", "baseline", "health"), Some(0.5));
        assert_eq!(ratio(&s, "nagi-llvm", "nagi-rust", "health"), Some(0.85));
        assert_eq!(llvm_shortfalls(&s), vec![("`--log info`".to_string(), "health".to_string(), 0.85)]);
        let m = rps_matrix(&s);
        assert!(m.contains("| baseline | 200 (1.00×) |"), "{m}");
        assert!(m.contains("| nagi-rust | 100 (0.50×) |"), "{m}");
        let l = llvm_matrix(&s);
        assert!(l.contains("| `--log info` | **0.850** |"), "{l}");
        assert!(l.contains("| `--log info`, median of the rounds' ratios | **0.850** |"), "{l}");
        assert!(l.contains("| `--log warn` | – |"), "{l}");
        let t = full_table(&s);
        assert!(
            t.contains(
                "| GET /health | baseline | 200 | 1.00× | 2.00 | 400 | 99 | 8.0 | 3 | 9 | 50 | 100 · 300 · 200 |"
            ),
            "{t}"
        );
        assert_eq!(thousands(58180.71), "58,181");
        assert_eq!(thousands(999.0), "999");
        assert_eq!(thousands(1234567.0), "1,234,567");
    }

    #[test]
    fn the_paired_ratio_is_the_median_of_each_rounds_ratio() {
        // Round 3 is slow for the Rust-built server only by the host's drift between rounds:
        // the ratio of the medians (150 / 170) reads it as a gap, each round's ratio does not.
        let records: Vec<Value> = [(1, 100.0, 90.0), (2, 210.0, 200.0), (3, 150.0, 170.0)]
            .into_iter()
            .flat_map(|(round, llvm, rust)| {
                [run("nagi-llvm", "health", round, llvm), run("nagi-rust", "health", round, rust)]
            })
            .collect();
        let s = summarize(&records);
        let close = |a: Option<f64>, b: f64| a.is_some_and(|a| (a - b).abs() < 1e-9);
        assert!(close(ratio(&s, "nagi-llvm", "nagi-rust", "health"), 150.0 / 170.0));
        assert!(close(paired_ratio(&s, "nagi-llvm", "nagi-rust", "health"), 210.0 / 200.0));
        assert_eq!(paired_ratio(&s, "nagi-llvm", "baseline", "health"), None);
        // Round 3 without the LLVM-built figure: rounds 1 and 2 stay paired, and their median
        // is the mean of the two.
        let mut missing = records.clone();
        missing[4]["rps"] = Value::Null;
        let rounds_1_and_2 = (100.0 / 90.0 + 210.0 / 200.0) / 2.0;
        assert!(close(paired_ratio(&summarize(&missing), "nagi-llvm", "nagi-rust", "health"), rounds_1_and_2));
        let mut uneven = records.clone();
        uneven.push(run("nagi-llvm", "health", 4, 100.0));
        assert_eq!(paired_ratio(&summarize(&uneven), "nagi-llvm", "nagi-rust", "health"), None);
    }
}

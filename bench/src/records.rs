//! The JSONL records of a run and what the report makes of them.
//!
//! Every variant writes one JSON object per line, with at least `kind`, `level` (the CPU level of
//! the run), `variant` and `kernel`:
//!
//! | kind | fields | written by |
//! | --- | --- | --- |
//! | `check` | `value`, `ok` | every variant, before any timing |
//! | `alloc` | `allocations`, `bytes` (one call, on the calling thread) | the native variants |
//! | `sample` | `tool`, `iters` (calls in the timed batch), `ns` (the batch's total time) | criterion's samples; one repeat of the CPython and Node loops |
//! | `estimate` | `median_ns`, `lower_ns`, `upper_ns` | criterion's own median estimate and its confidence interval |
//!
//! The report's figure for a variant and kernel is the median over its samples of `ns / iters`:
//! criterion's 20 samples, or the 7 repeats of the CPython and Node loops.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value};

use crate::kernels::{Kernel, N};

/// One record, built field by field.
#[derive(Clone, Debug, Default)]
pub struct Record(Map<String, Value>);

impl Record {
    /// A record about `kernel` of `variant` at CPU level `level`.
    pub fn new(level: &str, variant: &str, kernel: Kernel) -> Record {
        Record::default().with("level", level).with("variant", variant).with("kernel", kernel.name())
    }

    /// Sets `kind`.
    pub fn kind(self, kind: &str) -> Record {
        self.with("kind", kind)
    }

    /// Sets a field.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Record {
        self.0.insert(key.to_string(), value.into());
        self
    }

    /// The record as one line of JSON (without the newline).
    pub fn to_json_line(&self) -> String {
        Value::Object(self.0.clone()).to_string()
    }
}

/// Reads a JSONL file; lines that are not JSON objects are errors naming the line.
pub fn read_jsonl(path: &Path) -> Result<Vec<Value>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| match serde_json::from_str::<Value>(line) {
            Ok(v) if v.is_object() => Ok(v),
            _ => Err(format!("{}:{}: not a JSON object: {line}", path.display(), i + 1)),
        })
        .collect()
}

/// What the records say about one variant's kernel at one level.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// Median time of one call, in nanoseconds.
    pub median_ns: Option<f64>,
    /// Samples the median is over.
    pub samples: usize,
    /// Allocations in one call (native variants only).
    pub allocations: Option<u64>,
    /// Whether the result was checked and matched.
    pub checked: bool,
}

impl Summary {
    /// Microseconds per call.
    pub fn us_per_call(&self) -> Option<f64> {
        self.median_ns.map(|ns| ns / 1000.0)
    }

    /// Nanoseconds per item (per element, or per iteration of `loop`).
    pub fn ns_per_item(&self) -> Option<f64> {
        self.median_ns.map(|ns| ns / N as f64)
    }
}

/// The summaries of one run: level → variant → kernel.
pub type Summaries = BTreeMap<String, BTreeMap<String, BTreeMap<Kernel, Summary>>>;

/// Summarizes records (of any number of levels and variants).
pub fn summarize(records: &[Value]) -> Summaries {
    let mut per_call: BTreeMap<(String, String, Kernel), Vec<f64>> = BTreeMap::new();
    let mut out = Summaries::new();
    for r in records {
        let (Some(level), Some(variant), Some(kernel)) =
            (r["level"].as_str(), r["variant"].as_str(), r["kernel"].as_str().and_then(Kernel::from_name))
        else {
            continue;
        };
        let summary = out
            .entry(level.to_string())
            .or_default()
            .entry(variant.to_string())
            .or_default()
            .entry(kernel)
            .or_default();
        match r["kind"].as_str() {
            Some("check") => summary.checked = r["ok"].as_bool() == Some(true),
            Some("alloc") => summary.allocations = r["allocations"].as_u64(),
            Some("sample") => {
                if let (Some(iters), Some(ns)) = (r["iters"].as_f64(), r["ns"].as_f64())
                    && iters > 0.0
                {
                    per_call.entry((level.to_string(), variant.to_string(), kernel)).or_default().push(ns / iters);
                }
            }
            _ => {}
        }
    }
    for ((level, variant, kernel), mut times) in per_call {
        let summary = out.entry(level).or_default().entry(variant).or_default().entry(kernel).or_default();
        summary.samples = times.len();
        summary.median_ns = median(&mut times);
    }
    out
}

/// The median (the mean of the middle two for an even count); `None` for no values.
pub fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    Some(if values.len() % 2 == 1 { values[mid] } else { (values[mid - 1] + values[mid]) / 2.0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_are_over_per_call_times() {
        let mut records = Vec::new();
        for (i, (iters, ns)) in [(10.0, 1000.0), (20.0, 1800.0), (30.0, 3300.0)].into_iter().enumerate() {
            let line = Record::new("v2", "rust", Kernel::Loop)
                .kind("sample")
                .with("sample", i)
                .with("iters", iters)
                .with("ns", ns)
                .to_json_line();
            records.push(serde_json::from_str(&line).unwrap());
        }
        records.push(
            serde_json::from_str(
                &Record::new("v2", "rust", Kernel::Loop).kind("alloc").with("allocations", 0).to_json_line(),
            )
            .unwrap(),
        );
        let s = &summarize(&records)["v2"]["rust"][&Kernel::Loop];
        assert_eq!((s.median_ns, s.samples, s.allocations), (Some(100.0), 3, Some(0)));
        assert_eq!(s.ns_per_item(), Some(0.001));
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&mut []), None);
    }
}

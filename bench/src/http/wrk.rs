//! Running `wrk` and reading what it prints: requests per second, the latency percentiles of
//! `--latency`, non-2xx answers and socket errors.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::procfs;

/// What one wrk run measured.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WrkResult {
    /// Requests completed (`N requests in …`).
    pub requests: u64,
    /// The run's length as wrk reports it, in seconds.
    pub seconds: f64,
    /// `Requests/sec`.
    pub rps: f64,
    /// The 50th percentile of latency, in microseconds.
    pub p50_us: f64,
    /// The 99th percentile of latency, in microseconds.
    pub p99_us: f64,
    /// `Non-2xx or 3xx responses` (0 when wrk prints no such line).
    pub non2xx: u64,
    /// Socket errors: connect, read, write, timeout (0 when wrk prints no such line).
    pub socket_errors: [u64; 4],
}

impl WrkResult {
    /// Socket errors of every kind together.
    pub fn socket_error_total(&self) -> u64 {
        self.socket_errors.iter().sum()
    }
}

/// A duration as wrk prints it (`812.00us`, `1.23ms`, `2.00s`, `1.5m`), in microseconds.
pub fn duration_us(text: &str) -> Option<f64> {
    let text = text.trim();
    let split = text.find(|c: char| c.is_ascii_alphabetic())?;
    let (number, unit) = text.split_at(split);
    let value: f64 = number.parse().ok()?;
    let scale = match unit {
        "us" => 1.0,
        "ms" => 1e3,
        "s" => 1e6,
        "m" => 60e6,
        "h" => 3600e6,
        _ => return None,
    };
    Some(value * scale)
}

/// A count as wrk prints it in its summary line (`290919`, or with a `k`/`M` suffix).
fn count(text: &str) -> Option<u64> {
    let text = text.trim();
    let (number, scale) = match text.chars().last()? {
        'k' => (&text[..text.len() - 1], 1e3),
        'M' => (&text[..text.len() - 1], 1e6),
        _ => (text, 1.0),
    };
    number.parse::<f64>().ok().map(|v| (v * scale).round() as u64)
}

/// Parses wrk's output (run with `--latency`). Errors name what is missing.
pub fn parse(output: &str) -> Result<WrkResult, String> {
    let mut result = WrkResult::default();
    let (mut rps, mut p50, mut p99, mut requests) = (None, None, None, None);
    for line in output.lines() {
        let line = line.trim();
        let words: Vec<&str> = line.split_whitespace().collect();
        if let Some(rest) = line.strip_prefix("Requests/sec:") {
            rps = rest.trim().parse::<f64>().ok();
        } else if words.first() == Some(&"50%") && words.len() == 2 {
            p50 = duration_us(words[1]);
        } else if words.first() == Some(&"99%") && words.len() == 2 {
            p99 = duration_us(words[1]);
        } else if words.len() >= 4 && words[1] == "requests" && words[2] == "in" {
            requests = count(words[0]);
            result.seconds = duration_us(words[3].trim_end_matches(',')).map_or(0.0, |us| us / 1e6);
        } else if let Some(rest) = line.strip_prefix("Non-2xx or 3xx responses:") {
            result.non2xx = rest.trim().parse().map_err(|_| format!("bad non-2xx line {line:?}"))?;
        } else if let Some(rest) = line.strip_prefix("Socket errors:") {
            // `connect 0, read 0, write 0, timeout 0`
            for (i, part) in rest.split(',').enumerate().take(4) {
                result.socket_errors[i] = part.split_whitespace().nth(1).and_then(|n| n.parse().ok()).unwrap_or(0);
            }
        }
    }
    result.rps = rps.ok_or("wrk printed no Requests/sec")?;
    result.p50_us = p50.ok_or("wrk printed no 50% latency (was it run with --latency?)")?;
    result.p99_us = p99.ok_or("wrk printed no 99% latency (was it run with --latency?)")?;
    result.requests = requests.ok_or("wrk printed no `N requests in` line")?;
    Ok(result)
}

/// How wrk is run: threads, connections and the CPU it is pinned to.
#[derive(Clone, Debug)]
pub struct Load {
    /// `-t`.
    pub threads: u32,
    /// `-c`.
    pub connections: u32,
    /// The CPU for `taskset -c`.
    pub cpu: u32,
}

/// One wrk run's result with the CPU wrk itself used (percent of one CPU, sampled every 100
/// ms, so the last tenth of a second may be missing), and its raw output.
pub struct Run {
    /// What wrk measured.
    pub result: WrkResult,
    /// wrk's own CPU use, as a percentage of one CPU (to see whether the load generator was
    /// the limit).
    pub wrk_cpu_pct: f64,
    /// wrk's stdout.
    pub output: String,
}

/// Runs wrk against `url` for `duration`, with `script` (and its arguments) if given.
pub fn run(load: &Load, url: &str, duration: Duration, script: Option<(&Path, &[String])>) -> Result<Run, String> {
    let mut command = Command::new("taskset");
    command.args(["-c", &load.cpu.to_string(), "wrk", "--latency"]);
    command.args(["-t", &load.threads.to_string(), "-c", &load.connections.to_string()]);
    // wrk takes whole seconds (`-d5s`); the bench's durations are whole seconds.
    command.arg(format!("-d{}s", duration.as_secs().max(1)));
    if let Some((path, _)) = script {
        command.arg("-s").arg(path);
    }
    command.arg(url);
    if let Some((_, args)) = script
        && !args.is_empty()
    {
        command.arg("--").args(args);
    }
    let child =
        command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().map_err(|e| format!("cannot start wrk: {e}"))?;
    let pid = child.id();
    let start = Instant::now();
    let mut last = (0u64, Duration::ZERO);
    // Sample wrk's CPU time while it runs; the thread ends when the process is gone.
    let sampler = std::thread::spawn(move || {
        while let Some(ticks) = procfs::cpu_ticks(pid) {
            last = (ticks, start.elapsed());
            std::thread::sleep(Duration::from_millis(100));
        }
        last
    });
    let output = child.wait_with_output().map_err(|e| format!("wrk: {e}"))?;
    let (ticks, at) = sampler.join().unwrap_or_default();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    if !output.status.success() {
        return Err(format!("wrk failed ({}): {}{}", output.status, stdout, String::from_utf8_lossy(&output.stderr)));
    }
    let result = parse(&stdout).map_err(|e| format!("{e}; wrk printed:\n{stdout}"))?;
    let wrk_cpu_pct = if at.is_zero() { 0.0 } else { procfs::ticks_to_secs(ticks) / at.as_secs_f64() * 100.0 };
    Ok(Run { result, wrk_cpu_pct, output: stdout })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Outputs of wrk 4.1.0 captured on this machine: a clean run of `GET /health`, and a run of
    /// a constant `POST /users` (409 after the first) whose server was stopped half-way.
    const HEALTH: &str = include_str!("testdata/wrk-health.txt");
    const ERRORS: &str = include_str!("testdata/wrk-errors.txt");

    #[test]
    fn captured_outputs_parse() {
        let clean = parse(HEALTH).unwrap();
        assert_eq!((clean.requests, clean.rps, clean.seconds), (90725, 43204.79, 2.10));
        assert_eq!((clean.p50_us, clean.p99_us), (848.0, 44320.0));
        assert_eq!((clean.non2xx, clean.socket_error_total()), (0, 0));
        let errors = parse(ERRORS).unwrap();
        assert_eq!((errors.requests, errors.rps), (24224, 11602.18));
        assert_eq!((errors.p50_us, errors.p99_us), (1890.0, 33610.0));
        assert_eq!((errors.non2xx, errors.socket_errors), (24223, [0, 36, 52146, 0]));
        assert!(parse("Running 1s test\n").unwrap_err().contains("Requests/sec"));
        let no_latency = HEALTH.replace("     50%  848.00us\n", "");
        assert!(parse(&no_latency).unwrap_err().contains("--latency"));
    }

    #[test]
    fn durations_and_counts() {
        assert_eq!(duration_us("812.00us"), Some(812.0));
        assert_eq!(duration_us("1.50ms"), Some(1500.0));
        assert_eq!(duration_us("2.00s"), Some(2e6));
        assert_eq!(duration_us("1.00m"), Some(60e6));
        assert_eq!(duration_us("3parsecs"), None);
        assert_eq!(count("290919"), Some(290919));
        assert_eq!(count("1.20M"), Some(1_200_000));
    }
}

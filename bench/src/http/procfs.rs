//! What the bench reads of a process in `/proc`: its CPU time (`utime + stime` of
//! `/proc/PID/stat`, every thread included) and its peak resident set (`VmHWM` of
//! `/proc/PID/status`), which writing `5` to `/proc/PID/clear_refs` resets.

use std::sync::OnceLock;

/// Clock ticks per second (`getconf CLK_TCK`, 100 when that cannot be asked).
pub fn clock_ticks() -> u64 {
    static TICKS: OnceLock<u64> = OnceLock::new();
    *TICKS.get_or_init(|| {
        crate::machine::command_line("getconf", &["CLK_TCK"]).and_then(|t| t.parse().ok()).unwrap_or(100)
    })
}

/// Ticks as seconds.
pub fn ticks_to_secs(ticks: u64) -> f64 {
    ticks as f64 / clock_ticks() as f64
}

/// `utime + stime` of a `/proc/PID/stat` line, in clock ticks: fields 14 and 15, counted after
/// the command name in parentheses (which may itself contain spaces and parentheses).
pub fn parse_stat_ticks(stat: &str) -> Option<u64> {
    let after = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    // `after` starts at field 3 (the state), so fields 14 and 15 are at 11 and 12.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}

/// The process's CPU time so far, in clock ticks; `None` once it is gone.
pub fn cpu_ticks(pid: u32) -> Option<u64> {
    parse_stat_ticks(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// `VmHWM` of a `/proc/PID/status` text, in KiB.
pub fn parse_hwm_kib(status: &str) -> Option<u64> {
    status.lines().find_map(|l| l.strip_prefix("VmHWM:")).and_then(|v| v.split_whitespace().next()?.parse().ok())
}

/// The process's peak resident set since it started or since [`reset_peak`], in KiB.
pub fn peak_rss_kib(pid: u32) -> Option<u64> {
    parse_hwm_kib(&std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?)
}

/// Resets the process's peak resident set to its current one; `false` when the kernel refused.
pub fn reset_peak(pid: u32) -> bool {
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_and_status_parse() {
        let stat = "4242 (nagi (worker) 1) S 1 4242 4242 0 -1 4194304 512 0 0 0 150 25 0 0 20 0 4 0 100 1000 200";
        assert_eq!(parse_stat_ticks(stat), Some(175));
        assert_eq!(parse_hwm_kib("Name:\tusers\nVmPeak:\t 9000 kB\nVmHWM:\t    7312 kB\n"), Some(7312));
        assert_eq!(parse_hwm_kib("Name:\tusers\n"), None);
        let me = std::process::id();
        assert!(cpu_ticks(me).is_some() && peak_rss_kib(me).is_some());
    }
}

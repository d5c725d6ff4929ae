//! What the bench reads of a process in `/proc`: its CPU time (`utime + stime` of
//! `/proc/PID/stat`, every thread included), its resident set now (`VmRSS` of
//! `/proc/PID/status`) and at its peak (`VmHWM`, which writing `5` to `/proc/PID/clear_refs`
//! resets), and how many files it has open (the entries of `/proc/PID/fd`).

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

/// The value of the `key:` line of a `/proc/PID/status` text (`VmHWM`, `VmRSS`: in KiB, the
/// unit the kernel writes after the number).
pub fn parse_status_kib(status: &str, key: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
}

/// `VmHWM` of a `/proc/PID/status` text, in KiB.
pub fn parse_hwm_kib(status: &str) -> Option<u64> {
    parse_status_kib(status, "VmHWM")
}

/// The process's resident set now (`VmRSS`), in KiB; `None` once it is gone.
pub fn rss_kib(pid: u32) -> Option<u64> {
    parse_status_kib(&std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?, "VmRSS")
}

/// How many file descriptors the process has open (the entries of `/proc/PID/fd`: sockets,
/// pipes, files); `None` once it is gone or when the directory cannot be read (another user's
/// process).
pub fn fd_count(pid: u32) -> Option<u64> {
    let entries = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?;
    Some(entries.filter(|e| e.is_ok()).count() as u64)
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

    /// Lines in the layout of `/proc/PID/status` (a tab after the colon, the number
    /// right-aligned, then `kB`); `VmRSSx` is not a field the kernel writes, it checks that the
    /// key must end at the colon.
    #[test]
    fn rss_and_fds() {
        let status = "Name:\tusers-rust\nUmask:\t0022\nState:\tS (sleeping)\nVmPeak:\t  284612 kB\n\
                      VmSize:\t  284612 kB\nVmHWM:\t    7896 kB\nVmRSS:\t    7420 kB\nRssAnon:\t    1232 kB\n";
        assert_eq!(parse_status_kib(status, "VmRSS"), Some(7420));
        assert_eq!(parse_status_kib(status, "VmHWM"), Some(7896));
        assert_eq!(parse_status_kib("VmRSSx:\t1 kB\n", "VmRSS"), None);
        assert_eq!(parse_status_kib("VmRSS:\tmany kB\n", "VmRSS"), None);
        let me = std::process::id();
        assert!(rss_kib(me).is_some_and(|k| k > 0));
        // stdin, stdout and stderr at least (the test harness may have closed none of them).
        assert!(fd_count(me).is_some_and(|n| n >= 1));
        assert_eq!(fd_count(u32::MAX), None);
    }
}

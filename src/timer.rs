//! `Timer`, the one clock of a command: with `--timings` it prints how long each phase and
//! each pass took, to stderr.

use std::time::{Duration, Instant};

/// Reports how long a phase took when `--timings` is on.
pub(crate) struct Timer {
    enabled: bool,
    start: Instant,
}

impl Timer {
    pub(crate) fn new(enabled: bool) -> Timer {
        Timer { enabled, start: Instant::now() }
    }

    /// Prints the time since the previous phase ended, and starts the next phase.
    pub(crate) fn phase(&mut self, name: &str) {
        if self.enabled {
            eprintln!("nagic: {name:<24} {:>8.1} ms", self.start.elapsed().as_secs_f64() * 1000.0);
        }
        self.start = Instant::now();
    }

    /// Prints one pass's time, and the verification after it when that ran; the phase that
    /// holds the passes is printed by [`Timer::phase`] as usual.
    pub(crate) fn pass(&self, name: &str, elapsed: Duration, verify: Duration) {
        if self.enabled {
            let ms = |d: Duration| d.as_secs_f64() * 1000.0;
            let verify = if verify.is_zero() { String::new() } else { format!("  (+{:.1} ms verify)", ms(verify)) };
            eprintln!("nagic:   pass {name:<17} {:>8.1} ms{verify}", ms(elapsed));
        }
    }
}

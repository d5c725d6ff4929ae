//! The exponential backoff that job queues (between a job's attempts) and supervisors (between a
//! child's restarts) share, written once: the `n`-th wait is `min · 2^(n-1)`, at most `max`.

use std::time::Duration;

/// The `n`-th wait (from 1; 0 counts as 1) of an exponential backoff from `min` up to `max`.
pub(crate) fn exponential(min: Duration, max: Duration, n: u32) -> Duration {
    let mut wait = min;
    for _ in 1..n {
        if wait >= max {
            break;
        }
        wait = wait.saturating_mul(2);
    }
    wait.min(max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_up_to_the_bound() {
        let ms = Duration::from_millis;
        let waits: Vec<_> = (0..8).map(|n| exponential(ms(10), ms(300), n)).collect();
        assert_eq!(waits, [ms(10), ms(10), ms(20), ms(40), ms(80), ms(160), ms(300), ms(300)]);
        assert_eq!(exponential(ms(1), Duration::MAX, 200), Duration::MAX, "saturates, never overflows");
    }
}

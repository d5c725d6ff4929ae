//! The service's memory budget (`--memory-limit`): one count of the bytes that request bodies
//! being read, query results of requests in flight and answers not yet written out hold,
//! against one limit.
//!
//! These are the memory a client decides the size of; everything else a connection holds is
//! bounded per connection (`--max-head-bytes`) and by the number of connections
//! (`--max-connections`). A body is counted before it is read, at its declared length (or as it
//! arrives, when it is sent in chunks), so that a client cannot make the service hold more than
//! the limit whatever it sends. A query's rows are counted as the database thread reads them
//! (`db/thread.rs`) and until their request ends. An answer over 64 KiB is counted once it is
//! built and until the socket has taken its last byte, so that clients that do not read cannot
//! make answers pile up. What is refused is answered 503 with `Retry-After` before anything is
//! written (docs/http.md, "Memory").

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::Notify;

/// The byte count of one service: how much is held, and the limit.
pub struct Budget {
    limit: usize,
    used: AtomicUsize,
    /// How many [`Budget::take`] calls are waiting for room; a release wakes them only then, so
    /// that the common release (nobody waiting) costs one atomic subtraction.
    waiting: AtomicUsize,
    freed: Notify,
}

impl Budget {
    /// A budget of `limit` bytes, none of them held.
    pub fn new(limit: usize) -> Arc<Budget> {
        Arc::new(Budget { limit, used: AtomicUsize::new(0), waiting: AtomicUsize::new(0), freed: Notify::new() })
    }

    /// The detail of the 503 for `what` (a body, a query's rows, an answer) that does not fit.
    pub(crate) fn refusal(&self, what: &str) -> String {
        format!(
            "the server is holding its memory limit of {} bytes for request bodies, query results and answers \
             (--memory-limit); {what} does not fit now",
            self.limit
        )
    }

    /// The bytes held now.
    pub(crate) fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    /// Holds `bytes` when they fit under the limit with what is held already.
    pub(crate) fn try_take(self: &Arc<Budget>, bytes: usize) -> Option<Hold> {
        let mut used = self.used.load(Ordering::Relaxed);
        loop {
            let after = used.checked_add(bytes).filter(|after| *after <= self.limit)?;
            match self.used.compare_exchange_weak(used, after, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return Some(Hold { budget: Arc::clone(self), bytes }),
                Err(now) => used = now,
            }
        }
    }

    /// Holds `bytes`, waiting up to `wait` for other holds to be released when they do not fit
    /// yet; `None` when they still do not fit then (or never can, being over the limit).
    pub(crate) async fn take(self: &Arc<Budget>, bytes: usize, wait: Duration) -> Option<Hold> {
        if let Some(hold) = self.try_take(bytes) {
            return Some(hold);
        }
        if bytes > self.limit {
            return None;
        }
        self.waiting.fetch_add(1, Ordering::SeqCst);
        // Boxed: only a request that finds the budget full waits, and inline the timer and the
        // notification would size the future of every request that reads a body (and so every
        // request's future) for it.
        let taken = Box::pin(tokio::time::timeout(wait, async {
            loop {
                // Registered before the check, so that a release between the check and the wait
                // is not missed.
                let freed = self.freed.notified();
                let mut freed = std::pin::pin!(freed);
                freed.as_mut().enable();
                if let Some(hold) = self.try_take(bytes) {
                    return hold;
                }
                freed.await;
            }
        }))
        .await
        .ok();
        self.waiting.fetch_sub(1, Ordering::SeqCst);
        taken
    }

    /// Counts `bytes` that are in memory already and will be kept, whether or not they fit: an
    /// answer that is sent anyway (see `wrapper::hold_answer`). While the budget is over its
    /// limit, nothing else is taken.
    pub(crate) fn charge(self: &Arc<Budget>, bytes: usize) -> Hold {
        self.used.fetch_add(bytes, Ordering::Relaxed);
        Hold { budget: Arc::clone(self), bytes }
    }

    /// Gives back `bytes` that a [`Hold::detach`] took out of their hold.
    pub(crate) fn release(&self, bytes: usize) {
        if bytes == 0 {
            return;
        }
        self.used.fetch_sub(bytes, Ordering::Relaxed);
        if self.waiting.load(Ordering::SeqCst) > 0 {
            self.freed.notify_waiters();
        }
    }
}

impl std::fmt::Debug for Budget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Budget({} of {} bytes)", self.used.load(Ordering::Relaxed), self.limit)
    }
}

/// Bytes held in a [`Budget`], given back when the hold is dropped.
pub struct Hold {
    budget: Arc<Budget>,
    bytes: usize,
}

impl Hold {
    /// The bytes held.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// Adds `other`'s bytes to this hold (both must be of one budget).
    pub(crate) fn absorb(&mut self, mut other: Hold) {
        debug_assert!(Arc::ptr_eq(&self.budget, &other.budget));
        self.bytes += std::mem::take(&mut other.bytes);
    }

    /// The held bytes, which the caller now gives back itself with [`Budget::release`] (the
    /// connection layer keeps an answer's bytes as a count, not a hold per answer).
    pub(crate) fn detach(mut self) -> usize {
        std::mem::take(&mut self.bytes)
    }

    /// Adds this hold to the one in `slot`, or puts it there when `slot` is empty.
    pub(crate) fn add_to(self, slot: &mut Option<Hold>) {
        match slot.as_mut() {
            Some(held) => held.absorb(self),
            None => *slot = Some(self),
        }
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        self.budget.release(self.bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_fit_under_the_limit_and_are_given_back_when_dropped() {
        let budget = Budget::new(100);
        let a = budget.try_take(60).expect("60 of 100 fit");
        assert!(budget.try_take(41).is_none(), "60 + 41 is over 100");
        let mut b = budget.try_take(40).expect("60 + 40 fit exactly");
        assert_eq!(budget.used(), 100);
        drop(a);
        assert_eq!(budget.used(), 40);
        b.absorb(budget.try_take(10).expect("fits"));
        assert_eq!((b.bytes(), budget.used()), (50, 50));
        drop(b);
        assert_eq!(budget.used(), 0);
    }

    #[test]
    fn a_charge_may_go_over_and_then_nothing_is_taken() {
        let budget = Budget::new(100);
        let charged = budget.charge(150);
        assert_eq!(budget.used(), 150);
        assert!(budget.try_take(1).is_none());
        drop(charged);
        assert!(budget.try_take(100).is_some());
    }

    #[tokio::test]
    async fn a_waiting_take_gets_the_room_a_release_makes_or_gives_up() {
        let budget = Budget::new(100);
        let held = budget.try_take(80).expect("fits");
        assert!(budget.take(50, Duration::from_millis(100)).await.is_none(), "nothing was released");
        assert!(budget.take(101, Duration::from_secs(60)).await.is_none(), "over the limit: no wait");
        let waiter = {
            let budget = Arc::clone(&budget);
            tokio::spawn(async move { budget.take(50, Duration::from_secs(1)).await.map(|h| h.bytes()) })
        };
        tokio::time::sleep(Duration::from_millis(10)).await;
        drop(held);
        assert_eq!(waiter.await.expect("no panic"), Some(50));
        assert_eq!(budget.used(), 0, "the waiter's hold was dropped with its task's answer");
    }
}

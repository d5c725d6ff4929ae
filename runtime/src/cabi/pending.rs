//! Pending operations: what an emitted frame awaits (a statement, a query, a joined task, the
//! end of a scope, a sleep, an actor's reply, a pushed job), written once for all of them.
//!
//! Each operation is the Rust path's own future, boxed behind a pointer that emitted code holds
//! in its frame. Emitted code polls it with [`nagi_rt_op_poll`] (passing on the `cx` its own poll
//! was given) until it is ready, then takes its result with [`nagi_rt_op_finish`], or drops it
//! unfinished with [`nagi_rt_op_drop`] when its frame is dropped. What a result is and how it is
//! written out is the making module's ([`WriteOut`]); this file knows none of them.

use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll};

use nagi_abi::poll;

use super::guard::fail;

/// A running runtime operation (a statement, a join, the end of a scope, a sleep); emitted code
/// holds it by pointer in its frame.
pub struct PendingOp {
    state: OpState,
}

enum OpState {
    /// The Rust path's future, not finished yet.
    Running(Pin<Box<dyn Future<Output = Outcome> + Send>>),
    /// Its result, until [`nagi_rt_op_finish`] writes it.
    Ready(Outcome),
    /// It failed; the failure's payload is in the guard's failure slot, and the frame that holds
    /// the operation is dropped (with it) by its owner.
    Failed,
}

/// What a finished operation gives.
enum Outcome {
    /// `exec`: the number of changed rows.
    Changed(i64),
    /// `begin`, `commit`, `rollback`, the end of a scope, a sleep.
    Done,
    /// A result that writes itself out (a query's rows, a joined task's frame, an actor's reply).
    Written(Box<dyn WriteOut>),
}

/// A result of a pending operation that knows how to write itself where emitted code wants it.
pub(super) trait WriteOut: Send {
    /// Moves the result to `out`.
    ///
    /// # Safety
    /// `out` is writable for the result's type and holds no owned value.
    unsafe fn write_to(self: Box<Self>, out: *mut u8);
}

/// A new pending operation running `future`.
fn pending(future: impl Future<Output = Outcome> + Send + 'static) -> *mut PendingOp {
    Box::into_raw(Box::new(PendingOp { state: OpState::Running(Box::pin(future)) }))
}

/// A new pending operation that gives an `i64`, as `exec` gives its count (a pushed job's id,
/// `cabi::queues`).
pub(super) fn pending_changed(future: impl Future<Output = i64> + Send + 'static) -> *mut PendingOp {
    pending(async move { Outcome::Changed(future.await) })
}

/// A new pending operation that gives nothing: the end of a scope, a sleep (`cabi::tasks`).
pub(super) fn pending_done(future: impl Future<Output = ()> + Send + 'static) -> *mut PendingOp {
    pending(async move {
        future.await;
        Outcome::Done
    })
}

/// A new pending operation whose result writes itself out.
pub(super) fn pending_write<W: WriteOut + 'static>(future: impl Future<Output = W> + Send + 'static) -> *mut PendingOp {
    pending(async move { Outcome::Written(Box::new(future.await)) })
}

/// Polls an operation: 0 while it waits (the waker in `cx` is woken when to poll again), 1 once
/// it is ready (and on every later poll), 2 when it failed (a database error, answered as the
/// Rust path answers it): the failure's payload is then stored for the handler's future
/// ([`super::guard::store_failure`]), the operation stays allocated (and answers 2 again), and
/// the emitted frame returns 2 from its own poll, still suspended at this await, so that its
/// owner drops it, and this operation with it, as it would drop a cancelled frame. A failure
/// leaks nothing.
///
/// # Safety
/// `op` is a pending operation, not finished or dropped; `cx` is the `Context` pointer that the
/// runtime passed to the frame's poll, in that same poll.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_op_poll(op: *mut PendingOp, cx: *mut u8) -> i32 {
    // SAFETY: `op` is a live operation that emitted code lends for this call.
    let pending = unsafe { &mut *op };
    let future = match &mut pending.state {
        OpState::Running(future) => future,
        OpState::Ready(_) => return poll::READY,
        OpState::Failed => return poll::FAILED,
    };
    // SAFETY: `cx` is the runtime's `&mut Context` of the poll this call runs in.
    let cx = unsafe { &mut *cx.cast::<Context<'_>>() };
    match panic::catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx))) {
        Ok(Poll::Pending) => poll::PENDING,
        Ok(Poll::Ready(outcome)) => {
            pending.state = OpState::Ready(outcome);
            poll::READY
        }
        Err(payload) => {
            pending.state = OpState::Failed;
            super::guard::store_failure(payload);
            poll::FAILED
        }
    }
}

/// Writes a ready operation's result at `out` and frees the operation: an `i64` for `exec`, the
/// `[C]` of a query, the `C?` of `query_one` (laid out as the descriptor given to
/// [`nagi_rt_db_query`] says), nothing for `begin`, `commit` and `rollback` (`out` may then be
/// null). An operation that is not ready traps.
///
/// # Safety
/// `op` is a pending operation, not finished or dropped; `out` is writable for its result and
/// holds no owned value (it is overwritten, not dropped).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_op_finish(op: *mut PendingOp, out: *mut u8) {
    // SAFETY: `op` came from a `Box`; the box is freed at the end of this statement.
    let PendingOp { state } = *unsafe { Box::from_raw(op) };
    match state {
        // SAFETY: forwarded from the caller.
        OpState::Ready(outcome) => unsafe { write_outcome(outcome, out) },
        OpState::Running(future) => {
            drop(future);
            fail("a database operation was finished before it was ready".to_owned())
        }
        OpState::Failed => fail("a database operation was finished after it failed".to_owned()),
    }
}

/// Writes `outcome` at `out`.
///
/// # Safety
/// As [`nagi_rt_op_finish`].
unsafe fn write_outcome(outcome: Outcome, out: *mut u8) {
    match outcome {
        // SAFETY: `out` is writable for an `i64`.
        Outcome::Changed(changed) => unsafe { out.cast::<i64>().write(changed) },
        Outcome::Done => {}
        // SAFETY: forwarded from the caller.
        Outcome::Written(result) => unsafe { result.write_to(out) },
    }
}

/// Drops an operation that will not be finished (its frame is dropped: the request was cancelled
/// or timed out). A statement not yet run is then skipped by the database thread.
///
/// # Safety
/// `op` is a pending operation, not finished or dropped.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_op_drop(op: *mut PendingOp) {
    // SAFETY: `op` came from a `Box` and is not used after this.
    drop(unsafe { Box::from_raw(op) });
}

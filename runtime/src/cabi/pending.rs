//! Pending operations: what an emitted frame awaits (a statement, a query, a joined task, the
//! end of a scope, a sleep, an actor's reply, a pushed job), written once for all of them.
//!
//! Each operation is the Rust path's own future, held with its result in one heap block behind
//! a pointer that emitted code holds in its frame. Emitted code polls it with
//! [`nagi_rt_op_poll`] (passing on the `cx` its own poll was given) until it is ready, then takes
//! its result with [`nagi_rt_op_finish`], or drops it unfinished with [`nagi_rt_op_drop`] when
//! its frame is dropped. What a result is and how it is written out is the making module's
//! ([`WriteOut`]); this file knows none of them.

use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll};

use nagi_abi::poll;

use super::guard::fail;

/// A running runtime operation (a statement, a join, the end of a scope, a sleep); emitted code
/// holds it by pointer in its frame.
///
/// This is the header of one heap block, [`Op`], that holds the operation's future in place and
/// then its result: one allocation per operation, where a boxed future and a boxed result behind
/// a box of their own were three (two of `GET /users/1`'s eight extra allocations on the LLVM
/// path, bench/README.md). The header's table knows the concrete type, so emitted code and this
/// file's C functions hold a thin pointer.
#[repr(C)]
pub struct PendingOp {
    vtable: &'static OpVtable,
}

/// What the C functions below do with one type of operation.
struct OpVtable {
    /// [`nagi_rt_op_poll`]'s work.
    poll: unsafe fn(op: *mut PendingOp, cx: &mut Context<'_>) -> i32,
    /// [`nagi_rt_op_finish`]'s work: writes the result and frees the block.
    finish: unsafe fn(op: *mut PendingOp, out: *mut u8),
    /// [`nagi_rt_op_drop`]'s work: drops what the block holds and frees it.
    drop: unsafe fn(op: *mut PendingOp),
}

/// One operation: the header, then its state. `repr(C)` keeps the header first, so a pointer to
/// the block is a pointer to its [`PendingOp`].
#[repr(C)]
struct Op<F: Future> {
    header: PendingOp,
    state: State<F>,
}

enum State<F: Future> {
    /// The future, not finished yet. It is polled in place and never moves: the block is on the
    /// heap and freed only after the future has been dropped where it lies.
    Running(F),
    /// Its result, until [`nagi_rt_op_finish`] writes it.
    Ready(F::Output),
    /// It failed; the failure's payload is in the guard's failure slot, and the frame that holds
    /// the operation is dropped (with it) by its owner.
    Failed,
}

/// A result of a pending operation that knows how to write itself where emitted code wants it.
pub(super) trait WriteOut: Send + 'static {
    /// Moves the result to `out`.
    ///
    /// # Safety
    /// `out` is writable for the result's type and holds no owned value (`out` may be null for
    /// a result of no size).
    unsafe fn write_to(self, out: *mut u8);
}

/// `exec`'s number of changed rows, a pushed job's id.
impl WriteOut for i64 {
    unsafe fn write_to(self, out: *mut u8) {
        // SAFETY: `out` is writable for an `i64`.
        unsafe { out.cast::<i64>().write(self) }
    }
}

/// `begin`, `commit`, `rollback`, the end of a scope, a sleep: nothing to write.
impl WriteOut for () {
    unsafe fn write_to(self, _: *mut u8) {}
}

/// A new pending operation running `future`, whose result its finish writes out.
pub(super) fn pending<F>(future: F) -> *mut PendingOp
where
    F: Future + Send + 'static,
    F::Output: WriteOut,
{
    let op = Box::new(Op { header: PendingOp { vtable: &Op::<F>::VTABLE }, state: State::Running(future) });
    Box::into_raw(op).cast()
}

impl<F> Op<F>
where
    F: Future + Send + 'static,
    F::Output: WriteOut,
{
    const VTABLE: OpVtable = OpVtable { poll: Self::poll, finish: Self::finish, drop: Self::drop };

    /// # Safety
    /// As [`nagi_rt_op_poll`], `op` being an `Op<F>`.
    unsafe fn poll(op: *mut PendingOp, cx: &mut Context<'_>) -> i32 {
        // SAFETY: the header's table is this type's, so the block is an `Op<F>`, lent for this call.
        let op = unsafe { &mut *op.cast::<Op<F>>() };
        let future = match &mut op.state {
            State::Running(future) => future,
            State::Ready(_) => return poll::READY,
            State::Failed => return poll::FAILED,
        };
        // SAFETY: the future stays where it is until it is dropped in place (see `State::Running`).
        let future = unsafe { Pin::new_unchecked(future) };
        match panic::catch_unwind(AssertUnwindSafe(|| future.poll(cx))) {
            Ok(Poll::Pending) => poll::PENDING,
            Ok(Poll::Ready(result)) => {
                op.state = State::Ready(result);
                poll::READY
            }
            Err(payload) => {
                op.state = State::Failed;
                super::guard::store_failure(payload);
                poll::FAILED
            }
        }
    }

    /// # Safety
    /// As [`nagi_rt_op_finish`], `op` being an `Op<F>`.
    unsafe fn finish(op: *mut PendingOp, out: *mut u8) {
        // SAFETY: the block is an `Op<F>` from `pending`'s box; it is freed here.
        let op = unsafe { Box::from_raw(op.cast::<Op<F>>()) };
        let message = match &op.state {
            State::Ready(_) => None,
            State::Running(_) => Some("a database operation was finished before it was ready"),
            State::Failed => Some("a database operation was finished after it failed"),
        };
        if let Some(message) = message {
            // Dropped in place (a running future must not move), and before `fail`, which may
            // jump over this frame.
            drop(op);
            fail(message.to_owned());
        }
        // The result moves out and the block is freed before it is written, so that nothing of
        // this frame needs dropping if writing it fails.
        let Op { state: State::Ready(result), .. } = *op else { unreachable!("checked ready above") };
        // SAFETY: forwarded from the caller.
        unsafe { result.write_to(out) }
    }

    /// # Safety
    /// As [`nagi_rt_op_drop`], `op` being an `Op<F>`.
    unsafe fn drop(op: *mut PendingOp) {
        // SAFETY: the block is an `Op<F>` from `pending`'s box, not used after this.
        drop(unsafe { Box::from_raw(op.cast::<Op<F>>()) });
    }
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
    // SAFETY: `cx` is the runtime's `&mut Context` of the poll this call runs in; `op` is a live
    // operation that emitted code lends for this call, polled as its table says.
    unsafe {
        let cx = &mut *cx.cast::<Context<'_>>();
        ((*op).vtable.poll)(op, cx)
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
    // SAFETY: forwarded from the caller; the table is the operation's own.
    unsafe { ((*op).vtable.finish)(op, out) }
}

/// Drops an operation that will not be finished (its frame is dropped: the request was cancelled
/// or timed out). A statement not yet run is then skipped by the database thread.
///
/// # Safety
/// `op` is a pending operation, not finished or dropped.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_op_drop(op: *mut PendingOp) {
    // SAFETY: forwarded from the caller; the table is the operation's own.
    unsafe { ((*op).vtable.drop)(op) }
}

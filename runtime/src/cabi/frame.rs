//! The frame protocol of emitted async functions, written once: the types of a frame's
//! functions, and [`Frame`], which polls one and keeps its ownership rules (docs/c-abi.md, "The
//! frame protocol").
//!
//! An async function of the LLVM emitter is a heap frame with four functions: one that makes it
//! (a route's `start`, a program's `new`, a task's `nagi.new.f`), `poll`, `drop` (a frame that
//! has not returned) and `finish`/`free` (a frame that has). A sync route's frame follows the
//! same protocol in room its owner provides, which its `drop` and `finish` do not free. A poll answers one of
//! [`nagi_abi::poll`]'s codes; what the owner must then do with the frame is the same for a
//! route, an async `main` and a spawned task, so it lives here and their futures differ only in
//! what they do with a returned frame.

use std::ptr;
use std::task::Context;

use nagi_abi::poll;

use super::guard::Payload;

/// `poll`: runs a frame until it waits (0), has its result (1), or failed (2: an awaited
/// operation failed; the frame is left suspended, to be dropped). Only `guarded_poll` calls it,
/// except for an async `main`, which runs unguarded (a trap there ends the process).
pub type PollFn = unsafe extern "C" fn(frame: *mut u8, cx: *mut u8) -> i32;

/// `drop` (a frame that has not returned), `finish` (drops a returned frame's result and frees
/// it) or `free` (frees a returned frame whose result was moved out).
pub type FrameFn = unsafe extern "C" fn(frame: *mut u8);

/// The emitted `guarded_poll`: calls `poll(frame, cx)` under a trap guard; 0 pending, 1 ready,
/// 2 failed (the frame must be dropped), 3 trapped (the frame's values are leaked, and a heap
/// frame with them).
pub type GuardedPollFn = unsafe extern "C" fn(poll: PollFn, frame: *mut u8, cx: *mut u8) -> i32;

/// A frame that has not returned, owned: polled with [`Frame::poll`], dropped with its `drop`
/// function if its owner lets go of it first (a request that timed out, a cancelled task).
pub(super) struct Frame {
    /// The frame, until it returns, fails or traps.
    frame: Option<*mut u8>,
    poll: PollFn,
    drop: FrameFn,
    /// The module's `guarded_poll`; `None` polls without a guard (an async `main`).
    guarded_poll: Option<GuardedPollFn>,
}

// SAFETY: a frame holds plain data and runtime objects (strings, arrays, class values, pending
// operations, which are `Send`), nothing tied to the thread that made it: the trap guard a poll
// sets is cleared before the poll returns. `Frame` owns it alone and touches it only through
// `&mut self`, so it may move between worker threads between polls.
unsafe impl Send for Frame {}

/// How one poll of a [`Frame`] ended.
pub(super) enum Polled {
    /// The frame waits; its waker will be woken.
    Pending,
    /// The frame returned: its result is in it, and it is the caller's to read and then free
    /// (with `finish` or `free`).
    Returned(*mut u8),
    /// The frame failed and is gone: dropped when what it awaited failed (it waited at that
    /// await, so its `drop` frees everything it holds), leaked when it trapped mid-operation
    /// (which of its values are live then is known only to the emitted code; a frame in its
    /// owner's room leaks only its values, the room is the owner's to free). The failure's
    /// payload, when one was stored.
    Failed(Option<Payload>),
}

impl Frame {
    /// Owns `frame`, which `poll` runs (through `guarded_poll`, when given) and `drop` drops.
    pub(super) fn new(frame: *mut u8, poll: PollFn, drop: FrameFn, guarded_poll: Option<GuardedPollFn>) -> Frame {
        Frame { frame: Some(frame), poll, drop, guarded_poll }
    }

    /// Polls the frame once with `cx`. After [`Polled::Returned`] or [`Polled::Failed`] the
    /// frame is no longer this value's; polling again traps.
    pub(super) fn poll(&mut self, cx: &mut Context<'_>) -> Polled {
        let Some(frame) = self.frame else { crate::trap("a frame was polled after it returned or failed") };
        let cx = ptr::from_mut(cx).cast();
        // SAFETY: `frame` was made by the function that goes with `poll` and has not returned,
        // failed or been dropped; `cx` outlives the call, and emitted code passes it on only to
        // `nagi_rt_op_poll`, which uses it as the `Context` it is.
        let answer = unsafe {
            match self.guarded_poll {
                Some(guarded_poll) => guarded_poll(self.poll, frame, cx),
                None => (self.poll)(frame, cx),
            }
        };
        if answer == poll::PENDING {
            return Polled::Pending;
        }
        self.frame = None;
        if answer == poll::READY {
            return Polled::Returned(frame);
        }
        if answer == poll::FAILED {
            // SAFETY: the frame has not returned; it is dropped once, here.
            crate::defers::failing(|| unsafe { (self.drop)(frame) });
        }
        // `poll::TRAPPED`: a trap jumped back to the guard; the frame stopped mid-operation and
        // leaks with what it holds.
        Polled::Failed(super::guard::take_failure())
    }
}

impl Drop for Frame {
    fn drop(&mut self) {
        if let Some(frame) = self.frame.take() {
            // SAFETY: the frame has not returned (its owner let go of it); dropped once, here.
            unsafe { (self.drop)(frame) };
        }
    }
}

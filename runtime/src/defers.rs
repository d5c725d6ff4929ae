//! Deferred calls: a [`Defer`] holds a call of a plain function with its arguments and makes
//! it when it is dropped (Low's `defer.new`, High's `defer f(args)`). The rules live here once;
//! the Rust path builds a `Defer` from a closure, the LLVM path (`cabi::tasks`) from a block
//! of arguments that an emitted thunk runs under the module's `guarded_poll`.
//!
//! The rules (docs/low.md §8.4, docs/language.md "Deferred calls"):
//!
//! - A `Defer` is dropped when its block is left normally (the emitted `drop` at the end of the
//!   block, at `return`, `break` and `continue`) or when its task is cancelled: its scope failed
//!   or was dropped, or its request was abandoned (the client went away, the timeout). Either
//!   way the call runs exactly once, then and there.
//! - It does not run when its task fails: a trap or an HTTP error that ends the function (the
//!   Rust path unwinds through it; the LLVM path leaks a trapped frame and drops a failed one
//!   under [`failing`]). Its arguments are dropped without the call.
//! - A trap inside the call is a trap at the drop: it ends the function that dropped the `Defer`
//!   as any trap there would. During a cancellation nobody is left to answer it: it is reported
//!   (the panic hook reports every trap when it is raised) and the cancellation goes on.

use std::cell::Cell;
use std::future::Future;
use std::mem::ManuallyDrop;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll};

/// A caught panic payload: a [`crate::Trap`] or an [`crate::HttpError`].
pub(crate) type Payload = Box<dyn std::any::Any + Send>;

/// Why the values being dropped on this thread are dropped.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    /// The program's own drops: the end of a block, `return`, `break`, `continue`.
    Running,
    /// A cancelled task's or request's future is being dropped ([`Cancellable`]).
    Cancelling,
    /// A failed frame of the LLVM path is being dropped ([`failing`]).
    Failing,
}

thread_local! {
    static MODE: Cell<Mode> = const { Cell::new(Mode::Running) };
}

/// Sets this thread's mode for as long as it lives, then restores the previous one, also when
/// what runs meanwhile unwinds.
struct ModeGuard(Mode);

impl ModeGuard {
    fn set(mode: Mode) -> ModeGuard {
        ModeGuard(MODE.with(|m| m.replace(mode)))
    }
}

impl Drop for ModeGuard {
    fn drop(&mut self) {
        MODE.with(|m| m.set(self.0));
    }
}

/// Runs `drop`, the drop of a failed frame of the LLVM path (its poll answered 2), so that its
/// deferred calls do not run, as they do not on the Rust path, where a failure unwinds.
pub(crate) fn failing<R>(drop: impl FnOnce() -> R) -> R {
    let _mode = ModeGuard::set(Mode::Failing);
    drop()
}

/// The boxed call of a [`Defer`]: it answers the payload of a trap instead of unwinding.
type Call = Box<dyn FnOnce() -> Result<(), Payload> + Send>;

/// A deferred call, made once when this is dropped (see the module's rules).
pub struct Defer {
    call: Option<Call>,
}

impl Defer {
    /// A deferred call of `call` (the Rust path's `defer.new`: a closure that calls the function
    /// with the arguments it owns).
    pub fn new(call: impl FnOnce() + Send + 'static) -> Defer {
        Defer { call: Some(Box::new(move || panic::catch_unwind(AssertUnwindSafe(call)))) }
    }

    /// A deferred call that answers a trap's payload itself (the LLVM path's, which runs emitted
    /// code under a guard and cannot unwind).
    pub(crate) fn guarded(call: impl FnOnce() -> Result<(), Payload> + Send + 'static) -> Defer {
        Defer { call: Some(Box::new(call)) }
    }

    /// Makes the call, unless it was made already or its task is failing (then only its
    /// arguments are dropped); answers the trap to raise at the drop, if any.
    pub(crate) fn run(&mut self) -> Option<Payload> {
        let call = self.call.take()?;
        let mode = MODE.with(Cell::get);
        if mode == Mode::Failing || std::thread::panicking() {
            return None;
        }
        // The call's own drops are the program's, whatever this one is.
        let result = {
            let _mode = ModeGuard::set(Mode::Running);
            call()
        };
        match result {
            Err(payload) if mode == Mode::Running => Some(payload),
            // Cancelled: the hook reported the trap, and there is nobody to raise it in.
            Err(_) | Ok(()) => None,
        }
    }
}

impl Drop for Defer {
    fn drop(&mut self) {
        if let Some(payload) = self.run() {
            panic::resume_unwind(payload);
        }
    }
}

/// A future whose drop is a cancellation: the runtime wraps every task's future and every
/// request's handler in one, so that deferred calls know why they run.
pub(crate) struct Cancellable<F> {
    inner: ManuallyDrop<F>,
}

impl<F> Cancellable<F> {
    pub(crate) fn new(inner: F) -> Cancellable<F> {
        Cancellable { inner: ManuallyDrop::new(inner) }
    }
}

impl<F: Future> Future for Cancellable<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // SAFETY: `inner` is pinned with `self`: it is never moved out, only dropped in place.
        unsafe { self.map_unchecked_mut(|this| &mut *this.inner) }.poll(cx)
    }
}

impl<F> Drop for Cancellable<F> {
    fn drop(&mut self) {
        let _mode = ModeGuard::set(Mode::Cancelling);
        // SAFETY: dropped once, here, in place; `inner` is never used again.
        unsafe { ManuallyDrop::drop(&mut self.inner) }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    fn counting() -> (Arc<AtomicUsize>, Defer) {
        let runs = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&runs);
        (
            runs,
            Defer::new(move || {
                counted.fetch_add(1, Ordering::SeqCst);
            }),
        )
    }

    #[test]
    fn a_dropped_defer_calls_once_and_a_failing_one_never() {
        let (runs, defer) = counting();
        drop(defer);
        assert_eq!(runs.load(Ordering::SeqCst), 1);
        let (runs, defer) = counting();
        failing(|| drop(defer));
        assert_eq!(runs.load(Ordering::SeqCst), 0);
        let (runs, defer) = counting();
        let unwound = panic::catch_unwind(AssertUnwindSafe(move || {
            let _defer = defer;
            panic::resume_unwind(Box::new(crate::Trap { message: "boom".into() }));
        }));
        assert!(unwound.is_err());
        assert_eq!(runs.load(Ordering::SeqCst), 0, "a trap unwinding through a Defer does not call it");
    }

    #[test]
    fn a_trap_in_the_call_is_raised_at_the_drop_but_not_during_a_cancellation() {
        let trapping = || Defer::new(|| panic::resume_unwind(Box::new(crate::Trap { message: "in defer".into() })));
        let raised = panic::catch_unwind(AssertUnwindSafe(|| drop(trapping())));
        let payload = raised.expect_err("the trap reaches the drop");
        assert_eq!(payload.downcast_ref::<crate::Trap>().map(|t| t.message.as_str()), Some("in defer"));
        let cancelled = Cancellable::new(async move {
            let _defer = trapping();
            std::future::pending::<()>().await;
        });
        let mut cancelled = Box::pin(cancelled);
        let waker = futures_util::task::noop_waker();
        assert!(cancelled.as_mut().poll(&mut Context::from_waker(&waker)).is_pending());
        drop(cancelled);
        assert_eq!(MODE.with(Cell::get), Mode::Running, "the mode is restored");
    }
}

//! How a trap in code from the LLVM emitter ends: the whole program outside HTTP handlers, only
//! the request inside them, by a jump back to the guard that the handler's `guarded_poll` set.
//!
//! Emitted frames are `nounwind` and have no landing pads, so a Rust panic must never unwind
//! through them. Instead, the emitted `guarded_poll` of a service gives each poll of a handler
//! frame a `jmp_buf` on its own stack: it calls [`nagi_rt_guard_enter`] with the buffer (which
//! makes it this thread's current guard and returns the previous one), `_setjmp`s it, polls the
//! frame, and restores the previous guard with [`nagi_rt_guard_leave`] on both ways out. A
//! failure in a runtime function called under the guard (`fail`, `fail_with`) raises the trap
//! as the runtime's own panic and catches it at once (so the panic hook logs it exactly as it logs
//! a trap in a handler of the Rust path), stores the caught payload in this thread's failure slot,
//! and `longjmp`s to the guard; `guarded_poll` then returns 3, and the handler's future takes the
//! payload (`take_failure`) and resumes unwinding with it in Rust frames, where the per-request
//! wrapper answers it. Without a guard, a failure ends the process as it always did: stdout
//! flushed, status 101.
//!
//! The jump skips frames without running anything in them, which Rust permits only for frames
//! that hold no value with a destructor. The rule that keeps it sound: a C-ABI function calls
//! `fail` or `fail_with` only once it holds nothing with a destructor (messages are passed by
//! value, other owned values are dropped or moved first), and these two hold nothing either when
//! they jump. Emitted frames have no destructors in Rust's sense: what they own is leaked by the
//! jump (`docs/c-abi.md`, "What leaks on a trap").

use std::any::Any;
use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::panic::{self, AssertUnwindSafe};
use std::ptr;

/// A caught panic payload: a [`crate::Trap`] or an [`crate::HttpError`].
pub(crate) type Payload = Box<dyn Any + Send>;

thread_local! {
    /// The `jmp_buf` of the innermost `guarded_poll` running on this thread; null outside one.
    static GUARD: Cell<*mut u8> = const { Cell::new(ptr::null_mut()) };
    /// The payload of the failure that jumped to the guard, until the handler's future takes it.
    static FAILURE: Cell<Option<Payload>> = const { Cell::new(None) };
}

unsafe extern "C" {
    /// glibc's `longjmp`: restores the registers that `_setjmp` saved in `env` and returns `val`
    /// from that `_setjmp` call.
    fn longjmp(env: *mut c_void, val: c_int) -> !;
}

/// Makes `buf`, a `jmp_buf` on the stack of the calling `guarded_poll`, this thread's guard, and
/// returns the previous guard (null when there was none), which the caller must restore with
/// [`nagi_rt_guard_leave`] before it returns.
#[unsafe(no_mangle)]
pub extern "C" fn nagi_rt_guard_enter(buf: *mut u8) -> *mut u8 {
    GUARD.with(|guard| guard.replace(buf))
}

/// Restores the guard that [`nagi_rt_guard_enter`] returned.
#[unsafe(no_mangle)]
pub extern "C" fn nagi_rt_guard_leave(prev: *mut u8) {
    GUARD.with(|guard| guard.set(prev));
}

/// Raises a trap with `message` as the runtime's own panic, so that the panic hook reports it
/// (on stderr in a program, in the log inside a request), and returns the caught payload.
pub(crate) fn raise(message: &str) -> Payload {
    match panic::catch_unwind(AssertUnwindSafe(|| crate::trap(message))) {
        Err(payload) => payload,
        Ok(()) => unreachable!("a trap returns only by unwinding"),
    }
}

/// Fails with the trap `message` (see [`fail_with`]).
///
/// The caller must hold nothing with a destructor when it calls this: the message is taken by
/// value for that reason.
pub(crate) fn fail(message: String) -> ! {
    let payload = raise(&message);
    drop(message);
    fail_with(payload)
}

/// Fails with a caught panic `payload`, whose panic the hook has reported already: under a guard,
/// stores it in this thread's failure slot and jumps to the guard; without one, flushes stdout
/// and ends the process with status 101.
///
/// The caller must hold nothing with a destructor when it calls this (see the module doc).
pub(crate) fn fail_with(payload: Payload) -> ! {
    let guard = GUARD.with(Cell::get);
    if guard.is_null() {
        drop(payload);
        crate::rt::flush_stdout();
        std::process::exit(101)
    }
    FAILURE.with(|slot| slot.set(Some(payload)));
    // SAFETY: `guard` is the `jmp_buf` of a `guarded_poll` that is still running on this thread:
    // it set the guard before calling `_setjmp` and restores the previous one before it returns,
    // so a non-null guard always names a live buffer of an active frame. The frames the jump
    // skips hold no value with a destructor, which is the condition Rust puts on `longjmp`: this
    // one has moved its payload into the thread-local and holds only a raw pointer; the C-ABI
    // function that called it holds nothing by the rule of this module; the frames between that
    // and `guarded_poll` are emitted code, which Rust destructors never run in (what they own
    // leaks, as documented).
    unsafe { longjmp(guard.cast(), 1) }
}

/// Stores the payload of a failure that does not jump: a database operation that failed, whose
/// frame returns 2 from its poll and is dropped by its owner (`cabi::db`). The handler's future
/// takes it as it takes a trap's.
pub(crate) fn store_failure(payload: Payload) {
    FAILURE.with(|slot| slot.set(Some(payload)));
}

/// Raises again, as a panic in Rust frames, the failure that made a `guarded_poll` of emitted
/// code (a task's frame, an actor's handler or state, a blocking task) return 2 or 3; `what`
/// names the failed code should no payload be stored (see [`reason`]).
pub(crate) fn resume_failure(what: &str) -> ! {
    std::panic::resume_unwind(reason(take_failure(), what))
}

/// The payload `taken` of a failed `guarded_poll`, or, should none be stored, which no runtime
/// function leaves, a trap saying that `what` failed without a reason.
pub(crate) fn reason(taken: Option<Payload>, what: &str) -> Payload {
    taken.unwrap_or_else(|| Box::new(crate::Trap { message: format!("{what} failed without a reason") }))
}

/// Takes the payload of the failure that last jumped to a guard on this thread, if any (the
/// handler's future, after its `guarded_poll` returned 2 or 3).
pub(crate) fn take_failure() -> Option<Payload> {
    FAILURE.with(Cell::take)
}

#[cfg(all(test, target_arch = "x86_64", target_os = "linux"))]
mod tests {
    use std::ptr;

    use super::{GUARD, take_failure};
    use crate::Trap;
    use crate::cabi::testing::guarded_poll;
    use crate::cabi::{nagi_rt_index_out_of_range, nagi_rt_trap};

    unsafe extern "C" fn ready(_frame: *mut u8, _cx: *mut u8) -> i32 {
        1
    }

    unsafe extern "C" fn pending(_frame: *mut u8, _cx: *mut u8) -> i32 {
        0
    }

    unsafe extern "C" fn traps(frame: *mut u8, _cx: *mut u8) -> i32 {
        // SAFETY: the test's frame is one writable byte.
        unsafe { frame.write(1) };
        let message = "boom";
        // SAFETY: the message is `len` readable bytes.
        unsafe { nagi_rt_trap(message.as_ptr(), message.len()) }
    }

    unsafe extern "C" fn out_of_range(_frame: *mut u8, _cx: *mut u8) -> i32 {
        nagi_rt_index_out_of_range(5, 2)
    }

    /// A poll whose own guarded poll traps: the inner trap returns to the inner guard only.
    unsafe extern "C" fn nested(frame: *mut u8, cx: *mut u8) -> i32 {
        // SAFETY: `traps` follows the protocol; the frame is one writable byte.
        unsafe {
            let inner = guarded_poll(traps, frame, cx);
            frame.write(10 + u8::try_from(inner).unwrap_or(0));
        }
        1
    }

    fn no_guard() -> bool {
        GUARD.with(|guard| guard.get().is_null())
    }

    fn trap_message() -> Option<String> {
        take_failure().and_then(|payload| payload.downcast::<Trap>().ok()).map(|trap| trap.message)
    }

    #[test]
    fn a_trap_under_a_guard_returns_to_it_with_its_payload() {
        let mut byte = 0_u8;
        let frame = ptr::from_mut(&mut byte);
        let cx = ptr::null_mut();
        // SAFETY (each call): the polls follow the protocol, and the frame is one writable byte.
        assert_eq!(unsafe { guarded_poll(ready, frame, cx) }, 1);
        assert_eq!(unsafe { guarded_poll(pending, frame, cx) }, 0);
        assert!(no_guard() && take_failure().is_none());
        assert_eq!(unsafe { guarded_poll(traps, frame, cx) }, 3);
        assert!(no_guard());
        assert_eq!((byte, trap_message()), (1, Some("boom".to_owned())));
        assert!(take_failure().is_none(), "the payload is taken once");
        assert_eq!(unsafe { guarded_poll(out_of_range, frame, cx) }, 3);
        assert_eq!(trap_message(), Some(crate::ops::index_message(5, 2)));
        assert_eq!(unsafe { guarded_poll(nested, frame, cx) }, 1);
        assert!(no_guard());
        assert_eq!((byte, trap_message()), (13, Some("boom".to_owned())));
    }
}

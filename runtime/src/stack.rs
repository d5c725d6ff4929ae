//! Stack overflow as a trap: the check emitted code runs at the entry of every function that can
//! recurse.
//!
//! Each thread keeps the lowest stack address it lets Nagi code reach: the bottom of its stack
//! (from `pthread_getattr_np`) plus a reserve of [`RESERVE`] bytes, which is what the trap then
//! needs to report itself and unwind. A check compares the address of a local with that limit:
//! one thread-local load and a compare, no call on the fast path. Past the limit the Rust path
//! raises the trap `stack overflow` (a program prints `error: stack overflow` and exits 101, a
//! handler answers 500 and the server keeps serving); the LLVM path ends the program through
//! the C ABI's trap, as every trap there does. The LLVM path inlines the same compare against a
//! thread-local slot of its own module and calls `nagi_rt_stack_slow` only on a thread's first
//! check and on overflow.
//!
//! The emitters put the check only in functions on a cycle of the call graph
//! (`nagi_low::recursion`): every other function adds a bounded frame to its caller's, so only
//! recursion can grow the stack without bound. Threads that never run the check never compute
//! their limit.

use std::cell::Cell;

/// Stack kept free below the limit, in bytes, for the trap's own work: the panic, the report,
/// unwinding, and (in a service) answering 500.
pub const RESERVE: usize = 256 * 1024;

// The message of the trap a call past the limit raises, shared with the interpreter.
pub use nagi_abi::trap_text::STACK_OVERFLOW;

thread_local! {
    // The lowest address Nagi code may use on this thread; `usize::MAX` until the first check
    // computes it, 0 when the thread's stack bounds are unknown (then nothing is checked).
    static LIMIT: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// Whether the calling function's frame lies past this thread's limit. The first call on a
/// thread computes the limit.
#[inline(always)]
pub fn exceeded() -> bool {
    let here = stack_pointer();
    here < LIMIT.with(Cell::get) && slow_exceeded(here)
}

/// The stack pointer. Read from the register, not as the address of a local: a local whose
/// address is taken keeps its frame from being optimized (LLVM then no longer turns an
/// accumulating recursion into a loop, which measured 1.8× on recursive fib).
#[inline(always)]
fn stack_pointer() -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        let sp: usize;
        // SAFETY: reads a register into a fresh output; touches no memory and no flags.
        unsafe { std::arch::asm!("mov {}, rsp", out(reg) sp, options(pure, nomem, nostack, preserves_flags)) };
        sp
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let marker = 0u8;
        std::ptr::addr_of!(marker) as usize
    }
}

/// Raises the trap `stack overflow` when the calling function's frame lies past the limit.
#[inline(always)]
pub fn check() {
    if exceeded() {
        overflow();
    }
}

#[cold]
#[inline(never)]
fn overflow() -> ! {
    crate::trap(STACK_OVERFLOW)
}

/// The slow half of [`exceeded`]: computes the limit on a thread's first check, then compares.
#[cold]
#[inline(never)]
fn slow_exceeded(here: usize) -> bool {
    let mut limit = LIMIT.with(Cell::get);
    if limit == usize::MAX {
        limit = thread_limit();
        LIMIT.with(|l| l.set(limit));
    }
    here < limit
}

/// The current thread's limit: the bottom of its stack plus [`RESERVE`], or 0 (check nothing)
/// when the system does not say where the stack is. The LLVM path keeps it in a thread-local
/// slot of its own module and asks for it here, on each thread's first check.
pub fn thread_limit() -> usize {
    stack_bottom().map_or(0, |bottom| bottom.saturating_add(RESERVE))
}

/// The lowest address of the current thread's stack (stacks grow down on every target Nagi
/// builds for), or `None` when the system does not say.
#[cfg(target_os = "linux")]
fn stack_bottom() -> Option<usize> {
    let mut attr = std::mem::MaybeUninit::<libc::pthread_attr_t>::uninit();
    let mut base: *mut libc::c_void = std::ptr::null_mut();
    let mut size: libc::size_t = 0;
    // SAFETY: `attr` is initialised by `pthread_getattr_np` before it is read, and destroyed
    // once; `base` and `size` are plain out-parameters.
    unsafe {
        if libc::pthread_getattr_np(libc::pthread_self(), attr.as_mut_ptr()) != 0 {
            return None;
        }
        let ok = libc::pthread_attr_getstack(attr.as_ptr(), &mut base, &mut size) == 0;
        libc::pthread_attr_destroy(attr.as_mut_ptr());
        // The main thread's reported size is the rlimit, of which the kernel may not have
        // mapped the bottom yet; the guard below it still faults, so the limit stays valid.
        (ok && !base.is_null() && size > RESERVE).then_some(base as usize)
    }
}

#[cfg(not(target_os = "linux"))]
fn stack_bottom() -> Option<usize> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth(n: u64) -> u64 {
        check();
        // Keep a frame per level, even optimized: LLVM turns `1 + depth(n - 1)` into a loop with
        // an accumulator, but cannot see through `black_box`.
        if n == 0 { 0 } else { 1 + std::hint::black_box(depth(n - 1)) }
    }

    #[test]
    fn a_shallow_stack_passes_and_deep_recursion_traps_on_a_small_thread() {
        assert!(!exceeded());
        assert_eq!(depth(1000), 1000);
        let result = std::thread::Builder::new()
            .stack_size(1024 * 1024)
            .spawn(|| std::panic::catch_unwind(|| depth(u64::MAX)))
            .expect("thread")
            .join()
            .expect("the thread itself does not die");
        let payload = result.expect_err("unbounded recursion traps");
        let trap = payload.downcast_ref::<crate::Trap>().expect("a trap");
        assert_eq!(trap.message, "stack overflow");
    }
}

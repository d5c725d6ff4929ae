//! A counting global allocator (feature `counting-alloc`): how many allocations the calling
//! thread has asked for, so that a benchmark can check that a kernel allocates nothing.
//!
//! The runtime does not install it; a binary that wants the count declares it as its global
//! allocator:
//!
//! ```text
//! #[global_allocator]
//! static ALLOC: nagi_runtime::alloc_count::CountingAlloc = nagi_runtime::alloc_count::CountingAlloc;
//!
//! let (result, allocations) = nagi_runtime::alloc_count::count(|| kernel(&xs));
//! ```
//!
//! What is counted: every `alloc`, `alloc_zeroed` and `realloc` request that reaches Rust's
//! global allocator from the calling thread (a `realloc` counts as one allocation), with the
//! bytes requested. Not counted: frees, other threads' requests, and memory that C code (e.g.
//! SQLite) takes from its own allocator. Requests are forwarded to [`System`]; the count costs a
//! thread-local increment per request.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

thread_local! {
    // `const` initialisation and no destructor: reading these never allocates, so the
    // allocator can use them re-entrantly, and they stay usable while the thread exits.
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
    static BYTES: Cell<u64> = const { Cell::new(0) };
}

/// Rust's system allocator with a per-thread count of allocation requests.
pub struct CountingAlloc;

impl CountingAlloc {
    fn record(size: usize) {
        // `try_with` fails only while the thread-local is being torn down; such requests are
        // not counted rather than aborting.
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        let _ = BYTES.try_with(|b| b.set(b.get() + size as u64));
    }
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so the
// `GlobalAlloc` contract holds exactly as it does for `System`; the counters are plain
// thread-local cells that never allocate.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        Self::record(layout.size());
        // SAFETY: forwarded unchanged; the caller upholds `alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        Self::record(layout.size());
        // SAFETY: forwarded unchanged; the caller upholds `alloc_zeroed`'s contract.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged; `ptr` came from `System` through this allocator.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        Self::record(new_size);
        // SAFETY: forwarded unchanged; `ptr` came from `System` through this allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// The calling thread's counts so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Counts {
    /// Allocation requests (`alloc`, `alloc_zeroed`, `realloc`).
    pub allocations: u64,
    /// Bytes requested by them, summed (not live or peak memory).
    pub bytes: u64,
}

/// The calling thread's counts since it started. They only grow when [`CountingAlloc`] is the
/// global allocator; otherwise they stay zero.
pub fn counts() -> Counts {
    Counts { allocations: ALLOCATIONS.with(Cell::get), bytes: BYTES.with(Cell::get) }
}

/// Runs `f` and returns its result with the allocations the calling thread made during it.
/// The result is dropped by the caller, after the count, so its own frees do not matter.
pub fn count<R>(f: impl FnOnce() -> R) -> (R, Counts) {
    let before = counts();
    let result = f();
    let after = counts();
    (result, Counts { allocations: after.allocations - before.allocations, bytes: after.bytes - before.bytes })
}

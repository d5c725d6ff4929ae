//! The C ABI that code from the LLVM emitter calls: allocation, strings, printing, formatting,
//! traps, the program entry, and services (routes and the database). `docs/c-abi.md` is the
//! reference; this comment is its summary.
//!
//! Conventions:
//! - Sizes, lengths, capacities and alignments are `usize` (64-bit on every supported target);
//!   indexes are `i64`.
//! - A `bool` crosses as an `i32` that is 0 or 1 (both directions), so neither side has to
//!   agree on how an `i1` is extended.
//! - A string is [`RawString`] `{ ptr, len, cap }`, and an array [`RawArray`] of the same
//!   shape with `len` and `cap` counted in elements. The buffer of either comes from
//!   [`nagi_rt_alloc`] / [`nagi_rt_grow`] (Rust's global allocator) with the element's size
//!   and alignment, and `cap == 0` owns no buffer (`ptr` is then null, dangling, or a string
//!   literal's constant bytes, which `len` counts: emitted code does not copy literals). Emitted
//!   code frees buffers with [`nagi_rt_free`], passing the size and alignment it allocated with.
//! - Functions that produce a string write it through an out-pointer (`out`), which must not
//!   hold an owned string (it is overwritten, not dropped).
//! - Nothing here unwinds. A trap ([`nagi_rt_trap`], [`nagi_rt_index_out_of_range`]) is
//!   reported by the runtime's own panic hook, exactly as `program::run_main` reports it on the
//!   Rust path (stdout flushed, then `error: <message>` on stderr), and the process exits with
//!   status 101 from inside the runtime. Inside an HTTP handler, the same failure jumps back to
//!   the guard that the handler's poll set instead, and only the request fails ([`guard`]).
//! - JSON ([`json`]) is driven by a layout descriptor per type that the emitter writes as a
//!   constant, in place of the serde derives the Rust path generates per class.
//! - Services: [`service`] describes routes and serves them ([`service::nagi_rt_serve`]), [`db`]
//!   runs statements as pending operations that handler frames poll. A program whose `main` is
//!   async (a test build whose tests use the database) starts with [`program::nagi_rt_main_async`].
//! - Printing goes through the same buffered stdout as the Rust path's `rt::print_*`, and
//!   [`nagi_rt_main`] flushes it at exit, so output is byte-identical between the emitters.
//!
//! Every function is `unsafe extern "C"` where it reads memory through a pointer the caller
//! vouches for; the `// SAFETY:` comments say what the emitted code guarantees.

use std::alloc::{self, Layout};
use std::cell::Cell;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use crate::panic_hook::{HookMode, install_hook};

pub mod actors;
pub mod arrays;
pub mod configuration;
pub mod db;
pub mod frame;
pub mod guard;
pub mod ids;
pub mod inprocess;
pub mod json;
pub mod maps;
pub mod outbound;
pub mod pending;
pub mod program;
pub mod queues;
pub mod routes;
pub mod secrets;
pub mod service;
pub mod strings;
pub mod supervisors;
pub mod tasks;
#[cfg(test)]
pub(crate) mod testing;
pub mod time;

use guard::fail;

/// A string as emitted code lays it out: `%nagi.String = { i8*, i64, i64 }`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct RawString {
    /// The UTF-8 bytes; when `cap == 0` not owned: null, dangling, or a literal's constant
    /// bytes (`len` of them), which are read like any others and never written or freed.
    pub ptr: *mut u8,
    /// The length in bytes.
    pub len: usize,
    /// The size of the buffer in bytes; 0 owns no buffer.
    pub cap: usize,
}

/// An array as emitted code lays it out: `{ T*, i64 len, i64 cap }`, lengths in elements.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct RawArray {
    /// The elements; null or dangling when `cap == 0`.
    pub ptr: *mut u8,
    /// The number of elements.
    pub len: usize,
    /// The number of elements the buffer holds; 0 owns no buffer.
    pub cap: usize,
}

/// The bytes at `ptr..ptr+len`; an empty slice for `len == 0` whatever `ptr` is (emitted code
/// may hold a null pointer for an empty string).
///
/// # Safety
/// For `len > 0`, `ptr` must point to `len` initialized bytes that live for `'a`.
unsafe fn bytes<'a>(ptr: *const u8, len: usize) -> &'a [u8] {
    if len == 0 {
        &[]
    } else {
        // SAFETY: the caller guarantees `len` readable bytes at `ptr`.
        unsafe { std::slice::from_raw_parts(ptr, len) }
    }
}

/// The text at `ptr..ptr+len`. Nagi strings are UTF-8 by construction (literals, formatting
/// and concatenation of UTF-8), so the lossy conversion never replaces anything in practice;
/// it keeps a foreign caller's bad bytes from being undefined behaviour.
///
/// # Safety
/// As [`bytes`].
unsafe fn text<'a>(ptr: *const u8, len: usize) -> std::borrow::Cow<'a, str> {
    // SAFETY: forwarded from the caller.
    String::from_utf8_lossy(unsafe { bytes(ptr, len) })
}

/// The text of a string of emitted code, without checking that it is UTF-8: what the hot paths
/// (encoding JSON) read. Every string emitted code holds is UTF-8 by construction: literals come
/// from UTF-8 source, and the runtime hands over only Rust `String`s (formatting, concatenation of
/// UTF-8, JSON and rows decoded by serde and rusqlite, which validate).
///
/// # Safety
/// As [`bytes`], and the bytes are UTF-8.
unsafe fn text_unchecked<'a>(ptr: *const u8, len: usize) -> &'a str {
    // SAFETY: forwarded from the caller.
    unsafe { std::str::from_utf8_unchecked(bytes(ptr, len)) }
}

/// The slow half of the stack check emitted at the entry of every function that can recurse,
/// called when the frame address `sp` is below the module's thread-local limit at `limit`:
/// on a thread's first check (the slot still holds all ones) it stores this thread's limit
/// there; when `sp` is below the real limit it traps with `stack overflow`, as [`nagi_rt_trap`].
/// [`crate::stack`] holds the rule, which the Rust path uses too.
///
/// # Safety
/// `limit` points to the calling module's thread-local `u64` slot of the current thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_stack_slow(sp: u64, limit: *mut u64) {
    let real = crate::stack::thread_limit() as u64;
    // SAFETY: the caller passes its own thread's slot.
    unsafe { limit.write(real) };
    if sp < real {
        fail(crate::stack::STACK_OVERFLOW.to_owned());
    }
}

/// The layout of `size` bytes at `align`, or a trap when no allocation can have it.
fn layout(size: usize, align: usize) -> Layout {
    match Layout::from_size_align(size, align) {
        Ok(layout) => layout,
        Err(_) => fail(format!("cannot allocate {size} bytes aligned to {align}: capacity overflow")),
    }
}

/// How many buffers emitted code owns right now: every buffer handed to it (allocated by
/// [`nagi_rt_alloc`] or [`nagi_rt_grow`], or a string or array the runtime wrote into its memory)
/// counts one until [`nagi_rt_free`] frees it. Heap frames are such buffers too, so a service whose
/// requests have all ended holds none unless one leaked (a trapped handler leaks on purpose); the
/// LLVM path's service reports the count when it stops.
///
/// The count is kept per thread ([`THREAD_COUNT`]) and summed when read: a buffer is often
/// allocated on one thread (a row's string, on the database thread) and freed on another, and
/// one shared atomic counter cost a locked read-modify-write per allocation and per free, about
/// 2 % of `GET /users?limit=100` on the LLVM path (bench/README.md).
static COUNTS: Mutex<Counts> = Mutex::new(Counts { live: Vec::new(), retired: 0 });

/// The threads' counts: those of the live threads, and the sum of those of the threads that ended.
struct Counts {
    live: Vec<Arc<AtomicI64>>,
    retired: i64,
}

/// This thread's share of the count. Only this thread writes it, so a plain load and store
/// update it; when the thread ends, its share is folded into `retired`.
struct ThreadCount(Arc<AtomicI64>);

impl ThreadCount {
    fn register() -> ThreadCount {
        let count = Arc::new(AtomicI64::new(0));
        counts().live.push(Arc::clone(&count));
        ThreadCount(count)
    }
}

impl Drop for ThreadCount {
    fn drop(&mut self) {
        // Later counts of this thread (destructors that run after this one) go to `retired`.
        THREAD_SHARE.with(|share| share.set(std::ptr::null()));
        let mut counts = counts();
        counts.retired += self.0.load(Ordering::Relaxed);
        counts.live.retain(|count| !Arc::ptr_eq(count, &self.0));
    }
}

thread_local! {
    static THREAD_COUNT: ThreadCount = ThreadCount::register();
    /// This thread's share while [`THREAD_COUNT`] holds it, null before and after: a constant
    /// initializer and no destructor make it a plain thread-local read, where `THREAD_COUNT`'s
    /// lazy state is checked on every access (a string is counted when it is handed over and
    /// again when it is freed: two counts per row of a query).
    static THREAD_SHARE: Cell<*const AtomicI64> = const { Cell::new(std::ptr::null()) };
}

/// The counts, even if a thread panicked while holding them (they stay consistent: each update
/// is one push, one retain or one addition).
fn counts() -> std::sync::MutexGuard<'static, Counts> {
    COUNTS.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Adds `delta` to this thread's share of the count. A thread whose locals are already gone
/// (a buffer freed by a destructor at thread exit) counts into `retired` directly.
#[inline]
fn count(delta: i64) {
    let share = THREAD_SHARE.with(Cell::get);
    // SAFETY: a share is set only while this thread's `ThreadCount` holds it, and its drop
    // clears it first (see `THREAD_SHARE`).
    match unsafe { share.as_ref() } {
        Some(share) => share.store(share.load(Ordering::Relaxed) + delta, Ordering::Relaxed),
        None => count_slowly(delta),
    }
}

/// [`count`] before this thread's share is registered (it registers it) or after it is gone.
#[cold]
fn count_slowly(delta: i64) {
    let counted = THREAD_COUNT.try_with(|count| {
        THREAD_SHARE.with(|share| share.set(Arc::as_ptr(&count.0)));
        count.0.store(count.0.load(Ordering::Relaxed) + delta, Ordering::Relaxed);
    });
    if counted.is_err() {
        counts().retired += delta;
    }
}

/// The number of buffers emitted code owns now (see [`COUNTS`]).
pub fn live_buffers() -> i64 {
    let counts = counts();
    counts.retired + counts.live.iter().map(|count| count.load(Ordering::Relaxed)).sum::<i64>()
}

/// The number of buffers this thread has handed to emitted code, less those it freed (tests
/// that must not see other threads' buffers).
#[cfg(test)]
pub(crate) fn thread_buffers() -> i64 {
    THREAD_COUNT.with(|count| count.0.load(Ordering::Relaxed))
}

/// Counts a buffer handed to emitted code.
fn handed_over() {
    count(1);
}

/// Allocates `layout` through Rust's global allocator; a zero size allocates nothing and gives
/// a dangling, aligned, non-null pointer. Out of memory aborts, as on the Rust path. Never
/// traps, so Rust code holding values may call it.
pub(crate) fn allocate(layout: Layout) -> *mut u8 {
    if layout.size() == 0 {
        return layout.align() as *mut u8;
    }
    // SAFETY: the layout has a non-zero size.
    let ptr = unsafe { alloc::alloc(layout) };
    if ptr.is_null() {
        alloc::handle_alloc_error(layout);
    }
    handed_over();
    ptr
}

/// Allocates `size` bytes aligned to `align` (a power of two) through Rust's global allocator.
/// `size == 0` allocates nothing and returns a dangling, aligned, non-null pointer. Out of
/// memory aborts, as on the Rust path.
#[unsafe(no_mangle)]
pub extern "C" fn nagi_rt_alloc(size: usize, align: usize) -> *mut u8 {
    allocate(layout(size, align))
}

/// Frees a buffer from [`nagi_rt_alloc`] / [`nagi_rt_grow`]. `size == 0` frees nothing.
///
/// # Safety
/// `ptr` must come from this allocator with exactly this `size` and `align`, and not be used
/// afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_free(ptr: *mut u8, size: usize, align: usize) {
    if size == 0 || ptr.is_null() {
        return;
    }
    count(-1);
    // SAFETY: the caller allocated `ptr` with this size and alignment, which `layout` accepted
    // then, so they need no second check (a string or a row is freed for every one made).
    unsafe { alloc::dealloc(ptr, Layout::from_size_align_unchecked(size, align)) }
}

/// Makes room for at least one more element in the array at `array` whose elements are
/// `elem_size` bytes aligned to `elem_align` ([`grow`]); a capacity that overflows traps.
///
/// # Safety
/// `array` must point to a valid [`RawArray`] of such elements.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_grow(array: *mut RawArray, elem_size: usize, elem_align: usize) {
    // SAFETY: the caller passes a valid, exclusively borrowed array.
    if let Err(message) = unsafe { grow(&mut *array, elem_size, elem_align) } {
        fail(message)
    }
}

/// The growth of every array buffer, emitted code's and the runtime's: the capacity doubles
/// (at least 4 elements, as Rust's `Vec` does for small elements) and the buffer is
/// reallocated, so the elements move with it, in place when the allocator can extend it (as a
/// `Vec` grows). Zero-sized elements get an unbounded capacity and a dangling pointer. A
/// capacity whose size overflows is an error, left to the caller to raise: emitted code traps,
/// the runtime's own decoders panic. Never traps itself.
///
/// # Safety
/// `array` is a valid [`RawArray`] of elements of `elem_size` bytes at `elem_align`, whose
/// buffer (when `cap` is not 0) came from this allocator.
pub(crate) unsafe fn grow(array: &mut RawArray, elem_size: usize, elem_align: usize) -> Result<(), String> {
    if elem_size == 0 {
        array.ptr = elem_align as *mut u8;
        array.cap = isize::MAX as usize;
        return Ok(());
    }
    let new_cap = array.cap.saturating_mul(2).max(array.len + 1).max(4);
    let new_layout = new_cap.checked_mul(elem_size).and_then(|size| Layout::from_size_align(size, elem_align).ok());
    let Some(new_layout) = new_layout else { return Err("cannot grow an array: capacity overflow".to_owned()) };
    let ptr = if array.cap == 0 {
        handed_over();
        // SAFETY: the layout has a non-zero size.
        unsafe { alloc::alloc(new_layout) }
    } else {
        // SAFETY: the buffer was allocated with the layout of `cap` elements, valid then, and the
        // new size is a valid layout's.
        let old = unsafe { Layout::from_size_align_unchecked(array.cap * elem_size, elem_align) };
        unsafe { alloc::realloc(array.ptr, old, new_layout.size()) }
    };
    if ptr.is_null() {
        alloc::handle_alloc_error(new_layout);
    }
    array.ptr = ptr;
    array.cap = new_cap;
    Ok(())
}

/// Moves a string's bytes into the emitted layout without copying. The buffer was allocated
/// by the global allocator with `cap` bytes at alignment 1, which is how emitted code frees it.
fn into_raw(bytes: Vec<u8>) -> RawString {
    if bytes.capacity() > 0 {
        handed_over();
    }
    let mut bytes = std::mem::ManuallyDrop::new(bytes);
    RawString { ptr: bytes.as_mut_ptr(), len: bytes.len(), cap: bytes.capacity() }
}

/// Writes a new string holding a copy of the `len` bytes at `ptr` into `out` (`clone`; emitted
/// code keeps a literal as its constant bytes, without a copy).
///
/// # Safety
/// `out` must be writable; `ptr` must point to `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_str_from(out: *mut RawString, ptr: *const u8, len: usize) {
    // SAFETY: the caller guarantees `len` bytes at `ptr`.
    let copy = unsafe { bytes(ptr, len) }.to_vec();
    // SAFETY: `out` is writable.
    unsafe { out.write(into_raw(copy)) }
}

/// One part of `nagi_rt_str_concat`: `len` bytes of UTF-8 at `ptr` (a string's buffer, or a
/// text the emitted code holds as a constant).
#[repr(C)]
pub struct TextPart {
    /// The first byte.
    pub ptr: *const u8,
    /// How many bytes.
    pub len: usize,
}

/// Writes the `n` parts at `parts`, one after the other, into `out` as one new string
/// (`str.concat`), as `ops::concat` does on the Rust path.
///
/// # Safety
/// `out` must be writable; `parts` must point to `n` parts, each `len` bytes of UTF-8.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_str_concat(out: *mut RawString, parts: *const TextPart, n: usize) {
    // SAFETY: the caller guarantees `n` parts at `parts` (none, and maybe no array, when 0).
    let parts = if n == 0 { &[] } else { unsafe { std::slice::from_raw_parts(parts, n) } };
    // SAFETY: each part is `len` bytes of UTF-8: a Nagi string's buffer or a text the emitter
    // wrote from one.
    let parts = parts.iter().map(|p| unsafe { std::str::from_utf8_unchecked(bytes(p.ptr, p.len)) });
    // SAFETY: `out` is writable.
    unsafe { out.write(into_raw(crate::ops::concat(parts).into_bytes())) }
}

/// Byte-wise equality of two strings: 1 or 0.
///
/// # Safety
/// `a` and `b` must be valid strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_str_eq(a: *const RawString, b: *const RawString) -> i32 {
    // SAFETY: `a` and `b` are valid strings whose buffers hold `len` bytes.
    let equal = unsafe { bytes((*a).ptr, (*a).len) == bytes((*b).ptr, (*b).len) };
    i32::from(equal)
}

/// Traps with the message at `ptr..ptr+len`: ends the program (status 101), or inside an HTTP
/// handler only the request (see [`guard`]).
///
/// # Safety
/// `ptr` must point to `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_trap(ptr: *const u8, len: usize) -> ! {
    // SAFETY: forwarded from the caller.
    fail(unsafe { text(ptr, len) }.into_owned())
}

/// Traps with the Rust path's index message
/// (`index out of range: the length is {len} but the index is {index}`), as [`nagi_rt_trap`].
#[unsafe(no_mangle)]
pub extern "C" fn nagi_rt_index_out_of_range(index: i64, len: usize) -> ! {
    fail(crate::ops::index_message(index, len))
}

/// Prints an `i32` and a newline.
#[unsafe(no_mangle)]
pub extern "C" fn nagi_rt_print_i32(v: i32) {
    crate::rt::print_i32(v);
}

/// Prints an `i64` and a newline.
#[unsafe(no_mangle)]
pub extern "C" fn nagi_rt_print_i64(v: i64) {
    crate::rt::print_i64(v);
}

/// Prints an `f64` as Rust's `{:?}` does, and a newline.
#[unsafe(no_mangle)]
pub extern "C" fn nagi_rt_print_f64(v: f64) {
    crate::rt::print_f64(v);
}

/// Prints `true` (for a non-zero `v`) or `false`, and a newline.
#[unsafe(no_mangle)]
pub extern "C" fn nagi_rt_print_bool(v: i32) {
    crate::rt::print_bool(v != 0);
}

/// Prints the string at `ptr..ptr+len` and a newline.
///
/// # Safety
/// `ptr` must point to `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_print_str(ptr: *const u8, len: usize) {
    // SAFETY: forwarded from the caller.
    crate::rt::print_str(&unsafe { text(ptr, len) });
}

/// `http.fail`: records the failure `status` with the message at `ptr..ptr+len`
/// ([`crate::failure`]).
///
/// # Safety
/// `ptr` must point to `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_http_fail(status: i64, ptr: *const u8, len: usize) {
    // SAFETY: forwarded from the caller.
    crate::failure::fail(status, &unsafe { text(ptr, len) });
}

/// `http.clear_failure` ([`crate::failure::clear`]).
#[unsafe(no_mangle)]
pub extern "C" fn nagi_rt_http_clear_failure() {
    crate::failure::clear();
}

/// `http.failure_status` ([`crate::failure::status`]).
#[unsafe(no_mangle)]
pub extern "C" fn nagi_rt_http_failure_status() -> i64 {
    i64::from(crate::failure::status())
}

/// `http.take_failure`: the recorded failure's message into `out` ([`crate::failure::take_message`]).
///
/// # Safety
/// `out` must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_http_take_failure(out: *mut RawString) {
    // SAFETY: `out` is writable.
    unsafe { out.write(into_raw(crate::failure::take_message().into_bytes())) }
}

/// `http.set_header`: sets the response header with the name at `name..name+name_len` to the
/// value at `value..value+value_len` ([`crate::http::set_header`]).
///
/// # Safety
/// Both pointers must point to their lengths of readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_http_set_header(name: *const u8, name_len: usize, value: *const u8, value_len: usize) {
    // SAFETY: forwarded from the caller.
    let (name, value) = unsafe { (text(name, name_len), text(value, value_len)) };
    // The message is made before `fail`, which may jump over this frame.
    if let Err(message) = crate::http::try_set_header(&name, &value) {
        drop((name, value));
        fail(message);
    }
}

/// `test.selected`: the index of the test a test build runs ([`crate::program::selected_test`]).
#[unsafe(no_mangle)]
pub extern "C" fn nagi_rt_test_selected() -> i64 {
    crate::program::selected_test()
}

/// `test.failed`: ends a test that failed with the recorded failure, as a trap.
#[unsafe(no_mangle)]
pub extern "C" fn nagi_rt_test_failed() {
    fail(crate::program::failed_test_message());
}

/// `test.assert_failed`: ends the test with the message at `ptr..ptr+len`, a trap.
///
/// # Safety
/// `ptr` must point to `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_test_assert_failed(ptr: *const u8, len: usize) {
    // SAFETY: forwarded from the caller.
    let message = unsafe { text(ptr, len) }.into_owned();
    fail(message);
}

/// Writes the decimal text of an `i32` into `out`.
///
/// # Safety
/// `out` must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_fmt_i32(out: *mut RawString, v: i32) {
    // SAFETY: `out` is writable.
    unsafe { out.write(into_raw(crate::rt::fmt_i32(v).into_bytes())) }
}

/// Writes the decimal text of an `i64` into `out`.
///
/// # Safety
/// `out` must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_fmt_i64(out: *mut RawString, v: i64) {
    // SAFETY: `out` is writable.
    unsafe { out.write(into_raw(crate::rt::fmt_i64(v).into_bytes())) }
}

/// Writes an `f64` as Rust's `{:?}` writes it into `out`.
///
/// # Safety
/// `out` must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_fmt_f64(out: *mut RawString, v: f64) {
    // SAFETY: `out` is writable.
    unsafe { out.write(into_raw(crate::rt::fmt_f64(v).into_bytes())) }
}

/// Writes `true` (for a non-zero `v`) or `false` into `out`.
///
/// # Safety
/// `out` must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_fmt_bool(out: *mut RawString, v: i32) {
    // SAFETY: `out` is writable.
    unsafe { out.write(into_raw(crate::rt::fmt_bool(v != 0).into_bytes())) }
}

/// The program entry: installs the runtime's panic hook (as `program::run_main` does), runs
/// Nagi's `main`, flushes stdout and returns the exit status (0; a trap exits with 101 before
/// `main` returns). The emitted C `main` returns what this returns.
#[unsafe(no_mangle)]
pub extern "C" fn nagi_rt_main(main: extern "C" fn()) -> i32 {
    install_hook(HookMode::Program);
    crate::configuration::bind_or_exit();
    main();
    crate::rt::flush_stdout();
    0
}

/// The `len` items at `ptr` (none for `len == 0`).
///
/// # Safety
/// For `len > 0`, `ptr` points to `len` items that live for `'a`.
pub(crate) unsafe fn items<'a, T>(ptr: *const T, len: usize) -> &'a [T] {
    if len == 0 {
        &[]
    } else {
        // SAFETY: forwarded from the caller.
        unsafe { std::slice::from_raw_parts(ptr, len) }
    }
}

/// The text of a descriptor: program constants are UTF-8 (names and SQL that the compiler
/// wrote), so the lossy conversion borrows in practice; a bad byte is replaced (and that one
/// string leaked) rather than failing the start.
///
/// # Safety
/// `ptr` points to `len` bytes that live for the rest of the process.
pub(crate) unsafe fn static_text(ptr: *const u8, len: usize) -> &'static str {
    // SAFETY: forwarded from the caller.
    match String::from_utf8_lossy(unsafe { bytes(ptr, len) }) {
        std::borrow::Cow::Borrowed(text) => text,
        std::borrow::Cow::Owned(text) => Box::leak(text.into_boxed_str()),
    }
}

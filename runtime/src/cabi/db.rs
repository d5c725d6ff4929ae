//! The database from LLVM code: statement arguments, and statements run as pending operations
//! that a handler frame polls.
//!
//! Each operation is the Rust path's own future (`db::exec`, `db::query`/`query_one` by a
//! descriptor, `db::begin`/`commit`/`rollback`), boxed behind a pointer, so the request context,
//! the transaction per request, the busy budget and the error mapping are shared. Emitted code
//! makes an operation, polls it with [`nagi_rt_op_poll`] (passing on the `cx` its own poll was
//! given) until it is ready, then takes its result with [`nagi_rt_op_finish`], or drops it
//! unfinished with [`nagi_rt_op_drop`] when its frame is dropped. A failed statement fails like a
//! trap: the same `HttpError` the Rust path raises (409, 500, 503) becomes the request's answer.
//!
//! Rows are decoded on the database thread straight into the emitted layout by the Rust path's
//! `Row` accessors (`rows.rs`), and handed over without a copy.

use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::ptr;
use std::task::{Context, Poll};

mod rows;

use nagi_abi::poll;

use super::guard::fail;
use super::json::TypeDesc;
use super::tasks::FrameResult;
use crate::db::{self, SqlValue};
use crate::shaped_json::Kind;
use rows::LayoutRows;

/// A statement's argument list, filled by emitted code and consumed by the statement.
pub struct SqlArgs(Vec<SqlValue>);

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
    /// A query's rows, and the descriptor of what [`nagi_rt_op_finish`] writes: the class (an
    /// array of it) or an option of the class (the first row).
    Rows { rows: Box<LayoutRows>, desc: &'static TypeDesc },
    /// `begin`, `commit`, `rollback`, the end of a scope, a sleep.
    Done,
    /// A joined task: its returned frame, whose result is moved out (`cabi::tasks`).
    Frame(FrameResult),
    /// A result that writes itself out (an actor's reply, `cabi::actors`).
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

/// A new pending operation that gives a joined task's frame, whose finish moves the result out.
pub(super) fn pending_frame(future: impl Future<Output = FrameResult> + Send + 'static) -> *mut PendingOp {
    pending(async move { Outcome::Frame(future.await) })
}

/// A new pending operation whose result writes itself out.
pub(super) fn pending_write<W: WriteOut + 'static>(future: impl Future<Output = W> + Send + 'static) -> *mut PendingOp {
    pending(async move { Outcome::Written(Box::new(future.await)) })
}

/// A new, empty argument list.
#[unsafe(no_mangle)]
pub extern "C" fn nagi_rt_sql_args() -> *mut SqlArgs {
    Box::into_raw(Box::new(SqlArgs(Vec::new())))
}

/// Appends a value to an argument list.
///
/// # Safety
/// `args` comes from [`nagi_rt_sql_args`] and is not consumed yet.
unsafe fn push(args: *mut SqlArgs, value: SqlValue) {
    // SAFETY: forwarded from the caller.
    unsafe { (*args).0.push(value) }
}

/// Appends an INTEGER (`i32`, `i64`, and `bool` as 0 or 1).
///
/// # Safety
/// `args` comes from [`nagi_rt_sql_args`] and is not consumed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_sql_arg_int(args: *mut SqlArgs, v: i64) {
    // SAFETY: forwarded from the caller.
    unsafe { push(args, SqlValue::Integer(v)) }
}

/// Appends a REAL.
///
/// # Safety
/// `args` comes from [`nagi_rt_sql_args`] and is not consumed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_sql_arg_real(args: *mut SqlArgs, v: f64) {
    // SAFETY: forwarded from the caller.
    unsafe { push(args, SqlValue::Real(v)) }
}

/// Appends a TEXT: a copy of the `len` bytes at `ptr`.
///
/// # Safety
/// `args` comes from [`nagi_rt_sql_args`] and is not consumed yet; `ptr` points to `len`
/// readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_sql_arg_text(args: *mut SqlArgs, ptr: *const u8, len: usize) {
    // SAFETY: forwarded from the caller.
    unsafe { push(args, SqlValue::Text(super::text(ptr, len).into_owned())) }
}

/// Appends a NULL (an option's `none`).
///
/// # Safety
/// `args` comes from [`nagi_rt_sql_args`] and is not consumed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_sql_arg_null(args: *mut SqlArgs) {
    // SAFETY: forwarded from the caller.
    unsafe { push(args, SqlValue::Null) }
}

/// The SQL text and the arguments of a statement, the arguments consumed.
///
/// # Safety
/// `sql` points to `len` readable bytes; `args` comes from [`nagi_rt_sql_args`] and is not
/// consumed yet.
unsafe fn statement(sql: *const u8, len: usize, args: *mut SqlArgs) -> (String, Vec<SqlValue>) {
    // SAFETY: forwarded from the caller.
    unsafe { (super::text(sql, len).into_owned(), Box::from_raw(args).0) }
}

/// Starts `db::exec`: a statement that returns no rows, with `args` (consumed). Its result is
/// the number of changed rows, an `i64`.
///
/// # Safety
/// `sql` points to `sql_len` readable bytes; `args` comes from [`nagi_rt_sql_args`] and is not
/// consumed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_db_exec(sql: *const u8, sql_len: usize, args: *mut SqlArgs) -> *mut PendingOp {
    // SAFETY: forwarded from the caller.
    let (sql, args) = unsafe { statement(sql, sql_len, args) };
    pending(async move { Outcome::Changed(db::exec(&sql, args).await) })
}

/// Starts `db::exec_commit` (a request's last statement, committing its transaction with it)
/// with `args` (consumed). Answers as [`nagi_rt_db_exec`].
///
/// # Safety
/// As [`nagi_rt_db_exec`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_db_exec_commit(sql: *const u8, sql_len: usize, args: *mut SqlArgs) -> *mut PendingOp {
    // SAFETY: forwarded from the caller.
    let (sql, args) = unsafe { statement(sql, sql_len, args) };
    pending(async move { Outcome::Changed(db::exec_commit(&sql, args).await) })
}

/// Starts `db::query` (`one == 0`) or `db::query_one` (`one == 1`) with `args` (consumed),
/// decoding rows into a class. `row` describes the result: the class itself for a query (its
/// result is `[C]`), `Option<C>` for `query_one` (its result is `C?`). A descriptor of another
/// kind traps.
///
/// # Safety
/// `sql` points to `sql_len` readable bytes; `args` comes from [`nagi_rt_sql_args`] and is not
/// consumed yet; `row` is a descriptor constant.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_db_query(
    sql: *const u8,
    sql_len: usize,
    args: *mut SqlArgs,
    row: *const TypeDesc,
    one: i32,
) -> *mut PendingOp {
    // SAFETY: the emitter passes one of its descriptor constants, which live for the process.
    let desc: &'static TypeDesc = unsafe { &*row };
    let one = one != 0;
    // The descriptor is checked before anything is owned here: `fail` may jump over this frame.
    let class: &'static TypeDesc = match (one, desc.kind()) {
        (false, Kind::Class) => desc,
        (true, Kind::Option) if desc.inner().kind() == Kind::Class => desc.inner(),
        (_, kind) => fail(format!(
            "a query's rows need the descriptor of a class (or of its option for query_one), not of {kind:?}"
        )),
    };
    // SAFETY: forwarded from the caller.
    let (sql, args) = unsafe { statement(sql, sql_len, args) };
    query_rows(sql, args, class, desc, one)
}

/// Starts a query whose rows decode into `class`; `desc` is what [`nagi_rt_op_finish`] writes
/// (`[C]`, or `C?` for `one`). Shared with the queries the runtime makes itself
/// (`cabi::queues`).
pub(super) fn query_rows(
    sql: String,
    args: Vec<SqlValue>,
    class: &'static TypeDesc,
    desc: &'static TypeDesc,
    one: bool,
) -> *mut PendingOp {
    let key = ptr::from_ref(class) as usize;
    pending(async move {
        let sink = Box::new(LayoutRows::new(class, key, one));
        match db::run_query(&sql, args, sink).await.downcast::<LayoutRows>() {
            Ok(rows) => Outcome::Rows { rows, desc },
            Err(_) => unreachable!("the database thread returns the sink it was given"),
        }
    })
}

/// Starts `db::begin`: an explicit transaction (a savepoint inside a request).
#[unsafe(no_mangle)]
pub extern "C" fn nagi_rt_db_begin() -> *mut PendingOp {
    pending(async {
        db::begin().await;
        Outcome::Done
    })
}

/// Starts `db::commit`.
#[unsafe(no_mangle)]
pub extern "C" fn nagi_rt_db_commit() -> *mut PendingOp {
    pending(async {
        db::commit().await;
        Outcome::Done
    })
}

/// Starts `db::rollback`.
#[unsafe(no_mangle)]
pub extern "C" fn nagi_rt_db_rollback() -> *mut PendingOp {
    pending(async {
        db::rollback().await;
        Outcome::Done
    })
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
    // SAFETY (each arm): `out` is writable for the result, laid out as documented.
    match outcome {
        Outcome::Changed(changed) => unsafe { out.cast::<i64>().write(changed) },
        Outcome::Rows { mut rows, desc } if desc.kind() == Kind::Option => unsafe {
            // The first row (if any) moves into the option's payload; the buffer is freed.
            let taken = rows.take();
            std::ptr::write_bytes(out, 0, desc.size);
            if taken.len > 0 {
                out.write(1);
                std::ptr::copy_nonoverlapping(taken.ptr, out.add(desc.payload_offset), desc.inner().size);
            }
            if taken.cap > 0 {
                super::nagi_rt_free(taken.ptr, taken.cap * desc.inner().size, desc.inner().align);
            }
        },
        Outcome::Rows { mut rows, .. } => unsafe { out.cast::<super::RawArray>().write(rows.take()) },
        Outcome::Done => {}
        // SAFETY: forwarded from the caller.
        Outcome::Frame(frame) => unsafe { frame.write_to(out) },
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

#[cfg(test)]
mod tests;

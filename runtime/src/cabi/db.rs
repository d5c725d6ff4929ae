//! The database from LLVM code: statement arguments, and statements run as pending operations
//! that a handler frame polls.
//!
//! Each operation is the Rust path's own future (`db::exec`, `db::query`/`query_one` by a
//! descriptor, `db::begin`/`commit`/`rollback`), boxed behind a pointer, so the request context,
//! the transaction per request, the busy budget and the error mapping are shared. Emitted code
//! makes an operation and polls it as any pending operation ([`super::pending`]). A failed
//! statement fails like a trap: the same `HttpError` the Rust path raises (409, 500, 503)
//! becomes the request's answer.
//!
//! Rows are decoded on the database thread straight into the emitted layout by the Rust path's
//! `Row` accessors (`rows.rs`), and handed over without a copy.

use std::ptr;

mod rows;

use super::guard::fail;
use super::json::TypeDesc;
use super::pending::{PendingOp, WriteOut, pending};
use crate::db::{self, SqlValue};
use crate::shaped_json::Kind;
use rows::LayoutRows;
pub use rows::rows_in_layout;

/// A statement's argument list, filled by emitted code and consumed by the statement. Emitted
/// code keeps it in a slot of [`nagi_abi::SQL_ARGS_SIZE`] bytes on its own stack (it is consumed
/// before the function awaits), so a statement allocates only the list's buffer, as on the Rust
/// path.
pub struct SqlArgs(Vec<SqlValue>);

const _: () = assert!(
    size_of::<SqlArgs>() == nagi_abi::SQL_ARGS_SIZE as usize && align_of::<SqlArgs>() == 8,
    "nagi_abi::SQL_ARGS_SIZE is the size of the argument list emitted code makes room for"
);

/// Makes an empty argument list at `args`, with room for `capacity` arguments (the statement's
/// count of `?` arguments, so that pushing them allocates once).
///
/// # Safety
/// `args` is writable for [`nagi_abi::SQL_ARGS_SIZE`] bytes aligned to 8 and holds no list.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_sql_args(args: *mut SqlArgs, capacity: i64) {
    let capacity = usize::try_from(capacity).unwrap_or(0);
    // SAFETY: forwarded from the caller.
    unsafe { args.write(SqlArgs(Vec::with_capacity(capacity))) }
}

/// Appends a value to an argument list.
///
/// # Safety
/// `args` was made by [`nagi_rt_sql_args`] and is not consumed yet.
unsafe fn push(args: *mut SqlArgs, value: SqlValue) {
    // SAFETY: forwarded from the caller.
    unsafe { (*args).0.push(value) }
}

/// Appends an INTEGER (`i32`, `i64`, and `bool` as 0 or 1).
///
/// # Safety
/// `args` was made by [`nagi_rt_sql_args`] and is not consumed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_sql_arg_int(args: *mut SqlArgs, v: i64) {
    // SAFETY: forwarded from the caller.
    unsafe { push(args, SqlValue::Integer(v)) }
}

/// Appends a `Time` (microseconds) as its fixed-width RFC 3339 TEXT, as the Rust path binds it.
///
/// # Safety
/// `args` was made by [`nagi_rt_sql_args`] and is not consumed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_sql_arg_time(args: *mut SqlArgs, micros: i64) {
    // SAFETY: forwarded from the caller.
    unsafe { push(args, SqlValue::Text(crate::time::format_time(micros))) }
}

/// Appends a `Uuid` (its 16 bytes at `bytes`) as its canonical TEXT, as the Rust path binds it.
///
/// # Safety
/// `args` was made by [`nagi_rt_sql_args`] and is not consumed yet; `bytes` points to 16 bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_sql_arg_uuid(args: *mut SqlArgs, bytes: *const [u8; 16]) {
    // SAFETY: forwarded from the caller.
    unsafe { push(args, SqlValue::Text(crate::ids::format(bytes.read_unaligned()))) }
}

/// Appends a REAL.
///
/// # Safety
/// `args` was made by [`nagi_rt_sql_args`] and is not consumed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_sql_arg_real(args: *mut SqlArgs, v: f64) {
    // SAFETY: forwarded from the caller.
    unsafe { push(args, SqlValue::Real(v)) }
}

/// Appends a TEXT: a copy of the `len` bytes at `ptr`.
///
/// # Safety
/// `args` was made by [`nagi_rt_sql_args`] and is not consumed yet; `ptr` points to `len`
/// readable bytes of UTF-8 (a string of emitted code).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_sql_arg_text(args: *mut SqlArgs, ptr: *const u8, len: usize) {
    // SAFETY: forwarded from the caller.
    unsafe { push(args, SqlValue::Text(super::text_unchecked(ptr, len).to_owned())) }
}

/// Appends a NULL (an option's `none`).
///
/// # Safety
/// `args` was made by [`nagi_rt_sql_args`] and is not consumed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_sql_arg_null(args: *mut SqlArgs) {
    // SAFETY: forwarded from the caller.
    unsafe { push(args, SqlValue::Null) }
}

/// The SQL text and the arguments of a statement, the arguments consumed.
///
/// # Safety
/// `sql` points to `len` readable bytes of UTF-8; `args` was made by [`nagi_rt_sql_args`] and is
/// not consumed yet.
unsafe fn statement(sql: *const u8, len: usize, args: *mut SqlArgs) -> (String, Vec<SqlValue>) {
    // The SQL is a string of emitted code, UTF-8 by construction (a checked literal): copied for
    // the database thread, not validated again on every execution (it was 850 instructions of
    // `GET /users/1`'s 47,000 on the LLVM path).
    // SAFETY: forwarded from the caller.
    unsafe { (super::text_unchecked(sql, len).to_owned(), args.read().0) }
}

/// Starts `db::exec`: a statement that returns no rows, with `args` (consumed). Its result is
/// the number of changed rows, an `i64`.
///
/// # Safety
/// `sql` points to `sql_len` readable bytes of UTF-8; `args` was made by [`nagi_rt_sql_args`] and is not
/// consumed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_db_exec(sql: *const u8, sql_len: usize, args: *mut SqlArgs) -> *mut PendingOp {
    // SAFETY: forwarded from the caller.
    let (sql, args) = unsafe { statement(sql, sql_len, args) };
    pending(db::exec_owned(sql, args, false))
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
    pending(db::exec_owned(sql, args, true))
}

/// Starts `db::query` (`one == 0`) or `db::query_one` (`one == 1`) with `args` (consumed),
/// decoding rows into a class. `row` describes the result: the class itself for a query (its
/// result is `[C]`), `Option<C>` for `query_one` (its result is `C?`). A descriptor of another
/// kind traps.
///
/// # Safety
/// `sql` points to `sql_len` readable bytes of UTF-8; `args` was made by [`nagi_rt_sql_args`] and is not
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
        match db::run_query(sql.into(), args, sink).await.downcast::<LayoutRows>() {
            Ok(rows) => QueryRows { rows, desc },
            Err(_) => unreachable!("the database thread returns the sink it was given"),
        }
    })
}

/// Starts `db::begin`: an explicit transaction (a savepoint inside a request).
#[unsafe(no_mangle)]
pub extern "C" fn nagi_rt_db_begin() -> *mut PendingOp {
    pending(db::begin())
}

/// Starts `db::commit`.
#[unsafe(no_mangle)]
pub extern "C" fn nagi_rt_db_commit() -> *mut PendingOp {
    pending(db::commit())
}

/// Starts `db::rollback`.
#[unsafe(no_mangle)]
pub extern "C" fn nagi_rt_db_rollback() -> *mut PendingOp {
    pending(db::rollback())
}

/// A query's rows, and the descriptor of what the operation's finish writes: the class (an
/// array of it) or an option of the class (the first row).
struct QueryRows {
    rows: Box<LayoutRows>,
    desc: &'static TypeDesc,
}

impl WriteOut for QueryRows {
    unsafe fn write_to(self, out: *mut u8) {
        let QueryRows { mut rows, desc } = self;
        // SAFETY (both arms): `out` is writable for the result, laid out as `desc` says.
        if desc.kind() == Kind::Option {
            unsafe {
                // The first row (if any) moves into the option's payload; the rest is freed with
                // the rows.
                std::ptr::write_bytes(out, 0, desc.size);
                if rows.take_first(out.add(desc.payload_offset)) {
                    out.write(1);
                }
            }
        } else {
            unsafe { out.cast::<super::RawArray>().write(rows.take()) }
        }
    }
}

#[cfg(test)]
mod tests;

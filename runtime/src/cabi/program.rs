//! A program of the LLVM path whose `main` is async (a test build whose tests use the
//! database): the descriptor its C `main` hands to [`nagi_rt_main_async`], and the future that
//! drives `main`'s frame.
//!
//! The runtime opens the same database as the Rust path's
//! [`crate::program::run_main_with_database`] (the program's tables in a fresh in-memory
//! SQLite) and polls the frame of `main` on this thread under a single-threaded Tokio runtime.
//! The poll is not guarded: a trap in `main` ends the process as in any program (stdout
//! flushed, `error: <message>`, status 101), which is what the Rust path does too. A failed
//! statement (the frame's poll answers 2) has been reported by the panic hook when it was
//! raised; the frame is dropped and the program exits with 101.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::frame::{Frame, FrameFn, PollFn, Polled};
use super::service::TableDesc;
use super::{items, static_text};
use crate::panic_hook::{HookMode, install_hook};

/// `new` of `main`'s frame: a fresh frame, nothing run yet.
pub type NewFn = unsafe extern "C" fn() -> *mut u8;

/// A program whose `main` is async: `{ %nagi.TableDesc* tables, i64 table_count, new, poll,
/// drop, free }`, the frame functions being those of `main` (docs/c-abi.md, "Async functions").
#[repr(C)]
pub struct ProgramDesc {
    /// The tables, created at start.
    pub tables: *const TableDesc,
    /// How many tables `tables` points to.
    pub table_count: usize,
    /// Makes `main`'s frame.
    pub new: NewFn,
    /// Runs the frame until it waits (0), returns (1), or what it awaits failed (2).
    pub poll: PollFn,
    /// Drops and frees a frame that has not returned.
    pub drop: FrameFn,
    /// Frees a frame that has returned (`main`'s result is `unit`: there is nothing to drop).
    pub free: FrameFn,
}

/// The future of `main`'s frame: `true` when `main` returned, `false` when a statement failed
/// (the hook reported the failure when it was raised).
struct MainFuture {
    desc: &'static ProgramDesc,
    frame: Frame,
}

impl Future for MainFuture {
    type Output = bool;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<bool> {
        let this = self.get_mut();
        match this.frame.poll(cx) {
            Polled::Pending => Poll::Pending,
            Polled::Returned(frame) => {
                // SAFETY: the frame has returned (`main`'s result is `unit`: nothing to drop)
                // and is freed exactly once, here.
                unsafe { (this.desc.free)(frame) };
                Poll::Ready(true)
            }
            Polled::Failed(_) => Poll::Ready(false),
        }
    }
}

/// The entry of a program whose `main` is async: opens the program's database, runs `main`'s
/// frame to its end and exits the process, as `program::run_main_with_database` does on the
/// Rust path (status 0; 101 after a trap or a failed statement; 1 when the database cannot be
/// opened). The emitted C `main` returns what this returns; it never returns.
///
/// # Safety
/// `program` points to a [`ProgramDesc`] constant of the program, whose tables are descriptors
/// as `service::to_service` requires and whose functions follow the frame protocol.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_main_async(program: *const ProgramDesc) -> i32 {
    // SAFETY: the emitter passes its program descriptor, a constant of the program.
    let desc: &'static ProgramDesc = unsafe { &*program };
    install_hook(HookMode::Program);
    crate::configuration::bind_or_exit();
    // SAFETY: the caller vouches for the table descriptors.
    let tables: Vec<&'static str> = unsafe { items(desc.tables, desc.table_count) }
        .iter()
        // SAFETY: as above.
        .map(|t| unsafe { static_text(t.create_sql, t.create_sql_len) })
        .collect();
    let (runtime, database) = crate::program::open_database(&tables);
    // SAFETY: `new` makes a fresh frame of `main`, which takes no arguments.
    let frame = unsafe { (desc.new)() };
    let returned = runtime.block_on(MainFuture { desc, frame: Frame::new(frame, desc.poll, desc.drop, None) });
    crate::program::finish_with_database(returned, runtime, database)
}

//! Scopes and tasks on the LLVM path: Low's `scope.new`, `scope.spawn`, `task.join` and
//! `scope.end` over emitted frames, with the rules of [`crate::tasks`], which the Rust path
//! uses too.
//!
//! A spawned task is the frame of an async function (`nagi.new.f(args)`), driven by a future
//! ([`FrameTask`]) that polls it through the emitted `guarded_poll`, so a trap in the task comes
//! back to that poll instead of ending the process: the future then raises the trap's payload
//! as a panic, which the scope records as its failure (the trapped frame is leaked, as a trapped
//! request's frame is). The task's result stays in its frame until the parent joins it: the join
//! is a pending operation (`cabi::pending::PendingOp`) whose finish copies the result out of the
//! frame and frees the frame. A task cancelled by its scope is dropped with the frame's `drop`,
//! which drops what the frame holds at its await; a finished task whose handle was dropped is
//! given to `finish`, which drops its result.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use nagi_abi::poll;

use super::frame::{Frame, FrameFn, GuardedPollFn, PollFn, Polled};
use super::guard;
use super::pending::{PendingOp, WriteOut, pending};
use crate::defers::{Defer, Payload};
use crate::tasks::{Scope, Task};

/// What the runtime needs of a spawned function, one constant per function the program spawns:
/// `{ poll, drop, finish, free, guarded_poll, i64 result_offset, i64 result_size }`.
#[repr(C)]
pub struct TaskDesc {
    /// The frame's `poll`, only ever passed to `guarded_poll`.
    pub poll: PollFn,
    /// Drops what a frame that has not returned holds, and frees it.
    pub drop: FrameFn,
    /// Drops the result of a frame that has returned, and frees it.
    pub finish: FrameFn,
    /// Frees a frame that has returned, once its result has been moved out.
    pub free: FrameFn,
    /// The module's `guarded_poll`.
    pub guarded_poll: GuardedPollFn,
    /// Where the result is in the frame, in bytes.
    pub result_offset: usize,
    /// The result's size in bytes.
    pub result_size: usize,
}

/// The frame of a task that has returned; its result is still in it. Dropping it drops the
/// result (nobody joined the task).
pub struct FrameResult {
    frame: *mut u8,
    desc: &'static TaskDesc,
}

// SAFETY: a returned frame is plain memory owned by this value alone; emitted frames hold
// nothing tied to a thread (docs/c-abi.md, "The frame protocol").
unsafe impl Send for FrameResult {}

// A joined task's result is written out by the join's finish.
impl WriteOut for FrameResult {
    /// Moves the result to `out` and frees the frame.
    unsafe fn write_to(self, out: *mut u8) {
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: the frame has returned, so its result is initialized at `result_offset`; the
        // caller vouches for `out`; the frame is freed once, here, and `this` is not dropped.
        unsafe {
            if this.desc.result_size > 0 {
                std::ptr::copy_nonoverlapping(this.frame.add(this.desc.result_offset), out, this.desc.result_size);
            }
            (this.desc.free)(this.frame);
        }
    }
}

impl Drop for FrameResult {
    fn drop(&mut self) {
        // SAFETY: the frame has returned and its result was not moved out; `finish` drops the
        // result and frees the frame, once.
        unsafe { (self.desc.finish)(self.frame) }
    }
}

/// The future of a spawned frame.
struct FrameTask {
    frame: Frame,
    desc: &'static TaskDesc,
}

impl Future for FrameTask {
    type Output = FrameResult;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<FrameResult> {
        let this = self.get_mut();
        match this.frame.poll(cx) {
            Polled::Pending => Poll::Pending,
            Polled::Returned(frame) => Poll::Ready(FrameResult { frame, desc: this.desc }),
            Polled::Failed(payload) => std::panic::resume_unwind(guard::reason(payload, "a task")),
        }
    }
}

/// `scope.new`: a new scope, owned by emitted code until [`nagi_rt_scope_end`] or
/// [`nagi_rt_scope_drop`].
#[unsafe(no_mangle)]
pub extern "C" fn nagi_rt_scope_new() -> *mut Scope {
    Box::into_raw(Box::new(Scope::new()))
}

/// Drops a scope that was not ended (its frame was dropped): cancels its tasks.
///
/// # Safety
/// `scope` comes from [`nagi_rt_scope_new`] and is neither ended nor dropped.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_scope_drop(scope: *mut Scope) {
    // SAFETY: forwarded from the caller; the box is not used after this.
    drop(unsafe { Box::from_raw(scope) });
}

/// `scope.end` (consumes `scope`): an operation that is ready once every task of the scope has
/// finished, and fails with the first trap of a task after cancelling the others.
///
/// # Safety
/// `scope` comes from [`nagi_rt_scope_new`] and is neither ended nor dropped.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_scope_end(scope: *mut Scope) -> *mut PendingOp {
    // SAFETY: forwarded from the caller.
    let scope = unsafe { Box::from_raw(scope) };
    pending(scope.end())
}

/// `scope.spawn`: starts the frame `frame` (from `nagi.new.f`) as a task of `scope`, described
/// by `desc`; gives its handle.
///
/// # Safety
/// `scope` is a live scope; `frame` is a fresh frame of the function `desc` describes, which
/// this takes; `desc` is a constant of the program. Called inside the Tokio runtime.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_task_spawn(
    scope: *mut Scope,
    frame: *mut u8,
    desc: *const TaskDesc,
) -> *mut Task<FrameResult> {
    // SAFETY: forwarded from the caller.
    let (scope, desc) = unsafe { (&*scope, &*desc) };
    Box::into_raw(Box::new(
        scope.spawn(FrameTask { frame: Frame::new(frame, desc.poll, desc.drop, Some(desc.guarded_poll)), desc }),
    ))
}

/// A blocking task's block that has not run: dropping it (its task was cancelled before a
/// thread of the pool took it) drops the arguments and frees the block.
struct Unrun {
    block: *mut u8,
    desc: &'static TaskDesc,
}

// SAFETY: as for `FrameResult`: the block is plain memory owned by this value alone.
unsafe impl Send for Unrun {}

impl Drop for Unrun {
    fn drop(&mut self) {
        // SAFETY: the block holds the arguments, not moved out; dropped and freed once, here.
        unsafe { (self.desc.drop)(self.block) };
    }
}

/// `scope.spawn_blocking`: runs the plain function `desc` describes on the blocking pool, as a
/// task of `scope`, with the arguments in `block` (from `nagi_rt_alloc`, which this takes); gives
/// its handle, joined as any task's.
///
/// # Safety
/// `scope` is a live scope; `block` holds the arguments of the function `desc` describes;
/// `desc` is a constant of the program. Called inside the Tokio runtime.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_task_spawn_blocking(
    scope: *mut Scope,
    block: *mut u8,
    desc: *const TaskDesc,
) -> *mut Task<FrameResult> {
    // SAFETY: forwarded from the caller.
    let (scope, desc): (&Scope, &'static TaskDesc) = unsafe { (&*scope, &*desc) };
    let unrun = Unrun { block, desc };
    let task = scope.spawn_blocking(move || match run_block(unrun) {
        Ok(result) => result,
        Err(payload) => std::panic::resume_unwind(payload),
    });
    Box::into_raw(Box::new(task))
}

/// Runs the plain function of a filled block (a blocking task's, a deferred call's) once, under
/// the module's `guarded_poll`: its returned block, or the payload of its trap (the block then
/// leaks with what the function held when it trapped).
fn run_block(unrun: Unrun) -> Result<FrameResult, Payload> {
    let unrun = std::mem::ManuallyDrop::new(unrun);
    // SAFETY: `poll` is the descriptor's run thunk, given its own filled block; it ignores its
    // second argument. `guarded_poll` is the module's.
    let answer = unsafe { (unrun.desc.guarded_poll)(unrun.desc.poll, unrun.block, std::ptr::null_mut()) };
    if answer != poll::READY {
        return Err(guard::reason(guard::take_failure(), "a call"));
    }
    Ok(FrameResult { frame: unrun.block, desc: unrun.desc })
}

/// `defer.new`: a deferred call of the plain function `desc` describes (its blocking-task
/// descriptor), with the arguments in `block` (from `nagi_rt_alloc`, which this takes). The
/// call's result is dropped when it returns.
///
/// # Safety
/// `block` holds the arguments of the function `desc` describes; `desc` is a constant of the
/// program.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_defer_new(block: *mut u8, desc: *const TaskDesc) -> *mut Defer {
    // SAFETY: forwarded from the caller.
    let desc: &'static TaskDesc = unsafe { &*desc };
    let unrun = Unrun { block, desc };
    Box::into_raw(Box::new(Defer::guarded(move || run_block(unrun).map(drop))))
}

/// The drop glue of a `Defer`: makes its call as `crate::defers` rules, and fails at this drop
/// with a trap of the call.
///
/// # Safety
/// `defer` comes from [`nagi_rt_defer_new`] and is dropped once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_defer_drop(defer: *mut Defer) {
    // SAFETY: forwarded from the caller; the box is freed here.
    let mut defer = unsafe { Box::from_raw(defer) };
    let failure = defer.run();
    drop(defer);
    if let Some(payload) = failure {
        guard::fail_with(payload)
    }
}

/// `task.join` (consumes `task`): an operation whose finish writes the task's result; it fails
/// with the first trap of a task of the scope after cancelling the others.
///
/// # Safety
/// `task` comes from [`nagi_rt_task_spawn`] and is neither joined nor dropped.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_task_join(task: *mut Task<FrameResult>) -> *mut PendingOp {
    // SAFETY: forwarded from the caller.
    let task = unsafe { Box::from_raw(task) };
    pending(task.join())
}

/// Drops a task handle that was not joined: the task keeps running, and its scope waits for it.
///
/// # Safety
/// `task` comes from [`nagi_rt_task_spawn`] and is neither joined nor dropped.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_task_drop(task: *mut Task<FrameResult>) {
    // SAFETY: forwarded from the caller.
    drop(unsafe { Box::from_raw(task) });
}

/// `time.sleep`: an operation that is ready after `ms` milliseconds.
#[unsafe(no_mangle)]
pub extern "C" fn nagi_rt_time_sleep(ms: i64) -> *mut PendingOp {
    pending(crate::rt::sleep(ms))
}

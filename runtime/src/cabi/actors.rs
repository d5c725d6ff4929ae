//! Actors on the LLVM path: Low's `actor.start`, `actor.call` and `actor.send` over emitted
//! state and message blocks, with the rules of [`crate::actors`], which the Rust path uses too.
//!
//! An actor's state is a block of the state class's size that the emitted `init` (described by
//! an [`ActorDesc`]) writes; the actor owns it and drops it with the descriptor's `drop` when it
//! stops. A message is a block `{ arguments…, result }` of one handler (described by a
//! [`HandlerDesc`]) that emitted code fills with the arguments; the actor runs the emitted `run`
//! on it and the state, which calls the handler and writes its result into the block, and the
//! caller's pending operation moves the result out as `Option<R>`. Both run under the module's
//! `guarded_poll`, so a trap comes back here instead of ending the process: it crashes the actor
//! as a trap in a Rust handler does. What a trapped handler or `init` held is leaked, the state
//! with it, as a trapped frame's values are (docs/c-abi.md, "What leaks on a trap").

use std::ptr;

use nagi_abi::poll;

use super::frame::{FrameFn, GuardedPollFn, PollFn};
use super::guard;
use super::pending::{PendingOp, WriteOut, pending};
use crate::actors::Actor;

/// The alignment of every state and message block: enough for any Low type.
const BLOCK_ALIGN: usize = 16;

/// What the runtime needs to make and drop the state of one actor class, one constant per
/// `init` function the program starts actors with: `{ init, drop, guarded_poll, i64 size, i8*
/// name, i64 name_len }`.
#[repr(C)]
pub struct ActorDesc {
    /// `init(block, null)`: makes the state and writes it into `block`; answers 1.
    pub init: PollFn,
    /// Drops the state in a block (the block itself is the runtime's to free).
    pub drop: FrameFn,
    /// The module's `guarded_poll`.
    pub guarded_poll: GuardedPollFn,
    /// The state's size in bytes.
    pub size: usize,
    /// The actor's name (its state class's), for failures and logs: UTF-8, not NUL-terminated.
    pub name: *const u8,
    /// The name's length in bytes.
    pub name_len: usize,
}

// SAFETY: a descriptor is an immutable constant of the program; its pointers are to code and
// to constant bytes.
unsafe impl Sync for ActorDesc {}

/// What the runtime needs to run the messages of one handler, one constant per handler the
/// program calls or sends to: `{ run, drop_args, drop_result, guarded_poll, i64 size, i64
/// result_offset, i64 result_size, i64 option_size, i64 payload_offset }`.
#[repr(C)]
pub struct HandlerDesc {
    /// `run(message, state)`: calls the handler on the state with the message's arguments
    /// (moving them out) and writes its result into the message; answers 1.
    pub run: PollFn,
    /// Drops the arguments of a message that never ran.
    pub drop_args: FrameFn,
    /// Drops the result of a message that ran.
    pub drop_result: FrameFn,
    /// The module's `guarded_poll`.
    pub guarded_poll: GuardedPollFn,
    /// The message block's size in bytes.
    pub size: usize,
    /// Where the result is in the block, in bytes.
    pub result_offset: usize,
    /// The result's size in bytes.
    pub result_size: usize,
    /// The size of the caller's `Option<R>`, in bytes.
    pub option_size: usize,
    /// Where the payload is in the caller's `Option<R>` (its tag is the byte at 0).
    pub payload_offset: usize,
}

/// An actor's state on the LLVM path: the block the emitted `init` wrote.
pub struct RawState {
    block: *mut u8,
    desc: &'static ActorDesc,
    /// Whether a handler trapped while it held the state, which then leaks (its values may be
    /// half moved).
    trapped: bool,
}

// SAFETY: the state block is plain memory owned by this value alone, used by the actor's task
// only; emitted values hold nothing tied to a thread.
unsafe impl Send for RawState {}

impl Drop for RawState {
    fn drop(&mut self) {
        if self.trapped {
            return;
        }
        // SAFETY: the block holds a state `init` wrote that nothing dropped; it is dropped and
        // freed once, here, with the size it was allocated with.
        unsafe {
            (self.desc.drop)(self.block);
            super::nagi_rt_free(self.block, self.desc.size, BLOCK_ALIGN);
        }
    }
}

/// A filled message block that has not run yet. Dropping it drops its arguments.
struct Message {
    block: *mut u8,
    desc: &'static HandlerDesc,
}

// SAFETY: as for `RawState`: the block is owned by this value alone.
unsafe impl Send for Message {}

impl Drop for Message {
    fn drop(&mut self) {
        // SAFETY: the block holds the arguments emitted code wrote, not moved out; dropped and
        // freed once, here.
        unsafe {
            (self.desc.drop_args)(self.block);
            super::nagi_rt_free(self.block, self.desc.size, BLOCK_ALIGN);
        }
    }
}

/// A message block that ran: it holds the handler's result. Dropping it drops the result.
struct Reply {
    block: *mut u8,
    desc: &'static HandlerDesc,
}

// SAFETY: as for `RawState`.
unsafe impl Send for Reply {}

impl Drop for Reply {
    fn drop(&mut self) {
        // SAFETY: the block holds the result `run` wrote, not moved out; dropped and freed once.
        unsafe {
            (self.desc.drop_result)(self.block);
            super::nagi_rt_free(self.block, self.desc.size, BLOCK_ALIGN);
        }
    }
}

impl Message {
    /// Runs the message's handler on `state` (on the actor's task). A trap raises its payload
    /// after marking the state as leaked; the block leaks too.
    fn run(self, state: &mut RawState) -> Reply {
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: `run` is the emitted function of this descriptor, given its own filled block
        // and the actor's live state; `guarded_poll` is the module's.
        let answer = unsafe { (this.desc.guarded_poll)(this.desc.run, this.block, state.block) };
        if answer != poll::READY {
            state.trapped = true;
            guard::resume_failure("a handler")
        }
        Reply { block: this.block, desc: this.desc }
    }
}

/// What an `actor.call` gives: the reply, or none when the actor stopped.
struct CallOutcome {
    reply: Option<Reply>,
    desc: &'static HandlerDesc,
}

impl WriteOut for CallOutcome {
    unsafe fn write_to(self, out: *mut u8) {
        let CallOutcome { reply, desc } = self;
        // SAFETY: the caller vouches that `out` is an `Option<R>` of `option_size` bytes with
        // nothing owned in it: the tag is its first byte and the payload at `payload_offset`
        // (a none is all zero, as emitted options are).
        unsafe {
            ptr::write_bytes(out, 0, desc.option_size);
            let Some(reply) = reply else { return };
            let reply = std::mem::ManuallyDrop::new(reply);
            out.write(1);
            if desc.result_size > 0 {
                ptr::copy_nonoverlapping(
                    reply.block.add(desc.result_offset),
                    out.add(desc.payload_offset),
                    desc.result_size,
                );
            }
            // The result moved out; only the block is freed.
            super::nagi_rt_free(reply.block, desc.size, BLOCK_ALIGN);
        }
    }
}

/// `actor.start`: starts an actor whose state `desc`'s `init` makes, with a mailbox of
/// `capacity` messages; gives its handle, owned by emitted code until [`nagi_rt_actor_drop`].
///
/// # Safety
/// `desc` is a constant of the program. Called inside the Tokio runtime.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_actor_start(desc: *const ActorDesc, capacity: i64) -> *mut Actor<RawState> {
    // SAFETY: forwarded from the caller.
    let (desc, name) = unsafe { described(desc) };
    let capacity = usize::try_from(capacity).unwrap_or(1);
    Box::into_raw(Box::new(Actor::start(name, capacity, move || raw_state(desc))))
}

/// The descriptor `desc` as a reference, and the actor's name.
///
/// # Safety
/// `desc` is one of the emitter's descriptor constants, which live for the process and whose
/// name is the UTF-8 of a class name.
pub(super) unsafe fn described(desc: *const ActorDesc) -> (&'static ActorDesc, &'static str) {
    // SAFETY: forwarded from the caller.
    unsafe {
        let desc: &'static ActorDesc = &*desc;
        (desc, std::str::from_utf8_unchecked(std::slice::from_raw_parts(desc.name, desc.name_len)))
    }
}

/// A fresh state made by `desc`'s `init`, on the actor's task; a trap in it raises its payload.
pub(super) fn raw_state(desc: &'static ActorDesc) -> RawState {
    let block = super::allocate(super::layout(desc.size, BLOCK_ALIGN));
    // SAFETY: `init` is the emitted function of this descriptor, given a fresh block of the
    // state's size; `guarded_poll` is the module's.
    let answer = unsafe { (desc.guarded_poll)(desc.init, block, ptr::null_mut()) };
    if answer != poll::READY {
        // The block leaks with whatever `init` made before it trapped.
        guard::resume_failure("an actor's state")
    }
    RawState { block, desc, trapped: false }
}

/// A new message block of `desc`'s handler, for emitted code to write the arguments into and
/// hand to [`nagi_rt_actor_call`] or [`nagi_rt_actor_send`].
///
/// # Safety
/// `desc` is a constant of the program.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_actor_message(desc: *const HandlerDesc) -> *mut u8 {
    // SAFETY: forwarded from the caller.
    let size = unsafe { (*desc).size };
    super::allocate(super::layout(size, BLOCK_ALIGN))
}

/// The message and descriptor of a call or send, as owned values.
///
/// # Safety
/// As [`nagi_rt_actor_call`].
unsafe fn message(
    actor: *const Actor<RawState>,
    desc: *const HandlerDesc,
    block: *mut u8,
) -> (Actor<RawState>, Message, &'static HandlerDesc) {
    // SAFETY: forwarded from the caller; the operation keeps a handle of its own, so that it
    // does not depend on the frame's local.
    unsafe {
        let desc: &'static HandlerDesc = &*desc;
        ((*actor).clone(), Message { block, desc }, desc)
    }
}

/// `actor.call`: an operation that sends the message `block` of `desc`'s handler to `actor`
/// (waiting for room in its mailbox) and is ready with the handler's result, which its finish
/// writes as an `Option<R>`: none when the actor stopped, after recording the failure (503).
///
/// # Safety
/// `actor` is a live handle; `block` comes from [`nagi_rt_actor_message`] with `desc`, filled
/// with the arguments, which this takes; `desc` is a constant of the program. Called inside the
/// Tokio runtime.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_actor_call(
    actor: *const Actor<RawState>,
    desc: *const HandlerDesc,
    block: *mut u8,
) -> *mut PendingOp {
    // SAFETY: forwarded from the caller.
    let (actor, message, desc) = unsafe { message(actor, desc, block) };
    pending(async move {
        let reply = actor.call(move |state| message.run(state)).await;
        CallOutcome { reply, desc }
    })
}

/// `actor.send`: an operation that is ready once the message `block` is in `actor`'s mailbox;
/// the handler's result is dropped when it has run. A message to a stopped actor is a dead
/// letter.
///
/// # Safety
/// As [`nagi_rt_actor_call`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_actor_send(
    actor: *const Actor<RawState>,
    desc: *const HandlerDesc,
    block: *mut u8,
) -> *mut PendingOp {
    // SAFETY: forwarded from the caller.
    let (actor, message, _) = unsafe { message(actor, desc, block) };
    pending(async move {
        actor.send(move |state| drop(message.run(state))).await;
    })
}

/// Another handle of the actor `actor`.
///
/// # Safety
/// `actor` is a live handle from [`nagi_rt_actor_start`] or this function.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_actor_clone(actor: *const Actor<RawState>) -> *mut Actor<RawState> {
    // SAFETY: forwarded from the caller.
    Box::into_raw(Box::new(unsafe { (*actor).clone() }))
}

/// Drops a handle; the actor stops once every handle is gone and its mailbox is empty.
///
/// # Safety
/// `actor` is a live handle, not used after this.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_actor_drop(actor: *mut Actor<RawState>) {
    // SAFETY: forwarded from the caller.
    drop(unsafe { Box::from_raw(actor) });
}

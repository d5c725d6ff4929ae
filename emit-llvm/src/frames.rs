//! Async functions as explicit state machines: each async Low function becomes a heap frame
//! and four plain LLVM functions, in place of LLVM's coroutine intrinsics, so that the same IR
//! works at every `--llvm-opt` level and nothing depends on the coroutine passes.
//!
//! The frame of `async fn f(params) -> R` is `%nagi.frame.f = { i32 state, R result, every
//! local of f in arena order, the hidden counter of every `for`, one i8* per await }`: every
//! local lives in the frame rather than on the stack, so a value survives a suspension without
//! any liveness bookkeeping, and the emitter's slots are simply the frame's fields. The state is
//! 0 before the first poll, `k` while the `k`-th await (in text order, from 1) is pending, and
//! -1 once the result is written. The functions:
//!
//! - `i8* nagi.new.f(params)`: allocates the frame (`nagi_rt_alloc`), stores the arguments into
//!   the parameters' fields, state 0. Nothing runs yet.
//! - `i32 nagi.poll.f(i8* frame, i8* cx)`: runs from where the state says until the next await
//!   that is not ready (returns 0) or a `return` (stores the result, state -1, returns 1). When
//!   what it awaits failed (a database error; the callee returned 2), it returns 2 and stays
//!   suspended at that await, so that its owner drops it as it drops a cancelled frame: a
//!   failure frees everything. `cx` is the runtime's task context (`std::task::Context`),
//!   passed through to what is awaited.
//! - `void nagi.drop.f(i8* frame)`: cancels a frame that has not returned: drops exactly the
//!   values its state says are live (the owned parameters in state 0; at the `k`-th await, the
//!   pending callee, then the owned locals the verifier's flow analysis found live there,
//!   [`nagi_low::verifier::suspensions`], in reverse arena order), then frees the frame.
//! - `void nagi.free.f(i8* frame)`: frees a frame that has returned, once its result was moved out.
//!
//! An awaited call of an async function `g` is `child = nagi.new.g(args)`, kept in the await's
//! field, then polled on each resume; when ready its result is moved out of `g`'s frame and the
//! frame freed. An awaited runtime operation (the database) is the same with the runtime's
//! pending operation in place of the child (`nagi_rt_db_*` start it, `nagi_rt_op_poll`,
//! `nagi_rt_op_finish`, `nagi_rt_op_drop`; docs/c-abi.md).

use std::collections::BTreeMap;

use inkwell::basic_block::BasicBlock;
use inkwell::module::Linkage;
use inkwell::types::{BasicMetadataTypeEnum, BasicTypeEnum, StructType};
use inkwell::values::{FunctionValue, PointerValue};
use nagi_abi::poll;
use nagi_low::entities::index;
use nagi_low::verifier::Suspension;
use nagi_low::{FuncId, FunctionData, LocalId, OpId, OpKind};

use crate::glue;
use crate::ir;
use crate::runtime_calls::{self, Rt};
use crate::{Cx, Error};

/// Field 0 of every frame: the state.
pub(crate) const STATE: u32 = 0;
/// Field 1 of every frame: the result, once the state is [`DONE`].
pub(crate) const RESULT: u32 = 1;
/// The first local's field.
const FIRST_LOCAL: u32 = 2;
/// The state of a frame whose result is written.
pub(crate) const DONE: u64 = u32::MAX as u64;

/// The frame of one async function and its four functions.
pub(crate) struct Frame<'ctx> {
    pub(crate) st: StructType<'ctx>,
    pub(crate) new: FunctionValue<'ctx>,
    pub(crate) poll: FunctionValue<'ctx>,
    pub(crate) drop: FunctionValue<'ctx>,
    pub(crate) free: FunctionValue<'ctx>,
    /// The field of each `for`'s hidden counter.
    counters: BTreeMap<OpId, u32>,
    /// The field of each counted `for`'s end bound, read once on entry.
    ends: BTreeMap<OpId, u32>,
    /// The awaits in text order; the `k`-th (from 0) is state `k + 1` and keeps its pending
    /// callee in field `first_child + k`.
    awaits: Vec<Suspension>,
    pub(crate) first_child: u32,
}

impl Frame<'_> {
    /// The await number (from 0) of operation `op`.
    pub(crate) fn await_index(&self, op: OpId) -> Result<usize, Error> {
        self.awaits.iter().position(|s| s.op == op).ok_or_else(|| Error::internal("an await the analysis missed"))
    }
}

/// The field of `local` in a frame.
pub(crate) fn local_field(local: LocalId) -> u32 {
    FIRST_LOCAL + index(local) as u32
}

/// Lays out the frame of async function `func` and declares its functions.
pub(crate) fn declare<'ctx>(cx: &Cx<'ctx, '_>, id: FuncId, func: &FunctionData) -> Result<Frame<'ctx>, Error> {
    let c = cx.context;
    let awaits = nagi_low::verifier::suspensions(cx.low, id).map_err(|d| Error::internal(d.message))?;
    let st = c.opaque_struct_type(&format!("nagi.frame.{}", func.name));
    let mut fields: Vec<BasicTypeEnum> = vec![c.i32_type().into(), cx.layouts.llvm(&func.ret)];
    fields.extend(func.locals.values().map(|l| cx.layouts.llvm(&l.ty)));
    let mut counters = BTreeMap::new();
    let mut ends = BTreeMap::new();
    for (op, data) in func.ops.iter() {
        let ty = match &data.kind {
            OpKind::ForRange { var, .. } => {
                let ty = cx.layouts.llvm(func.local_type(*var));
                ends.insert(op, fields.len() as u32);
                fields.push(ty);
                ty
            }
            OpKind::ForEach { .. } => c.i64_type().into(),
            _ => continue,
        };
        counters.insert(op, fields.len() as u32);
        fields.push(ty);
    }
    let first_child = fields.len() as u32;
    fields.extend(awaits.iter().map(|_| BasicTypeEnum::from(cx.layouts.byte_ptr())));
    st.set_body(&fields, false);
    let bytes = cx.layouts.byte_ptr();
    let params: Vec<BasicMetadataTypeEnum> = func.param_types().map(|t| cx.layouts.llvm(t).into()).collect();
    let internal = |name: &str, ty| {
        let f = cx.module.add_function(&format!("nagi.{name}.{}", func.name), ty, Some(Linkage::Internal));
        cx.nounwind(f);
        f
    };
    let void = c.void_type();
    Ok(Frame {
        st,
        new: internal("new", bytes.fn_type(&params, false)),
        poll: internal("poll", c.i32_type().fn_type(&[bytes.into(), bytes.into()], false)),
        drop: internal("drop", void.fn_type(&[bytes.into()], false)),
        free: internal("free", void.fn_type(&[bytes.into()], false)),
        counters,
        ends,
        awaits,
        first_child,
    })
}

/// The frame's size and alignment as `i64` constants.
fn size_align<'ctx>(
    cx: &Cx<'ctx, '_>,
    st: StructType<'ctx>,
) -> (inkwell::values::IntValue<'ctx>, inkwell::values::IntValue<'ctx>) {
    let i64t = cx.context.i64_type();
    let (size, align) = cx.layouts.struct_size_align(st);
    (i64t.const_int(size, false), i64t.const_int(u64::from(align), false))
}

/// Writes `new`, `drop` and `free` of `func` (its `poll` is the function body, written by
/// `function::define`).
pub(crate) fn define_helpers<'ctx>(cx: &Cx<'ctx, '_>, func: &FunctionData, frame: &Frame<'ctx>) -> Result<(), Error> {
    define_new(cx, func, frame)?;
    define_drop(cx, func, frame)?;
    let b = &cx.builder;
    let entry = cx.context.append_basic_block(frame.free, "entry");
    b.position_at_end(entry);
    let raw = first_param(frame.free)?;
    let (size, align) = size_align(cx, frame.st);
    runtime_calls::call(cx, Rt::Free, &[raw.into(), size.into(), align.into()])?;
    b.build_return(None)?;
    Ok(())
}

fn first_param(f: FunctionValue<'_>) -> Result<PointerValue<'_>, Error> {
    Ok(f.get_nth_param(0).ok_or_else(|| Error::internal("a frame function without its frame"))?.into_pointer_value())
}

/// The frame at `raw` as a pointer to its struct.
pub(crate) fn typed<'ctx>(
    cx: &Cx<'ctx, '_>,
    st: StructType<'ctx>,
    raw: PointerValue<'ctx>,
) -> Result<PointerValue<'ctx>, Error> {
    Ok(cx.builder.build_pointer_cast(raw, st.ptr_type(inkwell::AddressSpace::default()), "frame")?)
}

fn define_new<'ctx>(cx: &Cx<'ctx, '_>, func: &FunctionData, frame: &Frame<'ctx>) -> Result<(), Error> {
    let b = &cx.builder;
    let entry = cx.context.append_basic_block(frame.new, "entry");
    b.position_at_end(entry);
    let (size, align) = size_align(cx, frame.st);
    let raw = runtime_calls::call(cx, Rt::Alloc, &[size.into(), align.into()])?
        .ok_or_else(|| Error::internal("nagi_rt_alloc returns nothing"))?
        .into_pointer_value();
    let fr = typed(cx, frame.st, raw)?;
    b.build_store(ir::field(b, frame.st, fr, STATE, "state")?, cx.context.i32_type().const_zero())?;
    for (i, &param) in func.params.iter().enumerate() {
        let value = frame.new.get_nth_param(i as u32).ok_or_else(|| Error::internal("parameter count"))?;
        b.build_store(ir::field(b, frame.st, fr, local_field(param), "param")?, value)?;
    }
    b.build_return(Some(&raw))?;
    Ok(())
}

/// `drop`: a switch on the state to the drops of what is live there, then the frame's memory.
fn define_drop<'ctx>(cx: &Cx<'ctx, '_>, func: &FunctionData, frame: &Frame<'ctx>) -> Result<(), Error> {
    let b = &cx.builder;
    let c = cx.context;
    let f = frame.drop;
    let entry = c.append_basic_block(f, "entry");
    let free = c.append_basic_block(f, "free");
    b.position_at_end(entry);
    let raw = first_param(f)?;
    let fr = typed(cx, frame.st, raw)?;
    let state = ir::load_field(b, frame.st, fr, STATE, "state")?.into_int_value();
    let mut cases = Vec::new();
    let start = c.append_basic_block(f, "drop.start");
    b.position_at_end(start);
    drop_locals(cx, func, frame, fr, func.params.iter().copied())?;
    b.build_unconditional_branch(free)?;
    cases.push((c.i32_type().const_zero(), start));
    for (k, suspension) in frame.awaits.iter().enumerate() {
        let block = c.append_basic_block(f, &format!("drop.await{}", k + 1));
        b.position_at_end(block);
        let child = ir::load_field(b, frame.st, fr, frame.first_child + k as u32, "child")?.into_pointer_value();
        match &func.ops[suspension.op].kind {
            OpKind::Call { callee, .. } => {
                let callee = cx.frames.get(*callee).ok_or_else(|| Error::internal("an awaited sync function"))?;
                b.build_call(callee.drop, &[child.into()], "")?;
            }
            _ => {
                runtime_calls::call(cx, Rt::OpDrop, &[child.into()])?;
            }
        }
        // What is awaited goes first, then the live locals in reverse order, as Rust drops a
        // future suspended there (the Rust emitter declares every local at the top, in arena
        // order): the order in which deferred calls run on a cancellation (`Defer`).
        drop_locals(cx, func, frame, fr, suspension.live.iter().rev().copied())?;
        b.build_unconditional_branch(free)?;
        cases.push((c.i32_type().const_int(k as u64 + 1, false), block));
    }
    b.position_at_end(entry);
    b.build_switch(state, free, &cases)?;
    b.position_at_end(free);
    let (size, align) = size_align(cx, frame.st);
    runtime_calls::call(cx, Rt::Free, &[raw.into(), size.into(), align.into()])?;
    b.build_return(None)?;
    Ok(())
}

fn drop_locals<'ctx>(
    cx: &Cx<'ctx, '_>,
    func: &FunctionData,
    frame: &Frame<'ctx>,
    fr: PointerValue<'ctx>,
    locals: impl Iterator<Item = LocalId>,
) -> Result<(), Error> {
    for local in locals {
        let ty = func.local_type(local);
        if ty.owns_heap(cx.low) {
            let at = ir::field(&cx.builder, frame.st, fr, local_field(local), "live")?;
            glue::drop_in_place(cx, ty, at)?;
        }
    }
    Ok(())
}

/// What the body of a `poll` function needs besides the ordinary emitter state.
pub(crate) struct Poll<'ctx> {
    /// The frame, typed as its struct `st`.
    pub(crate) frame: PointerValue<'ctx>,
    pub(crate) st: StructType<'ctx>,
    /// The runtime's `Context` the poll was given, passed on to children.
    pub(crate) task_cx: PointerValue<'ctx>,
    /// Returns 0: the frame waits.
    pub(crate) pending: BasicBlock<'ctx>,
    /// Returns 2: what the frame awaits failed, and the frame stays suspended there.
    pub(crate) failed: BasicBlock<'ctx>,
    /// The resume block of each await, in await order, filled in as the body is emitted.
    pub(crate) resumes: Vec<Option<BasicBlock<'ctx>>>,
    /// Where each counted `for` keeps its end bound.
    ends: BTreeMap<OpId, PointerValue<'ctx>>,
}

impl<'ctx> Poll<'ctx> {
    /// The frame field holding the end bound of counted `for` operation `op`.
    pub(crate) fn loop_end(&self, op: OpId) -> Option<PointerValue<'ctx>> {
        self.ends.get(&op).copied()
    }
}

/// The slots of a `poll` function (the frame's fields) and its hidden `for` counters, computed
/// in `entry`, which is left open for [`finish_poll`]'s dispatch.
pub(crate) fn poll_slots<'ctx>(
    cx: &Cx<'ctx, '_>,
    func: &FunctionData,
    frame: &Frame<'ctx>,
) -> Result<(ir::Slots<'ctx>, Poll<'ctx>), Error> {
    let b = &cx.builder;
    let raw = first_param(frame.poll)?;
    let task_cx = frame.poll.get_nth_param(1).ok_or_else(|| Error::internal("poll without its context"))?;
    let fr = typed(cx, frame.st, raw)?;
    let mut slots = la_arena::ArenaMap::default();
    for (id, local) in func.locals.iter() {
        slots.insert(id, ir::field(b, frame.st, fr, local_field(id), &local.name)?);
    }
    let mut counters = la_arena::ArenaMap::default();
    for (&op, &field) in &frame.counters {
        counters.insert(op, ir::field(b, frame.st, fr, field, "for.i")?);
    }
    let mut ends = BTreeMap::new();
    for (&op, &field) in &frame.ends {
        ends.insert(op, ir::field(b, frame.st, fr, field, "for.end")?);
    }
    let pending = cx.context.append_basic_block(frame.poll, "pending");
    let failed = cx.context.append_basic_block(frame.poll, "failed");
    let here = b.get_insert_block();
    b.position_at_end(pending);
    b.build_return(Some(&answer(cx, poll::PENDING)))?;
    b.position_at_end(failed);
    b.build_return(Some(&answer(cx, poll::FAILED)))?;
    if let Some(here) = here {
        b.position_at_end(here);
    }
    let poll = Poll {
        frame: fr,
        st: frame.st,
        task_cx: task_cx.into_pointer_value(),
        pending,
        failed,
        resumes: vec![None; frame.awaits.len()],
        ends,
    };
    Ok(((slots, counters), poll))
}

/// Ends `entry` with the dispatch on the state: 0 to `start`, `k` to the `k`-th await's resume
/// block; anything else (a frame polled after it returned) traps.
pub(crate) fn finish_poll<'ctx>(
    cx: &Cx<'ctx, '_>,
    f: FunctionValue<'ctx>,
    entry: BasicBlock<'ctx>,
    start: BasicBlock<'ctx>,
    poll: &Poll<'ctx>,
) -> Result<(), Error> {
    let b = &cx.builder;
    let i32t = cx.context.i32_type();
    let bad = cx.context.append_basic_block(f, "polled.after.return");
    b.position_at_end(bad);
    runtime_calls::trap(cx, "an async function was polled after it returned")?;
    b.position_at_end(entry);
    let state = ir::load_field(b, poll.st, poll.frame, STATE, "state")?.into_int_value();
    let mut cases = vec![(i32t.const_zero(), start)];
    for (k, resume) in poll.resumes.iter().enumerate() {
        let resume = resume.ok_or_else(|| Error::internal("an await that was never emitted"))?;
        cases.push((i32t.const_int(k as u64 + 1, false), resume));
    }
    b.build_switch(state, bad, &cases)?;
    Ok(())
}

/// The poll answer `code` (`nagi_abi::poll`) as the `i32` a poll function returns.
pub(crate) fn answer<'ctx>(cx: &Cx<'ctx, '_>, code: i32) -> inkwell::values::IntValue<'ctx> {
    cx.context.i32_type().const_int(code as u64, true)
}

//! Awaits and returns inside a `poll` function (an async function's frame, `frames.rs`): a
//! `return` writes the result into the frame and answers ready; an await of a call or of a
//! runtime operation stores the child in the frame, polls it and suspends while it is pending.

use inkwell::values::{BasicMetadataValueEnum, PointerValue};
use nagi_abi::poll;
use nagi_low::{ArenaGet, FuncId, LocalId, OpId, Operand, Type};

use crate::Error;
use crate::frames::{DONE, RESULT, STATE, answer, typed};
use crate::function::FnEmitter;
use crate::ir;
use crate::runtime_calls::{self, Rt};

impl<'ctx> FnEmitter<'_, 'ctx, '_> {
    /// `return` in a `poll` function: the result into the frame, state done, ready.
    pub(crate) fn poll_return(&mut self, value: Option<&Operand>) -> Result<(), Error> {
        let cx = self.cx;
        let b = &cx.builder;
        let poll = self.poll.as_ref().ok_or_else(|| Error::internal("poll_return outside a poll function"))?;
        let (frame, st) = (poll.frame, poll.st);
        if let Some(v) = value
            && self.func.ret != Type::Unit
        {
            let v = self.operand(v)?;
            b.build_store(ir::field(b, st, frame, RESULT, "result")?, v)?;
        }
        b.build_store(ir::field(b, st, frame, STATE, "state")?, cx.context.i32_type().const_int(DONE, false))?;
        b.build_return(Some(&answer(cx, poll::READY)))?;
        Ok(())
    }

    /// Suspends at await `op`, whose pending callee (a child frame or a runtime operation) is
    /// `pending`: keeps it in the frame, sets the state, and emits the resume block, which polls
    /// it with `poll_child` (an `i32`: 0 pending, 1 ready, 2 failed) and returns 0 while it
    /// waits and 2 if it failed (the frame stays suspended here). Leaves the builder in the
    /// block that runs once it is ready, with the pending callee's pointer.
    pub(crate) fn suspend(
        &mut self,
        op: OpId,
        pending: PointerValue<'ctx>,
        poll_child: impl FnOnce(
            &Self,
            PointerValue<'ctx>,
            PointerValue<'ctx>,
        ) -> Result<inkwell::values::IntValue<'ctx>, Error>,
    ) -> Result<PointerValue<'ctx>, Error> {
        let cx = self.cx;
        let b = &cx.builder;
        let frame = self.frame.ok_or_else(|| Error::internal("an await in a function without a frame"))?;
        let k = frame.await_index(op)?;
        let field = frame.first_child + k as u32;
        let poll = self.poll.as_ref().ok_or_else(|| Error::internal("an await outside a poll function"))?;
        let (fr, st, task_cx, pending_block, failed) = (poll.frame, poll.st, poll.task_cx, poll.pending, poll.failed);
        b.build_store(ir::field(b, st, fr, field, "child")?, pending)?;
        b.build_store(ir::field(b, st, fr, STATE, "state")?, cx.context.i32_type().const_int(k as u64 + 1, false))?;
        let resume = self.block(&format!("resume{}", k + 1));
        let ready = self.block(&format!("ready{}", k + 1));
        b.build_unconditional_branch(resume)?;
        b.position_at_end(resume);
        let child = ir::load_field(b, st, fr, field, "child")?.into_pointer_value();
        let polled = poll_child(self, child, task_cx)?;
        b.build_switch(
            polled,
            failed,
            &[(answer(cx, poll::PENDING), pending_block), (answer(cx, poll::READY), ready)],
        )?;
        b.position_at_end(ready);
        if let Some(poll) = self.poll.as_mut() {
            poll.resumes[k] = Some(resume);
        }
        Ok(child)
    }

    /// `[%d =] await call $g(args)`: a child frame for `g`, polled until ready, its result moved
    /// into `%d`, the child freed.
    pub(crate) fn await_call(
        &mut self,
        op: OpId,
        dest: Option<LocalId>,
        callee: FuncId,
        args: &[Operand],
    ) -> Result<(), Error> {
        let cx = self.cx;
        let b = &cx.builder;
        let mut values: Vec<BasicMetadataValueEnum> = Vec::with_capacity(args.len());
        for a in args {
            values.push(self.operand(a)?.into());
        }
        let child_frame =
            cx.frames.get(callee).ok_or_else(|| Error::internal("an awaited function without a frame"))?;
        let (new, poll, free, child_st) = (child_frame.new, child_frame.poll, child_frame.free, child_frame.st);
        let child = cx.call_value(new, &values, "new")?.into_pointer_value();
        let child = self.suspend(op, child, |_, child, task_cx| {
            Ok(cx.call_value(poll, &[child.into(), task_cx.into()], "poll")?.into_int_value())
        })?;
        let callee_data = cx.low.functions.get(callee).ok_or_else(|| Error::internal("unknown callee"))?;
        match dest {
            Some(d) if callee_data.ret != Type::Unit => {
                let typed_child = typed(cx, child_st, child)?;
                let v = ir::load_field(b, child_st, typed_child, RESULT, "result")?;
                self.store_local(d, v)?;
            }
            d => self.store_unit(d)?,
        }
        b.build_call(free, &[child.into()], "")?;
        Ok(())
    }

    /// An awaited runtime operation already started (`op_ptr`, from a `nagi_rt_db_*` call):
    /// polled with `nagi_rt_op_poll` until ready, then finished into `out` (null for none).
    pub(crate) fn await_runtime(
        &mut self,
        op: OpId,
        started: PointerValue<'ctx>,
        out: Option<PointerValue<'ctx>>,
    ) -> Result<(), Error> {
        let cx = self.cx;
        let pending = self.suspend(op, started, |_, child, task_cx| {
            Ok(runtime_calls::call(cx, Rt::OpPoll, &[child.into(), task_cx.into()])?
                .ok_or_else(|| Error::internal("nagi_rt_op_poll returns nothing"))?
                .into_int_value())
        })?;
        let out = match out {
            Some(p) => cx.builder.build_pointer_cast(p, cx.layouts.byte_ptr(), "out")?,
            None => cx.layouts.byte_ptr().const_null(),
        };
        runtime_calls::call(cx, Rt::OpFinish, &[pending.into(), out.into()])?;
        Ok(())
    }
}

//! Scopes and tasks (Low §8.1) on the LLVM path: a `Scope` or `Task<T>` local is a pointer to
//! the runtime's box (`runtime/src/cabi/tasks.rs`), `scope.spawn $f(args)` makes `f`'s frame
//! with `nagi.new.f` and hands it to `nagi_rt_task_spawn` with `f`'s task descriptor, and
//! `task.join` and `scope.end` are pending runtime operations awaited like a statement
//! (`frames.rs`), `task.join`'s finish moving the result out of the task's frame into the
//! destination.
//!
//! Each function the module spawns gets one constant `nagi.task.f` = `{ poll, drop, finish,
//! free, guarded_poll, i64 result_offset, i64 result_size }` and the function `nagi.finish.f`,
//! which drops the result of a returned frame and frees it (the task nobody joined).
//!
//! `defer.new $f(args)` (Low §8.4) fills a block of the plain function `f` as
//! `scope.spawn_blocking` does and hands it, with the same descriptor `nagi.blocking.f`, to
//! `nagi_rt_defer_new`; a `Defer` local is a pointer to the runtime's box, whose drop glue
//! (`nagi_rt_defer_drop`) makes the call.

use inkwell::module::Linkage;
use inkwell::values::{BasicMetadataValueEnum, BasicValueEnum, PointerValue};
use la_arena::ArenaMap;
use nagi_low::{ArenaGet, FuncId, LocalId, OpId, OpKind, Operand};

use crate::constants::{constant, fn_ptr, int, struct_of};
use crate::frames::{self, RESULT};
use crate::function::FnEmitter;
use crate::runtime_calls::{self, Rt};
use crate::service::guarded_poll;
use crate::{Cx, Error, actors, glue, ir};

/// The task descriptor (as an `i8*`) of every function the module spawns or defers.
pub(crate) fn declare<'ctx>(cx: &Cx<'ctx, '_>) -> Result<ArenaMap<FuncId, PointerValue<'ctx>>, Error> {
    let mut descs = ArenaMap::default();
    for (_, func) in cx.low.functions.iter() {
        for (_, data) in func.ops.iter() {
            // A deferred call runs its plain function as a blocking task's block does.
            let (callee, blocking) = match &data.kind {
                OpKind::ScopeSpawn { callee, blocking, .. } => (*callee, *blocking),
                OpKind::DeferNew { callee, .. } => (*callee, true),
                _ => continue,
            };
            if descs.get(callee).is_none() {
                let desc = if blocking { blocking_desc(cx, callee)? } else { task_desc(cx, callee)? };
                descs.insert(callee, desc);
            }
        }
    }
    Ok(descs)
}

/// `nagi.task.f` and `nagi.finish.f` of the spawned async function `id`.
fn task_desc<'ctx>(cx: &Cx<'ctx, '_>, id: FuncId) -> Result<PointerValue<'ctx>, Error> {
    let func = cx.low.functions.get(id).ok_or_else(|| Error::internal("a spawn of an unknown function"))?;
    let frame = cx.frames.get(id).ok_or_else(|| Error::internal("a spawn of a function without a frame"))?;
    let guarded = guarded_poll(cx)?;
    let bytes = cx.layouts.byte_ptr();
    let finish = cx.module.add_function(
        &format!("nagi.finish.{}", func.name),
        cx.context.void_type().fn_type(&[bytes.into()], false),
        Some(Linkage::Internal),
    );
    cx.nounwind(finish);
    let b = &cx.builder;
    b.position_at_end(cx.context.append_basic_block(finish, "entry"));
    let raw = finish.get_nth_param(0).ok_or_else(|| Error::internal("finish without its frame"))?.into_pointer_value();
    let typed = frames::typed(cx, frame.st, raw)?;
    glue::drop_in_place(cx, &func.ret, ir::field(b, frame.st, typed, RESULT, "result")?)?;
    b.build_call(frame.free, &[raw.into()], "")?;
    b.build_return(None)?;
    let desc = struct_of(
        cx,
        &[
            fn_ptr(cx, frame.poll).into(),
            fn_ptr(cx, frame.drop).into(),
            fn_ptr(cx, finish).into(),
            fn_ptr(cx, frame.free).into(),
            fn_ptr(cx, guarded).into(),
            int(cx, cx.layouts.offset_of(frame.st, RESULT)),
            int(cx, cx.layouts.size(&func.ret)),
        ],
    );
    let global = constant(cx, &format!("nagi.task.{}", func.name), desc);
    Ok(global.as_pointer_value().const_cast(bytes))
}

/// The alignment of a blocking task's block, as the runtime's message blocks have.
const BLOCK_ALIGN: u64 = 16;

/// `nagi.blocking.f`, the task descriptor of the plain function `id` run on the blocking pool:
/// its "frame" is the block `{ arguments…, result }` (`actors::message_parts`), whose `poll`
/// runs the function once and answers 1; `drop`, `finish` and `free` drop the arguments, the
/// result or nothing, and free the block.
fn blocking_desc<'ctx>(cx: &Cx<'ctx, '_>, id: FuncId) -> Result<PointerValue<'ctx>, Error> {
    let func = cx.low.functions.get(id).ok_or_else(|| Error::internal("a spawn of an unknown function"))?;
    let parts = actors::message_parts(cx, id, false)?;
    let b = &cx.builder;
    let i64t = cx.context.i64_type();
    let freeing = |name: &str, before: Option<inkwell::values::FunctionValue<'ctx>>| -> Result<_, Error> {
        let f = actors::thunk(cx, &format!("nagi.blocking.{name}.{}", func.name), 1, false);
        let block = f.get_nth_param(0).ok_or_else(|| Error::internal("a thunk without its block"))?;
        if let Some(before) = before {
            b.build_call(before, &[block.into()], "")?;
        }
        let (size, align) = (i64t.const_int(parts.size, false), i64t.const_int(BLOCK_ALIGN, false));
        runtime_calls::call(cx, Rt::Free, &[block.into(), size.into(), align.into()])?;
        b.build_return(None)?;
        Ok(f)
    };
    let drop = freeing("drop", Some(parts.drop_args))?;
    let finish = freeing("finish", Some(parts.drop_result))?;
    let free = freeing("free", None)?;
    let desc = struct_of(
        cx,
        &[
            fn_ptr(cx, parts.run).into(),
            fn_ptr(cx, drop).into(),
            fn_ptr(cx, finish).into(),
            fn_ptr(cx, free).into(),
            fn_ptr(cx, guarded_poll(cx)?).into(),
            int(cx, parts.result_offset),
            int(cx, cx.layouts.size(&func.ret)),
        ],
    );
    let global = constant(cx, &format!("nagi.blocking.{}", func.name), desc);
    Ok(global.as_pointer_value().const_cast(cx.layouts.byte_ptr()))
}

impl<'ctx> FnEmitter<'_, 'ctx, '_> {
    /// One of `scope.new`, `scope.spawn`, `scope.end` and `task.join`, at `op`.
    pub(crate) fn task_op(&mut self, op: OpId, kind: &OpKind) -> Result<(), Error> {
        let cx = self.cx;
        match kind {
            OpKind::ScopeNew { dest } => {
                let scope = runtime_calls::call(cx, Rt::ScopeNew, &[])?
                    .ok_or_else(|| Error::internal("nagi_rt_scope_new returns nothing"))?;
                self.store_local(*dest, scope)
            }
            OpKind::ScopeSpawn { dest, scope, callee, args, blocking: false } => {
                self.spawn(*dest, *scope, *callee, args)
            }
            OpKind::ScopeSpawn { dest, scope, callee, args, blocking: true } => {
                let (raw, desc) = self.filled_block(*callee, args)?;
                let scope = self.load_local(*scope)?;
                let task = runtime_calls::call(cx, Rt::TaskSpawnBlocking, &[scope.into(), raw.into(), desc.into()])?
                    .ok_or_else(|| Error::internal("nagi_rt_task_spawn_blocking returns nothing"))?;
                self.store_local(*dest, task)
            }
            OpKind::DeferNew { dest, callee, args } => {
                let (raw, desc) = self.filled_block(*callee, args)?;
                let defer = runtime_calls::call(cx, Rt::DeferNew, &[raw.into(), desc.into()])?
                    .ok_or_else(|| Error::internal("nagi_rt_defer_new returns nothing"))?;
                self.store_local(*dest, defer)
            }
            OpKind::ScopeEnd { scope } => {
                let scope = self.load_local(*scope)?;
                let started = self.started(Rt::ScopeEnd, scope)?;
                self.await_runtime(op, started, None)
            }
            OpKind::TaskJoin { dest, task } => {
                let task = self.load_local(*task)?;
                let started = self.started(Rt::TaskJoin, task)?;
                self.await_runtime(op, started, dest.map(|d| self.slot(d)))
            }
            _ => Err(Error::internal("not a task operation")),
        }
    }

    fn spawn(&mut self, dest: LocalId, scope: LocalId, callee: FuncId, args: &[Operand]) -> Result<(), Error> {
        let cx = self.cx;
        let mut values: Vec<BasicMetadataValueEnum> = Vec::with_capacity(args.len());
        for a in args {
            values.push(self.operand(a)?.into());
        }
        let frame = cx.frames.get(callee).ok_or_else(|| Error::internal("a spawn of a function without a frame"))?;
        let desc = *cx.tasks.get(callee).ok_or_else(|| Error::internal("a spawn without its task descriptor"))?;
        let child = cx.call_value(frame.new, &values, "new")?;
        let scope = self.load_local(scope)?;
        let task = runtime_calls::call(cx, Rt::TaskSpawn, &[scope.into(), child.into(), desc.into()])?
            .ok_or_else(|| Error::internal("nagi_rt_task_spawn returns nothing"))?;
        self.store_local(dest, task)
    }

    /// A fresh block of the plain function `callee` holding `args` (`scope.spawn_blocking`,
    /// `defer.new`), and `callee`'s descriptor, with which the runtime runs it.
    fn filled_block(
        &mut self,
        callee: FuncId,
        args: &[Operand],
    ) -> Result<(PointerValue<'ctx>, PointerValue<'ctx>), Error> {
        let cx = self.cx;
        let i64t = cx.context.i64_type();
        let block = actors::block_type(cx, callee, false)?;
        let size = cx.layouts.struct_size_align(block).0;
        let raw = runtime_calls::call(
            cx,
            Rt::Alloc,
            &[i64t.const_int(size, false).into(), i64t.const_int(BLOCK_ALIGN, false).into()],
        )?
        .ok_or_else(|| Error::internal("nagi_rt_alloc returns nothing"))?
        .into_pointer_value();
        self.fill_block(block, raw, args)?;
        let desc = *cx.tasks.get(callee).ok_or_else(|| Error::internal("a block without its task descriptor"))?;
        Ok((raw, desc))
    }

    /// The pending operation `rt` starts on the handle `handle`.
    fn started(&self, rt: Rt, handle: BasicValueEnum<'ctx>) -> Result<PointerValue<'ctx>, Error> {
        Ok(runtime_calls::call(self.cx, rt, &[handle.into()])?
            .ok_or_else(|| Error::internal("a task operation returns nothing"))?
            .into_pointer_value())
    }

    /// `time.sleep(ms)`: a pending runtime operation, awaited at `op`.
    pub(crate) fn sleep(&mut self, op: OpId, dest: Option<LocalId>, args: &[Operand]) -> Result<(), Error> {
        let ms = self.operand(args.first().ok_or_else(|| Error::internal("time.sleep without its argument"))?)?;
        let started = runtime_calls::call(self.cx, Rt::Row(nagi_low::RuntimeFn::TimeSleep), &[ms.into()])?
            .ok_or_else(|| Error::internal("nagi_rt_time_sleep returns nothing"))?
            .into_pointer_value();
        self.await_runtime(op, started, None)?;
        self.store_unit(dest)
    }
}

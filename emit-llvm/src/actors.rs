//! Actors (Low §8.2) on the LLVM path: an `Actor<C>` local is a pointer to the runtime's
//! handle (`runtime/src/cabi/actors.rs`); `actor.start $init` hands `init`'s actor descriptor
//! to `nagi_rt_actor_start`; `actor.call` and `actor.send` fill a message block of the handler
//! with the arguments and start a pending runtime operation on it, awaited like a statement
//! (`frames.rs`), whose finish writes a call's `Option<R>`.
//!
//! Each `init` the module starts actors with gets one constant `nagi.actor.init` = `{ init,
//! drop, guarded_poll, i64 size, i8* name, i64 name_len }`, where `init` calls the function and
//! writes the state into the runtime's block and `drop` drops a state in place. Each handler
//! called or sent to gets `nagi.handler.h` = `{ run, drop_args, drop_result, guarded_poll, i64
//! size, i64 result_offset, i64 result_size, i64 option_size, i64 payload_offset }` over the
//! message block `{ arguments…, result }`: `run` moves the arguments out, calls the handler on
//! the state and stores its result.

use inkwell::module::Linkage;
use inkwell::types::StructType;
use inkwell::values::{BasicMetadataValueEnum, FunctionValue, PointerValue};
use la_arena::ArenaMap;
use nagi_abi::poll;
use nagi_low::entities::index;
use nagi_low::{
    ArenaGet, ChildKind, FuncId, FunctionData, LocalId, OpId, OpKind, Operand, Strategy, SupervisorId, Type,
};

use crate::constants::{constant, fn_ptr, int, struct_of};
use crate::function::FnEmitter;
use crate::runtime_calls::{self, Rt};
use crate::service::guarded_poll;
use crate::{Cx, Error, descriptors, frames, glue, ir};

/// The descriptors of the module's actors: by `init` function, and by handler with the
/// message block's type; and the table of the supervisor trees, if any.
#[derive(Default)]
pub(crate) struct ActorDescs<'ctx> {
    inits: ArenaMap<FuncId, PointerValue<'ctx>>,
    handlers: ArenaMap<FuncId, (PointerValue<'ctx>, StructType<'ctx>)>,
    supervisors: Option<PointerValue<'ctx>>,
}

/// The descriptors of every `init` and handler the module's actor operations and supervisors
/// name, and the supervisors' table.
pub(crate) fn declare<'ctx>(cx: &Cx<'ctx, '_>) -> Result<ActorDescs<'ctx>, Error> {
    let mut descs = ActorDescs::default();
    for supervisor in cx.low.supervisors.values() {
        for child in &supervisor.children {
            if let ChildKind::Actor { init, .. } = child.kind
                && descs.inits.get(init).is_none()
            {
                descs.inits.insert(init, actor_desc(cx, init)?);
            }
        }
    }
    if !cx.low.supervisors.is_empty() {
        descs.supervisors = Some(supervisor_table(cx, &descs)?);
    }
    for (_, func) in cx.low.functions.iter() {
        for (_, data) in func.ops.iter() {
            match &data.kind {
                OpKind::ActorStart { init, .. } if descs.inits.get(*init).is_none() => {
                    descs.inits.insert(*init, actor_desc(cx, *init)?);
                }
                OpKind::ActorCall { handler, .. } | OpKind::ActorSend { handler, .. }
                    if descs.handlers.get(*handler).is_none() =>
                {
                    descs.handlers.insert(*handler, handler_desc(cx, *handler)?);
                }
                _ => {}
            }
        }
    }
    Ok(descs)
}

/// `nagi.supervisors` = `{ i64 count, SupervisorDesc** trees }`, with one `nagi.supervisor.N`
/// = `{ i8* name, i64 name_len, i64 strategy, i64 intensity, i64 period_ms, i64 backoff_min_ms,
/// i64 backoff_max_ms, ChildDesc* children, i64 count }` per supervisor (a nested one comes
/// before its parent, so it exists when the parent points to it) over its children `{ i64 kind,
/// i8* desc, i64 capacity }`.
fn supervisor_table<'ctx>(cx: &Cx<'ctx, '_>, descs: &ActorDescs<'ctx>) -> Result<PointerValue<'ctx>, Error> {
    let bytes = cx.layouts.byte_ptr();
    let i64t = cx.context.i64_type();
    let child_type = cx.context.struct_type(&[i64t.into(), bytes.into(), i64t.into()], false);
    let mut made: ArenaMap<SupervisorId, PointerValue<'ctx>> = ArenaMap::with_capacity(cx.low.supervisors.len());
    for (id, supervisor) in cx.low.supervisors.iter() {
        // The supervisor's position names its constants.
        let i = index(id);
        let mut children = Vec::with_capacity(supervisor.children.len());
        for child in &supervisor.children {
            let (kind, desc, capacity) = match child.kind {
                ChildKind::Actor { init, capacity } => {
                    let desc =
                        *descs.inits.get(init).ok_or_else(|| Error::internal("a child without its descriptor"))?;
                    (0, desc, u64::from(capacity))
                }
                ChildKind::Supervisor(nested) => {
                    let desc = *made.get(nested).ok_or_else(|| Error::internal("a supervisor before its child"))?;
                    (1, desc, 0)
                }
            };
            children.push(child_type.const_named_struct(&[
                i64t.const_int(kind, false).into(),
                desc.into(),
                i64t.const_int(capacity, false).into(),
            ]));
        }
        let list = if children.is_empty() {
            bytes.const_null()
        } else {
            let array = constant(cx, &format!("nagi.children.{i}"), child_type.const_array(&children).into());
            array.as_pointer_value().const_cast(bytes)
        };
        let strategy = match supervisor.strategy {
            Strategy::OneForOne => 0,
            Strategy::OneForAll => 1,
        };
        let (min, max) = supervisor.backoff_ms;
        let desc = struct_of(
            cx,
            &[
                descriptors::name_bytes(cx, &supervisor.name).into(),
                int(cx, supervisor.name.len() as u64),
                int(cx, strategy),
                int(cx, u64::from(supervisor.intensity)),
                int(cx, supervisor.period_ms),
                int(cx, min),
                int(cx, max),
                list.into(),
                int(cx, supervisor.children.len() as u64),
            ],
        );
        made.insert(id, constant(cx, &format!("nagi.supervisor.{i}"), desc).as_pointer_value().const_cast(bytes));
    }
    let trees: Vec<PointerValue> = cx.low.supervisor_trees().into_iter().map(|id| made[id]).collect();
    let array = constant(cx, "nagi.supervisor.trees", bytes.const_array(&trees).into());
    let table = struct_of(cx, &[int(cx, trees.len() as u64), array.as_pointer_value().const_cast(bytes).into()]);
    Ok(constant(cx, "nagi.supervisors", table).as_pointer_value().const_cast(bytes))
}

fn function<'a>(cx: &Cx<'_, 'a>, id: FuncId) -> Result<&'a FunctionData, Error> {
    cx.low.functions.get(id).ok_or_else(|| Error::internal("an actor operation names an unknown function"))
}

/// An internal `nounwind` function `name` of `params` (all `i8*`), returning `i32` when `int`.
pub(crate) fn thunk<'ctx>(cx: &Cx<'ctx, '_>, name: &str, params: usize, int: bool) -> FunctionValue<'ctx> {
    let bytes = cx.layouts.byte_ptr();
    let params = vec![bytes.into(); params];
    let ty = if int {
        cx.context.i32_type().fn_type(&params, false)
    } else {
        cx.context.void_type().fn_type(&params, false)
    };
    let f = cx.module.add_function(name, ty, Some(Linkage::Internal));
    cx.nounwind(f);
    cx.builder.position_at_end(cx.context.append_basic_block(f, "entry"));
    f
}

/// Parameter `i` of `f`, cast to a pointer to `ty`.
pub(crate) fn param_as<'ctx>(
    cx: &Cx<'ctx, '_>,
    f: FunctionValue<'ctx>,
    i: u32,
    ty: inkwell::types::PointerType<'ctx>,
) -> Result<PointerValue<'ctx>, Error> {
    let raw = f.get_nth_param(i).ok_or_else(|| Error::internal("a thunk without its parameter"))?.into_pointer_value();
    Ok(cx.builder.build_pointer_cast(raw, ty, "typed")?)
}

/// `nagi.actor.init` of the state function `id`.
fn actor_desc<'ctx>(cx: &Cx<'ctx, '_>, id: FuncId) -> Result<PointerValue<'ctx>, Error> {
    let func = function(cx, id)?;
    let Type::Class(_) = func.ret else { return Err(Error::internal("an actor state that is not a class")) };
    let state = &func.ret;
    let callee = *cx.functions.get(id).ok_or_else(|| Error::internal("an actor init without its function"))?;
    let b = &cx.builder;

    let init = thunk(cx, &format!("nagi.init.{}", func.name), 2, true);
    let block = param_as(cx, init, 0, cx.layouts.pointer(state))?;
    let value = cx.call_value(callee, &[], "state")?;
    b.build_store(block, value)?;
    b.build_return(Some(&frames::answer(cx, poll::READY)))?;

    let drop = thunk(cx, &format!("nagi.drop_state.{}", func.name), 1, false);
    let block = param_as(cx, drop, 0, cx.layouts.pointer(state))?;
    glue::drop_in_place(cx, state, block)?;
    b.build_return(None)?;

    let name = cx.low.actor_name(id);
    let desc = struct_of(
        cx,
        &[
            fn_ptr(cx, init).into(),
            fn_ptr(cx, drop).into(),
            fn_ptr(cx, guarded_poll(cx)?).into(),
            int(cx, cx.layouts.size(state)),
            descriptors::name_bytes(cx, name).into(),
            int(cx, name.len() as u64),
        ],
    );
    let global = constant(cx, &format!("nagi.actor.{}", func.name), desc);
    Ok(global.as_pointer_value().const_cast(cx.layouts.byte_ptr()))
}

/// `nagi.handler.h` of the handler `id`, and its message block's type.
fn handler_desc<'ctx>(cx: &Cx<'ctx, '_>, id: FuncId) -> Result<(PointerValue<'ctx>, StructType<'ctx>), Error> {
    let func = function(cx, id)?;
    let parts = message_parts(cx, id, true)?;
    let option = cx.layouts.llvm(&Type::Option(Box::new(func.ret.clone()))).into_struct_type();
    let desc = struct_of(
        cx,
        &[
            fn_ptr(cx, parts.run).into(),
            fn_ptr(cx, parts.drop_args).into(),
            fn_ptr(cx, parts.drop_result).into(),
            fn_ptr(cx, guarded_poll(cx)?).into(),
            int(cx, parts.size),
            int(cx, parts.result_offset),
            int(cx, cx.layouts.size(&func.ret)),
            int(cx, cx.layouts.struct_size_align(option).0),
            int(cx, cx.layouts.offset_of(option, 1)),
        ],
    );
    let global = constant(cx, &format!("nagi.handler.{}", func.name), desc);
    Ok((global.as_pointer_value().const_cast(cx.layouts.byte_ptr()), parts.block))
}

/// The block `{ arguments…, result }` of a call of a plain function made elsewhere (an actor's
/// message, a blocking task), and the thunks over it.
pub(crate) struct MessageParts<'ctx> {
    /// The block's type.
    pub block: StructType<'ctx>,
    /// Its size in bytes, and where the result is.
    pub size: u64,
    pub result_offset: u64,
    /// `i32 run(block, state)`: moves the arguments out, calls the function (on the state, first,
    /// when it has one) and stores the result; answers 1.
    pub run: FunctionValue<'ctx>,
    /// `void drop_args(block)`: drops the arguments of a block that never ran.
    pub drop_args: FunctionValue<'ctx>,
    /// `void drop_result(block)`: drops the result of a block that ran.
    pub drop_result: FunctionValue<'ctx>,
}

/// The block type `{ arguments…, result }` of the plain function `id` (the parameters after
/// the first when `with_state`), the one [`message_parts`] lays out.
pub(crate) fn block_type<'ctx>(cx: &Cx<'ctx, '_>, id: FuncId, with_state: bool) -> Result<StructType<'ctx>, Error> {
    let func = function(cx, id)?;
    let args = func.params.get(usize::from(with_state)..).unwrap_or_default();
    let mut fields: Vec<_> = args.iter().map(|p| cx.layouts.llvm(&func.locals[*p].ty)).collect();
    fields.push(cx.layouts.llvm(&func.ret));
    Ok(cx.context.struct_type(&fields, false))
}

/// The [`MessageParts`] of the plain function `id`; `with_state` when its first parameter is
/// an actor's state, passed as `run`'s second argument rather than held in the block.
pub(crate) fn message_parts<'ctx>(
    cx: &Cx<'ctx, '_>,
    id: FuncId,
    with_state: bool,
) -> Result<MessageParts<'ctx>, Error> {
    let func = function(cx, id)?;
    let callee = *cx.functions.get(id).ok_or_else(|| Error::internal("a message without its function"))?;
    let (state, args) = match func.params.split_first() {
        Some((state, args)) if with_state => (Some(*state), args),
        _ if with_state => return Err(Error::internal("a handler without its state")),
        _ => (None, &func.params[..]),
    };
    let arg_types: Vec<&Type> = args.iter().map(|p| &func.locals[*p].ty).collect();
    let st = block_type(cx, id, with_state)?;
    let typed = st.ptr_type(inkwell::AddressSpace::default());
    let at_result = arg_types.len() as u32;
    let b = &cx.builder;
    let prefix = if with_state { "" } else { "blocking." };

    let run = thunk(cx, &format!("nagi.{prefix}run.{}", func.name), 2, true);
    let message = param_as(cx, run, 0, typed)?;
    let mut values: Vec<BasicMetadataValueEnum> = Vec::with_capacity(args.len() + 1);
    if let Some(state) = state {
        values.push(param_as(cx, run, 1, cx.layouts.llvm(&func.locals[state].ty).into_pointer_type())?.into());
    }
    for i in 0..at_result {
        values.push(ir::load_field(b, st, message, i, "arg")?.into());
    }
    let site = b.build_call(callee, &values, "result")?;
    if let Some(result) = site.try_as_basic_value().basic() {
        b.build_store(ir::field(b, st, message, at_result, "result")?, result)?;
    }
    b.build_return(Some(&frames::answer(cx, poll::READY)))?;

    let drop_args = thunk(cx, &format!("nagi.{prefix}drop_args.{}", func.name), 1, false);
    let message = param_as(cx, drop_args, 0, typed)?;
    for (i, ty) in arg_types.iter().enumerate() {
        glue::drop_in_place(cx, ty, ir::field(b, st, message, i as u32, "arg")?)?;
    }
    b.build_return(None)?;

    let drop_result = thunk(cx, &format!("nagi.{prefix}drop_result.{}", func.name), 1, false);
    let message = param_as(cx, drop_result, 0, typed)?;
    glue::drop_in_place(cx, &func.ret, ir::field(b, st, message, at_result, "result")?)?;
    b.build_return(None)?;

    Ok(MessageParts {
        block: st,
        size: cx.layouts.struct_size_align(st).0,
        result_offset: cx.layouts.offset_of(st, at_result),
        run,
        drop_args,
        drop_result,
    })
}

impl<'ctx> FnEmitter<'_, 'ctx, '_> {
    /// One of `actor.start`, `actor.call` and `actor.send`, at `op`.
    pub(crate) fn actor_op(&mut self, op: OpId, kind: &OpKind) -> Result<(), Error> {
        let cx = self.cx;
        match kind {
            OpKind::ActorStart { dest, init, capacity } => {
                let desc =
                    *cx.actors.inits.get(*init).ok_or_else(|| Error::internal("a start without its descriptor"))?;
                let capacity = cx.context.i64_type().const_int(u64::from(*capacity), false);
                let actor = runtime_calls::call(cx, Rt::ActorStart, &[desc.into(), capacity.into()])?
                    .ok_or_else(|| Error::internal("nagi_rt_actor_start returns nothing"))?;
                self.store_local(*dest, actor)
            }
            OpKind::ActorCall { dest, actor, handler, args } => {
                let dest = dest.ok_or_else(|| Error::internal("an actor.call without its destination"))?;
                let started = self.message(Rt::ActorCall, *actor, *handler, args)?;
                self.await_runtime(op, started, Some(self.slot(dest)))
            }
            OpKind::ActorSend { actor, handler, args } => {
                let started = self.message(Rt::ActorSend, *actor, *handler, args)?;
                self.await_runtime(op, started, None)
            }
            OpKind::SupervisorChild { dest, tree, path } => {
                let table = cx.actors.supervisors.ok_or_else(|| Error::internal("a child without supervisors"))?;
                let i64t = cx.context.i64_type();
                let index = cx.low.supervisor_trees().iter().position(|t| t == tree).unwrap_or(0);
                let steps: Vec<_> = path.iter().map(|&s| i64t.const_int(u64::from(s), false)).collect();
                let steps = constant(cx, "nagi.path", i64t.const_array(&steps).into());
                let args = [
                    table.into(),
                    i64t.const_int(index as u64, false).into(),
                    steps.as_pointer_value().const_cast(cx.layouts.byte_ptr()).into(),
                    i64t.const_int(path.len() as u64, false).into(),
                ];
                let actor = runtime_calls::call(cx, Rt::SupervisorChild, &args)?
                    .ok_or_else(|| Error::internal("nagi_rt_supervisor_child returns nothing"))?;
                self.store_local(*dest, actor)
            }
            _ => Err(Error::internal("not an actor operation")),
        }
    }

    /// Fills a message block of `handler` with `args` and starts `rt` (`nagi_rt_actor_call` or
    /// `_send`) with it on `actor` (an `Actor<C>` or `&Actor<C>` local).
    /// Stores `args` into the first fields of the block `raw` of type `st` (a message's or a
    /// blocking task's), which then owns them.
    pub(crate) fn fill_block(
        &mut self,
        st: StructType<'ctx>,
        raw: PointerValue<'ctx>,
        args: &[Operand],
    ) -> Result<(), Error> {
        let b = &self.cx.builder;
        let typed = b.build_pointer_cast(raw, st.ptr_type(inkwell::AddressSpace::default()), "block")?;
        for (i, a) in args.iter().enumerate() {
            let v = self.operand(a)?;
            b.build_store(ir::field(b, st, typed, i as u32, "arg")?, v)?;
        }
        Ok(())
    }

    fn message(
        &mut self,
        rt: Rt,
        actor: LocalId,
        handler: FuncId,
        args: &[Operand],
    ) -> Result<PointerValue<'ctx>, Error> {
        let cx = self.cx;
        let b = &cx.builder;
        let (desc, st) =
            *cx.actors.handlers.get(handler).ok_or_else(|| Error::internal("a message without its descriptor"))?;
        let block = runtime_calls::call(cx, Rt::ActorMessage, &[desc.into()])?
            .ok_or_else(|| Error::internal("nagi_rt_actor_message returns nothing"))?
            .into_pointer_value();
        self.fill_block(st, block, args)?;
        let mut handle = self.load_local(actor)?;
        if self.func.locals[actor].ty.is_ref() {
            handle = ir::load(b, cx.layouts.byte_ptr().into(), handle.into_pointer_value(), "actor")?;
        }
        Ok(runtime_calls::call(cx, rt, &[handle.into(), desc.into(), block.into()])?
            .ok_or_else(|| Error::internal("an actor operation returns nothing"))?
            .into_pointer_value())
    }
}

//! A service on the LLVM path: the constant tables the runtime serves from, the handler guard,
//! and the C `main` that hands them to `nagi_rt_serve` (docs/c-abi.md, "Services"); and the C
//! `main` of a program whose `main` is async, which hands the tables and `main`'s frame to
//! `nagi_rt_main_async` ([`database_main`]).
//!
//! Per route the emitter writes an argument block type (the handler's parameters in order), a
//! parameter table (name, where the runtime binds it from — [`nagi_low::ParamSource`], the one
//! rule both emitters follow — its layout descriptor and its offset in the block), and four
//! functions over a handler frame: `start` (moves the bound arguments into a new frame),
//! `poll`, `drop` (a pending frame) and `finish` (a returned frame: drops the result, frees the
//! frame). For an async handler these are its own frame's (`frames.rs`); a sync handler gets a
//! small frame `{ i32 state, R result, args }` whose `poll` calls it once, made in room the
//! runtime gives `start` (the route's `frame_size`), so its `drop` and `finish` free nothing.
//! The runtime binds and answers with the same code as for the Rust path; the tables only tell
//! it the layouts.
//!
//! `nagi.guarded_poll(poll, frame, cx) -> i32` is the one place where emitted code is entered
//! from a request: it registers a `jmp_buf` with the runtime and calls `_setjmp`, so a trap
//! inside the handler comes back here by `longjmp` and answers 3, instead of unwinding through
//! frames that have no unwind tables. Otherwise it answers what the poll answered: 0 pending,
//! 1 ready, 2 failed (a database error; the frame is to be dropped).

use inkwell::attributes::AttributeLoc;
use inkwell::module::Linkage;
use inkwell::types::{BasicMetadataTypeEnum, BasicTypeEnum, StructType};
use inkwell::values::{BasicValueEnum, FunctionValue, PointerValue};
use nagi_abi::{param_source, poll};
use nagi_low::{ArenaGet, FunctionData, ParamSource, RouteDecl};

use crate::constants::{array_global, constant, fn_ptr, int, struct_of, text};
use crate::frames::{self, DONE, RESULT, STATE};
use crate::runtime_calls::{self, Rt};
use crate::{Cx, Error, descriptors, glue, ir, queues};

/// The size of the `jmp_buf` the guard reserves: glibc's is 200 bytes on x86-64 and 312 on
/// AArch64; 512 leaves room on every Linux target.
const JMP_BUF_WORDS: u32 = 64;

/// Writes the service tables and the C `main` that serves them.
pub(crate) fn emit(cx: &Cx<'_, '_>) -> Result<(), Error> {
    let guarded = guarded_poll(cx)?;
    let mut routes = Vec::with_capacity(cx.low.routes.len());
    for (index, route) in cx.low.routes.iter().enumerate() {
        routes.push(route_desc(cx, index, route)?);
    }
    let tables: Vec<BasicValueEnum> = cx.low.tables.iter().map(|t| table_desc(cx, t)).collect::<Result<_, _>>()?;
    let queues = queues::queue_descs(cx, routes.len(), |index, route| route_desc(cx, index, route))?;
    // The OpenAPI document: a null pointer and 0 when there is none.
    let openapi = match cx.openapi {
        Some(document) => text(cx, document),
        None => (cx.layouts.byte_ptr().const_null(), cx.context.i64_type().const_zero()),
    };
    let service = struct_of(
        cx,
        &[
            text(cx, &cx.low.name).0.into(),
            int(cx, cx.low.name.len() as u64),
            array_global(cx, "nagi.tables", &tables, table_type(cx))?.into(),
            int(cx, tables.len() as u64),
            array_global(cx, "nagi.routes", &routes, route_type(cx))?.into(),
            int(cx, routes.len() as u64),
            fn_ptr(cx, guarded).into(),
            array_global(cx, "nagi.queues", &queues, queues::queue_type(cx))?.into(),
            int(cx, queues.len() as u64),
            openapi.0.into(),
            openapi.1.into(),
        ],
    );
    let global = constant(cx, "nagi.service", service);
    let c_main = c_main(cx);
    cx.builder.position_at_end(cx.context.append_basic_block(c_main, "entry"));
    crate::config::declare(cx)?;
    let pointer = cx.builder.build_pointer_cast(global.as_pointer_value(), cx.layouts.byte_ptr(), "service")?;
    let status = runtime_calls::call(cx, Rt::Serve, &[pointer.into()])?
        .ok_or_else(|| Error::internal("nagi_rt_serve returns nothing"))?;
    cx.builder.build_return(Some(&status))?;
    Ok(())
}

/// The C `main` of a program whose `main` is async (a test build whose tests use the
/// database): the constant `nagi.program` (`ProgramDesc`: the tables, then `main`'s frame
/// functions `new`, `poll`, `drop` and `free`) handed to `nagi_rt_main_async`, which opens the
/// tables in an in-memory database and runs the frame (docs/c-abi.md, "A program whose `main`
/// is async").
pub(crate) fn database_main<'ctx>(cx: &Cx<'ctx, '_>, main: &frames::Frame<'ctx>) -> Result<(), Error> {
    let tables: Vec<BasicValueEnum> = cx.low.tables.iter().map(|t| table_desc(cx, t)).collect::<Result<_, _>>()?;
    let program = struct_of(
        cx,
        &[
            array_global(cx, "nagi.tables", &tables, table_type(cx))?.into(),
            int(cx, tables.len() as u64),
            fn_ptr(cx, main.new).into(),
            fn_ptr(cx, main.poll).into(),
            fn_ptr(cx, main.drop).into(),
            fn_ptr(cx, main.free).into(),
        ],
    );
    let global = constant(cx, "nagi.program", program);
    let c_main = c_main(cx);
    cx.builder.position_at_end(cx.context.append_basic_block(c_main, "entry"));
    crate::config::declare(cx)?;
    let pointer = cx.builder.build_pointer_cast(global.as_pointer_value(), cx.layouts.byte_ptr(), "program")?;
    let status = runtime_calls::call(cx, Rt::MainAsync, &[pointer.into()])?
        .ok_or_else(|| Error::internal("nagi_rt_main_async returns nothing"))?;
    cx.builder.build_return(Some(&status))?;
    Ok(())
}

/// Declares the C `int main(int argc, char **argv)`.
fn c_main<'ctx>(cx: &Cx<'ctx, '_>) -> FunctionValue<'ctx> {
    let i32t = cx.context.i32_type();
    let argv = cx.layouts.byte_ptr().ptr_type(inkwell::AddressSpace::default());
    let params: [BasicMetadataTypeEnum; 2] = [i32t.into(), argv.into()];
    let c_main = cx.module.add_function("main", i32t.fn_type(&params, false), Some(Linkage::External));
    cx.nounwind(c_main);
    c_main
}

/// `i32 nagi.guarded_poll(i32 (i8*, i8*)* poll, i8* frame, i8* cx)`, as the module doc says:
/// written once per module, for the routes and for the tasks (`tasks.rs`) alike.
pub(crate) fn guarded_poll<'ctx>(cx: &Cx<'ctx, '_>) -> Result<FunctionValue<'ctx>, Error> {
    if let Some(f) = cx.module.get_function("nagi.guarded_poll") {
        return Ok(f);
    }
    let c = cx.context;
    let bytes = cx.layouts.byte_ptr();
    let poll_type =
        c.i32_type().fn_type(&[bytes.into(), bytes.into()], false).ptr_type(inkwell::AddressSpace::default());
    let ty = c.i32_type().fn_type(&[poll_type.into(), bytes.into(), bytes.into()], false);
    let f = cx.module.add_function("nagi.guarded_poll", ty, Some(Linkage::Internal));
    let param = |i: u32| f.get_nth_param(i).ok_or_else(|| Error::internal("guarded_poll parameters"));
    let (poll, frame, task_cx) = (param(0)?.into_pointer_value(), param(1)?, param(2)?);
    guarded(cx, f, || {
        let callable = inkwell::values::CallableValue::try_from(poll)
            .map_err(|_| Error::internal("the poll pointer is not callable"))?;
        Ok(cx.call_value(callable, &[frame.into(), task_cx.into()], "poll")?.into_int_value())
    })?;
    Ok(f)
}

/// Writes the body of `f` (which returns `i32`): what `run` emits, under the trap guard. The
/// function registers a `jmp_buf` of its own frame with the runtime and calls `_setjmp`; on the
/// way in it returns what `run` computed, and after a trap (the runtime's `longjmp` back) 3.
/// It is `noinline`: inlined into a caller, the `jmp_buf` and the registers `_setjmp` saved
/// could belong to a frame that is gone by the time the runtime jumps.
pub(crate) fn guarded<'ctx>(
    cx: &Cx<'ctx, '_>,
    f: FunctionValue<'ctx>,
    run: impl FnOnce() -> Result<inkwell::values::IntValue<'ctx>, Error>,
) -> Result<(), Error> {
    let c = cx.context;
    let b = &cx.builder;
    cx.nounwind(f);
    f.add_attribute(AttributeLoc::Function, cx.attribute("noinline", 0));
    let setjmp = runtime_calls::declare(cx, Rt::SetJmp)?;
    setjmp.add_attribute(AttributeLoc::Function, cx.attribute("returns_twice", 0));
    b.position_at_end(c.append_basic_block(f, "entry"));
    let buf = b.build_alloca(c.i64_type().array_type(JMP_BUF_WORDS), "jmp_buf")?;
    if let Some(inst) = buf.as_instruction() {
        let _ = inst.set_alignment(16);
    }
    let buf = b.build_pointer_cast(buf, cx.layouts.byte_ptr(), "jmp_buf.bytes")?;
    let previous = runtime_calls::call(cx, Rt::GuardEnter, &[buf.into()])?
        .ok_or_else(|| Error::internal("nagi_rt_guard_enter returns nothing"))?;
    let site = b.build_call(setjmp, &[buf.into()], "jumped")?;
    site.add_attribute(AttributeLoc::Function, cx.attribute("returns_twice", 0));
    let jumped = site.try_as_basic_value().basic().ok_or_else(|| Error::internal("_setjmp returns nothing"))?;
    let go = c.append_basic_block(f, "run");
    let trapped = c.append_basic_block(f, "trapped");
    let zero = c.i32_type().const_zero();
    let is_jump = b.build_int_compare(inkwell::IntPredicate::NE, jumped.into_int_value(), zero, "is_jump")?;
    b.build_conditional_branch(is_jump, trapped, go)?;
    b.position_at_end(go);
    let answer = run()?;
    runtime_calls::call(cx, Rt::GuardLeave, &[previous.into()])?;
    b.build_return(Some(&answer))?;
    b.position_at_end(trapped);
    runtime_calls::call(cx, Rt::GuardLeave, &[previous.into()])?;
    b.build_return(Some(&frames::answer(cx, poll::TRAPPED)))?;
    Ok(())
}

/// The four frame functions of one route, where its result sits in a returned frame, and the
/// room its frame needs from the runtime (`(0, 0)`: `start` allocates it).
struct Adapters<'ctx> {
    start: FunctionValue<'ctx>,
    poll: FunctionValue<'ctx>,
    drop: FunctionValue<'ctx>,
    finish: FunctionValue<'ctx>,
    result_offset: u64,
    room: (u64, u32),
}

/// The constant `RouteDesc` of route number `index`.
fn route_desc<'ctx>(cx: &Cx<'ctx, '_>, index: usize, route: &RouteDecl) -> Result<BasicValueEnum<'ctx>, Error> {
    let handler = cx.low.functions.get(route.handler).ok_or_else(|| Error::internal("unknown route handler"))?;
    let field_types: Vec<BasicTypeEnum> = handler.param_types().map(|t| cx.layouts.llvm(t)).collect();
    let args = cx.context.opaque_struct_type(&format!("nagi.args.route{index}"));
    args.set_body(&field_types, false);
    let adapters = match cx.frames.get(route.handler) {
        Some(_) => async_adapters(cx, index, route, handler, args)?,
        None => sync_adapters(cx, index, route, handler, args)?,
    };
    let mut params = Vec::with_capacity(handler.params.len());
    for (i, &param) in handler.params.iter().enumerate() {
        let local = &handler.locals[param];
        let source = route.param_source(&local.name, &local.ty);
        let code = match source {
            ParamSource::Path => param_source::PATH,
            ParamSource::Query => param_source::QUERY,
            ParamSource::OptionalQuery => param_source::QUERY_OPT,
            ParamSource::Body => param_source::BODY,
            ParamSource::Header => param_source::HEADER,
            ParamSource::OptionalHeader => param_source::HEADER_OPT,
        };
        // A header parameter is looked up by its header's name, as the Rust path's binding does.
        let bound_name = match source {
            ParamSource::Header | ParamSource::OptionalHeader => RouteDecl::header_name(&local.name),
            _ => local.name.clone(),
        };
        let (name, name_len) = text(cx, &bound_name);
        params.push(struct_of(
            cx,
            &[
                name.into(),
                name_len.into(),
                int(cx, code),
                descriptors::descriptor(cx, &local.ty).into(),
                int(cx, cx.layouts.offset_of(args, i as u32)),
            ],
        ));
    }
    let param_table = array_global(cx, &format!("nagi.params.route{index}"), &params, param_type(cx))?;
    let (args_size, args_align) = cx.layouts.struct_size_align(args);
    let (method, method_len) = text(cx, route.method.name());
    let (path, path_len) = text(cx, &route.path);
    Ok(struct_of(
        cx,
        &[
            method.into(),
            method_len.into(),
            path.into(),
            path_len.into(),
            param_table.into(),
            int(cx, handler.params.len() as u64),
            int(cx, args_size),
            int(cx, u64::from(args_align)),
            int(cx, adapters.room.0),
            int(cx, u64::from(adapters.room.1)),
            fn_ptr(cx, adapters.start).into(),
            fn_ptr(cx, adapters.poll).into(),
            fn_ptr(cx, adapters.drop).into(),
            fn_ptr(cx, adapters.finish).into(),
            int(cx, adapters.result_offset),
            descriptors::descriptor(cx, &handler.ret).into(),
            int(cx, u64::from(route.success_status(&handler.ret))),
        ],
    ))
}

/// An internal function `nagi.route{index}.{what}` of type `ty`, positioned at its entry.
fn adapter<'ctx>(
    cx: &Cx<'ctx, '_>,
    index: usize,
    what: &str,
    ty: inkwell::types::FunctionType<'ctx>,
) -> FunctionValue<'ctx> {
    let f = cx.module.add_function(&format!("nagi.route{index}.{what}"), ty, Some(Linkage::Internal));
    cx.nounwind(f);
    cx.builder.position_at_end(cx.context.append_basic_block(f, "entry"));
    f
}

fn nth_pointer<'ctx>(f: FunctionValue<'ctx>, i: u32) -> Result<PointerValue<'ctx>, Error> {
    Ok(f.get_nth_param(i).ok_or_else(|| Error::internal("adapter parameters"))?.into_pointer_value())
}

/// The handler's arguments, loaded from the argument block at `raw`.
fn load_args<'ctx>(
    cx: &Cx<'ctx, '_>,
    handler: &FunctionData,
    args: StructType<'ctx>,
    block: PointerValue<'ctx>,
) -> Result<Vec<inkwell::values::BasicMetadataValueEnum<'ctx>>, Error> {
    let mut values = Vec::with_capacity(handler.params.len());
    for i in 0..handler.params.len() {
        values.push(ir::load_field(&cx.builder, args, block, i as u32, "arg")?.into());
    }
    Ok(values)
}

/// An async handler's own frame functions, with `start` loading the argument block into `new`
/// and `finish` dropping the result before `free`.
fn async_adapters<'ctx>(
    cx: &Cx<'ctx, '_>,
    index: usize,
    route: &RouteDecl,
    handler: &FunctionData,
    args: StructType<'ctx>,
) -> Result<Adapters<'ctx>, Error> {
    let b = &cx.builder;
    let frame = cx.frames.get(route.handler).ok_or_else(|| Error::internal("an async handler without a frame"))?;
    let bytes = cx.layouts.byte_ptr();
    let void = cx.context.void_type();
    // The room argument is null: an async frame lives on the heap, past the runtime's poll.
    let start = adapter(cx, index, "start", bytes.fn_type(&[bytes.into(), bytes.into()], false));
    let block =
        b.build_pointer_cast(nth_pointer(start, 0)?, args.ptr_type(inkwell::AddressSpace::default()), "args")?;
    let values = load_args(cx, handler, args, block)?;
    let raw = cx.call_value(frame.new, &values, "new")?;
    b.build_return(Some(&raw))?;
    let finish = adapter(cx, index, "finish", void.fn_type(&[bytes.into()], false));
    let raw = nth_pointer(finish, 0)?;
    let typed = frames::typed(cx, frame.st, raw)?;
    glue::drop_in_place(cx, &handler.ret, ir::field(b, frame.st, typed, RESULT, "result")?)?;
    b.build_call(frame.free, &[raw.into()], "")?;
    b.build_return(None)?;
    Ok(Adapters {
        start,
        poll: frame.poll,
        drop: frame.drop,
        finish,
        result_offset: cx.layouts.offset_of(frame.st, RESULT),
        room: (0, 0),
    })
}

/// A sync handler's frame `{ i32 state, R result, args }` and its functions: `poll` calls the
/// handler once. The frame is made in the runtime's room, which the runtime frees.
fn sync_adapters<'ctx>(
    cx: &Cx<'ctx, '_>,
    index: usize,
    route: &RouteDecl,
    handler: &FunctionData,
    args: StructType<'ctx>,
) -> Result<Adapters<'ctx>, Error> {
    let c = cx.context;
    let b = &cx.builder;
    let bytes = cx.layouts.byte_ptr();
    let void = c.void_type();
    let st = c.opaque_struct_type(&format!("nagi.frame.route{index}"));
    st.set_body(&[c.i32_type().into(), cx.layouts.llvm(&handler.ret), args.into()], false);
    let room = cx.layouts.struct_size_align(st);

    let start = adapter(cx, index, "start", bytes.fn_type(&[bytes.into(), bytes.into()], false));
    let block =
        b.build_pointer_cast(nth_pointer(start, 0)?, args.ptr_type(inkwell::AddressSpace::default()), "args")?;
    let raw = nth_pointer(start, 1)?;
    let typed = frames::typed(cx, st, raw)?;
    b.build_store(ir::field(b, st, typed, STATE, "state")?, c.i32_type().const_zero())?;
    let moved = ir::load(b, args.into(), block, "moved")?;
    b.build_store(ir::field(b, st, typed, 2, "args")?, moved)?;
    b.build_return(Some(&raw))?;

    let poll = adapter(cx, index, "poll", c.i32_type().fn_type(&[bytes.into(), bytes.into()], false));
    let typed = frames::typed(cx, st, nth_pointer(poll, 0)?)?;
    let block = ir::field(b, st, typed, 2, "args")?;
    let values = load_args(cx, handler, args, block)?;
    let site = b.build_call(cx.functions[route.handler], &values, "result")?;
    if let Some(result) = site.try_as_basic_value().basic() {
        b.build_store(ir::field(b, st, typed, RESULT, "result")?, result)?;
    }
    b.build_store(ir::field(b, st, typed, STATE, "state")?, c.i32_type().const_int(DONE, false))?;
    b.build_return(Some(&frames::answer(cx, poll::READY)))?;

    let drop = adapter(cx, index, "drop", void.fn_type(&[bytes.into()], false));
    let raw = nth_pointer(drop, 0)?;
    let typed = frames::typed(cx, st, raw)?;
    let block = ir::field(b, st, typed, 2, "args")?;
    // A frame that never ran still owns its arguments; one that ran moved them into the call.
    let state = ir::load_field(b, st, typed, STATE, "state")?.into_int_value();
    let fresh = b.build_int_compare(inkwell::IntPredicate::EQ, state, c.i32_type().const_zero(), "fresh")?;
    let drop_args = c.append_basic_block(drop, "drop.args");
    let done = c.append_basic_block(drop, "done");
    b.build_conditional_branch(fresh, drop_args, done)?;
    b.position_at_end(drop_args);
    for (i, ty) in handler.param_types().enumerate() {
        glue::drop_in_place(cx, ty, ir::field(b, args, block, i as u32, "arg")?)?;
    }
    b.build_unconditional_branch(done)?;
    b.position_at_end(done);
    b.build_return(None)?;

    let finish = adapter(cx, index, "finish", void.fn_type(&[bytes.into()], false));
    let raw = nth_pointer(finish, 0)?;
    let typed = frames::typed(cx, st, raw)?;
    glue::drop_in_place(cx, &handler.ret, ir::field(b, st, typed, RESULT, "result")?)?;
    b.build_return(None)?;
    Ok(Adapters { start, poll, drop, finish, result_offset: cx.layouts.offset_of(st, RESULT), room })
}

/// The constant `TableDesc` of a table: its name and `CREATE TABLE` statements (SQLite's and
/// PostgreSQL's), the same texts the Rust path gives the runtime.
fn table_desc<'ctx>(cx: &Cx<'ctx, '_>, table: &nagi_low::TableDecl) -> Result<BasicValueEnum<'ctx>, Error> {
    let class = cx.low.classes.get(table.class).ok_or_else(|| Error::internal("a table of an unknown class"))?;
    let key = class.fields.get(table.key as usize).ok_or_else(|| Error::internal("a table key out of range"))?;
    let fields = || class.fields.iter().map(|f| (f.name.as_str(), &f.ty));
    let sql = nagi_low::runtime::create_table_sql(&table.name, fields(), &key.name);
    let postgres = nagi_low::runtime::create_table_sql_postgres(&table.name, fields(), &key.name);
    let (name, name_len) = text(cx, &table.name);
    let (sql_ptr, sql_len) = text(cx, &sql);
    let (pg_ptr, pg_len) = text(cx, &postgres);
    Ok(struct_of(cx, &[name.into(), name_len.into(), sql_ptr.into(), sql_len.into(), pg_ptr.into(), pg_len.into()]))
}

fn table_type<'ctx>(cx: &Cx<'ctx, '_>) -> StructType<'ctx> {
    let (p, i) = (cx.layouts.byte_ptr().into(), cx.context.i64_type().into());
    cx.context.struct_type(&[p, i, p, i, p, i], false)
}

fn param_type<'ctx>(cx: &Cx<'ctx, '_>) -> StructType<'ctx> {
    let (p, i) = (cx.layouts.byte_ptr().into(), cx.context.i64_type().into());
    cx.context.struct_type(&[p, i, i, p, i], false)
}

fn route_type<'ctx>(cx: &Cx<'ctx, '_>) -> StructType<'ctx> {
    let (p, i) = (cx.layouts.byte_ptr().into(), cx.context.i64_type().into());
    cx.context.struct_type(&[p, i, p, i, p, i, i, i, i, i, p, p, p, p, i, p, i], false)
}

//! The runtime's C ABI as the emitted code sees it: one declaration per `nagi_rt_*` function
//! (declared on first use, so the IR lists only what the program calls), and the lowering of
//! Low's `rtcall` rows onto them.
//!
//! Conventions (the runtime's `cabi` module and `docs/c-abi.md` are the other half): sizes,
//! lengths and capacities are 64-bit; a `bool` crosses as an `i32` 0 or 1, which sidesteps the
//! question of who extends an `i1`; a string is passed as a pointer to its three-word
//! `%nagi.String`, or as `(ptr, len)` where the runtime only reads bytes; results that are
//! strings are written through an out-pointer rather than returned, because a three-word
//! struct returned by value is not lowered to the C convention by LLVM.

use inkwell::attributes::AttributeLoc;
use inkwell::types::BasicMetadataTypeEnum;
use inkwell::values::{BasicMetadataValueEnum, FunctionValue, IntValue, PointerValue};
use nagi_low::{Operand, RowGroup, RuntimeFn};

use crate::function::FnEmitter;
use crate::{Cx, Error};

/// A runtime entry point: a row of Low's runtime interface, or one of the helpers emitted code
/// calls on its own (allocation, strings, traps, the program entry).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Rt {
    /// A Low runtime function.
    Row(RuntimeFn),
    Alloc,
    Free,
    Grow,
    StrFrom,
    StrConcat,
    StrEq,
    Trap,
    IndexOutOfRange,
    StackSlow,
    Main,
    /// `nagi_rt_main_async`, the entry of a program whose `main` is async.
    MainAsync,
    /// `nagi_rt_serve`, the entry of a service.
    Serve,
    /// The handler guard around every poll of a route's frame (docs/c-abi.md, "Services").
    GuardEnter,
    GuardLeave,
    /// libc's `_setjmp`, which the guard calls (`returns_twice`).
    SetJmp,
    /// SQL argument lists, built before a statement starts.
    SqlArgs,
    SqlArgInt,
    SqlArgReal,
    SqlArgText,
    SqlArgNull,
    /// `nagi_rt_db_query` with `one = 1` (`db.query_one`), which shares the C function of
    /// `db.query`.
    DbQueryOne,
    /// A pending runtime operation: polled, finished into its destination, or dropped.
    OpPoll,
    OpFinish,
    OpDrop,
    /// `array.contains` on floats and on strings (the row's own function takes integers).
    ArrayContainsF64,
    ArrayContainsStr,
    /// The maps' index (runtime `cabi::maps`): lookups, insertion, removal, drop and clone.
    MapFindInt,
    MapFindStr,
    MapInsertInt,
    MapInsertStr,
    MapRemoveInt,
    MapRemoveStr,
    MapIndexFree,
    MapIndexClone,
    /// Scopes and tasks (runtime `cabi::tasks`): the operations of Low §8.1 and the drop glue
    /// of their handles.
    ScopeNew,
    ScopeDrop,
    ScopeEnd,
    TaskSpawn,
    TaskJoin,
    TaskDrop,
    TaskSpawnBlocking,
    /// Deferred calls (runtime `cabi::tasks`): Low §8.4's `defer.new` and the glue of a `Defer`.
    DeferNew,
    DeferDrop,
    /// Actors (runtime `cabi::actors`): Low §8.2's operations and the handle's glue.
    ActorStart,
    ActorMessage,
    ActorCall,
    ActorSend,
    ActorClone,
    ActorDrop,
    SupervisorChild,
    /// Job queues (runtime `cabi::queues`): Low §8.5's `queue.push`.
    QueuePush,
}

/// Parameter and result kinds of the C signatures.
#[derive(Clone, Copy)]
enum K {
    I32,
    I64,
    F64,
    Bytes,
    Str,
    MainFn,
}

/// The C name, its parameters, its result (`None`: void) and whether it never returns.
type Signature = (&'static str, &'static [K], Option<K>, bool);

impl Rt {
    /// The C signature.
    fn signature(self) -> Signature {
        use K::*;
        match self {
            Rt::Row(func) => row_signature(func),
            Rt::Alloc => ("nagi_rt_alloc", &[I64, I64], Some(Bytes), false),
            Rt::Free => ("nagi_rt_free", &[Bytes, I64, I64], None, false),
            Rt::Grow => ("nagi_rt_grow", &[Bytes, I64, I64], None, false),
            Rt::StrFrom => ("nagi_rt_str_from", &[Str, Bytes, I64], None, false),
            Rt::StrConcat => ("nagi_rt_str_concat", &[Str, Str, Str], None, false),
            Rt::StrEq => ("nagi_rt_str_eq", &[Str, Str], Some(I32), false),
            Rt::Trap => ("nagi_rt_trap", &[Bytes, I64], None, true),
            Rt::IndexOutOfRange => ("nagi_rt_index_out_of_range", &[I64, I64], None, true),
            Rt::StackSlow => ("nagi_rt_stack_slow", &[I64, Bytes], None, false),
            Rt::Main => ("nagi_rt_main", &[MainFn], Some(I32), false),
            Rt::MainAsync => ("nagi_rt_main_async", &[Bytes], Some(I32), false),
            Rt::Serve => ("nagi_rt_serve", &[Bytes], Some(I32), false),
            Rt::GuardEnter => ("nagi_rt_guard_enter", &[Bytes], Some(Bytes), false),
            Rt::GuardLeave => ("nagi_rt_guard_leave", &[Bytes], None, false),
            Rt::SetJmp => ("_setjmp", &[Bytes], Some(I32), false),
            Rt::SqlArgs => ("nagi_rt_sql_args", &[], Some(Bytes), false),
            Rt::SqlArgInt => ("nagi_rt_sql_arg_int", &[Bytes, I64], None, false),
            Rt::SqlArgReal => ("nagi_rt_sql_arg_real", &[Bytes, F64], None, false),
            Rt::SqlArgText => ("nagi_rt_sql_arg_text", &[Bytes, Bytes, I64], None, false),
            Rt::SqlArgNull => ("nagi_rt_sql_arg_null", &[Bytes], None, false),
            Rt::DbQueryOne => ("nagi_rt_db_query", &[Bytes, I64, Bytes, Bytes, I32], Some(Bytes), false),
            Rt::OpPoll => ("nagi_rt_op_poll", &[Bytes, Bytes], Some(I32), false),
            Rt::OpFinish => ("nagi_rt_op_finish", &[Bytes, Bytes], None, false),
            Rt::OpDrop => ("nagi_rt_op_drop", &[Bytes], None, false),
            Rt::ArrayContainsF64 => ("nagi_rt_array_contains_f64", &[Bytes, F64], Some(I32), false),
            Rt::ArrayContainsStr => ("nagi_rt_array_contains_str", &[Bytes, Str], Some(I32), false),
            Rt::MapFindInt => ("nagi_rt_map_find_int", &[Bytes, I64], Some(I64), false),
            Rt::MapFindStr => ("nagi_rt_map_find_str", &[Bytes, Str], Some(I64), false),
            Rt::MapInsertInt => ("nagi_rt_map_insert_int", &[Bytes, I64, I64, I64], Some(I64), false),
            Rt::MapInsertStr => ("nagi_rt_map_insert_str", &[Bytes, Str, I64, I64], Some(I64), false),
            Rt::MapRemoveInt => ("nagi_rt_map_remove_int", &[Bytes, I64, Bytes, I64], Some(I32), false),
            Rt::MapRemoveStr => ("nagi_rt_map_remove_str", &[Bytes, Str, Bytes, I64], Some(I32), false),
            Rt::MapIndexFree => ("nagi_rt_map_index_free", &[Bytes], None, false),
            Rt::MapIndexClone => ("nagi_rt_map_index_clone", &[Bytes], Some(Bytes), false),
            Rt::ScopeNew => ("nagi_rt_scope_new", &[], Some(Bytes), false),
            Rt::ScopeDrop => ("nagi_rt_scope_drop", &[Bytes], None, false),
            Rt::ScopeEnd => ("nagi_rt_scope_end", &[Bytes], Some(Bytes), false),
            Rt::TaskSpawn => ("nagi_rt_task_spawn", &[Bytes, Bytes, Bytes], Some(Bytes), false),
            Rt::TaskJoin => ("nagi_rt_task_join", &[Bytes], Some(Bytes), false),
            Rt::TaskDrop => ("nagi_rt_task_drop", &[Bytes], None, false),
            Rt::TaskSpawnBlocking => ("nagi_rt_task_spawn_blocking", &[Bytes, Bytes, Bytes], Some(Bytes), false),
            Rt::DeferNew => ("nagi_rt_defer_new", &[Bytes, Bytes], Some(Bytes), false),
            Rt::DeferDrop => ("nagi_rt_defer_drop", &[Bytes], None, false),
            Rt::ActorStart => ("nagi_rt_actor_start", &[Bytes, I64], Some(Bytes), false),
            Rt::ActorMessage => ("nagi_rt_actor_message", &[Bytes], Some(Bytes), false),
            Rt::ActorCall => ("nagi_rt_actor_call", &[Bytes, Bytes, Bytes], Some(Bytes), false),
            Rt::ActorSend => ("nagi_rt_actor_send", &[Bytes, Bytes, Bytes], Some(Bytes), false),
            Rt::ActorClone => ("nagi_rt_actor_clone", &[Bytes], Some(Bytes), false),
            Rt::ActorDrop => ("nagi_rt_actor_drop", &[Bytes], None, false),
            Rt::SupervisorChild => ("nagi_rt_supervisor_child", &[Bytes, I64, Bytes, I64], Some(Bytes), false),
            Rt::QueuePush => ("nagi_rt_queue_push", &[Bytes, I64, Bytes, Bytes, I64], Some(Bytes), false),
        }
    }
}

/// The C-ABI function of each Low runtime function, keyed by the same enum the verifier and the
/// Rust emitter match on.
fn row_signature(func: RuntimeFn) -> Signature {
    use K::*;
    match func {
        RuntimeFn::PrintI32 => ("nagi_rt_print_i32", &[I32], None, false),
        RuntimeFn::PrintI64 => ("nagi_rt_print_i64", &[I64], None, false),
        RuntimeFn::PrintF64 => ("nagi_rt_print_f64", &[F64], None, false),
        RuntimeFn::PrintBool => ("nagi_rt_print_bool", &[I32], None, false),
        RuntimeFn::PrintStr => ("nagi_rt_print_str", &[Bytes, I64], None, false),
        RuntimeFn::HttpFail => ("nagi_rt_http_fail", &[I64, Bytes, I64], None, false),
        RuntimeFn::HttpClearFailure => ("nagi_rt_http_clear_failure", &[], None, false),
        RuntimeFn::HttpSetHeader => ("nagi_rt_http_set_header", &[Bytes, I64, Bytes, I64], None, false),
        RuntimeFn::TestSelected => ("nagi_rt_test_selected", &[], Some(I64), false),
        RuntimeFn::TestFailed => ("nagi_rt_test_failed", &[], None, false),
        RuntimeFn::TestAssertFailed => ("nagi_rt_test_assert_failed", &[Bytes, I64], None, false),
        RuntimeFn::FmtI32 => ("nagi_rt_fmt_i32", &[Str, I32], None, false),
        RuntimeFn::FmtI64 => ("nagi_rt_fmt_i64", &[Str, I64], None, false),
        RuntimeFn::FmtF64 => ("nagi_rt_fmt_f64", &[Str, F64], None, false),
        RuntimeFn::FmtBool => ("nagi_rt_fmt_bool", &[Str, I32], None, false),
        // The string library: an owned result through the out-pointer first, a bool returned.
        RuntimeFn::StrContains => ("nagi_rt_str_contains", &[Str, Str], Some(I32), false),
        RuntimeFn::StrStartsWith => ("nagi_rt_str_starts_with", &[Str, Str], Some(I32), false),
        RuntimeFn::StrEndsWith => ("nagi_rt_str_ends_with", &[Str, Str], Some(I32), false),
        RuntimeFn::StrFind => ("nagi_rt_str_find", &[Bytes, Str, Str], None, false),
        RuntimeFn::StrSplit => ("nagi_rt_str_split", &[Bytes, Str, Str], None, false),
        RuntimeFn::StrTrim => ("nagi_rt_str_trim", &[Str, Str], None, false),
        RuntimeFn::StrToLower => ("nagi_rt_str_to_lower", &[Str, Str], None, false),
        RuntimeFn::StrToUpper => ("nagi_rt_str_to_upper", &[Str, Str], None, false),
        RuntimeFn::StrReplace => ("nagi_rt_str_replace", &[Str, Str, Str, Str], None, false),
        RuntimeFn::StrJoin => ("nagi_rt_str_join", &[Str, Bytes, Str], None, false),
        RuntimeFn::StrSlice => ("nagi_rt_str_slice", &[Str, Str, I64, I64], None, false),
        RuntimeFn::StrParseI64 => ("nagi_rt_str_parse_i64", &[Bytes, Str], None, false),
        RuntimeFn::StrParseF64 => ("nagi_rt_str_parse_f64", &[Bytes, Str], None, false),
        // The array library: the array by pointer, then what the runtime needs to know of its
        // elements (a kind, a size, a key offset), a bool returned as an i32.
        RuntimeFn::ArraySort => ("nagi_rt_array_sort", &[Bytes, I32], None, false),
        RuntimeFn::ArraySortBy => ("nagi_rt_array_sort_by", &[Bytes, I64, I64, I32], None, false),
        RuntimeFn::ArrayReverse => ("nagi_rt_array_reverse", &[Bytes, I64], None, false),
        RuntimeFn::ArrayContains => ("nagi_rt_array_contains_int", &[Bytes, I32, I64], Some(I32), false),
        RuntimeFn::ArraySlice => ("nagi_rt_array_slice", &[Bytes, Bytes, I64, I64, I64, I64, Bytes], None, false),
        RuntimeFn::JsonEncode => ("nagi_rt_json_encode", &[Str, Bytes, Bytes], None, false),
        RuntimeFn::JsonDecode => ("nagi_rt_json_decode", &[Bytes, Bytes, I64, Bytes], None, false),
        RuntimeFn::DbExec => ("nagi_rt_db_exec", &[Bytes, I64, Bytes], Some(Bytes), false),
        RuntimeFn::DbExecCommit => ("nagi_rt_db_exec_commit", &[Bytes, I64, Bytes], Some(Bytes), false),
        RuntimeFn::DbQuery | RuntimeFn::DbQueryOne => {
            ("nagi_rt_db_query", &[Bytes, I64, Bytes, Bytes, I32], Some(Bytes), false)
        }
        RuntimeFn::TimeSleep => ("nagi_rt_time_sleep", &[I64], Some(Bytes), false),
        RuntimeFn::DbBegin => ("nagi_rt_db_begin", &[], Some(Bytes), false),
        RuntimeFn::DbCommit => ("nagi_rt_db_commit", &[], Some(Bytes), false),
        RuntimeFn::DbRollback => ("nagi_rt_db_rollback", &[], Some(Bytes), false),
        RuntimeFn::QueueDeadLetters => ("nagi_rt_queue_dead_letters", &[Bytes, I64, Bytes], Some(Bytes), false),
        RuntimeFn::QueueRetry => ("nagi_rt_queue_retry", &[Bytes, I64, I64], Some(Bytes), false),
    }
}

/// The declaration of `rt` in the module, added on first use.
pub(crate) fn declare<'ctx>(cx: &Cx<'ctx, '_>, rt: Rt) -> Result<FunctionValue<'ctx>, Error> {
    let (name, params, ret, noreturn) = rt.signature();
    if let Some(f) = cx.runtime.borrow().get(name) {
        return Ok(*f);
    }
    let c = cx.context;
    let kind = |k: K| -> BasicMetadataTypeEnum<'ctx> {
        match k {
            K::I32 => c.i32_type().into(),
            K::I64 => c.i64_type().into(),
            K::F64 => c.f64_type().into(),
            K::Bytes => cx.layouts.byte_ptr().into(),
            K::Str => cx.layouts.string().ptr_type(inkwell::AddressSpace::default()).into(),
            K::MainFn => c.void_type().fn_type(&[], false).ptr_type(inkwell::AddressSpace::default()).into(),
        }
    };
    let params: Vec<BasicMetadataTypeEnum> = params.iter().map(|k| kind(*k)).collect();
    let fn_type = match ret {
        None => c.void_type().fn_type(&params, false),
        Some(K::I32) => c.i32_type().fn_type(&params, false),
        Some(K::Bytes) => cx.layouts.byte_ptr().fn_type(&params, false),
        Some(_) => c.i64_type().fn_type(&params, false),
    };
    let f = cx.module.add_function(name, fn_type, None);
    cx.nounwind(f);
    if noreturn {
        f.add_attribute(AttributeLoc::Function, cx.attribute("noreturn", 0));
        f.add_attribute(AttributeLoc::Function, cx.attribute("cold", 0));
    }
    cx.runtime.borrow_mut().insert(name, f);
    Ok(f)
}

/// Calls `rt` with `args`; the result, if it has one.
pub(crate) fn call<'ctx>(
    cx: &Cx<'ctx, '_>,
    rt: Rt,
    args: &[BasicMetadataValueEnum<'ctx>],
) -> Result<Option<inkwell::values::BasicValueEnum<'ctx>>, Error> {
    let f = declare(cx, rt)?;
    let site = cx.builder.build_call(f, args, "")?;
    Ok(site.try_as_basic_value().basic())
}

/// Ends the program with `message` (a trap): the runtime prints `error: <message>` after
/// flushing stdout and exits with status 101. The current block ends with `unreachable`.
pub(crate) fn trap<'ctx>(cx: &Cx<'ctx, '_>, message: &str) -> Result<(), Error> {
    let (ptr, len) = literal(cx, message)?;
    call(cx, Rt::Trap, &[ptr.into(), len.into()])?;
    cx.builder.build_unreachable()?;
    Ok(())
}

/// A pointer to the bytes of a constant string and its length; equal literals share one global.
pub(crate) fn literal<'ctx>(cx: &Cx<'ctx, '_>, text: &str) -> Result<(PointerValue<'ctx>, IntValue<'ctx>), Error> {
    let existing = cx.strings.borrow().get(text).copied();
    let global = match existing {
        Some(g) => g,
        None => {
            let value = cx.context.const_string(text.as_bytes(), false);
            let g = cx.module.add_global(value.get_type(), None, "str");
            g.set_initializer(&value);
            g.set_constant(true);
            g.set_linkage(inkwell::module::Linkage::Private);
            g.set_unnamed_addr(true);
            cx.strings.borrow_mut().insert(text.to_string(), g);
            g
        }
    };
    let ptr = cx.builder.build_pointer_cast(global.as_pointer_value(), cx.layouts.byte_ptr(), "lit")?;
    Ok((ptr, cx.context.i64_type().const_int(text.len() as u64, false)))
}

impl<'ctx> FnEmitter<'_, 'ctx, '_> {
    /// Lowers `rtcall`: printing, formatting and JSON here, the database in `database.rs`.
    pub(crate) fn runtime_call(
        &mut self,
        op: nagi_low::OpId,
        dest: Option<nagi_low::LocalId>,
        func: RuntimeFn,
        class: Option<nagi_low::ClassId>,
        args: &[Operand],
    ) -> Result<(), Error> {
        let cx = self.cx;
        // Printing and formatting rows, and whether the row writes a string.
        let is_fmt = match func.group() {
            RowGroup::Json => return self.json_call(dest, func, class, args),
            RowGroup::Strings => return self.string_call(dest, func, args),
            RowGroup::Arrays => return self.array_call(dest, func, class, args),
            RowGroup::Database => return self.database_call(op, dest, func, class, args),
            RowGroup::Time => return self.sleep(op, dest, args),
            RowGroup::Http | RowGroup::Test => return self.bytes_call(dest, func, args),
            RowGroup::Print => false,
            RowGroup::Format => true,
        };
        let rt = Rt::Row(func);
        if func == RuntimeFn::PrintStr {
            let place = self.string_place(args)?;
            let string = cx.layouts.string();
            let ptr = crate::ir::load_field(&cx.builder, string, place, 0, "s.ptr")?;
            let len = crate::ir::load_field(&cx.builder, string, place, 1, "s.len")?;
            call(cx, rt, &[ptr.into(), len.into()])?;
            return self.store_unit(dest);
        }
        let arg = args.first().ok_or_else(|| Error::internal(format!("rtcall {} lacks its argument", func.name())))?;
        let mut value: BasicMetadataValueEnum<'ctx> = self.operand(arg)?.into();
        if matches!(func, RuntimeFn::PrintBool | RuntimeFn::FmtBool) {
            // A bool crosses the C ABI as an i32 0 or 1.
            value = cx.builder.build_int_z_extend(value.into_int_value(), cx.context.i32_type(), "b")?.into();
        }
        if is_fmt {
            let dest = dest.ok_or_else(|| Error::internal("fmt without a destination"))?;
            call(cx, rt, &[self.slot(dest).into(), value])?;
            Ok(())
        } else {
            call(cx, rt, &[value])?;
            self.store_unit(dest)
        }
    }

    /// A row whose C function takes each `i64` by value and each string as its bytes (pointer
    /// and length), and returns nothing or an `i64`: `http.*` and `test.*`.
    fn bytes_call(&mut self, dest: Option<nagi_low::LocalId>, func: RuntimeFn, args: &[Operand]) -> Result<(), Error> {
        let cx = self.cx;
        let mut values: Vec<BasicMetadataValueEnum<'ctx>> = Vec::with_capacity(4);
        for (i, param) in func.data().params.iter().enumerate() {
            if *param == nagi_low::RtType::I64 {
                let arg =
                    args.get(i).ok_or_else(|| Error::internal(format!("rtcall {} lacks an argument", func.name())))?;
                values.push(self.operand(arg)?.into());
            } else {
                let place = self.string_place(&args[i..])?;
                let string = cx.layouts.string();
                values.push(crate::ir::load_field(&cx.builder, string, place, 0, "s.ptr")?.into());
                values.push(crate::ir::load_field(&cx.builder, string, place, 1, "s.len")?.into());
            }
        }
        match (call(cx, Rt::Row(func), &values)?, dest) {
            (Some(result), Some(dest)) => self.store_local(dest, result),
            (_, dest) => self.store_unit(dest),
        }
    }

    /// `json.encode<C>(&C) -> String` and `json.decode<C>(&str) -> Option<C>`, through the
    /// runtime with the layout descriptor of `C` (or of `Option<C>`).
    fn json_call(
        &mut self,
        dest: Option<nagi_low::LocalId>,
        func: RuntimeFn,
        class: Option<nagi_low::ClassId>,
        args: &[Operand],
    ) -> Result<(), Error> {
        let cx = self.cx;
        let b = &cx.builder;
        let class = nagi_low::Type::Class(class.ok_or_else(|| Error::internal("json without a class"))?);
        let dest = dest.ok_or_else(|| Error::internal("json without a destination"))?;
        let arg = self.string_place(args)?;
        if func == RuntimeFn::JsonEncode {
            let value = b.build_pointer_cast(arg, cx.layouts.byte_ptr(), "value")?;
            let desc = crate::descriptors::descriptor(cx, &class);
            call(cx, Rt::Row(RuntimeFn::JsonEncode), &[self.slot(dest).into(), value.into(), desc.into()])?;
        } else {
            let string = cx.layouts.string();
            let ptr = crate::ir::load_field(b, string, arg, 0, "s.ptr")?;
            let len = crate::ir::load_field(b, string, arg, 1, "s.len")?;
            let out = b.build_pointer_cast(self.slot(dest), cx.layouts.byte_ptr(), "out")?;
            let desc = crate::descriptors::descriptor(cx, &nagi_low::Type::Option(Box::new(class)));
            call(cx, Rt::Row(RuntimeFn::JsonDecode), &[out.into(), ptr.into(), len.into(), desc.into()])?;
        }
        Ok(())
    }

    /// A row of the string library: the destination's slot as the out-pointer (unless the row
    /// returns a bool, which comes back as an `i32`), then each argument, a reference as the
    /// pointer to its place and an `i64` by value, in the C signature's pointer types.
    fn string_call(&mut self, dest: Option<nagi_low::LocalId>, func: RuntimeFn, args: &[Operand]) -> Result<(), Error> {
        let cx = self.cx;
        let dest = dest.ok_or_else(|| Error::internal(format!("rtcall {} without a destination", func.name())))?;
        let (_, kinds, _, _) = row_signature(func);
        let returns_bool = func.data().ret == nagi_low::RtType::Bool;
        let pointer = |ptr: PointerValue<'ctx>, kind: K| -> Result<BasicMetadataValueEnum<'ctx>, Error> {
            let ty = match kind {
                K::Str => cx.layouts.string().ptr_type(inkwell::AddressSpace::default()),
                _ => cx.layouts.byte_ptr(),
            };
            Ok(cx.builder.build_pointer_cast(ptr, ty, "arg")?.into())
        };
        let mut values = Vec::with_capacity(kinds.len());
        if !returns_bool {
            values.push(pointer(self.slot(dest), kinds[0])?);
        }
        for arg in args {
            let kind = kinds[values.len()];
            let value = match (kind, arg) {
                (K::I64, _) => self.operand(arg)?.into(),
                (_, Operand::Local(l)) => pointer(self.place(*l)?.0, kind)?,
                _ => return Err(Error::internal(format!("rtcall {}: a reference that is not a local", func.name()))),
            };
            values.push(value);
        }
        let result = call(cx, Rt::Row(func), &values)?;
        if returns_bool {
            let result = result.ok_or_else(|| Error::internal(format!("{} returns nothing", func.name())))?;
            let zero = cx.context.i32_type().const_zero();
            let truth = cx.builder.build_int_compare(inkwell::IntPredicate::NE, result.into_int_value(), zero, "b")?;
            self.store_local(dest, truth.into())?;
        }
        Ok(())
    }

    /// The place of the first argument of a string or class row (a reference local).
    pub(crate) fn string_place(&mut self, args: &[Operand]) -> Result<PointerValue<'ctx>, Error> {
        match args.first() {
            Some(Operand::Local(l)) => self.place(*l).map(|(p, _)| p),
            _ => Err(Error::internal("a reference argument that is not a local")),
        }
    }
}

//! The runtime's C ABI as the emitted code sees it: one declaration per `nagi_rt_*` function
//! (declared on first use, so the IR lists only what the program calls), with the signatures of
//! `nagi_abi`'s list. A leaf: the lowering of Low's `rtcall` rows onto these functions is
//! `rtcalls.rs`.
//!
//! Conventions (the runtime's `cabi` module and `docs/c-abi.md` are the other half): sizes,
//! lengths and capacities are 64-bit; a `bool` crosses as an `i32` 0 or 1, which sidesteps the
//! question of who extends an `i1`; a string is passed as a pointer to its three-word
//! `%nagi.String`, or as `(ptr, len)` where the runtime only reads bytes; results that are
//! strings are written through an out-pointer rather than returned, because a three-word
//! struct returned by value is not lowered to the C convention by LLVM.

use inkwell::attributes::AttributeLoc;
use inkwell::types::{BasicMetadataTypeEnum, BasicType, BasicTypeEnum};
use inkwell::values::{BasicMetadataValueEnum, FunctionValue, IntValue, PointerValue};
use nagi_abi::{CResult, CType, Function};
use nagi_low::RuntimeFn;

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
    /// `nagi_rt_config_declare`, which the C `main` calls first when the module has `config`
    /// lines.
    ConfigDeclare,
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
    SqlArgTime,
    SqlArgUuid,
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

/// A C function `declare` adds: the runtime's, or libc's `_setjmp`.
enum CFunction {
    Runtime(Function),
    SetJmp,
}

/// libc's `_setjmp(env) -> int`, which the handler guard calls; not the runtime's, so not in
/// `nagi_abi`'s list.
const SETJMP: (&str, &[CType], CResult) = ("_setjmp", &[CType::Ptr], CResult::Value(CType::I32));

impl Rt {
    /// The C function this entry calls.
    fn function(self) -> CFunction {
        CFunction::Runtime(match self {
            Rt::Row(func) => row_function(func),
            Rt::Alloc => Function::Alloc,
            Rt::Free => Function::Free,
            Rt::Grow => Function::Grow,
            Rt::StrFrom => Function::StrFrom,
            Rt::StrConcat => Function::StrConcat,
            Rt::StrEq => Function::StrEq,
            Rt::Trap => Function::Trap,
            Rt::IndexOutOfRange => Function::IndexOutOfRange,
            Rt::StackSlow => Function::StackSlow,
            Rt::Main => Function::Main,
            Rt::MainAsync => Function::MainAsync,
            Rt::Serve => Function::Serve,
            Rt::ConfigDeclare => Function::ConfigDeclare,
            Rt::GuardEnter => Function::GuardEnter,
            Rt::GuardLeave => Function::GuardLeave,
            Rt::SetJmp => return CFunction::SetJmp,
            Rt::SqlArgs => Function::SqlArgs,
            Rt::SqlArgInt => Function::SqlArgInt,
            Rt::SqlArgReal => Function::SqlArgReal,
            Rt::SqlArgText => Function::SqlArgText,
            Rt::SqlArgTime => Function::SqlArgTime,
            Rt::SqlArgUuid => Function::SqlArgUuid,
            Rt::SqlArgNull => Function::SqlArgNull,
            Rt::DbQueryOne => Function::DbQuery,
            Rt::OpPoll => Function::OpPoll,
            Rt::OpFinish => Function::OpFinish,
            Rt::OpDrop => Function::OpDrop,
            Rt::ArrayContainsF64 => Function::ArrayContainsF64,
            Rt::ArrayContainsStr => Function::ArrayContainsStr,
            Rt::MapFindInt => Function::MapFindInt,
            Rt::MapFindStr => Function::MapFindStr,
            Rt::MapInsertInt => Function::MapInsertInt,
            Rt::MapInsertStr => Function::MapInsertStr,
            Rt::MapRemoveInt => Function::MapRemoveInt,
            Rt::MapRemoveStr => Function::MapRemoveStr,
            Rt::MapIndexFree => Function::MapIndexFree,
            Rt::MapIndexClone => Function::MapIndexClone,
            Rt::ScopeNew => Function::ScopeNew,
            Rt::ScopeDrop => Function::ScopeDrop,
            Rt::ScopeEnd => Function::ScopeEnd,
            Rt::TaskSpawn => Function::TaskSpawn,
            Rt::TaskJoin => Function::TaskJoin,
            Rt::TaskDrop => Function::TaskDrop,
            Rt::TaskSpawnBlocking => Function::TaskSpawnBlocking,
            Rt::DeferNew => Function::DeferNew,
            Rt::DeferDrop => Function::DeferDrop,
            Rt::ActorStart => Function::ActorStart,
            Rt::ActorMessage => Function::ActorMessage,
            Rt::ActorCall => Function::ActorCall,
            Rt::ActorSend => Function::ActorSend,
            Rt::ActorClone => Function::ActorClone,
            Rt::ActorDrop => Function::ActorDrop,
            Rt::SupervisorChild => Function::SupervisorChild,
            Rt::QueuePush => Function::QueuePush,
        })
    }
}

/// The C-ABI function of each Low runtime function, keyed by the same enum the verifier and the
/// Rust emitter match on.
pub(crate) fn row_function(func: RuntimeFn) -> Function {
    match func {
        RuntimeFn::PrintI32 => Function::PrintI32,
        RuntimeFn::PrintI64 => Function::PrintI64,
        RuntimeFn::PrintF64 => Function::PrintF64,
        RuntimeFn::PrintBool => Function::PrintBool,
        RuntimeFn::PrintStr => Function::PrintStr,
        RuntimeFn::HttpFail => Function::HttpFail,
        RuntimeFn::HttpClearFailure => Function::HttpClearFailure,
        RuntimeFn::HttpFailureStatus => Function::HttpFailureStatus,
        RuntimeFn::HttpTakeFailure => Function::HttpTakeFailure,
        RuntimeFn::HttpSetHeader => Function::HttpSetHeader,
        RuntimeFn::TestSelected => Function::TestSelected,
        RuntimeFn::TestFailed => Function::TestFailed,
        RuntimeFn::TestAssertFailed => Function::TestAssertFailed,
        RuntimeFn::FmtI32 => Function::FmtI32,
        RuntimeFn::FmtI64 => Function::FmtI64,
        RuntimeFn::FmtF64 => Function::FmtF64,
        RuntimeFn::FmtBool => Function::FmtBool,
        // The string library: an owned result through the out-pointer first, a bool returned.
        RuntimeFn::StrContains => Function::StrContains,
        RuntimeFn::StrStartsWith => Function::StrStartsWith,
        RuntimeFn::StrEndsWith => Function::StrEndsWith,
        RuntimeFn::StrFind => Function::StrFind,
        RuntimeFn::StrSplit => Function::StrSplit,
        RuntimeFn::StrTrim => Function::StrTrim,
        RuntimeFn::StrToLower => Function::StrToLower,
        RuntimeFn::StrToUpper => Function::StrToUpper,
        RuntimeFn::StrReplace => Function::StrReplace,
        RuntimeFn::StrJoin => Function::StrJoin,
        RuntimeFn::StrSlice => Function::StrSlice,
        RuntimeFn::StrParseI64 => Function::StrParseI64,
        RuntimeFn::StrParseF64 => Function::StrParseF64,
        // The array library: the array by pointer, then what the runtime needs to know of its
        // elements (a kind, a size, a key offset), a bool returned as an i32.
        RuntimeFn::ArraySort => Function::ArraySort,
        RuntimeFn::ArraySortBy => Function::ArraySortBy,
        RuntimeFn::ArraySortByKeys => Function::ArraySortByKeys,
        RuntimeFn::ArrayReverse => Function::ArrayReverse,
        RuntimeFn::ArrayContains => Function::ArrayContainsInt,
        RuntimeFn::ArraySlice => Function::ArraySlice,
        RuntimeFn::JsonEncode => Function::JsonEncode,
        RuntimeFn::JsonDecode => Function::JsonDecode,
        RuntimeFn::DbExec => Function::DbExec,
        RuntimeFn::DbExecCommit => Function::DbExecCommit,
        RuntimeFn::DbQuery | RuntimeFn::DbQueryOne => Function::DbQuery,
        RuntimeFn::TimeSleep => Function::TimeSleep,
        // Outbound HTTP: one function for both rows, told the answer's type by a descriptor.
        RuntimeFn::HttpFetch | RuntimeFn::HttpFetchJson => Function::HttpFetch,
        // The configuration: a value by its position, a text through the out-pointer, a bool as
        // an i32.
        // Ids: a `Uuid` by pointer to its 16 bytes, a new one or a text through the out-pointer.
        RuntimeFn::UuidV7 => Function::UuidV7,
        RuntimeFn::UuidV4 => Function::UuidV4,
        RuntimeFn::UuidEq => Function::UuidEq,
        RuntimeFn::UuidFormat => Function::UuidFormat,
        RuntimeFn::UuidParse => Function::UuidParse,
        RuntimeFn::ConfigStr => Function::ConfigStr,
        RuntimeFn::ConfigI64 => Function::ConfigI64,
        RuntimeFn::ConfigF64 => Function::ConfigF64,
        RuntimeFn::ConfigBool => Function::ConfigBool,
        RuntimeFn::ConfigDuration => Function::ConfigDuration,
        // The clock: `Time` and `Duration` cross as `i64` microseconds, a text through the
        // out-pointer.
        RuntimeFn::TimeNow => Function::TimeNow,
        RuntimeFn::TimeMonotonic => Function::TimeMonotonic,
        RuntimeFn::TimeFromMicros => Function::TimeFromMicros,
        RuntimeFn::TimeMicros => Function::TimeMicros,
        RuntimeFn::DurationFromMicros => Function::DurationFromMicros,
        RuntimeFn::DurationMicros => Function::DurationMicros,
        RuntimeFn::TimeFormat => Function::TimeFormat,
        RuntimeFn::DurationFormat => Function::DurationFormat,
        RuntimeFn::TimeParse => Function::TimeParse,
        RuntimeFn::TimeSetClock => Function::TimeSetClock,
        // Randomness and secrets: a token through the out-pointer, a bool as an i32, the
        // password rows as pending operations over the strings' bytes.
        RuntimeFn::RandInt => Function::RandInt,
        RuntimeFn::RandToken => Function::RandToken,
        RuntimeFn::SecretEq => Function::SecretEq,
        RuntimeFn::PasswordHash => Function::PasswordHash,
        RuntimeFn::PasswordVerify => Function::PasswordVerify,
        RuntimeFn::DbBegin => Function::DbBegin,
        RuntimeFn::DbCommit => Function::DbCommit,
        RuntimeFn::DbRollback => Function::DbRollback,
        RuntimeFn::QueueDeadLetters => Function::QueueDeadLetters,
        RuntimeFn::QueueRetry => Function::QueueRetry,
    }
}

/// The declaration of `rt` in the module, added on first use, with the signature of
/// `nagi_abi`'s list.
pub(crate) fn declare<'ctx>(cx: &Cx<'ctx, '_>, rt: Rt) -> Result<FunctionValue<'ctx>, Error> {
    let (name, params, result) = match rt.function() {
        CFunction::Runtime(f) => (f.symbol(), f.params(), f.result()),
        CFunction::SetJmp => SETJMP,
    };
    if let Some(f) = cx.runtime.borrow().get(name) {
        return Ok(*f);
    }
    let c = cx.context;
    let kind = |k: CType| -> BasicTypeEnum<'ctx> {
        match k {
            CType::I32 => c.i32_type().into(),
            CType::I64 => c.i64_type().into(),
            CType::F64 => c.f64_type().into(),
            CType::Ptr => cx.layouts.byte_ptr().into(),
            CType::Str => cx.layouts.string().ptr_type(inkwell::AddressSpace::default()).into(),
            CType::MainFn => c.void_type().fn_type(&[], false).ptr_type(inkwell::AddressSpace::default()).into(),
        }
    };
    let params: Vec<BasicMetadataTypeEnum> = params.iter().map(|k| kind(*k).into()).collect();
    let fn_type = match result {
        CResult::Void | CResult::Never => c.void_type().fn_type(&params, false),
        CResult::Value(k) => kind(k).fn_type(&params, false),
    };
    let f = cx.module.add_function(name, fn_type, None);
    cx.nounwind(f);
    if result == CResult::Never {
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

//! The C ABI between emitted code and the runtime, written once: every `nagi_rt_*` function with
//! its C signature, and the codes both sides read (docs/c-abi.md).
//!
//! Three places need the list: the LLVM emitter declares the functions it calls
//! (`emit-llvm/src/runtime_calls.rs`), the runtime defines them (`#[no_mangle]` in
//! `runtime/src/cabi/`), and the JIT resolves the emitted code's calls to their addresses
//! (`runtime/src/cabi/inprocess.rs`). [`runtime_functions!`] hands the one list to a macro of the
//! caller's (wasmtime's `foreach_builtin_function!` is the model): this crate makes [`Function`]
//! of it, the runtime its JIT table, so a function missing from the runtime is a compile error
//! there, and the runtime's test checks that it exports nothing the list lacks.
//!
//! [`sql`] is the one SQL text rule both sides apply: a statement's PostgreSQL form.

pub mod sql;

/// The C-level kind of a parameter or result of a runtime function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CType {
    /// An `i32`; a `bool` crosses as an `i32` 0 or 1, which sidesteps who extends an `i1`.
    I32,
    /// An `i64`: integers, and sizes, lengths and capacities, which are 64-bit.
    I64,
    /// An `f64`.
    F64,
    /// A pointer to bytes, to a descriptor or to an opaque runtime handle.
    Ptr,
    /// A pointer to a three-word string (`{ ptr, len, cap }`).
    Str,
    /// A pointer to the program's `void()` main function.
    MainFn,
}

/// What a runtime function gives back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CResult {
    /// Nothing.
    Void,
    /// Never returns (a trap): emitted calls are `noreturn` and `cold`.
    Never,
    /// A value of this kind.
    Value(CType),
}

/// The size in bytes of a statement's argument list (`cabi::db::SqlArgs`), which emitted code
/// keeps in a slot of its own stack aligned to 8 and fills with `nagi_rt_sql_args` and the
/// `nagi_rt_sql_arg_*` calls until the statement consumes it.
pub const SQL_ARGS_SIZE: u64 = 24;

/// The `kind` of a layout descriptor (`TypeDesc`, docs/c-abi.md "Typed JSON"): how a value of
/// the type sits in memory.
pub mod type_kind {
    /// An `i32`.
    pub const I32: u64 = 0;
    /// An `i64`.
    pub const I64: u64 = 1;
    /// An `f64`.
    pub const F64: u64 = 2;
    /// A `bool`: one byte, 0 or 1.
    pub const BOOL: u64 = 3;
    /// The unit type.
    pub const UNIT: u64 = 4;
    /// A `String`.
    pub const STRING: u64 = 5;
    /// An array: `inner` is the element type.
    pub const ARRAY: u64 = 6;
    /// An option: `inner` is the payload type, at `payload_offset`.
    pub const OPTION: u64 = 7;
    /// A class: `fields` are its fields.
    pub const CLASS: u64 = 8;
    /// An enum: `fields` are its variants, each with its payload's type or `unit`.
    pub const ENUM: u64 = 9;
    /// A map with `i64` keys: `inner` is the value type; the values array starts at
    /// `payload_offset`.
    pub const MAP_I64: u64 = 10;
    /// A map with `String` keys, as [`MAP_I64`].
    pub const MAP_STRING: u64 = 11;
    /// A `Time`: an `i64` of microseconds since 1970-01-01T00:00:00Z.
    pub const TIME: u64 = 12;
    /// A `Duration`: an `i64` of microseconds.
    pub const DURATION: u64 = 13;
    /// A `Uuid`: 16 bytes in the UUID's byte order, 8-aligned.
    pub const UUID: u64 = 14;
}

/// The type of a configuration value (`ConfigDesc::kind`, docs/c-abi.md "Configuration").
pub mod config_kind {
    /// A `String`.
    pub const STR: u64 = 0;
    /// An `i64`.
    pub const I64: u64 = 1;
    /// An `f64`.
    pub const F64: u64 = 2;
    /// A `bool`.
    pub const BOOL: u64 = 3;
    /// A `Duration` (microseconds).
    pub const DURATION: u64 = 4;
}

/// The element kind the array library's functions take (`nagi_rt_array_sort`,
/// `nagi_rt_array_contains_int`, …).
pub mod array_kind {
    /// `i32` elements.
    pub const I32: i32 = 0;
    /// `i64` elements.
    pub const I64: i32 = 1;
    /// `f64` elements.
    pub const F64: i32 = 2;
    /// `String` elements.
    pub const STRING: i32 = 3;
}

/// Where a route's parameter comes from (`ParamDesc::source`, docs/c-abi.md "Services").
pub mod param_source {
    /// A path parameter (`{name}` in the route).
    pub const PATH: u64 = 0;
    /// A required query parameter.
    pub const QUERY: u64 = 1;
    /// An optional query parameter (the parameter's type is an option).
    pub const QUERY_OPT: u64 = 2;
    /// The JSON body (the parameter's type is a class).
    pub const BODY: u64 = 3;
    /// A required request header (the name is the header's).
    pub const HEADER: u64 = 4;
    /// An optional request header (the parameter's type is an option).
    pub const HEADER_OPT: u64 = 5;
}

/// What a poll answers: a pending operation's (`nagi_rt_op_poll`) and an emitted frame's poll
/// function (docs/c-abi.md, "Frames").
pub mod poll {
    /// Not done: the waker was registered; poll again when it is woken.
    pub const PENDING: i32 = 0;
    /// Done: the result is ready (an operation's, to finish into its destination).
    pub const READY: i32 = 1;
    /// Failed with a failure the runtime stored (a database error, `fail`): the owner drops the
    /// frame as it would a cancelled one.
    pub const FAILED: i32 = 2;
    /// Trapped inside the handler guard: the trap was reported, and the frame is abandoned.
    pub const TRAPPED: i32 = 3;
}

/// The messages of the traps that emitted code raises with a text of its own (through
/// `nagi_rt_trap`) and that the runtime raises for the Rust path and the interpreter's host:
/// written here once, so that every backend traps with the same words.
pub mod trap_text {
    /// A division by zero.
    pub const DIVISION_BY_ZERO: &str = "division by zero";
    /// A remainder by zero.
    pub const REMAINDER_BY_ZERO: &str = "remainder by zero";
    /// `option.unwrap` of an empty option.
    pub const UNWRAP_OF_NONE: &str = "unwrap of none";
    /// A call past the thread's stack limit (the interpreter's frame limit).
    pub const STACK_OVERFLOW: &str = "stack overflow";
}

/// Calls `$callback!` with the list of every runtime function, one entry per function:
/// `Variant = symbol(Param, …) -> Result;` where each kind is a [`CType`] name and `Result` is
/// `Void`, `Never` or a [`CType`] name.
#[macro_export]
macro_rules! runtime_functions {
    ($callback:ident) => {
        $callback! {
        // Memory, strings and traps (`cabi`, `cabi::strings`).
        Alloc = nagi_rt_alloc(I64, I64) -> Ptr;
        Free = nagi_rt_free(Ptr, I64, I64) -> Void;
        Grow = nagi_rt_grow(Ptr, I64, I64) -> Void;
        StrFrom = nagi_rt_str_from(Str, Ptr, I64) -> Void;
        StrConcat = nagi_rt_str_concat(Str, Ptr, I64) -> Void;
        StrEq = nagi_rt_str_eq(Str, Str) -> I32;
        Trap = nagi_rt_trap(Ptr, I64) -> Never;
        IndexOutOfRange = nagi_rt_index_out_of_range(I64, I64) -> Never;
        StackSlow = nagi_rt_stack_slow(I64, Ptr) -> Void;

        // Entries and the handler guard (`cabi::program`, `cabi::service`, `cabi::guard`).
        Main = nagi_rt_main(MainFn) -> I32;
        MainAsync = nagi_rt_main_async(Ptr) -> I32;
        Serve = nagi_rt_serve(Ptr) -> I32;
        GuardEnter = nagi_rt_guard_enter(Ptr) -> Ptr;
        GuardLeave = nagi_rt_guard_leave(Ptr) -> Void;

        // Printing, formatting, failures and tests (`cabi`, `cabi::testing`).
        PrintI32 = nagi_rt_print_i32(I32) -> Void;
        PrintI64 = nagi_rt_print_i64(I64) -> Void;
        PrintF64 = nagi_rt_print_f64(F64) -> Void;
        PrintBool = nagi_rt_print_bool(I32) -> Void;
        PrintStr = nagi_rt_print_str(Ptr, I64) -> Void;
        FmtI32 = nagi_rt_fmt_i32(Str, I32) -> Void;
        FmtI64 = nagi_rt_fmt_i64(Str, I64) -> Void;
        FmtF64 = nagi_rt_fmt_f64(Str, F64) -> Void;
        FmtBool = nagi_rt_fmt_bool(Str, I32) -> Void;
        HttpFail = nagi_rt_http_fail(I64, Ptr, I64) -> Void;
        HttpClearFailure = nagi_rt_http_clear_failure() -> Void;
        HttpFailureStatus = nagi_rt_http_failure_status() -> I64;
        HttpTakeFailure = nagi_rt_http_take_failure(Str) -> Void;
        HttpSetHeader = nagi_rt_http_set_header(Ptr, I64, Ptr, I64) -> Void;
        TestSelected = nagi_rt_test_selected() -> I64;
        TestFailed = nagi_rt_test_failed() -> Void;
        TestAssertFailed = nagi_rt_test_assert_failed(Ptr, I64) -> Void;

        // The string library (`cabi::strings`): an owned result through the out-pointer first, a bool returned as an `i32`.
        StrContains = nagi_rt_str_contains(Str, Str) -> I32;
        StrStartsWith = nagi_rt_str_starts_with(Str, Str) -> I32;
        StrEndsWith = nagi_rt_str_ends_with(Str, Str) -> I32;
        StrFind = nagi_rt_str_find(Ptr, Str, Str) -> Void;
        StrSplit = nagi_rt_str_split(Ptr, Str, Str) -> Void;
        StrTrim = nagi_rt_str_trim(Str, Str) -> Void;
        StrToLower = nagi_rt_str_to_lower(Str, Str) -> Void;
        StrToUpper = nagi_rt_str_to_upper(Str, Str) -> Void;
        StrReplace = nagi_rt_str_replace(Str, Str, Str, Str) -> Void;
        StrJoin = nagi_rt_str_join(Str, Ptr, Str) -> Void;
        StrSlice = nagi_rt_str_slice(Str, Str, I64, I64) -> Void;
        StrParseI64 = nagi_rt_str_parse_i64(Ptr, Str) -> Void;
        StrParseF64 = nagi_rt_str_parse_f64(Ptr, Str) -> Void;

        // The array library (`cabi::arrays`): the array by pointer, then what the runtime needs to know of its elements (a kind, a size, a key offset).
        ArraySort = nagi_rt_array_sort(Ptr, I32) -> Void;
        ArraySortBy = nagi_rt_array_sort_by(Ptr, I64, I64, I32) -> Void;
        ArraySortByKeys = nagi_rt_array_sort_by_keys(Ptr, I64, Ptr, I32) -> Void;
        ArrayReverse = nagi_rt_array_reverse(Ptr, I64) -> Void;
        ArrayContainsInt = nagi_rt_array_contains_int(Ptr, I32, I64) -> I32;
        ArrayContainsF64 = nagi_rt_array_contains_f64(Ptr, F64) -> I32;
        ArrayContainsStr = nagi_rt_array_contains_str(Ptr, Str) -> I32;
        ArraySlice = nagi_rt_array_slice(Ptr, Ptr, I64, I64, I64, I64, Ptr) -> Void;

        // Maps' index (`cabi::maps`).
        MapFindInt = nagi_rt_map_find_int(Ptr, I64) -> I64;
        MapFindStr = nagi_rt_map_find_str(Ptr, Str) -> I64;
        MapInsertInt = nagi_rt_map_insert_int(Ptr, I64, I64, I64) -> I64;
        MapInsertStr = nagi_rt_map_insert_str(Ptr, Str, I64, I64) -> I64;
        MapRemoveInt = nagi_rt_map_remove_int(Ptr, I64, Ptr, I64) -> I32;
        MapRemoveStr = nagi_rt_map_remove_str(Ptr, Str, Ptr, I64) -> I32;
        MapIndexFree = nagi_rt_map_index_free(Ptr) -> Void;
        MapIndexClone = nagi_rt_map_index_clone(Ptr) -> Ptr;

        // Typed JSON (`cabi::json`), driven by a layout descriptor.
        JsonEncode = nagi_rt_json_encode(Str, Ptr, Ptr) -> Void;
        JsonDecode = nagi_rt_json_decode(Ptr, Ptr, I64, Ptr) -> Void;

        // The database (`cabi::db`): argument lists, then statements that answer a pending operation.
        SqlArgs = nagi_rt_sql_args(Ptr, I64) -> Void;
        SqlArgInt = nagi_rt_sql_arg_int(Ptr, I64) -> Void;
        SqlArgReal = nagi_rt_sql_arg_real(Ptr, F64) -> Void;
        SqlArgText = nagi_rt_sql_arg_text(Ptr, Ptr, I64) -> Void;
        SqlArgTime = nagi_rt_sql_arg_time(Ptr, I64) -> Void;
        SqlArgUuid = nagi_rt_sql_arg_uuid(Ptr, Ptr) -> Void;
        SqlArgNull = nagi_rt_sql_arg_null(Ptr) -> Void;
        DbExec = nagi_rt_db_exec(Ptr, I64, Ptr) -> Ptr;
        DbExecCommit = nagi_rt_db_exec_commit(Ptr, I64, Ptr) -> Ptr;
        DbQuery = nagi_rt_db_query(Ptr, I64, Ptr, Ptr, I32) -> Ptr;
        DbBegin = nagi_rt_db_begin() -> Ptr;
        DbCommit = nagi_rt_db_commit() -> Ptr;
        DbRollback = nagi_rt_db_rollback() -> Ptr;

        // Pending runtime operations (`cabi::tasks`): polled, finished into their destination, or dropped; and the sleep that makes one.
        OpPoll = nagi_rt_op_poll(Ptr, Ptr) -> I32;
        OpFinish = nagi_rt_op_finish(Ptr, Ptr) -> Void;
        OpDrop = nagi_rt_op_drop(Ptr) -> Void;
        TimeSleep = nagi_rt_time_sleep(I64) -> Ptr;

        // The clock, and `Time` and `Duration` values (`cabi::time`): both are `i64` microseconds; a text through the out-pointer first.
        TimeNow = nagi_rt_time_now() -> I64;
        TimeMonotonic = nagi_rt_time_monotonic() -> I64;
        TimeFromMicros = nagi_rt_time_from_micros(I64) -> I64;
        TimeMicros = nagi_rt_time_micros(I64) -> I64;
        DurationFromMicros = nagi_rt_duration_from_micros(I64) -> I64;
        DurationMicros = nagi_rt_duration_micros(I64) -> I64;
        TimeFormat = nagi_rt_time_format(Str, I64) -> Void;
        DurationFormat = nagi_rt_duration_format(Str, I64) -> Void;
        TimeParse = nagi_rt_time_parse(Ptr, Str) -> Void;
        TimeSetClock = nagi_rt_time_set_clock(I64) -> Void;

        // Ids (`cabi::ids`): a `Uuid` by pointer to its 16 bytes, results through the out-pointer first, a bool as an `i32`.
        UuidV7 = nagi_rt_uuid_v7(Ptr) -> Void;
        UuidV4 = nagi_rt_uuid_v4(Ptr) -> Void;
        UuidEq = nagi_rt_uuid_eq(Ptr, Ptr) -> I32;
        UuidFormat = nagi_rt_uuid_format(Str, Ptr) -> Void;
        UuidParse = nagi_rt_uuid_parse(Ptr, Str) -> Void;

        // The program's configuration (`cabi::configuration`): declared by the C `main`, then a value by its position.
        ConfigDeclare = nagi_rt_config_declare(Ptr, I64) -> Void;
        ConfigStr = nagi_rt_config_str(Str, I64) -> Void;
        ConfigI64 = nagi_rt_config_i64(I64) -> I64;
        ConfigF64 = nagi_rt_config_f64(I64) -> F64;
        ConfigBool = nagi_rt_config_bool(I64) -> I32;
        ConfigDuration = nagi_rt_config_duration(I64) -> I64;

        // Randomness and secrets (`cabi::secrets`): a token through the out-pointer, a bool as an `i32`, the password rows as pending operations over the strings' bytes.
        RandInt = nagi_rt_rand_int(I64, I64) -> I64;
        RandToken = nagi_rt_rand_token(Str, I64) -> Void;
        SecretEq = nagi_rt_secret_eq(Str, Str) -> I32;
        PasswordHash = nagi_rt_password_hash(Ptr, I64) -> Ptr;
        PasswordVerify = nagi_rt_password_verify(Ptr, I64, Ptr, I64) -> Ptr;

        // Outbound HTTP (`cabi::outbound`): the method, URL and body strings, the header lines, the timeout in microseconds, the descriptor of the `Option<T>` the pending operation's finish writes.
        HttpFetch = nagi_rt_http_fetch(Str, Str, Str, Ptr, I64, Ptr) -> Ptr;

        // Scopes, tasks and deferred calls (`cabi::tasks`).
        ScopeNew = nagi_rt_scope_new() -> Ptr;
        ScopeDrop = nagi_rt_scope_drop(Ptr) -> Void;
        ScopeEnd = nagi_rt_scope_end(Ptr) -> Ptr;
        TaskSpawn = nagi_rt_task_spawn(Ptr, Ptr, Ptr) -> Ptr;
        TaskJoin = nagi_rt_task_join(Ptr) -> Ptr;
        TaskDrop = nagi_rt_task_drop(Ptr) -> Void;
        TaskSpawnBlocking = nagi_rt_task_spawn_blocking(Ptr, Ptr, Ptr) -> Ptr;
        DeferNew = nagi_rt_defer_new(Ptr, Ptr) -> Ptr;
        DeferDrop = nagi_rt_defer_drop(Ptr) -> Void;

        // Actors and supervisors (`cabi::actors`, `cabi::supervisors`).
        ActorStart = nagi_rt_actor_start(Ptr, I64) -> Ptr;
        ActorMessage = nagi_rt_actor_message(Ptr) -> Ptr;
        ActorCall = nagi_rt_actor_call(Ptr, Ptr, Ptr) -> Ptr;
        ActorSend = nagi_rt_actor_send(Ptr, Ptr, Ptr) -> Ptr;
        ActorClone = nagi_rt_actor_clone(Ptr) -> Ptr;
        ActorDrop = nagi_rt_actor_drop(Ptr) -> Void;
        SupervisorChild = nagi_rt_supervisor_child(Ptr, I64, Ptr, I64) -> Ptr;

        // Job queues (`cabi::queues`).
        QueuePush = nagi_rt_queue_push(Ptr, I64, Ptr, Ptr, I64) -> Ptr;
        QueueDeadLetters = nagi_rt_queue_dead_letters(Ptr, I64, Ptr) -> Ptr;
        QueueRetry = nagi_rt_queue_retry(Ptr, I64, I64) -> Ptr;
        }
    };
}

/// Makes [`Function`] of the list.
macro_rules! define_functions {
    ($($variant:ident = $symbol:ident($($param:ident),*) -> $result:ident;)*) => {
        /// A function of the runtime's C ABI.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Function {
            $(
                #[doc = concat!("`", stringify!($symbol), "`.")]
                $variant,
            )*
        }

        impl Function {
            /// Every function, in the list's order.
            pub const ALL: &'static [Function] = &[$(Function::$variant),*];

            /// The C symbol, `nagi_rt_…`.
            pub fn symbol(self) -> &'static str {
                match self {
                    $(Function::$variant => stringify!($symbol),)*
                }
            }

            /// The parameters' kinds, in order.
            pub fn params(self) -> &'static [CType] {
                match self {
                    $(Function::$variant => &[$(CType::$param),*],)*
                }
            }

            /// What the function gives back.
            pub fn result(self) -> CResult {
                match self {
                    $(Function::$variant => define_functions!(@result $result),)*
                }
            }
        }
    };
    (@result Void) => { CResult::Void };
    (@result Never) => { CResult::Never };
    (@result $kind:ident) => { CResult::Value(CType::$kind) };
}

runtime_functions!(define_functions);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbols_are_unique_and_named_after_their_variant() {
        let mut seen = std::collections::HashSet::new();
        for f in Function::ALL {
            assert!(seen.insert(f.symbol()), "{} listed twice", f.symbol());
            let camel: String =
                f.symbol()["nagi_rt_".len()..].split('_').map(|w| w[..1].to_ascii_uppercase() + &w[1..]).collect();
            assert_eq!(format!("{f:?}"), camel);
        }
        assert_eq!(Function::Alloc.params(), &[CType::I64, CType::I64]);
        assert_eq!(Function::Trap.result(), CResult::Never);
        assert_eq!(Function::StrEq.result(), CResult::Value(CType::I32));
    }
}

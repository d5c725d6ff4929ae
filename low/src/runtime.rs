//! The runtime interface: every runtime function Low may call, in one table.
//!
//! Each row is a variant of [`RuntimeFn`] with its Low spelling, signature, async flag and doc.
//! The verifier checks `rtcall` operations against the rows; the lowering, both emitters and
//! the cost report match on the variants, never on the spelling, and only the Low parser and
//! printer turn spellings into variants and back. Adding a runtime capability means adding a
//! row to the `runtime_functions!` list (and its implementation in `nagi-runtime`); the
//! compiler then points at every exhaustive match that must handle it.
//!
//! Runtime functions never consume their arguments: a string or class argument is passed as a
//! reference, scalars by value.

use crate::types::Type;

/// A parameter or result type in a runtime signature. Generic rows take one class argument,
/// written `name<Class>` in Low, which `ClassRef`, `Class`, `ClassArray`, `ClassOption` and
/// `ClassArrayMut` refer to. The array library's rows are instead generic in the element type
/// `T` of their first argument (an array reference), which `ArrayRef`, `ArrayMut`, `Element`
/// and `Array` refer to; the element type is read off that argument, never written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RtType {
    I32,
    I64,
    F64,
    Bool,
    Unit,
    /// `&str`.
    Str,
    /// An owned `String`.
    String,
    /// `&C` for the class argument `C`.
    ClassRef,
    /// `C`, owned.
    Class,
    /// `[C]`, owned.
    ClassArray,
    /// `Option<C>`, owned.
    ClassOption,
    /// `Option<i64>`, owned.
    OptI64,
    /// `Option<f64>`, owned.
    OptF64,
    /// `Option<String>`, owned.
    OptString,
    /// `Time`.
    Time,
    /// `Duration`.
    Duration,
    /// `Option<Time>`.
    OptTime,
    /// `Uuid`.
    Uuid,
    /// `Option<Uuid>`.
    OptUuid,
    /// `[String]`, owned.
    Strings,
    /// `&[String]`.
    StringsRef,
    /// `&mut [C]` for the class argument `C`.
    ClassArrayMut,
    /// `&[T]` for any element type `T`.
    ArrayRef,
    /// `&mut [T]` for any element type `T`.
    ArrayMut,
    /// `&[T]` for an element type the library compares: `i32`, `i64`, `f64` or `String`.
    ComparableArrayRef,
    /// `&mut [T]` for an element type the library compares: `i32`, `i64`, `f64` or `String`.
    ComparableArrayMut,
    /// An element of the first argument's array, as a runtime function takes it: a scalar by
    /// value, a `String` as `&String`.
    Element,
    /// `[T]`, owned, for the first argument's element type `T`.
    Array,
    /// An `i64` constant naming a field of the class argument whose type the library compares
    /// (`i32`, `i64`, `f64` or `String`): the key of `array.sort_by`.
    FieldKey,
    /// A value bound to a SQL `?` placeholder: `i32`, `i64`, `f64`, `bool`, `&str`, an
    /// `Option` of a scalar, or `&Option<String>`. `None` binds SQL `NULL`.
    SqlValue,
}

impl RtType {
    /// The concrete Low type, given the call's class argument and the element type of its first
    /// argument (see [`element_type`]); `None` for the rows that accept a set of types
    /// ([`RtType::SqlValue`], the comparable arrays; see [`RtType::accepts`]) and when the
    /// class or element the type needs is missing.
    pub fn to_type(self, class: Option<&Type>, elem: Option<&Type>) -> Option<Type> {
        let class = || class.cloned();
        let elem = || elem.cloned();
        let array = |mutable: bool, t: Type| Type::reference(mutable, Type::Array(Box::new(t)));
        Some(match self {
            RtType::I32 => Type::I32,
            RtType::I64 => Type::I64,
            RtType::F64 => Type::F64,
            RtType::Bool => Type::Bool,
            RtType::Unit => Type::Unit,
            RtType::Str => Type::reference(false, Type::String),
            RtType::String => Type::String,
            RtType::ClassRef => Type::reference(false, class()?),
            RtType::Class => class()?,
            RtType::ClassArray => Type::Array(Box::new(class()?)),
            RtType::ClassOption => Type::Option(Box::new(class()?)),
            RtType::OptI64 => Type::Option(Box::new(Type::I64)),
            RtType::OptF64 => Type::Option(Box::new(Type::F64)),
            RtType::OptString => Type::Option(Box::new(Type::String)),
            RtType::Time => Type::Time,
            RtType::Duration => Type::Duration,
            RtType::OptTime => Type::Option(Box::new(Type::Time)),
            RtType::Uuid => Type::Uuid,
            RtType::OptUuid => Type::Option(Box::new(Type::Uuid)),
            RtType::Strings => Type::Array(Box::new(Type::String)),
            RtType::StringsRef => Type::reference(false, Type::Array(Box::new(Type::String))),
            RtType::ClassArrayMut => array(true, class()?),
            RtType::ArrayRef => array(false, elem()?),
            RtType::ArrayMut => array(true, elem()?),
            RtType::Element => match elem()? {
                Type::String => Type::reference(false, Type::String),
                scalar => scalar,
            },
            RtType::Array => Type::Array(Box::new(elem()?)),
            RtType::FieldKey => Type::I64,
            RtType::SqlValue | RtType::ComparableArrayRef | RtType::ComparableArrayMut => return None,
        })
    }

    /// Whether an argument of type `ty` may be passed for this parameter, given the call's class
    /// argument and the element type of its first argument.
    pub fn accepts(self, ty: &Type, class: Option<&Type>, elem: Option<&Type>) -> bool {
        match self {
            RtType::SqlValue => is_sql_value(ty),
            RtType::ComparableArrayRef | RtType::ComparableArrayMut => {
                let mutable = self == RtType::ComparableArrayMut;
                matches!(ty, Type::Ref { mutable: m, pointee } if *m == mutable
                    && matches!(&**pointee, Type::Array(t) if is_comparable(t)))
            }
            other => other.to_type(class, elem).as_ref() == Some(ty),
        }
    }
}

/// Whether the array library orders and compares values of `ty`: `i32`, `i64`, `f64` (`-0.0`
/// before `0.0` and every NaN last when sorting) and `String` (by bytes).
pub fn is_comparable(ty: &Type) -> bool {
    matches!(ty, Type::I32 | Type::I64 | Type::F64 | Type::String)
}

/// The element type of an array reference `&[T]` or `&mut [T]`: what the array library's
/// generic rows take their `T` from (the first argument's type).
pub fn element_type(ty: &Type) -> Option<&Type> {
    match ty {
        Type::Ref { pointee, .. } => match &**pointee {
            Type::Array(t) => Some(t),
            _ => None,
        },
        _ => None,
    }
}

fn is_sql_value(ty: &Type) -> bool {
    match ty {
        Type::I32 | Type::I64 | Type::F64 | Type::Bool | Type::Time | Type::Duration | Type::Uuid => true,
        Type::Option(inner) => {
            matches!(**inner, Type::I32 | Type::I64 | Type::F64 | Type::Bool | Type::Time | Type::Duration | Type::Uuid)
        }
        Type::Ref { mutable: false, pointee } => match &**pointee {
            Type::String => true,
            Type::Option(inner) => **inner == Type::String,
            _ => false,
        },
        _ => false,
    }
}

/// One row of the runtime interface.
#[derive(Clone, Copy, Debug)]
pub struct RuntimeFnData {
    /// The function this row describes.
    pub func: RuntimeFn,
    /// The Low spelling, e.g. `db.query_one`.
    pub name: &'static str,
    /// Whether the row takes a class argument (`name<Class>`).
    pub generic: bool,
    /// Fixed parameters.
    pub params: &'static [RtType],
    /// The type of any further arguments, for variadic rows.
    pub variadic: Option<RtType>,
    /// The result.
    pub ret: RtType,
    /// Whether calls must be awaited (and so appear only in async functions).
    pub is_async: bool,
    /// What the function does, for `docs/low.md` and emitter authors.
    pub doc: &'static str,
}

/// Declares [`RuntimeFn`] and [`RUNTIME_FUNCTIONS`] from one list of rows, so that a variant
/// and its row cannot drift apart: the table is in variant order, and `RuntimeFn::data`
/// indexes it by discriminant.
macro_rules! runtime_functions {
    ($(
        $variant:ident = $name:literal, generic: $generic:expr, params: [$($param:expr),*],
        variadic: $variadic:expr, ret: $ret:expr, async: $is_async:expr, doc: $doc:literal;
    )*) => {
        /// A runtime function Low may call with `rtcall` (Cranelift's `LibCall` is the model).
        ///
        /// Code outside the Low parser and printer matches on the variants, exhaustively, so
        /// adding a row makes the compiler point at every emitter and lowering that must handle
        /// it. The spelling, signature, async flag and doc of each variant are its row of
        /// [`RUNTIME_FUNCTIONS`] (see [`RuntimeFn::data`]).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum RuntimeFn {
            $(#[doc = $doc] $variant,)*
        }

        /// The runtime interface, one row per [`RuntimeFn`] variant, in variant order. Rows are
        /// grouped by capability.
        pub static RUNTIME_FUNCTIONS: &[RuntimeFnData] = &[
            $(RuntimeFnData {
                func: RuntimeFn::$variant,
                name: $name,
                generic: $generic,
                params: &[$($param),*],
                variadic: $variadic,
                ret: $ret,
                is_async: $is_async,
                doc: $doc,
            },)*
        ];
    };
}

use RtType::*;

runtime_functions! {
    // Printing to standard output, one value and a newline per call. `f64` is written as
    // Rust's `{:?}` writes it (`1.0`, `-0.0`, `NaN`, `inf`, `1e21`).
    PrintI32 = "print.i32", generic: false, params: [I32], variadic: None, ret: Unit, async: false,
        doc: "Prints an i32 and a newline.";
    PrintI64 = "print.i64", generic: false, params: [I64], variadic: None, ret: Unit, async: false,
        doc: "Prints an i64 and a newline.";
    PrintF64 = "print.f64", generic: false, params: [F64], variadic: None, ret: Unit, async: false,
        doc: "Prints an f64 as Rust's `{:?}` does, and a newline.";
    PrintBool = "print.bool", generic: false, params: [Bool], variadic: None, ret: Unit, async: false,
        doc: "Prints `true` or `false` and a newline.";
    PrintStr = "print.str", generic: false, params: [Str], variadic: None, ret: Unit, async: false,
        doc: "Prints a string and a newline.";
    // Formatting values as new strings, with the same spellings as printing.
    FmtI32 = "fmt.i32", generic: false, params: [I32], variadic: None, ret: String, async: false,
        doc: "Formats an i32 in decimal.";
    FmtI64 = "fmt.i64", generic: false, params: [I64], variadic: None, ret: String, async: false,
        doc: "Formats an i64 in decimal.";
    FmtF64 = "fmt.f64", generic: false, params: [F64], variadic: None, ret: String, async: false,
        doc: "Formats an f64 as Rust's `{:?}` does.";
    FmtBool = "fmt.bool", generic: false, params: [Bool], variadic: None, ret: String, async: false,
        doc: "Formats `true` or `false`.";
    // The string library (runtime/src/strings.rs holds each rule): positions and lengths in
    // UTF-8 bytes, case mapping and whitespace as Unicode defines them.
    StrContains = "str.contains", generic: false, params: [Str, Str], variadic: None, ret: Bool, async: false,
        doc: "Whether the first string contains the second (every string contains the empty one).";
    StrStartsWith = "str.starts_with", generic: false, params: [Str, Str], variadic: None, ret: Bool, async: false,
        doc: "Whether the first string starts with the second.";
    StrEndsWith = "str.ends_with", generic: false, params: [Str, Str], variadic: None, ret: Bool, async: false,
        doc: "Whether the first string ends with the second.";
    StrFind = "str.find", generic: false, params: [Str, Str], variadic: None, ret: OptI64, async: false,
        doc: "The byte position of the first occurrence of the second string in the first, or none.";
    StrSplit = "str.split", generic: false, params: [Str, Str], variadic: None, ret: Strings, async: false,
        doc: "The parts of the first string between occurrences of the separator, in order; traps on an empty separator.";
    StrTrim = "str.trim", generic: false, params: [Str], variadic: None, ret: String, async: false,
        doc: "The string without leading and trailing whitespace.";
    StrToLower = "str.to_lower", generic: false, params: [Str], variadic: None, ret: String, async: false,
        doc: "The string in lower case.";
    StrToUpper = "str.to_upper", generic: false, params: [Str], variadic: None, ret: String, async: false,
        doc: "The string in upper case.";
    StrReplace = "str.replace", generic: false, params: [Str, Str, Str], variadic: None, ret: String, async: false,
        doc: "The first string with every non-overlapping occurrence of the second replaced by the third.";
    StrJoin = "str.join", generic: false, params: [StringsRef, Str], variadic: None, ret: String, async: false,
        doc: "The strings of the array with the separator between each two.";
    StrSlice = "str.slice", generic: false, params: [Str, I64, I64], variadic: None, ret: String, async: false,
        doc: "The bytes start..end of the string as a new string; traps unless 0 <= start <= end <= len and both fall on character boundaries.";
    StrParseI64 = "str.parse_i64", generic: false, params: [Str], variadic: None, ret: OptI64, async: false,
        doc: "The string as a decimal i64 (an optional sign, then digits, in range), or none.";
    StrParseF64 = "str.parse_f64", generic: false, params: [Str], variadic: None, ret: OptF64, async: false,
        doc: "The string as an f64 (decimal with an optional exponent, inf, infinity or NaN), or none.";
    // The array library (runtime/src/arrays.rs holds each rule), generic in the element type
    // of the first argument. Sorting is stable and ascending: integers by value, f64 with -0.0
    // before 0.0 and every NaN last, strings by their bytes.
    ArraySort = "array.sort", generic: false, params: [ComparableArrayMut], variadic: None, ret: Unit, async: false,
        doc: "Sorts the array in place, stably and ascending.";
    ArraySortBy = "array.sort_by", generic: true, params: [ClassArrayMut, FieldKey], variadic: None, ret: Unit, async: false,
        doc: "Sorts an array of the class in place, stably and ascending by the field the constant index names.";
    ArraySortByKeys = "array.sort_by_keys", generic: false, params: [ArrayMut, ComparableArrayRef], variadic: None, ret: Unit, async: false,
        doc: "Sorts the array in place, stably and ascending by the key at the same index of the second array, which has as many elements (a trap otherwise).";
    ArrayReverse = "array.reverse", generic: false, params: [ArrayMut], variadic: None, ret: Unit, async: false,
        doc: "Reverses the order of the array's elements in place.";
    ArrayContains = "array.contains", generic: false, params: [ComparableArrayRef, Element], variadic: None, ret: Bool, async: false,
        doc: "Whether an element equals the value (f64 by IEEE `==`, so NaN is never found).";
    ArraySlice = "array.slice", generic: false, params: [ArrayRef, I64, I64], variadic: None, ret: Array, async: false,
        doc: "The elements start..end as a new array, cloned; traps unless 0 <= start <= end <= len.";
    // Expected failures of a request (runtime/src/failure.rs): the failing function then
    // returns none, and the route's reply answers the recorded status and message.
    HttpFail = "http.fail", generic: false, params: [I64, Str], variadic: None, ret: Unit, async: false,
        doc: "Records the failure of the request being handled: its status (400-599; another is answered 500) and message.";
    HttpClearFailure = "http.clear_failure", generic: false, params: [], variadic: None, ret: Unit, async: false,
        doc: "Forgets the failure that the last failing call recorded, which `try?` handled where it happened.";
    HttpFailureStatus = "http.failure_status", generic: false, params: [], variadic: None, ret: I64, async: false,
        doc: "The status of the failure that the last failing call recorded, which `catch` handles (500 when none was recorded); the failure stays recorded.";
    HttpTakeFailure = "http.take_failure", generic: false, params: [], variadic: None, ret: String, async: false,
        doc: "The message of the failure that the last failing call recorded, which `catch` handles; the failure is forgotten.";
    HttpSetHeader = "http.set_header", generic: false, params: [Str, Str], variadic: None, ret: Unit, async: false,
        doc: "Sets a header of the successful answer of the request being handled; traps on an invalid or server-owned name, a value that is not visible ASCII, or outside a request.";
    // Tests in the language (`nagic test`): which test a test build runs, and a failed
    // assertion whose message is computed (`assert_eq` shows both values).
    TestSelected = "test.selected", generic: false, params: [], variadic: None, ret: I64, async: false,
        doc: "The index of the test to run, from the NAGI_TEST environment variable; -1 when it is unset.";
    TestFailed = "test.failed", generic: false, params: [], variadic: None, ret: Unit, async: false,
        doc: "Ends the program with the failure a test recorded (its status and message), as a trap.";
    TestAssertFailed = "test.assert_failed", generic: false, params: [Str], variadic: None, ret: Unit, async: false,
        doc: "Ends the program with the message, as a trap: a failed assertion.";
    // Time. A sleeping task is suspended, so its scope's other tasks and its thread's
    // requests run meanwhile.
    TimeSleep = "time.sleep", generic: false, params: [I64], variadic: None, ret: Unit, async: true,
        doc: "Waits the given number of milliseconds (a negative wait is no wait) without blocking the thread.";
    // Outbound HTTP (runtime/src/outbound.rs): a call of another service, with the method, the
    // URL, the body (none when empty), header lines `Name: value` and a timeout in microseconds
    // (negative: the default). A call that goes wrong records its failure (502, 504, or 500 for a
    // URL or header the program built wrong) and gives none, as a failing function does.
    HttpFetch = "http.fetch", generic: false, params: [Str, Str, Str, StringsRef, I64], variadic: None, ret: OptString, async: true,
        doc: "Calls another HTTP service: the answer's body as text, or none after recording the failure.";
    HttpFetchJson = "http.fetch_json", generic: true, params: [Str, Str, Str, StringsRef, I64], variadic: None, ret: ClassOption, async: true,
        doc: "Calls another HTTP service: the answer decoded into the class under the request bodies' rules, or none after recording the failure.";
    // The program's configuration (runtime/src/configuration.rs): the value a `config` line
    // declares, by its position in the module, bound at start from the environment.
    ConfigStr = "config.str", generic: false, params: [I64], variadic: None, ret: String, async: false,
        doc: "The `String` configuration value at that position (a copy).";
    ConfigI64 = "config.i64", generic: false, params: [I64], variadic: None, ret: I64, async: false,
        doc: "The `i64` configuration value at that position.";
    ConfigF64 = "config.f64", generic: false, params: [I64], variadic: None, ret: F64, async: false,
        doc: "The `f64` configuration value at that position.";
    ConfigBool = "config.bool", generic: false, params: [I64], variadic: None, ret: Bool, async: false,
        doc: "The `bool` configuration value at that position.";
    ConfigDuration = "config.duration", generic: false, params: [I64], variadic: None, ret: Duration, async: false,
        doc: "The `Duration` configuration value at that position.";
    // Ids (runtime/src/ids.rs): 128-bit UUIDs, time-ordered (v7) or random (v4).
    UuidV7 = "uuid.v7", generic: false, params: [], variadic: None, ret: Uuid, async: false,
        doc: "A new time-ordered UUID (version 7: the Unix time in milliseconds, then random bits).";
    UuidV4 = "uuid.v4", generic: false, params: [], variadic: None, ret: Uuid, async: false,
        doc: "A new random UUID (version 4).";
    UuidEq = "uuid.eq", generic: false, params: [Uuid, Uuid], variadic: None, ret: Bool, async: false,
        doc: "Whether two UUIDs are the same.";
    UuidFormat = "uuid.format", generic: false, params: [Uuid], variadic: None, ret: String, async: false,
        doc: "The UUID's canonical text: lowercase and hyphenated.";
    UuidParse = "uuid.parse", generic: false, params: [Str], variadic: None, ret: OptUuid, async: false,
        doc: "The UUID a text names (any form the uuid crate reads), or none.";
    // Randomness and secrets (runtime/src/secrets.rs holds each rule): the operating system's
    // CSPRNG, a constant-time comparison, and Argon2id password hashes, which take tens of
    // milliseconds of CPU and so run on the blocking pool while the caller waits.
    RandInt = "rand.int", generic: false, params: [I64, I64], variadic: None, ret: I64, async: false,
        doc: "A uniformly random i64 in lo..=hi from a generator seeded by the operating system's CSPRNG; traps when lo > hi.";
    RandToken = "rand.token", generic: false, params: [I64], variadic: None, ret: String, async: false,
        doc: "n bytes from the operating system's CSPRNG as URL-safe base64 without padding; traps unless 1 <= n <= 1024.";
    SecretEq = "secret.eq", generic: false, params: [Str, Str], variadic: None, ret: Bool, async: false,
        doc: "Whether two strings are equal, in time that depends on their lengths only, not on where they differ.";
    PasswordHash = "password.hash", generic: false, params: [Str], variadic: None, ret: String, async: true,
        doc: "The password's Argon2id hash with a fresh random salt, as a PHC string (m=19456 KiB, t=2, p=1).";
    PasswordVerify = "password.verify", generic: false, params: [Str, Str], variadic: None, ret: Bool, async: true,
        doc: "Whether the password matches the PHC hash; false for a hash that is not one.";
    // The clock, and Time and Duration values (runtime/src/time.rs holds each rule). Both are
    // `i64` microseconds underneath; `micros` and `from_micros` cross between them and `i64`,
    // which is how arithmetic and comparisons on them are written.
    TimeNow = "time.now", generic: false, params: [], variadic: None, ret: Time, async: false,
        doc: "The current instant in UTC, from the system's clock (or the clock a test fixed).";
    TimeMonotonic = "time.monotonic", generic: false, params: [], variadic: None, ret: Duration, async: false,
        doc: "The time since the process first asked, from the monotonic clock, which never goes backwards.";
    TimeFromMicros = "time.from_micros", generic: false, params: [I64], variadic: None, ret: Time, async: false,
        doc: "The instant that many microseconds after 1970-01-01T00:00:00Z; traps outside years 0000-9999.";
    TimeMicros = "time.micros", generic: false, params: [Time], variadic: None, ret: I64, async: false,
        doc: "The instant's microseconds since 1970-01-01T00:00:00Z.";
    DurationFromMicros = "duration.from_micros", generic: false, params: [I64], variadic: None, ret: Duration, async: false,
        doc: "The duration of that many microseconds.";
    DurationMicros = "duration.micros", generic: false, params: [Duration], variadic: None, ret: I64, async: false,
        doc: "The duration's microseconds.";
    TimeFormat = "time.format", generic: false, params: [Time], variadic: None, ret: String, async: false,
        doc: "The instant as RFC 3339 in UTC with six fractional digits (`2026-12-05T04:23:34.123456Z`).";
    DurationFormat = "duration.format", generic: false, params: [Duration], variadic: None, ret: String, async: false,
        doc: "The duration as a literal writes it: the integer and the largest unit that divides it (`250ms`, `2h`).";
    TimeSetClock = "time.set_clock", generic: false, params: [Time], variadic: None, ret: Unit, async: false,
        doc: "Fixes the clock `time.now` reads at the instant for the rest of the process (High Nagi allows it only in a test).";
    TimeParse = "time.parse", generic: false, params: [Str], variadic: None, ret: OptTime, async: false,
        doc: "The instant an RFC 3339 text names (any offset), truncated to the microsecond; none for anything else.";
    // Typed JSON, straight between text and a class (serde, no intermediate tree).
    JsonEncode = "json.encode", generic: true, params: [ClassRef], variadic: None, ret: String, async: false,
        doc: "Encodes a class value as a JSON object.";
    JsonDecode = "json.decode", generic: true, params: [Str], variadic: None, ret: ClassOption, async: false,
        doc: "Decodes a JSON object into a class value; none when the text is not exactly one valid object of the class.";
    // SQLite through the runtime's database thread. Statements take `?` placeholders whose
    // values are the variadic arguments, always bound, never spliced into the SQL text.
    DbExec = "db.exec", generic: false, params: [Str], variadic: Some(SqlValue), ret: I64, async: true,
        doc: "Runs a statement; the result is the number of rows changed.";
    DbExecCommit = "db.exec_commit", generic: false, params: [Str], variadic: Some(SqlValue), ret: I64, async: true,
        doc: "Runs a route handler's last statement and commits the request's transaction in the same database job; the result is the number of rows changed. Placed by the `fuse-commit` pass where nothing after it can fail (V248).";
    DbQuery = "db.query", generic: true, params: [Str], variadic: Some(SqlValue), ret: ClassArray, async: true,
        doc: "Runs a query; every row decodes into the class.";
    DbQueryOne = "db.query_one", generic: true, params: [Str], variadic: Some(SqlValue), ret: ClassOption, async: true,
        doc: "Runs a query; its first row, if any, decodes into the class.";
    DbBegin = "db.begin", generic: false, params: [], variadic: None, ret: Unit, async: true,
        doc: "Begins an IMMEDIATE transaction.";
    DbCommit = "db.commit", generic: false, params: [], variadic: None, ret: Unit, async: true,
        doc: "Commits the open transaction.";
    DbRollback = "db.rollback", generic: false, params: [], variadic: None, ret: Unit, async: true,
        doc: "Rolls the open transaction back.";
    // Job queues (docs/low.md §8.5): the dead letters of the queue named by the string, as
    // rows of a class with fields `id`, `attempts`, `last_error` and `job` (the payload's
    // JSON), and a dead letter pushed again.
    QueueDeadLetters = "queue.dead_letters", generic: true, params: [Str], variadic: None, ret: ClassArray, async: true,
        doc: "The dead-lettered jobs of the queue, oldest first; every row decodes into the class.";
    QueueRetry = "queue.retry", generic: false, params: [Str, I64], variadic: None, ret: I64, async: true,
        doc: "Pushes the queue's dead letter of that id again as a new job with fresh attempts; the new job's id, or 0 when there is no such dead letter.";
}

impl RuntimeFn {
    /// The function spelled `name`, if the table has it. Only the Low parser needs this.
    pub fn from_name(name: &str) -> Option<RuntimeFn> {
        RUNTIME_FUNCTIONS.iter().find(|r| r.name == name).map(|r| r.func)
    }

    /// Its row of the table.
    pub fn data(self) -> &'static RuntimeFnData {
        &RUNTIME_FUNCTIONS[self as usize]
    }

    /// Its Low spelling.
    pub fn name(self) -> &'static str {
        self.data().name
    }

    /// Every runtime function, in table order.
    pub fn all() -> impl Iterator<Item = RuntimeFn> {
        RUNTIME_FUNCTIONS.iter().map(|r| r.func)
    }

    /// Its group of the table: what the emitters and the interpreter dispatch on, so that a
    /// group's rows are listed once, here.
    pub fn group(self) -> RowGroup {
        use RuntimeFn::*;
        match self {
            PrintI32 | PrintI64 | PrintF64 | PrintBool | PrintStr => RowGroup::Print,
            FmtI32 | FmtI64 | FmtF64 | FmtBool => RowGroup::Format,
            StrContains | StrStartsWith | StrEndsWith | StrFind | StrSplit | StrTrim | StrToLower | StrToUpper
            | StrReplace | StrJoin | StrSlice | StrParseI64 | StrParseF64 => RowGroup::Strings,
            ArraySort | ArraySortBy | ArraySortByKeys | ArrayReverse | ArrayContains | ArraySlice => RowGroup::Arrays,
            JsonEncode | JsonDecode => RowGroup::Json,
            HttpFail | HttpClearFailure | HttpFailureStatus | HttpTakeFailure | HttpSetHeader => RowGroup::Http,
            TestSelected | TestFailed | TestAssertFailed => RowGroup::Test,
            TimeSleep => RowGroup::Time,
            HttpFetch | HttpFetchJson => RowGroup::Outbound,
            TimeNow | TimeMonotonic | TimeFromMicros | TimeMicros | DurationFromMicros | DurationMicros
            | TimeFormat | DurationFormat | TimeParse | TimeSetClock => RowGroup::Clock,
            RandInt | RandToken | SecretEq | PasswordHash | PasswordVerify => RowGroup::Secrets,
            ConfigStr | ConfigI64 | ConfigF64 | ConfigBool | ConfigDuration => RowGroup::Config,
            UuidV7 | UuidV4 | UuidEq | UuidFormat | UuidParse => RowGroup::Ids,
            DbExec | DbExecCommit | DbQuery | DbQueryOne | DbBegin | DbCommit | DbRollback | QueueDeadLetters
            | QueueRetry => RowGroup::Database,
        }
    }

    /// Whether the function talks to the database (the program then needs the runtime's
    /// SQLite thread, and its classes need row decoders).
    pub fn uses_database(self) -> bool {
        self.group() == RowGroup::Database
    }
}

/// The groups of the runtime interface, by capability (see [`RuntimeFn::group`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowGroup {
    /// `print.*`: one value and a newline on standard output.
    Print,
    /// `fmt.*`: a value as a new string.
    Format,
    /// `str.*`: the string library (`runtime/src/strings.rs`).
    Strings,
    /// `array.*`: the array library (`runtime/src/arrays.rs`).
    Arrays,
    /// `json.*`: typed JSON of a class.
    Json,
    /// `http.*`: the answer of the request being handled.
    Http,
    /// `test.*`: tests in the language.
    Test,
    /// `http.fetch*`: calls of other HTTP services.
    Outbound,
    /// `time.*`: waiting.
    Time,
    /// `time.*` but `time.sleep`, and `duration.*`: the clock, and `Time` and `Duration` values
    /// (`runtime/src/time.rs`).
    Clock,
    /// `uuid.*`: ids (`runtime/src/ids.rs`).
    Ids,
    /// `config.*`: the program's configuration (`runtime/src/configuration.rs`).
    Config,
    /// `rand.*`, `secret.*`, `password.*`: randomness and secrets (`runtime/src/secrets.rs`).
    Secrets,
    /// `db.*`: SQLite through the runtime's database thread.
    Database,
}

/// The SQLite column declaration for a field of type `ty`, following the runtime's
/// column-type mapping: `String`, `Time` and `Uuid` → `TEXT`, `i32`/`i64`/`bool`/`Duration` →
/// `INTEGER`, `f64` → `REAL`; an
/// `Option` is nullable and everything else is `NOT NULL`. `None` for types no column holds
/// (arrays, classes, references).
pub fn sql_column_type(ty: &Type) -> Option<std::string::String> {
    let (base, nullable) = match ty {
        Type::Option(inner) => (&**inner, true),
        other => (other, false),
    };
    let sql = match base {
        // A `Time` is its fixed-width RFC 3339 text, which sorts as the instants do; a
        // `Duration` its microseconds; a `Uuid` its canonical text.
        Type::String | Type::Time | Type::Uuid => "TEXT",
        Type::I32 | Type::I64 | Type::Bool | Type::Duration => "INTEGER",
        Type::F64 => "REAL",
        _ => return None,
    };
    Some(if nullable { sql.to_string() } else { format!("{sql} NOT NULL") })
}

/// The PostgreSQL column declaration for a field of type `ty` (docs/http.md, "PostgreSQL"):
/// `i32` → `integer`, `i64` and `Duration` (microseconds) → `bigint`, `f64` → `double
/// precision`, `bool` → `boolean`, `String` → `text`, `Time` → `timestamp with time zone`,
/// `Uuid` → `uuid`; nullability as [`sql_column_type`]'s. `None` for types no column holds.
pub fn postgres_column_type(ty: &Type) -> Option<std::string::String> {
    let (base, nullable) = match ty {
        Type::Option(inner) => (&**inner, true),
        other => (other, false),
    };
    let sql = match base {
        Type::String => "text",
        Type::Time => "timestamp with time zone",
        Type::Uuid => "uuid",
        Type::I32 => "integer",
        Type::I64 | Type::Duration => "bigint",
        Type::Bool => "boolean",
        Type::F64 => "double precision",
        _ => return None,
    };
    Some(if nullable { sql.to_string() } else { format!("{sql} NOT NULL") })
}

/// The `CREATE TABLE IF NOT EXISTS` statement for a table of `fields` keyed by `key`, names
/// quoted, in SQLite's column types. The runtime runs it at start; the High checker runs it on
/// an in-memory database to prepare the program's SQL against the same schema.
pub fn create_table_sql<'a>(
    table: &str,
    fields: impl IntoIterator<Item = (&'a str, &'a Type)>,
    key: &str,
) -> std::string::String {
    create_table_with(table, fields, key, |ty, _| sql_column_type(ty))
}

/// [`create_table_sql`] in PostgreSQL's column types ([`postgres_column_type`]), which the
/// runtime runs at start on a PostgreSQL database.
///
/// An integer key (`i32`, `i64`) is an identity column (`GENERATED BY DEFAULT AS IDENTITY`): an
/// `INSERT` that leaves the key out gets the next number, as SQLite gives a table whose key is
/// its one `INTEGER` column the next rowid. (SQLite's next key is one more than the largest;
/// PostgreSQL's identity counts on its own, so a table whose keys are given both ways may meet
/// a given one: docs/http.md, "PostgreSQL".)
pub fn create_table_sql_postgres<'a>(
    table: &str,
    fields: impl IntoIterator<Item = (&'a str, &'a Type)>,
    key: &str,
) -> std::string::String {
    create_table_with(table, fields, key, |ty, is_key| {
        let column = postgres_column_type(ty)?;
        Some(match ty {
            Type::I32 | Type::I64 if is_key => format!("{column} GENERATED BY DEFAULT AS IDENTITY"),
            _ => column,
        })
    })
}

/// The statement of a table of `fields` keyed by `key`, each column declared by `column` (given
/// the field's type and whether it is the key).
fn create_table_with<'a>(
    table: &str,
    fields: impl IntoIterator<Item = (&'a str, &'a Type)>,
    key: &str,
    column: impl Fn(&Type, bool) -> Option<std::string::String>,
) -> std::string::String {
    let mut columns: Vec<std::string::String> = fields
        .into_iter()
        .filter_map(|(name, ty)| column(ty, name == key).map(|t| format!("\"{name}\" {t}")))
        .collect();
    columns.push(format!("PRIMARY KEY (\"{key}\")"));
    format!("CREATE TABLE IF NOT EXISTS \"{table}\" ({})", columns.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_spelling_parses_back_to_it() {
        assert_eq!(RuntimeFn::all().count(), 75);
        for (i, row) in RUNTIME_FUNCTIONS.iter().enumerate() {
            assert_eq!(row.func as usize, i, "row {} is out of variant order", row.name);
            assert_eq!(RuntimeFn::from_name(row.name), Some(row.func), "{}", row.name);
            assert_eq!(row.func.name(), row.name);
        }
        assert_eq!(RuntimeFn::from_name("db.query_one"), Some(RuntimeFn::DbQueryOne));
        assert_eq!(RuntimeFn::from_name("print.u8"), None);
    }

    #[test]
    fn spellings_are_unique() {
        let mut names: Vec<&str> = RUNTIME_FUNCTIONS.iter().map(|r| r.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), RUNTIME_FUNCTIONS.len());
    }
}

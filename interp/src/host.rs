//! [`Host`]: everything that leaves the interpreter.
//!
//! The interpreter does no IO, and it does not restate the rules that the runtime defines for
//! the compiled programs: printing, formatting, JSON, index checks and the wording of traps. It
//! asks its host for each of them, and the driver's host answers with `nagi_runtime`'s own
//! functions, so the interpreter's output and traps are the compiled programs' by construction.
//! The scalar operations (trapping division and `min`/`max` of floats among them) are
//! [`nagi_low::eval`]'s, the compiler's one definition, which `nagi-interp-host`'s tests pin to
//! the runtime's. A test may give a host of its own.

use nagi_low::eval::Trap;
use nagi_low::{ClassId, Module, RuntimeFn};

use crate::value::Value;

/// What the interpreter asks of its environment. Methods that can trap answer `Err` with the
/// trap's message (without the `error: ` prefix).
pub trait Host {
    /// `print.i32`: the value in decimal and a newline.
    fn print_i32(&mut self, v: i32);
    /// `print.i64`: the value in decimal and a newline.
    fn print_i64(&mut self, v: i64);
    /// `print.f64`: the value as Rust's `{:?}` writes it and a newline.
    fn print_f64(&mut self, v: f64);
    /// `print.bool`: `true` or `false` and a newline.
    fn print_bool(&mut self, v: bool);
    /// `print.str`: the text as it is and a newline.
    fn print_str(&mut self, v: &str);

    /// `fmt.i32`: what `print.i32` writes, without the newline.
    fn fmt_i32(&mut self, v: i32) -> String;
    /// `fmt.i64`: what `print.i64` writes, without the newline.
    fn fmt_i64(&mut self, v: i64) -> String;
    /// `fmt.f64`: what `print.f64` writes, without the newline.
    fn fmt_f64(&mut self, v: f64) -> String;
    /// `fmt.bool`: what `print.bool` writes, without the newline.
    fn fmt_bool(&mut self, v: bool) -> String;

    /// The message of the trap a scalar operation raises (`div` or `rem` of an integer by
    /// zero). The operation's meaning is [`nagi_low::eval`]'s, which the constant folder shares;
    /// the wording is the runtime's.
    fn trap_message(&self, trap: Trap) -> String;
    /// The element position of a Nagi index into an array of `len` elements; traps when the
    /// index is outside `0..len`.
    fn index(&self, index: i64, len: usize) -> Result<usize, String>;

    /// `json.encode<C>`: `value`, a value of class `class` of `module`, as JSON text.
    fn json_encode(&mut self, module: &Module, class: ClassId, value: &Value) -> Result<String, String>;
    /// `json.decode<C>`: `text` as a value of class `class` of `module` (a [`Value::Object`]),
    /// or `None` when it is not exactly one such value.
    fn json_decode(&mut self, module: &Module, class: ClassId, text: &str) -> Option<Value>;

    /// A row of the string library (`str.*`): `func` applied to `args`, the values it takes in
    /// order (strings and arrays of strings with their references followed, `i64`s); its result
    /// (`Value::Bool`, `Value::Str`, an array of strings or an option), or the message of the
    /// trap it raises.
    fn string_call(&mut self, func: RuntimeFn, args: &[Value]) -> Result<Value, String>;

    /// A row of the runtime library computed from plain values: randomness and secrets
    /// (`rand.*`, `secret.*`, `password.*`; the password rows block the calling thread for as
    /// long as the hash takes), the clock (`time.*` but `time.sleep`, `duration.*`), ids
    /// (`uuid.*`) and the configuration (`config.*`, a value by its position, which the driver
    /// bound before the run). `func` is applied to `args`: `i64`s, strings with their references
    /// followed, a `Time` or `Duration` as its `i64` microseconds, a `Uuid` as its canonical text
    /// (`Value::Str`). Gives the result in the same forms, or the message of the trap it raises.
    fn library_call(&mut self, func: RuntimeFn, args: &[Value]) -> Result<Value, String>;

    /// `http.fetch` and `http.fetch_json<class>`: calls another HTTP service with `args` (the
    /// method, URL and body strings, the header lines as an array of strings, the timeout in
    /// microseconds as an `i64`), blocking the interpreter's thread until it ends. Gives the
    /// answer as an option: the body's text, or its JSON decoded into `class` of `module`;
    /// `none` after recording the failure (as [`Host::fail`] does), for the program's `try`.
    fn fetch(&mut self, module: &Module, class: Option<ClassId>, args: &[Value]) -> Result<Value, String>;

    /// The order in which `keys` stand once sorted by the array library (`array.sort`,
    /// `array.sort_by`): position `i` of the result is the index of the key that goes to `i`.
    /// The keys are `i32`, `i64`, `f64` or strings, all of one kind.
    fn sorted_order(&mut self, keys: &[Value]) -> Result<Vec<usize>, String>;
    /// `array.contains`: whether an element of `xs` equals `x` as the array library compares.
    fn array_contains(&mut self, xs: &[Value], x: &Value) -> Result<bool, String>;
    /// `array.slice`: the indexes `start..end` of an array of `len` elements, or the message of
    /// the trap when they are not `0 <= start <= end <= len`.
    fn slice_range(&self, len: usize, start: i64, end: i64) -> Result<std::ops::Range<usize>, String>;

    /// `http.fail(status, message)`: records the failure for the answer of the request being
    /// handled. The interpreter runs no requests, so nothing ever answers one.
    fn fail(&mut self, status: i64, message: &str);

    /// `http.clear_failure`: forgets the recorded failure, which `try?` handled.
    fn clear_failure(&mut self);

    /// `http.failure_status` and `http.take_failure`: the recorded failure's status (500 when
    /// none is) and, when `take`, its message, the failure then forgotten; `catch` reads both.
    fn recorded_failure(&mut self, take: bool) -> (i64, String);

    /// `http.set_header(name, value)`: sets a header of the answer of the request being
    /// handled, or the message of the trap it raises (always, in the interpreter, which runs no
    /// requests).
    fn set_header(&mut self, name: &str, value: &str) -> Result<(), String>;

    /// `test.selected`: the index of the test a test build runs, -1 for none.
    fn selected_test(&mut self) -> i64;

    /// `test.failed`: the trap's message for a test that failed with the recorded failure.
    fn test_failure(&mut self) -> String;

    /// `time.sleep`: waits `ms` milliseconds. Nothing else runs meanwhile (the interpreter runs
    /// no tasks), so a host that only records what a program does may return at once.
    fn sleep(&mut self, ms: u64) {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}

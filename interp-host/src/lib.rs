//! The Low interpreter's host made of the runtime itself: every print, format, JSON text and
//! trapping helper of [`RuntimeHost`] is `nagi_runtime`'s own function (the `try_` forms of the
//! trapping ones), so the interpreter shares the compiled programs' semantics instead of
//! restating them, and prints through the same buffered stdout. `nagic run --backend=interp`
//! and the differential fuzz target run the interpreter with it.

mod json;

use nagi_interp::{Host, Value};
use nagi_low::{ClassId, Module};
use nagi_runtime::{ops, rt};

/// The interpreter's host: `nagi_runtime` itself.
pub struct RuntimeHost;

impl Host for RuntimeHost {
    fn print_i32(&mut self, v: i32) {
        rt::print_i32(v);
    }

    fn print_i64(&mut self, v: i64) {
        rt::print_i64(v);
    }

    fn print_f64(&mut self, v: f64) {
        rt::print_f64(v);
    }

    fn print_bool(&mut self, v: bool) {
        rt::print_bool(v);
    }

    fn print_str(&mut self, v: &str) {
        rt::print_str(v);
    }

    fn fmt_i32(&mut self, v: i32) -> String {
        rt::fmt_i32(v)
    }

    fn fmt_i64(&mut self, v: i64) -> String {
        rt::fmt_i64(v)
    }

    fn fmt_f64(&mut self, v: f64) -> String {
        rt::fmt_f64(v)
    }

    fn fmt_bool(&mut self, v: bool) -> String {
        rt::fmt_bool(v)
    }

    fn div_i32(&self, a: i32, b: i32) -> Result<i32, String> {
        ops::try_div_i32(a, b).map_err(str::to_string)
    }

    fn div_i64(&self, a: i64, b: i64) -> Result<i64, String> {
        ops::try_div_i64(a, b).map_err(str::to_string)
    }

    fn rem_i32(&self, a: i32, b: i32) -> Result<i32, String> {
        ops::try_rem_i32(a, b).map_err(str::to_string)
    }

    fn rem_i64(&self, a: i64, b: i64) -> Result<i64, String> {
        ops::try_rem_i64(a, b).map_err(str::to_string)
    }

    fn index(&self, index: i64, len: usize) -> Result<usize, String> {
        ops::try_index(index, len)
    }

    fn fmin(&self, a: f64, b: f64) -> f64 {
        ops::fmin(a, b)
    }

    fn fmax(&self, a: f64, b: f64) -> f64 {
        ops::fmax(a, b)
    }

    fn json_encode(&mut self, module: &Module, class: ClassId, value: &Value) -> Result<String, String> {
        json::encode(module, class, value)
    }

    fn json_decode(&mut self, module: &Module, class: ClassId, text: &str) -> Option<Value> {
        json::decode(module, class, text)
    }
}

#[cfg(test)]
mod tests {
    /// The two trap messages the interpreter words itself are the runtime's.
    #[test]
    fn the_interpreters_own_trap_messages_are_the_runtimes() {
        assert_eq!(nagi_interp::UNWRAP_OF_NONE, nagi_runtime::ops::UNWRAP_OF_NONE);
        assert_eq!(nagi_interp::STACK_OVERFLOW, nagi_runtime::stack::STACK_OVERFLOW);
    }
}

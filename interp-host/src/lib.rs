//! The Low interpreter's host made of the runtime itself: every print, format, JSON text and
//! trapping helper of [`RuntimeHost`] is `nagi_runtime`'s own function (the `try_` forms of the
//! trapping ones), so the interpreter shares the compiled programs' semantics instead of
//! restating them, and prints through the same buffered stdout. `nagic run --backend=interp`
//! and the differential fuzz target run the interpreter with it.

mod json;

use nagi_interp::{Host, Value};
use nagi_low::{ClassId, Module, RuntimeFn};
use nagi_runtime::arrays::{self, Key};
use nagi_runtime::{ops, rt, strings};

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

    fn string_call(&mut self, func: RuntimeFn, args: &[Value]) -> Result<Value, String> {
        string_call(func, args)
    }

    fn fail(&mut self, status: i64, message: &str) {
        nagi_runtime::failure::fail(status, message);
    }

    fn clear_failure(&mut self) {
        nagi_runtime::failure::clear();
    }

    fn selected_test(&mut self) -> i64 {
        nagi_runtime::program::selected_test()
    }

    fn test_failure(&mut self) -> String {
        nagi_runtime::program::failed_test_message()
    }

    fn sorted_order(&mut self, keys: &[Value]) -> Result<Vec<usize>, String> {
        let keys = keys.iter().map(key).collect::<Result<Vec<Key>, String>>()?;
        Ok(arrays::sorted_order(&keys.iter().collect::<Vec<_>>()))
    }

    fn array_contains(&mut self, xs: &[Value], x: &Value) -> Result<bool, String> {
        let keys = xs.iter().map(key).collect::<Result<Vec<Key>, String>>()?;
        Ok(arrays::contains(&keys, &key(x)?))
    }

    fn slice_range(&self, len: usize, start: i64, end: i64) -> Result<std::ops::Range<usize>, String> {
        arrays::slice_range(len, start, end)
    }

    fn set_header(&mut self, name: &str, value: &str) -> Result<(), String> {
        nagi_runtime::http::try_set_header(name, value)
    }
}

/// An element or key the array library orders, as the interpreter holds it.
fn key(value: &Value) -> Result<Key<'_>, String> {
    Ok(match value {
        Value::I32(v) => Key::I32(*v),
        Value::I64(v) => Key::I64(*v),
        Value::F64(v) => Key::F64(*v),
        Value::Str(s) => Key::Str(s),
        _ => return Err("the array library orders only i32, i64, f64 and String values".into()),
    })
}

/// [`Host::string_call`]: the row's rule in `nagi_runtime::strings`, on the interpreter's values.
fn string_call(func: RuntimeFn, args: &[Value]) -> Result<Value, String> {
    let malformed = |i: usize, what: &str| format!("`rtcall {}` takes {what} as argument {}", func.name(), i + 1);
    let text = |i: usize| match args.get(i) {
        Some(Value::Str(s)) => Ok(s.as_str()),
        _ => Err(malformed(i, "a string")),
    };
    let int = |i: usize| match args.get(i) {
        Some(Value::I64(v)) => Ok(*v),
        _ => Err(malformed(i, "an i64")),
    };
    let texts = |i: usize| match args.get(i) {
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| match item {
                Value::Str(s) => Ok(s.as_str()),
                _ => Err(malformed(i, "an array of strings")),
            })
            .collect::<Result<Vec<&str>, String>>(),
        _ => Err(malformed(i, "an array of strings")),
    };
    let option = |value: Option<Value>| Value::Option(value.map(Box::new));
    Ok(match func {
        RuntimeFn::StrContains => Value::Bool(strings::contains(text(0)?, text(1)?)),
        RuntimeFn::StrStartsWith => Value::Bool(strings::starts_with(text(0)?, text(1)?)),
        RuntimeFn::StrEndsWith => Value::Bool(strings::ends_with(text(0)?, text(1)?)),
        RuntimeFn::StrFind => option(strings::find(text(0)?, text(1)?).map(Value::I64)),
        RuntimeFn::StrSplit => {
            let parts = strings::try_split(text(0)?, text(1)?).map_err(str::to_string)?;
            Value::Array(parts.into_iter().map(Value::Str).collect())
        }
        RuntimeFn::StrTrim => Value::Str(strings::trim(text(0)?)),
        RuntimeFn::StrToLower => Value::Str(strings::to_lower(text(0)?)),
        RuntimeFn::StrToUpper => Value::Str(strings::to_upper(text(0)?)),
        RuntimeFn::StrReplace => Value::Str(strings::replace(text(0)?, text(1)?, text(2)?)),
        RuntimeFn::StrJoin => Value::Str(strings::join(&texts(0)?, text(1)?)),
        RuntimeFn::StrSlice => Value::Str(strings::try_slice(text(0)?, int(1)?, int(2)?)?),
        RuntimeFn::StrParseI64 => option(strings::parse_i64(text(0)?).map(Value::I64)),
        RuntimeFn::StrParseF64 => option(strings::parse_f64(text(0)?).map(Value::F64)),
        other => return Err(format!("`rtcall {}` is not a row of the string library", other.name())),
    })
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

//! The Low interpreter's host made of the runtime itself: every print, format, JSON text,
//! trapping helper and trap message of [`RuntimeHost`] is `nagi_runtime`'s own function or
//! constant (the `try_` forms of the trapping helpers), so the interpreter shares the compiled
//! programs' semantics instead of restating them, and prints through the same buffered stdout.
//! `nagic run --backend=interp` and the differential fuzz target run the interpreter with it.
//!
//! This crate is the one that sees both `nagi-low` and `nagi-runtime`, so its tests also pin the
//! compiler's scalar semantics ([`nagi_low::eval`], which the interpreter and the constant
//! folder run) to the runtime's: `min`/`max` of floats and trapping division.

mod json;

use nagi_interp::{Host, Value};
use nagi_low::eval::Trap;
use nagi_low::{ClassId, Module, RuntimeFn};
use nagi_runtime::arrays::{self, Key};
use nagi_runtime::{configuration, ids, ops, outbound, rt, secrets, strings, time};

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

    fn trap_message(&self, trap: Trap) -> String {
        match trap {
            Trap::DivisionByZero => ops::DIVISION_BY_ZERO,
            Trap::RemainderByZero => ops::REMAINDER_BY_ZERO,
        }
        .to_string()
    }

    fn index(&self, index: i64, len: usize) -> Result<usize, String> {
        ops::try_index(index, len)
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

    fn library_call(&mut self, func: RuntimeFn, args: &[Value]) -> Result<Value, String> {
        library_call(func, args)
    }

    fn fetch(&mut self, module: &Module, class: Option<ClassId>, args: &[Value]) -> Result<Value, String> {
        let a = Args { func: RuntimeFn::HttpFetch, args };
        let call = outbound::Call::new(a.text(0)?, a.text(1)?, a.text(2)?, a.texts(3)?, a.int(4)?);
        let result = outbound::run_blocking(call.clone());
        Ok(json::fetched(module, class, &call, result))
    }

    fn fail(&mut self, status: i64, message: &str) {
        nagi_runtime::failure::fail(status, message);
    }

    fn clear_failure(&mut self) {
        nagi_runtime::failure::clear();
    }

    fn recorded_failure(&mut self, take: bool) -> (i64, String) {
        let status = i64::from(nagi_runtime::failure::status());
        (status, if take { nagi_runtime::failure::take_message() } else { String::new() })
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

/// The arguments of a row as the host reads them, each checked to be of the kind the row takes.
struct Args<'a> {
    func: RuntimeFn,
    args: &'a [Value],
}

impl<'a> Args<'a> {
    fn malformed(&self, i: usize, what: &str) -> String {
        format!("`rtcall {}` takes {what} as argument {}", self.func.name(), i + 1)
    }

    fn text(&self, i: usize) -> Result<&'a str, String> {
        match self.args.get(i) {
            Some(Value::Str(s)) => Ok(s.as_str()),
            _ => Err(self.malformed(i, "a string")),
        }
    }

    fn int(&self, i: usize) -> Result<i64, String> {
        match self.args.get(i) {
            Some(Value::I64(v)) => Ok(*v),
            _ => Err(self.malformed(i, "an i64")),
        }
    }

    fn texts(&self, i: usize) -> Result<Vec<&'a str>, String> {
        let Some(Value::Array(items)) = self.args.get(i) else { return Err(self.malformed(i, "an array of strings")) };
        items
            .iter()
            .map(|item| match item {
                Value::Str(s) => Ok(s.as_str()),
                _ => Err(self.malformed(i, "an array of strings")),
            })
            .collect()
    }
}

/// [`Host::string_call`]: the row's rule in `nagi_runtime::strings`, on the interpreter's values.
fn string_call(func: RuntimeFn, args: &[Value]) -> Result<Value, String> {
    let args = Args { func, args };
    let text = |i: usize| args.text(i);
    let int = |i: usize| args.int(i);
    let texts = |i: usize| args.texts(i);
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

/// [`Host::library_call`]: the row's rule in `nagi_runtime::secrets`, `time`, `ids` or
/// `configuration`, on the interpreter's values (a `Time` and a `Duration` are `Value::I64`
/// microseconds, a `Uuid` its canonical text).
fn library_call(func: RuntimeFn, args: &[Value]) -> Result<Value, String> {
    let args = Args { func, args };
    let int = |i: usize| args.int(i);
    let text = |i: usize| args.text(i);
    Ok(match func {
        RuntimeFn::RandInt => Value::I64(secrets::try_random_int(int(0)?, int(1)?)?),
        RuntimeFn::RandToken => Value::Str(secrets::try_token(int(0)?)?),
        RuntimeFn::SecretEq => Value::Bool(secrets::secure_eq(text(0)?, text(1)?)),
        RuntimeFn::PasswordHash => Value::Str(secrets::hash_password_now(text(0)?)),
        RuntimeFn::PasswordVerify => Value::Bool(secrets::verify_password_now(text(0)?, text(1)?)),
        RuntimeFn::TimeNow => Value::I64(time::now_micros()),
        RuntimeFn::TimeMonotonic => Value::I64(time::monotonic_micros()),
        RuntimeFn::TimeFromMicros => Value::I64(time::try_time(int(0)?)?),
        RuntimeFn::TimeMicros | RuntimeFn::DurationFromMicros | RuntimeFn::DurationMicros => Value::I64(int(0)?),
        RuntimeFn::TimeFormat => Value::Str(time::format_time(int(0)?)),
        RuntimeFn::DurationFormat => Value::Str(time::format_duration(int(0)?)),
        RuntimeFn::TimeParse => Value::Option(time::parse_time(text(0)?).map(|t| Box::new(Value::I64(t)))),
        RuntimeFn::TimeSetClock => {
            time::fix_clock(Some(int(0)?));
            Value::Unit
        }
        RuntimeFn::UuidV7 => Value::Str(ids::format(ids::v7_bytes())),
        RuntimeFn::UuidV4 => Value::Str(ids::format(ids::v4_bytes())),
        RuntimeFn::UuidEq => Value::Bool(text(0)? == text(1)?),
        RuntimeFn::UuidFormat => Value::Str(text(0)?.to_owned()),
        RuntimeFn::UuidParse => Value::Option(ids::parse(text(0)?).map(|b| Box::new(Value::Str(ids::format(b))))),
        RuntimeFn::ConfigStr => Value::Str(configuration::str(int(0)?)),
        RuntimeFn::ConfigI64 | RuntimeFn::ConfigDuration => Value::I64(configuration::int(int(0)?)),
        RuntimeFn::ConfigF64 => Value::F64(configuration::float(int(0)?)),
        RuntimeFn::ConfigBool => Value::Bool(configuration::boolean(int(0)?)),
        other => return Err(format!("`rtcall {}` is not a row of the runtime library", other.name())),
    })
}

#[cfg(test)]
mod tests {
    use nagi_interp::Host;
    use nagi_low::eval::{self, Outcome, Refusal};
    use nagi_low::{BinaryOp, Constant};
    use nagi_runtime::ops;

    use super::RuntimeHost;

    /// `op.T a, b` by the evaluator, as the runtime's result: a value, or the trap's message
    /// as [`RuntimeHost`] words it.
    fn evaluated(op: BinaryOp, a: Constant, b: Constant) -> Result<Constant, String> {
        match eval::binary(op, a, b) {
            Ok(Outcome::Value(c)) => Ok(c),
            Err(Refusal::Trap(trap)) => Err(RuntimeHost.trap_message(trap)),
            other => panic!("`{}` of {a} and {b} gave {other:?}", op.name()),
        }
    }

    /// The evaluator's `min.f64`/`max.f64` are the runtime's `fmin`/`fmax`, bit for bit, on the
    /// inputs where a plain `min`/`max` would differ: NaN on either side, both zeros in both
    /// orders, infinities.
    #[test]
    fn the_evaluators_float_min_and_max_are_the_runtimes() {
        let values = [f64::NAN, -f64::NAN, 0.0, -0.0, 1.0, -1.0, f64::INFINITY, f64::NEG_INFINITY, f64::MIN_POSITIVE];
        for a in values {
            for b in values {
                let (x, y) = (Constant::F64(a), Constant::F64(b));
                // `Constant`'s equality compares bits, so the sign of a zero counts.
                assert_eq!(evaluated(BinaryOp::Min, x, y), Ok(Constant::F64(ops::fmin(a, b))), "min {a:?} {b:?}");
                assert_eq!(evaluated(BinaryOp::Max, x, y), Ok(Constant::F64(ops::fmax(a, b))), "max {a:?} {b:?}");
            }
        }
    }

    /// The evaluator's integer `div` and `rem` are the runtime's, and trap where it traps, with
    /// its message.
    #[test]
    fn the_evaluators_division_is_the_runtimes() {
        // Each case: the operands, and the runtime's quotient and remainder (or trap message).
        let mut cases = Vec::new();
        let i64s = [0, 1, -1, 7, -7, 2, i64::MIN, i64::MAX];
        for (a, b) in i64s.into_iter().flat_map(|a| i64s.map(|b| (a, b))) {
            let (div, rem) = (ops::try_div_i64(a, b).map(Constant::I64), ops::try_rem_i64(a, b).map(Constant::I64));
            cases.push((Constant::I64(a), Constant::I64(b), div, rem));
        }
        let i32s = [0, 1, -1, 7, -7, 2, i32::MIN, i32::MAX];
        for (a, b) in i32s.into_iter().flat_map(|a| i32s.map(|b| (a, b))) {
            let (div, rem) = (ops::try_div_i32(a, b).map(Constant::I32), ops::try_rem_i32(a, b).map(Constant::I32));
            cases.push((Constant::I32(a), Constant::I32(b), div, rem));
        }
        for (x, y, div, rem) in cases {
            assert_eq!(evaluated(BinaryOp::Div, x, y), div.map_err(str::to_string), "div {x} {y}");
            assert_eq!(evaluated(BinaryOp::Rem, x, y), rem.map_err(str::to_string), "rem {x} {y}");
        }
    }
}

//! Nagi's arithmetic, float, formatting and JSON semantics as the runtime implements them.

use std::panic::{UnwindSafe, catch_unwind};

use nagi_runtime::{Trap, ops, rt};

/// Runs `f` and returns the message of the trap it raises.
fn trap_message<R>(f: impl FnOnce() -> R + UnwindSafe) -> String {
    match catch_unwind(f) {
        Ok(_) => panic!("expected a trap"),
        Err(payload) => match payload.downcast::<Trap>() {
            Ok(trap) => trap.message,
            Err(_) => panic!("the panic was not a Trap"),
        },
    }
}

#[test]
fn division_and_remainder() {
    assert_eq!(ops::div_i32(7, 2), 3);
    assert_eq!(ops::div_i32(-7, 2), -3);
    assert_eq!(ops::rem_i32(-7, 2), -1);
    assert_eq!(ops::rem_i32(7, -2), 1);
    assert_eq!(ops::div_i32(i32::MIN, -1), i32::MIN);
    assert_eq!(ops::rem_i32(i32::MIN, -1), 0);
    assert_eq!(ops::div_i64(i64::MIN, -1), i64::MIN);
    assert_eq!(ops::rem_i64(i64::MIN, -1), 0);
    assert_eq!(ops::div_i64(-9, 4), -2);
    assert_eq!(ops::rem_i64(-9, 4), -1);
}

#[test]
fn division_by_zero_traps() {
    assert_eq!(trap_message(|| ops::div_i32(1, 0)), "division by zero");
    assert_eq!(trap_message(|| ops::div_i64(i64::MIN, 0)), "division by zero");
    assert_eq!(trap_message(|| ops::rem_i32(1, 0)), "remainder by zero");
    assert_eq!(trap_message(|| ops::rem_i64(0, 0)), "remainder by zero");
}

#[test]
fn index_checks() {
    assert_eq!(ops::index(0, 3), 0);
    assert_eq!(ops::index(2, 3), 2);
    assert_eq!(trap_message(|| ops::index(3, 3)), "index out of range: the length is 3 but the index is 3");
    assert_eq!(trap_message(|| ops::index(-1, 3)), "index out of range: the length is 3 but the index is -1");
    assert_eq!(trap_message(|| ops::index(0, 0)), "index out of range: the length is 0 but the index is 0");
    assert_eq!(
        trap_message(|| ops::index(i64::MIN, 5)),
        format!("index out of range: the length is 5 but the index is {}", i64::MIN)
    );
}

#[test]
fn unwrap_and_trap() {
    assert_eq!(ops::unwrap(Some(4)), 4);
    assert_eq!(trap_message(|| ops::unwrap::<i32>(None)), "unwrap of none");
    assert_eq!(trap_message(|| nagi_runtime::trap("custom")), "custom");
}

fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

#[test]
fn fmin_and_fmax() {
    let cases = [
        (1.0, 2.0, 1.0, 2.0),
        (f64::NAN, 2.0, 2.0, 2.0),
        (2.0, f64::NAN, 2.0, 2.0),
        (f64::NAN, f64::NAN, f64::NAN, f64::NAN),
        (0.0, -0.0, -0.0, 0.0),
        (-0.0, 0.0, -0.0, 0.0),
        (-0.0, -0.0, -0.0, -0.0),
        (f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY),
        (f64::NAN, -0.0, -0.0, -0.0),
    ];
    for (a, b, min, max) in cases {
        assert!(same(ops::fmin(a, b), min), "fmin({a:?}, {b:?}) = {:?}", ops::fmin(a, b));
        assert!(same(ops::fmax(a, b), max), "fmax({a:?}, {b:?}) = {:?}", ops::fmax(a, b));
    }
}

#[test]
fn concat_and_formatting() {
    assert_eq!(ops::concat(["nagi", "ō"]), "nagiō");
    assert_eq!(ops::concat(["", ""]), "");
    assert_eq!(ops::concat(["post ", "7", " of ", "Ada"]), "post 7 of Ada");
    let one = ops::concat(["a", "bc", "déf"]);
    assert_eq!((one.as_str(), one.capacity()), ("abcdéf", 7), "sized once, exactly");
    assert_eq!(ops::concat(std::iter::empty()), "");
    assert_eq!(rt::fmt_i32(i32::MIN), "-2147483648");
    assert_eq!(rt::fmt_i64(42), "42");
    assert_eq!(rt::fmt_bool(true), "true");
    let floats = [
        (1.0, "1.0"),
        (-0.0, "-0.0"),
        (f64::NAN, "NaN"),
        (f64::INFINITY, "inf"),
        (1e21, "1e21"),
        (0.1 + 0.2, "0.30000000000000004"),
        (1e-7, "1e-7"),
    ];
    for (value, text) in floats {
        assert_eq!(rt::fmt_f64(value), text);
    }
}

#[derive(nagi_runtime::serde::Serialize, nagi_runtime::serde::Deserialize, Debug, PartialEq)]
#[serde(crate = "nagi_runtime::serde", deny_unknown_fields)]
struct Point {
    x: f64,
    label: Option<String>,
}

#[test]
fn json_encode_and_decode() {
    assert_eq!(rt::json_encode(&Point { x: f64::NAN, label: None }), r#"{"x":null,"label":null}"#);
    assert_eq!(rt::json_encode(&Point { x: 0.1, label: Some("a\"b".to_owned()) }), r#"{"x":0.1,"label":"a\"b"}"#);
    assert_eq!(
        rt::json_decode::<Point>(r#"{"x": 2.5, "label": "p"}"#),
        Some(Point { x: 2.5, label: Some("p".to_owned()) })
    );
    assert_eq!(rt::json_decode::<Point>(r#"{"x": 1}"#), Some(Point { x: 1.0, label: None }));
    assert_eq!(rt::json_decode::<Point>(r#"{"x": 1, "y": 2}"#), None);
    assert_eq!(rt::json_decode::<Point>(r#"{"x": 1} 2"#), None);
    // float_roundtrip: the closest double, not one ulp off.
    let parsed: f64 = rt::json_decode("2.2250738585072011e-308").expect("float");
    assert_eq!(parsed, "2.2250738585072011e-308".parse::<f64>().expect("std parse"));
    let parsed: f64 = rt::json_decode("0.30000000000000004").expect("float");
    assert_eq!(parsed, 0.1 + 0.2);
}

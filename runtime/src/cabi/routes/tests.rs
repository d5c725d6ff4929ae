//! Binding by descriptor against the Rust path's own binding: the same request, bound once by
//! the generic `Request` methods that the Rust emitter's handlers call and once by [`bind`] with
//! a parameter descriptor, must give the same value or the same answer (status, kind, detail).

use std::panic::{self, AssertUnwindSafe};

use serde::{Deserialize, Serialize};

use super::{ParamDesc, SOURCE_BODY, SOURCE_PATH, SOURCE_QUERY, SOURCE_QUERY_OPT, bind};
use crate::HttpError;
use crate::cabi::json::TypeDesc;
use crate::cabi::testing as t;
use crate::http::Request;
use crate::shaped_json::{self, Value};

mod routes;

/// The class of the body, as the Rust emitter writes it.
#[derive(Deserialize, Serialize, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
struct Person {
    id: i64,
    name: String,
    age: i32,
    nick: Option<String>,
}

fn person() -> &'static TypeDesc {
    t::class("Person", &[("id", t::i64()), ("name", t::string()), ("age", t::i32()), ("nick", t::option(t::string()))])
}

fn param(name: &'static str, source: u64, ty: &'static TypeDesc) -> ParamDesc {
    ParamDesc { name: name.as_ptr(), name_len: name.len(), source, ty, offset: 0 }
}

/// What binding gave: a value, or the answer it unwound with.
fn outcome<T>(bind: impl FnOnce() -> T) -> Result<T, HttpError> {
    match panic::catch_unwind(AssertUnwindSafe(bind)) {
        Ok(value) => Ok(value),
        Err(payload) => match payload.downcast::<HttpError>() {
            Ok(error) => Err(*error),
            Err(other) => panic!("binding unwound with {}", crate::trap::payload_text(other.as_ref())),
        },
    }
}

/// Binds `name` from `request` both ways and asserts the same outcome; `rust` is the Rust path's
/// binding with its value made a [`Value`]. Returns the value, if it bound.
fn same(request: &Request, desc: &ParamDesc, rust: impl FnOnce(&Request) -> Value) -> Option<Value> {
    let expected = outcome(|| rust(request));
    let got = outcome(|| bind(request, desc));
    assert_eq!(got, expected, "parameter `{}`", desc.name());
    got.ok()
}

fn opt<T: Into<Value>>(v: Option<T>) -> Value {
    Value::Option(v.map(|v| Box::new(v.into())))
}

#[test]
fn path_parameters_bind_as_on_the_rust_path() {
    for text in ["7", "-3", "abc", "9223372036854775808", "", " 1", "1.0", "+5"] {
        let request = Request::for_test(&[("id", text)], &[], None, "");
        same(&request, &param("id", SOURCE_PATH, t::i64()), |r| r.path::<i64>("id").into());
        same(&request, &param("id", SOURCE_PATH, t::i32()), |r| r.path::<i32>("id").into());
    }
    for text in ["2.5", "NaN", "inf", "-1e3", "x", "1e400"] {
        let request = Request::for_test(&[("x", text)], &[], None, "");
        same(&request, &param("x", SOURCE_PATH, t::f64()), |r| r.path::<f64>("x").into());
    }
    for text in ["true", "false", "yes", "TRUE", "1"] {
        let request = Request::for_test(&[("b", text)], &[], None, "");
        same(&request, &param("b", SOURCE_PATH, t::bool()), |r| r.path::<bool>("b").into());
    }
    let request = Request::for_test(&[("name", "Jürgen")], &[], None, "");
    let bound = same(&request, &param("name", SOURCE_PATH, t::string()), |r| r.path::<String>("name").into());
    assert_eq!(bound, Some(Value::Str("Jürgen".to_owned())));
}

#[test]
fn query_parameters_bind_as_on_the_rust_path() {
    let queries: [&[(&str, &str)]; 6] =
        [&[], &[("n", "5")], &[("n", "x")], &[("n", "")], &[("n", "1"), ("n", "2")], &[("m", "1")]];
    for query in queries {
        let request = Request::for_test(&[], query, None, "");
        same(&request, &param("n", SOURCE_QUERY, t::i32()), |r| r.query::<i32>("n").into());
        same(&request, &param("n", SOURCE_QUERY, t::string()), |r| r.query::<String>("n").into());
        same(&request, &param("n", SOURCE_QUERY_OPT, t::option(t::i64())), |r| opt(r.query_opt::<i64>("n")));
        same(&request, &param("n", SOURCE_QUERY_OPT, t::option(t::f64())), |r| opt(r.query_opt::<f64>("n")));
        same(&request, &param("n", SOURCE_QUERY_OPT, t::option(t::bool())), |r| opt(r.query_opt::<bool>("n")));
        same(&request, &param("n", SOURCE_QUERY_OPT, t::option(t::string())), |r| opt(r.query_opt::<String>("n")));
    }
}

#[test]
fn bodies_bind_as_on_the_rust_path() {
    let good = r#"{"id": 1, "name": "Ada", "age": 36}"#;
    let cases: [(Option<&str>, &str); 18] = [
        (Some("application/json"), good),
        (Some("application/merge-patch+json; charset=utf-8"), r#"[1, "Ada", 36, "a"]"#),
        (None, good),
        (Some("text/plain"), good),
        (Some("application/json"), ""),
        (Some("application/json"), "  \n"),
        (Some("application/json"), r#"{"id": 1, "name": "Ada", "age": 36"#),
        (Some("application/json"), r#"{"id": 1, "name": "Ada", "age": 36} x"#),
        (Some("application/json"), r#"{"id": 1, "name": "Ada"}"#),
        (Some("application/json"), r#"{"id": 1, "name": "Ada", "age": null}"#),
        (Some("application/json"), r#"{"id": 1, "name": 5, "age": 36}"#),
        (Some("application/json"), r#"{"id": 1, "name": "Ada", "age": 30.5}"#),
        (Some("application/json"), r#"{"id": 1.0, "name": "Ada", "age": 3e1}"#),
        (Some("application/json"), r#"{"id": 1, "name": "Ada", "age": "30"}"#),
        (Some("application/json"), r#"{"id": 1, "name": "Ada", "age": 3000000000}"#),
        (Some("application/json"), r#"{"id": 1, "name": "Ada", "name": "Bo", "age": 36}"#),
        (Some("application/json"), r#"{"id": 1, "name": "Ada", "age": 36, "x": 1}"#),
        (Some("application/json"), r#"[1, "Ada"]"#),
    ];
    let person = person();
    let desc = param("body", SOURCE_BODY, person);
    let mut decoded = 0;
    for (content_type, body) in cases {
        let request = Request::for_test(&[], &[], content_type, body);
        let rust = |r: &Request| {
            let value: Person = r.json();
            shaped_json::decode(&serde_json::to_string(&value).expect("encodes"), person).expect("decodes")
        };
        decoded += usize::from(same(&request, &desc, rust).is_some());
    }
    // `good` and the whole numbers written as floats (the integers they equal, on both paths);
    // the sequence forms are refused on both paths (a class body is an object).
    assert_eq!(decoded, 2);
}

#[test]
#[should_panic(expected = "cannot come from the path or the query")]
fn a_class_is_no_path_parameter() {
    let request = Request::for_test(&[("id", "1")], &[], None, "");
    bind(&request, &param("id", SOURCE_PATH, person()));
}

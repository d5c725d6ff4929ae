//! Decoding into the layout against decoding into the value tree and writing it: for each
//! text both accept or both refuse (through the HTTP binding, with the same answer), what they
//! write encodes to the same JSON, and a refused text leaves no buffer behind.

use super::{decode_body, drop_value};
use crate::cabi::json::{TypeDesc, encode, nagi_rt_json_decode, write};
use crate::cabi::testing as t;
use crate::cabi::thread_buffers;
use crate::http::binding;
use crate::shaped_json;

fn account() -> &'static TypeDesc {
    let person = t::class("Person", &[("id", t::i64()), ("name", t::string())]);
    let role = t::enumeration("Role", &[("Admin", t::unit()), ("Member", t::i64())]);
    t::class(
        "Account",
        &[
            ("id", t::i64()),
            ("name", t::string()),
            ("tags", t::array(t::string())),
            ("owner", t::option(person)),
            ("people", t::array(person)),
            ("role", role),
            ("at", t::option(t::time())),
            ("key", t::option(t::uuid())),
            ("counts", t::map_string(t::i64())),
            ("flags", t::array(t::bool())),
        ],
    )
}

/// Zeroed, 8-byte aligned room for a value of `ty`.
fn room(ty: &TypeDesc) -> Vec<u64> {
    vec![0; ty.size.div_ceil(8) + 1]
}

const GOOD: &str = r#"{"id": 1, "name": "Ada", "tags": ["a", "b", "c", "d", "e"], "owner": {"id": 2, "name": "Bo"},
    "people": [{"id": 3, "name": "Cy"}, {"name": "Di", "id": 4}], "role": {"Member": 7},
    "at": "2026-12-06T10:00:00.5Z", "key": "0190f5a2-7b3c-7def-8123-456789abcdef", "counts": {"x": 1, "y": 2},
    "flags": [true, false]}"#;

const TEXTS: [&str; 17] = [
    GOOD,
    r#"{"id": 1, "name": "Ada", "tags": [], "people": [], "role": "Admin", "counts": {}, "flags": []}"#,
    r#"{"id": 1, "name": "Ada", "tags": [], "owner": null, "people": [], "role": "Admin", "at": null, "key": null, "counts": {}, "flags": []}"#,
    // Each failure below comes after buffers were written: strings, elements, a map.
    r#"{"id": 1, "name": "Ada", "tags": ["a", "b", "c", "d", "e", 5], "people": [], "role": "Admin", "counts": {}, "flags": []}"#,
    r#"{"id": 1, "name": "Ada", "tags": ["a"], "people": [{"id": 3, "name": "Cy"}, {"id": 4}], "role": "Admin", "counts": {}, "flags": []}"#,
    r#"{"id": 1, "name": "Ada", "tags": ["a"], "people": [{"id": 3, "name": "Cy"}, {"id": 4, "name": 9}], "role": "Admin", "counts": {}, "flags": []}"#,
    r#"{"id": 1, "name": "Ada", "tags": ["a"], "name": "Bo", "people": [], "role": "Admin", "counts": {}, "flags": []}"#,
    r#"{"id": 1, "name": "Ada", "tags": ["a"], "owner": {"id": 2, "name": "Bo", "x": 1}, "people": [], "role": "Admin", "counts": {}, "flags": []}"#,
    r#"{"id": 1, "name": "Ada", "tags": ["a"], "people": [], "role": "Admin", "counts": {"x": 1}, "flags": [], "extra": 1}"#,
    r#"{"id": 1, "name": "Ada", "tags": ["a"], "people": [], "role": "Admin", "counts": {"x": "1"}, "flags": []}"#,
    r#"{"id": 1, "name": "Ada", "tags": ["a"], "people": [], "role": "Boss", "counts": {}, "flags": []}"#,
    r#"{"id": 1, "name": "Ada", "tags": ["a"], "people": [], "role": "Admin", "key": "not-a-uuid", "counts": {}, "flags": []}"#,
    r#"{"id": 1, "name": "Ada", "tags": ["a"], "people": [], "role": "Admin", "counts": {}}"#,
    r#"{"id": 1, "name": "Ada", "tags": ["a"], "people": [], "role": "Admin", "counts": {}, "flags": [true, 1]}"#,
    r#"{"id": 1, "name": "Ada", "tags": ["a"], "people": [], "role": "Admin", "counts": {}, "flags": []} x"#,
    r#"{"id": 1, "name": "Ada", "tags": ["a"#,
    r#"[1, "Ada"]"#,
];

/// The JSON the value at `at` encodes to; then the value is freed.
fn encoded_and_dropped(at: *mut u8, ty: &TypeDesc) -> String {
    // SAFETY: `at` holds a value of `ty`, which nothing uses after it is freed.
    unsafe {
        let text = encode(at, ty).expect("encodes");
        drop_value(at, ty);
        text
    }
}

#[test]
fn json_decode_into_the_layout_writes_what_the_value_tree_writes_and_leaks_nothing() {
    let ty = account();
    let option = t::option(ty);
    let before = thread_buffers();
    let mut accepted = 0;
    for text in TEXTS {
        let tree = shaped_json::decode(text, ty);
        let mut out = room(option);
        let at = out.as_mut_ptr().cast::<u8>();
        // SAFETY: `out` has room for the option, and the text is readable.
        unsafe { nagi_rt_json_decode(at, text.as_ptr(), text.len(), option) };
        // SAFETY: the option's tag is its first byte.
        let some = unsafe { at.read() } == 1;
        assert_eq!(some, tree.is_some(), "{text}");
        if let Some(tree) = tree {
            accepted += 1;
            let mut expected = room(ty);
            // SAFETY: `expected` has room for the value.
            unsafe { write(tree, ty, expected.as_mut_ptr().cast()) };
            let expected = encoded_and_dropped(expected.as_mut_ptr().cast(), ty);
            // SAFETY: the payload lies at its offset in the option.
            let got = encoded_and_dropped(unsafe { at.add(option.payload_offset) }, ty);
            assert_eq!(got, expected, "{text}");
        }
        assert_eq!(thread_buffers(), before, "buffers left behind by {text}");
    }
    assert_eq!(accepted, 3);
}

#[test]
fn a_body_decoded_into_the_layout_answers_as_the_value_tree_and_leaks_nothing() {
    let ty = account();
    let before = thread_buffers();
    for text in TEXTS {
        let expected = binding::decode_shaped(text.as_bytes(), ty);
        let mut out = room(ty);
        let at = out.as_mut_ptr().cast::<u8>();
        // SAFETY: `out` has room for the value.
        let got = unsafe { decode_body(text.as_bytes(), ty, at) };
        match (got, expected) {
            (Ok(()), Ok(tree)) => {
                let mut written = room(ty);
                // SAFETY: `written` has room for the value.
                unsafe { write(tree, ty, written.as_mut_ptr().cast()) };
                let expected = encoded_and_dropped(written.as_mut_ptr().cast(), ty);
                assert_eq!(encoded_and_dropped(at, ty), expected, "{text}");
            }
            (Err(got), Err(expected)) => assert_eq!(got, expected, "{text}"),
            (got, expected) => panic!("{text}: into the layout {got:?}, through the tree {:?}", expected.map(|_| ())),
        }
        assert_eq!(thread_buffers(), before, "buffers left behind by {text}");
    }
}

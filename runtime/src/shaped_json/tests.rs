//! The shaped decoder against serde's derive: every text decodes through a hand-written
//! `#[derive(Deserialize)] #[serde(deny_unknown_fields)]` struct (as the Rust emitter writes its
//! classes) and through [`Seed`] on the equivalent layout descriptor, both under
//! `serde_path_to_error` as the HTTP binding runs them, and the two must agree exactly: the same
//! value, or the same error message (position included), path and category.

use serde::de::{DeserializeOwned, DeserializeSeed};
use serde::{Deserialize, Serialize};
use serde_json::error::Category;

use super::{Seed, decode, encode};
use crate::cabi::json::TypeDesc;
use crate::cabi::testing as t;

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct Address {
    city: String,
    zip: Option<i32>,
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct Person {
    id: i64,
    name: String,
    age: i32,
    score: f64,
    admin: bool,
    nick: Option<String>,
    address: Address,
    tags: Vec<i64>,
    homes: Vec<Address>,
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct One {
    only: i32,
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct Empty {}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct Units {
    u: (),
    o: Option<()>,
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct Maybe {
    inner: Option<One>,
    list: Option<Vec<One>>,
}

fn address() -> &'static TypeDesc {
    t::class("Address", &[("city", t::string()), ("zip", t::option(t::i32()))])
}

fn person() -> &'static TypeDesc {
    let address = address();
    t::class(
        "Person",
        &[
            ("id", t::i64()),
            ("name", t::string()),
            ("age", t::i32()),
            ("score", t::f64()),
            ("admin", t::bool()),
            ("nick", t::option(t::string())),
            ("address", address),
            ("tags", t::array(t::i64())),
            ("homes", t::array(address)),
        ],
    )
}

fn one() -> &'static TypeDesc {
    t::class("One", &[("only", t::i32())])
}

/// How one decode ended.
#[derive(Debug, PartialEq)]
enum Outcome {
    /// The decoded value, encoded again (the derive's `Serialize` and [`encode`] agree on values).
    Decoded(String),
    /// The decode failed: `serde_path_to_error`'s path, serde_json's message and category.
    Failed { path: String, message: String, category: Category },
    /// The value decoded but bytes follow it: serde_json's message.
    Trailing(String),
}

fn derived<T: DeserializeOwned + Serialize>(text: &str) -> Outcome {
    let mut de = serde_json::Deserializer::from_str(text);
    // As the Rust path decodes (`Request::json`, `rt::json_decode`): classes are objects only.
    match serde_path_to_error::deserialize::<_, T>(crate::json::Objects(&mut de)) {
        Err(error) => Outcome::Failed {
            path: error.path().to_string(),
            message: error.inner().to_string(),
            category: error.inner().classify(),
        },
        Ok(value) => match de.end() {
            Err(error) => Outcome::Trailing(error.to_string()),
            Ok(()) => Outcome::Decoded(serde_json::to_string(&value).expect("encodes")),
        },
    }
}

fn shaped(text: &str, shape: &TypeDesc) -> Outcome {
    let mut de = serde_json::Deserializer::from_str(text);
    let mut track = serde_path_to_error::Track::new();
    match Seed(shape).deserialize(serde_path_to_error::Deserializer::new(&mut de, &mut track)) {
        Err(error) => {
            Outcome::Failed { path: track.path().to_string(), message: error.to_string(), category: error.classify() }
        }
        Ok(value) => match de.end() {
            Err(error) => Outcome::Trailing(error.to_string()),
            Ok(()) => Outcome::Decoded(encode(&value, shape).expect("encodes")),
        },
    }
}

/// Decodes each text both ways and asserts they agree; also that [`decode`] (the interpreter's
/// and `json.decode`'s entry) succeeds exactly when they do. Returns how many decoded.
fn agree<T: DeserializeOwned + Serialize>(shape: &TypeDesc, texts: &[&str]) -> usize {
    let mut decoded = 0;
    for text in texts {
        let expected = derived::<T>(text);
        assert_eq!(shaped(text, shape), expected, "the text {text}");
        let ok = matches!(expected, Outcome::Decoded(_));
        assert_eq!(decode(text, shape).is_some(), ok, "decode of {text}");
        decoded += usize::from(ok);
    }
    decoded
}

const PERSON: &str = r#"{"id":1,"name":"Ada","age":36,"score":1.5,"admin":true,"nick":null,"address":{"city":"Zürich","zip":8000},"tags":[1,2],"homes":[]}"#;

#[test]
fn person_texts_decode_as_the_derive_decodes_them() {
    let person = person();
    let good = [
        PERSON,
        // Whitespace, another order, missing options.
        "{ \"homes\" : [ {\"city\":\"a\"} ], \"tags\":[], \"address\":{\"zip\":null,\"city\":\"Bern\"}, \"nick\":\"x\",\n \"admin\":false, \"score\":2, \"age\":-7, \"name\":\"\", \"id\":-1 }",
        r#"{"id":1,"name":"Ada","age":36,"score":1.5,"admin":true,"address":{"city":"Zürich"},"tags":[1,2],"homes":[]}"#,
        // Unicode: escapes in values and in keys.
        r#"{"id":1,"n\u0061me":"J\u00fcrgen \ud83d\ude00","age":36,"score":1e-3,"admin":true,"nick":"日本","address":{"city":"\u00e9"},"tags":[],"homes":[]}"#,
        r#"{"id":9223372036854775807,"name":"x","age":2147483647,"score":-0.0,"admin":true,"address":{"city":"c","zip":-2147483648},"tags":[-9223372036854775808],"homes":[]}"#,
    ];
    let (after_x, after_brace) = (format!("{PERSON} x"), format!("{PERSON}}}"));
    let (twice, padded) = (format!("{PERSON} {PERSON}"), format!("  {PERSON}\n\t "));
    let bad = [
        // Missing, unknown and duplicate fields, at the top and nested.
        "{}",
        r#"{"name":"Ada","age":36,"score":1.5,"admin":true,"address":{"city":"Z"},"tags":[],"homes":[]}"#,
        r#"{"id":1,"name":"Ada","age":36,"score":1.5,"admin":true,"tags":[],"homes":[]}"#,
        r#"{"id":1,"name":"Ada","age":36,"score":1.5,"admin":true,"address":{"city":"Z"},"tags":[]}"#,
        r#"{"id":1,"x":2}"#,
        r#"{"id":1,"ä":2}"#,
        r#"{"id":1,"name":"Ada","age":36,"score":1.5,"admin":true,"address":{"city":"Z","street":"s"},"tags":[],"homes":[]}"#,
        r#"{"id":1,"name":"Ada","name":"Bo"}"#,
        r#"{"id":1,"name":"Ada","age":36,"score":1.5,"admin":true,"address":{"city":"Z","city":"Y"},"tags":[],"homes":[]}"#,
        r#"{"id":1,"name":"Ada","age":36,"score":1.5,"admin":true,"address":{"city":"Z"},"tags":[],"homes":[{"city":"a"},{"zip":1}]}"#,
        r#"{"id":1,"name":"Ada","age":36,"score":1.5,"admin":true,"address":{"city":"Z"},"tags":[],"homes":[{"city":"a","x":1}]}"#,
        // Nulls and wrong types.
        r#"{"id":null}"#,
        r#"{"id":1,"name":null}"#,
        r#"{"id":1,"name":5}"#,
        r#"{"id":1,"name":"Ada","age":"30"}"#,
        r#"{"id":1,"name":"Ada","age":30.0}"#,
        r#"{"id":1,"name":"Ada","age":3000000000}"#,
        r#"{"id":1,"name":"Ada","age":-2147483649}"#,
        r#"{"id":9223372036854775808}"#,
        r#"{"id":1e3}"#,
        r#"{"id":true}"#,
        r#"{"id":1,"name":"Ada","age":36,"score":"x"}"#,
        r#"{"id":1,"name":"Ada","age":36,"score":null}"#,
        r#"{"id":1,"name":"Ada","age":36,"score":1.5,"admin":1}"#,
        r#"{"id":1,"name":"Ada","age":36,"score":1.5,"admin":true,"nick":7}"#,
        r#"{"id":1,"name":"Ada","age":36,"score":1.5,"admin":true,"address":"x"}"#,
        r#"{"id":1,"name":"Ada","age":36,"score":1.5,"admin":true,"address":null}"#,
        r#"{"id":1,"name":"Ada","age":36,"score":1.5,"admin":true,"address":{"city":"Z","zip":"1"},"tags":[]}"#,
        r#"{"id":1,"name":"Ada","age":36,"score":1.5,"admin":true,"address":{"city":"Z"},"tags":5}"#,
        r#"{"id":1,"name":"Ada","age":36,"score":1.5,"admin":true,"address":{"city":"Z"},"tags":[1,"x"]}"#,
        r#"{"id":1,"name":"Ada","age":36,"score":1.5,"admin":true,"address":{"city":"Z"},"tags":[1,2.5]}"#,
        r#"{"id":1,"name":"Ada","age":36,"score":1.5,"admin":true,"address":{"city":"Z"},"tags":{}}"#,
        // The array form, which serde's derive takes and Nagi refuses (a class is a JSON object
        // at every depth): whole, nested, in an array, short, long, wrong element.
        r#"[9,"Bo",1,0.25,false,"b",{"city":"c","zip":1},[3],[["d",2]]]"#,
        r#"{"id":-1,"name":"","age":-7,"score":2,"admin":false,"address":["Bern",null],"tags":[],"homes":[]}"#,
        r#"{"id":-1,"name":"","age":-7,"score":2,"admin":false,"address":{"city":"c"},"tags":[],"homes":[["d",2]]}"#,
        "[]",
        r#"[1,"Ada"]"#,
        r#"[9,"Bo",1,0.25,false,"b",{"city":"c"},[3],[],10]"#,
        r#"[9,"Bo",1,0.25,false,"b",[],[3],[]]"#,
        r#"[9,"Bo",1,0.25,false,"b",["c",1,2],[3],[]]"#,
        r#"[9,"Bo","1"]"#,
        // Not an object at all.
        "null",
        "5",
        r#""text""#,
        "true",
        // Malformed JSON and trailing bytes.
        r#"{"id":1,"#,
        r#"{"id":1,}"#,
        r#"{1:2}"#,
        r#"{"id" 1}"#,
        "{\"id\":1,\"name\":\"a\nb\"}",
        "",
        "   ",
        after_x.as_str(),
        after_brace.as_str(),
        twice.as_str(),
        padded.as_str(),
        r#"{"id":1,"name":"\ud800"}"#,
    ];
    assert_eq!(agree::<Person>(person, &good), good.len(), "every good text decodes");
    // One text of `bad` is good with whitespace around it.
    assert_eq!(agree::<Person>(person, &bad), 1, "only the padded text of the bad ones decodes");
}

#[test]
fn small_classes_word_their_errors_as_the_derive_does() {
    // One field: "expected `only`", "with 1 element".
    let texts =
        [r#"{"only":1}"#, "[1]", "[]", "[1,2]", r#"{"x":1}"#, r#"{"only":1,"only":2}"#, "{}", r#"{"only":null}"#];
    assert_eq!(agree::<One>(one(), &texts), 1);
    // Two fields: "expected `city` or `zip`".
    let texts = [r#"{"city":"a","x":1}"#, r#"["a"]"#, r#"["a",1]"#, r#"{"zip":1}"#, r#"{"city":"a","zip":null}"#];
    assert_eq!(agree::<Address>(address(), &texts), 1);
    // No fields: "there are no fields".
    let texts = ["{}", "[]", r#"{"a":1}"#, "[1]", "null", r#"{"a":1,"b":2}"#];
    assert_eq!(agree::<Empty>(t::class("Empty", &[]), &texts), 1);
    // Unit fields.
    let units = t::class("Units", &[("u", t::unit()), ("o", t::option(t::unit()))]);
    let texts =
        [r#"{"u":null}"#, r#"{"u":null,"o":null}"#, r#"{"u":1}"#, "{}", r#"{"u":null,"o":0}"#, "[null]", "[null,null]"];
    assert_eq!(agree::<Units>(units, &texts), 2);
    // Options of classes and of arrays of classes.
    let one = one();
    let maybe = t::class("Maybe", &[("inner", t::option(one)), ("list", t::option(t::array(one)))]);
    let texts = [
        "{}",
        r#"{"inner":{"only":1},"list":[{"only":2},[3]]}"#,
        r#"{"inner":{"only":"1"}}"#,
        r#"{"inner":{"x":1}}"#,
        r#"{"list":[{"only":2},{"only":2,"only":3}]}"#,
        r#"{"list":[{}]}"#,
        r#"{"list":{"only":1}}"#,
    ];
    assert_eq!(agree::<Maybe>(maybe, &texts), 1);
}

#[test]
fn arrays_of_classes_at_the_top_decode_alike() {
    let address = address();
    let texts = ["[]", r#"[{"city":"a"},["b",2]]"#, r#"[{"city":"a"},{"zip":2}]"#, r#"{"city":"a"}"#, "[1]", "[null]"];
    assert_eq!(agree::<Vec<Address>>(t::array(address), &texts), 1);
}

#[derive(Deserialize, Serialize)]
enum Role {
    Admin,
    Member(i64),
    Guest,
    Named(String),
    Home(Address),
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct Account {
    name: String,
    role: Role,
    roles: Vec<Role>,
    maybe: Option<Role>,
}

fn role() -> &'static TypeDesc {
    t::enumeration(
        "Role",
        &[
            ("Admin", t::unit()),
            ("Member", t::i64()),
            ("Guest", t::unit()),
            ("Named", t::string()),
            ("Home", address()),
        ],
    )
}

#[test]
fn enums_decode_and_encode_in_the_derives_externally_tagged_form() {
    let role = role();
    let texts = [
        // Unit variants as strings or as an object whose value is null; newtype variants.
        r#""Admin""#,
        r#""Guest""#,
        r#"{"Admin":null}"#,
        r#"{"Member":5}"#,
        r#"{"Named":"x"}"#,
        r#"{"Home":{"city":"Bern","zip":3000}}"#,
        r#"{"Home":["Bern",null]}"#,
        // Unknown variants, wrong payloads, wrong forms.
        r#""Owner""#,
        r#"{"Owner":1}"#,
        r#""Member""#,
        r#"{"Member":"5"}"#,
        r#"{"Member":null}"#,
        r#"{"Admin":1}"#,
        r#"{"Member":5,"Guest":null}"#,
        r#"{}"#,
        "5",
        "null",
        "[]",
        r#"["Admin"]"#,
        r#"{"Home":{"city":"Bern","x":1}}"#,
        r#"{"Member":5"#,
        r#""Admin" x"#,
    ];
    assert_eq!(agree::<Role>(role, &texts), 6);
    let account = t::class(
        "Account",
        &[("name", t::string()), ("role", role), ("roles", t::array(role)), ("maybe", t::option(role))],
    );
    let texts = [
        r#"{"name":"a","role":"Admin","roles":[{"Member":1},"Guest"],"maybe":{"Named":"n"}}"#,
        r#"{"name":"a","role":{"Member":-7},"roles":[]}"#,
        r#"{"name":"a","role":"Nobody","roles":[]}"#,
        r#"{"name":"a","role":"Admin","roles":["Admin",{"Member":true}]}"#,
        r#"{"name":"a","role":"Admin","roles":[],"maybe":"Who"}"#,
    ];
    assert_eq!(agree::<Account>(account, &texts), 2);
}

/// Strings are copied between quotes when serde_json would escape none of their bytes and
/// written by serde_json otherwise (`write.rs`): both must give the derive's bytes, for short
/// strings and long ones, with the byte to escape in a 32-byte block or in the tail after them.
#[test]
fn strings_are_written_as_serde_json_writes_them() {
    let mut cities: Vec<String> = [
        "",
        "a",
        "Zürich 日本 😀",
        "\u{7f} del",
        "tab\there",
        "new\nline",
        "quote\"",
        "back\\slash",
        "nul\u{0}",
        "\u{1f}",
    ]
    .map(String::from)
    .to_vec();
    for escaped in ['"', '\\', '\n', '\u{1}', '\u{1f}'] {
        // 4,100 bytes: 128 blocks of 32, then a tail of 4.
        for at in [0, 31, 32, 63, 64, 70, 4095, 4096, 4099] {
            let mut city: String = "x".repeat(4100);
            city.replace_range(at..at + 1, &escaped.to_string());
            cities.push(city);
        }
    }
    cities.push("y".repeat(4096));
    cities.push("é".repeat(1000));
    let mut decoded = 0;
    for city in &cities {
        let text = serde_json::to_string(&Address { city: city.clone(), zip: Some(-3) }).expect("encodes");
        assert!(matches!(shaped(&text, address()), Outcome::Decoded(ref again) if *again == text), "{city:?}");
        decoded += agree::<Address>(address(), &[&text]);
    }
    assert_eq!(decoded, cities.len());
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct Maps {
    by_name: crate::map::Map<String, i64>,
    by_id: crate::map::Map<i64, Option<String>>,
}

/// Maps are objects in insertion order: a string key escaped as serde_json escapes it, an `i64`
/// key written as a string of its digits (negative and extreme ones too), an empty map `{}`.
#[test]
fn maps_are_written_as_the_derive_writes_them() {
    let maps = t::class("Maps", &[("by_name", t::map_string(t::i64())), ("by_id", t::map_i64(t::option(t::string())))]);
    let texts = [
        r#"{"by_name":{},"by_id":{}}"#,
        r#"{"by_name":{"b":2,"a":1,"":0,"q\"uote":3,"back\\slash":4,"new\nline":5,"\u0001":6,"日本":7},"by_id":{"-9223372036854775808":"min","9223372036854775807":null,"0":"z\t","-1":"é"}}"#,
    ];
    assert_eq!(agree::<Maps>(maps, &texts), texts.len());
    // And the encoding is exactly the derive's text for these (what `agree` compares).
    for text in texts {
        let Outcome::Decoded(again) = shaped(text, maps) else { panic!("{text} decodes") };
        let derived: Maps = serde_json::from_str(text).expect("the derive decodes it");
        assert_eq!(again, serde_json::to_string(&derived).expect("encodes"));
    }
}

//! The binding rules for JSON request bodies: which failures are 415, 400 and 422.
//!
//! The same rules (but the content type's) decode the answer of an outbound call
//! (`crate::outbound`). Decoding itself is generic: serde derive on the Rust path
//! ([`decode_typed`]), a layout [`Shape`] into a value tree in the interpreter and for outbound
//! answers ([`decode_shaped`]), and any other seed ([`decode_seed`]: the LLVM path's, straight
//! into emitted memory); the rules around it are plain code, compiled once into the runtime.

use std::borrow::Cow;

use axum::http::HeaderValue;
use serde::de::DeserializeOwned;
use serde_json::error::Category;

use crate::HttpError;
use crate::shaped_json::{self, Shape};

/// A JSON text decoded into the derived class `T` under the binding rules of [`decode_json`],
/// the class named as High names it.
pub(crate) fn decode_typed<T: DeserializeOwned>(body: &[u8]) -> Result<T, HttpError> {
    // Wrapped so that a class is an object at every depth (the derive takes arrays too).
    decode_json(body, &class_name::<T>(), |deserializer| {
        serde_path_to_error::deserialize(crate::json::Objects(deserializer))
    })
}

/// The High name of the derived class `T`: its Rust name, `program::accounts__User`, by its last
/// segment, with a module's `__` read back as the `.` of High (`accounts.User`).
pub(crate) fn class_name<T>() -> String {
    std::any::type_name::<T>().rsplit("::").next().unwrap_or("").replace("__", ".")
}

/// A JSON text decoded into a value of the type `shape` describes, under exactly the rules and
/// with exactly the answers of [`decode_typed`] for the equivalent derived class.
pub(crate) fn decode_shaped<S: Shape>(body: &[u8], shape: S) -> Result<shaped_json::Value, HttpError> {
    decode_seed(body, shape.class_name(), shaped_json::Seed(shape))
}

/// A JSON text decoded by `seed` (a value of the class named `class`) under the binding rules
/// of [`decode_json`], the error's path found by `serde_path_to_error`: [`decode_shaped`]'s,
/// and the LLVM path's decoding straight into emitted memory (`cabi::json`).
pub(crate) fn decode_seed<T>(
    body: &[u8],
    class: &str,
    seed: impl for<'de> serde::de::DeserializeSeed<'de, Value = T>,
) -> Result<T, HttpError> {
    decode_json(body, class, |deserializer| {
        let mut track = serde_path_to_error::Track::new();
        let wrapped = serde_path_to_error::Deserializer::new(deserializer, &mut track);
        seed.deserialize(wrapped).map_err(|error| serde_path_to_error::Error::new(track.path(), error))
    })
}

/// The binding rules of a JSON text around `decode`, which reads one value: 400 for an empty
/// text, 422 for one that is not an object (of `class`), then `decode`'s failure classified (400
/// or 422), and 400 for trailing bytes. An integer `-0` is read as 0 ([`integer_zeros`]).
fn decode_json<T>(
    body: &[u8],
    class: &str,
    decode: impl FnOnce(
        &mut serde_json::Deserializer<serde_json::de::SliceRead<'_>>,
    ) -> Result<T, serde_path_to_error::Error<serde_json::Error>>,
) -> Result<T, HttpError> {
    check_not_empty(body)?;
    check_object(body, class)?;
    let body = integer_zeros(body);
    let mut deserializer = serde_json::Deserializer::from_slice(&body);
    let value = decode(&mut deserializer).map_err(|e| decode_error(e, &body))?;
    deserializer.end().map_err(|e| trailing_error(&e))?;
    Ok(value)
}

/// Accepts `application/json` and any `application/*+json`, with parameters (`; charset=utf-8`)
/// and in any letter case; anything else, or no content type, is 415.
pub(crate) fn check_content_type(value: Option<&HeaderValue>) -> Result<(), HttpError> {
    let Some(value) = value else {
        return Err(HttpError::new(
            415,
            "unsupported media type",
            "the request has no content-type; send the body as application/json",
        ));
    };
    let text = value.to_str().unwrap_or("");
    if is_json(text) {
        Ok(())
    } else {
        Err(HttpError::new(
            415,
            "unsupported media type",
            format!("content-type {text:?} is not JSON; send application/json"),
        ))
    }
}

/// Whether a content-type names JSON: its essence (before any `;`) is `application/json` or
/// `application/<something>+json`.
pub(crate) fn is_json(content_type: &str) -> bool {
    let essence = content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    match essence.split_once('/') {
        Some(("application", subtype)) => {
            subtype == "json" || (subtype.len() > "+json".len() && subtype.ends_with("+json"))
        }
        _ => false,
    }
}

/// An empty body (or only whitespace) is 400; serde_json would say "EOF while parsing a value",
/// which is accurate but less clear.
pub(crate) fn check_not_empty(body: &[u8]) -> Result<(), HttpError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        Err(HttpError::new(400, "bad request", "the request body is empty; expected a JSON value"))
    } else {
        Ok(())
    }
}

/// Classifies a decode failure with serde_json's own categories: syntax and end-of-input errors are
/// malformed JSON (400); data errors are JSON that does not fit the class (422), with the field's
/// path in front of serde's message (`age: invalid type: floating point `30.0`, expected i32 at
/// line 1 column 30`).
///
/// One syntax error is not about the text: serde_json reports an enum given as neither a string
/// nor an object (`"role": 5`) as "expected value", a syntax error, although `body` is valid
/// JSON. A syntax error on a body that is valid JSON is therefore a data error too; only failing
/// requests pay for that second parse.
///
/// A data error is only a data error when the whole body is well-formed JSON: the typed decoder
/// stops at the first value that does not fit, before it has read the rest, so a body with a
/// type error and a syntax error further on (`{"id":1,"name":5,"age":`), bytes that are not
/// UTF-8, or a lone surrogate escape, must still be 400. The check parses the body into a JSON
/// tree, which validates every string, and only failing requests pay for it.
pub(crate) fn decode_error(error: serde_path_to_error::Error<serde_json::Error>, body: &[u8]) -> HttpError {
    let path = error.path().to_string();
    let inner = error.into_inner();
    let well_formed = match inner.classify() {
        Category::Data | Category::Syntax => well_formed(body),
        Category::Io | Category::Eof => Err(inner.to_string()),
    };
    match well_formed {
        Ok(()) => {
            let detail = if path == "." || path.is_empty() { inner.to_string() } else { format!("{path}: {inner}") };
            HttpError::new(422, "unprocessable entity", cap_detail(detail))
        }
        Err(syntax) => malformed(&syntax),
    }
}

/// The 400 for a body that is not well-formed JSON, with serde_json's reason.
fn malformed(reason: &dyn std::fmt::Display) -> HttpError {
    HttpError::new(400, "bad request", cap_detail(format!("malformed JSON: {reason}")))
}

/// Whether `body` is one well-formed JSON text (RFC 8259: UTF-8, every escape valid, nested at
/// most serde_json's 128 levels), or the syntax error that says why not.
fn well_formed(body: &[u8]) -> Result<(), String> {
    serde_json::from_slice::<serde_json::Value>(body).map(drop).map_err(|e| e.to_string())
}

/// A class is bound from a JSON object, never from serde's sequence form (`[9219,"a",1]`,
/// fields by position): a filter keyed on field names would not see such a body, and reordering
/// a class's fields would change its meaning. `class` names the class in the 422.
pub(crate) fn check_object(body: &[u8], class: &str) -> Result<(), HttpError> {
    let first = body.iter().find(|b| !b.is_ascii_whitespace()).copied();
    if first == Some(b'{') {
        return Ok(());
    }
    if let Err(syntax) = well_formed(body) {
        return Err(malformed(&syntax));
    }
    let found = match first {
        Some(b'[') => "an array",
        Some(b'"') => "a string",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => "null",
        _ => "a number",
    };
    let class = if class.is_empty() { String::new() } else { format!(" (class {class})") };
    Err(HttpError::new(422, "unprocessable entity", format!("the body must be a JSON object{class}, found {found}")))
}

/// RFC 8259's grammar makes `-0` an integer, but serde_json reads it as the float `-0.0`, which an
/// integer field refuses. Each `-0` number token (no fraction or exponent) outside strings is
/// rewritten to ` 0`; negative zero for an `f64` is written `-0.0`. The body is borrowed
/// unchanged when it has no such token, which one scan for `-0` tells in the usual case.
pub(crate) fn integer_zeros(body: &[u8]) -> Cow<'_, [u8]> {
    // `contains` of a byte is a vectorized memchr; the pair scan after it is not, and cost about a
    // tenth of `POST /echo` with a 4 KiB name run on every body (bench/README.md).
    if !body.contains(&b'-') || !body.windows(2).any(|w| w == b"-0") {
        return Cow::Borrowed(body);
    }
    let mut out: Option<Vec<u8>> = None;
    let (mut in_string, mut escaped) = (false, false);
    for (i, &b) in body.iter().enumerate() {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'-' if body.get(i + 1) == Some(&b'0')
                && !matches!(body.get(i + 2), Some(b'0'..=b'9' | b'.' | b'e' | b'E')) =>
            {
                out.get_or_insert_with(|| body.to_vec())[i] = b' ';
            }
            _ => {}
        }
    }
    match out {
        Some(rewritten) => Cow::Owned(rewritten),
        None => Cow::Borrowed(body),
    }
}

/// The most bytes of a client's input that an error detail repeats.
pub(crate) const ECHO_LIMIT: usize = 200;

/// `text` quoted as an error detail repeats a client's input: whole up to [`ECHO_LIMIT`] bytes,
/// else its start (cut at a character boundary) and `…`.
pub(crate) fn echo(text: &str) -> String {
    if text.len() <= ECHO_LIMIT {
        return format!("{text:?}");
    }
    format!("{:?}…", &text[..char_boundary_at_or_before(text, ECHO_LIMIT)])
}

/// The largest character boundary of `text` at or before byte `at`.
fn char_boundary_at_or_before(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// A detail made by serde, which quotes the offending input whole (a 60 KB string): past twice
/// [`ECHO_LIMIT`] bytes, its start and its end (which says what was expected, and where) are kept
/// around a `…`.
pub(crate) fn cap_detail(detail: String) -> String {
    if detail.len() <= 2 * ECHO_LIMIT {
        return detail;
    }
    let head = char_boundary_at_or_before(&detail, ECHO_LIMIT);
    // The boundary before the tail's first byte: the tail may then be a few bytes longer.
    let tail = char_boundary_at_or_before(&detail, detail.len() - ECHO_LIMIT / 2);
    format!("{} … {}", &detail[..head], &detail[tail..])
}

/// Bytes after the JSON value (other than whitespace) are 400.
pub(crate) fn trailing_error(error: &serde_json::Error) -> HttpError {
    malformed(error)
}

#[cfg(test)]
mod tests {
    use super::is_json;

    #[test]
    fn json_content_types() {
        for accepted in [
            "application/json",
            "application/json; charset=utf-8",
            "Application/JSON",
            "application/problem+json",
            "application/vnd.api+json ; q=1",
        ] {
            assert!(is_json(accepted), "{accepted}");
        }
        for refused in [
            "",
            "text/json",
            "text/plain",
            "application/+json",
            "application/jsonp",
            "application/x-www-form-urlencoded",
            "multipart/form-data",
        ] {
            assert!(!is_json(refused), "{refused}");
        }
    }
}

//! The binding rules for JSON request bodies: which failures are 415, 400 and 422.
//!
//! Decoding itself is generic (serde derive) and happens in [`super::Request::json`]; everything
//! here is plain code, compiled once into the runtime.

use axum::http::HeaderValue;
use serde_json::error::Category;

use crate::HttpError;

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
pub(crate) fn decode_error(error: serde_path_to_error::Error<serde_json::Error>, body: &[u8]) -> HttpError {
    let path = error.path().to_string();
    let inner = error.into_inner();
    let data = match inner.classify() {
        Category::Data => true,
        Category::Syntax => serde_json::from_slice::<serde::de::IgnoredAny>(body).is_ok(),
        Category::Io | Category::Eof => false,
    };
    if data {
        let detail = if path == "." || path.is_empty() { inner.to_string() } else { format!("{path}: {inner}") };
        HttpError::new(422, "unprocessable entity", detail)
    } else {
        HttpError::new(400, "bad request", format!("malformed JSON: {inner}"))
    }
}

/// Bytes after the JSON value (other than whitespace) are 400.
pub(crate) fn trailing_error(error: &serde_json::Error) -> HttpError {
    HttpError::new(400, "bad request", format!("malformed JSON: {error}"))
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

//! JSON text for Nagi values, byte for byte as the pinned serde_json writes and reads it.
//!
//! serde_json is built with `float_roundtrip`, so floats are parsed correctly rounded.

mod objects;

use serde::Serialize;
use serde::de::DeserializeOwned;

pub(crate) use objects::{Objects, whole};

use crate::trap;

/// Reads a JSON string and parses it with `parse`: the one decoder of the values written as text
/// (`Time`, `Duration`, `Uuid`), which the Rust path's derives and the shaped decoder
/// (`shaped_json`) both reach through those types' `Deserialize`, so their errors are the same to
/// the byte (`invalid value: string "x", expected an RFC 3339 time`).
pub(crate) struct TextVisitor<T> {
    /// What a value is, for the error (`an RFC 3339 time`).
    pub(crate) expecting: &'static str,
    /// The value a text names, or `None`.
    pub(crate) parse: fn(&str) -> Option<T>,
}

impl<T> serde::de::Visitor<'_> for TextVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(self.expecting)
    }

    fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<T, E> {
        (self.parse)(text).ok_or_else(|| E::invalid_value(serde::de::Unexpected::Str(text), &self))
    }
}

/// Encodes a value as compact JSON text with `serde_json::to_string`.
///
/// Non-finite floats (`NaN`, `inf`, `-inf`) become `null`, as serde_json writes them. A value that
/// JSON cannot represent (a map with non-string keys) traps with `cannot encode JSON: ...`; classes
/// generated from Nagi never do.
pub fn json_encode<T: Serialize>(v: &T) -> String {
    match serde_json::to_string(v) {
        Ok(text) => text,
        Err(error) => trap(&encode_failed(error)),
    }
}

/// The message of a value that cannot be encoded (`cannot encode JSON: ...`), the same from
/// serde_json's error and from `shaped_json::write`'s.
pub(crate) fn encode_failed(error: impl std::fmt::Display) -> String {
    format!("cannot encode JSON: {error}")
}

/// Decodes JSON text into a value with serde_json; `None` when the text is not valid JSON, has
/// trailing characters, or does not fit the type (the same rules as the HTTP body binding,
/// without the error detail: a class is a JSON object at every depth, see [`Objects`]).
pub fn json_decode<T: DeserializeOwned>(s: &str) -> Option<T> {
    let mut deserializer = serde_json::Deserializer::from_str(s);
    let value = T::deserialize(Objects(&mut deserializer)).ok()?;
    deserializer.end().ok()?;
    Some(value)
}

//! The one JSON encoder of values whose type is known only at run time: what a [`View`] sees,
//! appended to a byte buffer as compact JSON, byte for byte as the Rust path's serde derives
//! write it through serde_json (a class as an object in declaration order, an enum in serde's
//! externally tagged form, an option as its payload or `null`, non-finite floats as `null`).
//!
//! The structure (brackets, braces, commas, keys) is written straight into the buffer. Integers
//! are written by itoa, as serde_json writes them, `bool` and `unit` as their words, and a string
//! that needs no escape is copied between quotes; every other scalar (a string to escape, a
//! float, a `Time`, `Duration` or `Uuid`) goes through its own `Serialize` and serde_json's
//! serializer, so its text is written by the same code as on the Rust path. A class's keys and
//! an enum's variant names are Low identifiers (ASCII letters, digits and `_`), which JSON never
//! escapes, so they are copied as they are: on a list of users that is three of every four
//! string escapes gone (bench/README.md, issue 39).

use serde::Serialize;

use super::{Kind, MapKey, Node, Scalar, Shape, View};

/// Appends what `view` sees to `out` as compact JSON. Errors: why a value cannot be encoded (it
/// does not fit its shape, a `Time` out of range), as `cannot encode JSON: ...`; `out` then
/// holds a part of the text.
pub fn write<V: View>(view: &V, out: &mut Vec<u8>) -> Result<(), String> {
    match view.scalar() {
        Some(scalar) => write_scalar(&scalar, out),
        None => write_node(view, out),
    }
}

/// Appends one scalar, as serde_json writes it. Inlined into the loops of arrays and classes:
/// the common scalars are a few instructions each, and the rest go to [`write_serialized`].
#[inline(always)]
fn write_scalar(scalar: &Scalar<'_>, out: &mut Vec<u8>) -> Result<(), String> {
    match *scalar {
        // The common scalars are written here, as serde_json's serializer writes them (itoa for
        // integers), so that a field costs no serializer.
        Scalar::I32(v) => out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes()),
        Scalar::I64(v) => out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes()),
        Scalar::Bool(v) => out.extend_from_slice(if v { b"true" } else { b"false" }),
        Scalar::Unit => out.extend_from_slice(b"null"),
        Scalar::Str(v) if !needs_escape(v.as_bytes()) => write_quoted(v.as_bytes(), out),
        _ => write_serialized(scalar, out)?,
    }
    Ok(())
}

/// Appends a scalar through its `Serialize` and serde_json's serializer: floats, times,
/// durations, ids and strings to escape.
#[inline(never)]
fn write_serialized(scalar: &Scalar<'_>, out: &mut Vec<u8>) -> Result<(), String> {
    scalar.serialize(&mut serde_json::Serializer::new(&mut *out)).map_err(crate::json::encode_failed)
}

/// Whether serde_json would escape any byte of `text`: a control character (below 0x20), `"` or
/// `\`, and nothing else (its `ESCAPE` table). A text that needs none is copied between quotes;
/// one that does is written by serde_json itself, so the escapes are serde_json's own.
///
/// The scan folds 32 bytes at a time without branching, so that it compiles to vector compares
/// (a byte-at-a-time search cost a 4 KiB name more than serde_json's whole escape), and looks
/// up the bytes after the last block, or a string shorter than one block, in a table.
#[inline]
fn needs_escape(text: &[u8]) -> bool {
    #[inline(always)]
    fn block(bytes: &[u8; 32]) -> bool {
        bytes.iter().fold(false, |seen, &b| seen | escaped(b))
    }
    if text.len() < 32 {
        return text.iter().any(|&b| ESCAPED[usize::from(b)]);
    }
    let mut chunks = text.chunks_exact(32);
    for chunk in &mut chunks {
        if block(chunk.try_into().expect("a chunk of 32")) {
            return true;
        }
    }
    chunks.remainder().iter().any(|&b| ESCAPED[usize::from(b)])
}

/// Whether serde_json escapes byte `b`: the one statement of the rule, compared in blocks and
/// looked up in [`ESCAPED`].
#[inline(always)]
const fn escaped(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// [`escaped`] as a table: one load per byte of a short string's scan.
static ESCAPED: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = escaped(b as u8);
        b += 1;
    }
    table
};

/// Appends a value that is not a scalar.
fn write_node<V: View>(view: &V, out: &mut Vec<u8>) -> Result<(), String> {
    match view.node().map_err(crate::json::encode_failed)? {
        Node::Array(_) => {
            out.push(b'[');
            for (i, item) in view.items().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write(&item, out)?;
            }
            out.push(b']');
        }
        Node::Map(_) => {
            out.push(b'{');
            for (i, (key, value)) in view.entries().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                // serde_json writes an integer key as a string, and escapes a string key.
                match key {
                    MapKey::I64(key) => {
                        out.push(b'"');
                        out.extend_from_slice(itoa::Buffer::new().format(key).as_bytes());
                        out.push(b'"');
                    }
                    MapKey::Str(key) => write_scalar(&Scalar::Str(key), out)?,
                }
                out.push(b':');
                write(&value, out)?;
            }
            out.push(b'}');
        }
        Node::Option(None) => out.extend_from_slice(b"null"),
        Node::Option(Some(payload)) => write(&payload, out)?,
        Node::Class(_) => {
            out.push(b'{');
            for (i, (name, field)) in view.fields().enumerate() {
                write_key(name, i > 0, out);
                // Scalar fields, the common case, are written without a call back into `write`.
                match field.scalar() {
                    Some(scalar) => write_scalar(&scalar, out)?,
                    None => write_node(&field, out)?,
                }
            }
            out.push(b'}');
        }
        // The derive's `serialize_unit_variant` and `serialize_newtype_variant`, which serde_json
        // writes as a string and as an object of one key.
        Node::Variant(i, payload) => {
            let shape = view.shape();
            let name = shape.field_name(i);
            if payload.shape().kind() == Kind::Unit {
                write_name(name, out);
            } else {
                out.push(b'{');
                write_key(name, false, out);
                write(&payload, out)?;
                out.push(b'}');
            }
        }
    }
    Ok(())
}

/// Appends an object's key, an identifier, and its colon: `"name":`, after a comma when `comma`.
/// One capacity check for the whole key: keys are most of what a class's object is made of.
#[inline]
fn write_key(name: &str, comma: bool, out: &mut Vec<u8>) {
    debug_assert!(is_identifier(name), "{name:?} is not an identifier");
    let name = name.as_bytes();
    let len = name.len() + 3 + usize::from(comma);
    out.reserve(len);
    // SAFETY: `reserve` made room for `len` more bytes, which are all written before `set_len`.
    unsafe {
        let mut at = out.as_mut_ptr().add(out.len());
        if comma {
            at.write(b',');
            at = at.add(1);
        }
        at.write(b'"');
        std::ptr::copy_nonoverlapping(name.as_ptr(), at.add(1), name.len());
        at.add(1 + name.len()).cast::<[u8; 2]>().write(*b"\":");
        out.set_len(out.len() + len);
    }
}

fn is_identifier(name: &str) -> bool {
    name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Appends `text`, which needs no escape, between quotes: one capacity check, one copy.
#[inline]
fn write_quoted(text: &[u8], out: &mut Vec<u8>) {
    let len = text.len() + 2;
    out.reserve(len);
    // SAFETY: `reserve` made room for `len` more bytes, which are all written before `set_len`.
    unsafe {
        let at = out.as_mut_ptr().add(out.len());
        at.write(b'"');
        std::ptr::copy_nonoverlapping(text.as_ptr(), at.add(1), text.len());
        at.add(1 + text.len()).write(b'"');
        out.set_len(out.len() + len);
    }
}

/// Appends an identifier as a JSON string. Identifiers need no escape; one that would is a bug
/// of whatever made the shape, caught here in debug builds.
#[inline]
fn write_name(name: &str, out: &mut Vec<u8>) {
    debug_assert!(is_identifier(name), "{name:?} is not an identifier");
    write_quoted(name.as_bytes(), out);
}

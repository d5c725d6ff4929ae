//! Decoding JSON straight into the emitted layout: a request body or `json.decode<C>`'s text is
//! read by serde into the memory emitted code reads, with no value tree in between (issue 39: the
//! tree cost the LLVM path 5–8 % on JSON bodies). An outbound call's answer, decoded by the rule
//! it shares with the interpreter, still goes through the tree.
//!
//! [`Into`] accepts and rejects exactly what [`shaped_json::Seed`] does, with the same errors
//! at the same points of the input (so `serde_path_to_error` finds the same paths): the scalar
//! reads are the same calls, a class's keys go through the same field identifiers, and a
//! missing field is reported after the object as the derive does. Maps and enums, rare in
//! bodies, are still decoded through the tree and then written.
//!
//! A failed decode writes nothing that outlives it: each composite value frees what it has
//! written so far before it passes the error on (a class its decoded fields, an array its
//! elements and buffer), through [`drop_value`], so memory handed to emitted code stays exact.

use std::cell::Cell;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use super::{TypeDesc, write};
use crate::HttpError;
use crate::cabi::{RawArray, RawString, into_raw, nagi_rt_free};
use crate::http::binding;
use crate::shaped_json::{self, FieldSeed, Identifier, Kind, static_names};

/// Decodes one value of type `ty` into `dst`. On success `dst` holds the value, owned by the
/// caller; on failure nothing is written that needs freeing.
///
/// `dst` must be writable for `ty.size` bytes at `ty.align` for the whole decode; it is not
/// read.
pub(crate) struct Into<'a> {
    /// The type decoded.
    pub(crate) ty: &'a TypeDesc,
    /// Where the value goes.
    pub(crate) dst: *mut u8,
}

impl<'de> DeserializeSeed<'de> for Into<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        use serde::Deserialize;
        let Into { ty, dst } = self;
        // SAFETY (every write): `dst` is writable and aligned for `ty`, as the caller promised.
        unsafe {
            match ty.kind() {
                // Through `Objects`, whose integer reads take a whole float (`30.0`), as `Seed`.
                Kind::I32 => dst.cast::<i32>().write(i32::deserialize(crate::json::Objects(d))?),
                Kind::I64 => dst.cast::<i64>().write(i64::deserialize(crate::json::Objects(d))?),
                Kind::F64 => dst.cast::<f64>().write(f64::deserialize(d)?),
                Kind::Bool => dst.write(u8::from(bool::deserialize(d)?)),
                Kind::Unit => <()>::deserialize(d)?,
                Kind::String => dst.cast::<RawString>().write(into_raw(String::deserialize(d)?.into_bytes())),
                Kind::Time => dst.cast::<i64>().write(crate::time::Time::deserialize(d)?.micros()),
                Kind::Duration => dst.cast::<i64>().write(crate::time::Duration::deserialize(d)?.micros()),
                Kind::Uuid => dst.cast::<[u8; 16]>().write(crate::ids::Uuid::deserialize(d)?.0),
                Kind::Array => d.deserialize_seq(ArrayInto { elem: ty.inner(), dst })?,
                Kind::Option => d.deserialize_option(OptionInto { ty, dst })?,
                Kind::Class => d.deserialize_map(ClassInto { ty, dst })?,
                Kind::Enum | Kind::MapI64 | Kind::MapString => write(shaped_json::Seed(ty).deserialize(d)?, ty, dst),
            }
        }
        Ok(())
    }
}

/// Decodes a request body `body` into `dst`, a value of the type `ty` describes,
/// under the binding rules and with the answers of `http::binding::decode_shaped`. On failure
/// nothing written stays behind: not even a whole value followed by trailing bytes.
///
/// # Safety
/// `dst` must be writable for `ty.size` bytes at `ty.align`.
pub(crate) unsafe fn decode_body(body: &[u8], ty: &TypeDesc, dst: *mut u8) -> Result<(), HttpError> {
    let decoded = Cell::new(false);
    let result = binding::decode_seed(body, ty.name(), Marked { seed: Into { ty, dst }, decoded: &decoded });
    if result.is_err() && decoded.get() {
        // SAFETY: the value was decoded at `dst` and nothing else holds it.
        unsafe { drop_value(dst, ty) };
    }
    result
}

/// A seed that records whether it decoded its value (so that a failure after it, trailing
/// bytes, frees the value).
struct Marked<'a, S> {
    seed: S,
    decoded: &'a Cell<bool>,
}

impl<'de, S: DeserializeSeed<'de, Value = ()>> DeserializeSeed<'de> for Marked<'_, S> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        self.seed.deserialize(d)?;
        self.decoded.set(true);
        Ok(())
    }
}

/// `Option<T>`'s visitor, as `Seed`'s: the tag is written once the payload is.
struct OptionInto<'a> {
    ty: &'a TypeDesc,
    dst: *mut u8,
}

impl OptionInto<'_> {
    fn none(self) {
        // SAFETY: `dst` is writable for the option's size.
        unsafe { std::ptr::write_bytes(self.dst, 0, self.ty.size) }
    }
}

impl<'de> Visitor<'de> for OptionInto<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("option")
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.none();
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.none();
        Ok(())
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        let OptionInto { ty, dst } = self;
        // SAFETY: the payload lies inside the option, at its offset.
        let payload = unsafe { dst.add(ty.payload_offset) };
        Into { ty: ty.inner(), dst: payload }.deserialize(d)?;
        // SAFETY: the tag byte and the padding before the payload are the option's.
        unsafe {
            std::ptr::write_bytes(dst, 0, ty.payload_offset);
            dst.write(1);
        }
        Ok(())
    }
}

/// `Vec<T>`'s visitor: the elements are decoded into a buffer that grows as serde's `Vec` does
/// (small ones on the stack first, large ones in place), freed with what it holds if an element
/// fails.
struct ArrayInto<'a> {
    elem: &'a TypeDesc,
    dst: *mut u8,
}

/// The largest element decoded on the stack before it moves into its array's buffer, in bytes.
const SCRATCH_BYTES: usize = 64;

/// An array's buffer while it is filled: dropped (elements and buffer freed) unless
/// [`Filling::finish`] hands it over.
struct Filling<'a> {
    elem: &'a TypeDesc,
    array: RawArray,
}

impl Filling<'_> {
    /// The place of the next element, growing the buffer when it is full.
    fn next_slot(&mut self) -> *mut u8 {
        let size = self.elem.size;
        if size == 0 {
            return self.elem.align.max(1) as *mut u8;
        }
        if self.array.len == self.array.cap {
            super::grow_elements(&mut self.array, self.elem);
        }
        // SAFETY: `len < cap`, so the slot lies in the buffer.
        unsafe { self.array.ptr.add(self.array.len * size) }
    }

    /// The filled array, handed to emitted code. An empty one owns no buffer; one of
    /// zero-sized elements has a dangling pointer, as [`super::write_array`] makes them.
    fn finish(self) -> RawArray {
        let (elem, mut array) = (self.elem, RawArray { ..self.array });
        std::mem::forget(self);
        if elem.size == 0 {
            array = RawArray { ptr: elem.align.max(1) as *mut u8, len: array.len, cap: array.len };
        } else if array.len == 0 && array.cap != 0 {
            // SAFETY: the buffer was allocated for `cap` elements and holds none.
            unsafe { nagi_rt_free(array.ptr, array.cap * elem.size, elem.align) };
            array = RawArray { ptr: std::ptr::null_mut(), len: 0, cap: 0 };
        }
        array
    }
}

impl Drop for Filling<'_> {
    fn drop(&mut self) {
        let array = RawArray { ..self.array };
        // SAFETY: the buffer holds `len` decoded elements of `elem`, owned here.
        unsafe { drop_array(array, self.elem) }
    }
}

impl<'de> Visitor<'de> for ArrayInto<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a sequence")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let elem = self.elem;
        let mut filling = Filling { elem, array: RawArray { ptr: std::ptr::null_mut(), len: 0, cap: 0 } };
        if elem.size <= SCRATCH_BYTES && elem.align <= 8 {
            // A small element is decoded on the stack and moved into the buffer once it is
            // whole, so the buffer grows only for elements that exist (an empty array
            // allocates nothing).
            let mut scratch = [0u64; SCRATCH_BYTES / 8];
            while seq.next_element_seed(Into { ty: elem, dst: scratch.as_mut_ptr().cast() })?.is_some() {
                let slot = filling.next_slot();
                // SAFETY: both hold `elem.size` bytes; the element moves into the buffer, and the
                // scratch is overwritten, never dropped.
                unsafe { std::ptr::copy_nonoverlapping(scratch.as_ptr().cast::<u8>(), slot, elem.size) };
                filling.array.len += 1;
            }
        } else {
            loop {
                let slot = filling.next_slot();
                if seq.next_element_seed(Into { ty: elem, dst: slot })?.is_none() {
                    break;
                }
                filling.array.len += 1;
            }
        }
        let array = filling.finish();
        // SAFETY: `dst` is writable for an array.
        unsafe { self.dst.cast::<RawArray>().write(array) };
        Ok(())
    }
}

/// The derive's visitor for a struct with `deny_unknown_fields`, as `Seed`'s: fields decoded in
/// place, each at most once; a missing `Option` field is `None`, any other missing field an
/// error once the object is read.
struct ClassInto<'a> {
    ty: &'a TypeDesc,
    dst: *mut u8,
}

/// Which fields of a class have been decoded: dropped (each decoded field freed) unless
/// [`Decoded::finish`] hands the class over.
struct Decoded<'a> {
    ty: &'a TypeDesc,
    dst: *mut u8,
    /// The first 64 fields' marks; a class of more has its marks in `more`.
    marks: u64,
    more: Vec<bool>,
}

impl Decoded<'_> {
    fn is_set(&self, i: usize) -> bool {
        if i < 64 { self.marks & (1 << i) != 0 } else { self.more[i - 64] }
    }

    fn set(&mut self, i: usize) {
        if i < 64 {
            self.marks |= 1 << i;
        } else {
            self.more[i - 64] = true;
        }
    }

    fn finish(self) {
        std::mem::forget(self);
    }
}

impl Drop for Decoded<'_> {
    fn drop(&mut self) {
        for (i, field) in self.ty.fields().iter().enumerate() {
            if self.is_set(i) {
                // SAFETY: field `i` was decoded at its offset and is owned here.
                unsafe { drop_value(self.dst.add(field.offset), field.ty()) }
            }
        }
    }
}

impl<'de> Visitor<'de> for ClassInto<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "struct {}", self.ty.name())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let ty = self.ty;
        let fields = ty.fields();
        let more = if fields.len() > 64 { vec![false; fields.len() - 64] } else { Vec::new() };
        let mut decoded = Decoded { ty, dst: self.dst, marks: 0, more };
        while let Some(i) = map.next_key_seed(FieldSeed(ty, Identifier::Field))? {
            if decoded.is_set(i) {
                return Err(de::Error::duplicate_field(static_names(ty)[i]));
            }
            // SAFETY: the field lies in the class, at its offset.
            let at = unsafe { self.dst.add(fields[i].offset) };
            map.next_value_seed(Into { ty: fields[i].ty(), dst: at })?;
            decoded.set(i);
        }
        for (i, field) in fields.iter().enumerate() {
            if decoded.is_set(i) {
                continue;
            }
            if field.ty().kind() != Kind::Option {
                return Err(de::Error::missing_field(static_names(ty)[i]));
            }
            // SAFETY: the option lies in the class, at its offset.
            unsafe { std::ptr::write_bytes(self.dst.add(field.offset), 0, field.ty().size) };
        }
        decoded.finish();
        Ok(())
    }
}

/// Frees what the value at `at`, of type `ty`, owns (strings, array buffers, maps' indexes,
/// recursively), as emitted code's drop of the type does.
///
/// # Safety
/// `at` holds an initialized value of type `ty`, not freed before and not used afterwards.
pub(crate) unsafe fn drop_value(at: *mut u8, ty: &TypeDesc) {
    // SAFETY (every read): `at` holds a value laid out as `ty` describes.
    unsafe {
        match ty.kind() {
            Kind::I32 | Kind::I64 | Kind::F64 | Kind::Bool | Kind::Unit | Kind::Time | Kind::Duration | Kind::Uuid => {}
            Kind::String => {
                let raw = at.cast::<RawString>().read();
                nagi_rt_free(raw.ptr, raw.cap, 1);
            }
            Kind::Array => drop_array(at.cast::<RawArray>().read(), ty.inner()),
            Kind::Option => {
                if at.read() & 1 != 0 {
                    drop_value(at.add(ty.payload_offset), ty.inner());
                }
            }
            Kind::Class => {
                for field in ty.fields() {
                    drop_value(at.add(field.offset), field.ty());
                }
            }
            Kind::Enum => {
                let tag = at.cast::<i64>().read() as usize;
                if let Some(variant) = ty.fields().get(tag) {
                    drop_value(at.add(ty.payload_offset), variant.ty());
                }
            }
            Kind::MapI64 | Kind::MapString => {
                let map = at.cast::<crate::cabi::maps::RawMap>().read();
                let key = if ty.kind() == Kind::MapI64 { &super::I64_DESC } else { &super::STRING_DESC };
                drop_array(map.keys, key);
                drop_array(map.values, ty.inner());
                crate::cabi::maps::nagi_rt_map_index_free(map.index);
            }
        }
    }
}

/// Frees an array's `len` elements of `elem` and its buffer.
///
/// # Safety
/// `array` owns its buffer and elements, which nothing uses afterwards.
pub(crate) unsafe fn drop_array(array: RawArray, elem: &TypeDesc) {
    for i in 0..array.len {
        // SAFETY: element `i` lies in the buffer and is initialized.
        unsafe { drop_value(array.ptr.add(i * elem.size), elem) }
    }
    if array.cap != 0 && elem.size != 0 {
        // SAFETY: the buffer was allocated for `cap` elements of `elem`.
        unsafe { nagi_rt_free(array.ptr, array.cap * elem.size, elem.align) }
    }
}

#[cfg(test)]
mod tests;

//! Typed JSON for emitted code: `json.encode<C>` and `json.decode<C>` driven by a layout
//! descriptor ([`TypeDesc`]) that the LLVM emitter writes as a constant per type, instead of
//! the serde derives the Rust path generates per class.
//!
//! The output and the accepted inputs are the derives' byte for byte (docs/design.md §2.8): encoding
//! is `shaped_json::write` over a [`Typed`] view (fields in declaration order, non-finite floats
//! `null`); decoding mirrors
//! `#[derive(Deserialize)] #[serde(deny_unknown_fields)]`: an object with each field once and
//! no others (a missing `Option` field is `None`; an array of the fields is refused, as the
//! Rust path's `json::Objects` refuses it), and the scalar rules of serde's own impls (`i32` range-checked, no float for an integer, …).
//! Decoding goes straight into the layout ([`Into`], in `decode.rs`), with the rules and errors
//! of [`crate::shaped_json::Seed`], which the Low interpreter's host uses: a failed decode frees
//! whatever it wrote, so it leaks nothing.

use std::alloc::Layout;

mod decode;

pub(crate) use decode::{Into, decode_body, drop_array, drop_value};

use nagi_abi::type_kind;

use super::{RawArray, RawString, into_raw};
use crate::shaped_json::{self, Kind, MapKey, Node, Scalar, Shape, Value, View};

/// The layout of one Low type as the emitted code lays it out:
/// `%nagi.TypeDesc = { i64 kind, i64 size, i64 align, %nagi.TypeDesc* inner, i64 payload_offset,
/// %nagi.FieldDesc* fields, i64 field_count, i8* name, i64 name_len }`.
///
/// `inner` is the element type of an array and the payload type of an option; an option is a
/// one-byte tag (0 or 1) at offset 0 and its payload at `payload_offset`; a class lists its
/// fields and has its name; an enum is an `i64` tag (the variant's index) at offset 0 and the
/// active variant's payload at `payload_offset`, lists its variants as fields (each field's type
/// is the payload's, `unit` for a variant without one; its offset is `payload_offset`) and has
/// its name. Descriptors are constants of the program and live as long as it does.
#[repr(C)]
pub struct TypeDesc {
    /// What type it is: a constant of [`nagi_abi::type_kind`].
    pub kind: u64,
    /// The size in bytes (the distance between array elements).
    pub size: usize,
    /// The alignment in bytes.
    pub align: usize,
    /// The element type of an array, the payload type of an option; null otherwise.
    pub inner: *const TypeDesc,
    /// Where an option's or enum's payload starts; 0 otherwise.
    pub payload_offset: usize,
    /// A class's fields or an enum's variants in declaration order; null otherwise.
    pub fields: *const FieldDesc,
    /// How many fields `fields` points to.
    pub field_count: usize,
    /// A class's or enum's name, UTF-8 (for decoding errors, `expected struct Person`); null
    /// otherwise.
    pub name: *const u8,
    /// The name's length in bytes; 0 when there is none.
    pub name_len: usize,
}

// SAFETY: a descriptor is immutable data (a constant of the program, or a leaked test value):
// nothing ever writes through its pointers, so sharing it between threads is sound.
unsafe impl Sync for TypeDesc {}

/// One field of a class: `%nagi.FieldDesc = { i8* name, i64 name_len, i64 offset, %nagi.TypeDesc* ty }`.
#[repr(C)]
pub struct FieldDesc {
    /// The field's name (its JSON key), UTF-8.
    pub name: *const u8,
    /// The name's length in bytes.
    pub name_len: usize,
    /// Where the field starts inside the class value.
    pub offset: usize,
    /// The field's type.
    pub ty: *const TypeDesc,
}

// SAFETY: as for `TypeDesc`, a field descriptor is immutable data.
unsafe impl Sync for FieldDesc {}

impl TypeDesc {
    /// A descriptor of `kind`, `size` bytes aligned to `align`, with no element, payload or
    /// fields: a scalar's, or the base a class's or option's descriptor is built on (`..`).
    pub const fn plain(kind: u64, size: usize, align: usize) -> TypeDesc {
        TypeDesc {
            kind,
            size,
            align,
            inner: std::ptr::null(),
            payload_offset: 0,
            fields: std::ptr::null(),
            field_count: 0,
            name: std::ptr::null(),
            name_len: 0,
        }
    }

    /// What kind of type this describes (an unknown number counts as a class).
    pub(crate) fn kind(&self) -> Kind {
        match self.kind {
            type_kind::I32 => Kind::I32,
            type_kind::I64 => Kind::I64,
            type_kind::F64 => Kind::F64,
            type_kind::BOOL => Kind::Bool,
            type_kind::UNIT => Kind::Unit,
            type_kind::STRING => Kind::String,
            type_kind::ARRAY => Kind::Array,
            type_kind::OPTION => Kind::Option,
            type_kind::ENUM => Kind::Enum,
            type_kind::MAP_I64 => Kind::MapI64,
            type_kind::MAP_STRING => Kind::MapString,
            type_kind::TIME => Kind::Time,
            type_kind::DURATION => Kind::Duration,
            type_kind::UUID => Kind::Uuid,
            _ => Kind::Class,
        }
    }

    /// The element or payload descriptor.
    pub(crate) fn inner(&self) -> &TypeDesc {
        // SAFETY: the emitter sets `inner` for arrays and options, the only callers, to a
        // descriptor constant of the program.
        unsafe { &*self.inner }
    }

    /// The fields of a class descriptor.
    pub(crate) fn fields(&self) -> &[FieldDesc] {
        if self.field_count == 0 {
            return &[];
        }
        // SAFETY: the emitter writes `field_count` descriptors at `fields`, constants of the program.
        unsafe { std::slice::from_raw_parts(self.fields, self.field_count) }
    }

    /// A class's name (empty for other kinds).
    pub(crate) fn name(&self) -> &str {
        // SAFETY: the emitter writes the class's name, `name_len` bytes of a Low identifier
        // (ASCII, so UTF-8), or null and 0. Not validated: names are read for every field of
        // every value encoded or decoded.
        unsafe { std::str::from_utf8_unchecked(super::bytes(self.name, self.name_len)) }
    }
}

impl FieldDesc {
    /// The field's name.
    pub(crate) fn name(&self) -> &str {
        // SAFETY: the name is a constant of the program, `name_len` bytes of a Low identifier
        // (ASCII, so UTF-8). Not validated, as above.
        unsafe { std::str::from_utf8_unchecked(super::bytes(self.name, self.name_len)) }
    }

    /// The field's type.
    pub(crate) fn ty(&self) -> &TypeDesc {
        // SAFETY: the emitter points every field at a descriptor constant of the program.
        unsafe { &*self.ty }
    }
}

impl Shape for &TypeDesc {
    fn kind(&self) -> Kind {
        TypeDesc::kind(self)
    }

    fn inner(&self) -> Self {
        TypeDesc::inner(self)
    }

    fn field_count(&self) -> usize {
        self.fields().len()
    }

    fn field_name(&self, i: usize) -> &str {
        self.fields()[i].name()
    }

    fn field(&self, i: usize) -> Self {
        self.fields()[i].ty()
    }

    fn class_name(&self) -> &str {
        TypeDesc::name(self)
    }
}

/// A value of the described type in emitted memory: a [`View`] for the one encoder.
#[derive(Clone, Copy)]
pub(crate) struct Typed<'a> {
    ptr: *const u8,
    ty: &'a TypeDesc,
}

impl<'a> Typed<'a> {
    /// The value at `ptr`, described by `ty`.
    ///
    /// # Safety
    /// `ptr` must hold an initialized value laid out as `ty` describes, for as long as the result
    /// is used.
    pub(crate) unsafe fn new(ptr: *const u8, ty: &'a TypeDesc) -> Typed<'a> {
        Typed { ptr, ty }
    }

    /// Reads a `T` at `offset`.
    ///
    /// # Safety
    /// `ptr + offset` must hold an initialized, suitably aligned `T`.
    unsafe fn read<T: Copy>(&self, offset: usize) -> T {
        // SAFETY: forwarded from the caller.
        unsafe { self.ptr.add(offset).cast::<T>().read() }
    }
}

impl<'a> View for Typed<'a> {
    type Shape = &'a TypeDesc;

    fn shape(&self) -> &'a TypeDesc {
        self.ty
    }

    #[inline(always)]
    fn scalar(&self) -> Option<Scalar<'_>> {
        // SAFETY (every read below): `ptr` points to a value laid out as `ty` describes, which the
        // emitter guarantees for the value it passes (and so for its elements and payloads).
        Some(match self.ty.kind() {
            Kind::I32 => Scalar::I32(unsafe { self.read::<i32>(0) }),
            Kind::I64 => Scalar::I64(unsafe { self.read::<i64>(0) }),
            Kind::F64 => Scalar::F64(unsafe { self.read::<f64>(0) }),
            Kind::Bool => Scalar::Bool(unsafe { self.read::<u8>(0) } & 1 != 0),
            Kind::Unit => Scalar::Unit,
            Kind::String => {
                let raw = unsafe { self.read::<RawString>(0) };
                // Not re-validated (a scan of every string encoded): strings in emitted memory
                // are UTF-8 by construction (docs/c-abi.md, "Conventions").
                Scalar::Str(unsafe { super::text_unchecked(raw.ptr, raw.len) })
            }
            Kind::Time => Scalar::Time(unsafe { self.read::<i64>(0) }),
            Kind::Duration => Scalar::Duration(unsafe { self.read::<i64>(0) }),
            Kind::Uuid => Scalar::Uuid(unsafe { self.read::<[u8; 16]>(0) }),
            Kind::Array | Kind::Option | Kind::Class | Kind::Enum | Kind::MapI64 | Kind::MapString => return None,
        })
    }

    #[inline]
    fn node(&self) -> Result<Node<Self>, String> {
        // SAFETY (every read below): as in `scalar`.
        Ok(match self.ty.kind() {
            Kind::I32
            | Kind::I64
            | Kind::F64
            | Kind::Bool
            | Kind::Unit
            | Kind::String
            | Kind::Time
            | Kind::Duration
            | Kind::Uuid => {
                return Err(format!("a scalar {:?} read as a composite value", self.ty.kind()));
            }
            Kind::Array => Node::Array(unsafe { self.read::<RawArray>(0) }.len),
            Kind::MapI64 | Kind::MapString => Node::Map(unsafe { self.read::<super::maps::RawMap>(0) }.keys.len),
            Kind::Option => Node::Option(
                (unsafe { self.read::<u8>(0) } & 1 != 0)
                    .then(|| Typed { ptr: self.ptr.wrapping_add(self.ty.payload_offset), ty: self.ty.inner() }),
            ),
            Kind::Class => Node::Class(self.ty.fields().len()),
            Kind::Enum => {
                let tag = unsafe { self.read::<i64>(0) } as usize;
                let Some(variant) = self.ty.fields().get(tag) else {
                    return Err(format!("enum {} has no variant #{tag}", self.ty.name()));
                };
                Node::Variant(tag, Typed { ptr: self.ptr.wrapping_add(self.ty.payload_offset), ty: variant.ty() })
            }
        })
    }

    #[inline]
    fn items(&self) -> impl Iterator<Item = Self> {
        // SAFETY: as in `node`, which said this is an array.
        let (raw, elem) = (unsafe { self.read::<RawArray>(0) }, self.ty.inner());
        (0..raw.len).map(move |i| Typed { ptr: raw.ptr.wrapping_add(i * elem.size), ty: elem })
    }

    #[inline]
    fn entries(&self) -> impl Iterator<Item = (MapKey<'_>, Self)> {
        // SAFETY (every read): as in `node`, which said this is a map: its keys and values
        // arrays hold `keys.len` entries each.
        let (raw, value) = (unsafe { self.read::<super::maps::RawMap>(0) }, self.ty.inner());
        let int_keys = self.ty.kind() == Kind::MapI64;
        (0..raw.keys.len).map(move |i| {
            let key = if int_keys {
                MapKey::I64(unsafe { raw.keys.ptr.cast::<i64>().add(i).read() })
            } else {
                let key = unsafe { raw.keys.ptr.cast::<RawString>().add(i).read() };
                MapKey::Str(unsafe { super::text_unchecked(key.ptr, key.len) })
            };
            (key, Typed { ptr: raw.values.ptr.wrapping_add(i * value.size), ty: value })
        })
    }

    #[inline]
    fn fields(&self) -> impl Iterator<Item = (&str, Self)> {
        let ptr = self.ptr;
        self.ty.fields().iter().map(move |f| (f.name(), Typed { ptr: ptr.wrapping_add(f.offset), ty: f.ty() }))
    }
}

/// The value at `value`, described by `ty`, as compact JSON; errors: why it cannot be encoded,
/// as the message a failure reports. The message is made (and serde's error dropped) before the caller fails:
/// `fail` may jump over the caller's frame, which must then hold nothing with a destructor.
///
/// # Safety
/// `value` must hold a value laid out as `ty` describes.
pub(super) unsafe fn encode(value: *const u8, ty: &TypeDesc) -> Result<String, String> {
    shaped_json::encode_view(Typed { ptr: value, ty })
}

/// Appends the value at `value`, described by `ty`, to `out` as compact JSON: the text of
/// [`nagi_rt_json_encode`], into a buffer the caller reuses (`bench/micro`'s encode
/// experiment); errors as [`encode`]'s.
///
/// # Safety
/// `value` must hold a value laid out as `ty` describes.
pub unsafe fn encode_into(value: *const u8, ty: &TypeDesc, out: &mut Vec<u8>) -> Result<(), String> {
    shaped_json::write(&Typed { ptr: value, ty }, out)
}

/// Encodes the value at `value`, described by `ty`, as compact JSON into `out` (what
/// `rt::json_encode` gives for the derived class on the Rust path).
///
/// # Safety
/// `out` must be writable; `value` must hold a value laid out as `ty` describes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_json_encode(out: *mut RawString, value: *const u8, ty: *const TypeDesc) {
    // SAFETY: the emitter passes one of its descriptor constants.
    let ty = unsafe { &*ty };
    // SAFETY: forwarded from the caller.
    match unsafe { encode(value, ty) } {
        // SAFETY: `out` is writable.
        Ok(text) => unsafe { out.write(into_raw(text.into_bytes())) },
        Err(message) => super::fail(message),
    }
}

/// Writes `value`, of the described type, at `dst`: the emitted layout of a decoded body, a
/// bound parameter or a database row. Buffers (strings, arrays) are allocated as emitted code
/// frees them.
///
/// It never traps, so it may run anywhere: an array too large for any allocation is a Rust
/// panic ("capacity overflow"), which no decoded value can reach (its elements already sit in
/// memory as values).
///
/// # Safety
/// `dst` must be writable for `ty.size` bytes and aligned to `ty.align`, and `value` must be of
/// the described type.
pub unsafe fn write(value: Value, ty: &TypeDesc, dst: *mut u8) {
    // SAFETY (every write below): `dst` is writable and aligned for the described type, and so
    // are the offsets of fields and payloads and the elements of a buffer allocated here.
    unsafe {
        match value {
            Value::I32(v) => dst.cast::<i32>().write(v),
            Value::I64(v) => dst.cast::<i64>().write(v),
            Value::F64(v) => dst.cast::<f64>().write(v),
            Value::Bool(v) => dst.write(u8::from(v)),
            Value::Unit => {}
            // A `Uuid` is decoded as its canonical text, which is its bytes here.
            Value::Str(s) if ty.kind() == Kind::Uuid => {
                dst.cast::<[u8; 16]>().write(crate::ids::parse(&s).unwrap_or_default())
            }
            Value::Str(s) => dst.cast::<RawString>().write(into_raw(s.into_bytes())),
            Value::Array(items) => write_array(items, ty.inner(), dst),
            Value::Map(entries) => {
                let (keys, values): (Vec<Value>, Vec<Value>) = entries.into_iter().unzip();
                let map = dst.cast::<super::maps::RawMap>();
                let index = super::maps::index_of(&keys);
                let key_desc = if ty.kind() == Kind::MapI64 { &I64_DESC } else { &STRING_DESC };
                write_array(keys, key_desc, (&raw mut (*map).keys).cast());
                write_array(values, ty.inner(), (&raw mut (*map).values).cast());
                (&raw mut (*map).index).write(index);
            }
            Value::Option(payload) => {
                std::ptr::write_bytes(dst, 0, ty.size);
                if let Some(v) = payload {
                    dst.write(1);
                    write(*v, ty.inner(), dst.add(ty.payload_offset));
                }
            }
            Value::Class(values) => {
                for (v, field) in values.into_iter().zip(ty.fields()) {
                    write(v, field.ty(), dst.add(field.offset));
                }
            }
            Value::Enum(variant, payload) => {
                std::ptr::write_bytes(dst, 0, ty.size);
                dst.cast::<i64>().write(variant as i64);
                if let Some(field) = ty.fields().get(variant) {
                    write(*payload, field.ty(), dst.add(ty.payload_offset));
                }
            }
        }
    }
}

/// The descriptors of a map's keys, for writing its keys array.
static I64_DESC: TypeDesc = scalar_desc(1, 8);
static STRING_DESC: TypeDesc = scalar_desc(5, size_of::<RawString>());

/// A descriptor of a scalar or string type of `kind` and `size` bytes, 8-byte aligned.
const fn scalar_desc(kind: u64, size: usize) -> TypeDesc {
    TypeDesc::plain(kind, size, 8)
}

/// Writes `items`, each of type `elem`, as an array (`RawArray` with a new buffer) at `dst`.
///
/// # Safety
/// As [`write`], for an array of `elem`.
pub(crate) unsafe fn write_array(items: Vec<Value>, elem: &TypeDesc, dst: *mut u8) {
    let len = items.len();
    let buffer = alloc_elements(len, elem);
    for (i, item) in items.into_iter().enumerate() {
        // SAFETY: the buffer holds `len` elements of `elem.size` bytes at `elem.align`.
        unsafe { write(item, elem, buffer.add(i * elem.size)) };
    }
    // SAFETY: `dst` is writable and aligned for an array.
    unsafe { dst.cast::<RawArray>().write(RawArray { ptr: buffer, len, cap: len }) };
}

/// Makes room for one more element of `elem` in `array` (whose buffer, when it has one, is from
/// this allocator) as emitted code's arrays grow ([`super::grow`]). Never traps, so Rust code
/// holding values (a decode, the database thread's rows) may call it; an impossible size is a
/// Rust panic.
pub(crate) fn grow_elements(array: &mut RawArray, elem: &TypeDesc) {
    // SAFETY: the caller's array holds elements of `elem` in a buffer from this allocator.
    if let Err(message) = unsafe { super::grow(array, elem.size, elem.align) } {
        panic!("{message}")
    }
}

/// A buffer for `len` elements of type `elem`, from the allocator emitted code frees with.
fn alloc_elements(len: usize, elem: &TypeDesc) -> *mut u8 {
    let layout = len.checked_mul(elem.size).and_then(|size| Layout::from_size_align(size, elem.align).ok());
    let Some(layout) = layout else {
        panic!("cannot allocate {len} elements of {} bytes: capacity overflow", elem.size)
    };
    super::allocate(layout)
}

/// Decodes the `len` bytes of JSON text at `ptr` into the `Option<C>` at `out`, described by
/// `ty` (an option of the class): `some` when the text is exactly one value of the class,
/// `none` otherwise (what `rt::json_decode` gives on the Rust path).
///
/// # Safety
/// `ptr` must point to `len` readable bytes; `out` must be writable for the option described by
/// `ty`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nagi_rt_json_decode(out: *mut u8, ptr: *const u8, len: usize, ty: *const TypeDesc) {
    // SAFETY: the emitter passes one of its descriptor constants (an option of the class).
    let ty = unsafe { &*ty };
    // SAFETY: `ptr` points to `len` readable bytes.
    let bytes = unsafe { super::bytes(ptr, len) };
    // SAFETY: the payload lies inside the option at `out`, which is writable.
    let payload = unsafe { out.add(ty.payload_offset) };
    let decoded = std::str::from_utf8(bytes).is_ok_and(|text| {
        use serde::de::DeserializeSeed;
        let mut de = serde_json::Deserializer::from_str(text);
        if (Into { ty: ty.inner(), dst: payload }).deserialize(&mut de).is_err() {
            return false;
        }
        if de.end().is_err() {
            // SAFETY: the payload was decoded just above and nothing else holds it.
            unsafe { drop_value(payload, ty.inner()) };
            return false;
        }
        true
    });
    // SAFETY: `out` is writable for the option; on success its payload is written.
    unsafe {
        std::ptr::write_bytes(out, 0, if decoded { ty.payload_offset } else { ty.size });
        out.write(u8::from(decoded));
    }
}

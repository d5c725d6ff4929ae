//! Layouts: how each Low type is laid out as an LLVM type.
//!
//! | Low | LLVM | notes |
//! | --- | --- | --- |
//! | `i32`, `i64`, `f64` | `i32`, `i64`, `double` | |
//! | `bool` | `i1` | one byte in memory; crosses the C ABI as an `i32` 0 or 1 |
//! | `unit` | `{}` | zero-sized; a function returning `unit` returns `void` |
//! | `String` | `%nagi.String = { i8*, i64 len, i64 cap }` | `ptr` comes from the runtime's allocator when `cap > 0`; `cap == 0` owns nothing (a literal is its constant bytes with `cap == 0`) |
//! | `[T]` | `{ T*, i64 len, i64 cap }` | the same three words as a string, so the runtime grows both alike |
//! | `Option<T>` | `{ i1, T }` | the payload is zero when the tag is 0 |
//! | class `C` | `%C = { fields… }` | a named struct, fields in declaration order |
//! | enum `E` | `%E = { i64 tag, [N x i64] }` | the tag is the variant's index; the active variant's payload starts at byte 8, in an area of 8-byte words as large as the largest payload |
//! | `&T`, `&mut T` | `T*` | a pointer to the owner's storage |
//!
//! A class or enum that holds itself by value (directly or through an `Option`, a class or an
//! enum) would have no finite size; [`Layouts::new`] rejects it. Holding itself through an array is fine, since the array
//! stores a pointer.

use std::collections::BTreeMap;

use inkwell::AddressSpace;
use inkwell::context::Context;
use inkwell::targets::TargetData;
use inkwell::types::{BasicType, BasicTypeEnum, PointerType, StructType};
use la_arena::ArenaMap;
use nagi_low::{ArenaGet, ClassId, Diagnostic, EnumId, Module, Type};

use crate::Error;

/// The LLVM types of one module's Low types, and their sizes on the target.
pub(crate) struct Layouts<'ctx> {
    context: &'ctx Context,
    classes: ArenaMap<ClassId, StructType<'ctx>>,
    enums: ArenaMap<EnumId, StructType<'ctx>>,
    string: StructType<'ctx>,
    target_data: TargetData,
}

impl<'ctx> Layouts<'ctx> {
    /// Declares one named struct per class and enum (bodies after all names exist, so types may
    /// refer to each other through arrays), after checking that every one has a finite size.
    pub(crate) fn new(context: &'ctx Context, module: &Module, target_data: TargetData) -> Result<Self, Error> {
        let order = layout_order(module)?;
        let string = context.opaque_struct_type("nagi.String");
        string.set_body(
            &[
                context.i8_type().ptr_type(AddressSpace::default()).into(),
                context.i64_type().into(),
                context.i64_type().into(),
            ],
            false,
        );
        let mut classes = ArenaMap::default();
        for (id, class) in module.classes.iter() {
            classes.insert(id, context.opaque_struct_type(&format!("class.{}", class.name)));
        }
        let mut enums = ArenaMap::default();
        for (id, data) in module.enums.iter() {
            enums.insert(id, context.opaque_struct_type(&format!("enum.{}", data.name)));
        }
        let layouts = Layouts { context, classes, enums, string, target_data };
        for named in order {
            match named {
                Named::Class(id) => {
                    let fields: Vec<BasicTypeEnum> =
                        module.classes[id].fields.iter().map(|f| layouts.llvm(&f.ty)).collect();
                    layouts.classes[id].set_body(&fields, false);
                }
                Named::Enum(id) => {
                    let payload = module.enums[id].variants.iter().filter_map(|v| v.payload.as_ref());
                    let bytes = payload.map(|ty| layouts.size(ty)).max().unwrap_or(0);
                    let words = context.i64_type().array_type(bytes.div_ceil(8) as u32);
                    layouts.enums[id].set_body(&[context.i64_type().into(), words.into()], false);
                }
            }
        }
        Ok(layouts)
    }

    /// The LLVM type that holds a value of `ty`.
    pub(crate) fn llvm(&self, ty: &Type) -> BasicTypeEnum<'ctx> {
        let cx = self.context;
        match ty {
            Type::I32 => cx.i32_type().into(),
            // A `Time` and a `Duration` are `i64` microseconds (the runtime's `time.rs`).
            Type::I64 | Type::Time | Type::Duration => cx.i64_type().into(),
            Type::F64 => cx.f64_type().into(),
            Type::Bool => cx.bool_type().into(),
            // A `Uuid`'s 16 bytes, 8-aligned (the runtime's `ids.rs` reads them as bytes).
            Type::Uuid => cx.i64_type().array_type(2).into(),
            Type::Unit => self.unit().into(),
            Type::String => self.string.into(),
            Type::Array(elem) => self.array(elem).into(),
            Type::Map(k, v) => self.map(k, v).into(),
            // The runtime's `Scope`, `Task`, `Actor` and `Defer` boxes, owned by pointer.
            Type::Scope | Type::Task(_) | Type::Actor(_) | Type::Defer => self.byte_ptr().into(),
            Type::Option(inner) => cx.struct_type(&[cx.bool_type().into(), self.llvm(inner)], false).into(),
            // The verifier has checked every class id; an empty struct keeps a bad one harmless.
            Type::Class(c) => self.classes.get(*c).copied().unwrap_or_else(|| self.unit()).into(),
            Type::Enum(e) => self.enum_struct(*e).into(),
            Type::Ref { pointee, .. } => self.pointer(pointee).into(),
        }
    }

    /// `{}`, the type of `unit`.
    pub(crate) fn unit(&self) -> StructType<'ctx> {
        self.context.struct_type(&[], false)
    }

    /// `%nagi.String`.
    pub(crate) fn string(&self) -> StructType<'ctx> {
        self.string
    }

    /// `{ T*, i64, i64 }` for `[T]`.
    pub(crate) fn array(&self, elem: &Type) -> StructType<'ctx> {
        let i64t = self.context.i64_type();
        self.context.struct_type(&[self.pointer(elem).into(), i64t.into(), i64t.into()], false)
    }

    /// `{ [K], [V], i8* }` for `Map<K, V>`: the keys and the values in position order, and the
    /// runtime's index (runtime `cabi::maps`).
    pub(crate) fn map(&self, k: &Type, v: &Type) -> StructType<'ctx> {
        self.context.struct_type(&[self.array(k).into(), self.array(v).into(), self.byte_ptr().into()], false)
    }

    /// `T*`.
    pub(crate) fn pointer(&self, pointee: &Type) -> PointerType<'ctx> {
        self.llvm(pointee).ptr_type(AddressSpace::default())
    }

    /// `i8*`, the pointer type the runtime's C ABI takes.
    pub(crate) fn byte_ptr(&self) -> PointerType<'ctx> {
        self.context.i8_type().ptr_type(AddressSpace::default())
    }

    /// The distance between consecutive array elements of type `ty`, in bytes.
    pub(crate) fn size(&self, ty: &Type) -> u64 {
        self.target_data.get_abi_size(&self.llvm(ty))
    }

    /// The ABI alignment of `ty`, in bytes.
    pub(crate) fn align(&self, ty: &Type) -> u32 {
        self.target_data.get_abi_alignment(&self.llvm(ty))
    }

    /// Where field `index` of `st` starts, in bytes.
    pub(crate) fn offset_of(&self, st: StructType<'ctx>, index: u32) -> u64 {
        self.target_data.offset_of_element(&st, index).unwrap_or(0)
    }

    /// The size and ABI alignment of a struct type, in bytes.
    pub(crate) fn struct_size_align(&self, st: StructType<'ctx>) -> (u64, u32) {
        (self.target_data.get_abi_size(&st), self.target_data.get_abi_alignment(&st))
    }

    /// The struct type of an enum.
    pub(crate) fn enum_struct(&self, id: EnumId) -> StructType<'ctx> {
        self.enums.get(id).copied().unwrap_or_else(|| self.unit())
    }

    /// The struct type of a class.
    pub(crate) fn class(&self, class: ClassId) -> StructType<'ctx> {
        self.classes.get(class).copied().unwrap_or_else(|| self.unit())
    }
}

/// A class or an enum: the types whose layout is a named struct.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Named {
    Class(ClassId),
    Enum(EnumId),
}

/// The classes and enums in an order where each comes after every type it holds by value
/// (directly or inside options, not inside arrays), so that each struct body is set after the
/// bodies whose sizes it needs. Rejects a type that contains itself by value: it would need
/// infinite space.
fn layout_order(module: &Module) -> Result<Vec<Named>, Error> {
    let by_value = |types: Vec<&Type>| {
        let mut out = Vec::new();
        let mut stack = types;
        while let Some(t) = stack.pop() {
            match t {
                Type::Class(c) => out.push(Named::Class(*c)),
                Type::Enum(e) => out.push(Named::Enum(*e)),
                Type::Option(inner) => stack.push(inner),
                _ => {}
            }
        }
        out
    };
    let mut edges: BTreeMap<Named, Vec<Named>> = BTreeMap::new();
    for (id, class) in module.classes.iter() {
        edges.insert(Named::Class(id), by_value(class.fields.iter().map(|f| &f.ty).collect()));
    }
    for (id, data) in module.enums.iter() {
        edges.insert(Named::Enum(id), by_value(data.variants.iter().filter_map(|v| v.payload.as_ref()).collect()));
    }
    let name = |n: Named| match n {
        Named::Class(c) => format!("class {}", module.classes.get(c).map_or("?", |c| c.name.as_str())),
        Named::Enum(e) => format!("enum {}", module.enums.get(e).map_or("?", |e| e.name.as_str())),
    };
    // Depth-first search with an explicit stack; a grey node reached again closes a cycle, and a
    // node turns black (joins the order) once everything it holds has.
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        White,
        Grey,
        Black,
    }
    let mut marks: BTreeMap<Named, Mark> = edges.keys().map(|k| (*k, Mark::White)).collect();
    let mut order = Vec::with_capacity(edges.len());
    for &root in edges.keys() {
        if marks[&root] != Mark::White {
            continue;
        }
        let mut stack = vec![(root, 0usize)];
        marks.insert(root, Mark::Grey);
        while let Some((node, next)) = stack.pop() {
            let succ = edges.get(&node).map(Vec::as_slice).unwrap_or(&[]);
            if let Some(&s) = succ.get(next) {
                stack.push((node, next + 1));
                match marks.get(&s).copied().unwrap_or(Mark::Black) {
                    Mark::White => {
                        marks.insert(s, Mark::Grey);
                        stack.push((s, 0));
                    }
                    Mark::Grey => {
                        return Err(Error(Diagnostic::new(
                            "M104",
                            format!(
                                "{} holds {} by value, which holds it back: such a type would need \
                                 infinite space; hold one of them in an array instead",
                                name(node),
                                name(s)
                            ),
                        )));
                    }
                    Mark::Black => {}
                }
            } else {
                marks.insert(node, Mark::Black);
                order.push(node);
            }
        }
    }
    Ok(order)
}
